// SPDX-License-Identifier: MIT
/*
 * The figures of issue 14 ("Honest figures"), beside the tables of
 * tables.c: the slab tables hold warm steady-state figures, so the cold
 * start gets a table of its own; the large sizes of slab/seq are set
 * against the best system allocator, and a gap over 2x comes with what
 * the set says about it; each design's pair is set beside the per-CPU
 * primitive pair its fastpath runs, so that what the allocator adds is
 * seen; the targets, each met or with its gap; and the cache-line cells
 * less the timer's own cost.  As everywhere in this program, every
 * figure is read from the files; the reasons given are counters of the
 * set, never a guess.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- slab rows ---- */

/*
 * Whether the set's slab figures are warm: atomkit-bench added the warm
 * round and its new_slabs counter together with the cold rows; a set
 * from before has neither, and its figures may hold the first touch.
 */
static bool warm_set(const struct rp_set *s)
{
	const struct rp_bench *b;
	struct rp_fig f;

	rp_each(b, s, "suite=slab")
		if (rp_is(b, "workload", "seq_cold") ||
		    rp_fig(b, "new_slabs", &f))
			return true;
	return false;
}

const char *rp_warm(const struct rp_set *s, const char *cells)
{
	static char buf[4][1024];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "%s, %s", warm_set(s) ?
		 "warm steady state (first touch excluded)" :
		 "not known to be warm (the set predates warm slab runs: the first touch of fresh slabs may be in them)",
		 cells);
	return b;
}

/*
 * The impls of slab workload wl at size, designs or system mallocs or
 * both, in file order: the suite registers the designs first and malloc
 * last, and the slab-<malloc> files come after slab.json in a set.
 */
static void impls_of(const struct rp_set *s, const char *wl, long size,
		     bool designs, bool mallocs, struct rp_strs *l)
{
	const struct rp_bench *b;

	rp_each(b, s, "suite=slab workload=%s size=%ld", wl, size)
		if (rp_has_prefix(rp_f(b, "design"), "malloc-") ?
		    mallocs : designs)
			rp_strs_add(l, rp_f(b, "design"));
}

/*
 * The figure of b in the unit (field prefix + the counter); where there
 * is none, why not, in why.
 */
static bool unit_fig(const struct rp_set *s, const struct rp_bench *b,
		     const char *prefix, const char *what, struct rp_fig *f,
		     char *why, size_t n)
{
	if (rp_fig_unit(s, b, prefix, f))
		return true;
	if (!b)
		snprintf(why, n, "no %s in this set", what);
	else if (b->skip)
		snprintf(why, n, "%s %s", what, b->skip);
	else
		snprintf(why, n, "%s has no %s%s figure", what, prefix,
			 *s->counter ? s->counter : "(no counter)");
	return false;
}

/* "–": no such benchmark; "n/a (note)": skipped, with its reason. */
static void none_cell(struct rp_tab *t, const struct rp_bench *b)
{
	if (b && b->skip)
		rp_cell(t, "n/a (%d)", rp_tab_note(t, b->skip));
	else
		rp_cell(t, "–");
}

/* A figure and its min-max, or "n/a (note)" saying why there is none. */
static bool fig_or_why(struct rp_tab *t, const struct rp_set *s,
		       const struct rp_bench *b, const char *prefix,
		       const char *what, struct rp_fig *f)
{
	char why[512];

	if (unit_fig(s, b, prefix, what, f, why, sizeof(why)))
		rp_cell(t, "%s%s", rp_num(f->v), rp_range(f));
	else if (!b)
		rp_cell(t, "–");
	else
		rp_cell(t, "n/a (%d)", rp_tab_note(t, why));
	return !isnan(f->v);
}

/* ---- seq at the large sizes against the best system allocator ---- */

static const long gap_sizes[] = { 4096, 16384 };

/*
 * What the set says about a design's seq figure over 2x the best system
 * allocator's: the slabs it mapped while timed, its cold start, its
 * pair at the same size, and the spread.
 */
static char *gap_reason(const struct rp_set *s, const char *design,
			long size, const char *phase, const struct rp_fig *d,
			const char *who, const struct rp_fig *best)
{
	const struct rp_bench *b = rp_slab(s, "seq", design, size);
	const struct rp_bench *c = rp_slab(s, "seq_cold", design, size);
	struct rp_fig ns, cold, slabs, pd, pm;
	char *r = NULL;
	const char *pw;
	size_t len;
	FILE *f;

	f = open_memstream(&r, &len);
	if (!f)
		exit(RP_EXIT_NOTHING);
	fprintf(f, "%s %s(%ld) %s over %s's %s: ", design,
		*phase == 'a' ? "alloc" : "free", size, rp_num(d->v), who,
		rp_num(best->v));
	if (!rp_fig(b, "new_slabs", &ns))
		fputs("no new_slabs counter: the set predates warm slab runs, so this figure may hold the first touch of fresh slabs",
		      f);
	else if (ns.v > 0)
		fprintf(f, "it mapped %s slabs while timed (new_slabs): not a steady state",
			rp_count(ns.v));
	else
		fputs("it mapped no slab while timed (new_slabs 0)", f);
	if (rp_fig_unit(s, c, phase, &cold)) {
		fprintf(f, "; its cold start (slab/seq_cold) is %s",
			rp_num(cold.v));
		if (rp_fig(c, "slabs", &slabs))
			fprintf(f, " with %s slabs mapped per run",
				rp_count(slabs.v));
		fprintf(f, ", so warm is %s of cold%s", rp_pct(d->v / cold.v),
			d->v >= cold.v ? ": no cheaper than a cold start" :
			d->v >= cold.v / 2 ? ": close to a cold start" :
			": the gap is not the first touch");
	}
	pw = rp_best(s, "pair", "size", size, "", true, &pm);
	if (rp_fig_unit(s, rp_slab(s, "pair", design, size), "", &pd) && pw)
		fprintf(f, "; its alloc+free pair at %ld B is %s, %sx %s's %s",
			size, rp_num(pd.v), rp_num(pd.v / pm.v), pw,
			rp_num(pm.v));
	if (d->n > 1 && best->n > 1)
		fprintf(f, "; its fastest run is %sx the best's slowest",
			rp_num(d->min / best->max));
	else
		fputs("; 1 run each: the noise cannot be judged", f);
	if (fclose(f))
		exit(RP_EXIT_NOTHING);
	return r;
}

void rp_slab_seq_gap(const struct rp_set *s)
{
	struct rp_strs designs = { 0 };
	int k, p, j, over = 0, n = 0;
	struct rp_tab t;
	char head[96];

	for (k = 0; k < 2; k++)
		impls_of(s, "seq", gap_sizes[k], true, false, &designs);
	if (!designs.n || !rp_best(s, "seq", "size", gap_sizes[0], "alloc_",
				   true, &(struct rp_fig){ 0 })) {
		puts("\nNo comparison of the large seq sizes with the system allocators: no slab/seq rows of both designs and mallocs at 4096 bytes in this set.");
		rp_strs_free(&designs);
		return;
	}
	rp_head(s, "Slab seq at 4096 and 16384 B against the best system allocator (goal: within 2x)",
		NULL, rp_warm(s, "per object: the lowest system allocator's figure of the row (seed table 1), then each design's over it; over 2x, the note says what the set shows about it"),
		"see seed table 1");
	rp_tab_init(&t, "llr");
	snprintf(head, sizeof(head), "slab/seq (%s)", s->unit);
	rp_row(&t, "%s|best system allocator", head);
	t.ncol = designs.n + 2;
	for (j = 0; j < designs.n; j++)
		rp_cell(&t, "%s / best", rp_md('t', designs.v[j]));
	for (k = 0; k < 2; k++)
		for (p = 0; p < 2; p++) {
			const char *phase = p ? "free_" : "alloc_";
			struct rp_fig best, d;
			const char *who;

			who = rp_best(s, "seq", "size", gap_sizes[k], phase,
				      true, &best);
			rp_cell(&t, "%s(%ld)", p ? "free" : "alloc",
				gap_sizes[k]);
			if (!who) {
				rp_row(&t, "–");
				for (j = 0; j < designs.n; j++)
					rp_cell(&t, "–");
				continue;
			}
			rp_cell(&t, "%s %s", rp_md('t', who), rp_num(best.v));
			for (j = 0; j < designs.n; j++) {
				const struct rp_bench *b;
				char *why;

				b = rp_slab(s, "seq", designs.v[j],
					    gap_sizes[k]);
				if (!rp_fig_unit(s, b, phase, &d)) {
					none_cell(&t, b);
					continue;
				}
				n++;
				if (d.v <= 2 * best.v) {
					rp_cell(&t, "%sx", rp_num(d.v / best.v));
					continue;
				}
				over++;
				why = gap_reason(s, designs.v[j], gap_sizes[k],
						 phase, &d, who, &best);
				rp_cell(&t, "%sx (%d)", rp_num(d.v / best.v),
					rp_tab_note(&t, why));
				free(why);
			}
		}
	rp_tab_print(&t);
	if (over)
		printf("\n%d of %d design figures are over 2x the best system allocator's; the notes give what the set shows about each.\n",
		       over, n);
	else if (n)
		printf("\nEvery design is within 2x of the best system allocator at these sizes (%d figures).\n",
		       n);
	rp_strs_free(&designs);
}

/* ---- the cold start ---- */

void rp_slab_cold(const struct rp_set *s)
{
	struct rp_strs sizes = { 0 }, impls = { 0 };
	const struct rp_bench *b;
	struct rp_tab t;
	char buf[32];
	int i, j;

	rp_each(b, s, "suite=slab workload=seq_cold") {
		snprintf(buf, sizeof(buf), "%ld", rp_n(b, "size"));
		rp_strs_add(&sizes, buf);
	}
	if (!sizes.n) {
		puts("\nNo cold-start table: no slab/seq_cold rows in this set (it predates them).");
		return;
	}
	rp_strs_sort_num(&sizes);
	for (i = 0; i < sizes.n; i++)
		impls_of(s, "seq_cold", atol(sizes.v[i]), true, true, &impls);
	rp_head(s, "Slab, cold start: 10000 allocations, then 10000 frees, on a fresh cache or in a fresh process (slab/seq_cold)",
		NULL, "**cold start**, not a steady state: first touch, mmap and page faults included; \"alloc / free\" per object, and for a design the slabs each run mapped (the warm figures: seed table 1)",
		"not shown (see compare)");
	rp_tab_init(&t, "lr");
	t.ncol = impls.n + 1;
	rp_cell(&t, "size (B)");
	for (j = 0; j < impls.n; j++)
		rp_cell_as(&t, 't', impls.v[j]);
	for (i = 0; i < sizes.n; i++) {
		rp_cell(&t, "%s", sizes.v[i]);
		for (j = 0; j < impls.n; j++) {
			struct rp_fig a, f, sl;

			b = rp_slab(s, "seq_cold", impls.v[j],
				    atol(sizes.v[i]));
			if (!rp_fig_unit(s, b, "alloc_", &a)) {
				none_cell(&t, b);
				continue;
			}
			rp_fig_unit(s, b, "free_", &f);
			if (rp_fig(b, "slabs", &sl))
				rp_cell(&t, "%s / %s (%s slabs)", rp_num(a.v),
					rp_num(f.v), rp_count(sl.v));
			else
				rp_cell(&t, "%s / %s", rp_num(a.v),
					rp_num(f.v));
		}
	}
	rp_tab_print(&t);
	rp_strs_free(&sizes);
	rp_strs_free(&impls);
}

/* ---- what a design costs beyond its primitive ---- */

/*
 * The per-CPU pair each design's fastpath runs (doc/benchmarks.md,
 * "Fastpath primitives"): its op in the rseq modes, and in the others,
 * or why no one row stands for it there.
 */
static const struct fastpath {
	const char *design, *rseq, *other;
} fastpaths[] = {
	{ "array", "array_pop_push_section", "array_push_pop" },
	{ "sheaf", "array_ptr_pop_push_section", NULL },
	{ "rseq-list", "list_pop_push_section", "list_pop_push" },
	{ "slub-tid", "tid_pop_push", "tid_pop_push" },
	{ "slub-local", "local_pop_push", "local_pop_push" },
};

/* "array on rseq (...)": the per-CPU mode a design's benchmark ran in. */
static const char *mode_of(const struct rp_bench *b, char *buf, size_t n)
{
	const char *p = b ? strstr(b->label, " on ") : NULL;

	if (!p)
		return NULL;
	p += 4;
	snprintf(buf, n, "%.*s", (int)strcspn(p, " ("), p);
	return *buf ? buf : NULL;
}

/*
 * The primitive pair under design's fastpath in mode: its name in what,
 * its benchmark in *p; false with why there is none in what instead.
 */
static bool fastpath_of(const struct rp_set *s, const char *design,
			const char *mode, char *what, size_t n,
			const struct rp_bench **p)
{
	const struct fastpath *f = NULL;
	const char *op;
	size_t i;

	if (!strcmp(design, "locked")) {
		snprintf(what, n, "prim/ref/mutex_pop_push/lat");
		*p = rp_find(s, "suite=prim arch=ref op=mutex_pop_push metric=lat");
		return true;
	}
	for (i = 0; i < sizeof(fastpaths) / sizeof(fastpaths[0]); i++)
		if (!strcmp(design, fastpaths[i].design))
			f = &fastpaths[i];
	if (!f)
		snprintf(what, n, "no fastpath primitive is known for %s",
			 design);
	else if (!mode)
		snprintf(what, n, "its per-CPU mode is not in the label of its slab/pair row");
	else if (!rp_has_prefix(mode, "rseq") && !f->other)
		snprintf(what, n, "in %s mode %s takes its main sheaf by this_cpu_xchg and puts it back by this_cpu_cmpxchg: no one pair row stands for it",
			 mode, design);
	if (!f || !mode || (!rp_has_prefix(mode, "rseq") && !f->other))
		return false;
	op = rp_has_prefix(mode, "rseq") ? f->rseq : f->other;
	snprintf(what, n, "percpu/%s/%s", op, mode);
	*p = rp_find(s, "suite=percpu op=%s mode=%s", op, mode);
	return true;
}

/*
 * What the set says of a pair below the primitive it runs: the two are
 * separate benchmarks, each a median of its own runs, and whether their
 * spreads overlap.
 */
static const char *below_floor(const struct rp_fig *pair,
			       const struct rp_fig *prim)
{
	if (!isnan(pair->max) && !isnan(prim->min) && pair->max >= prim->min)
		return "below its primitive, within their spreads: the pair and the primitive are separate benchmarks, each the median of its own runs";
	return "below its primitive by more than either's spread: the pair and the primitive are separate benchmarks, and the set holds nothing that says why";
}

void rp_slab_decomp(const struct rp_set *s)
{
	struct rp_strs impls = { 0 };
	struct rp_tab t;
	int i;

	impls_of(s, "pair", 64, true, true, &impls);
	if (!impls.n) {
		puts("\nNo fastpath decomposition: no slab/pair rows at 64 bytes in this set.");
		return;
	}
	rp_head(s, "What each design costs beyond its fastpath primitive, 64-byte objects",
		NULL, rp_warm(s, "per pair: the per-CPU pop+push the design's fastpath runs (`percpu/<op>/<mode>` in the design's mode; locked: a mutex-guarded list) beside the design's alloc+free (`slab/pair/<impl>/size:64`); the difference is what the allocator adds around the primitive; the system allocators for scale"),
		"(min - max) after each figure");
	rp_tab_init(&t, "lllrrrr");
	rp_row(&t, "impl|mode|primitive pair|primitive (%s)|slab pair (%s)|slab - primitive|slab / primitive",
	       s->unit, s->unit);
	for (i = 0; i < impls.n; i++) {
		const struct rp_bench *p, *b;
		struct rp_fig fp, fb;
		char what[160], mb[32];
		const char *mode;
		bool ok;

		b = rp_slab(s, "pair", impls.v[i], 64);
		rp_cell_as(&t, 't', impls.v[i]);
		if (rp_has_prefix(impls.v[i], "malloc-")) {
			rp_row(&t, "–|–|–");
			fig_or_why(&t, s, b, "", b->name, &fb);
			rp_row(&t, "–|–");
			continue;
		}
		mode = mode_of(b, mb, sizeof(mb));
		rp_cell_as(&t, 't', mode ? mode : "–");
		ok = fastpath_of(s, impls.v[i], mode, what, sizeof(what), &p);
		if (!ok) {
			rp_cell(&t, "n/a (%d)", rp_tab_note(&t, what));
			rp_cell(&t, "–");
		} else {
			rp_cell_as(&t, 'c', what);
			ok = fig_or_why(&t, s, p, "", what, &fp);
		}
		fig_or_why(&t, s, b, "", b->name, &fb);
		if (!ok || isnan(fb.v)) {
			rp_row(&t, "–|–");
			continue;
		}
		rp_cell(&t, "%s", rp_num(fb.v - fp.v));
		if (fb.v >= fp.v)
			rp_cell(&t, "%s", rp_num(fb.v / fp.v));
		else
			rp_cell(&t, "%s (%d)", rp_num(fb.v / fp.v),
				rp_tab_note(&t, below_floor(&fb, &fp)));
	}
	rp_tab_print(&t);
	rp_strs_free(&impls);
}

/* ---- what each per-CPU op costs beyond its rseq section ---- */

/*
 * Every this_cpu op of the percpu suite; its bare section(s), run as a
 * hand-written port runs them, are the row <op>_section of the same mode
 * (bench/suite_percpu.c).
 */
static const char *const percpu_ops[] = {
	"read", "write", "add", "add_return", "xchg", "cmpxchg",
	"try_cmpxchg", "cmpxchg128", "list_pop_push", "array_push_pop",
	"array_ptr_pop_push",
};
static const char *const rseq_modes[] = { "rseq", "rseq-mm_cid" };

#define PERCPU_API_GOAL	1.05

/* Whether the set has any <op>_section row beside an API op. */
static bool has_op_sections(const struct rp_set *s)
{
	return rp_find(s, "suite=percpu op=add_section") ||
	       rp_find(s, "suite=percpu op=array_push_pop_section");
}

/*
 * API op and its section in mode: both figures, or false (a figure NAN)
 * where either is missing or skipped.
 */
static bool op_and_section(const struct rp_set *s, const char *op,
			   const char *mode, const struct rp_bench **a,
			   const struct rp_bench **r, struct rp_fig *fa,
			   struct rp_fig *fr)
{
	bool ok;

	*a = rp_find(s, "suite=percpu op=%s mode=%s", op, mode);
	*r = rp_find(s, "suite=percpu op=%s_section mode=%s", op, mode);
	ok = rp_fig_unit(s, *a, "", fa);
	ok = rp_fig_unit(s, *r, "", fr) && ok;
	return ok;
}

void rp_percpu_decomp(const struct rp_set *s)
{
	struct rp_tab t;
	size_t i, k;

	if (!rp_find(s, "suite=percpu"))
		return;
	if (!has_op_sections(s)) {
		puts("\nNo table of what each per-CPU op costs beyond its rseq section: this set predates the bare-section rows (`percpu/<op>_section/<mode>` beside every op).");
		return;
	}
	rp_head(s, "What each per-CPU op costs beyond its rseq section",
		NULL, "per operation, rseq modes: the this_cpu op (`percpu/<op>/<mode>`) beside the same work done by its bare rseq section(s) as a hand-written port runs them (`percpu/<op>_section/<mode>`: the thread's rseq area and id field taken once, no mode to test); the difference is what the API adds; goal: at most 1.05x",
		"(min - max) after each figure");
	rp_tab_init(&t, "llrrrrl");
	rp_row(&t, "op|mode|this_cpu op (%s)|section (%s)|op - section|op / section|goal: at most 1.05x",
	       s->unit, s->unit);
	for (i = 0; i < sizeof(percpu_ops) / sizeof(percpu_ops[0]); i++)
		for (k = 0; k < sizeof(rseq_modes) / sizeof(rseq_modes[0]);
		     k++) {
			const struct rp_bench *a, *r;
			struct rp_fig fa, fr;
			char what[96];
			bool ok;

			if (!rp_find(s, "suite=percpu op=%s mode=%s",
				     percpu_ops[i], rseq_modes[k]))
				continue;
			op_and_section(s, percpu_ops[i], rseq_modes[k], &a,
				       &r, &fa, &fr);
			rp_cell_as(&t, 'c', percpu_ops[i]);
			rp_cell_as(&t, 't', rseq_modes[k]);
			snprintf(what, sizeof(what), "percpu/%s/%s",
				 percpu_ops[i], rseq_modes[k]);
			ok = fig_or_why(&t, s, a, "", what, &fa);
			snprintf(what, sizeof(what), "percpu/%s_section/%s",
				 percpu_ops[i], rseq_modes[k]);
			if (!r) {
				rp_cell(&t, "n/a (%d)", rp_tab_note(&t,
					"this set has no bare-section row for this op"));
				ok = false;
			} else {
				ok = fig_or_why(&t, s, r, "", what, &fr) && ok;
			}
			if (!ok) {
				rp_row(&t, "–|–|–");
				continue;
			}
			rp_cell(&t, "%s", rp_num(fa.v - fr.v));
			rp_cell(&t, "%sx", rp_num(fa.v / fr.v));
			if (fa.v / fr.v <= PERCPU_API_GOAL)
				rp_cell(&t, "met");
			else
				rp_cell(&t, "not met: %s over",
					rp_pct(fa.v / fr.v / PERCPU_API_GOAL - 1));
		}
	rp_tab_print(&t);
}

/* ---- the targets ---- */

/*
 * One target's row: what, the figures used, the ratio, the goal, and
 * met or the gap; "n/a" with the missing input where why is set.  The
 * whole programs' targets (macro.c) are rows of the same kind.
 */
void rp_goal_row(struct rp_tab *t, const char *what, const char *figs,
		 double ratio, double goal, bool at_most, const char *why,
		 const char *expect)
{
	rp_cell_as(t, 't', what);
	rp_cell_as(t, 't', why ? "–" : figs);
	rp_cell(t, "%s%s", why ? "–" : rp_num(ratio), why ? "" : "x");
	rp_cell(t, "%s %gx", at_most ? "<=" : ">=", goal);
	if (why)
		rp_cell(t, "n/a: %s", rp_md('t', why));
	else if (at_most ? ratio <= goal : ratio >= goal)
		rp_cell(t, "met");
	else
		rp_cell(t, "not met: %s %s%s", rp_pct(at_most ?
			ratio / goal - 1 : 1 - ratio / goal),
			at_most ? "over" : "under", expect ? expect : "");
}

/* "sheaf 17.1 / 15.0": the two figures of a ratio, and whose. */
static const char *figs2(const char *who, double a, double b)
{
	static char buf[160];
	char x[32];

	snprintf(x, sizeof(x), "%s", rp_num(a));
	snprintf(buf, sizeof(buf), "%s%s%s / %s", who ? who : "",
		 who ? " " : "", x, rp_num(b));
	return buf;
}

/* Mobj_s of slab/conc of impl at size and threads, spread placement first. */
static bool conc_fig(const struct rp_set *s, const char *impl, long size,
		     int threads, struct rp_fig *f)
{
	const struct rp_bench *any = NULL, *b;

	rp_each(b, s, "suite=slab workload=conc design=%s size=%ld", impl,
		size)
		if (b->threads == threads &&
		    (rp_is(b, "placement", "spread") || !any))
			any = b;
	return rp_fig(any, "Mobj_s", f);
}

/* The size of the scaling target: 64 bytes, else the first conc size. */
static long conc_size(const struct rp_set *s)
{
	const struct rp_bench *b;
	long first = -1;

	rp_each(b, s, "suite=slab workload=conc") {
		if (rp_n(b, "size") == 64)
			return 64;
		if (first < 0)
			first = rp_n(b, "size");
	}
	return first;
}

/*
 * The best (lowest) 64 B pair among the designs whose fastpath is bare
 * rseq sections in their mode (array, sheaf, rseq-list: the *_section rows),
 * over those sections: what the allocator adds around them.
 */
static void pair_section_goal(struct rp_tab *t, const struct rp_set *s)
{
	struct rp_strs impls = { 0 };
	const char *who = NULL, *why = NULL;
	struct rp_fig best, floor, f, p;
	char what[160], wbest[160] = "", mb[32], buf[320];
	int i;

	impls_of(s, "pair", 64, true, false, &impls);
	for (i = 0; i < impls.n; i++) {
		const struct rp_bench *b = rp_slab(s, "pair", impls.v[i], 64);
		const struct rp_bench *pb;
		const char *mode = mode_of(b, mb, sizeof(mb));

		if (!fastpath_of(s, impls.v[i], mode, what, sizeof(what),
				 &pb) || !strstr(what, "_section/") ||
		    !rp_fig_unit(s, b, "", &f) || !rp_fig_unit(s, pb, "", &p))
			continue;
		if (!who || f.v < best.v) {
			who = impls.v[i];
			best = f;
			floor = p;
			snprintf(wbest, sizeof(wbest), "%s", what);
		}
	}
	if (!who)
		why = "no design's slab/pair at 64 B with the rseq sections it runs (`percpu/*_section/<mode>`) in this set";
	snprintf(buf, sizeof(buf), "%s (%s)", figs2(who, who ? best.v : NAN,
		 who ? floor.v : NAN), wbest);
	rp_goal_row(t, "best pair 64 B / the sections it runs", buf,
		    who ? best.v / floor.v : NAN, 1.10, true, why, NULL);
	rp_strs_free(&impls);
}

/* Every this_cpu op in an rseq mode over its bare section: the worst. */
static void percpu_op_goal(struct rp_tab *t, const struct rp_set *s)
{
	double worst = NAN;
	char figs[160] = "";
	const char *why = NULL;
	size_t i, k;

	for (i = 0; i < sizeof(percpu_ops) / sizeof(percpu_ops[0]); i++)
		for (k = 0; k < sizeof(rseq_modes) / sizeof(rseq_modes[0]);
		     k++) {
			const struct rp_bench *a, *r;
			struct rp_fig fa, fr;
			char who[64];

			if (!op_and_section(s, percpu_ops[i], rseq_modes[k],
					    &a, &r, &fa, &fr))
				continue;
			if (!isnan(worst) && fa.v / fr.v <= worst)
				continue;
			worst = fa.v / fr.v;
			snprintf(who, sizeof(who), "%s %s", percpu_ops[i],
				 rseq_modes[k]);
			snprintf(figs, sizeof(figs), "%s",
				 figs2(who, fa.v, fr.v));
		}
	if (isnan(worst))
		why = has_op_sections(s) ?
			"no this_cpu op with its section in an rseq mode" :
			"this set predates the bare-section rows (`percpu/<op>_section/<mode>`)";
	rp_goal_row(t, "every this_cpu op, rseq modes / its section (worst)",
		    figs, worst, PERCPU_API_GOAL, true, why, NULL);
}

/* The pair targets: the best design's 64 B pair over each reference. */
static void pair_goals(struct rp_tab *t, const struct rp_set *s)
{
	static const struct {
		const char *what, *name;
		double goal;
	} refs[] = {
		{ "best pair 64 B / glibc's", "malloc-glibc", 0.4 },
		{ "best pair 64 B / tcmalloc's", "malloc-tcmalloc", 0.7 },
	};
	struct rp_fig best, r;
	const char *who, *why;
	char buf[512];
	size_t i;

	percpu_op_goal(t, s);
	pair_section_goal(t, s);
	who = rp_best(s, "pair", "size", 64, "", false, &best);
	for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		const struct rp_bench *b = rp_slab(s, "pair", refs[i].name,
						   64);

		why = NULL;
		if (!who)
			why = "no design's slab/pair at 64 B in this set";
		else if (!unit_fig(s, b, "", refs[i].name, &r, buf,
				   sizeof(buf)))
			why = buf;
		rp_goal_row(t, refs[i].what, figs2(who, best.v, r.v),
			    best.v / r.v, refs[i].goal, true, why, NULL);
	}
}

void rp_slab_targets(const struct rp_set *s)
{
	struct rp_fig d, m, bulk, pair, m1, m2;
	struct rp_strs designs = { 0 };
	const char *who, *why;
	char buf[512], what[96];
	struct rp_tab t;
	long size;
	int i;

	rp_head(s, "Targets of the slab issue (reported, never asserted)",
		NULL, NULL, NULL);
	size = conc_size(s);
	printf("Unit: %s; medians, %s. Best: the design with the lowest figure. this\\_cpu op / its section: each this\\_cpu op in an rseq mode over its bare section(s) (`percpu/<op>_section/<mode>`), the worst shown; pair 64 B: slab/pair at 64 bytes; the sections it runs: the bare rseq sections of the design's fastpath in its mode (`percpu/*_section/<mode>`), the best pair among the designs whose fastpath is one (array, sheaf, rseq-list); glibc's, tcmalloc's: their pair at 64 bytes; seq free(64): the free figure of slab/seq at 64 bytes; bulk-16: slab/bulk of 16, per object, against the same design's pair of the bulk objects' 256 bytes; 2 thr / 1 thr: Mobj/s of slab/conc at %ld bytes (locked is expected not to scale: one lock). Figures: the best design's / the reference's. Each target: met, or its gap to the goal; n/a names the input the set lacks.%s\n\n",
	       s->unit, rp_warm(s, "reported, never asserted"), size,
	       s->emulated ? " **Emulated: these ratios mean nothing.**" : "");
	rp_tab_init(&t, "llrll");
	rp_row(&t, "target|figures|ratio|goal|verdict");
	pair_goals(&t, s);

	who = rp_best(s, "seq", "size", 64, "free_", false, &d);
	why = NULL;
	if (!who)
		why = "no design's slab/seq free figure at 64 B in this set";
	else if (!unit_fig(s, rp_slab(s, "seq", "malloc-mimalloc", 64),
			   "free_", "malloc-mimalloc's slab/seq at 64 B", &m,
			   buf, sizeof(buf)))
		why = buf;
	rp_goal_row(&t, "best seq free(64) / mimalloc's",
		    figs2(who, d.v, m.v), d.v / m.v, 1, true, why, NULL);

	who = rp_best(s, "bulk", "bulk", 16, "", false, &bulk);
	why = NULL;
	if (!who)
		why = "no design's slab/bulk of 16 in this set";
	else if (!unit_fig(s, rp_slab(s, "pair", who, 256), "",
			   "its slab/pair at 256 B", &pair, buf, sizeof(buf)))
		why = buf;
	rp_goal_row(&t, "best bulk-16 / its pair 256 B",
		    figs2(who, bulk.v, pair.v), bulk.v / pair.v, 0.5, true,
		    why, NULL);

	/* 2 threads against 1, at 64 bytes, else the first size there is */
	if (size < 0)
		rp_goal_row(&t, "every design, 2 thr / 1 thr", "", NAN,
			    1.8, false, "no slab/conc rows in this set", NULL);
	impls_of(s, "conc", size, true, false, &designs);
	for (i = 0; i < designs.n; i++) {
		bool locked = !strcmp(designs.v[i], "locked");

		snprintf(what, sizeof(what), "%s, 2 thr / 1 thr",
			 designs.v[i]);
		why = NULL;
		if (!conc_fig(s, designs.v[i], size, 1, &m1) ||
		    !conc_fig(s, designs.v[i], size, 2, &m2))
			why = "no slab/conc figure at 1 and 2 threads";
		rp_goal_row(&t, what, figs2(NULL, m2.v, m1.v), m2.v / m1.v,
			    1.8, false, why,
			    locked ? " (expected: one lock)" : NULL);
	}
	rp_tab_print(&t);
	rp_strs_free(&designs);
}

/* ---- cache lines less the timer ---- */

static bool set_has_timer(const struct rp_set *s)
{
	const struct rp_bench *b;
	struct rp_fig f;

	rp_each(b, s, "suite=cacheline")
		if (rp_fig(b, "timer_ticks", &f))
			return true;
	return false;
}

const char *rp_timer_caption(const struct rp_set *s)
{
	if (!set_has_timer(s))
		return "per operation, by placement class of the two CPUs; not corrected: set predates the timer measurement (timer\\_ticks), so each figure includes the counter reads and fence around the operation";
	return "per operation, by placement class of the two CPUs, **corrected**: the raw figure less timer\\_ticks, the timed region's own cost (counter read, fence, read) measured in each run (the raw figure stays in the JSON); the min - max is that of each run's raw less its own correction; a note marks a correction whose rounds never agreed (timer\\_steady 0), and a figure below 0";
}

void rp_timer_cell(struct rp_tab *t, const struct rp_set *s,
		   const struct rp_bench *b)
{
	struct rp_fig raw, tim, st, c;
	const char *note = NULL;
	int i;

	rp_fig_unit(s, b, "", &raw);
	if (!rp_fig(b, "timer_ticks", &tim)) {
		if (set_has_timer(s))
			rp_cell(t, "%s%s (%d)", rp_num(raw.v), rp_range(&raw),
				rp_tab_note(t, "not corrected: this run has no timer_ticks"));
		else
			rp_cell(t, "%s%s", rp_num(raw.v), rp_range(&raw));
		return;
	}
	/* the spread: per run, each run's raw less its own correction */
	c = raw;
	c.v = raw.v - tim.v;
	c.min = c.max = NAN;
	c.n = 0;
	for (i = 0; *s->counter && i < b->nr_iter; i++) {
		json_t *r = json_object_get(b->iter[i], s->counter);
		json_t *k = json_object_get(b->iter[i], "timer_ticks");
		double x;

		if (!json_is_number(r) || !json_is_number(k))
			continue;
		x = json_number_value(r) - json_number_value(k);
		if (!c.n || x < c.min)
			c.min = x;
		if (!c.n || x > c.max)
			c.max = x;
		c.n++;
	}
	rp_fig(b, "timer_steady", &st);
	if (st.v < 1 || (st.n > 0 && st.min < 1))
		note = "timer not steady (timer_steady 0): its rounds never agreed, so the correction is the lowest round seen";
	else if (c.v < 0)
		note = "below 0: the raw figure is under timer_ticks, so the operation is within the timer's own variation";
	if (note)
		rp_cell(t, "%s%s (%d)", rp_num(c.v), rp_range(&c),
			rp_tab_note(t, note));
	else
		rp_cell(t, "%s%s", rp_num(c.v), rp_range(&c));
}
