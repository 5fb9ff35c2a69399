// SPDX-License-Identifier: MIT
/*
 * The slab suites: what each fastpath design of <atomkit/slab.h> costs an
 * allocator, beside the malloc this process runs on (glibc's, or the one
 * scripts/run-bench preloads: tcmalloc, jemalloc, mimalloc, each in a
 * process of its own so that no two share a heap).  The workloads are
 * those of the slab mailing-list threads (doc/benchmarks.md, "Slab"):
 *
 *   slab/seq/<impl>/size:N       N objects allocated, then all freed, in
 *                                runs of 10000 (slab_test's "10000 times
 *                                kmalloc(8)"): alloc and free per object
 *   slab/pair/<impl>/size:N      alloc+free pairs
 *   slab/conc/<impl>/placement:spread/size:N
 *                                every thread N allocs then N frees at
 *                                once (threads 1, 2, .. PUs, 2 x PUs)
 *   slab/remote/<impl>/size:N    each thread frees what its neighbour
 *                                allocated (remote free)
 *   slab/bulk/<impl>/bulk:N      alloc_bulk + free_bulk of N 256-byte
 *   slab/bulk_fallback/<impl>/bulk:N   the same by single calls
 *   slab/pair_mode/<design>/<mode>     pairs of 64 bytes in every
 *                                per-CPU mode
 *
 * <impl> is a design ("slub-tid", ...) in the default per-CPU mode (rseq
 * where available, else atomic) or "malloc-<name>".  Figures are per
 * object, in the counter's unit and in ns.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomkit/slab.h>

#include "akbench.h"
#include "bench.h"
#include "counter.h"
#include "topo.h"

enum wl { WL_SEQ, WL_PAIR, WL_CONC, WL_REMOTE, WL_BULK, WL_BULK_FALLBACK,
	  WL_PAIR_MODE, WL_NR };

static const char *const wl_names[WL_NR] = {
	"seq", "pair", "conc", "remote", "bulk", "bulk_fallback", "pair_mode",
};

#define IMPL_MALLOC	AK_SLAB_NR_FASTPATHS
#define SEQ_RUN		10000	/* objects per run, as slab_test */
#define CONC_RUN	1000	/* per thread, as slab_test's concurrent */
#define BULK_SIZE	256	/* the bulk table's object size */
#define MAX_THREADS	1024

struct sl_bench {
	enum wl wl;
	int impl;			/* a design, or IMPL_MALLOC */
	enum ak_percpu_mode mode;
};

static struct sl_bench table[WL_NR * (IMPL_MALLOC + 1) *
			     AK_PERCPU_NR_MODES];
static enum ak_percpu_mode default_mode;
static char malloc_name[32];

/* Which malloc this process runs on, from where malloc() resolved. */
static const char *malloc_which(void)
{
	static const char *const known[] = {
		"tcmalloc", "jemalloc", "mimalloc",
	};
	void *(*fn)(size_t) = malloc;
	Dl_info info;
	size_t k;

	if (!malloc_name[0]) {
		/* e.g. ASan's interceptor: say so, never claim glibc's */
		snprintf(malloc_name, sizeof(malloc_name), "malloc-other");
		if (!dladdr(*(void **)&fn, &info) || !info.dli_fname)
			return malloc_name;
		if (strstr(info.dli_fname, "/libc.so"))
			snprintf(malloc_name, sizeof(malloc_name),
				 "malloc-glibc");
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (strstr(info.dli_fname, known[k]))
				snprintf(malloc_name, sizeof(malloc_name),
					 "malloc-%s", known[k]);
	}
	return malloc_name;
}

/* Where objects come from: a cache of one design, or malloc. */
struct src {
	struct ak_kmem_cache *c;
	size_t size;
};

static bool src_open(struct akb_state *s, const struct sl_bench *b,
		     size_t size, struct src *o)
{
	char label[256];

	o->c = NULL;
	o->size = size;
	if (b->impl == IMPL_MALLOC) {
		akb_label(s, malloc_which());
		return true;
	}
	if (ak_percpu_set_mode(b->mode)) {
		akb_fail(s, "could not switch the per-CPU mode (per-CPU memory still allocated)");
		return false;
	}
	o->c = ak_kmem_cache_create("bench", size, 0, 0,
				    (enum ak_slab_fastpath)b->impl);
	if (!o->c) {
		akb_fail(s, "ak_kmem_cache_create returned NULL");
		return false;
	}
	if (akb_thread_index(s) == 0) {
		struct ak_kmem_cache_info i;

		ak_kmem_cache_info(o->c, &i);
		snprintf(label, sizeof(label), "%s on %s (%s)",
			 i.fastpath_name, i.mode_name, i.how);
		akb_label(s, label);
	}
	return true;
}

static void src_close(struct akb_state *s, struct src *o)
{
	if (o->c && ak_kmem_cache_destroy(o->c))
		akb_fail(s, "objects left in the cache at destroy: a leak in the benchmark");
	o->c = NULL;
}

static inline void *src_alloc(struct src *o)
{
	void *p = o->c ? ak_kmem_cache_alloc(o->c, 0) : malloc(o->size);

	/* the compiler may not pair a malloc with its free away */
	__asm__ __volatile__("" : "+r"(p));
	return p;
}

static inline void src_free(struct src *o, void *p)
{
	if (o->c)
		ak_kmem_cache_free(o->c, p);
	else
		free(p);
}

/* Per-object figures: a phase's ticks over n objects, in unit and ns. */
static void phase_counters(struct akb_state *s, const char *phase,
			   uint64_t ticks)
{
	const struct akb_counter_info *ci = akb_counter_info();
	char name[64];

	snprintf(name, sizeof(name), "%s_%s", phase, ci->key);
	akb_counter_avg(s, name, (double)ticks);
	snprintf(name, sizeof(name), "%s_ns", phase);
	akb_counter_avg(s, name, (double)ticks * 1e9 / ci->hz);
}

static void **obj_array(struct akb_state *s, size_t n)
{
	void **p = calloc(n, sizeof(*p));

	if (!p)
		akb_fail(s, "out of memory for the object array");
	return p;
}

/* One object that could not be had ends the run as failed. */
#define SL_NO_OBJECT "an allocation returned NULL"
#define ALLOC_OR_FAIL(s, o, dst)					\
	do {								\
		if (!((dst) = src_alloc(o))) {				\
			akb_fail(s, SL_NO_OBJECT);			\
			goto out;					\
		}							\
	} while (0)

/* A remote-free run in which some thread could not allocate. */
static int remote_failed;

/*
 * n allocations, then n frees, per batch; manual time is both phases.
 * With shared_in (remote free), each thread frees the run another thread
 * allocated, once every thread's run is out; the waits at the barriers
 * are not counted.  A thread that cannot allocate ends its run, frees
 * what it has (remote: NULLs the rest and still meets the barriers, and
 * every thread stops after the same batch), and the run has failed.
 */
static void run_phases(struct akb_state *s, struct src *o, size_t run,
		       void **own, void **shared_in)
{
	uint64_t n, i, t0, t1, t2, ta = 0, tf = 0, objs = 0;
	void **p = own ? own : obj_array(s, run);
	void **fr = shared_in ? shared_in : p;

	if (!p)
		return;
	while (akb_batch(s, &n)) {
		t0 = akb_ticks();
		for (i = 0; i < n; i++)
			if (!(p[i] = src_alloc(o)))
				break;
		t1 = akb_ticks();
		if (i < n && !shared_in) {
			while (i--)
				src_free(o, p[i]);
			akb_fail(s, SL_NO_OBJECT);
			goto out;
		}
		if (i < n) {
			memset(p + i, 0, (n - i) * sizeof(*p));
			__atomic_store_n(&remote_failed, 1, __ATOMIC_RELAXED);
		}
		if (shared_in)
			akb_thread_barrier(s);
		t2 = akb_ticks();
		for (i = 0; i < n; i++)
			src_free(o, fr[i]);	/* NULL: not allocated */
		t2 = akb_ticks() - t2;
		if (shared_in) {
			akb_thread_barrier(s);
			if (__atomic_load_n(&remote_failed, __ATOMIC_RELAXED)) {
				akb_fail(s, SL_NO_OBJECT);
				goto out;
			}
		}
		ta += t1 - t0;
		tf += t2;
		objs += n;
		akb_set_ticks(s, (t1 - t0) + t2);
	}
	phase_counters(s, "alloc", ta);
	phase_counters(s, "free", tf);
	if (ta + tf)
		akb_counter(s, "Mobj_s", (double)objs * akb_counter_info()->hz /
			    (double)(ta + tf) / 1e6);
out:
	if (!own)
		free(p);
}

static void bm_seq(struct akb_state *s, struct src *o)
{
	run_phases(s, o, SEQ_RUN, NULL, NULL);
}

static void bm_pair(struct akb_state *s, struct src *o)
{
	uint64_t n, i;
	void *p;

	while (akb_batch(s, &n))
		for (i = 0; i < n; i++) {
			ALLOC_OR_FAIL(s, o, p);
			src_free(o, p);
		}
out:
	return;
}

/* Each thread's run of objects, for its neighbour to free (remote). */
static void **remote_runs[MAX_THREADS];

static void bm_remote(struct akb_state *s, struct src *o)
{
	int t = akb_thread_index(s), nt = akb_threads(s), k;
	bool all = true;

	remote_runs[t] = obj_array(s, CONC_RUN);
	akb_thread_barrier(s);
	/* every thread decides the same, or some would wait for the rest */
	for (k = 0; k < nt; k++)
		all = all && remote_runs[k];
	if (all)
		run_phases(s, o, CONC_RUN, remote_runs[t],
			   remote_runs[(t + 1) % nt]);
	else if (remote_runs[t])
		akb_fail(s, "out of memory for the object array");
	akb_thread_barrier(s);
	free(remote_runs[t]);
	remote_runs[t] = NULL;
	if (t == 0)	/* all are past run_phases() */
		remote_failed = 0;
}

static __attribute__((noinline)) bool
bulk_fallback_alloc(struct src *o, size_t n, void **p)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(p[i] = src_alloc(o))) {
			while (i--)
				src_free(o, p[i]);
			return false;
		}
	return true;
}

static __attribute__((noinline)) void
bulk_fallback_free(struct src *o, size_t n, void **p)
{
	size_t i;

	for (i = 0; i < n; i++)
		src_free(o, p[i]);
}

/*
 * What share of a bulk request the per-CPU level served (the question
 * the bulk threads' reviewers asked).  Those counts are kept only with
 * AK_SLAB_STATS, which would add their cost to the timed calls, so they
 * come from an untimed twin: a cache of the same design and size with
 * statistics, run through the same calls.
 */
#define BULK_PROBE_CALLS	10000

static void bulk_from_cpu(struct akb_state *s, const struct src *o,
			  size_t bulk, void **p)
{
	struct ak_kmem_cache_info info;
	uint64_t st[AK_SLAB_NR_STATS];
	struct ak_kmem_cache *twin;
	int i;

	ak_kmem_cache_info(o->c, &info);
	twin = ak_kmem_cache_create("bench-stats", o->size, 0, AK_SLAB_STATS,
				    info.fastpath);
	if (!twin)
		return;
	for (i = 0; i < BULK_PROBE_CALLS; i++) {
		if (!ak_kmem_cache_alloc_bulk(twin, 0, bulk, p))
			break;
		ak_kmem_cache_free_bulk(twin, bulk, p);
	}
	ak_kmem_cache_stats(twin, st);
	if (i == BULK_PROBE_CALLS && st[AK_SLAB_BULK_ALLOC_OBJS])
		akb_counter(s, "from_cpu",
			    (double)st[AK_SLAB_BULK_ALLOC_CPU] /
			    (double)st[AK_SLAB_BULK_ALLOC_OBJS]);
	ak_kmem_cache_destroy(twin);
}

/* An iteration is one object; a batch is whole bulk calls. */
static void bm_bulk(struct akb_state *s, struct src *o, bool fallback)
{
	size_t bulk = (size_t)akb_range(s);
	uint64_t n, i;
	void **p = obj_array(s, bulk);
	char buf[64];

	if (!p)
		return;
	while (akb_batch(s, &n))
		for (i = 0; i < n; i += bulk) {
			if (fallback || !o->c) {
				if (!bulk_fallback_alloc(o, bulk, p))
					goto fail;
				bulk_fallback_free(o, bulk, p);
			} else {
				if (!ak_kmem_cache_alloc_bulk(o->c, 0, bulk, p))
					goto fail;
				ak_kmem_cache_free_bulk(o->c, bulk, p);
			}
		}
	if (o->c && !fallback)
		bulk_from_cpu(s, o, bulk, p);
	if (!o->c) {
		snprintf(buf, sizeof(buf), "%s (no bulk API: single calls)",
			 malloc_which());
		akb_label(s, buf);
	}
	free(p);
	return;
fail:
	akb_fail(s, "a bulk allocation returned 0");
	free(p);
}

static void bm_slab(struct akb_state *s)
{
	const struct sl_bench *b = akb_arg(s);
	static struct src shared;	/* one cache for all threads */
	struct src own, *o = &own;
	size_t size;
	bool multi = b->wl == WL_CONC || b->wl == WL_REMOTE;

	switch (b->wl) {
	case WL_BULK:
	case WL_BULK_FALLBACK:
		size = BULK_SIZE;
		break;
	case WL_PAIR_MODE:
		size = 64;
		break;
	default:
		size = (size_t)akb_range(s);
	}
	if (multi) {
		/* thread 0 creates the cache the others share */
		o = &shared;
		if (akb_thread_index(s) == 0 && !src_open(s, b, size, o))
			o->c = NULL, o->size = 0;
		akb_thread_barrier(s);
		if (!o->size || (b->impl != IMPL_MALLOC && !o->c)) {
			if (akb_thread_index(s))
				akb_fail(s, "the shared cache could not be set up");
			return;
		}
	} else if (!src_open(s, b, size, o)) {
		return;
	}
	switch (b->wl) {
	case WL_SEQ:
		bm_seq(s, o);
		break;
	case WL_PAIR:
	case WL_PAIR_MODE:
		bm_pair(s, o);
		break;
	case WL_CONC:
		run_phases(s, o, CONC_RUN, NULL, NULL);
		break;
	case WL_REMOTE:
		bm_remote(s, o);
		break;
	case WL_BULK:
		bm_bulk(s, o, false);
		break;
	case WL_BULK_FALLBACK:
		bm_bulk(s, o, true);
		break;
	default:
		break;
	}
	if (multi) {
		akb_thread_barrier(s);
		if (akb_thread_index(s) == 0) {
			src_close(s, o);
			o->size = 0;
		}
		akb_thread_barrier(s);
	} else {
		src_close(s, o);
	}
}

static const int seq_sizes[] = {
	8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 16384,
};
static const int conc_sizes[] = { 32, 64, 128, 256, 512, 1024, 2048, 4096 };
static const int bulk_sizes[] = { 1, 8, 16, 30, 32, 64, 128, 256 };

static const char *impl_name(int impl)
{
	return impl == IMPL_MALLOC ? malloc_which() :
		ak_slab_fastpath_name((enum ak_slab_fastpath)impl);
}

static struct sl_bench *add(enum wl wl, int impl, enum ak_percpu_mode m)
{
	static size_t used;
	struct sl_bench *b = &table[used++];

	b->wl = wl;
	b->impl = impl;
	b->mode = m;
	return b;
}

static void reg_sized(enum wl wl, int impl, const int *sizes, size_t nr,
		      const char *argname, unsigned int flags)
{
	char name[128];
	struct akb_def *d;
	size_t k;

	snprintf(name, sizeof(name), "slab/%s/%s", wl_names[wl],
		 impl_name(impl));
	d = akb_new(name, bm_slab, add(wl, impl, default_mode), flags);
	akb_field(d, "suite", "slab");
	akb_field(d, "workload", wl_names[wl]);
	akb_field(d, "design", impl_name(impl));
	for (k = 0; k < nr; k++)
		akb_add_arg(d, sizes[k]);
	akb_arg_name(d, argname);
	switch (wl) {
	case WL_SEQ:
		akb_set_batch(d, SEQ_RUN);
		break;
	case WL_CONC:
		akb_set_batch(d, CONC_RUN);
		break;
	case WL_REMOTE:
		akb_set_batch(d, CONC_RUN);
		akb_set_threads(d, akb_nr_pus() > 2 ? akb_nr_pus() : 2);
		break;
	case WL_BULK:
	case WL_BULK_FALLBACK:
		/* whole bulk calls per batch: 256 is the largest, 1024 /
		 * bulk would not divide for 30 */
		akb_set_batch(d, 30 * 256);
		break;
	default:
		break;
	}
}

#define NR(a) (sizeof(a) / sizeof((a)[0]))

void akb_suite_slab(void)
{
	char name[128];
	int impl, m;

	default_mode = ak_percpu_mode_available(AK_PERCPU_RSEQ, NULL) ?
		AK_PERCPU_RSEQ : AK_PERCPU_ATOMIC;
	for (impl = 0; impl <= IMPL_MALLOC; impl++) {
		reg_sized(WL_SEQ, impl, seq_sizes, NR(seq_sizes), "size",
			  AKB_MANUAL_TIME);
		reg_sized(WL_PAIR, impl, seq_sizes, NR(seq_sizes), "size", 0);
		reg_sized(WL_CONC, impl, conc_sizes, NR(conc_sizes), "size",
			  AKB_SWEEP | AKB_MANUAL_TIME);
		reg_sized(WL_REMOTE, impl, conc_sizes, NR(conc_sizes), "size",
			  AKB_MANUAL_TIME);
		if (impl != IMPL_MALLOC)
			reg_sized(WL_BULK, impl, bulk_sizes, NR(bulk_sizes),
				  "bulk", 0);
		reg_sized(WL_BULK_FALLBACK, impl, bulk_sizes, NR(bulk_sizes),
			  "bulk", 0);
	}
	for (impl = 0; impl < IMPL_MALLOC; impl++)
		for (m = 0; m < AK_PERCPU_NR_MODES; m++) {
			const char *why = NULL;
			struct akb_def *d;

			snprintf(name, sizeof(name), "slab/pair_mode/%s/%s",
				 impl_name(impl),
				 ak_percpu_mode_name((enum ak_percpu_mode)m));
			d = akb_new(name, bm_slab,
				    add(WL_PAIR_MODE, impl,
					(enum ak_percpu_mode)m), 0);
			akb_field(d, "suite", "slab");
			akb_field(d, "workload", wl_names[WL_PAIR_MODE]);
			akb_field(d, "design", impl_name(impl));
			akb_field(d, "mode", ak_percpu_mode_name(
					  (enum ak_percpu_mode)m));
			if (!ak_percpu_mode_available((enum ak_percpu_mode)m,
						      &why))
				akb_skip_always(d, AKB_SKIP_PERCPU_MODE, why);
		}
}
