// SPDX-License-Identifier: MIT
/*
 * Reading a result set: machine.json and every <suite>.json, validated as
 * they are read.  A problem is reported on stderr, one line naming the file,
 * and the rest is still read: one truncated suite must not hide the seven
 * good ones.  Also the figures (median and spread) every subcommand shares,
 * the noise rule, and the number and Markdown formatting.
 */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int rp_nr_problems;

static void vmsg(const char *fmt, va_list ap)
{
	/* stdout first, so that a terminal shows both in order */
	fflush(stdout);
	fputs("atomkit-report: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void rp_problem(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	rp_nr_problems++;
}

/* A message that is not a problem with the input (exit status unchanged). */
void rp_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

/* Out of memory is not worth a recovery path: exit as for no input. */
static void *or_die(void *p)
{
	if (!p) {
		fputs("atomkit-report: out of memory\n", stderr);
		exit(RP_EXIT_NOTHING);
	}
	return p;
}

void *rp_alloc(size_t n)
{
	return or_die(calloc(1, n ? n : 1));
}

void *rp_realloc(void *p, size_t n)
{
	return or_die(realloc(p, n ? n : 1));
}

char *rp_strdup(const char *s)
{
	return or_die(strdup(s));
}

static char *vasprintf_or_die(const char *fmt, va_list ap)
{
	char *p;

	return or_die(vasprintf(&p, fmt, ap) < 0 ? NULL : p);
}

char *rp_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = vasprintf_or_die(fmt, ap);
	va_end(ap);
	return p;
}

/* ---- string lists ---- */

int rp_strs_find(const struct rp_strs *l, const char *s)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return i;
	return -1;
}

/* Adds s unless present; returns the stored copy, stable until freed. */
const char *rp_strs_add(struct rp_strs *l, const char *s)
{
	int i = rp_strs_find(l, s);

	if (i >= 0)
		return l->v[i];
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = rp_realloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n] = rp_strdup(s);
	return l->v[l->n++];
}

static int cmp_num(const void *a, const void *b)
{
	double x = strtod(*(char *const *)a, NULL);
	double y = strtod(*(char *const *)b, NULL);

	return x < y ? -1 : x > y;
}

/* Sizes, thread counts and batch sizes sort as numbers, not as text. */
void rp_strs_sort_num(struct rp_strs *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_num);
}

void rp_strs_free(struct rp_strs *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- problems of one set ---- */

/*
 * A problem of set s, reported and counted; a rejection (the set is not
 * used at all) replaces the reason kept for `check` and `index`, any
 * other problem only fills it if empty.
 */
static void set_msg(struct rp_set *s, bool reject, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_msg(struct rp_set *s, bool reject, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = vasprintf_or_die(fmt, ap);
	va_end(ap);
	rp_problem("%s", msg);
	s->nr_problems++;
	if (reject) {
		s->usable = false;
		free(s->why);
		s->why = msg;
	} else if (!s->why) {
		s->why = msg;
	} else {
		free(msg);
	}
}

#define set_problem(s, ...)	set_msg(s, false, __VA_ARGS__)
#define set_reject(s, ...)	set_msg(s, true, __VA_ARGS__)

void rp_set_problem(struct rp_set *s, const char *msg)
{
	set_problem(s, "%s", msg);
}

static const char *jtype(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "something else";
}

const char *rp_jtype(const json_t *j)
{
	return jtype(j);
}

/*
 * Google Benchmark writes an undefined value (the cv of a counter whose
 * mean is 0) as a bare NaN or Infinity, which is not JSON.  Such a file is
 * what the tool wrote, not a damaged one: read it again with those tokens,
 * outside strings, as null.  Returns NULL when there were none.
 */
static char *unbare_nan(const char *path, size_t *len)
{
	static const char *const tok[] = {
		"-Infinity", "Infinity", "-NaN", "NaN", "-nan", "nan",
	};
	size_t size = 0, n = 0, i, k, cap;
	bool in_str = false, esc = false, changed = false;
	char *in = NULL, *out;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	for (;;) {
		size_t got;

		in = rp_realloc(in, size + 65536);
		got = fread(in + size, 1, 65536, f);
		size += got;
		if (got < 65536)
			break;
	}
	fclose(f);
	cap = 2 * size + 1;
	out = rp_alloc(cap);
	for (i = 0; i < size; ) {
		char c = in[i];

		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			out[n++] = in[i++];
			continue;
		}
		if (c == '"') {
			in_str = true;
			out[n++] = in[i++];
			continue;
		}
		for (k = 0; k < sizeof(tok) / sizeof(tok[0]); k++) {
			size_t l = strlen(tok[k]);

			if (size - i >= l && !memcmp(in + i, tok[k], l))
				break;
		}
		if (k < sizeof(tok) / sizeof(tok[0])) {
			memcpy(out + n, "null", 4);
			n += 4;
			i += strlen(tok[k]);
			changed = true;
			continue;
		}
		out[n++] = in[i++];
	}
	free(in);
	if (!changed) {
		free(out);
		return NULL;
	}
	*len = n;
	return out;
}

/* Parses one file; a file that does not parse is reported and NULL. */
static json_t *load_json(struct rp_set *s, const char *path)
{
	json_error_t err, err2;
	json_t *j;
	char *text;
	size_t len;

	j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (j)
		return j;
	if (json_error_code(&err) == json_error_cannot_open_file) {
		/* err.text: "unable to open <path>: <strerror>" */
		const char *why = strrchr(err.text, ':');

		set_problem(s, "%s: cannot read: %s", path,
			    why ? why + 2 : err.text);
		return NULL;
	}
	text = unbare_nan(path, &len);
	if (text) {
		j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err2);
		free(text);
		if (j)
			return j;
	}
	set_problem(s, "%s: not valid JSON at line %d, column %d: %s%s", path,
		    err.line, err.column, err.text,
		    json_error_code(&err) == json_error_premature_end_of_input ?
		    " (truncated?)" : "");
	return NULL;
}

/* ---- benchmarks by name ---- */

static struct rp_bench *bench_new(struct rp_set *s, const char *name)
{
	struct rp_bench *b;

	if (s->nr_bench == s->cap_bench) {
		s->cap_bench = s->cap_bench ? 2 * s->cap_bench : 256;
		s->bench = rp_realloc(s->bench,
				      s->cap_bench * sizeof(*s->bench));
	}
	/* jansson's hash table: run_name -> index */
	json_object_set_new(s->index, name, json_integer(s->nr_bench));
	b = &s->bench[s->nr_bench++];
	memset(b, 0, sizeof(*b));
	b->name = name;
	b->label = "";
	return b;
}

static int bench_index(const struct rp_set *s, const char *name)
{
	json_t *i = json_object_get(s->index, name);

	return i ? (int)json_integer_value(i) : -1;
}

const struct rp_bench *rp_named(const struct rp_set *s, const char *name)
{
	int i = bench_index(s, name);

	return i < 0 ? NULL : &s->bench[i];
}

/*
 * The kind of a row's field: 's' a string (Google Benchmark's names and
 * the identity fields atomkit-bench writes, doc/benchmarks.md: the parts
 * of the name, so that no name is split), 'n' an integer identity field,
 * 0 any other.
 */
static char field_kind(const char *key)
{
	static const char str[] = " name run_name run_type aggregate_name"
		" aggregate_unit time_unit label error_message ak_suite"
		" ak_arch ak_op ak_variant ak_ordering ak_insn ak_metric"
		" ak_outcome ak_state ak_placement ak_mode ak_workload"
		" ak_design ak_cpu_partial ", num[] = " ak_width ak_size ak_bulk ";
	char k[64];

	if (strlen(key) > 32 || strchr(key, ' '))
		return 0;
	snprintf(k, sizeof(k), " %s ", key);
	return strstr(str, k) ? 's' : strstr(num, k) ? 'n' : 0;
}

/*
 * Checks the type of every field of one row; a field of the wrong type is
 * reported and dropped, so that no figure is ever read from it.  Returns
 * false when the row cannot be placed at all (no name).
 */
static bool check_row(struct rp_set *s, const char *path, size_t i,
		      json_t *row)
{
	bool had_name, had_time;
	const char *key;
	json_t *v;
	void *tmp;

	if (!json_is_object(row)) {
		set_problem(s, "%s: benchmarks[%zu]: expected an object, found %s",
			    path, i, jtype(row));
		return false;
	}
	had_name = json_object_get(row, "name");
	had_time = json_object_get(row, "real_time");
	json_object_foreach_safe(row, tmp, key, v) {
		const char *want = NULL;
		char kind = field_kind(key);

		if (kind == 's') {
			if (!json_is_string(v))
				want = "a string";
		} else if (kind == 'n') {
			if (!json_is_integer(v))
				want = "an integer";
		} else if (rp_has_prefix(key, "ak_")) {
			set_problem(s, "%s: benchmarks[%zu].%s: not a field atomkit-bench writes: ignored",
				    path, i, key);
			json_object_del(row, key);
			continue;
		} else if (!strcmp(key, "error_occurred")) {
			if (!json_is_boolean(v))
				want = "a boolean";
		} else if (!json_is_number(v) && !json_is_null(v)) {
			/* times, counts and user counters are numbers
			 * (null: a NaN Google Benchmark wrote, see above) */
			want = "a number";
		}
		if (want) {
			set_problem(s, "%s: benchmarks[%zu].%s: expected %s, found %s",
				    path, i, key, want, jtype(v));
			json_object_del(row, key);
		}
	}
	if (!had_name)
		set_problem(s, "%s: benchmarks[%zu]: no name: row left out",
			    path, i);
	if (!json_object_get(row, "name"))
		return false;
	if (!json_is_string(json_object_get(row, "ak_suite"))) {
		set_problem(s, "%s: benchmarks[%zu]: no ak_suite: row left out (written before atomkit-bench labelled its results? scripts/label-results adds the fields)",
			    path, i);
		return false;
	}
	/* an iteration that ran has a time; one that was skipped need not */
	if (!had_time && !json_is_true(json_object_get(row, "error_occurred")) &&
	    !json_object_get(row, "aggregate_name"))
		set_problem(s, "%s: benchmarks[%zu].real_time: missing", path,
			    i);
	return true;
}

static const char *row_str(json_t *row, const char *key)
{
	return json_string_value(json_object_get(row, key));
}

static void add_row(struct rp_set *s, struct rp_suite *su, const char *path,
		    size_t i, json_t *row)
{
	const char *name = row_str(row, "name");
	const char *run = row_str(row, "run_name");
	const char *type = row_str(row, "run_type");
	const char *agg = row_str(row, "aggregate_name");
	const char *label = row_str(row, "label");
	json_t *err = json_object_get(row, "error_occurred");
	struct rp_bench *b;
	int idx;

	if (!type)
		type = "iteration";
	if (strcmp(type, "iteration") && strcmp(type, "aggregate")) {
		set_problem(s, "%s: benchmarks[%zu].run_type: \"%s\" is neither iteration nor aggregate: row left out",
			    path, i, type);
		return;
	}
	if (!strcmp(type, "aggregate") && !agg) {
		set_problem(s, "%s: benchmarks[%zu]: an aggregate without aggregate_name: row left out",
			    path, i);
		return;
	}
	if (!run) {
		/* 1.7.1 always writes run_name: an older writer, tolerated */
		run = name;
	}
	idx = bench_index(s, run);
	if (idx < 0) {
		b = bench_new(s, run);
		b->id = row;
		b->suite = su->name;
		su->nr_bench++;
	} else {
		b = &s->bench[idx];
		if (b->suite != su->name) {
			set_problem(s, "%s: %s is also in %s.json: kept that one",
				    path, run, b->suite);
			return;
		}
	}
	if (label && *label && !*b->label)
		b->label = label;
	if (json_is_integer(json_object_get(row, "threads")) && !b->threads)
		b->threads = json_integer_value(json_object_get(row,
								"threads"));
	if (json_is_integer(json_object_get(row, "repetitions")) &&
	    json_integer_value(json_object_get(row, "repetitions")) > b->reps)
		b->reps = json_integer_value(json_object_get(row,
							     "repetitions"));
	if (b->reps > s->reps)
		s->reps = b->reps;
	if (json_is_true(err)) {
		const char *why = row_str(row, "error_message");

		b->skip = why && *why ? why : "skipped (no reason given)";
		return;
	}
	if (!strcmp(type, "aggregate")) {
		if (!strcmp(agg, "median"))
			b->median = row;
		else if (!strcmp(agg, "cv"))
			b->cv = row;
		return;
	}
	b->iter = rp_realloc(b->iter, (b->nr_iter + 1) * sizeof(*b->iter));
	b->iter[b->nr_iter++] = row;
}

static void load_suite(struct rp_set *s, const char *stem)
{
	char *path = rp_asprintf("%s/%s.json", s->path, stem);
	struct rp_suite *su;
	json_t *root, *ctx, *arr, *v;
	size_t i;

	root = load_json(s, path);
	if (!root)
		goto out;
	if (!json_is_object(root)) {
		set_problem(s, "%s: expected an object at the top, found %s",
			    path, jtype(root));
		json_decref(root);
		goto out;
	}
	s->suites = rp_realloc(s->suites,
			       (s->nr_suites + 1) * sizeof(*s->suites));
	su = &s->suites[s->nr_suites++];
	su->name = rp_strdup(stem);
	su->root = root;
	su->nr_bench = 0;

	ctx = json_object_get(root, "context");
	if (!ctx) {
		set_problem(s, "%s: context: missing", path);
	} else if (!json_is_object(ctx)) {
		set_problem(s, "%s: context: expected an object, found %s",
			    path, jtype(ctx));
	} else {
		/* a file in another unit would be mislabelled */
		v = json_object_get(ctx, "ak_counter");
		if (v && !json_is_string(v))
			set_problem(s, "%s: context.ak_counter: expected a string, found %s",
				    path, jtype(v));
		else if (v && *s->counter &&
			 strcmp(json_string_value(v), s->counter))
			set_problem(s, "%s: context.ak_counter is \"%s\" but machine.json says \"%s\": this file's counters are not in the set's unit",
				    path, json_string_value(v), s->counter);
	}
	arr = json_object_get(root, "benchmarks");
	if (!arr) {
		set_problem(s, "%s: benchmarks: missing", path);
		goto out;
	}
	if (!json_is_array(arr)) {
		set_problem(s, "%s: benchmarks: expected an array, found %s",
			    path, jtype(arr));
		goto out;
	}
	json_array_foreach(arr, i, v)
		if (check_row(s, path, i, v))
			add_row(s, su, path, i, v);
out:
	free(path);
}

/* The order of scripts/run-bench; others follow by name. */
static const char *const known_suites[] = {
	"harness", "uncontended", "percpu", "casfail", "contention",
	"cacheline", "xcheck", "slab", "slab-tcmalloc", "slab-jemalloc",
	"slab-mimalloc", NULL,
};

static int suite_rank(const char *stem)
{
	int i;

	for (i = 0; known_suites[i]; i++)
		if (!strcmp(stem, known_suites[i]))
			return i;
	return i;
}

static int cmp_suite(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int rx = suite_rank(x), ry = suite_rank(y);

	return rx != ry ? rx - ry : strcmp(x, y);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static void load_machine(struct rp_set *s)
{
	char *path = rp_asprintf("%s/machine.json", s->path);
	const char *key, *unit;
	json_t *v;
	void *tmp;
	size_t n;

	if (!file_exists(path)) {
		set_reject(s, "%s: no machine.json: not a result set (scripts/run-bench writes one)",
			   s->path);
		goto out;
	}
	s->machine = load_json(s, path);
	if (!s->machine) {
		s->usable = false;
		goto out;
	}
	if (!json_is_object(s->machine)) {
		set_reject(s, "%s: expected an object, found %s", path,
			   jtype(s->machine));
		goto out;
	}
	json_object_foreach_safe(s->machine, tmp, key, v) {
		if (json_is_string(v))
			continue;
		set_problem(s, "%s: %s: expected a string, found %s", path,
			    key, jtype(v));
		json_object_del(s->machine, key);
	}
	v = json_object_get(s->machine, "ak_schema");
	if (!v) {
		set_reject(s, "%s: no ak_schema: not a set this atomkit-report can read (it reads version %s)",
			   path, RP_SCHEMA);
		goto out;
	}
	s->schema = rp_strdup(json_string_value(v));
	if (strcmp(s->schema, RP_SCHEMA)) {
		set_reject(s, "%s: schema version %s is unknown (this atomkit-report reads version %s)",
			   path, s->schema, RP_SCHEMA);
		goto out;
	}
	s->counter = rp_mach(s, "ak_counter");
	if (!*s->counter) {
		set_problem(s, "%s: no ak_counter: figures in ns only", path);
		goto out;
	}
	s->emulated = rp_has_prefix(rp_mach(s, "ak_emulated"), "yes");
	s->pus = atoi(rp_mach(s, "ak_pus"));

	/* "TSC ticks at 2599.9 MHz (lfence;...)" -> "TSC ticks" */
	unit = rp_mach(s, "ak_counter_unit");
	n = strcspn(unit, "(");
	if (strstr(unit, " at ") && (size_t)(strstr(unit, " at ") - unit) < n)
		n = strstr(unit, " at ") - unit;
	while (n && unit[n - 1] == ' ')
		n--;
	if (!n) {
		unit = *s->counter ? s->counter : "ns";
		n = strlen(unit);
	}
	if (n >= sizeof(s->unit))
		n = sizeof(s->unit) - 1;
	memcpy(s->unit, unit, n);
	s->unit[n] = 0;
out:
	free(path);
}

struct rp_set *rp_set_load(const char *path)
{
	struct rp_set *s = rp_alloc(sizeof(*s));
	struct rp_strs stems = { 0 };
	struct dirent *d;
	const char *p;
	struct stat st;
	bool macro;
	size_t n;
	DIR *dir;
	int i;

	s->path = rp_strdup(path);
	n = strlen(s->path);
	while (n > 1 && s->path[n - 1] == '/')
		s->path[--n] = 0;
	s->counter = "";
	strcpy(s->unit, "ns");
	s->usable = true;
	s->index = json_object();

	if (stat(s->path, &st)) {
		set_reject(s, "%s: %s", s->path, strerror(errno));
		return s;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_reject(s, "%s: not a directory: a result set is a folder (results/<arch>/<machine>/<date>-<rev>/)",
			   s->path);
		return s;
	}
	load_machine(s);
	if (!s->usable)
		return s;

	dir = opendir(s->path);
	if (!dir) {
		set_reject(s, "%s: %s", s->path, strerror(errno));
		return s;
	}
	while ((d = readdir(dir))) {
		size_t l = strlen(d->d_name);
		char stem[256];

		if (l <= 5 || l >= sizeof(stem) ||
		    strcmp(d->d_name + l - 5, ".json") ||
		    !strcmp(d->d_name, "machine.json") ||
		    !strcmp(d->d_name, RP_MACRO_FILE))
			continue;
		memcpy(stem, d->d_name, l - 5);
		stem[l - 5] = 0;
		rp_strs_add(&stems, stem);
	}
	closedir(dir);
	if (stems.n > 1)
		qsort(stems.v, stems.n, sizeof(*stems.v), cmp_suite);
	for (i = 0; i < stems.n; i++)
		load_suite(s, stems.v[i]);
	macro = rp_macro_load(s);

	/* what the run meant to write and did not: said, not an error */
	for (p = rp_mach(s, "ak_suites"); *(p += strspn(p, " \t")); ) {
		char *t = rp_asprintf("%.*s", (int)strcspn(p, " \t"), p);

		p += strlen(t);
		if (rp_strs_find(&stems, t) < 0 &&
		    !(macro && !strcmp(t, "macro")))
			rp_strs_add(&s->missing, t);
		free(t);
	}
	if (!stems.n && !s->macro)
		set_reject(s, "%s: empty: no suite results", s->path);
	else if (!s->nr_bench && !s->macro)
		set_reject(s, "%s: no benchmark could be read from any suite file",
			   s->path);
	rp_strs_free(&stems);
	return s;
}

void rp_set_free(struct rp_set *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nr_bench; i++)
		free(s->bench[i].iter);
	free(s->bench);
	json_decref(s->index);
	for (i = 0; i < s->nr_suites; i++) {
		free(s->suites[i].name);
		json_decref(s->suites[i].root);
	}
	free(s->suites);
	rp_strs_free(&s->missing);
	json_decref(s->macro);
	json_decref(s->machine);
	free(s->schema);
	free(s->why);
	free(s->path);
	free(s);
}

/* A machine.json value, "" when absent: never NULL. */
const char *rp_mach(const struct rp_set *s, const char *key)
{
	const char *v = s->machine ?
		json_string_value(json_object_get(s->machine, key)) : NULL;

	return v ? v : "";
}

#define RING	32
#define RINGLEN	256

static char *ring(void)
{
	static char buf[RING][RINGLEN];
	static int next;

	return buf[next++ % RING];
}

/* The path component count from the end: 0 the set, 1 its machine. */
const char *rp_path_comp(const char *path, int up, char *buf, size_t n)
{
	const char *end = path + strlen(path), *p;

	for (;;) {
		p = end;
		while (p > path && p[-1] != '/')
			p--;
		if (!up--)
			break;
		if (p == path)
			return "";
		end = p - 1;
	}
	snprintf(buf, n, "%.*s", (int)(end - p), p);
	return buf;
}

const char *rp_machine_name(const struct rp_set *s)
{
	const char *m = rp_mach(s, "ak_machine");

	if (*m)
		return m;
	m = rp_path_comp(s->path, 1, ring(), RINGLEN);
	return *m ? m : s->path;
}

const char *rp_set_name(const struct rp_set *s)
{
	const char *m = rp_mach(s, "ak_set");

	return *m ? m : rp_path_comp(s->path, 0, ring(), RINGLEN);
}

/*
 * Why the set was rejected, or its first problem, without the set's path
 * in front: where it is shown, the set is named already.
 */
const char *rp_why(const struct rp_set *s)
{
	const char *why = s->why ? s->why : "";
	size_t l = strlen(s->path);

	if (!strncmp(why, s->path, l) && why[l] == ':' && why[l + 1] == ' ')
		return why + l + 2;
	if (!strncmp(why, s->path, l) && why[l] == '/')
		return why + l + 1;
	return why;
}

int rp_exit_status(int nr_usable)
{
	if (!nr_usable)
		return RP_EXIT_NOTHING;
	return rp_nr_problems ? RP_EXIT_PROBLEMS : RP_EXIT_OK;
}

/* ---- figures ---- */

static double time_scale(json_t *row)
{
	const char *u = row_str(row, "time_unit");

	if (!u || !strcmp(u, "ns"))
		return 1;
	if (!strcmp(u, "us"))
		return 1e3;
	if (!strcmp(u, "ms"))
		return 1e6;
	if (!strcmp(u, "s"))
		return 1e9;
	return NAN;
}

static double row_num(json_t *row, const char *field, bool scale)
{
	json_t *v = json_object_get(row, field);
	double x;

	if (!v || !json_is_number(v))
		return NAN;
	x = json_number_value(v);
	if (scale && (!strcmp(field, "real_time") ||
		      !strcmp(field, "cpu_time")))
		x *= time_scale(row);
	return x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The figure of a benchmark: the median aggregate where the run had
 * repetitions, else the one iteration row; the spread is the cv aggregate
 * and the min-max over the iteration rows.  Times are in ns.  False for a
 * skipped benchmark or one without the field.
 */
bool rp_fig(const struct rp_bench *b, const char *field, struct rp_fig *f)
{
	double *vals;
	int i, n = 0;

	f->v = f->cv = f->min = f->max = NAN;
	f->n = 0;
	f->reps = b ? b->reps : 0;
	if (!b || b->skip)
		return false;
	vals = rp_alloc((b->nr_iter + 1) * sizeof(*vals));
	for (i = 0; i < b->nr_iter; i++) {
		double x = row_num(b->iter[i], field, true);

		if (isnan(x))
			continue;
		vals[n++] = x;
		if (isnan(f->min) || x < f->min)
			f->min = x;
		if (isnan(f->max) || x > f->max)
			f->max = x;
	}
	f->n = n;
	if (b->median)
		f->v = row_num(b->median, field, true);
	if (isnan(f->v) && n) {
		/* no median aggregate (one run, or aggregates not written) */
		qsort(vals, n, sizeof(*vals), cmp_double);
		f->v = n % 2 ? vals[n / 2] :
			(vals[n / 2 - 1] + vals[n / 2]) / 2;
	}
	if (b->cv)
		f->cv = row_num(b->cv, field, false);
	if (isnan(f->cv) && n > 1) {
		/* as Google Benchmark's: sample stddev over mean */
		double mean = 0, var = 0;

		for (i = 0; i < n; i++)
			mean += vals[i];
		mean /= n;
		for (i = 0; i < n; i++)
			var += (vals[i] - mean) * (vals[i] - mean);
		if (mean != 0)
			f->cv = sqrt(var / (n - 1)) / fabs(mean);
	}
	free(vals);
	return !isnan(f->v);
}

/* The figure in the set's counter unit: field prefix + ak_counter. */
bool rp_fig_unit(const struct rp_set *s, const struct rp_bench *b,
		 const char *prefix, struct rp_fig *f)
{
	char field[128];

	if (!*s->counter) {
		rp_fig(NULL, "", f);
		return false;
	}
	snprintf(field, sizeof(field), "%s%s", prefix, s->counter);
	return rp_fig(b, field, f);
}

void rp_fig_scale(struct rp_fig *f, double k)
{
	f->v *= k;
	f->min *= k;
	f->max *= k;
}

/*
 * f += g, for a sum of two figures (alloc + free): the median of a sum is
 * not the sum of medians, so the spread is dropped rather than made up.
 */
void rp_fig_add(struct rp_fig *f, const struct rp_fig *g)
{
	f->v += g->v;
	f->min = f->max = f->cv = NAN;
	f->n = 0;
}

/*
 * The noise rule of `select` and `compare`: two figures differ by less
 * than their spreads when their min-max ranges overlap, or when the
 * difference is under twice the larger cv (relative to the smaller
 * figure).  A single run has no spread: it cannot be judged.
 */
enum rp_noise rp_noise(const struct rp_fig *a, const struct rp_fig *b)
{
	bool ra = a->n > 1, rb = b->n > 1;
	bool ca = !isnan(a->cv) && a->reps > 1;
	bool cb = !isnan(b->cv) && b->reps > 1;

	if (!ra && !rb && !ca && !cb)
		return RP_UNJUDGED;
	if (ra || rb) {
		double alo = ra ? a->min : a->v, ahi = ra ? a->max : a->v;
		double blo = rb ? b->min : b->v, bhi = rb ? b->max : b->v;

		if (alo <= bhi && blo <= ahi)
			return RP_NOISE;
	}
	if (ca || cb) {
		double cv = fmax(ca ? a->cv : 0, cb ? b->cv : 0);
		double lo = fmin(fabs(a->v), fabs(b->v));

		if (lo > 0 && fabs(a->v - b->v) / lo < 2 * cv)
			return RP_NOISE;
	}
	return RP_DISTINCT;
}

/* ---- names and labels ---- */

bool rp_has_prefix(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

/* A string field of the benchmark's identity ("op"), "" if it has none. */
const char *rp_f(const struct rp_bench *b, const char *key)
{
	char k[32];
	const char *v;

	snprintf(k, sizeof(k), "ak_%s", key);
	v = b ? json_string_value(json_object_get(b->id, k)) : NULL;
	return v ? v : "";
}

/* A number of its identity ("size"), -1 if it has none. */
long rp_n(const struct rp_bench *b, const char *key)
{
	char k[32];
	json_t *v;

	snprintf(k, sizeof(k), "ak_%s", key);
	v = b ? json_object_get(b->id, k) : NULL;
	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/*
 * Whether b's identity field key is one of vals ("a|b"), a string or a
 * number; "" is a field that is absent; key "k!" negates.
 */
static bool id_is(const struct rp_bench *b, const char *key, size_t klen,
		  const char *vals, size_t vlen)
{
	bool neg = klen && key[klen - 1] == '!';
	char k[32], v[64], num[24], *p, *q;
	const char *have = num;
	json_t *j;

	snprintf(k, sizeof(k), "ak_%.*s", (int)(klen - neg), key);
	snprintf(v, sizeof(v), "%.*s", (int)vlen, vals);
	j = json_object_get(b->id, k);
	snprintf(num, sizeof(num), "%lld", json_is_integer(j) ?
		 (long long)json_integer_value(j) : 0);
	if (!json_is_integer(j))
		have = json_is_string(j) ? json_string_value(j) : "";
	for (p = v; p; p = q) {
		q = strchr(p, '|');
		if (q)
			*q++ = 0;
		if (!strcmp(p, have))
			break;
	}
	return !p == neg;
}

/*
 * The next benchmark of s after `after` (NULL: from the first) whose
 * identity fields match the filter, printf-style: "suite=slab
 * workload=pair|seq design=%s size=64 arch!=ref"; "key=" matches a field
 * that is absent.
 */
const struct rp_bench *rp_next(const struct rp_set *s,
			       const struct rp_bench *after,
			       const char *fmt, ...)
{
	char filter[256];
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(filter, sizeof(filter), fmt, ap);
	va_end(ap);
	for (i = after ? after - s->bench + 1 : 0; i < s->nr_bench; i++) {
		const char *p = filter + strspn(filter, " ");

		while (*p) {
			size_t kl = strcspn(p, "="), vl = strcspn(p + kl + 1,
								  " ");

			if (!id_is(&s->bench[i], p, kl, p + kl + 1, vl))
				break;
			p += kl + 1 + vl;
			p += strspn(p, " ");
		}
		if (!*p)
			return &s->bench[i];
	}
	return NULL;
}

/*
 * The design (mallocs: the system malloc) with the lowest figure in the
 * unit (field prefix + the counter) at slab workload wl, arg = v, the
 * first on a tie; NULL (best: no figure) if none has one.
 */
const char *rp_best(const struct rp_set *s, const char *wl, const char *arg,
		    long v, const char *prefix, bool mallocs,
		    struct rp_fig *best)
{
	const struct rp_bench *b = NULL;
	const char *who = NULL;
	struct rp_fig f;

	rp_fig(NULL, "", best);
	while ((b = rp_next(s, b, "suite=slab workload=%s %s=%ld", wl, arg,
			    v)))
		if (rp_has_prefix(rp_f(b, "design"), "malloc-") == mallocs &&
		    rp_fig_unit(s, b, prefix, &f) && (!who || f.v < best->v)) {
			who = rp_f(b, "design");
			*best = f;
		}
	return who;
}

/* "x86_64/cmpxchg64/lock": what a primitive is called in the tables. */
const char *rp_prim_id(const struct rp_bench *b, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s%s%s", rp_f(b, "arch"), rp_f(b, "op"),
		 *rp_f(b, "variant") ? "/" : "", rp_f(b, "variant"));
	return buf;
}

bool rp_is(const struct rp_bench *b, const char *key, const char *val)
{
	return !strcmp(rp_f(b, key), val);
}

/* ---- formatting ---- */

/*
 * Three significant digits, integers from 100 up: the precision the
 * figures carry (run-to-run spreads are a few percent).
 */
const char *rp_num(double v)
{
	char *b = ring();
	size_t n;

	if (isnan(v))
		return "–";
	if (fabs(v) >= 99.95 || v == 0 || isinf(v)) {
		snprintf(b, RINGLEN, "%.0f", v);
		return b;
	}
	snprintf(b, RINGLEN, "%#.3g", v);
	n = strlen(b);
	if (n && b[n - 1] == '.')
		b[n - 1] = 0;
	return b;
}

/* A count (of slabs, of calls): whole where it is, else as any figure. */
const char *rp_count(double v)
{
	char *b;

	if (isnan(v) || v != floor(v) || fabs(v) >= 1e15)
		return rp_num(v);
	b = ring();
	snprintf(b, RINGLEN, "%.0f", v);
	return b;
}

const char *rp_pct(double frac)
{
	char *b = ring();
	double p = frac * 100;

	if (isnan(frac))
		return "–";
	snprintf(b, RINGLEN, fabs(p) >= 9.95 ? "%.0f%%" :
		 fabs(p) >= 0.995 ? "%.1f%%" : "%.2f%%", p);
	return b;
}

/* "14.9 - 15.1, cv 0.5%", or "1 run". */
const char *rp_spread(const struct rp_fig *f)
{
	bool cv = !isnan(f->cv) && f->reps > 1;
	char lo[32], hi[32], c[32], *b;

	/* local copies: the ring's buffers must not feed the ring */
	snprintf(lo, sizeof(lo), "%s", rp_num(f->min));
	snprintf(hi, sizeof(hi), "%s", rp_num(f->max));
	snprintf(c, sizeof(c), "%s", rp_pct(f->cv));
	b = ring();
	if (f->n > 1 && cv)
		snprintf(b, RINGLEN, "%s - %s, cv %s", lo, hi, c);
	else if (f->n > 1)
		snprintf(b, RINGLEN, "%s - %s", lo, hi);
	else if (cv)
		snprintf(b, RINGLEN, "cv %s", c);
	else if (isnan(f->v))
		return "–";
	else
		return "1 run";
	return b;
}

/* " (190 - 201)" after a figure of several runs, else "". */
const char *rp_range(const struct rp_fig *f)
{
	char lo[32], hi[32], *b;

	if (f->n < 2)
		return "";
	snprintf(lo, sizeof(lo), "%s", rp_num(f->min));
	snprintf(hi, sizeof(hi), "%s", rp_num(f->max));
	b = ring();
	snprintf(b, RINGLEN, " (%s - %s)", lo, hi);
	return b;
}

/* What a figure of this set is: "median of 5 runs". */
const char *rp_runs(const struct rp_set *s)
{
	char *b = ring();

	if (s->reps > 1)
		snprintf(b, RINGLEN, "median of %d runs", s->reps);
	else
		snprintf(b, RINGLEN, "1 run each (%s mode)",
			 *rp_mach(s, "ak_run_mode") ?
			 rp_mach(s, "ak_run_mode") : "quick");
	return b;
}

/* ---- output: Markdown, or plain text for mail ---- */

enum rp_format rp_format;
static FILE *raw_out;		/* stdout before the text filter */

/*
 * Text from the files made inert in Markdown and in a table cell:
 * kind 't' text, 'c' code (a '|' would still end the cell), 's' a skip
 * reason as "skipped: why" (Google Benchmark's own may say it, and a run
 * that failed says "failed: what", bench/skips.h).  Plain in text mode.
 * The result lives until 32 more calls.
 */
const char *rp_md(char kind, const char *s)
{
	static char *ring_md[32];
	static int next;
	bool md = rp_format == RP_MD;
	char **slot = &ring_md[next++ % 32];
	size_t len;
	FILE *f;

	free(*slot);
	f = or_die(open_memstream(slot, &len));
	if (kind == 's' && !rp_has_prefix(s, "skipped") &&
	    !rp_has_prefix(s, "failed: "))
		fputs("skipped: ", f);
	if (kind == 'c' && md && *s)
		fputc('`', f);
	for (const char *p = s; *p; p++) {
		if (strchr("\n\r\t", *p))
			fputc(' ', f);
		else if (md && kind == 'c' && *p == '`')
			fputc('\'', f);
		else if (md && (kind == 'c' ? *p == '|' :
				strchr("\\`*_[]<>|#", *p) != NULL))
			fprintf(f, "\\%c", *p);
		else
			fputc(*p, f);
	}
	if (kind == 'c' && md && *s)
		fputc('`', f);
	fclose(f);
	return *slot;
}

void md_text(const char *s)
{
	fputs(rp_md('t', s), stdout);
}

/*
 * --format=text: the prose keeps its words and loses its markup (headings'
 * #, **, `, and the backslashes that made text inert), so that it reads
 * as it is in a mail.  Tables bypass it: rp_tab_print() lays them out.
 */
struct text_filter {
	FILE *out;
	bool bol, hash, esc, star;
	char line[8192];	/* the line so far, wrapped at its end */
	size_t n;
};

static void wrap(FILE *f, const char *s, int indent);

static void text_put(struct text_filter *t, char c)
{
	const char *l = t->line;
	int lead;

	if (c != '\n' && t->n < sizeof(t->line) - 1) {
		t->line[t->n++] = c;
		return;
	}
	t->line[t->n] = 0;
	t->n = 0;
	/* a list item's lines after the first under its text */
	lead = strspn(l, " ");
	wrap(t->out, l, lead + (l[lead] == '-' && l[lead + 1] == ' ') * 2);
}

static ssize_t text_write(void *cookie, const char *buf, size_t n)
{
	struct text_filter *t = cookie;
	size_t i;

	for (i = 0; i < n; i++) {
		char c = buf[i];

		if (t->esc) {
			t->esc = false;
			if (!strchr("\\`*_[]<>|#", c))
				text_put(t, '\\');
		} else if (t->bol && c == '#') {
			t->hash = true;
			continue;
		} else if (t->hash && c == ' ') {
			t->hash = false;
			continue;
		} else if (c == '\\') {
			t->esc = true;
			continue;
		} else if (c == '`') {
			continue;
		} else if (c == '*' && !t->star) {
			t->star = true;
			continue;
		}
		if (t->star && c != '*')
			text_put(t, '*');
		t->star = false;
		t->bol = c == '\n';
		t->hash = false;
		if (c != '*' || t->bol)
			text_put(t, c);
	}
	return n;
}

static int text_close(void *cookie)
{
	struct text_filter *t = cookie;

	if (t->n)
		text_put(t, '\n');
	return fflush(t->out);
}

bool rp_set_format(const char *name)
{
	static struct text_filter t = { .bol = true };
	cookie_io_functions_t io = { .write = text_write, .close = text_close };
	FILE *f;

	if (!strcmp(name, "markdown") || !strcmp(name, "md")) {
		rp_format = RP_MD;
		return true;
	}
	if (strcmp(name, "text"))
		return false;
	if (rp_format == RP_TEXT)
		return true;
	t.out = raw_out = stdout;
	f = fopencookie(&t, "w", io);
	if (!f)
		return false;
	rp_format = RP_TEXT;
	stdout = f;
	return true;
}

/* ---- the table printer: every table, in Markdown or aligned text ---- */

/* The last alignment given stands for the columns after it. */
static char tab_align(const struct rp_tab *t, int j)
{
	int n = strlen(t->align);

	return t->align[j < n ? j : n - 1];
}

void rp_tab_init(struct rp_tab *t, const char *align)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->align, sizeof(t->align), "%s", align);
	t->ncol = strlen(t->align);
}

static void tab_push(struct rp_tab *t, char *cell)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->c = rp_realloc(t->c, t->cap * sizeof(*t->c));
	}
	t->c[t->n++] = cell;
}

/* A cell as printf would write it: figures, and text already rp_md(). */
void rp_cell(struct rp_tab *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tab_push(t, vasprintf_or_die(fmt, ap));
	va_end(ap);
}

/*
 * Cells from one line, split at each '|': a header.  A cell may have one
 * "%s", filled from the arguments (strings) in turn.
 */
void rp_row(struct rp_tab *t, const char *fmt, ...)
{
	char *f = rp_strdup(fmt), *p, *q;
	va_list ap;

	va_start(ap, fmt);
	for (p = f; p; p = q) {
		q = strchr(p, '|');
		if (q)
			*q++ = 0;
		tab_push(t, strstr(p, "%s") ?
			 rp_asprintf(p, va_arg(ap, const char *)) :
			 rp_strdup(p));
	}
	va_end(ap);
	free(f);
}

void rp_cell_as(struct rp_tab *t, char kind, const char *s)
{
	tab_push(t, rp_strdup(rp_md(kind, s)));
}

/* A cell with nothing in it, not even the space of an empty one. */
void rp_cell_none(struct rp_tab *t)
{
	tab_push(t, NULL);
}

/* The number of a note under the table; one text, one number. */
int rp_tab_note(struct rp_tab *t, const char *text)
{
	rp_strs_add(&t->notes, text);
	return rp_strs_find(&t->notes, text) + 1;
}

/* Columns on screen of n bytes: UTF-8 continuation bytes take none. */
static int widthn(const char *s, size_t n)
{
	int w = 0;

	for (; s && *s && n; s++, n--)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static int width(const char *s)
{
	return widthn(s, SIZE_MAX);
}

#define TEXT_COLS	80
#define NOTE_REF_MIN	6	/* "(9999)" */

/* The widest word of s: a header may wrap at its spaces, no narrower. */
static int word_width(const char *s)
{
	int w = 0, n;

	for (; s && *s; s += n + (s[n] == ' ')) {
		n = strcspn(s, " ");
		if (widthn(s, n) > w)
			w = widthn(s, n);
	}
	return w;
}

/* The widest body cell of column j. */
static int body_width(const struct rp_tab *t, int j)
{
	int i, w = 0;

	for (i = t->ncol + j; i < t->n; i += t->ncol)
		if (width(t->c[i]) > w)
			w = width(t->c[i]);
	return w;
}

/*
 * Widths that fit a text table into TEXT_COLS.  Headers wrap at their
 * spaces first; then the column whose narrowing moves the fewest cells
 * is narrowed (the first column, which names the row, last).  Without
 * notes, only whether the rows fit without narrowing the first column;
 * with them, the cells that no longer fit become numbered notes.
 */
static bool tab_fit(struct rp_tab *t, int *w, int gap, bool notes)
{
	int *cap = rp_alloc(t->ncol * sizeof(*cap));
	int i, j, total, first = INT_MAX;

	for (total = gap * (t->ncol - 1), j = 0; j < t->ncol; j++) {
		cap[j] = body_width(t, j);
		w[j] = cap[j] > width(t->c[j]) ? cap[j] : width(t->c[j]);
		total += w[j];
	}
	for (j = 0; total > TEXT_COLS && j < t->ncol; j++)
		if (w[j] > cap[j] && w[j] > word_width(t->c[j])) {
			int x = cap[j] > word_width(t->c[j]) ? cap[j] :
				word_width(t->c[j]);

			total -= w[j] - x;
			w[j] = x;
		}
	while (total > TEXT_COLS) {
		int best = -1, best_moved = 0, best_cap = 0, k, c, moved;

		/* the first column names the row: it is narrowed last */
		for (j = 1; j <= t->ncol && (best < 0 || j < t->ncol); j++) {
			k = j % t->ncol;
			c = word_width(t->c[k]);
			if (c < NOTE_REF_MIN)
				c = NOTE_REF_MIN;
			/* the next narrower cell decides the new width */
			for (i = t->ncol + k; i < t->n; i += t->ncol)
				if (width(t->c[i]) < w[k] &&
				    width(t->c[i]) > c)
					c = width(t->c[i]);
			if (c >= w[k])
				continue;
			for (moved = 0, i = t->ncol + k; i < t->n; i += t->ncol)
				moved += width(t->c[i]) > c;
			if (best < 0 || moved < best_moved) {
				best = k;
				best_moved = moved;
				best_cap = c;
			}
		}
		if (best < 0)
			break;
		if (!best)
			first = best_cap;
		total -= w[best] - best_cap;
		w[best] = cap[best] = best_cap;
	}
	free(cap);
	if (!notes)
		return total <= TEXT_COLS && first == INT_MAX;
	for (i = t->ncol; i < t->n; i++) {
		if (width(t->c[i]) <= w[i % t->ncol])
			continue;
		j = rp_tab_note(t, t->c[i]);
		free(t->c[i]);
		t->c[i] = rp_asprintf("(%d)", j);
	}
	return true;
}

/*
 * s on lines of at most TEXT_COLS, broken at spaces, the lines after the
 * first indented; a word too long for any line is broken after a '/'.
 */
static void wrap(FILE *f, const char *s, int indent)
{
	bool fresh = true;
	int col = strspn(s, " ");

	fprintf(f, "%.*s", col, s);
	s += col;
	while (*s) {
		int n = strcspn(s, " "), k;

		if (!fresh && col + 1 + widthn(s, n) > TEXT_COLS) {
			col = fprintf(f, "\n%*s", indent, "") - 1;
			fresh = true;
		}
		if (!fresh)
			col += fprintf(f, " ");
		if (col + widthn(s, n) > TEXT_COLS) {
			for (k = 0; widthn(s, k + 1) <= TEXT_COLS - col; k++)
				;
			while (k > 1 && s[k - 1] != '/' &&
			       memchr(s, '/', k - 1))
				k--;
			col = fprintf(f, "%.*s\n%*s", k, s, indent, "") - k - 1;
			s += k;
			fresh = true;
			continue;
		}
		col += widthn(s, n);
		fprintf(f, "%.*s", n, s);
		fresh = false;
		s += n;
		s += strspn(s, " ");
	}
	fputc('\n', f);
}

/* The notes of a table (skip reasons, long cells), then it is freed. */
void rp_tab_notes(struct rp_tab *t)
{
	int i;

	for (i = 0; i < t->notes.n; i++) {
		if (rp_format == RP_TEXT) {
			fflush(stdout);
			char *line = rp_asprintf("(%d) %s", i + 1,
						 t->notes.v[i]);

			if (!i)
				fputc('\n', raw_out);
			wrap(raw_out, line, 4);
			free(line);
			continue;
		}
		printf("%s(%d) ", i ? "  \n" : "\n", i + 1);
		md_text(t->notes.v[i]);
	}
	if (t->notes.n && rp_format == RP_MD)
		putchar('\n');
	for (i = 0; i < t->n; i++)
		free(t->c[i]);
	free(t->c);
	rp_strs_free(&t->notes);
	memset(t, 0, sizeof(*t));
}

/*
 * Text: columns two spaces apart, figures ('r') aligned right, the header
 * wrapped to its column and underlined (left out where it is empty),
 * within TEXT_COLS where the cells allow.
 */
static void tab_text_part(struct rp_tab *t)
{
	int *w = rp_alloc(t->ncol * sizeof(*w));
	const char **h = rp_alloc(t->ncol * sizeof(*h));
	char *buf = NULL, *line, *end;
	bool rest = false;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	int i, j, gap;

	if (!f)
		exit(RP_EXIT_NOTHING);
	for (j = 0; j < t->ncol; j++) {
		h[j] = t->c[j] && *t->c[j] ? t->c[j] : NULL;
		rest |= h[j] != NULL;
	}
	/* one blank between columns where two would not let the rows fit */
	gap = tab_fit(t, w, 2, false) ? 2 : 1;
	tab_fit(t, w, gap, true);
	while (rest) {
		/* a line of the header: the words of each cell that fit */
		for (rest = false, j = 0; j < t->ncol; j++) {
			int n = 0, e;

			while (h[j] && h[j][n]) {
				e = n + !!n;
				e += strcspn(h[j] + e, " ");
				if (n && widthn(h[j], e) > w[j])
					break;
				n = e;
			}
			fprintf(f, "%.*s%*s", n, h[j] ? h[j] : "",
				w[j] - widthn(h[j], n) + gap, "");
			if (h[j]) {
				h[j] += n + strspn(h[j] + n, " ");
				h[j] = *h[j] ? h[j] : NULL;
				rest |= h[j] != NULL;
			}
		}
		fputc('\n', f);
		for (j = 0; !rest && j < t->ncol; j++)
			fprintf(f, "%.*s%*s", w[j] ? w[j] : 1,
				"--------------------------------------------------------------------------------",
				gap, "");
		if (!rest)
			fputc('\n', f);
	}
	for (i = t->ncol; i < t->n; i += t->ncol) {
		for (j = 0; j < t->ncol && i + j < t->n; j++) {
			const char *c = t->c[i + j] ? t->c[i + j] : "";
			int pad = w[j] - width(c);

			if (tab_align(t, j) == 'r')
				fprintf(f, "%*s%s%*s", pad, "", c, gap, "");
			else
				fprintf(f, "%s%*s", c, pad + gap, "");
		}
		fputc('\n', f);
	}
	if (fclose(f))
		exit(RP_EXIT_NOTHING);
	/* no blanks at the ends of lines */
	fflush(stdout);
	for (line = buf; *line; line = end + 1) {
		end = strchr(line, '\n');
		for (i = end - line; i > 0 && line[i - 1] == ' '; i--)
			;
		fprintf(raw_out, "%.*s\n", i, line);
	}
	free(buf);
	free(h);
	free(w);
}

#define GROUP_CELL	24	/* wider cells go to notes anyway */

/* The widest of column j's cells and its header's words, up to GROUP_CELL */
static int cell_width(const struct rp_tab *t, int j)
{
	int w = body_width(t, j);

	if (word_width(t->c[j]) > w)
		w = word_width(t->c[j]);
	return w < GROUP_CELL ? w : GROUP_CELL;
}

/*
 * A table too wide for a line is printed in parts, each the first column
 * and as many of the next as fit, so that fewer cells become notes.
 */
static void tab_text(struct rp_tab *t)
{
	int rows = (t->n + t->ncol - 1) / t->ncol, from = 1, to, i, j, sum;
	struct rp_tab p;

	for (;;) {
		sum = cell_width(t, 0);
		for (to = from; to < t->ncol; to++) {
			sum += 2 + cell_width(t, to);
			if (sum > TEXT_COLS && to > from)
				break;
		}
		if (from == 1 && to == t->ncol) {
			tab_text_part(t);
			return;
		}
		rp_tab_init(&p, "l");
		p.ncol = 1 + to - from;
		p.notes = t->notes;
		for (i = 0; i < rows; i++)
			for (j = -1; j < p.ncol - 1; j++) {
				char *c = t->c[i * t->ncol + (j < 0 ? 0 : from + j)];

				p.align[j + 1] = j < 0 ? t->align[0] :
					tab_align(t, from + j);
				tab_push(&p, c ? rp_strdup(c) : NULL);
			}
		p.align[p.ncol < 31 ? p.ncol : 31] = 0;
		if (from > 1)
			fputc('\n', raw_out);
		tab_text_part(&p);
		t->notes = p.notes;
		for (i = 0; i < p.n; i++)
			free(p.c[i]);
		free(p.c);
		if (to >= t->ncol)
			return;
		from = to;
	}
}

/* The table, then its notes unless the caller still has a line to add. */
void rp_tab_print(struct rp_tab *t)
{
	int i, j;

	if (rp_format == RP_TEXT) {
		tab_text(t);
	} else {
		/* "| a | b |" rows under a "|---|--:|" line */
		for (i = 0; i < t->n; i += t->ncol) {
			putchar('|');
			for (j = i; j < i + t->ncol && j < t->n; j++)
				printf(t->c[j] ? " %s |" : " |", t->c[j]);
			putchar('\n');
			if (i)
				continue;
			putchar('|');
			for (j = 0; j < t->ncol; j++)
				fputs(tab_align(t, j) == 'r' ? "--:|" : "---|",
				      stdout);
			putchar('\n');
		}
	}
	if (!t->keep_notes)
		rp_tab_notes(t);
}
