// SPDX-License-Identifier: MIT
/*
 * `compare A B`: every benchmark present in both sets, by name, side by
 * side with the ratio B/A and whether the difference is beyond the noise
 * (the rule of `select`, load.c).  Meant for before/after runs on one
 * machine; across machines or counters it says so, and falls back to ns
 * where the units differ.  In text the rows come in sections with short
 * names, to paste into a commit message.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum dir { LOWER_BETTER, HIGHER_BETTER, NO_BETTER };

enum verdict { V_FASTER, V_SLOWER, V_NOISE, V_FASTER1, V_SLOWER1, V_SAME1,
	       V_DIFFERS, V_SKIPPED, V_NOFIG };

struct row {
	const struct rp_bench *a, *b;
	struct rp_fig fa, fb;
	const char *unit;
	enum verdict v;
};

/* The figure a benchmark is judged by, the same field in both sets. */
static void primary(const struct rp_set *sa, const struct rp_set *sb,
		    struct row *r, bool ns, enum dir *dir)
{
	*dir = LOWER_BETTER;
	if (rp_is(r->a, "suite", "contention")) {
		/* throughput of all threads: higher is better */
		rp_fig(r->a, "ops", &r->fa);
		rp_fig(r->b, "ops", &r->fb);
		rp_fig_scale(&r->fa, 1e-6);
		rp_fig_scale(&r->fb, 1e-6);
		r->unit = "Mops/s";
		*dir = HIGHER_BETTER;
	} else if (rp_is(r->a, "suite", "xcheck")) {
		rp_fig(r->a, "ratio_suite", &r->fa);
		rp_fig(r->b, "ratio_suite", &r->fb);
		r->unit = "ratio";
		*dir = NO_BETTER;
	} else {
		bool ua = !ns && rp_fig_unit(sa, r->a, "", &r->fa);
		bool ub = !ns && rp_fig_unit(sb, r->b, "", &r->fb);

		if (ua && ub) {
			r->unit = sa->unit;
			return;
		}
		rp_fig(r->a, "real_time", &r->fa);
		rp_fig(r->b, "real_time", &r->fb);
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
	switch (rp_noise(&r->fa, &r->fb)) {
	case RP_NOISE:
		r->v = V_NOISE;
		break;
	case RP_DISTINCT:
		r->v = dir == NO_BETTER ? V_DIFFERS : better ? V_FASTER :
			V_SLOWER;
		break;
	case RP_UNJUDGED:
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

static void side(struct rp_tab *t, const char *what, const char *a,
		 const char *b)
{
	rp_cell(t, "%s", what);
	rp_cell_as(t, 't', a);
	rp_cell_as(t, 't', b);
}

/*
 * --format=text: the rows grouped in sections of one suite, arch,
 * workload, placement and unit, each row named by the identity fields
 * left, so that the table fits a commit message.
 */
static const char *const sect_keys[] = { "suite", "arch", "workload",
					  "placement" };
static const char *const row_keys[] = { "op", "variant", "ordering",
					"metric", "outcome", "state", "design",
					"mode", "cpu_partial", "size", "bulk" };

static void ident(char *buf, size_t n, const struct rp_bench *b,
		  const char *const *keys, int nk)
{
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < nk && len < n; i++) {
		const char *sep = len ? " " : "";

		if (rp_n(b, keys[i]) >= 0)
			len += snprintf(buf + len, n - len, "%s%s:%ld", sep,
					keys[i], rp_n(b, keys[i]));
		else if (*rp_f(b, keys[i]))
			len += snprintf(buf + len, n - len, "%s%s", sep,
					rp_f(b, keys[i]));
	}
}

static void section(char *buf, size_t n, const struct row *r)
{
	size_t len;

	ident(buf, n, r->a, sect_keys, 4);
	len = strlen(buf);
	snprintf(buf + len, n - len, ", %s", r->unit);
}

static const char *const flag_text[] = {
	[V_FASTER] = "faster", [V_SLOWER] = "slower", [V_NOISE] = "",
	[V_FASTER1] = "faster?", [V_SLOWER1] = "slower?", [V_SAME1] = "",
	[V_DIFFERS] = "differs", [V_SKIPPED] = "", [V_NOFIG] = "",
};

/* a figure, or the note that says why a run has none */
static void figure(struct rp_tab *t, const struct rp_bench *b,
		   const struct rp_fig *f)
{
	if (b->skip)
		rp_cell(t, "(%d)", rp_tab_note(t, rp_md('s', b->skip)));
	else
		rp_cell(t, "%s", rp_num(f->v));
}

static void text_rows(struct row *rows, int nr)
{
	char key[256], k2[256], label[256];
	bool *done = rp_alloc((nr + 1) * sizeof(*done));
	int i, j;

	puts("Before: A; after: B; delta: (B - A) / A. Flag: faster or slower beyond the noise, with a ? on single runs, where the noise cannot be judged; none within the noise; differs: a ratio changed beyond it.\n");
	for (i = 0; i < nr; i++) {
		struct rp_tab t;

		if (done[i])
			continue;
		section(key, sizeof(key), &rows[i]);
		printf("### %s\n\n", key);
		rp_tab_init(&t, "lrrrl");
		rp_row(&t, "|before|after|delta|");
		for (j = i; j < nr; j++) {
			struct row *r = &rows[j];

			section(k2, sizeof(k2), r);
			if (done[j] || strcmp(key, k2))
				continue;
			done[j] = true;
			ident(label, sizeof(label), r->a, row_keys, 10);
			if (r->a->threads > 1) {
				size_t l = strlen(label);

				snprintf(label + l, sizeof(label) - l,
					 "%sthreads:%d", l ? " " : "",
					 r->a->threads);
			}
			if (!*label)
				snprintf(label, sizeof(label), "%s",
					 strchr(r->a->name, '/') ?
					 strchr(r->a->name, '/') + 1 :
					 r->a->name);
			rp_cell(&t, "%s", label);
			figure(&t, r->a, &r->fa);
			figure(&t, r->b, &r->fb);
			if (r->v == V_SKIPPED || r->v == V_NOFIG)
				rp_cell(&t, "–");
			else
				rp_cell(&t, "%s%s", r->fb.v >= r->fa.v ?
					"+" : "",
					rp_pct(r->fb.v / r->fa.v - 1));
			rp_cell(&t, "%s", flag_text[r->v]);
		}
		rp_tab_print(&t);
		putchar('\n');
	}
	free(done);
}

int cmd_compare(int argc, char **argv)
{
	static const char *const keys[][2] = {
		{ "machine", "ak_machine" }, { "arch", "ak_arch" },
		{ "CPU", "ak_cpu_model" }, { "kernel", "ak_kernel" },
		{ "compiler", "ak_compiler" }, { "rev", "ak_git_rev" },
		{ "counter", "ak_counter_unit" }, { "run mode", "ak_run_mode" },
	};
	static const char *const head[] = {
		"benchmark", "unit", "A", "B", "B/A", "A spread", "B spread",
		"verdict",
	};
	struct rp_tab t;
	struct rp_set *a = rp_set_load(argv[0]);
	struct rp_set *b = rp_set_load(argv[1]);
	int cnt[V_NOFIG + 1] = { 0 };
	int i, nr = 0, only_a = 0, only_b = 0, status;
	struct row *rows = NULL;
	bool ns;

	(void)argc;
	if (a->schema && b->schema && strcmp(a->schema, b->schema)) {
		rp_problem("compare: %s has schema %s, %s has schema %s: not comparable",
			   a->path, a->schema, b->path, b->schema);
		status = RP_EXIT_NOTHING;
		goto out;
	}
	if (!a->usable || !b->usable) {
		rp_problem("compare: nothing compared: %s was rejected",
			   !a->usable ? a->path : b->path);
		status = RP_EXIT_NOTHING;
		goto out;
	}
	/*
	 * Ticks of two counters, or of one counter on two machines, are not
	 * one unit: then ns throughout.
	 */
	ns = !*a->counter || strcmp(a->counter, b->counter) ||
		strcmp(rp_machine_name(a), rp_machine_name(b));

	rows = rp_alloc((a->nr_bench + 1) * sizeof(*rows));
	for (i = 0; i < a->nr_bench; i++) {
		const struct rp_bench *y = rp_named(b, a->bench[i].name);
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
		if (!rp_named(a, b->bench[i].name))
			only_b++;

	puts("# Compare\n");
	rp_tab_init(&t, "lll");
	rp_cell_none(&t);
	rp_cell(&t, "A");
	rp_cell(&t, "B");
	side(&t, "set", a->path, b->path);
	for (i = 0; i < 8; i++)
		side(&t, keys[i][0], rp_mach(a, keys[i][1]),
		     rp_mach(b, keys[i][1]));
	rp_cell(&t, "figures");
	rp_cell(&t, "%s", rp_runs(a));
	rp_cell(&t, "%s", rp_runs(b));
	side(&t, "emulated", rp_mach(a, "ak_emulated"),
	     rp_mach(b, "ak_emulated"));
	rp_tab_print(&t);
	putchar('\n');
	if (strcmp(rp_machine_name(a), rp_machine_name(b)))
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

	if (rp_format == RP_TEXT) {
		text_rows(rows, nr);
		goto done;
	}
	rp_tab_init(&t, "llrrrlll");
	for (i = 0; i < 8; i++)
		rp_cell(&t, "%s", head[i]);
	for (i = 0; i < nr; i++) {
		struct row *r = &rows[i];

		rp_cell_as(&t, 'c', r->a->name);
		rp_cell(&t, "%s", r->unit);
		if (r->v == V_SKIPPED) {
			if (r->a->skip)
				rp_cell_as(&t, 's', r->a->skip);
			else
				rp_cell(&t, "%s", rp_num(r->fa.v));
			if (r->b->skip)
				rp_cell_as(&t, 's', r->b->skip);
			else
				rp_cell(&t, "%s", rp_num(r->fb.v));
			rp_cell(&t, "–");
			rp_cell_none(&t);
			rp_cell_none(&t);
			rp_cell(&t, "skipped");
			continue;
		}
		rp_cell(&t, "%s", rp_num(r->fa.v));
		rp_cell(&t, "%s", rp_num(r->fb.v));
		rp_cell(&t, "%s", rp_num(r->fb.v / r->fa.v));
		rp_cell(&t, "%s", rp_spread(&r->fa));
		rp_cell(&t, "%s", rp_spread(&r->fb));
		rp_cell(&t, "%s", verdict_text[r->v]);
	}
	rp_tab_print(&t);
done:
	status = rp_exit_status(2);
out:
	free(rows);
	rp_set_free(a);
	rp_set_free(b);
	return status;
}
