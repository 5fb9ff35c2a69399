// SPDX-License-Identifier: MIT
/*
 * `compare A B`: every benchmark present in both sets, by name, side by
 * side with the ratio B/A and whether the difference is beyond the noise
 * (the rule of `select`, load.c).  Meant for before/after runs on one
 * machine; across machines or counters it says so, and falls back to ns
 * where the units differ.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum dir { LOWER_BETTER, HIGHER_BETTER, NO_BETTER };

enum verdict { V_FASTER, V_SLOWER, V_NOISE, V_FASTER1, V_SLOWER1, V_SAME1,
	       V_DIFFERS, V_SKIPPED, V_NOFIG };

struct row {
	const struct ak_bench *a, *b;
	struct ak_fig fa, fb;
	const char *unit;
	enum verdict v;
};

/* The figure a benchmark is judged by, the same field in both sets. */
static void primary(const struct ak_set *sa, const struct ak_set *sb,
		    struct row *r, bool ns, enum dir *dir)
{
	const char *name = r->a->name;

	*dir = LOWER_BETTER;
	if (ak_has_prefix(name, "contention/")) {
		/* throughput of all threads: higher is better */
		ak_fig(r->a, "ops", &r->fa);
		ak_fig(r->b, "ops", &r->fb);
		ak_fig_scale(&r->fa, 1e-6);
		ak_fig_scale(&r->fb, 1e-6);
		r->unit = "Mops/s";
		*dir = HIGHER_BETTER;
	} else if (ak_has_prefix(name, "xcheck/")) {
		ak_fig(r->a, "ratio_suite", &r->fa);
		ak_fig(r->b, "ratio_suite", &r->fb);
		r->unit = "ratio";
		*dir = NO_BETTER;
	} else {
		bool ua = !ns && ak_fig_unit(sa, r->a, "", &r->fa);
		bool ub = !ns && ak_fig_unit(sb, r->b, "", &r->fb);

		if (ua && ub) {
			r->unit = sa->unit;
			return;
		}
		ak_fig(r->a, "real_time", &r->fa);
		ak_fig(r->b, "real_time", &r->fb);
		r->unit = "ns";
	}
}

static void judge(struct row *r, enum dir dir)
{
	double ratio;
	bool better;

	if (r->a->skip || r->b->skip) {
		r->v = V_SKIPPED;
		return;
	}
	if (isnan(r->fa.v) || isnan(r->fb.v) || r->fa.v == 0) {
		r->v = V_NOFIG;
		return;
	}
	ratio = r->fb.v / r->fa.v;
	better = dir == HIGHER_BETTER ? ratio > 1 : ratio < 1;
	switch (ak_noise(&r->fa, &r->fb)) {
	case AK_NOISE:
		r->v = V_NOISE;
		break;
	case AK_DISTINCT:
		r->v = dir == NO_BETTER ? V_DIFFERS : better ? V_FASTER :
			V_SLOWER;
		break;
	case AK_UNJUDGED:
		r->v = ratio == 1 ? V_SAME1 : dir == NO_BETTER ? V_DIFFERS :
			better ? V_FASTER1 : V_SLOWER1;
		break;
	}
}

static const char *const verdict_text[] = {
	[V_FASTER] = "faster",
	[V_SLOWER] = "slower",
	[V_NOISE] = "noise",
	[V_FASTER1] = "faster? (1 run: noise not judged)",
	[V_SLOWER1] = "slower? (1 run: noise not judged)",
	[V_SAME1] = "same (1 run)",
	[V_DIFFERS] = "differs",
	[V_SKIPPED] = "skipped",
	[V_NOFIG] = "no figure",
};

static void side(const char *what, const struct ak_set *a,
		 const struct ak_set *b, const char *key)
{
	printf("| %s | ", what);
	md_text(ak_mach(a, key));
	fputs(" | ", stdout);
	md_text(ak_mach(b, key));
	puts(" |");
}

int cmd_compare(int argc, char **argv)
{
	struct ak_set *a = ak_set_load(argv[0]);
	struct ak_set *b = ak_set_load(argv[1]);
	int cnt[V_NOFIG + 1] = { 0 };
	int i, nr = 0, only_a = 0, only_b = 0, status;
	struct row *rows = NULL;
	bool ns;

	(void)argc;
	if (a->schema && b->schema && strcmp(a->schema, b->schema)) {
		ak_problem("compare: %s has schema %s, %s has schema %s: not comparable",
			   a->path, a->schema, b->path, b->schema);
		status = AK_EXIT_NOTHING;
		goto out;
	}
	if (!a->usable || !b->usable) {
		ak_problem("compare: nothing compared: %s was rejected",
			   !a->usable ? a->path : b->path);
		status = AK_EXIT_NOTHING;
		goto out;
	}
	/*
	 * Ticks of two counters, or of one counter on two machines, are not
	 * one unit: then ns throughout.
	 */
	ns = !*a->counter || strcmp(a->counter, b->counter) ||
		strcmp(ak_machine_name(a), ak_machine_name(b));

	rows = ak_alloc((a->nr_bench + 1) * sizeof(*rows));
	for (i = 0; i < a->nr_bench; i++) {
		const struct ak_bench *y = ak_find(b, a->bench[i].name);
		struct row *r = &rows[nr];
		enum dir dir;

		if (!y) {
			only_a++;
			continue;
		}
		r->a = &a->bench[i];
		r->b = y;
		primary(a, b, r, ns, &dir);
		judge(r, dir);
		cnt[r->v]++;
		nr++;
	}
	for (i = 0; i < b->nr_bench; i++)
		if (!ak_find(a, b->bench[i].name))
			only_b++;

	puts("# Compare\n");
	puts("| | A | B |\n|---|---|---|");
	printf("| set | ");
	md_text(a->path);
	fputs(" | ", stdout);
	md_text(b->path);
	puts(" |");
	side("machine", a, b, "ak_machine");
	side("arch", a, b, "ak_arch");
	side("CPU", a, b, "ak_cpu_model");
	side("kernel", a, b, "ak_kernel");
	side("compiler", a, b, "ak_compiler");
	side("rev", a, b, "ak_git_rev");
	side("counter", a, b, "ak_counter_unit");
	side("run mode", a, b, "ak_run_mode");
	printf("| figures | %s | %s |\n", ak_runs(a), ak_runs(b));
	side("emulated", a, b, "ak_emulated");
	putchar('\n');
	if (strcmp(ak_machine_name(a), ak_machine_name(b)))
		puts("**Different machines**: the ratios compare the machines as much as the code.\n");
	if (ns)
		puts("The counters or the machines differ (or a counter is missing): every figure is compared in ns.\n");
	if (a->emulated || b->emulated)
		puts("**emulated: correctness only, figures mean nothing.**\n");

	printf("Of %d benchmarks in both: %d faster and %d slower beyond the noise, %d within the noise",
	       nr, cnt[V_FASTER], cnt[V_SLOWER], cnt[V_NOISE]);
	if (cnt[V_FASTER1] + cnt[V_SLOWER1] + cnt[V_SAME1])
		printf("; %d faster, %d slower and %d the same on single runs, where the noise cannot be judged",
		       cnt[V_FASTER1], cnt[V_SLOWER1], cnt[V_SAME1]);
	if (cnt[V_DIFFERS])
		printf("; %d ratios (no better direction) differ", cnt[V_DIFFERS]);
	if (cnt[V_SKIPPED])
		printf("; %d skipped in A or B", cnt[V_SKIPPED]);
	if (cnt[V_NOFIG])
		printf("; %d without a figure", cnt[V_NOFIG]);
	printf(". Only in A: %d; only in B: %d.\n\n", only_a, only_b);
	puts("Figures: medians. Faster means a lower cost, or a higher rate (Mops/s). Noise: the min-max ranges of A and B overlap, or they differ by less than twice the larger cv.\n");

	puts("| benchmark | unit | A | B | B/A | A spread | B spread | verdict |");
	puts("|---|---|--:|--:|--:|---|---|---|");
	for (i = 0; i < nr; i++) {
		struct row *r = &rows[i];

		fputs("| ", stdout);
		md_code(r->a->name);
		printf(" | %s |", r->unit);
		if (r->v == V_SKIPPED) {
			fputs(" ", stdout);
			if (r->a->skip) {
				md_skip(r->a->skip);
			} else {
				fputs(ak_num(r->fa.v), stdout);
			}
			fputs(" | ", stdout);
			if (r->b->skip) {
				md_skip(r->b->skip);
			} else {
				fputs(ak_num(r->fb.v), stdout);
			}
			puts(" | – | | | skipped |");
			continue;
		}
		printf(" %s | %s | %s | %s | %s | %s |\n", ak_num(r->fa.v),
		       ak_num(r->fb.v), ak_num(r->fb.v / r->fa.v),
		       ak_spread(&r->fa), ak_spread(&r->fb),
		       verdict_text[r->v]);
	}
	status = ak_exit_status(2);
out:
	free(rows);
	ak_set_free(a);
	ak_set_free(b);
	return status;
}
