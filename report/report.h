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
 *
 * doc/report.md describes what each subcommand prints and how each figure
 * is chosen.  Every figure comes from the files: nothing here invents or
 * adjusts one.
 */
#ifndef ATOMKIT_REPORT_H
#define ATOMKIT_REPORT_H

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
#define AK_SCHEMA		"1"

/* Exit statuses: doc/report.md and --help describe them. */
#define AK_EXIT_OK		0	/* every input read */
#define AK_EXIT_PROBLEMS	1	/* something rejected, rest rendered */
#define AK_EXIT_USAGE		2	/* bad command line */
#define AK_EXIT_NOTHING		3	/* nothing usable to render */

/* A list of owned strings, kept in insertion order, without duplicates. */
struct ak_strs {
	char **v;
	int n, cap;
};

/* One benchmark: every row Google Benchmark wrote for one run_name. */
struct ak_bench {
	const char *name;	/* run_name; borrowed from the suite's JSON */
	const char *label;	/* "" when none */
	const char *skip;	/* a skipped run's error_message, or NULL */
	const char *suite;	/* the file stem, e.g. "slab-tcmalloc" */
	int threads;
	int reps;		/* "repetitions" */
	json_t *median;		/* the median aggregate row, or NULL */
	json_t *cv;		/* the cv aggregate row, or NULL */
	json_t **iter;		/* the iteration rows */
	int nr_iter;
};

/* One <suite>.json file of a set. */
struct ak_suite {
	char *name;		/* the stem */
	json_t *root;		/* owned; the benchmarks borrow from it */
	int nr_bench;
};

struct ak_set {
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

	struct ak_suite *suites;
	int nr_suites;
	struct ak_strs missing;	/* suites ak_suites names, without a file */

	struct ak_bench *bench;	/* in file order */
	int nr_bench, cap_bench;
	int *hash;		/* open addressing: index + 1, 0 empty */
	int hash_cap;
};

/* A figure of one benchmark: its median and the spread over the runs. */
struct ak_fig {
	double v;		/* median aggregate, or the single run */
	double cv;		/* cv aggregate (a fraction), NAN if none */
	double min, max;	/* over the iteration rows */
	int n;			/* iteration rows that had the field */
	int reps;		/* the benchmark's repetitions */
};

/* Verdicts of the noise rule. */
enum ak_noise {
	AK_DISTINCT,		/* the difference is beyond the spreads */
	AK_NOISE,		/* within the spreads */
	AK_UNJUDGED,		/* single runs: no spread to judge by */
};

/* load.c */
extern int ak_nr_problems;
void ak_problem(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void ak_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *ak_alloc(size_t n);
void *ak_realloc(void *p, size_t n);
char *ak_strdup(const char *s);
char *ak_asprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

const char *ak_strs_add(struct ak_strs *l, const char *s);
int ak_strs_find(const struct ak_strs *l, const char *s);
void ak_strs_sort_num(struct ak_strs *l);
void ak_strs_free(struct ak_strs *l);

struct ak_set *ak_set_load(const char *path);
void ak_set_free(struct ak_set *s);
const char *ak_mach(const struct ak_set *s, const char *key);
const char *ak_machine_name(const struct ak_set *s);
const char *ak_set_name(const struct ak_set *s);
const char *ak_why(const struct ak_set *s);
int ak_exit_status(int nr_usable);

const struct ak_bench *ak_find(const struct ak_set *s, const char *name);
const struct ak_bench *ak_findf(const struct ak_set *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool ak_fig(const struct ak_bench *b, const char *field, struct ak_fig *f);
bool ak_fig_unit(const struct ak_set *s, const struct ak_bench *b,
		 const char *prefix, struct ak_fig *f);
void ak_fig_scale(struct ak_fig *f, double k);
void ak_fig_add(struct ak_fig *f, const struct ak_fig *g);
enum ak_noise ak_noise(const struct ak_fig *a, const struct ak_fig *b);

bool ak_has_prefix(const char *s, const char *prefix);
int ak_split(const char *s, char *buf, size_t size, const char **part,
	     int max);
const char *ak_param(const char *const *part, int n, const char *key);
bool ak_ordering(const char *label, char *buf, size_t size);
bool ak_instruction(const char *label, char *buf, size_t size);

const char *ak_num(double v);
const char *ak_pct(double frac);
const char *ak_spread(const struct ak_fig *f);
const char *ak_range(const struct ak_fig *f);
const char *ak_runs(const struct ak_set *s);
void md_text(const char *s);
void md_code(const char *s);
void md_skip(const char *why);

/* tables.c */
int cmd_tables(int argc, char **argv);
void ak_set_header(const struct ak_set *s, int level);

/* select.c */
int cmd_select(int argc, char **argv);
int cmd_index(int argc, char **argv);

/* compare.c */
int cmd_compare(int argc, char **argv);

/* plot.c */
int cmd_plot(int argc, char **argv, const char *outdir);

#endif /* ATOMKIT_REPORT_H */
