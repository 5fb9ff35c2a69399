/* SPDX-License-Identifier: MIT */
/*
 * atomkit-report: reads the result sets scripts/run-bench writes
 * (results/<arch>/<machine>/<date>-<rev>/) and renders them as Markdown.
 *
 *   main.c     the command line, `check`, the exit statuses
 *   load.c     reading and validating a set; figures (median, spread);
 *              the noise rule; number and Markdown formatting
 *   tables.c   `tables`: the per-set tables
 *   select.c   `select` (the primitive-selection report) and `index`
 *   compare.c  `compare A B`
 *   plot.c     `plot`: gnuplot scripts, data and SVGs
 *   honest.c   warm and cold slab figures, what a design costs beyond its
 *              primitive, the targets, timer-corrected cache lines
 *   macro.c    the whole programs: macro.json, its tables, plots and
 *              its line in `select`
 *
 * doc/report.md describes what each subcommand prints and how each figure
 * is chosen.  Every figure comes from the files: nothing here invents or
 * adjusts one.
 */
#ifndef RP_REPORT_H
#define RP_REPORT_H

#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* configure's gnuplot, on the compiler command line; "" if none */
#ifndef AK_GNUPLOT
#define AK_GNUPLOT ""
#endif

/* The machine.json schema this program reads (ak_schema). */
#define RP_SCHEMA		"1"

/* Exit statuses: doc/report.md and --help describe them. */
#define RP_EXIT_OK		0	/* every input read */
#define RP_EXIT_PROBLEMS	1	/* something rejected, rest rendered */
#define RP_EXIT_USAGE		2	/* bad command line */
#define RP_EXIT_NOTHING		3	/* nothing usable to render */

/* A list of owned strings, kept in insertion order, without duplicates. */
struct rp_strs {
	char **v;
	int n, cap;
};

/* One benchmark: every row Google Benchmark wrote for one run_name. */
struct rp_bench {
	const char *name;	/* run_name; borrowed from the suite's JSON */
	const char *label;	/* "" when none */
	const char *skip;	/* a skipped run's error_message, or NULL */
	const char *suite;	/* the file stem, e.g. "slab-tcmalloc" */
	json_t *id;		/* its first row: the ak_* identity fields */
	int threads;
	int reps;		/* "repetitions" */
	json_t *median;		/* the median aggregate row, or NULL */
	json_t *cv;		/* the cv aggregate row, or NULL */
	json_t **iter;		/* the iteration rows */
	int nr_iter;
};

/* One <suite>.json file of a set. */
struct rp_suite {
	char *name;		/* the stem */
	json_t *root;		/* owned; the benchmarks borrow from it */
	int nr_bench;
};

struct rp_set {
	char *path;		/* as given, without trailing slashes */
	json_t *machine;	/* machine.json, or NULL */
	char *schema;		/* its ak_schema, or NULL */
	bool usable;		/* figures may be drawn from it */
	char *why;		/* why not, or the first problem found */
	int nr_problems;
	bool emulated;
	int pus;		/* ak_pus, 0 if unknown */
	int reps;		/* the most repetitions any benchmark had */
	const char *counter;	/* ak_counter, e.g. "tsc_ticks"; "" if none */
	char unit[64];		/* short unit for headers: "TSC ticks" */

	struct rp_suite *suites;
	int nr_suites;
	struct rp_strs missing;	/* suites ak_suites names, without a file */

	struct rp_bench *bench;	/* in file order */
	int nr_bench, cap_bench;
	json_t *index;		/* run_name -> index in bench */

	json_t *macro;		/* macro.json, validated (macro.c); or NULL */
	bool macro_damaged;	/* it was there and was left out */
};

/* A figure of one benchmark: its median and the spread over the runs. */
struct rp_fig {
	double v;		/* median aggregate, or the single run */
	double cv;		/* cv aggregate (a fraction), NAN if none */
	double min, max;	/* over the iteration rows */
	int n;			/* iteration rows that had the field */
	int reps;		/* the benchmark's repetitions */
};

/* Verdicts of the noise rule. */
enum rp_noise {
	RP_DISTINCT,		/* the difference is beyond the spreads */
	RP_NOISE,		/* within the spreads */
	RP_UNJUDGED,		/* single runs: no spread to judge by */
};

/* load.c */
extern int rp_nr_problems;
void rp_problem(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void rp_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *rp_alloc(size_t n);
void *rp_realloc(void *p, size_t n);
char *rp_strdup(const char *s);
char *rp_asprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

const char *rp_strs_add(struct rp_strs *l, const char *s);
int rp_strs_find(const struct rp_strs *l, const char *s);
void rp_strs_sort_num(struct rp_strs *l);
void rp_strs_free(struct rp_strs *l);

struct rp_set *rp_set_load(const char *path);
void rp_set_free(struct rp_set *s);
const char *rp_mach(const struct rp_set *s, const char *key);
const char *rp_machine_name(const struct rp_set *s);
const char *rp_set_name(const struct rp_set *s);
const char *rp_why(const struct rp_set *s);
int rp_exit_status(int nr_usable);

const struct rp_bench *rp_named(const struct rp_set *s, const char *name);
bool rp_fig(const struct rp_bench *b, const char *field, struct rp_fig *f);
bool rp_fig_unit(const struct rp_set *s, const struct rp_bench *b,
		 const char *prefix, struct rp_fig *f);
void rp_fig_scale(struct rp_fig *f, double k);
void rp_fig_add(struct rp_fig *f, const struct rp_fig *g);
enum rp_noise rp_noise(const struct rp_fig *a, const struct rp_fig *b);

bool rp_has_prefix(const char *s, const char *prefix);
const char *rp_f(const struct rp_bench *b, const char *key);
long rp_n(const struct rp_bench *b, const char *key);
bool rp_is(const struct rp_bench *b, const char *key, const char *val);
const struct rp_bench *rp_next(const struct rp_set *s,
			       const struct rp_bench *after,
			       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define rp_find(s, ...)	rp_next(s, NULL, __VA_ARGS__)
/* the slab benchmark of workload wl and design d at size v */
#define rp_slab(s, wl, d, v)						\
	rp_find(s, "suite=slab workload=%s design=%s size=%ld", wl, d,	\
		(long)(v))
/* for each benchmark b of set s that matches the filter */
#define rp_each(b, s, ...)	\
	for ((b) = NULL; ((b) = rp_next(s, b, __VA_ARGS__)); )
const char *rp_best(const struct rp_set *s, const char *wl, const char *arg,
		    long v, const char *prefix, bool mallocs,
		    struct rp_fig *best);
const char *rp_path_comp(const char *path, int up, char *buf, size_t n);
const char *rp_prim_id(const struct rp_bench *b, char *buf, size_t n);

const char *rp_num(double v);
const char *rp_count(double v);
const char *rp_pct(double frac);
const char *rp_spread(const struct rp_fig *f);
const char *rp_range(const struct rp_fig *f);
const char *rp_runs(const struct rp_set *s);
/* Output: Markdown (the default) or plain text, --format=text. */
enum rp_format { RP_MD, RP_TEXT };
extern enum rp_format rp_format;
bool rp_set_format(const char *name);

/*
 * A table: cells row by row, the first row the header; the notes under
 * it, numbered: skip reasons, and in text mode the cells too long for
 * the line.
 */
struct rp_tab {
	char align[32];		/* per column: 'l' text, 'r' figures;
				 * the last for any columns after */
	int ncol;
	char **c;		/* NULL: rp_cell_none() */
	int n, cap;
	struct rp_strs notes;
	bool keep_notes;	/* rp_tab_notes() comes later */
};
void rp_tab_init(struct rp_tab *t, const char *align);
void rp_cell(struct rp_tab *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rp_row(struct rp_tab *t, const char *fmt, ...);
void rp_cell_as(struct rp_tab *t, char kind, const char *s);
void rp_cell_none(struct rp_tab *t);
int rp_tab_note(struct rp_tab *t, const char *text);
void rp_tab_print(struct rp_tab *t);
void rp_tab_notes(struct rp_tab *t);

const char *rp_md(char kind, const char *s);
void md_text(const char *s);
/* bold in Markdown, nothing in text (where the filter would not see it) */
#define RP_B	(rp_format == RP_MD ? "**" : "")

/* tables.c */
int cmd_tables(int argc, char **argv);
void rp_set_header(const struct rp_set *s, int level);
void rp_head(const struct rp_set *s, const char *what, const char *unit,
	     const char *cells, const char *spread);

/* select.c */
int cmd_select(int argc, char **argv);
int cmd_index(int argc, char **argv);

/* compare.c */
int cmd_compare(int argc, char **argv);

/* plot.c */
int cmd_plot(int argc, char **argv, const char *outdir);
/* for the plots of other files: a data file in OUTDIR, and a plot */
struct plots;
FILE *rp_plot_file(struct plots *pl, const char *name);
bool rp_plot_file_done(struct plots *pl, FILE *f, const char *name);
FILE *rp_plot_begin(struct plots *pl, const char *svg, const char *title);

/* load.c, for the files a set holds besides its suites (macro.c) */
void rp_set_problem(struct rp_set *s, const char *msg);
const char *rp_jtype(const json_t *j);

/*
 * honest.c: issue 14's figures, beside the slab tables of tables.c:
 * rp_warm() starts their captions (whether the figures are warm, then
 * what the cells hold); under seed table 1, the seq figures at the large
 * sizes against the best system allocator's, with what the set shows
 * about a gap over 2x; the cold start (slab/seq_cold); what each design's
 * pair costs beyond the per-CPU primitive its fastpath runs; the
 * targets.  And the cache-line cells: raw - timer_ticks.
 */
const char *rp_warm(const struct rp_set *s, const char *cells);
void rp_slab_seq_gap(const struct rp_set *s);
void rp_slab_cold(const struct rp_set *s);
void rp_slab_decomp(const struct rp_set *s);
void rp_percpu_decomp(const struct rp_set *s);
void rp_slab_targets(const struct rp_set *s);
void rp_goal_row(struct rp_tab *t, const char *what, const char *figs,
		 double ratio, double goal, bool at_most, const char *why,
		 const char *expect);
const char *rp_timer_caption(const struct rp_set *s);
void rp_timer_cell(struct rp_tab *t, const struct rp_set *s,
		   const struct rp_bench *b);

/*
 * macro.c: the whole programs, macro.json of scripts/run-macro
 * (doc/benchmarks.md, "macro.json").  rp_macro_load() reads and checks
 * it while the set loads (false: there is no such file); the rest render
 * it in `tables`, `plot` and `select`.
 */
#define RP_MACRO_FILE	"macro.json"
/* the layout it writes now; version 1, before the counters, is read too */
#define RP_MACRO_SCHEMA	"2"
bool rp_macro_load(struct rp_set *s);
void rp_macro_check(const struct rp_set *s);
void rp_macro_tables(const struct rp_set *s);
void rp_macro_plot(struct plots *pl, const struct rp_set *s,
		   const char *tag);
void rp_macro_select(const struct rp_set *s);
void rp_macro_select_row(struct rp_tab *t, struct rp_set *const *sets,
			 int n);

#endif /* ATOMKIT_REPORT_H */
