// SPDX-License-Identifier: MIT
/*
 * `select`: for each operation an allocator port needs, the measured
 * implementations ranked on each machine, the winner and its margin, and
 * whether the margin is beyond the noise; then, across machines, where the
 * choice changes.  And `index`: one row per result set under a folder,
 * with the headline figures.
 */
#include "report.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct cand {
	const struct rp_bench *b;
	char choice[96];	/* what a port would pick: "rseq", "lock" */
	struct rp_fig u, t;	/* in the unit; in ns */
	double key;		/* what it is ranked by */
};

struct cands {
	struct cand *v;
	int n, cap;
};

static void cand_add(struct cands *c, const struct rp_set *s,
		     const struct rp_bench *b, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void cand_add(struct cands *c, const struct rp_set *s,
		     const struct rp_bench *b, const char *fmt, ...)
{
	struct cand *x;
	va_list ap;

	if (!b)
		return;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->v = rp_realloc(c->v, c->cap * sizeof(*c->v));
	}
	x = &c->v[c->n++];
	memset(x, 0, sizeof(*x));
	x->b = b;
	va_start(ap, fmt);
	vsnprintf(x->choice, sizeof(x->choice), fmt, ap);
	va_end(ap);
	rp_fig_unit(s, b, "", &x->u);
	rp_fig(b, "real_time", &x->t);
}

/* ---- the candidates of each operation ---- */

/* " [full]" after a candidate, from its ordering; "" if it has none */
static const char *order_of(const struct rp_bench *b, char *buf, size_t n)
{
	const char *o = rp_f(b, "ordering");

	snprintf(buf, n, "%s%s%s", *o ? " [" : "", o, *o ? "]" : "");
	return buf;
}

/* prim/<arch>/<op>/<variant>/lat of a real arch (not ref, not generic) */
#define ARCH_PRIM	"suite=prim arch!=ref|generic metric=lat op="

static void c_percpu(const struct rp_set *s, struct cands *c, const char *op)
{
	const struct rp_bench *b;

	rp_each(b, s, "suite=percpu op=%s", op)
		cand_add(c, s, b, "this_cpu %s", rp_f(b, "mode"));
}

static void c_freelist_designs(const struct rp_set *s, struct cands *c)
{
	static const char *const fl[] = { "slub-tid", "slub-local",
					  "rseq-list", NULL };
	int i;

	/* the three designs that keep a linked freelist per CPU */
	for (i = 0; fl[i]; i++)
		cand_add(c, s, rp_slab(s, "pair", fl[i], 64), "%s", fl[i]);
}

static void c_pair_update(const struct rp_set *s, struct cands *c)
{
	const struct rp_bench *b;
	char o[80];

	rp_each(b, s, "suite=prim metric=lat arch!=ref op=cmpxchg128|try_cmpxchg128")
		cand_add(c, s, b, "%s%s/%s%s",
			 rp_is(b, "arch", "generic") ? "generic " : "",
			 rp_f(b, "op"), rp_f(b, "variant"),
			 order_of(b, o, sizeof(o)));
}

static void c_counter_add(const struct rp_set *s, struct cands *c)
{
	const struct rp_bench *b;
	char o[80];

	rp_each(b, s, ARCH_PRIM "fetch_add64")
		cand_add(c, s, b, "fetch_add64/%s%s", rp_f(b, "variant"),
			 order_of(b, o, sizeof(o)));
}

/*
 * [local] against [full] cmpxchg64.  arm64 and ppc64 have no [local]
 * variant: their _local maps to the relaxed one, which stands in.
 */
static void c_local_full(const struct rp_set *s, struct cands *c)
{
	const char *local = "relaxed", *order;
	const struct rp_bench *b;
	char o[80];

	rp_each(b, s, ARCH_PRIM "cmpxchg64")
		if (rp_has_prefix(rp_f(b, "ordering"), "local"))
			local = "local";
	rp_each(b, s, ARCH_PRIM "cmpxchg64") {
		order = rp_f(b, "ordering");
		/* a skipped variant is listed with its reason */
		if (b->skip || rp_has_prefix(order, local) ||
		    rp_has_prefix(order, "full"))
			cand_add(c, s, b, "cmpxchg64/%s%s",
				 rp_f(b, "variant"), order_of(b, o, sizeof(o)));
	}
}

static void c_bulk(const struct rp_set *s, struct cands *c)
{
	const struct rp_bench *b;

	rp_each(b, s, "suite=slab bulk=16 workload=bulk|bulk_fallback")
		cand_add(c, s, b, "%s %s", rp_f(b, "design"),
			 rp_is(b, "workload", "bulk") ? "bulk" :
			 "single calls");
}

static void c_fastpath(const struct rp_set *s, struct cands *c)
{
	const struct rp_bench *b;

	rp_each(b, s, "suite=slab workload=pair size=64")
		cand_add(c, s, b, "%s", rp_f(b, "design"));
}

struct op {
	const char *name;
	const char *what;
	const char *percpu;	/* the this_cpu op among them, or NULL */
	void (*collect)(const struct rp_set *s, struct cands *c);
};

static const struct op ops[] = {
	{ "freelist pop+push (per-CPU op)",
	  "`this_cpu_list_pop` then `this_cpu_list_push` (`percpu/list_pop_push/<mode>`), by per-CPU mode: the freelist fastpath without the allocator around it",
	  "list_pop_push", NULL },
	{ "freelist pop+push (in the allocator)",
	  "an alloc+free pair of 64 bytes in the three freelist designs (`slab/pair/<design>/size:64`)",
	  NULL, c_freelist_designs },
	{ "pair update of freelist+counter",
	  "a 16-byte compare-and-exchange of {freelist, tid}: `this_cpu_cmpxchg128` by mode (`percpu/cmpxchg128/<mode>`) and the cmpxchg128 and try_cmpxchg128 instructions, latency (`prim/.../cmpxchg128/<variant>/lat`)",
	  "cmpxchg128", c_pair_update },
	{ "per-CPU counter add",
	  "`this_cpu_add` by mode (`percpu/add/<mode>`) against an atomic fetch_add64 (`prim/<arch>/fetch_add64/<variant>/lat`)",
	  "add", c_counter_add },
	{ "local vs SMP-safe cmpxchg",
	  "cmpxchg64 labelled [local] (relaxed where the arch has no local variant) against [full], latency (`prim/<arch>/cmpxchg64/<variant>/lat`)",
	  NULL, c_local_full },
	{ "bulk refill",
	  "per object, 16 at a time: `alloc_bulk` + `free_bulk` (`slab/bulk/<design>/bulk:16`) against single calls (`slab/bulk_fallback/<impl>/bulk:16`)",
	  NULL, c_bulk },
	{ "allocator fastpath",
	  "an alloc+free pair of 64 bytes, every design and system malloc (`slab/pair/<impl>/size:64`)",
	  NULL, c_fastpath },
};

#define NR_OPS	((int)(sizeof(ops) / sizeof(ops[0])))

/* The outcome of one ranking, for "Where the choice changes". */
struct verdict {
	char winner[96];
	char text[320];
	bool has_winner;
	bool noise;		/* the two best are within noise */
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	bool dx = x->b->skip || isnan(x->key);
	bool dy = y->b->skip || isnan(y->key);

	/* the unranked (skipped, no figure) sink to the bottom */
	if (dx != dy)
		return dx - dy;
	if (dx)
		return 0;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void rank(const struct rp_set *s, const struct op *op, int no,
		 struct verdict *vd)
{
	struct cands c = { 0 };
	bool by_unit = *s->counter != 0;
	struct rp_fig f1, f2;
	const char *margin;
	struct rp_tab t;
	int i, nr = 0;

	memset(vd, 0, sizeof(*vd));
	printf("\n### %d. %s\n\n%s.\n\n", no, op->name, op->what);
	if (op->percpu)
		c_percpu(s, &c, op->percpu);
	if (op->collect)
		op->collect(s, &c);
	if (!c.n) {
		puts("No candidate measured in this set.");
		snprintf(vd->text, sizeof(vd->text), "no data");
		goto out;
	}
	/* the unit if every figure has it, else ns: never a mix */
	for (i = 0; i < c.n; i++)
		if (!c.v[i].b->skip && isnan(c.v[i].u.v) && !isnan(c.v[i].t.v))
			by_unit = false;
	for (i = 0; i < c.n; i++) {
		c.v[i].key = by_unit ? c.v[i].u.v : c.v[i].t.v;
		if (!c.v[i].b->skip && !isnan(c.v[i].key))
			nr++;
	}
	qsort(c.v, c.n, sizeof(*c.v), cmp_cand);
	rp_tab_init(&t, "rllrrl");
	rp_row(&t, "rank|candidate|benchmark|%s|ns|spread", s->unit);
	for (i = 0; i < c.n; i++) {
		const struct cand *x = &c.v[i];

		rp_cell(&t, i < nr ? "%d" : "–", i + 1);
		rp_cell_as(&t, 't', x->choice);
		rp_cell_as(&t, 'c', x->b->name);
		if (x->b->skip) {
			rp_cell_as(&t, 's', x->b->skip);
			rp_cell_none(&t);
			rp_cell_none(&t);
			continue;
		}
		rp_cell(&t, "%s", rp_num(x->u.v));
		rp_cell(&t, "%s", rp_num(x->t.v));
		rp_cell(&t, "%s", rp_spread(by_unit ? &x->u : &x->t));
	}
	rp_tab_print(&t);
	putchar('\n');
	if (!nr) {
		puts("No winner: every candidate was skipped.");
		snprintf(vd->text, sizeof(vd->text), "all skipped");
		goto out;
	}
	snprintf(vd->winner, sizeof(vd->winner), "%s", c.v[0].choice);
	vd->has_winner = true;
	if (nr == 1) {
		fputs("**", stdout);
		md_text(c.v[0].choice);
		puts("**: the only candidate measured.");
		snprintf(vd->text, sizeof(vd->text), "%s (only one measured)",
			 c.v[0].choice);
		goto out;
	}
	f1 = by_unit ? c.v[0].u : c.v[0].t;
	f2 = by_unit ? c.v[1].u : c.v[1].t;
	margin = rp_pct(f2.v / f1.v - 1);
	fputs("**", stdout);
	md_text(c.v[0].choice);
	switch (rp_noise(&f1, &f2)) {
	case RP_NOISE:
		vd->noise = true;
		printf("** leads ");
		md_text(c.v[1].choice);
		printf(" by %s, **within noise**: the two best differ by less than their spreads.\n",
		       margin);
		snprintf(vd->text, sizeof(vd->text),
			 "%s ~ %s (within noise)", c.v[0].choice,
			 c.v[1].choice);
		break;
	case RP_DISTINCT:
		printf("** wins by %s over ", margin);
		md_text(c.v[1].choice);
		puts(", beyond the spreads of both.");
		snprintf(vd->text, sizeof(vd->text), "%s (wins by %s)",
			 c.v[0].choice, margin);
		break;
	case RP_UNJUDGED:
		printf("** wins by %s over ", margin);
		md_text(c.v[1].choice);
		puts(" (1 run each: the noise cannot be judged).");
		snprintf(vd->text, sizeof(vd->text),
			 "%s (by %s, 1 run: noise not judged)",
			 c.v[0].choice, margin);
		break;
	}
out:
	free(c.v);
}

static void select_set(const struct rp_set *s, struct verdict *vd)
{
	int k;

	printf("\n## Selection: ");
	md_text(rp_machine_name(s));
	fputs(" (", stdout);
	md_text(rp_mach(s, "ak_arch"));
	fputs("), ", stdout);
	md_text(rp_set_name(s));
	printf("\n\n");
	if (s->emulated) {
		puts("**emulated: no ranking (correctness only)**");
		for (k = 0; k < NR_OPS; k++)
			snprintf(vd[k].text, sizeof(vd[k].text), "emulated");
		return;
	}
	fputs("Figures: ", stdout);
	printf("%s, in ", rp_runs(s));
	md_text(*rp_mach(s, "ak_counter_unit") ? rp_mach(s, "ak_counter_unit")
		: "ns");
	printf(" and ns; ranked by the first (lower is better). The margin is the runner-up's figure over the winner's, minus 1. Noise: %s.\n",
	       s->reps > 1 ?
	       "the two best are within noise when their min-max ranges overlap or they differ by less than twice the larger cv" :
	       "1 run each, so no spread to judge by");
	for (k = 0; k < NR_OPS; k++)
		rank(s, &ops[k], k + 1, &vd[k]);
	rp_macro_select(s);
}

int cmd_select(int argc, char **argv)
{
	struct rp_set **sets = rp_alloc(argc * sizeof(*sets));
	struct verdict *vd = rp_alloc(argc * NR_OPS * sizeof(*vd));
	struct rp_tab t;
	int i, k, usable = 0;

	puts("# Primitive selection");
	for (i = 0; i < argc; i++) {
		struct rp_set *s = rp_set_load(argv[i]);

		if (!s->usable) {
			rp_set_free(s);
			continue;
		}
		sets[usable] = s;
		select_set(s, &vd[usable * NR_OPS]);
		usable++;
	}
	if (usable > 1) {
		puts("\n## Where the choice changes\n");
		puts("The winner of each operation on each set (emulated sets are not ranked). \"yes\": the winners differ between the sets that have one; a change where the two best are within noise is no real change.\n");
		rp_tab_init(&t, "l");
		t.ncol = usable + 2;
		rp_cell(&t, "operation");
		for (i = 0; i < usable; i++)
			rp_cell(&t, "%s (%s), %s",
				rp_md('t', rp_machine_name(sets[i])),
				rp_md('t', rp_mach(sets[i], "ak_arch")),
				rp_md('t', rp_set_name(sets[i])));
		rp_cell(&t, "choice changes");
		for (k = 0; k < NR_OPS; k++) {
			const char *first = NULL;
			int with = 0, noisy = 0;
			bool differs = false;

			rp_cell(&t, "%s", ops[k].name);
			for (i = 0; i < usable; i++) {
				struct verdict *v = &vd[i * NR_OPS + k];

				rp_cell_as(&t, 't', v->text);
				if (!v->has_winner)
					continue;
				with++;
				noisy += v->noise;
				if (!first)
					first = v->winner;
				else if (strcmp(first, v->winner))
					differs = true;
			}
			if (with >= 2 && differs && noisy)
				rp_cell(&t, "yes (within noise on %d of %d)",
					noisy, with);
			else
				rp_cell(&t, "%s", with < 2 ? "–" :
					differs ? "yes" : "no");
		}
		rp_macro_select_row(&t, sets, usable);
		rp_tab_print(&t);
	}
	for (i = 0; i < usable; i++)
		rp_set_free(sets[i]);
	free(sets);
	free(vd);
	return rp_exit_status(usable);
}

/* ---- index ---- */

/* Folders with a machine.json, at any depth; a set is not entered. */
static void walk(const char *dir, const char *rel, struct rp_strs *found,
		 int depth)
{
	char *m = rp_asprintf("%s/machine.json", dir);
	struct dirent *d;
	struct stat st;
	DIR *dd;

	if (!stat(m, &st)) {
		rp_strs_add(found, rel);
		free(m);
		return;
	}
	free(m);
	if (depth > 32 || !(dd = opendir(dir)))
		return;
	while ((d = readdir(dd))) {
		char *sub, *srel;

		if (d->d_name[0] == '.')
			continue;
		sub = rp_asprintf("%s/%s", dir, d->d_name);
		/* lstat: a link could loop, or leave the tree */
		if (!lstat(sub, &st) && S_ISDIR(st.st_mode)) {
			srel = *rel ? rp_asprintf("%s/%s", rel, d->d_name) :
				rp_strdup(d->d_name);
			walk(sub, srel, found, depth + 1);
			free(srel);
		}
		free(sub);
	}
	closedir(dd);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The set's cell: its folder's name (the date-rev scripts/run-bench gave
 * it) linked, and its tables.md; a relative link percent-encodes what
 * Markdown would misread.  Text has the path.
 */
static void set_cell(struct rp_tab *t, const char *rel)
{
	char *href = NULL, name[128];
	size_t len;
	FILE *f;

	if (rp_format == RP_TEXT) {
		rp_cell(t, "%s", rel);
		return;
	}
	f = open_memstream(&href, &len);
	for (const char *p = rel; f && *p; p++)
		if (strchr(" ()<>[]|%\"'", *p) || (unsigned char)*p < 0x20)
			fprintf(f, "%%%02X", (unsigned char)*p);
		else
			fputc(*p, f);
	if (!f || fclose(f))
		exit(RP_EXIT_NOTHING);
	rp_cell(t, "[%s](%s/) ([tables](%s/tables.md))",
		rp_md('t', rp_path_comp(rel, 0, name, sizeof(name))), href,
		href);
	free(href);
}

static const struct rp_bench *fastest(const struct rp_set *s, const char *op,
				      const char *order, struct rp_fig *best)
{
	const struct rp_bench *who = NULL, *b;
	struct rp_fig f;

	rp_fig(NULL, "", best);
	rp_each(b, s, ARCH_PRIM "%s", op)
		if (!b->skip && rp_has_prefix(rp_f(b, "ordering"), order) &&
		    rp_fig_unit(s, b, "", &f) && (!who || f.v < best->v)) {
			who = b;
			*best = f;
		}
	return who;
}

/* " (what)" after a figure, if there is a what */
static const char *who_of(const char *who)
{
	static char buf[160];

	snprintf(buf, sizeof(buf), "%s%s%s", who ? " (" : "",
		 who ? rp_md('t', who) : "", who ? ")" : "");
	return buf;
}

static void index_row(struct rp_tab *t, const struct rp_set *s,
		      const char *rel)
{
	struct rp_fig full, loc, c128, f[3];
	const struct rp_bench *b;
	const char *who, *local = "local";
	char buf[2][128], *notes = NULL;
	size_t len;
	FILE *nf;
	int i;

	rp_cell_as(t, 't', s->usable ? rp_machine_name(s) :
		   *rp_path_comp(rel, 1, buf[0], 128) ? buf[0] : "–");
	rp_cell_as(t, 't', s->usable ? rp_mach(s, "ak_arch") :
		   *rp_path_comp(rel, 2, buf[1], 128) ? buf[1] : "–");
	set_cell(t, rel);
	if (!s->usable) {
		rp_row(t, "–|–|–|–|–|–|–");
		rp_cell(t, "rejected: %s", rp_md('t', rp_why(s)));
		return;
	}
	rp_cell(t, "%s", s->emulated ? "yes" : "no");
	rp_cell_as(t, 't', s->unit);

	/* locked against local cmpxchg64: the fastest usable of each */
	fastest(s, "cmpxchg64", "full", &full);
	if (!fastest(s, "cmpxchg64", "local", &loc) &&
	    fastest(s, "cmpxchg64", "relaxed", &loc))
		local = "relaxed";
	rp_cell(t, "%s / %s%s", rp_num(full.v), rp_num(loc.v),
		strcmp(local, "local") ? " (relaxed)" : "");
	b = fastest(s, "cmpxchg128", "full", &c128);
	rp_cell(t, "%s%s", rp_num(c128.v), who_of(b ? rp_f(b, "variant") :
						   NULL));
	for (i = 0; i < 3; i++) {
		static const char *const mode[] = { "rseq", "atomic",
						    "thread" };

		rp_fig_unit(s, rp_find(s, "suite=percpu op=add mode=%s",
				       mode[i]), "", &f[i]);
	}
	rp_cell(t, "%s / %s / %s", rp_num(f[0].v), rp_num(f[1].v),
		rp_num(f[2].v));
	who = rp_best(s, "pair", "size", 64, "", false, &f[0]);
	rp_cell(t, "%s%s", rp_num(f[0].v), who_of(who));
	who = rp_best(s, "bulk", "bulk", 16, "", false, &f[0]);
	rp_cell(t, "%s%s", rp_num(f[0].v), who_of(who));

	nf = open_memstream(&notes, &len);
	if (nf && s->emulated)
		fprintf(nf, "; emulated: figures mean nothing");
	if (nf && s->reps <= 1)
		fprintf(nf, "; 1 run each");
	for (i = 0; nf && i < s->missing.n; i++)
		fprintf(nf, "%s %s", i ? "" : "; missing:",
			rp_md('t', s->missing.v[i]));
	if (nf && s->nr_problems)
		fprintf(nf, "; %d problem%s, the first: %s", s->nr_problems,
			s->nr_problems > 1 ? "s" : "", rp_md('t', rp_why(s)));
	if (!nf || fclose(nf))
		exit(RP_EXIT_NOTHING);
	if (*notes)
		rp_cell(t, "%s", notes + 2);
	else
		rp_cell_none(t);
	free(notes);
}

int cmd_index(int argc, char **argv)
{
	struct rp_strs found = { 0 };
	char *dir = rp_strdup(argv[0]);
	size_t l = strlen(dir);
	struct stat st;
	struct rp_tab t;
	int i, usable = 0;

	(void)argc;
	while (l > 1 && dir[l - 1] == '/')
		dir[--l] = 0;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		rp_problem("%s: not a folder", dir);
		free(dir);
		return RP_EXIT_NOTHING;
	}
	walk(dir, "", &found, 0);
	if (found.n > 1)
		qsort(found.v, found.n, sizeof(*found.v), cmp_str);
	puts("# Result sets\n");
	{
		char *cmd = rp_asprintf("atomkit-report index %s", dir);

		printf("Written by %s", rp_md('c', cmd));
		free(cmd);
	}
	puts(": one row per result set (a folder with machine.json), with the headline figures in the set's counter unit: medians, lower is better, \"–\" where the set has no such figure. Each set's `tables.md` is `atomkit-report tables SET`.\n");
	puts("- cmpxchg64: the fastest usable arch variant labelled [full] / the fastest [local] (relaxed where the arch has none), latency");
	puts("- cmpxchg128: the fastest usable arch variant labelled [full], latency");
	puts("- this\\_cpu\\_add: `percpu/add/<mode>` for rseq / atomic / thread");
	puts("- slab pair: the best design's alloc+free pair of 64 bytes; bulk-16: the best design's `alloc_bulk`+`free_bulk` of 16, per object\n");
	if (!found.n) {
		puts("No result sets here.");
		rp_problem("%s: no result sets (folders with machine.json) under it",
			   dir);
		free(dir);
		return RP_EXIT_NOTHING;
	}
	rp_tab_init(&t, "lllllrrrrrl");
	rp_row(&t, "machine|arch|set|emulated|unit|cmpxchg64 full / local|cmpxchg128 full|%s|slab pair 64 B (best design)|bulk-16 per object (best design)",
	       rp_md('t', "this_cpu_add rseq / atomic / thread"));
	rp_cell(&t, "notes");
	for (i = 0; i < found.n; i++) {
		char *p = *found.v[i] ? rp_asprintf("%s/%s", dir, found.v[i]) :
			rp_strdup(dir);
		struct rp_set *s = rp_set_load(p);

		index_row(&t, s, *found.v[i] ? found.v[i] : ".");
		usable += s->usable;
		rp_set_free(s);
		free(p);
	}
	rp_tab_print(&t);
	rp_strs_free(&found);
	free(dir);
	return rp_exit_status(usable);
}
