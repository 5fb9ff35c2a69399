// SPDX-License-Identifier: MIT
/*
 * `tables`: each set as the tables kernel mailing-list threads post, one
 * per suite, then the slab seed tables (doc/report.md lists them).  A
 * table without data is left out with one line saying why; a skipped
 * benchmark is "n/a" with its reason as a numbered note under the table.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- cells keyed by row and column, for the matrix-shaped tables ---- */

struct grid_cell {
	const char *r, *c;
	const struct rp_bench *b;
};

struct grid {
	struct rp_strs rows, cols;
	struct grid_cell *v;
	int n, cap;
};

static void grid_add(struct grid *g, const char *r, const char *c,
		     const struct rp_bench *b)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->v = rp_realloc(g->v, g->cap * sizeof(*g->v));
	}
	g->v[g->n].r = rp_strs_add(&g->rows, r);
	g->v[g->n].c = rp_strs_add(&g->cols, c);
	g->v[g->n++].b = b;
}

static const struct rp_bench *grid_get(const struct grid *g, const char *r,
				       const char *c)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (!strcmp(g->v[i].r, r) && !strcmp(g->v[i].c, c))
			return g->v[i].b;
	return NULL;
}

static void grid_free(struct grid *g)
{
	rp_strs_free(&g->rows);
	rp_strs_free(&g->cols);
	free(g->v);
	memset(g, 0, sizeof(*g));
}

/* ---- titles and cells ---- */

static void title(const struct rp_set *s, const char *what)
{
	printf("\n### %s: %s\n\n", rp_md('t', what),
	       rp_md('t', rp_machine_name(s)));
}

/* The line under a title: the unit and the spread the cells show. */
static void caption(const struct rp_set *s, const char *unit,
		    const char *cells, const char *spread)
{
	if (unit)
		printf("Unit: %s", unit);
	else if (*s->counter)
		printf("Unit: %s (%s)", rp_md('t', *rp_mach(s, "ak_counter_unit") ?
					     rp_mach(s, "ak_counter_unit") :
					     s->counter),
		       rp_md('c', s->counter));
	else
		fputs("Unit: ns", stdout);
	printf(". Cells: %s, %s. Spread: %s.\n\n", cells, rp_runs(s),
	       s->reps > 1 ? spread : "none (1 run)");
}

/* Both, for the tables of other files; no caption where cells is NULL. */
void rp_head(const struct rp_set *s, const char *what, const char *unit,
	     const char *cells, const char *spread)
{
	title(s, what);
	if (cells)
		caption(s, unit, cells, spread);
}

/* "–" where the set has no such benchmark, "n/a (note)" if skipped. */
static void skip_cell(struct rp_tab *t, const struct rp_bench *b)
{
	if (!b)
		rp_cell(t, "–");
	else
		rp_cell(t, "n/a (%d)", rp_tab_note(t, b->skip));
}

/* A matrix table: FIRST and the columns' names as its header. */
static void grid_tab(struct rp_tab *t, const char *first,
		     const struct rp_strs *cols)
{
	int j;

	rp_tab_init(t, "lr");
	t->ncol = cols->n + 1;
	rp_cell(t, "%s", first);
	for (j = 0; j < cols->n; j++)
		rp_cell_as(t, 't', cols->v[j]);
}

/* What a matrix table's cell shows of its benchmark. */
enum cell {
	C_UNIT,		/* the figure (field prefix arg) and its min-max */
	C_OPS,		/* Mops/s and, in brackets, the fairness */
	C_AF,		/* "alloc / free" per object in the unit */
	C_AF_NS,	/* the same in ns */
	C_FIELD,	/* field arg as it is */
	C_PAIR,		/* the unit figure, its min-max, and ns */
	C_TIMER,	/* the unit figure less timer_ticks (honest.c) */
};

static void fig_cell(struct rp_tab *t, const struct rp_set *s,
		     const struct rp_bench *b, enum cell c, const char *arg)
{
	struct rp_fig u, f;

	if (!b || b->skip) {
		skip_cell(t, b);
		return;
	}
	switch (c) {
	case C_UNIT:
		rp_fig_unit(s, b, arg, &u);
		rp_cell(t, "%s%s", rp_num(u.v), rp_range(&u));
		break;
	case C_OPS:
		rp_fig(b, "ops", &u);
		rp_fig(b, "cv", &f);
		rp_cell(t, "%s (%s)", rp_num(u.v / 1e6), rp_num(f.v));
		break;
	case C_AF:
		rp_fig_unit(s, b, "alloc_", &u);
		rp_fig_unit(s, b, "free_", &f);
		rp_cell(t, "%s / %s", rp_num(u.v), rp_num(f.v));
		break;
	case C_AF_NS:
		rp_fig(b, "alloc_ns", &u);
		rp_fig(b, "free_ns", &f);
		rp_cell(t, "%s / %s", rp_num(u.v), rp_num(f.v));
		break;
	case C_FIELD:
		rp_fig(b, arg, &u);
		rp_cell(t, "%s", rp_num(u.v));
		break;
	case C_PAIR:
		rp_fig_unit(s, b, "", &u);
		rp_fig(b, "real_time", &f);
		rp_cell(t, "%s%s / %s ns", rp_num(u.v), rp_range(&u),
			rp_num(f.v));
		break;
	case C_TIMER:
		rp_timer_cell(t, s, b);
		break;
	}
}

/*
 * The matrix table of grid g, with cols as its columns: a row per row
 * name (kind 'c' as code, 0 as it is), then a cell c of each benchmark.
 */
static void grid_fill(struct rp_tab *t, const struct rp_set *s,
		      const struct grid *g, const struct rp_strs *cols,
		      const char *first, char kind, enum cell c,
		      const char *arg)
{
	int i, j;

	grid_tab(t, first, cols);
	for (i = 0; cols->n && i < g->rows.n; i++) {
		if (kind)
			rp_cell_as(t, kind, g->rows.v[i]);
		else
			rp_cell(t, "%s", g->rows.v[i]);
		for (j = 0; j < cols->n; j++)
			fig_cell(t, s, grid_get(g, g->rows.v[i], cols->v[j]),
				 c, arg);
	}
}

/* ---- the set's header ---- */

static void hrow(struct rp_tab *t, const char *key, const char *val)
{
	rp_cell(t, "%s", key);
	rp_cell(t, "%s", *val ? rp_md('t', val) : "–");
}

void rp_set_header(const struct rp_set *s, int level)
{
	char buf[512];
	struct rp_tab t;
	char *list = NULL;
	size_t len;
	FILE *f;
	int i;

	printf("%.*s %s: %s\n\n", level, "######",
	       rp_md('t', rp_machine_name(s)), rp_md('t', rp_set_name(s)));
	if (s->emulated)
		printf("**emulated: correctness only, figures mean nothing** (%s)\n\n",
		       rp_md('t', rp_mach(s, "ak_emulated")));
	rp_tab_init(&t, "ll");
	rp_cell_none(&t);
	rp_cell_none(&t);
	hrow(&t, "machine", rp_machine_name(s));
	hrow(&t, "arch", rp_mach(s, "ak_arch"));
	snprintf(buf, sizeof(buf), "%s (%s cores, %s PUs)",
		 rp_mach(s, "ak_cpu_model"), rp_mach(s, "ak_cores"),
		 rp_mach(s, "ak_pus"));
	hrow(&t, "CPU", buf);
	hrow(&t, "topology", rp_mach(s, "ak_topology"));
	hrow(&t, "kernel", rp_mach(s, "ak_kernel"));
	hrow(&t, "hypervisor", rp_mach(s, "ak_hypervisor"));
	hrow(&t, "emulated", rp_mach(s, "ak_emulated"));
	snprintf(buf, sizeof(buf), "governor %s; boost %s; SMT %s",
		 rp_mach(s, "ak_governor"), rp_mach(s, "ak_boost"),
		 rp_mach(s, "ak_smt"));
	hrow(&t, "frequency", buf);
	snprintf(buf, sizeof(buf), "%s; CFLAGS %s; configure %s",
		 rp_mach(s, "ak_compiler"), rp_mach(s, "ak_cflags"),
		 rp_mach(s, "ak_configure"));
	hrow(&t, "compiler", buf);
	snprintf(buf, sizeof(buf), "%s (%s)", rp_mach(s, "ak_counter_unit"),
		 *s->counter ? s->counter : "none: ns only");
	hrow(&t, "counter", buf);
	hrow(&t, "per-CPU mode", rp_mach(s, "ak_percpu_mode"));
	snprintf(buf, sizeof(buf), "cx16 %s; lse %s; isa207 %s",
		 rp_mach(s, "ak_cx16"), rp_mach(s, "ak_lse"),
		 rp_mach(s, "ak_isa207"));
	hrow(&t, "CPU features", buf);
	snprintf(buf, sizeof(buf), "%s (%s), started %s",
		 *rp_mach(s, "ak_run_mode") ? rp_mach(s, "ak_run_mode") :
		 "unknown", rp_runs(s), rp_mach(s, "ak_run_started"));
	hrow(&t, "run", buf);
	snprintf(buf, sizeof(buf), "%s (rev %s)", rp_set_name(s),
		 rp_mach(s, "ak_git_rev"));
	hrow(&t, "date-rev", buf);
	hrow(&t, "folder", s->path);
	f = open_memstream(&list, &len);
	for (i = 0; f && i < s->nr_suites; i++)
		fprintf(f, "%s%s", i ? ", " : "", rp_md('t', s->suites[i].name));
	if (f && s->missing.n)
		fprintf(f, "; %smissing:", RP_B);
	for (i = 0; f && i < s->missing.n; i++)
		fprintf(f, " %s", rp_md('t', s->missing.v[i]));
	if (f && s->missing.n)
		fprintf(f, "%s (interrupted run, or allocator not installed)",
			RP_B);
	if (!f || fclose(f))
		exit(RP_EXIT_NOTHING);
	rp_cell(&t, "suites");
	rp_cell(&t, "%s", list);
	free(list);
	if (s->nr_problems) {
		rp_cell(&t, "problems");
		rp_cell(&t, "%d reported on stderr; the first: %s",
			s->nr_problems, rp_md('t', rp_why(s)));
	}
	rp_tab_print(&t);
}

/* ---- a. primitives ---- */

static void prim_cells(struct rp_tab *t, const struct rp_set *s,
		       const struct rp_bench *b)
{
	struct rp_fig u, f;

	if (!b || b->skip) {
		skip_cell(t, b);
		rp_row(t, "–|–");
		return;
	}
	rp_fig_unit(s, b, "", &u);
	rp_fig(b, "real_time", &f);
	rp_cell(t, "%s", rp_num(u.v));
	rp_cell(t, "%s", rp_num(f.v));
	rp_cell(t, "%s", rp_spread(isnan(u.v) ? &f : &u));
}

/* A primitive table's grid: a row per primitive id, in file order. */
static void prim_grid(const struct rp_set *s, const char *suite,
		      const char *col, struct grid *g)
{
	const struct rp_bench *b;
	char buf[160];

	rp_each(b, s, "suite=%s", suite)
		grid_add(g, rp_prim_id(b, buf, sizeof(buf)), rp_f(b, col), b);
}

static void t_prim(const struct rp_set *s)
{
	struct grid g = { 0 };
	struct rp_tab t;
	int i;

	prim_grid(s, "prim", "metric", &g);
	if (!g.n) {
		puts("\nNo primitive table: no uncontended suite (prim/...) in this set.");
		return;
	}
	title(s, "Primitives, uncontended");
	caption(s, NULL, "lat = a dependent chain, tput = independent operations on four lines, per operation",
		"min - max over the runs, and cv");
	rp_tab_init(&t, "lllrrlrrl");
	rp_row(&t, "primitive|instruction|ordering|lat (%s)|lat (ns)|lat spread|tput (%s)|tput (ns)|tput spread",
	       s->unit, s->unit);
	for (i = 0; i < g.rows.n; i++) {
		const struct rp_bench *lat = grid_get(&g, g.rows.v[i], "lat");
		const struct rp_bench *tput = grid_get(&g, g.rows.v[i], "tput");
		const struct rp_bench *id = *rp_f(lat, "insn") ? lat : tput;

		rp_cell_as(&t, 'c', g.rows.v[i]);
		if ((!lat || lat->skip) && (!tput || tput->skip)) {
			/* a variant this CPU cannot run: the row says why */
			rp_cell_as(&t, 's', (lat ? lat : tput)->skip);
			rp_cell_none(&t);
			rp_row(&t, "–|–|–|–|–|–");
			continue;
		}
		rp_cell_as(&t, 'c', rp_f(id, "insn"));
		rp_cell_as(&t, 't', rp_f(id, "ordering"));
		prim_cells(&t, s, lat);
		prim_cells(&t, s, tput);
	}
	rp_tab_print(&t);
	grid_free(&g);
}

/* ---- b. per-CPU operations ---- */

static void t_percpu(const struct rp_set *s)
{
	struct grid g = { 0 };
	const struct rp_bench *b;
	struct rp_tab t;
	char head[96];

	rp_each(b, s, "suite=percpu")
		grid_add(&g, rp_f(b, "op"), rp_f(b, "mode"), b);
	if (!g.n) {
		puts("\nNo per-CPU table: no percpu suite in this set.");
		return;
	}
	title(s, "Per-CPU operations (this_cpu_*), by per-CPU mode");
	caption(s, NULL, "per operation", "(min - max) after each figure");
	snprintf(head, sizeof(head), "op (%s)", s->unit);
	grid_fill(&t, s, &g, &g.cols, head, 'c', C_UNIT, "");
	rp_tab_print(&t);
	grid_free(&g);
}

/* ---- c. CAS success against failure ---- */

static void t_cas(const struct rp_set *s)
{
	struct grid g = { 0 };
	struct rp_tab t;
	int i;

	prim_grid(s, "cas", "outcome", &g);
	if (!g.n) {
		puts("\nNo CAS table: no casfail suite (cas/...) in this set.");
		return;
	}
	title(s, "CAS that succeeds against CAS that fails");
	caption(s, NULL, "per operation", "min - max over the runs, and cv");
	rp_tab_init(&t, "llrrrrrll");
	rp_row(&t, "primitive|instruction|success (%s)|failure (%s)|failure / success|success (ns)|failure (ns)|success spread|failure spread",
	       s->unit, s->unit);
	for (i = 0; i < g.rows.n; i++) {
		const struct rp_bench *ok = grid_get(&g, g.rows.v[i],
						     "success");
		const struct rp_bench *ko = grid_get(&g, g.rows.v[i],
						     "failure");
		struct rp_fig us, uf, ts, tf;

		rp_fig_unit(s, ok, "", &us);
		rp_fig_unit(s, ko, "", &uf);
		rp_fig(ok, "real_time", &ts);
		rp_fig(ko, "real_time", &tf);
		rp_cell_as(&t, 'c', g.rows.v[i]);
		rp_cell_as(&t, 'c', rp_f(ok ? ok : ko, "insn"));
		if (ok && ok->skip)
			skip_cell(&t, ok);
		else
			rp_cell(&t, "%s", rp_num(us.v));
		if (ko && ko->skip)
			skip_cell(&t, ko);
		else
			rp_cell(&t, "%s", rp_num(uf.v));
		rp_cell(&t, "%s", rp_num(uf.v / us.v));
		rp_cell(&t, "%s", rp_num(ts.v));
		rp_cell(&t, "%s", rp_num(tf.v));
		rp_cell(&t, "%s", rp_spread(&us));
		rp_cell(&t, "%s", rp_spread(&uf));
	}
	rp_tab_print(&t);
	grid_free(&g);
}

/* ---- d. contention ---- */

static void t_contention(const struct rp_set *s)
{
	struct rp_strs places = { 0 };
	const struct rp_bench *b;
	char key[160], tb[16];
	int k;

	rp_each(b, s, "suite=contention placement!=")
		rp_strs_add(&places, rp_f(b, "placement"));
	if (!places.n) {
		puts("\nNo contention table: no contention suite in this set.");
		return;
	}
	for (k = 0; k < places.n; k++) {
		struct grid g = { 0 };
		struct rp_tab t;
		char what[128];

		rp_each(b, s, "suite=contention placement=%s", places.v[k]) {
			snprintf(tb, sizeof(tb), "%d thr", b->threads);
			grid_add(&g, rp_prim_id(b, key, sizeof(key)), tb, b);
		}
		rp_strs_sort_num(&g.cols);
		snprintf(what, sizeof(what),
			 "Contention on one line, placement %s", places.v[k]);
		title(s, what);
		printf("Unit: Mops/s, all threads together (the ops counter / 1e6); in brackets the fairness: the cv of the per-thread operation counts (0: even). Cells: %s. Spread: run-to-run spread not shown (see compare).\n\n",
		       rp_runs(s));
		grid_fill(&t, s, &g, &g.cols, "primitive", 'c', C_OPS, NULL);
		rp_tab_print(&t);
		grid_free(&g);
	}
	rp_strs_free(&places);
}

/* ---- e. cache-line transfer ---- */

static void t_cacheline(const struct rp_set *s)
{
	struct grid g = { 0 }, ref = { 0 };
	struct rp_strs live = { 0 };
	const struct rp_bench *b;
	struct rp_tab t;
	char key[128], col[96];
	const char *pl;
	int i, j, nd = 0;

	rp_each(b, s, "suite=cacheline") {
		snprintf(key, sizeof(key), "%s/%s", rp_f(b, "state"),
			 rp_f(b, "op"));
		pl = rp_f(b, "placement");
		if (!*pl) {
			/* L1/...: the same CPU, the reference */
			grid_add(&ref, rp_f(b, "state"), rp_f(b, "op"), b);
			continue;
		}
		/* headed as a placement, not read as a statistic ("spread") */
		snprintf(col, sizeof(col), "placement: %s", pl);
		grid_add(&g, key, col, b);
		if (!b->skip)
			rp_strs_add(&live, col);
	}
	if (!g.n && !ref.n) {
		puts("\nNo cache-line table: no cacheline suite in this set.");
		return;
	}
	title(s, "Cache-line transfer: one operation on a line another CPU left in state M, E, S or I");
	caption(s, NULL, rp_timer_caption(s), "(min - max) after each figure");
	snprintf(key, sizeof(key), "state/op (%s)", s->unit);
	grid_fill(&t, s, &g, &live, key, 'c', C_TIMER, "");
	t.keep_notes = true;
	if (live.n)
		rp_tab_print(&t);
	else if (g.n)
		puts("Every placement class was skipped on this machine.");
	/* classes that never ran: one line, with the first reason */
	for (j = 0; j < g.cols.n; j++) {
		if (rp_strs_find(&live, g.cols.v[j]) >= 0)
			continue;
		for (i = 0; i < g.n; i++)
			if (!strcmp(g.v[i].c, g.cols.v[j]) && g.v[i].b->skip)
				break;
		if (i < g.n)
			printf("%s%s (%s)", nd++ ? "; " :
			       "\nPlacement classes not on this machine: ",
			       rp_md('t', g.cols.v[j] + strlen("placement: ")),
			       rp_md('t', g.v[i].b->skip));
	}
	if (nd)
		puts(".");
	rp_tab_notes(&t);
	if (ref.n) {
		printf("\nReference, the line in the same CPU's cache (cacheline/L*), %s:\n\n",
		       s->unit);
		grid_fill(&t, s, &ref, &ref.cols, "level", 0, C_TIMER, "");
		rp_tab_print(&t);
	}
	rp_strs_free(&live);
	grid_free(&g);
	grid_free(&ref);
}

/* ---- harness and cross-check ---- */

static void t_harness(const struct rp_set *s)
{
	const struct rp_bench *b;
	struct rp_tab t;
	bool any = false;

	rp_each(b, s, "suite=harness|xcheck") {
		struct rp_fig u, f;

		if (!any) {
			title(s, "Harness and cross-check");
			caption(s, NULL, "per iteration",
				"min - max over the runs, and cv");
			rp_tab_init(&t, "lrrll");
			rp_row(&t, "benchmark|%s|ns|spread|what", s->unit);
			any = true;
		}
		rp_cell_as(&t, 'c', b->name);
		if (b->skip) {
			skip_cell(&t, b);
			rp_row(&t, "–|–");
			rp_cell_none(&t);
		} else if (rp_is(b, "suite", "xcheck")) {
			/* the figures of a cross-check are its ratios */
			rp_fig(b, "ratio_suite", &u);
			rp_fig(b, "ratio_asm", &f);
			rp_row(&t, "–|–|–");
			rp_cell(&t, "ratio nolock/lock %s (suite) vs %s (asm); %s",
				rp_num(u.v), rp_num(f.v), rp_md('t', b->label));
		} else {
			rp_fig_unit(s, b, "", &u);
			rp_fig(b, "real_time", &f);
			rp_cell(&t, "%s", rp_num(u.v));
			rp_cell(&t, "%s", rp_num(f.v));
			rp_cell(&t, "%s", rp_spread(&u));
			rp_cell_as(&t, 't', b->label);
		}
	}
	if (any)
		rp_tab_print(&t);
}

/* ---- slab ---- */

/*
 * The placement class a workload's table shows: conc runs in each class
 * with --placement; "spread" (every run has it) where present, else the
 * first class found.
 */
static void pick_place(const struct rp_set *s, const char *wl, char *buf,
		       size_t n)
{
	const struct rp_bench *b;

	*buf = 0;
	rp_each(b, s, "suite=slab workload=%s", wl) {
		if (rp_is(b, "placement", "spread")) {
			snprintf(buf, n, "spread");
			return;
		}
		if (!*buf)
			snprintf(buf, n, "%s", rp_f(b, "placement"));
	}
}

/* Designs first (in the suite's order), then the system mallocs. */
static int impl_rank(const char *impl)
{
	static const char *const m[] = {
		"malloc-glibc", "malloc-tcmalloc", "malloc-jemalloc",
		"malloc-mimalloc", NULL,
	};
	int i;

	if (!rp_has_prefix(impl, "malloc-"))
		return 0;
	for (i = 0; m[i]; i++)
		if (!strcmp(impl, m[i]))
			return i + 1;
	return i + 1;
}

static void impls_sort(struct rp_strs *l)
{
	int i, j;

	/* insertion sort: stable, so designs keep the suite's order */
	for (i = 1; i < l->n; i++) {
		char *t = l->v[i];

		for (j = i; j > 0 && impl_rank(l->v[j - 1]) > impl_rank(t); j--)
			l->v[j] = l->v[j - 1];
		l->v[j] = t;
	}
}

/*
 * A grid of one slab workload: a row per value of the field row ("size",
 * "bulk", "threads"), a column per design; only the benchmarks of
 * (threads, size) where given.
 */
static void slab_grid(const struct rp_set *s, struct grid *g, const char *wl,
		      const char *row, long threads, long size)
{
	const struct rp_bench *b;
	char rb[64], place[32];

	pick_place(s, wl, place, sizeof(place));
	rp_each(b, s, "suite=slab workload=%s placement=%s", wl, place) {
		long t = b->threads > 0 ? b->threads : 1;

		if ((threads > 0 && t != threads) ||
		    (size > 0 && rp_n(b, "size") != size))
			continue;
		snprintf(rb, sizeof(rb), "%ld",
			 strcmp(row, "threads") ? rp_n(b, row) : t);
		grid_add(g, rb, rp_f(b, "design"), b);
	}
	rp_strs_sort_num(&g->rows);
	impls_sort(&g->cols);
}

/* f. seed table 1: alloc(N) and free(N) rows, every impl a column */
static void t_slab_seq(const struct rp_set *s)
{
	struct grid g = { 0 };
	struct rp_tab t;
	int i, j, k;

	slab_grid(s, &g, "seq", "size", 0, 0);
	if (!g.n) {
		puts("\nNo seed tables 1 and 2: no slab/seq rows in this set.");
		return;
	}
	title(s, "Slab, seed table 1: runs of 10000 allocations, then 10000 frees (slab/seq)");
	caption(s, NULL, rp_warm(s, "per object"),
		"(min - max) after each figure");
	grid_tab(&t, s->unit, &g.cols);
	for (i = 0; i < g.rows.n; i++)
		for (k = 0; k < 2; k++) {
			rp_cell(&t, "%s(%s)", k ? "free" : "alloc",
				g.rows.v[i]);
			for (j = 0; j < g.cols.n; j++)
				fig_cell(&t, s, grid_get(&g, g.rows.v[i],
							 g.cols.v[j]),
					 C_UNIT, k ? "free_" : "alloc_");
		}
	rp_tab_print(&t);

	/* g. seed table 2: the same in ns, "alloc / free" */
	title(s, "Slab, seed table 2: alloc / free per object, ns (slab/seq)");
	caption(s, "ns", rp_warm(s, "\"alloc / free\" per object"),
		"see table 1");
	grid_fill(&t, s, &g, &g.cols, "size (B)", 0, C_AF_NS, NULL);
	rp_tab_print(&t);
	grid_free(&g);
}

static void t_slab_pair(const struct rp_set *s)
{
	struct grid g = { 0 };
	struct rp_tab t;

	slab_grid(s, &g, "pair", "size", 0, 0);
	if (!g.n) {
		puts("\nNo pair table: no slab/pair rows in this set.");
		return;
	}
	title(s, "Slab, seed table 2 (pairs): alloc+free pairs (slab/pair)");
	caption(s, NULL, rp_warm(s, "per pair, then ns"),
		"(min - max) of the unit figure");
	grid_fill(&t, s, &g, &g.cols, "size (B)", 0, C_PAIR, NULL);
	rp_tab_print(&t);
	grid_free(&g);
}

/*
 * A table of "alloc / free" in the unit per object, or of field as it
 * is (Mobj_s), by size or thread count and impl.
 */
static void af_tab(const struct rp_set *s, const struct grid *g,
		   const char *first, const char *field)
{
	struct rp_tab t;

	grid_fill(&t, s, g, &g->cols, first, 0,
		  field ? C_FIELD : C_AF, field);
	rp_tab_print(&t);
}

/* The size the throughput lines use: 64 bytes, else the first. */
static long pick_size(const struct rp_strs *sizes)
{
	if (rp_strs_find(sizes, "64") >= 0)
		return 64;
	return sizes->n ? atol(sizes->v[0]) : -1;
}

/* h. seed table 3: concurrent */
static void t_slab_conc(const struct rp_set *s)
{
	struct grid all = { 0 }, g = { 0 }, tp = { 0 };
	long t = 0, size;
	char what[200], place[32];
	int i;

	slab_grid(s, &all, "conc", "threads", 0, 0);
	if (!all.n) {
		puts("\nNo concurrent table (seed table 3): no slab/conc rows in this set.");
		goto remote;
	}
	/* the largest thread count that fits on the PUs */
	for (i = 0; i < all.rows.n; i++) {
		long x = atol(all.rows.v[i]);

		if ((s->pus <= 0 || x <= s->pus) && x > t)
			t = x;
	}
	if (!t)
		t = atol(all.rows.v[0]);
	slab_grid(s, &g, "conc", "size", t, 0);
	pick_place(s, "conc", place, sizeof(place));
	snprintf(what, sizeof(what),
		 "Slab, seed table 3: concurrent, %ld threads (the most that fit on the %d PUs)%s%s, slab/conc",
		 t, s->pus, *place ? ", placement " : "", place);
	title(s, what);
	caption(s, NULL, rp_warm(s, "\"alloc / free\" per object per thread"),
		"not shown (see compare)");
	af_tab(s, &g, "size (B)", NULL);

	size = pick_size(&g.rows);
	slab_grid(s, &tp, "conc", "threads", 0, size);
	snprintf(what, sizeof(what),
		 "Slab, concurrent throughput by threads, %ld-byte objects (slab/conc)",
		 size);
	title(s, what);
	caption(s, "millions of objects allocated and freed per second, summed over the threads (Mobj\\_s)",
		rp_warm(s, "per thread count"), "not shown");
	af_tab(s, &tp, "threads", "Mobj_s");
	grid_free(&tp);
	grid_free(&g);
remote:
	grid_free(&all);

	/* slab_test's remote free beside it */
	slab_grid(s, &g, "remote", "size", 0, 0);
	if (!g.n) {
		puts("\nNo remote-free table: no slab/remote rows in this set.");
		return;
	}
	for (i = 0, t = 0; i < g.n; i++)
		if (g.v[i].b->threads > t)
			t = g.v[i].b->threads;
	snprintf(what, sizeof(what),
		 "Slab, remote free: each of %ld threads frees its neighbour's objects (slab/remote)",
		 t);
	title(s, what);
	caption(s, NULL, rp_warm(s, "\"alloc / free\" per object per thread"),
		"not shown (see compare)");
	af_tab(s, &g, "size (B)", NULL);
	grid_free(&g);
}

/* i. seed table 4: bulk against single calls */
static void t_slab_bulk(const struct rp_set *s)
{
	struct grid gb = { 0 }, gf = { 0 };
	struct rp_strs *impls = &gb.cols, *sizes = &gb.rows;
	struct rp_tab t;
	char cell[96];
	int i, j;

	slab_grid(s, &gb, "bulk", "bulk", 0, 0);
	slab_grid(s, &gf, "bulk_fallback", "bulk", 0, 0);
	if (!gb.n && !gf.n) {
		puts("\nNo bulk table (seed table 4): no slab/bulk rows in this set.");
		return;
	}
	/* the designs and sizes of both, in gb's lists */
	for (i = 0; i < gf.cols.n; i++)
		rp_strs_add(impls, gf.cols.v[i]);
	impls_sort(impls);
	for (i = 0; i < gf.rows.n; i++)
		rp_strs_add(sizes, gf.rows.v[i]);
	rp_strs_sort_num(sizes);

	title(s, "Slab, seed table 4: alloc_bulk + free_bulk of N 256-byte objects against single calls (slab/bulk, slab/bulk_fallback)");
	caption(s, "ns",
		rp_warm(s, "\"bulk / single calls\" ns per object, and in brackets from_cpu, the share of objects the per-CPU level served"),
		"not shown (see compare)");
	grid_tab(&t, "bulk N", impls);
	for (i = 0; i < sizes->n; i++) {
		rp_cell(&t, "%s", sizes->v[i]);
		for (j = 0; j < impls->n; j++) {
			const struct rp_bench *b = grid_get(&gb, sizes->v[i],
							    impls->v[j]);
			const struct rp_bench *f = grid_get(&gf, sizes->v[i],
							    impls->v[j]);
			struct rp_fig tb, tf, fc;
			int n;

			rp_fig(b, "real_time", &tb);
			rp_fig(f, "real_time", &tf);
			rp_fig(b, "from_cpu", &fc);
			if (b && b->skip)
				n = snprintf(cell, sizeof(cell), "n/a (%d)",
					     rp_tab_note(&t, b->skip));
			else
				n = snprintf(cell, sizeof(cell), "%s",
					     rp_num(tb.v));
			if (f && f->skip)
				n += snprintf(cell + n, sizeof(cell) - n,
					      " / n/a (%d)",
					      rp_tab_note(&t, f->skip));
			else
				n += snprintf(cell + n, sizeof(cell) - n,
					      " / %s", rp_num(tf.v));
			rp_cell(&t, "%s%s%s%s", cell, isnan(fc.v) ? "" : " (",
				isnan(fc.v) ? "" : rp_pct(fc.v),
				isnan(fc.v) ? "" : ")");
		}
	}
	rp_tab_print(&t);
	grid_free(&gb);
	grid_free(&gf);
}

/*
 * The bulk patches' table in both halves: the freelist designs on slabs
 * of 32 256-byte objects, with the cpu_partial knob at 0 and at its
 * default; then where each bulk call's objects came from.
 */
static void t_slab_bulk_cpu_partial(const struct rp_set *s)
{
	static const char *const lv[] = {
		"from_cpu", "from_cpu_partial", "from_node", "from_new",
	};
	struct grid gb = { 0 }, gf = { 0 };
	const struct rp_bench *b;
	struct rp_tab t;
	char col[96], cell[160], place[32];
	int i, j, k, n;

	pick_place(s, "bulk_cpu_partial", place, sizeof(place));
	rp_each(b, s, "suite=slab workload=bulk_cpu_partial placement=%s",
		place) {
		snprintf(col, sizeof(col), "%s, cpu_partial %s",
			 rp_f(b, "design"), rp_f(b, "cpu_partial"));
		snprintf(cell, sizeof(cell), "%ld", rp_n(b, "bulk"));
		grid_add(&gb, cell, col, b);
	}
	rp_each(b, s,
		"suite=slab workload=bulk_cpu_partial_fallback placement=%s",
		place) {
		snprintf(col, sizeof(col), "%s, cpu_partial %s",
			 rp_f(b, "design"), rp_f(b, "cpu_partial"));
		snprintf(cell, sizeof(cell), "%ld", rp_n(b, "bulk"));
		grid_add(&gf, cell, col, b);
	}
	if (!gb.n && !gf.n) {
		puts("\nNo bulk table with per-CPU partial slabs: no slab/bulk_cpu_partial rows in this set.");
		return;
	}
	for (i = 0; i < gf.cols.n; i++)
		rp_strs_add(&gb.cols, gf.cols.v[i]);
	for (i = 0; i < gf.rows.n; i++)
		rp_strs_add(&gb.rows, gf.rows.v[i]);
	rp_strs_sort_num(&gb.rows);

	title(s, "Slab, bulk allocation without and with per-CPU partial slabs: alloc_bulk + free_bulk of N 256-byte objects, 32 per slab, against single calls (slab/bulk_cpu_partial, ..._fallback)");
	caption(s, "ns",
		rp_warm(s, "\"bulk / single calls\" ns per object"),
		"not shown (see compare)");
	grid_tab(&t, "bulk N", &gb.cols);
	for (i = 0; i < gb.rows.n; i++) {
		rp_cell(&t, "%s", gb.rows.v[i]);
		for (j = 0; j < gb.cols.n; j++) {
			const struct rp_bench *x = grid_get(&gb, gb.rows.v[i],
							    gb.cols.v[j]);
			const struct rp_bench *f = grid_get(&gf, gb.rows.v[i],
							    gb.cols.v[j]);
			struct rp_fig tb, tf;

			rp_fig(x, "real_time", &tb);
			rp_fig(f, "real_time", &tf);
			rp_cell(&t, "%s / %s", x && x->skip ? "n/a" : rp_num(tb.v),
				f && f->skip ? "n/a" : rp_num(tf.v));
		}
	}
	rp_tab_print(&t);

	title(s, "Slab, where bulk allocation's objects came from, without and with per-CPU partial slabs (slab/bulk_cpu_partial)");
	caption(s, "share of the objects of the bulk calls",
		"\"CPU slab / CPU partial / node partial / new slab\", counted on an untimed twin cache with statistics after as many calls to warm it",
		"none (counts)");
	grid_tab(&t, "bulk N", &gb.cols);
	for (i = 0; i < gb.rows.n; i++) {
		rp_cell(&t, "%s", gb.rows.v[i]);
		for (j = 0; j < gb.cols.n; j++) {
			const struct rp_bench *x = grid_get(&gb, gb.rows.v[i],
							    gb.cols.v[j]);

			for (k = 0, n = 0; k < 4; k++) {
				struct rp_fig fc;

				rp_fig(x, lv[k], &fc);
				n += snprintf(cell + n, sizeof(cell) - n,
					      "%s%s", k ? " / " : "",
					      isnan(fc.v) ? "–" : rp_pct(fc.v));
			}
			rp_cell(&t, "%s", cell);
		}
	}
	rp_tab_print(&t);
	grid_free(&gb);
	grid_free(&gf);
}

/* j. beside the system allocators, at 64 bytes */
static void t_slab_beside(const struct rp_set *s)
{
	struct grid g = { 0 };
	struct rp_fig gp, gs;
	struct rp_tab t;
	int i;

	slab_grid(s, &g, "pair", "size", 0, 64);
	slab_grid(s, &g, "seq", "size", 0, 64);
	if (!g.n) {
		puts("\nNo table beside the system allocators: no slab rows at 64 bytes in this set.");
		return;
	}
	rp_fig_unit(s, rp_slab(s, "pair", "malloc-glibc", 64), "", &gp);
	rp_fig_unit(s, rp_slab(s, "seq", "malloc-glibc", 64), "", &gs);
	title(s, "Slab beside the system allocators, 64-byte objects");
	caption(s, NULL,
		rp_warm(s, "slab/pair per alloc+free pair; slab/seq alloc+free per object; ratios to malloc-glibc (below 1: cheaper)"),
		"min - max of the pair figure");
	rp_tab_init(&t, "lrrlrrrr");
	rp_row(&t, "impl|pair (%s)|pair (ns)|pair spread|pair / glibc|seq alloc+free (%s)|seq (ns)|seq / glibc",
	       s->unit, s->unit);
	for (i = 0; i < g.cols.n; i++) {
		const struct rp_bench *p = rp_slab(s, "pair", g.cols.v[i], 64);
		const struct rp_bench *q = rp_slab(s, "seq", g.cols.v[i], 64);
		struct rp_fig pu, pt, qu, qt;

		rp_fig_unit(s, p, "", &pu);
		rp_fig(p, "real_time", &pt);
		rp_fig_unit(s, q, "", &qu);
		rp_fig(q, "real_time", &qt);
		rp_cell_as(&t, 't', g.cols.v[i]);
		rp_cell(&t, "%s", p && p->skip ? "skipped" : rp_num(pu.v));
		rp_cell(&t, "%s", rp_num(pt.v));
		rp_cell(&t, "%s", rp_spread(&pu));
		rp_cell(&t, "%s", rp_num(pu.v / gp.v));
		rp_cell(&t, "%s", q && q->skip ? "skipped" : rp_num(qu.v));
		rp_cell(&t, "%s", rp_num(qt.v));
		rp_cell(&t, "%s", rp_num(qu.v / gs.v));
	}
	rp_tab_print(&t);
	grid_free(&g);
}

static void t_slab(const struct rp_set *s)
{
	if (!rp_find(s, "suite=slab")) {
		puts("\nNo slab tables (seed tables 1 to 4, beside the system allocators, targets): no slab suite in this set.");
		return;
	}
	t_slab_seq(s);
	rp_slab_seq_gap(s);
	rp_slab_cold(s);
	t_slab_pair(s);
	rp_slab_decomp(s);
	t_slab_conc(s);
	t_slab_bulk(s);
	t_slab_bulk_cpu_partial(s);
	t_slab_beside(s);
	rp_slab_targets(s);
}

int cmd_tables(int argc, char **argv)
{
	int i, usable = 0;

	for (i = 0; i < argc; i++) {
		struct rp_set *s = rp_set_load(argv[i]);

		if (s->usable) {
			if (usable++)
				putchar('\n');
			rp_set_header(s, 2);
			t_prim(s);
			t_percpu(s);
			rp_percpu_decomp(s);
			t_cas(s);
			t_contention(s);
			t_cacheline(s);
			t_harness(s);
			t_slab(s);
			rp_macro_tables(s);
		}
		rp_set_free(s);
	}
	return rp_exit_status(usable);
}
