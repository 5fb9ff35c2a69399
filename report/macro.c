// SPDX-License-Identifier: MIT
/*
 * The whole programs: macro.json, which scripts/run-macro writes into a
 * result set (doc/benchmarks.md, "macro.json"), checked as the set loads
 * and rendered as the seed's last table (user, system and elapsed time
 * of a real workload under each allocator), one per workload, with the
 * counters of libatomkit-malloc.so beside it, so that a design's gap
 * comes with what its allocator did; the targets of the whole programs;
 * a plot of time and RSS relative to glibc's; and in `select`, the
 * fastest fastpath set against the fastest whole program, which the slab
 * threads were told to do before believing a micro-benchmark.
 *
 * A damaged file (not JSON, a member missing or of the wrong type, a
 * negative time or count, a run of an allocator the file does not list)
 * is one problem naming the file and the first place found, and the
 * whole programs are left out: a file that is wrong in one place may be
 * wrong in others that look right.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- checking macro.json ---- */

enum {
	M_STR = 1, M_NUM = 2, M_INT = 4, M_BOOL = 8, M_OBJ = 16, M_ARR = 32,
	M_NULL = 64,	/* or null */
	M_OPT = 128,	/* may be absent */
};

struct member {
	const char *key;
	int type;
};

static const struct member m_top[] = {
	{ "ak_macro_schema", M_STR }, { "ak_set", M_STR },
	{ "ak_run_mode", M_STR }, { "ak_run_started", M_STR },
	{ "ak_run_finished", M_STR }, { "ak_git_rev", M_STR },
	{ "ak_runs", M_INT }, { "ak_jobs", M_INT }, { "ak_threads", M_INT },
	{ "ak_timeout_s", M_NUM }, { "ak_baseline", M_STR },
	{ "ak_failures", M_INT }, { "allocators", M_ARR },
	{ "workloads", M_ARR }, { NULL, 0 },
};

static const struct member m_alloc[] = {
	{ "name", M_STR }, { "kind", M_STR }, { "library", M_STR | M_NULL },
	{ "preload", M_STR | M_NULL }, { "env", M_OBJ }, { "status", M_STR },
	{ "reason", M_STR | M_OPT }, { "variant_of", M_STR | M_OPT },
	{ NULL, 0 },
};

/* a workload that ran has the M_OPT members but reason and tree */
static const struct member m_work[] = {
	{ "name", M_STR }, { "kind", M_STR }, { "description", M_STR },
	{ "inputs", M_STR }, { "status", M_STR }, { "reason", M_STR | M_OPT },
	{ "command", M_STR | M_OPT }, { "env", M_OBJ | M_OPT },
	{ "versions", M_STR | M_OPT }, { "tree", M_OBJ | M_OPT },
	{ "baseline_output", M_STR | M_OPT }, { "results", M_ARR | M_OPT },
	{ NULL, 0 },
};

static const char *const ran_only[] = {
	"command", "env", "versions", "baseline_output", "results", NULL,
};

static const struct member m_result[] = {
	{ "allocator", M_STR }, { "runs", M_ARR }, { NULL, 0 },
};

static const struct member m_run[] = {
	{ "run", M_INT }, { "elapsed_s", M_NUM }, { "user_s", M_NUM },
	{ "system_s", M_NUM }, { "max_rss_kb", M_NUM },
	{ "minor_faults", M_NUM }, { "major_faults", M_NUM },
	{ "voluntary_switches", M_NUM }, { "involuntary_switches", M_NUM },
	{ "exit_status", M_INT | M_NULL }, { "signal", M_INT | M_NULL },
	{ "timed_out", M_BOOL }, { "output_sha256", M_STR },
	{ "output_bytes", M_NUM }, { "output_matches_baseline", M_BOOL },
	{ "ok", M_BOOL }, { "note", M_STR | M_OPT },
	{ "malloc_counters", M_OBJ | M_OPT }, { NULL, 0 },
};

/*
 * A design's run from ak_macro_schema 2 on: the AK_MALLOC_STATS lines of
 * its processes summed (doc/malloc.md, "Counters"); each byte field as
 * its largest in one process and as summed.
 */
static const struct member m_counters[] = {
	{ "processes", M_INT }, { "refills", M_INT }, { "slabs_made", M_INT },
	{ "slabs_released", M_INT }, { "large_allocs", M_INT },
	{ "heap_hits", M_INT }, { "heap_misses", M_INT }, { "maps", M_INT },
	{ "unmaps", M_INT }, { "madvise_calls", M_INT },
	{ "fallback_allocs", M_INT }, { "deferred_frees", M_INT },
	{ "mapped_bytes_max", M_INT }, { "mapped_bytes_sum", M_INT },
	{ "dirty_bytes_max", M_INT }, { "dirty_bytes_sum", M_INT },
	{ "purged_bytes_max", M_INT }, { "purged_bytes_sum", M_INT },
	{ "meta_bytes_max", M_INT }, { "meta_bytes_sum", M_INT },
	{ NULL, 0 },
};

#define M_KIND(type)	((type) & ~(M_NULL | M_OPT))

static const char *const want_of[M_ARR + 1] = {
	[M_STR] = "a string", [M_NUM] = "a number", [M_INT] = "an integer",
	[M_BOOL] = "a boolean", [M_OBJ] = "an object", [M_ARR] = "an array",
};

/* the jansson types each kind takes, a bit per json_type */
static const int json_types[M_ARR + 1] = {
	[M_STR] = 1 << JSON_STRING,
	[M_NUM] = 1 << JSON_INTEGER | 1 << JSON_REAL,
	[M_INT] = 1 << JSON_INTEGER,
	[M_BOOL] = 1 << JSON_TRUE | 1 << JSON_FALSE,
	[M_OBJ] = 1 << JSON_OBJECT, [M_ARR] = 1 << JSON_ARRAY,
};

static bool is_type(const json_t *v, int type)
{
	if (json_is_null(v))
		return type & M_NULL;
	return json_types[M_KIND(type)] >> json_typeof(v) & 1;
}

/*
 * The first thing wrong with object o (at where) against its members:
 * a member missing or of another type, a number below 0.  NULL if none.
 */
static char *check_obj(const json_t *o, const struct member *m,
		       const char *where)
{
	const char *dot = *where ? "." : "";

	if (!json_is_object(o))
		return rp_asprintf("%s%sexpected an object%s, found %s", where,
				   *where ? ": " : "", *where ? "" : " at the top",
				   rp_jtype(o));
	for (; m->key; m++) {
		json_t *v = json_object_get(o, m->key);

		if (!v && !(m->type & M_OPT))
			return rp_asprintf("%s%s%s: missing", where, dot,
					   m->key);
		if (v && !is_type(v, m->type))
			return rp_asprintf("%s%s%s: expected %s%s, found %s",
					   where, dot, m->key,
					   want_of[M_KIND(m->type)],
					   m->type & M_NULL ? " or null" : "",
					   rp_jtype(v));
		if (json_is_number(v) && json_number_value(v) < 0)
			return rp_asprintf("%s%s%s: %g is negative: times and counts are never below 0",
					   where, dot, m->key,
					   json_number_value(v));
	}
	return NULL;
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

static bool jis(const json_t *o, const char *key, const char *val)
{
	return !strcmp(jstr(o, key), val);
}

/* "ran" or "skipped", with a reason when skipped */
static char *check_status(const json_t *o, const char *where)
{
	if (!jis(o, "status", "ran") && !jis(o, "status", "skipped"))
		return rp_asprintf("%s.status: \"%s\" is neither ran nor skipped",
				   where, jstr(o, "status"));
	if (jis(o, "status", "skipped") && !json_object_get(o, "reason"))
		return rp_asprintf("%s.reason: missing (it was skipped)",
				   where);
	return NULL;
}

/* The entry of array what of o whose key is val, NULL if none. */
static json_t *entry(const json_t *o, const char *what, const char *key,
		     const char *val)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(o, what), i, e)
		if (jis(e, key, val))
			return e;
	return NULL;
}

static json_t *alloc_of(const json_t *m, const char *name)
{
	return entry(m, "allocators", "name", name);
}

/* The layout's version: 1 (before the counters), 2; 0 if unknown. */
static int schema_of(const json_t *m)
{
	const char *v = jstr(m, "ak_macro_schema");

	return !strcmp(v, "1") ? 1 : !strcmp(v, RP_MACRO_SCHEMA) ? 2 : 0;
}

/*
 * The counters of a run of allocator a: a design's from schema 2 on, of
 * no other allocator's; and a run that was ok had a process report them.
 */
static char *check_counters(const json_t *m, const json_t *a,
			    const json_t *run, const char *where)
{
	const json_t *c = json_object_get(run, "malloc_counters");
	bool design = jis(a, "kind", "design");
	char *w, *e;

	if (!c && design && schema_of(m) >= 2)
		return rp_asprintf("%s.malloc_counters: missing (a run of a design, ak_macro_schema %s)",
				   where, RP_MACRO_SCHEMA);
	if (!c)
		return NULL;
	if (!design)
		return rp_asprintf("%s.malloc_counters: %s is not a design: only libatomkit-malloc.so has counters",
				   where, jstr(a, "name"));
	w = rp_asprintf("%s.malloc_counters", where);
	e = check_obj(c, m_counters, w);
	if (!e && json_is_true(json_object_get(run, "ok")) &&
	    !json_integer_value(json_object_get(c, "processes")))
		e = rp_asprintf("%s.processes: 0 in a run that is ok (a design's run where no process reported fails)",
				w);
	free(w);
	return e;
}

static char *check_runs(const json_t *m, const json_t *a, const json_t *res,
			const char *where, int *failed)
{
	long nruns = json_integer_value(json_object_get(m, "ak_runs"));
	json_t *run;
	char *w, *e;
	size_t k;

	json_array_foreach(json_object_get(res, "runs"), k, run) {
		long r;

		w = rp_asprintf("%s.runs[%zu]", where, k);
		e = check_obj(run, m_run, w);
		r = json_integer_value(json_object_get(run, "run"));
		if (!e && (r < 1 || r > nruns))
			e = rp_asprintf("%s.run: %ld is not one of the %ld runs (ak_runs)",
					w, r, nruns);
		if (!e)
			e = check_counters(m, a, run, w);
		free(w);
		if (e)
			return e;
		*failed += !json_is_true(json_object_get(run, "ok"));
	}
	return NULL;
}

static char *check_workload(const json_t *m, const json_t *wl,
			    const char *where, int *failed)
{
	char *e = check_obj(wl, m_work, where), *w;
	const json_t *a;
	json_t *res;
	size_t j;
	int k;

	if (!e)
		e = check_status(wl, where);
	if (e || !jis(wl, "status", "ran"))
		return e;
	for (k = 0; ran_only[k]; k++)
		if (!json_object_get(wl, ran_only[k]))
			return rp_asprintf("%s.%s: missing (the workload ran)",
					   where, ran_only[k]);
	json_array_foreach(json_object_get(wl, "results"), j, res) {
		w = rp_asprintf("%s.results[%zu]", where, j);
		e = check_obj(res, m_result, w);
		a = e ? NULL : alloc_of(m, jstr(res, "allocator"));
		if (!e && (!a || !jis(a, "status", "ran")))
			e = rp_asprintf("%s.allocator: \"%s\" is not an allocator that ran (allocators)",
					w, jstr(res, "allocator"));
		if (!e)
			e = check_runs(m, a, res, w, failed);
		free(w);
		if (e)
			return e;
	}
	return NULL;
}

/* The first thing wrong with macro.json m, NULL if nothing is. */
static char *check_macro(const json_t *m)
{
	char *e = check_obj(m, m_top, ""), *w;
	json_t *v;
	int failed = 0;
	size_t i;

	if (e)
		return e;
	if (!schema_of(m))
		return rp_asprintf("ak_macro_schema: version %s is unknown (this atomkit-report reads versions 1 and %s)",
				   jstr(m, "ak_macro_schema"), RP_MACRO_SCHEMA);
	json_array_foreach(json_object_get(m, "allocators"), i, v) {
		w = rp_asprintf("allocators[%zu]", i);
		e = check_obj(v, m_alloc, w);
		if (!e)
			e = check_status(v, w);
		if (!e && alloc_of(m, jstr(v, "name")) != v)
			e = rp_asprintf("%s.name: \"%s\" is listed twice", w,
					jstr(v, "name"));
		if (!e && json_object_get(v, "variant_of") &&
		    (!jis(v, "kind", "design") ||
		     !jis(alloc_of(m, jstr(v, "variant_of")), "kind",
			  "design")))
			e = rp_asprintf("%s.variant_of: \"%s\" is not a design of this file, or %s is not one",
					w, jstr(v, "variant_of"),
					jstr(v, "name"));
		free(w);
		if (e)
			return e;
	}
	json_array_foreach(json_object_get(m, "workloads"), i, v) {
		w = rp_asprintf("workloads[%zu]", i);
		e = check_workload(m, v, w, &failed);
		free(w);
		if (e)
			return e;
	}
	if (failed != json_integer_value(json_object_get(m, "ak_failures")))
		return rp_asprintf("ak_failures: %lld, but %d runs are not ok",
				   json_integer_value(json_object_get(m,
							"ak_failures")),
				   failed);
	return NULL;
}

bool rp_macro_load(struct rp_set *s)
{
	char *path = rp_asprintf("%s/%s", s->path, RP_MACRO_FILE), *e = NULL;
	json_error_t err;
	struct stat st;
	json_t *m;

	if (stat(path, &st)) {
		free(path);
		return false;
	}
	m = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!m && json_error_code(&err) == json_error_cannot_open_file)
		/* err.text: "unable to open <path>: <strerror>" */
		e = rp_asprintf("cannot read: %s", strrchr(err.text, ':') ?
				strrchr(err.text, ':') + 2 : err.text);
	else if (!m)
		e = rp_asprintf("not valid JSON at line %d, column %d: %s%s",
				err.line, err.column, err.text,
				json_error_code(&err) ==
				json_error_premature_end_of_input ?
				" (truncated?)" : "");
	else
		e = check_macro(m);
	if (e) {
		char *msg = rp_asprintf("%s: %s: the whole programs are left out",
					path, e);

		rp_set_problem(s, msg);
		free(msg);
		free(e);
		json_decref(m);
		s->macro_damaged = true;
	} else {
		s->macro = m;
	}
	free(path);
	return true;
}

/* The ran workloads, or allocators, of m in order: the i-th, or NULL. */
static json_t *nth_ran(const json_t *m, const char *what, size_t i)
{
	json_t *v;
	size_t k, n = 0;

	json_array_foreach(json_object_get(m, what), k, v)
		if (jis(v, "status", "ran") && n++ == i)
			return v;
	return NULL;
}

/* `check`: what the set's whole programs hold, inside its brackets. */
void rp_macro_check(const struct rp_set *s)
{
	size_t w = 0, a = 0;

	if (s->macro_damaged)
		fputs("; whole programs: damaged", stdout);
	if (!s->macro)
		return;
	while (nth_ran(s->macro, "workloads", w))
		w++;
	while (nth_ran(s->macro, "allocators", a))
		a++;
	printf("; whole programs: %zu workloads, %zu allocators", w, a);
}

/* ---- figures of the runs ---- */

enum { F_USER, F_SYS, F_ELAPSED, F_RSS, F_MINOR, NR_F };

static const char *const fields[NR_F] = {
	"user_s", "system_s", "elapsed_s", "max_rss_kb", "minor_faults",
};

/* One allocator on one workload: the means of the runs that were ok. */
struct mstat {
	struct rp_fig f[NR_F];	/* mean, min - max; RSS in MiB */
	int runs, failed;
	const char *note;	/* the first failed run's */
};

static json_t *result_of(const json_t *wl, const char *alloc)
{
	return entry(wl, "results", "allocator", alloc);
}

/* False when no run of it was ok (or it has none). */
static bool mstat_of(const json_t *wl, const char *alloc, struct mstat *m)
{
	json_t *run;
	size_t i;
	int k;

	memset(m, 0, sizeof(*m));
	for (k = 0; k < NR_F; k++)
		rp_fig(NULL, "", &m->f[k]);
	json_array_foreach(json_object_get(result_of(wl, alloc), "runs"), i,
			   run) {
		m->runs++;
		if (!json_is_true(json_object_get(run, "ok"))) {
			if (!m->failed++)
				m->note = *jstr(run, "note") ?
					jstr(run, "note") : "not ok";
			continue;
		}
		for (k = 0; k < NR_F; k++) {
			struct rp_fig *f = &m->f[k];
			double x = json_number_value(json_object_get(run,
								   fields[k]));

			if (k == F_RSS)
				x /= 1024;
			f->v = f->n ? f->v + x : x;
			f->min = f->n && f->min < x ? f->min : x;
			f->max = f->n && f->max > x ? f->max : x;
			f->reps = ++f->n;
		}
	}
	for (k = 0; k < NR_F; k++)
		m->f[k].v /= m->f[k].n;
	return m->f[F_ELAPSED].n > 0;
}

/*
 * Of the allocators of kind ("design", "system") that ran wl, but the
 * one named but and a design's variants (a knob changed: they are shown
 * beside their design, never picked): the one whose mean figure k is the
 * lowest (the highest where highest), its means in *out; only those with
 * a run that was ok, or where whole, those with no run that failed.
 * NULL if none.
 */
static const char *pick(const json_t *m, const json_t *wl, const char *kind,
			const char *but, int k, bool highest, bool whole,
			struct mstat *out)
{
	const char *who = NULL;
	struct mstat st;
	const json_t *a;
	size_t i;

	for (i = 0; (a = nth_ran(m, "allocators", i)); i++) {
		if (!jis(a, "kind", kind) || (but && jis(a, "name", but)) ||
		    json_object_get(a, "variant_of") ||
		    !mstat_of(wl, jstr(a, "name"), &st) ||
		    (whole && st.failed))
			continue;
		if (!who || (highest ? st.f[k].v > out->f[k].v :
			     st.f[k].v < out->f[k].v)) {
			who = jstr(a, "name");
			*out = st;
		}
	}
	return who;
}

/* ---- tables ---- */

static void describe(const json_t *wl)
{
	const json_t *tree = json_object_get(wl, "tree");
	const char *key;
	json_t *v;

	fputs("What runs: ", stdout);
	md_text(jstr(wl, "description"));
	fputs(". Inputs: ", stdout);
	md_text(jstr(wl, "inputs"));
	printf(". Command: %s", rp_md('c', jstr(wl, "command")));
	json_object_foreach(json_object_get(wl, "env"), key, v) {
		char *kv = rp_asprintf("%s=%s", key, json_string_value(v) ?
				       json_string_value(v) : "");

		printf(", %s", rp_md('c', kv));
		free(kv);
	}
	fputs(". Versions: ", stdout);
	md_text(jstr(wl, "versions"));
	if (tree) {
		fputs(". Tree: ", stdout);
		md_text(jstr(tree, "source"));
		if (json_is_string(json_object_get(tree, "commit")))
			printf(" at %s (%s)", rp_md('c', jstr(tree, "commit")),
			       json_is_true(json_object_get(tree, "fixed")) ?
			       "the fixed commit, comparable across sets" :
			       "not the fixed commit: not comparable with sets that compiled it");
		printf(", objects compiled per run: %lld",
		       json_integer_value(json_object_get(tree, "objects")));
	}
	puts(".\n");
}

static void macro_table(const struct rp_set *s, const json_t *m,
			const json_t *wl)
{
	struct mstat base, st;
	const json_t *a;
	struct rp_tab t;
	char *what;
	size_t i;
	int k;

	what = rp_asprintf("Whole program: %s (%s)", jstr(wl, "name"),
			   jstr(wl, "kind"));
	rp_head(s, what, NULL, NULL, NULL);
	free(what);
	describe(wl);
	mstat_of(wl, jstr(m, "ak_baseline"), &base);
	rp_tab_init(&t, "lrrrrrrl");
	rp_row(&t, "allocator|user s|system s|elapsed s|peak RSS (MiB)|minor faults|elapsed / %s|failed runs",
	       rp_md('t', jstr(m, "ak_baseline")));
	for (i = 0; (a = nth_ran(m, "allocators", i)); i++) {
		bool ok = mstat_of(wl, jstr(a, "name"), &st);

		rp_cell_as(&t, 't', jstr(a, "name"));
		for (k = 0; k < NR_F; k++)
			rp_cell(&t, "%s%s", rp_num(st.f[k].v),
				rp_range(&st.f[k]));
		rp_cell(&t, "%s", ok ? rp_num(st.f[F_ELAPSED].v /
					       base.f[F_ELAPSED].v) : "–");
		if (!result_of(wl, jstr(a, "name")))
			rp_cell(&t, "no runs");
		else if (st.failed)
			rp_cell(&t, "%d of %d (%d)", st.failed, st.runs,
				rp_tab_note(&t, st.note));
		else
			rp_cell(&t, "0 of %d", st.runs);
	}
	rp_tab_print(&t);
}

/* ---- the counters of libatomkit-malloc.so beside each table ---- */

/*
 * What the table shows of malloc_counters: the fields that tell the
 * designs apart (large_allocs and deferred_frees follow from the
 * program, the rest are in the file).
 */
static const struct {
	const char *key, *head;
	double scale;
} cfields[] = {
	{ "processes", "procs", 1 },
	{ "refills", "refills", 1 },
	{ "slabs_made", "slabs made", 1 },
	{ "slabs_released", "slabs freed", 1 },
	{ "heap_misses", "heap misses", 1 },
	{ "madvise_calls", "madvise", 1 },
	{ "mapped_bytes_max", "mapped MiB", 1.0 / (1 << 20) },
	{ "fallback_allocs", "fallback", 1 },
};

#define NR_CFIELDS	(sizeof(cfields) / sizeof(cfields[0]))

/* The mean of each over alloc's runs that were ok; 0 runs: none. */
static int counters_of(const json_t *wl, const char *alloc, double *v)
{
	json_t *run, *c;
	size_t i, k;
	int n = 0;

	for (k = 0; k < NR_CFIELDS; k++)
		v[k] = 0;
	json_array_foreach(json_object_get(result_of(wl, alloc), "runs"), i,
			   run) {
		c = json_object_get(run, "malloc_counters");
		if (!c || !json_is_true(json_object_get(run, "ok")))
			continue;
		for (k = 0; k < NR_CFIELDS; k++)
			v[k] += cfields[k].scale * (double)json_integer_value(
				json_object_get(c, cfields[k].key));
		n++;
	}
	for (k = 0; n && k < NR_CFIELDS; k++)
		v[k] /= n;
	return n;
}

/* Whether any design (allocator of kind "design") ran. */
static bool designs_ran(const json_t *m)
{
	const json_t *a;
	size_t i;

	for (i = 0; (a = nth_ran(m, "allocators", i)); i++)
		if (jis(a, "kind", "design"))
			return true;
	return false;
}

static void counter_table(const json_t *m, const json_t *wl)
{
	double v[NR_CFIELDS];
	const json_t *a;
	struct rp_tab t;
	size_t i, k;
	int rows = 0;

	if (schema_of(m) < 2 || !designs_ran(m))
		return;
	rp_tab_init(&t, "lr");
	t.ncol = NR_CFIELDS + 1;
	rp_cell(&t, "design");
	for (k = 0; k < NR_CFIELDS; k++)
		rp_cell(&t, "%s", cfields[k].head);
	for (i = 0; (a = nth_ran(m, "allocators", i)); i++) {
		if (!jis(a, "kind", "design") ||
		    !counters_of(wl, jstr(a, "name"), v))
			continue;
		rows++;
		rp_cell_as(&t, 't', jstr(a, "name"));
		for (k = 0; k < NR_CFIELDS; k++)
			rp_cell(&t, "%s", cfields[k].scale == 1 ?
				rp_count(v[k]) : rp_num(v[k]));
	}
	if (rows) {
		puts("\nThe counters of libatomkit-malloc.so, per run:\n");
		rp_tab_print(&t);
	} else {
		puts("\nNo counters of libatomkit-malloc.so: no design has a run of it that was ok.");
		rp_tab_notes(&t);
	}
}

/* "a, b: why" for each reason of the skipped entries of what. */
static void left_out(const json_t *m, const char *what, const char *name)
{
	struct rp_strs why = { 0 };
	json_t *v, *u;
	size_t i, j;
	int k;

	json_array_foreach(json_object_get(m, what), i, v)
		if (jis(v, "status", "skipped"))
			rp_strs_add(&why, jstr(v, "reason"));
	for (k = 0; k < why.n; k++) {
		bool first = true;

		printf("%s", k ? "; " : name);
		json_array_foreach(json_object_get(m, what), j, u) {
			if (!jis(u, "status", "skipped") ||
			    !jis(u, "reason", why.v[k]))
				continue;
			printf("%s%s", first ? "" : ", ",
			       rp_md('t', jstr(u, "name")));
			first = false;
		}
		printf(" (%s)", rp_md('t', why.v[k]));
	}
	if (why.n)
		puts(".");
	rp_strs_free(&why);
}

/* ---- the targets of the whole programs ---- */

/*
 * A target of wl: the design picked (the highest figure k of the
 * per-CPU designs where worst, else the lowest of all designs) over ref,
 * the reference's figure: "sheaf 2.47 / glibc 2.31", or with rname
 * "(1.2 x glibc)" after it, "sheaf 30.0 / 23.7 (1.2 x glibc)".  n/a
 * where why is set.
 */
static void goal(struct rp_tab *t, const json_t *m, const json_t *wl,
		 const char *what, int k, bool worst, const char *rname,
		 double ref, const char *why, double target)
{
	char *w = rp_asprintf("%s: %s", jstr(wl, "name"), what), *f = NULL;
	const char *who;
	struct mstat d;

	who = pick(m, wl, "design", worst ? "locked" : NULL, k, worst, true,
		   &d);
	if (!who)
		why = worst ? "no per-CPU design ran it without a failed run" :
			"no design ran it without a failed run";
	else if (!why && !(ref > 0))
		why = "the reference's figure is 0";
	if (!why) {
		char x[32];

		snprintf(x, sizeof(x), "%s", rp_num(d.f[k].v));
		if (*rname == '(')
			f = rp_asprintf("%s %s / %s %s", who, x, rp_num(ref),
					rname);
		else
			f = rp_asprintf("%s %s / %s %s", who, x, rname,
					rp_num(ref));
	}
	rp_goal_row(t, w, f, why ? NAN : d.f[k].v / ref, target, true, why,
		    NULL);
	free(f);
	free(w);
}

/* The targets of each workload (issue 23), each over a system allocator. */
static const struct target {
	const char *what;
	int fig;
	bool per_cpu;	/* the slowest per-CPU design, not the best design */
	double goal;
} targets[] = {
	{ "elapsed", F_ELAPSED, false, 1.0 },
	{ "per-CPU elapsed", F_ELAPSED, true, 1.1 },
	{ "peak RSS", F_RSS, false, 1.0 },	/* or 1.2 x glibc's */
	{ "minor faults", F_MINOR, false, 1.2 },
};

/*
 * The allocator benchmarks' shapes (a server's remote frees, the
 * multi-size loop) have elapsed goals of their own: the best design
 * within 1.10x of the best system allocator, every per-CPU design within
 * 1.5x.
 */
static const struct shape_goal {
	const char *workload;
	double best, per_cpu;
} shape_goals[] = {
	{ "remotefree", 1.1, 1.5 },
	{ "mixloop-1t", 1.1, 1.5 },
	{ "mixloop-2t", 1.1, 1.5 },
};

static double goal_of(const json_t *wl, const struct target *tg)
{
	size_t i;

	if (tg->fig != F_ELAPSED)
		return tg->goal;
	for (i = 0; i < sizeof(shape_goals) / sizeof(shape_goals[0]); i++)
		if (jis(wl, "name", shape_goals[i].workload))
			return tg->per_cpu ? shape_goals[i].per_cpu :
					     shape_goals[i].best;
	return tg->goal;
}

static void workload_goals(struct rp_tab *t, const json_t *m,
			   const json_t *wl)
{
	const char *base = jstr(m, "ak_baseline"), *sys, *why;
	char *rname, base_why[128];
	struct mstat s, g;
	size_t k;
	double ref;

	snprintf(base_why, sizeof(base_why),
		 "%s did not run it without a failed run", base);
	for (k = 0; k < sizeof(targets) / sizeof(targets[0]); k++) {
		const struct target *tg = &targets[k];

		sys = pick(m, wl, "system", NULL, tg->fig, false, true, &s);
		why = sys ? NULL :
			"no system allocator ran it without a failed run";
		rname = rp_strdup(sys ? sys : "");
		ref = sys ? s.f[tg->fig].v : NAN;
		if (tg->fig == F_RSS && !why) {
			/* max(1.2 x glibc's, the best system allocator's) */
			if (!mstat_of(wl, base, &g) || g.failed) {
				why = base_why;
			} else if (1.2 * g.f[F_RSS].v > ref) {
				ref = 1.2 * g.f[F_RSS].v;
				free(rname);
				rname = rp_asprintf("(1.2 x %s)", base);
			}
		}
		goal(t, m, wl, tg->what, tg->fig, tg->per_cpu, rname, ref, why,
		     goal_of(wl, tg));
		free(rname);
	}
}

/*
 * The allocators left out of the targets, per workload, with their
 * failed runs: "redis: array (1 of 3), sheaf (3 of 3)".
 */
static void goals_left_out(const json_t *m)
{
	const json_t *wl, *a;
	struct mstat st;
	size_t i, j;
	int n = 0, k;

	for (i = 0; (wl = nth_ran(m, "workloads", i)); i++)
		for (k = 0, j = 0; (a = nth_ran(m, "allocators", j)); j++) {
			if (!result_of(wl, jstr(a, "name")))
				continue;
			mstat_of(wl, jstr(a, "name"), &st);
			if (!st.failed)
				continue;
			if (!k++)
				printf("%s%s: ", n++ ? "; " :
				       "\nLeft out of the targets, for their failed runs: ",
				       rp_md('t', jstr(wl, "name")));
			else
				fputs(", ", stdout);
			printf("%s (%d of %d)", rp_md('t', jstr(a, "name")),
			       st.failed, st.runs);
		}
	if (n)
		puts(".");
}

static void macro_targets(const struct rp_set *s, const json_t *m)
{
	const json_t *wl;
	struct rp_tab t;
	size_t i;

	if (!nth_ran(m, "workloads", 0) || !designs_ran(m)) {
		puts("\nNo targets of the whole programs: no design ran a workload.");
		return;
	}
	rp_head(s, "Targets of the whole programs (reported, never asserted)",
		NULL, NULL, NULL);
	printf("Means over the runs, per workload; only an allocator that ran it without a failed run counts. elapsed: the fastest design's elapsed time over the fastest system allocator's (glibc, tcmalloc, jemalloc, mimalloc); per-CPU elapsed: the slowest per-CPU design's (every design but locked) over the same; peak RSS: the leanest design's peak RSS over the larger of 1.2 x %s's and the leanest system allocator's; minor faults: the design with the fewest over the system allocator with the fewest. The allocator benchmarks' shapes (remotefree, mixloop-1t, mixloop-2t) have elapsed goals of 1.10 and 1.5. Each target: met, or its gap to the goal; n/a says which input is missing.%s\n\n",
	       rp_md('t', jstr(m, "ak_baseline")),
	       s->emulated ? " **Emulated: these ratios mean nothing.**" : "");
	rp_tab_init(&t, "llrll");
	rp_row(&t, "target|figures|ratio|goal|verdict");
	for (i = 0; (wl = nth_ran(m, "workloads", i)); i++)
		workload_goals(&t, m, wl);
	rp_tab_print(&t);
	goals_left_out(m);
}

/*
 * Each variant of a design (the same design with a knob changed, e.g.
 * the per-CPU partial slabs off) beside its design, per workload: what
 * the knob buys in elapsed time and in refills of the per-CPU level.
 */
static void variant_table(const struct rp_set *s, const json_t *m)
{
	double dv[NR_CFIELDS], vv[NR_CFIELDS];
	const json_t *wl, *a;
	struct mstat ds, vs;
	struct rp_tab t;
	const char *key;
	json_t *x;
	size_t i, j;
	int rows = 0;

	rp_tab_init(&t, "lllrrrrr");
	rp_row(&t, "workload|design|variant|design s|variant s|variant / design|design refills|variant refills");
	for (i = 0; (wl = nth_ran(m, "workloads", i)); i++)
		for (j = 0; (a = nth_ran(m, "allocators", j)); j++) {
			const char *d = jstr(a, "variant_of");
			char *env = rp_strdup("");

			if (!*d || !mstat_of(wl, d, &ds) ||
			    !mstat_of(wl, jstr(a, "name"), &vs)) {
				free(env);
				continue;
			}
			json_object_foreach(json_object_get(a, "env"), key, x) {
				char *e;

				if (!strcmp(key, "AK_MALLOC_DESIGN"))
					continue;
				e = rp_asprintf("%s%s%s=%s", env, *env ? " " : "",
						key, json_string_value(x) ?
						json_string_value(x) : "");
				free(env);
				env = e;
			}
			rows++;
			rp_cell_as(&t, 't', jstr(wl, "name"));
			rp_cell_as(&t, 't', d);
			rp_cell(&t, "%s", rp_md('c', env));
			rp_cell(&t, "%s%s", rp_num(ds.f[F_ELAPSED].v),
				rp_range(&ds.f[F_ELAPSED]));
			rp_cell(&t, "%s%s", rp_num(vs.f[F_ELAPSED].v),
				rp_range(&vs.f[F_ELAPSED]));
			rp_cell(&t, "%s", rp_num(vs.f[F_ELAPSED].v /
						 ds.f[F_ELAPSED].v));
			if (counters_of(wl, d, dv) &&
			    counters_of(wl, jstr(a, "name"), vv)) {
				rp_cell(&t, "%s", rp_count(dv[1]));
				rp_cell(&t, "%s", rp_count(vv[1]));
			} else {
				rp_cell(&t, "–");
				rp_cell(&t, "–");
			}
			free(env);
		}
	if (!rows)
		return;
	rp_head(s, "Each design beside its variants: one knob changed, the same program",
		NULL, NULL, NULL);
	puts("Means over the runs that were ok (min - max); a variant is its design run with the environment shown (doc/malloc.md), never counted in the targets. AK_SLAB_CPU_PARTIAL=0: no per-CPU partial slabs, so a slab that a free makes partial goes to the node's list under its lock and every refill takes the node lock, as SLUB before 2011 (the 2011 per-CPU partial list patches: refills and elapsed time with and without the list). refills: a per-CPU level ran empty and the slow path went to the slab lists.\n");
	rp_tab_print(&t);
}

void rp_macro_tables(const struct rp_set *s)
{
	const json_t *m = s->macro, *wl;
	size_t i;

	if (!m) {
		puts(s->macro_damaged ?
		     "\nNo whole-program tables: macro.json is damaged (reported on stderr)." :
		     "\nNo whole-program tables: no macro.json in this set (scripts/run-macro writes it; `make bench` runs it after the suites).");
		return;
	}
	printf("\nWhole programs (%s, scripts/run-macro): %s mode, %lld run(s) of each workload under each allocator, interleaved; make -j%lld, %lld threads; revision %s, %s to %s; %lld failed run(s).\n",
	       RP_MACRO_FILE, rp_md('t', jstr(m, "ak_run_mode")),
	       json_integer_value(json_object_get(m, "ak_runs")),
	       json_integer_value(json_object_get(m, "ak_jobs")),
	       json_integer_value(json_object_get(m, "ak_threads")),
	       rp_md('t', jstr(m, "ak_git_rev")),
	       rp_md('t', jstr(m, "ak_run_started")),
	       rp_md('t', jstr(m, "ak_run_finished")),
	       json_integer_value(json_object_get(m, "ak_failures")));
	printf("In each table: seconds; peak RSS in MiB (ru\\_maxrss: the largest resident set of any one process of the run); minor page faults. Cells: the mean of the runs that succeeded, with (min - max) where there are several (the spread the other tables show). elapsed / %s: the ratio of the means (below 1: faster than %s). Failed runs: not ok (an exit status, a signal, the time limit, or an output other than %s's), left out of the means; the note says why.\n",
	       rp_md('t', jstr(m, "ak_baseline")),
	       rp_md('t', jstr(m, "ak_baseline")),
	       rp_md('t', jstr(m, "ak_baseline")));
	if (schema_of(m) < 2)
		puts("\nNo counters of libatomkit-malloc.so beside the tables: the set predates them (ak\\_macro\\_schema 1).");
	else if (designs_ran(m))
		puts("\nUnder each table, the designs' counters of libatomkit-malloc.so (doc/malloc.md, \"Counters\"), each the mean over the runs that were ok of its sum over the processes that reported; procs: how many did (a process that ends by \\_exit, a signal or exec reports nothing); refills: a per-CPU level ran empty and the slow path went to the slab lists; slabs made, freed: carved from the page heap, given back to it; heap misses: page-heap requests that took new address space; madvise: free spans given back to the kernel (their pages fault in again when reused); mapped MiB: the most address space one process held at its exit; fallback: allocations served by the private allocator, not the design's caches (libc's own while the library sets up a process or thread, about as many under every design, and those of a thread that cannot use the per-CPU layer).");
	for (i = 0; (wl = nth_ran(m, "workloads", i)); i++) {
		macro_table(s, m, wl);
		counter_table(m, wl);
	}
	putchar('\n');
	left_out(m, "workloads", "Workloads left out: ");
	left_out(m, "allocators", "Allocators left out: ");
	macro_targets(s, m);
	variant_table(s, m);
}

/* ---- plots: time and RSS relative to the baseline, per workload ---- */

/* A file-name-safe copy of s. */
static char *safe_name(const char *s)
{
	char *r = rp_strdup(s), *p;

	for (p = r; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    *p))
			*p = '_';
	return r;
}

static void plot_workload(struct plots *pl, const struct rp_set *s,
			  const json_t *m, const json_t *wl, const char *tag)
{
	char *w = safe_name(jstr(wl, "name"));
	char *name = rp_asprintf("macro-%s-%s", tag, w);
	char *dat = rp_asprintf("%s.dat", name);
	char *svg = rp_asprintf("%s.svg", name);
	char *title = NULL;
	struct mstat base, st;
	const json_t *a;
	FILE *f, *gp;
	size_t i;

	if (!mstat_of(wl, jstr(m, "ak_baseline"), &base))
		goto out;
	f = rp_plot_file(pl, dat);
	if (!f)
		goto out;
	fprintf(f, "allocator\telapsed / %s\tpeak RSS / %s\n",
		jstr(m, "ak_baseline"), jstr(m, "ak_baseline"));
	for (i = 0; (a = nth_ran(m, "allocators", i)); i++) {
		char *n = safe_name(jstr(a, "name"));

		if (mstat_of(wl, jstr(a, "name"), &st))
			fprintf(f, "%s\t%.6g\t%.6g\n", n,
				st.f[F_ELAPSED].v / base.f[F_ELAPSED].v,
				st.f[F_RSS].v / base.f[F_RSS].v);
		else
			fprintf(f, "%s\t-\t-\n", n);
		free(n);
	}
	if (!rp_plot_file_done(pl, f, dat))
		goto out;
	title = rp_asprintf("%s, %s %s: elapsed and peak RSS / %s (means; lower is better)",
			    jstr(wl, "name"), rp_machine_name(s),
			    rp_set_name(s), jstr(m, "ak_baseline"));
	gp = rp_plot_begin(pl, svg, title);
	fprintf(gp, "set style data histograms\nset style histogram clustered gap 1\n"
		"set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
		"set xtics scale 0 noenhanced\nset ylabel \"relative to %s\"\n"
		"set yrange [0:*]\nset key outside top center horizontal\n"
		"plot \"%s\" using 2:xtic(1) title columnhead(2), \"\" using 3 title columnhead(3), 1 with lines lc \"black\" dt 2 notitle\n",
		jstr(m, "ak_baseline"), dat);
out:
	free(title);
	free(svg);
	free(dat);
	free(name);
	free(w);
}

void rp_macro_plot(struct plots *pl, const struct rp_set *s, const char *tag)
{
	const json_t *wl;
	size_t i;

	for (i = 0; s->macro && (wl = nth_ran(s->macro, "workloads", i)); i++)
		plot_workload(pl, s, s->macro, wl, tag);
}

/* ---- select: the fastest fastpath against the fastest program ---- */

/* The design (kind "design") with the lowest mean elapsed on wl. */
static const char *fastest_design(const json_t *m, const json_t *wl,
				  struct mstat *best)
{
	return pick(m, wl, "design", NULL, F_ELAPSED, false, false, best);
}

/*
 * Why the micro and macro rankings cannot be weighed in set s, NULL if
 * they can.
 */
static const char *no_weighing(const struct rp_set *s, const char *pair)
{
	if (!s->macro)
		return s->macro_damaged ? "its macro.json is damaged" :
			"no whole programs in this set (no macro.json)";
	if (!pair)
		return "no design's 64 B pair in this set";
	return designs_ran(s->macro) ? NULL : "no design ran the whole programs";
}

void rp_macro_select(const struct rp_set *s)
{
	struct rp_fig pair;
	const char *who = rp_best(s, "pair", "size", 64, "", false, &pair);
	const char *why = no_weighing(s, who);
	struct mstat best, mine;
	const json_t *wl;
	int n = 0, lost = 0;
	size_t i;

	puts("\n### Fastpath against whole programs\n");
	if (why) {
		printf("No weighing of the fastpath ranking against the whole programs: %s.\n",
		       rp_md('t', why));
		return;
	}
	printf("The fastest 64 B alloc+free pair among the designs is %s%s%s's (%s %s); the fastest design by mean elapsed time of each whole program (%s):",
	       RP_B, rp_md('t', who), RP_B, rp_num(pair.v), rp_md('t', s->unit),
	       RP_MACRO_FILE);
	for (i = 0; (wl = nth_ran(s->macro, "workloads", i)); i++) {
		const char *fw = fastest_design(s->macro, wl, &best);

		printf("%s %s ", i ? ";" : "", rp_md('t', jstr(wl, "name")));
		if (!fw) {
			fputs("none (no design ran it without failing)", stdout);
			continue;
		}
		n++;
		printf("%s %s s", rp_md('t', fw),
		       rp_num(best.f[F_ELAPSED].v));
		if (!strcmp(fw, who))
			continue;
		lost++;
		if (!mstat_of(wl, who, &mine)) {
			printf(" (%s: no run that succeeded)", rp_md('t', who));
			continue;
		}
		printf(" (%s %s s, %s slower%s)", rp_md('t', who),
		       rp_num(mine.f[F_ELAPSED].v),
		       rp_pct(mine.f[F_ELAPSED].v / best.f[F_ELAPSED].v - 1),
		       rp_noise(&best.f[F_ELAPSED], &mine.f[F_ELAPSED]) ==
		       RP_NOISE ? ", within the runs' min - max" : "");
	}
	if (!lost)
		printf(". %s%s is also the fastest program on every workload (%d).%s\n",
		       RP_B, rp_md('t', who), n, RP_B);
	else
		printf(". %sThe fastest fastpath is not the fastest program on %d of %d workloads.%s\n",
		       RP_B, lost, n, RP_B);
}

/*
 * Across sets: a row of the table of choices, each set's fastest pair
 * and how often each design was the fastest program; "yes" when a
 * workload's fastest design differs between the sets.
 */
void rp_macro_select_row(struct rp_tab *t, struct rp_set *const *sets, int n)
{
	json_t *seen = json_object();
	bool differs = false;
	int i, with = 0;

	rp_cell(t, "fastpath against whole programs");
	for (i = 0; i < n; i++) {
		const struct rp_set *s = sets[i];
		struct rp_fig pair;
		const char *who = rp_best(s, "pair", "size", 64, "", false,
					  &pair);
		const char *why = no_weighing(s, who);
		json_t *wins = json_object(), *v;
		struct mstat best;
		const json_t *wl;
		const char *key;
		char *cell = NULL;
		size_t k, len;
		FILE *f;

		if (s->emulated || why) {
			rp_cell_as(t, 't', s->emulated ? "emulated" : why);
			json_decref(wins);
			continue;
		}
		with++;
		for (k = 0; (wl = nth_ran(s->macro, "workloads", k)); k++) {
			const char *fw = fastest_design(s->macro, wl, &best);
			const char *name = jstr(wl, "name");

			if (!fw)
				continue;
			v = json_object_get(wins, fw);
			json_object_set_new(wins, fw, json_integer(
				json_integer_value(v) + 1));
			v = json_object_get(seen, name);
			if (v && strcmp(json_string_value(v), fw))
				differs = true;
			else if (!v)
				json_object_set_new(seen, name, json_string(fw));
		}
		f = open_memstream(&cell, &len);
		if (!f)
			exit(RP_EXIT_NOTHING);
		fprintf(f, "pair: %s; programs:", who);
		k = 0;
		json_object_foreach(wins, key, v)
			fprintf(f, "%s %s %lld", k++ ? "," : "", key,
				json_integer_value(v));
		if (fclose(f))
			exit(RP_EXIT_NOTHING);
		rp_cell_as(t, 't', cell);
		free(cell);
		json_decref(wins);
	}
	rp_cell(t, "%s", with < 2 ? "–" : differs ? "yes" : "no");
	json_decref(seen);
}
