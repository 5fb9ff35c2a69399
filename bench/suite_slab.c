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
 *   slab/seq_cold/<impl>/size:N  the same, each run on a fresh cache (a
 *                                malloc: in a fresh process)
 *   slab/pair/<impl>/size:N      alloc+free pairs
 *   slab/conc/<impl>/placement:spread/size:N
 *                                every thread N allocs then N frees at
 *                                once (threads 1, 2, .. PUs, 2 x PUs)
 *   slab/remote/<impl>/size:N    each thread frees what its neighbour
 *                                allocated (remote free)
 *   slab/bulk/<impl>/bulk:N      alloc_bulk + free_bulk of N 256-byte
 *   slab/bulk_fallback/<impl>/bulk:N   the same by single calls
 *   slab/bulk_cpu_partial/<design>/<K>/bulk:N
 *   slab/bulk_cpu_partial_fallback/<design>/<K>/bulk:N
 *                                the same for the freelist designs on
 *                                the slab geometry of the bulk patches'
 *                                table (32 objects per slab), without
 *                                (K 0) and with (K default) per-CPU
 *                                partial slabs, and the share of objects
 *                                each level served
 *   slab/pair_mode/<design>/<mode>     pairs of 64 bytes in every
 *                                per-CPU mode
 *   slab/pair_fixed/<design>/size:64   the pairs of a caller built for
 *                                that one design (AK_SLAB_DESIGN):
 *                                array, sheaf, rseq-list
 *   slab/sections/<design>/size:64     the bare rseq sections under
 *                                those pairs, on the cache's own copies
 *                                (rseq modes only)
 *
 * <impl> is a design ("slub-tid", ...) in the default per-CPU mode (rseq
 * where available, else atomic) or "malloc-<name>".  Figures are per
 * object, in the counter's unit and in ns.
 *
 * Every workload but seq_cold measures the steady state of a long-lived
 * cache (or heap), as a program that allocates for minutes sees it: each
 * run of the benchmark creates its cache, then does one whole round of
 * the workload untimed, and only then times.  So no figure counts the
 * first touch of freshly mapped slabs, and none depends on how many
 * batches Google Benchmark's min time asks for.  The "new_slabs" counter
 * says how many slabs were mapped while timed: 0 in a steady state.  The
 * first touch is seq_cold's alone: each of its runs is timed on a cache
 * created for it (untimed) and destroyed after it (untimed), so its
 * figure is the cold start, mmap and page faults included; "slabs" is
 * the number of slabs each run mapped.  With --quick (correctness runs)
 * the untimed round is only a few objects, so those figures are not warm.
 * A malloc has no cache to make
 * afresh: its cold run is the first run of a fresh process of this
 * program (cold_malloc_run()), whose heap nothing has used yet but the
 * program's own start-up.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomkit/slab.h>

#include "akbench.h"
#include "bench.h"
#include "counter.h"
#include "topo.h"

enum wl { WL_SEQ, WL_SEQ_COLD, WL_PAIR, WL_CONC, WL_REMOTE, WL_BULK,
	  WL_BULK_FALLBACK, WL_PAIR_MODE, WL_BULK_CP, WL_BULK_CP_FALLBACK,
	  WL_PAIR_FIXED, WL_SECTIONS, WL_NR };

static const char *const wl_names[WL_NR] = {
	"seq", "seq_cold", "pair", "conc", "remote", "bulk", "bulk_fallback",
	"pair_mode", "bulk_cpu_partial", "bulk_cpu_partial_fallback",
	"pair_fixed", "sections",
};

#define IMPL_MALLOC	AK_SLAB_NR_FASTPATHS
#define SEQ_RUN		10000	/* objects per run, as slab_test */
#define PAIR_WARM	1000	/* untimed pairs before the timed ones */
#define QUICK_WARM	16	/* the untimed rounds' objects with --quick */
#define CONC_RUN	1000	/* per thread, as slab_test's concurrent */
#define BULK_SIZE	256	/* the bulk table's object size */
#define NR(a)		(sizeof(a) / sizeof((a)[0]))
#define BULK_CP_OBJS	32	/* per slab: the bulk patches' 256-byte slabs */

struct sl_bench {
	enum wl wl;
	int impl;			/* a design, or IMPL_MALLOC */
	enum ak_percpu_mode mode;
	bool cpu_partial_off;		/* bulk_cpu_partial: the knob at 0 */
};

static struct sl_bench table[WL_NR * (IMPL_MALLOC + 1) *
			     AK_PERCPU_NR_MODES];
static enum ak_percpu_mode default_mode;
static char malloc_name[32];

/* An untimed round of n objects: a few with --quick (no figures read). */
static size_t warm_count(size_t n)
{
	return akb_quick() && n > QUICK_WARM ? QUICK_WARM : n;
}

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
	struct ak_kmem_cache_args args;	/* what c was made with */
	size_t size;
	unsigned long warm_slabs;	/* slabs mapped when warmed up */
	bool warmed;			/* the untimed round is done */
};

/* Slabs the cache has mapped (it unmaps none before destroy). */
static unsigned long src_slabs(struct src *o)
{
	struct ak_kmem_cache_info i;

	if (!o->c)
		return 0;
	ak_kmem_cache_info(o->c, &i);
	return i.nr_slabs;
}

/* The untimed round is done: what is mapped from now on is counted. */
static void src_warmed(struct akb_state *s, struct src *o)
{
	if (akb_thread_index(s) == 0) {
		o->warm_slabs = src_slabs(o);
		o->warmed = true;
	}
}

static bool src_open(struct akb_state *s, const struct sl_bench *b,
		     size_t size, struct src *o)
{
	char label[256];

	o->c = NULL;
	o->size = size;
	o->warm_slabs = 0;
	o->warmed = false;
	if (b->impl == IMPL_MALLOC) {
		akb_label(s, malloc_which());
		return true;
	}
	if (ak_percpu_set_mode(b->mode)) {
		akb_fail(s, "could not switch the per-CPU mode (per-CPU memory still allocated)");
		return false;
	}
	memset(&o->args, 0, sizeof(o->args));
	if (b->wl == WL_BULK_CP || b->wl == WL_BULK_CP_FALLBACK) {
		long page = sysconf(_SC_PAGESIZE);

		o->args.slab_size = page > 16384 ? (unsigned int)page : 16384;
		o->args.max_objects = BULK_CP_OBJS;
		o->args.cpu_partial = b->cpu_partial_off ?
				      AK_SLAB_CPU_PARTIAL_NONE : 0;
	}
	o->c = ak_kmem_cache_create_args("bench", size, 0, 0,
					 (enum ak_slab_fastpath)b->impl,
					 &o->args);
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

/*
 * A run of a multi-thread workload in which some thread could not
 * allocate: every thread sees it after the run's last barrier, so all
 * stop after the same run.  Reset by thread 0 when all are done.
 */
static int run_failed;

/* n allocations into p, timed into *t: how many were had. */
static uint64_t alloc_run(struct src *o, void **p, uint64_t n, uint64_t *t)
{
	uint64_t i, t0 = akb_ticks();

	for (i = 0; i < n; i++)
		if (!(p[i] = src_alloc(o)))
			break;
	*t = akb_ticks() - t0;
	return i;
}

/* n frees of p (a NULL was not allocated), timed. */
static uint64_t free_run(struct src *o, void **p, uint64_t n)
{
	uint64_t i, t0 = akb_ticks();

	for (i = 0; i < n; i++)
		src_free(o, p[i]);
	return akb_ticks() - t0;
}

/*
 * One run: n allocations into p, then n frees, timed apart into *ta and
 * *tf.  With shared_in (remote free), each thread frees the run another
 * thread allocated, once every thread's run is out; the waits at the
 * barriers are not counted.  A thread that cannot allocate frees what it
 * has (remote: NULLs the rest and still meets the barriers, so that every
 * thread stops after the same run), and the run has failed: false.
 */
static bool run_once(struct akb_state *s, struct src *o, uint64_t n,
		     void **p, void **shared_in, uint64_t *ta, uint64_t *tf)
{
	uint64_t got = alloc_run(o, p, n, ta);

	if (got < n && !shared_in) {
		while (got--)
			src_free(o, p[got]);
		akb_fail(s, SL_NO_OBJECT);
		return false;
	}
	if (got < n) {
		memset(p + got, 0, (n - got) * sizeof(*p));
		__atomic_store_n(&run_failed, 1, __ATOMIC_RELAXED);
	}
	if (shared_in)
		akb_thread_barrier(s);
	*tf = free_run(o, shared_in ? shared_in : p, n);
	if (shared_in) {
		akb_thread_barrier(s);
		if (__atomic_load_n(&run_failed, __ATOMIC_RELAXED)) {
			akb_fail(s, SL_NO_OBJECT);
			return false;
		}
	}
	return true;
}

/* The per-object figures of runs that took ta and tf for objs objects. */
static void run_counters(struct akb_state *s, uint64_t ta, uint64_t tf,
			 uint64_t objs)
{
	phase_counters(s, "alloc", ta);
	phase_counters(s, "free", tf);
	if (ta + tf)
		akb_counter(s, "Mobj_s", (double)objs * akb_counter_info()->hz /
			    (double)(ta + tf) / 1e6);
}

/*
 * Runs of n allocations, then n frees, one per batch, after one untimed
 * run; manual time is both phases.  Threads that each run their own
 * (conc) meet once their untimed run is done, so that no thread times
 * while another still warms up.
 */
static void run_phases(struct akb_state *s, struct src *o, size_t run,
		       void **own, void **shared_in)
{
	uint64_t n, a, f, ta = 0, tf = 0, objs = 0;
	void **p = own ? own : obj_array(s, run);
	bool ok;

	if (!p)
		return;
	/* every thread warms with the same count: remote frees swap runs */
	ok = run_once(s, o, warm_count(run), p, shared_in, &a, &f);
	if (!shared_in && akb_threads(s) > 1) {
		if (!ok)
			__atomic_store_n(&run_failed, 1, __ATOMIC_RELAXED);
		akb_thread_barrier(s);
		if (ok && __atomic_load_n(&run_failed, __ATOMIC_RELAXED)) {
			akb_fail(s, SL_NO_OBJECT);
			ok = false;
		}
	}
	if (!ok)
		goto out;
	src_warmed(s, o);
	while (akb_batch(s, &n)) {
		if (!run_once(s, o, n, p, shared_in, &a, &f))
			goto out;
		ta += a;
		tf += f;
		objs += n;
		akb_set_ticks(s, a + f);
	}
	run_counters(s, ta, tf, objs);
out:
	if (!own)
		free(p);
}

static void bm_seq(struct akb_state *s, struct src *o)
{
	run_phases(s, o, SEQ_RUN, NULL, NULL);
}

/* ---- cold runs ---- */

/*
 * One seq run of n objects of size by malloc in the calling process:
 * "<alloc ticks> <free ticks> <malloc name>" on stdout.  What a fresh
 * process of this program runs for a cold malloc run (main.c), before it
 * does anything else.
 */
int akb_slab_cold_child(const char *spec)
{
	unsigned long long n;
	struct src o = { 0 };
	uint64_t ta, tf, got;
	char kind[16];
	void **p;

	if (sscanf(spec, "%zu,%llu,%15s", &o.size, &n, kind) != 3 ||
	    !o.size || !n || n > SEQ_RUN * 100ull ||
	    akb_counter_select_bare(kind)) {
		fprintf(stderr, "atomkit-bench: bad cold run '%s'\n", spec);
		return 2;
	}
	p = calloc(n, sizeof(*p));
	if (!p) {
		fprintf(stderr, "atomkit-bench: out of memory\n");
		return 1;
	}
	got = alloc_run(&o, p, n, &ta);
	tf = free_run(&o, p, got);
	free(p);
	if (got < n) {
		fprintf(stderr, "atomkit-bench: malloc returned NULL\n");
		return 1;
	}
	printf("%llu %llu %s\n", (unsigned long long)ta,
	       (unsigned long long)tf, malloc_which());
	return 0;
}

/* This program's file, for a fresh process of it. */
static bool self_path(char *buf, size_t len)
{
	ssize_t r = readlink("/proc/self/exe", buf, len - 1);
	const char *fn;

	if (r > 0) {
		buf[r] = 0;
		return true;
	}
	fn = (const char *)getauxval(AT_EXECFN);	/* no /proc */
	if (!fn || strlen(fn) >= len)
		return false;
	strcpy(buf, fn);
	return true;
}

/*
 * Why a cold malloc run has no figure.  Under qemu-user a program cannot
 * always start another of its arch (no binfmt_misc): a documented skip.
 */
static void cold_failed(struct akb_state *s, const char *what)
{
	char m[256];

	if (akb_emulated(NULL)) {
		akb_skip(s, AKB_SKIP_NO_FRESH_PROCESS, what);
		return;
	}
	snprintf(m, sizeof(m), "a cold malloc run in a fresh process: %s",
		 what);
	akb_fail(s, m);
}

/*
 * A cold malloc run: the first run of a fresh process of this program,
 * on a heap nothing has used yet but its start-up.  The process inherits
 * the environment (the preloaded malloc) and this thread's CPU affinity
 * (it runs where this thread is pinned); it reads the same counter and
 * must name the same malloc.  Starting it and waiting for it are not
 * timed.
 */
static bool cold_malloc_run(struct akb_state *s, size_t size, uint64_t n,
			    uint64_t *ta, uint64_t *tf)
{
	char exe[PATH_MAX], arg[96], out[256], name[64], why[200];
	char *argv[] = { exe, arg, NULL };
	posix_spawn_file_actions_t fa;
	unsigned long long a, f;
	size_t got = 0;
	int fd[2], st, rc;
	ssize_t r;
	pid_t pid;

	if (!self_path(exe, sizeof(exe))) {
		cold_failed(s, "this program's path is unknown");
		return false;
	}
	snprintf(arg, sizeof(arg), "--slab-cold-child=%zu,%llu,%s", size,
		 (unsigned long long)n,
		 akb_counter_kind_name(akb_counter_info()->kind));
	if (pipe2(fd, O_CLOEXEC)) {
		akb_fail(s, "pipe2 failed");
		return false;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc) {
		close(fd[0]);
		snprintf(why, sizeof(why), "could not start it (%s)",
			 strerror(rc));
		cold_failed(s, why);
		return false;
	}
	while (got < sizeof(out) - 1) {
		r = read(fd[0], out + got, sizeof(out) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	out[got] = 0;
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) ||
	    sscanf(out, "%llu %llu %63s", &a, &f, name) != 3) {
		snprintf(why, sizeof(why),
			 "it ended with status %d and said '%.60s'",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
		cold_failed(s, why);
		return false;
	}
	if (strcmp(name, malloc_which())) {
		snprintf(why, sizeof(why), "it ran on %s, not %s", name,
			 malloc_which());
		cold_failed(s, why);
		return false;
	}
	*ta = a;
	*tf = f;
	return true;
}

/*
 * seq_cold: each batch is one run on a cache created for it and destroyed
 * after it (neither timed), or one run in a fresh process (malloc).
 */
static void bm_seq_cold(struct akb_state *s, const struct sl_bench *b,
			size_t size)
{
	uint64_t n, a, f, ta = 0, tf = 0, objs = 0, slabs = 0, runs = 0;
	bool mall = b->impl == IMPL_MALLOC, ok;
	void **p = mall ? NULL : obj_array(s, SEQ_RUN);
	struct src o;

	if (!mall && !p)
		return;
	if (mall)
		akb_label(s, malloc_which());
	while (akb_batch(s, &n)) {
		if (mall) {
			if (!cold_malloc_run(s, size, n, &a, &f))
				break;
		} else {
			if (!src_open(s, b, size, &o))
				break;
			ok = run_once(s, &o, n, p, NULL, &a, &f);
			slabs += src_slabs(&o);
			src_close(s, &o);
			if (!ok)
				break;
		}
		ta += a;
		tf += f;
		objs += n;
		runs++;
		akb_set_ticks(s, a + f);
	}
	if (runs) {
		run_counters(s, ta, tf, objs);
		if (!mall)
			akb_counter(s, "slabs", (double)slabs / (double)runs);
	}
	free(p);
}

static void bm_pair(struct akb_state *s, struct src *o)
{
	uint64_t n, i;
	void *p;

	for (i = 0; i < warm_count(PAIR_WARM); i++) {
		ALLOC_OR_FAIL(s, o, p);
		src_free(o, p);
	}
	src_warmed(s, o);
	if (o->c) {
		/*
		 * The cache's calls inline in the loop, as a caller has
		 * them: no test of the source, no call of our own around
		 * them (their sections are asm volatile: never paired away).
		 */
		struct ak_kmem_cache *c = o->c;
		bool none = false;

		while (akb_batch(s, &n) && !none)
			for (i = 0; i < n; i++) {
				p = ak_kmem_cache_alloc(c, 0);
				none |= !p;
				ak_kmem_cache_free(c, p);
			}
		if (none)
			akb_fail(s, SL_NO_OBJECT);
		return;
	}
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++) {
			ALLOC_OR_FAIL(s, o, p);
			src_free(o, p);
		}
out:
	return;
}

/*
 * The pairs of a caller built for one design (AK_SLAB_DESIGN), kind a
 * constant in each loop as it is in such a build.
 */
__ak_inline void pair_fixed(struct akb_state *s, struct ak_kmem_cache *c,
			    unsigned int kind)
{
	uint64_t n, i;
	bool none = false;
	void *p;

	while (akb_batch(s, &n) && !none)
		for (i = 0; i < n; i++) {
			p = __ak_kmem_cache_alloc_kind(c, 0, kind);
			none |= !p;
			__ak_kmem_cache_free_kind(c, p, kind);
		}
	if (none)
		akb_fail(s, SL_NO_OBJECT);
}

/* bm_pair's untimed pairs; false (the run failed) on a NULL. */
static bool pairs_warmed(struct akb_state *s, struct src *o)
{
	uint64_t i;
	void *p;

	for (i = 0; i < warm_count(PAIR_WARM); i++) {
		ALLOC_OR_FAIL(s, o, p);
		src_free(o, p);
	}
	src_warmed(s, o);
	return true;
out:
	return false;
}

static void bm_pair_fixed(struct akb_state *s, struct src *o, int impl)
{
	if (!pairs_warmed(s, o))
		return;
	if (impl == AK_SLAB_ARRAY)
		pair_fixed(s, o->c, __AK_SLAB_INLINE_ARRAY);
	else if (impl == AK_SLAB_SHEAF)
		pair_fixed(s, o->c, __AK_SLAB_INLINE_SHEAF);
	else
		pair_fixed(s, o->c, __AK_SLAB_INLINE_LIST);
}

/*
 * The bare rseq sections the design's inline fastpath runs, on this
 * cache's own per-CPU copies, as a port written by hand runs them: the
 * thread's area and id field taken once, the limit and the owner's mask
 * kept in registers.  Timed right after the design's pairs, in the same
 * process, so that a pair and the sections under it are not minutes
 * apart.  A copy found empty or full (never, pinned and warm) ends the
 * run as a failure, the object in hand given back through the cache.
 * One function per design, so that the compiler cannot merge the three
 * loops into one that tests the design on every pass.
 */
struct sections {
	struct ak_kmem_cache *c;
	const struct ak_kmem_cache_fast *f;
	struct ak_rseq_abi *rs;
	const uint32_t *idp;
	unsigned long limit;
	uintptr_t mask;
};

#define SECTIONS_FN(name, pop, push)					\
static __attribute__((noinline)) void					\
name(struct akb_state *s, const struct sections *x)			\
{									\
	const struct ak_kmem_cache_fast *f = x->f;			\
	struct ak_rseq_abi *rs = x->rs;					\
	const uint32_t *idp = x->idp;					\
	unsigned long limit = x->limit;					\
	uintptr_t mask = x->mask;					\
	void *p, *lost = NULL;						\
	bool stop = false;						\
	uint64_t n, i;							\
	int rc;								\
									\
	(void)limit;							\
	(void)mask;							\
	while (!stop && akb_batch(s, &n))				\
		for (i = 0; i < n; i++) {				\
			while ((rc = (pop)) < 0)			\
				ak_rseq_count_abort();			\
			if (ak_unlikely(rc)) {				\
				stop = true;				\
				break;					\
			}						\
			while ((rc = (push)) < 0)			\
				ak_rseq_count_abort();			\
			if (ak_unlikely(rc)) {				\
				lost = p;				\
				stop = true;				\
				break;					\
			}						\
		}							\
	if (lost)							\
		ak_kmem_cache_free(x->c, lost);				\
	if (stop)							\
		akb_fail(s, "the design's per-CPU copy ran empty or "	\
			 "full under its bare sections");		\
}

SECTIONS_FN(sections_array,
	    ak_rseq_array_pop(rs, idp, &f->cpu, &f->cpu_stride, &p),
	    ak_rseq_array_push(rs, idp, &f->cpu, &f->cpu_stride, limit, p))
SECTIONS_FN(sections_sheaf,
	    ak_rseq_array_ptr_pop(rs, idp, &f->cpu, &f->cpu_stride, &p),
	    ak_rseq_array_ptr_push(rs, idp, &f->cpu, &f->cpu_stride, limit,
				   p))
SECTIONS_FN(sections_list,
	    ak_rseq_list_pop(rs, idp, &f->cpu, &f->cpu_stride, &p),
	    ak_rseq_list_push_owned(rs, idp, &f->cpu, &f->cpu_stride,
				    (uintptr_t)p & mask, p))
#undef SECTIONS_FN

static void bm_sections(struct akb_state *s, struct src *o, int impl,
			enum ak_percpu_mode m)
{
	struct sections x;

	if (!pairs_warmed(s, o))
		return;
	x.c = o->c;
	x.f = __ak_kmem_cache_fast(o->c);
	x.rs = ak_rseq_area();
	if (!x.rs) {	/* the warm round registers it; never, but no crash */
		akb_fail(s, "the thread has no rseq area after its warm round");
		return;
	}
	x.idp = ak_rseq_id_field(x.rs, m);
	x.limit = x.f->limit;
	x.mask = x.f->slab_mask;
	if (impl == AK_SLAB_ARRAY)
		sections_array(s, &x);
	else if (impl == AK_SLAB_SHEAF)
		sections_sheaf(s, &x);
	else
		sections_list(s, &x);
}

/*
 * Each thread's run of objects, for its neighbour to free (remote): one
 * per thread of the remote runs, remote_threads() of them.
 */
static void ***remote_runs;
static int remote_nr;

/* One per PU, at least two, within what the program allows. */
static int remote_threads(void)
{
	int t = akb_nr_pus() > 2 ? akb_nr_pus() : 2;

	return t < akb_max_threads() ? t : akb_max_threads();
}

static void bm_remote(struct akb_state *s, struct src *o)
{
	int t = akb_thread_index(s), nt = akb_threads(s), k;
	bool all = true;

	if (nt > remote_nr) {
		/* every thread, before the first barrier: none waits */
		akb_fail(s, remote_nr ?
			 "more threads than the remote runs planned" :
			 "out of memory for the remote runs' list");
		return;
	}
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
 * What share of a bulk request each level served (the question the bulk
 * threads' reviewers asked): from_cpu the per-CPU level and the CPU's
 * own slab, from_cpu_partial the CPU's partial slabs, from_node the
 * shared partial lists, from_new new slabs.  Those counts are kept only
 * with AK_SLAB_STATS, which would add their cost to the timed calls, so
 * they come from an untimed twin: a cache of the same design, size and
 * arguments with statistics, warmed and run through the same calls.
 */
#define BULK_PROBE_CALLS	10000

static void bulk_levels(struct akb_state *s, const struct src *o,
			size_t bulk, void **p)
{
	static const struct {
		const char *name;
		enum ak_slab_stat stat;
	} lv[] = {
		{ "from_cpu", AK_SLAB_BULK_ALLOC_CPU },
		{ "from_cpu_partial", AK_SLAB_BULK_ALLOC_CPU_PARTIAL },
		{ "from_node", AK_SLAB_BULK_ALLOC_PARTIAL },
		{ "from_new", AK_SLAB_BULK_ALLOC_NEW },
	};
	uint64_t st[AK_SLAB_NR_STATS], st0[AK_SLAB_NR_STATS], objs;
	struct ak_kmem_cache_info info;
	struct ak_kmem_cache *twin;
	size_t k;
	int i;

	ak_kmem_cache_info(o->c, &info);
	twin = ak_kmem_cache_create_args("bench-stats", o->size, 0,
					 AK_SLAB_STATS, info.fastpath,
					 &o->args);
	if (!twin)
		return;
	for (i = 0; i < 2 * BULK_PROBE_CALLS; i++) {
		if (i == BULK_PROBE_CALLS)	/* the first half warms up */
			ak_kmem_cache_stats(twin, st0);
		if (!ak_kmem_cache_alloc_bulk(twin, 0, bulk, p))
			break;
		ak_kmem_cache_free_bulk(twin, bulk, p);
	}
	ak_kmem_cache_stats(twin, st);
	objs = st[AK_SLAB_BULK_ALLOC_OBJS] - st0[AK_SLAB_BULK_ALLOC_OBJS];
	for (k = 0; i == 2 * BULK_PROBE_CALLS && objs && k < NR(lv); k++)
		akb_counter(s, lv[k].name,
			    (double)(st[lv[k].stat] - st0[lv[k].stat]) /
			    (double)objs);
	ak_kmem_cache_destroy(twin);
}

/* One bulk alloc and free of n objects (by single calls: fallback). */
static inline bool bulk_once(struct src *o, size_t bulk, void **p,
			     bool fallback)
{
	if (fallback || !o->c) {
		if (!bulk_fallback_alloc(o, bulk, p))
			return false;
		bulk_fallback_free(o, bulk, p);
	} else {
		if (!ak_kmem_cache_alloc_bulk(o->c, 0, bulk, p))
			return false;
		ak_kmem_cache_free_bulk(o->c, bulk, p);
	}
	return true;
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
	if (!bulk_once(o, bulk, p, fallback))	/* untimed */
		goto fail;
	src_warmed(s, o);
	while (akb_batch(s, &n))
		for (i = 0; i < n; i += bulk)
			if (!bulk_once(o, bulk, p, fallback))
				goto fail;
	if (o->c && !fallback)
		bulk_levels(s, o, bulk, p);
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
	case WL_SEQ_COLD:
		bm_seq_cold(s, b, (size_t)akb_range(s));
		return;
	case WL_BULK:
	case WL_BULK_FALLBACK:
	case WL_BULK_CP:
	case WL_BULK_CP_FALLBACK:
		size = BULK_SIZE;
		break;
	case WL_PAIR_MODE:
	case WL_PAIR_FIXED:
	case WL_SECTIONS:
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
	case WL_PAIR_FIXED:
		bm_pair_fixed(s, o, b->impl);
		break;
	case WL_SECTIONS:
		bm_sections(s, o, b->impl, b->mode);
		break;
	case WL_CONC:
		run_phases(s, o, CONC_RUN, NULL, NULL);
		break;
	case WL_REMOTE:
		bm_remote(s, o);
		break;
	case WL_BULK:
	case WL_BULK_CP:
		bm_bulk(s, o, false);
		break;
	case WL_BULK_FALLBACK:
	case WL_BULK_CP_FALLBACK:
		bm_bulk(s, o, true);
		break;
	default:
		break;
	}
	if (multi)
		akb_thread_barrier(s);
	if (akb_thread_index(s) == 0) {
		if (o->c && o->warmed)
			akb_counter(s, "new_slabs",
				    (double)(src_slabs(o) - o->warm_slabs));
		src_close(s, o);
		o->size = 0;
		run_failed = 0;	/* every thread is past its runs */
	}
	if (multi)
		akb_thread_barrier(s);
}

static const int seq_sizes[] = {
	8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 16384,
};
static const int cold_sizes[] = { 64, 4096, 16384 };
static const int fixed_sizes[] = { 64 };
static const int conc_sizes[] = { 32, 64, 128, 256, 512, 1024, 2048, 4096 };
static const int bulk_sizes[] = { 1, 8, 16, 30, 32, 64, 128, 256 };
/* around one slab's BULK_CP_OBJS objects, as the bulk patches' table */
static const int bulk_cp_sizes[] = { 8, 16, 30, 32, 48, 64, 128 };

static const char *impl_name(int impl)
{
	return impl == IMPL_MALLOC ? malloc_which() :
		ak_slab_fastpath_name((enum ak_slab_fastpath)impl);
}

static size_t table_used;

static struct sl_bench *table_last(void)
{
	return &table[table_used - 1];
}

/* Workload wl of design impl in per-CPU mode m, named "slab/<wl>/<impl>". */
static struct akb_def *add(enum wl wl, int impl, enum ak_percpu_mode m,
			   unsigned int flags)
{
	struct sl_bench *b = &table[table_used++];
	struct akb_def *d = akb_new("slab", bm_slab, b, flags);

	b->wl = wl;
	b->impl = impl;
	b->mode = m;
	akb_part(d, "workload", wl_names[wl]);
	akb_part(d, "design", impl_name(impl));
	return d;
}

static struct akb_def *reg_sized(enum wl wl, int impl, const int *sizes,
				 size_t nr, const char *argname,
				 unsigned int flags)
{
	struct akb_def *d = add(wl, impl, default_mode, flags);
	size_t k;

	for (k = 0; k < nr; k++)
		akb_add_arg(d, sizes[k]);
	akb_arg_name(d, argname);
	switch (wl) {
	case WL_SEQ:
	case WL_SEQ_COLD:
		akb_set_batch(d, SEQ_RUN);
		break;
	case WL_CONC:
		akb_set_batch(d, CONC_RUN);
		break;
	case WL_REMOTE:
		akb_set_batch(d, CONC_RUN);
		akb_set_threads(d, remote_threads());
		break;
	case WL_BULK:
	case WL_BULK_FALLBACK:
	case WL_BULK_CP:
	case WL_BULK_CP_FALLBACK:
		/* whole bulk calls per batch: 256 is the largest, 1024 /
		 * bulk would not divide for 30 */
		akb_set_batch(d, 30 * 256);
		break;
	default:
		break;
	}
	return d;
}

void akb_suite_slab(void)
{
	struct akb_def *d;
	int impl, m;

	remote_nr = remote_threads();
	remote_runs = calloc((size_t)remote_nr, sizeof(*remote_runs));
	if (!remote_runs)
		remote_nr = 0;	/* the remote runs fail, and say why */
	default_mode = ak_percpu_mode_available(AK_PERCPU_RSEQ, NULL) ?
		AK_PERCPU_RSEQ : AK_PERCPU_ATOMIC;
	for (impl = 0; impl <= IMPL_MALLOC; impl++) {
		reg_sized(WL_SEQ, impl, seq_sizes, NR(seq_sizes), "size",
			  AKB_MANUAL_TIME);
		reg_sized(WL_SEQ_COLD, impl, cold_sizes, NR(cold_sizes),
			  "size", AKB_MANUAL_TIME);
		reg_sized(WL_PAIR, impl, seq_sizes, NR(seq_sizes), "size", 0);
		/* right after: the pairs and their sections in one minute */
		if (impl == AK_SLAB_ARRAY || impl == AK_SLAB_SHEAF ||
		    impl == AK_SLAB_RSEQ_LIST) {
			reg_sized(WL_PAIR_FIXED, impl, fixed_sizes,
				  NR(fixed_sizes), "size", 0);
			d = reg_sized(WL_SECTIONS, impl, fixed_sizes,
				      NR(fixed_sizes), "size", 0);
			if (!ak_percpu_mode_is_rseq(default_mode))
				akb_skip_always(d, AKB_SKIP_RSEQ_ONLY, NULL);
		}
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
		for (m = 0; m < 4 && (impl == AK_SLAB_SLUB_TID ||
				      impl == AK_SLAB_SLUB_LOCAL ||
				      impl == AK_SLAB_RSEQ_LIST); m++) {
			/* m: knob 0, default; bulk, then single calls */
			enum wl wl = m & 2 ? WL_BULK_CP_FALLBACK : WL_BULK_CP;
			size_t k;

			d = add(wl, impl, default_mode, 0);
			table_last()->cpu_partial_off = !(m & 1);
			akb_part(d, "cpu_partial", m & 1 ? "default" : "0");
			for (k = 0; k < NR(bulk_cp_sizes); k++)
				akb_add_arg(d, bulk_cp_sizes[k]);
			akb_arg_name(d, "bulk");
			akb_set_batch(d, 30 * 256);
		}
	for (impl = 0; impl < IMPL_MALLOC; impl++)
		for (m = 0; m < AK_PERCPU_NR_MODES; m++) {
			const char *why = NULL;

			d = add(WL_PAIR_MODE, impl, (enum ak_percpu_mode)m, 0);

			akb_part(d, "mode", ak_percpu_mode_name(
					 (enum ak_percpu_mode)m));
			if (!ak_percpu_mode_available((enum ak_percpu_mode)m,
						      &why))
				akb_skip_always(d, AKB_SKIP_PERCPU_MODE, why);
		}
}
