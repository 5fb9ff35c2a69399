// SPDX-License-Identifier: MIT
/*
 * The slab cache: every design in every per-CPU mode.  main() runs the
 * suite once per mode in a child process (the mode is fixed per process),
 * as test_percpu does; within a mode each test runs once per design.
 *
 * No object may be handed out twice: the tests claim each object they get
 * by compare-and-exchanging a token into it, which fails if another
 * holder's token is still there; and none may be lost: every cache is
 * audited (each free object in exactly one place, the slab counters
 * agreeing) and destroyed, which fails while any object is unaccounted.
 *
 * Built twice: plainly, and as test_slab_stress with AK_SLAB_STRESS and
 * AK_RSEQ_STRESS, where every window between a snapshot and its commit
 * (slab code and rseq sections) is widened; that build runs the stress
 * tests only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "ak_test.h"

/* every call an inline alloc or free of this file makes to the library */
static __thread unsigned long lib_calls;
#define AK_SLAB_CALL_HOOK(s)	((void)(s), lib_calls++)
#include <atomkit/slab.h>

#if defined(__SANITIZE_ADDRESS__)
# define ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define ASAN 1
# endif
#endif
#ifdef ASAN
/* the allocation-failure test needs malloc to fail, not to abort */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

#define NTHREADS	8
#ifdef AK_SLAB_STRESS
/* every window is widened, a yield in one of eight: fewer ops suffice */
# define ITERS		30000UL		/* per thread, per stress run */
# define DEBUG_ITERS	10000UL
#else
# define ITERS		200000UL
# define DEBUG_ITERS	40000UL
#endif
#define HOLD		48		/* most objects a stress thread holds */
#define MAILBOX		64		/* slots for handing objects over */
#define MIGRATE_EVERY	500		/* ops between affinity changes */
#define STRESS_SIZE	72
#define WATCHDOG_S	300		/* a stress run that hangs fails */

static enum ak_percpu_mode mode;
/*
 * Each mode's suite runs twice: the caches with their default cpu_partial,
 * then (the freelist designs only) with it at 0, today's SLUB of 2007.
 */
static bool cpu_partial_off;

/* ---- reports ---- */

static unsigned long nreports;
static char last_report[512];
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_report(const char *msg, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&report_lock);
	nreports++;
	snprintf(last_report, sizeof(last_report), "%s", msg);
	pthread_mutex_unlock(&report_lock);
}

static unsigned long reports(void)
{
	unsigned long n;

	pthread_mutex_lock(&report_lock);
	n = nreports;
	pthread_mutex_unlock(&report_lock);
	return n;
}

static void expect_report(unsigned long before, const char *what)
{
	if (reports() <= before)
		fail_msg("no report for %s", what);
	print_message("# reported: %s\n", last_report);
}

static uint64_t stat_of(struct ak_kmem_cache *s, enum ak_slab_stat i)
{
	uint64_t st[AK_SLAB_NR_STATS];

	ak_kmem_cache_stats(s, st);
	return st[i];
}

/* ---- per-test design ---- */

static enum ak_slab_fastpath design(void **state)
{
	return (enum ak_slab_fastpath)(intptr_t)*state;
}

/* The smallest slab a cache takes: 4 KiB, or the page if larger. */
static unsigned int small_slab(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 4096 ? (unsigned int)page : 4096;
}

static bool freelist_design(enum ak_slab_fastpath d)
{
	return d == AK_SLAB_SLUB_TID || d == AK_SLAB_SLUB_LOCAL ||
	       d == AK_SLAB_RSEQ_LIST;
}

static struct ak_kmem_cache *make(void **state, size_t size, size_t align,
				  unsigned int flags)
{
	struct ak_kmem_cache *s = ak_kmem_cache_create(
		ak_slab_fastpath_name(design(state)), size, align, flags,
		design(state));

	assert_non_null(s);
	if (cpu_partial_off)
		assert_int_equal(ak_kmem_cache_set_cpu_partial(s, 0), 0);
	return s;
}

/*
 * Every object of every slab in exactly one place, none allocated; with
 * the knob at 0 no slab on a CPU's partial list.
 */
static void destroy_clean(struct ak_kmem_cache *s)
{
	struct ak_kmem_cache_places pl;
	struct ak_kmem_cache_info info;

	ak_kmem_cache_info(s, &info);
	if (ak_kmem_cache_audit_places(s, &pl))
		fail_msg("audit: cache inconsistent (%s)", last_report);
	if (pl.allocated)
		fail_msg("audit: %zu objects unaccounted for", pl.allocated);
	assert_int_equal(pl.slabs, info.nr_slabs);
	assert_int_equal(pl.cpu + pl.cpu_partial + pl.node,
			 pl.slabs * info.objects_per_slab);
	if (!info.cpu_partial)
		assert_int_equal(pl.cpu_partial_slabs, 0);
	assert_int_equal(ak_kmem_cache_destroy(s), 0);
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/* No two of p[0..n) overlap as size-byte objects. */
static void assert_distinct(void **p, size_t n, size_t size)
{
	void **q = malloc(n * sizeof(*q));
	size_t i;

	assert_non_null(q);
	memcpy(q, p, n * sizeof(*q));
	qsort(q, n, sizeof(*q), ptr_cmp);
	for (i = 1; i < n; i++)
		if ((char *)q[i - 1] + size > (char *)q[i])
			fail_msg("objects %p and %p overlap", q[i - 1], q[i]);
	free(q);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* ---- single thread ---- */

static void test_basic(void **state)
{
	enum { N = 5000 };
	struct ak_kmem_cache *s = make(state, 64, 0, 0);
	struct ak_kmem_cache_info info;
	static void *p[N];
	char line[512];
	size_t i;

	ak_kmem_cache_info(s, &info);
	ak_kmem_cache_describe(s, line, sizeof(line));
	print_message("# %s\n", line);
	assert_int_equal(info.mode, ak_percpu_mode());
	assert_string_equal(info.mode_name, ak_percpu_mode_name(mode));
	assert_int_equal(info.fastpath, design(state));
	assert_non_null(info.how);
	for (i = 0; i < N; i++) {
		p[i] = ak_kmem_cache_alloc(s, 0);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % 8, 0);
		memset(p[i], (int)i, 64);
	}
	assert_distinct(p, N, 64);
	assert_int_equal(ak_kmem_cache_audit(s), N);
	for (i = 0; i < N; i += 2)
		ak_kmem_cache_free(s, p[i]);
	for (i = 0; i < N; i += 2)
		assert_non_null(p[i] = ak_kmem_cache_alloc(s, 0));
	assert_distinct(p, N, 64);
	for (i = 0; i < N; i++)
		ak_kmem_cache_free(s, p[i]);
	ak_kmem_cache_free(s, NULL);
	destroy_clean(s);
}

static void test_align_zero(void **state)
{
	static const size_t sizes[] = { 1, 8, 24, 64, 100, 200, 4096, 5000,
					16384 };
	static const size_t aligns[] = { 0, 8, 16, 64, 256, 4096 };
	enum { N = 40 };
	void *p[N];
	size_t i, j, k, b;

	for (i = 0; i < AK_ARRAY_SIZE(sizes); i++) {
		for (j = 0; j < AK_ARRAY_SIZE(aligns); j++) {
			size_t al = aligns[j] ? aligns[j] : 8;
			struct ak_kmem_cache *s = make(state, sizes[i],
						       aligns[j], 0);

			for (k = 0; k < N; k++) {
				p[k] = ak_kmem_cache_alloc(s, 0);
				assert_non_null(p[k]);
				if ((uintptr_t)p[k] % al)
					fail_msg("size %zu align %zu: %p",
						 sizes[i], al, p[k]);
				memset(p[k], 0xff, sizes[i]);
			}
			assert_distinct(p, N, sizes[i]);
			for (k = 0; k < N; k++)
				ak_kmem_cache_free(s, p[k]);
			for (k = 0; k < N; k++) {
				p[k] = ak_kmem_cache_alloc(s, AK_GFP_ZERO);
				assert_non_null(p[k]);
				for (b = 0; b < sizes[i]; b++)
					if (((unsigned char *)p[k])[b])
						fail_msg("size %zu: byte %zu not zeroed",
							 sizes[i], b);
			}
			for (k = 0; k < N; k++)
				ak_kmem_cache_free(s, p[k]);
			destroy_clean(s);
		}
	}
	/* cache-line alignment by flag */
	{
		struct ak_kmem_cache *s = make(state, 40, 0,
					       AK_SLAB_HWCACHE_ALIGN);

		for (k = 0; k < N; k++) {
			p[k] = ak_kmem_cache_alloc(s, 0);
			assert_int_equal((uintptr_t)p[k] % 64, 0);
		}
		for (k = 0; k < N; k++)
			ak_kmem_cache_free(s, p[k]);
		destroy_clean(s);
	}
}

static void test_bulk(void **state)
{
	enum { MAXN = 700, ROUNDS = 300 };
	struct ak_kmem_cache *s = make(state, 128, 0, AK_SLAB_STATS);
	static void *p[MAXN], *keep[MAXN];
	uint64_t x = 0x9e3779b97f4a7c15ull, cpu, part, newn, objs, total = 0;
	size_t r, i, n, nkeep = 0, b;

	for (r = 0; r < ROUNDS; r++) {
		ak_gfp_t fl = r % 3 ? 0 : AK_GFP_ZERO;

		n = 1 + rnd(&x) % (r % 10 ? 64 : MAXN);
		assert_int_equal(ak_kmem_cache_alloc_bulk(s, fl, n, p), (int)n);
		total += n;
		for (i = 0; i < n; i++) {
			assert_non_null(p[i]);
			if (fl)
				for (b = 0; b < 128; b++)
					assert_int_equal(((unsigned char *)p[i])[b], 0);
			memset(p[i], 0x5a, 128);
		}
		assert_distinct(p, n, 128);
		/* shuffle, free part in bulk, part singly, keep some */
		for (i = n; i > 1; i--) {
			size_t j = rnd(&x) % i;
			void *t = p[i - 1];

			p[i - 1] = p[j];
			p[j] = t;
		}
		i = rnd(&x) % (n + 1);
		ak_kmem_cache_free_bulk(s, i, p);
		for (; i < n; i++) {
			if (nkeep < MAXN && rnd(&x) % 4 == 0)
				keep[nkeep++] = p[i];
			else
				ak_kmem_cache_free(s, p[i]);
		}
		if (nkeep > MAXN / 2) {
			ak_kmem_cache_free_bulk(s, nkeep, keep);
			nkeep = 0;
		}
	}
	assert_int_equal(ak_kmem_cache_alloc_bulk(s, 0, 0, p), 0);
	ak_kmem_cache_free_bulk(s, nkeep, keep);
	cpu = stat_of(s, AK_SLAB_BULK_ALLOC_CPU);
	part = stat_of(s, AK_SLAB_BULK_ALLOC_PARTIAL);
	newn = stat_of(s, AK_SLAB_BULK_ALLOC_NEW);
	objs = stat_of(s, AK_SLAB_BULK_ALLOC_OBJS);
	print_message("# bulk: %llu objects: %llu%% per-CPU, %llu%% partial, %llu%% new slabs\n",
		      (unsigned long long)objs,
		      (unsigned long long)(cpu * 100 / objs),
		      (unsigned long long)(part * 100 / objs),
		      (unsigned long long)(newn * 100 / objs));
	/* each level's count adds up to what was asked for */
	assert_int_equal(objs, total);
	assert_true(cpu > 0 && newn > 0);
	assert_int_equal(stat_of(s, AK_SLAB_BULK_ALLOC), ROUNDS);
	destroy_clean(s);

	/* without AK_SLAB_STATS only the slow levels count */
	s = make(state, 128, 0, 0);
	assert_int_equal(ak_kmem_cache_alloc_bulk(s, 0, 40, p), 40);
	ak_kmem_cache_free_bulk(s, 40, p);
	assert_int_equal(stat_of(s, AK_SLAB_BULK_ALLOC), 0);
	assert_int_equal(stat_of(s, AK_SLAB_BULK_ALLOC_CPU), 0);
	assert_int_equal(stat_of(s, AK_SLAB_BULK_FREE_CPU), 0);
	assert_true(stat_of(s, AK_SLAB_BULK_ALLOC_PARTIAL) +
		    stat_of(s, AK_SLAB_BULK_ALLOC_NEW) > 0);
	destroy_clean(s);
}

/* ---- threads: no object twice, none lost ---- */

#define FREE_MARK	0x0f0f0f0f0f0f0f0full
#define POISON64	0x6b6b6b6b6b6b6b6bull
#define TOKEN_TAG	0xa5ull

struct held {
	uint64_t *p;
	uint64_t tok;
};

struct stress {
	struct ak_kmem_cache *s;
	unsigned long iters;
	bool migrate;
	int nallowed;
	cpu_set_t allowed;
	void *mailbox[MAILBOX];
	unsigned long dups, corrupt, nulls;
	pthread_barrier_t go;
};

static bool is_token(uint64_t v)
{
	return (v >> 56) == TOKEN_TAG;
}

#define LAST(p)		((p)[STRESS_SIZE / 8 - 1])

/* Take ownership; a live token of someone else means handed out twice. */
static bool claim(struct stress *st, uint64_t *p, uint64_t tok)
{
	uint64_t cur = __atomic_load_n(&p[1], __ATOMIC_ACQUIRE);

	if (is_token(cur) ||
	    !__atomic_compare_exchange_n(&p[1], &cur, tok, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&st->dups, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "# object %p handed out twice (token %#llx)\n",
			(void *)p, (unsigned long long)cur);
		return false;
	}
	LAST(p) = tok;
	return true;
}

static void release(struct stress *st, uint64_t *p, uint64_t tok)
{
	if (p[1] != tok || LAST(p) != tok) {
		__atomic_fetch_add(&st->corrupt, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "# object %p: token %#llx/%#llx, want %#llx\n",
			(void *)p, (unsigned long long)p[1],
			(unsigned long long)LAST(p), (unsigned long long)tok);
	}
	__atomic_store_n(&p[1], FREE_MARK, __ATOMIC_RELEASE);
}

static void migrate(struct stress *st, unsigned long i, int self)
{
	cpu_set_t one;
	int k, n = (int)((i / MIGRATE_EVERY + (unsigned long)self) %
			 (unsigned long)st->nallowed), c;

	for (c = 0, k = -1; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &st->allowed) && ++k == n)
			break;
	CPU_ZERO(&one);
	CPU_SET(c, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

struct targ {
	struct stress *st;
	int self;
};

static void *stress_thread(void *arg)
{
	struct targ *ta = arg;
	struct stress *st = ta->st;
	struct ak_kmem_cache *s = st->s;
	struct held held[HOLD];
	uint64_t x = 0x2545f4914f6cdd1dull * (uint64_t)(ta->self + 1);
	uint64_t seq = 0;
	/* small holds recycle objects fast: pop A, pop B, push A is common */
	int n = 0, k, hold = 2 + 6 * ta->self;
	unsigned long i;

#define TOKEN()	((TOKEN_TAG << 56) | ((uint64_t)ta->self << 40) | (++seq & 0xffffffffffull))
	pthread_barrier_wait(&st->go);
	for (i = 0; i < st->iters; i++) {
		unsigned int r = (unsigned int)(rnd(&x) % 100);
		uint64_t *p;

		/* after the first error the lists may be cycles: stop */
		if (i % 64 == 0 && (__atomic_load_n(&st->dups, __ATOMIC_RELAXED) ||
				    __atomic_load_n(&st->corrupt, __ATOMIC_RELAXED)))
			return NULL;

		if (st->migrate && i % MIGRATE_EVERY == 0)
			migrate(st, i, ta->self);
		if (r < 45 && n < hold) {
			p = ak_kmem_cache_alloc(s, r & 1 ? AK_GFP_ZERO : 0);
			if (!p) {
				__atomic_fetch_add(&st->nulls, 1, __ATOMIC_RELAXED);
				continue;
			}
			held[n].p = p;
			held[n].tok = TOKEN();
			if (claim(st, p, held[n].tok))
				n++;
		} else if (r < 88 && n) {
			int j = (int)(rnd(&x) % (uint64_t)n);
			struct held h = held[j];

			held[j] = held[--n];
			if (r < 68) {
				release(st, h.p, h.tok);
				ak_kmem_cache_free(s, h.p);
			} else {
				/* hand it over: some other thread frees it */
				uint64_t *q = __atomic_exchange_n(
					&st->mailbox[rnd(&x) % MAILBOX], h.p,
					__ATOMIC_ACQ_REL);

				if (q) {
					release(st, q, q[1]);
					ak_kmem_cache_free(s, q);
				}
			}
		} else if (r < 94) {
			void *b[40];
			size_t m = 1 + rnd(&x) % 40, z;
			uint64_t toks[40];

			if (ak_kmem_cache_alloc_bulk(s, 0, m, b) != (int)m) {
				__atomic_fetch_add(&st->nulls, 1, __ATOMIC_RELAXED);
				continue;
			}
			for (z = 0; z < m; z++) {
				toks[z] = TOKEN();
				if (!claim(st, b[z], toks[z]))
					toks[z] = 0;
			}
			for (z = 0; z < m; z++)
				if (toks[z])
					release(st, b[z], toks[z]);
			if (r & 1) {
				ak_kmem_cache_free_bulk(s, m, b);
			} else {
				for (z = 0; z < m; z++)
					ak_kmem_cache_free(s, b[z]);
			}
		} else if (n) {
			/* several of ours at once, in bulk */
			void *b[HOLD];
			int m = 1 + (int)(rnd(&x) % (uint64_t)n);

			for (k = 0; k < m; k++) {
				release(st, held[n - 1 - k].p, held[n - 1 - k].tok);
				b[k] = held[n - 1 - k].p;
			}
			n -= m;
			ak_kmem_cache_free_bulk(s, (size_t)m, b);
		}
	}
	for (k = 0; k < n; k++) {
		release(st, held[k].p, held[k].tok);
		ak_kmem_cache_free(s, held[k].p);
	}
	return NULL;
}

static void stress(void **state, unsigned int flags, bool mig,
		   unsigned long iters, bool small)
{
	struct stress *st = calloc(1, sizeof(*st));
	struct targ ta[NTHREADS];
	pthread_t th[NTHREADS];
	unsigned long before = reports();
	struct timespec deadline;
	char line[512];
	int i;

	assert_non_null(st);
	CPU_ZERO(&st->allowed);
	sched_getaffinity(0, sizeof(st->allowed), &st->allowed);
	st->nallowed = CPU_COUNT(&st->allowed);
	if (mig && st->nallowed < 2) {
		free(st);
		ak_skip("migration storm needs 2 CPUs, %d allowed", 1);
	}
	if (small) {
		/*
		 * Slabs of 16: slabs fill and empty all the time, so that
		 * every path between a CPU's slab, its partial list and the
		 * node's is taken, by threads that migrate meanwhile.
		 */
		struct ak_kmem_cache_args args = { .slab_size = small_slab(),
						   .max_objects = 16 };

		st->s = ak_kmem_cache_create_args("stress-small", STRESS_SIZE,
						  0, flags, design(state),
						  &args);
		assert_non_null(st->s);
		if (cpu_partial_off)
			assert_int_equal(ak_kmem_cache_set_cpu_partial(st->s, 0),
					 0);
	} else {
		st->s = make(state, STRESS_SIZE, 0, flags);
	}
	st->iters = ak_test_iters(iters);
	st->migrate = mig;
	pthread_barrier_init(&st->go, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		ta[i].st = st;
		ta[i].self = i;
		assert_int_equal(pthread_create(&th[i], NULL, stress_thread,
						&ta[i]), 0);
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WATCHDOG_S;
	for (i = 0; i < NTHREADS; i++) {
		int rc = pthread_timedjoin_np(th[i], NULL, &deadline);

		if (rc == ETIMEDOUT) {
			/* a corrupted list can cycle forever: fail, do not hang */
			printf("# stress: thread %d still running after %d s (%lu objects handed out twice)\n",
			       i, WATCHDOG_S, st->dups);
			fflush(stdout);
			_exit(3);
		}
		assert_int_equal(rc, 0);
	}
	if (st->dups || st->corrupt)
		fail_msg("%lu objects handed out twice, %lu corrupted (cache left as is)",
			 st->dups, st->corrupt);
	for (i = 0; i < MAILBOX; i++) {
		uint64_t *q = st->mailbox[i];

		if (q) {
			release(st, q, q[1]);
			ak_kmem_cache_free(st->s, q);
		}
	}
	pthread_barrier_destroy(&st->go);
	ak_kmem_cache_describe(st->s, line, sizeof(line));
	print_message("# %s: %llu remote frees, %llu fast retries, %llu slabs, %llu busy, cpu partial %llu put %llu taken %llu drained\n",
		      line,
		      (unsigned long long)stat_of(st->s, AK_SLAB_FREE_REMOTE),
		      (unsigned long long)stat_of(st->s, AK_SLAB_FAST_RETRY),
		      (unsigned long long)stat_of(st->s, AK_SLAB_ALLOC_NEW_SLAB),
		      (unsigned long long)stat_of(st->s, AK_SLAB_PCPU_BUSY),
		      (unsigned long long)stat_of(st->s, AK_SLAB_CPU_PARTIAL_FREE),
		      (unsigned long long)stat_of(st->s, AK_SLAB_CPU_PARTIAL_ALLOC),
		      (unsigned long long)stat_of(st->s, AK_SLAB_CPU_PARTIAL_DRAIN));
	/* the knob at 0 is the old path exactly: no slab on a CPU's list */
	if (cpu_partial_off)
		assert_int_equal(stat_of(st->s, AK_SLAB_CPU_PARTIAL_FREE) +
				 stat_of(st->s, AK_SLAB_CPU_PARTIAL_NODE), 0);
	if (st->dups || st->corrupt || st->nulls)
		fail_msg("%lu objects handed out twice, %lu corrupted, %lu failed allocations",
			 st->dups, st->corrupt, st->nulls);
	if (reports() != before)
		fail_msg("%lu reports, last: %s", reports() - before,
			 last_report);
	destroy_clean(st->s);
	free(st);
}

static void test_stress(void **state)
{
	stress(state, 0, false, ITERS, false);
}

static void test_stress_migration(void **state)
{
	stress(state, 0, true, ITERS, true);
}

static void test_stress_debug(void **state)
{
	stress(state, AK_SLAB_DEBUG | AK_SLAB_STATS, true, DEBUG_ITERS, false);
}

/* ---- debug mode catches misuse ---- */

static void test_debug_errors(void **state)
{
	struct ak_kmem_cache *s = make(state, 40, 0, AK_SLAB_DEBUG);
	struct ak_kmem_cache *o = make(state, 40, 0, 0);
	char *p, *q, stack[64];
	void *m = malloc(64);
	unsigned long r;

	p = ak_kmem_cache_alloc(s, 0);
	assert_non_null(p);
	/* a free object reads poisoned, until zeroed */
	assert_int_equal((unsigned char)p[0], 0x6b);
	ak_kmem_cache_free(s, p);

	r = reports();
	ak_kmem_cache_free(s, p);
	expect_report(r, "double free");
	assert_int_equal(stat_of(s, AK_SLAB_DEBUG_DOUBLE_FREE), 1);

	r = reports();
	ak_kmem_cache_free(s, stack);
	expect_report(r, "free of a stack address");
	r = reports();
	ak_kmem_cache_free(s, m);
	expect_report(r, "free of malloc memory");
	q = ak_kmem_cache_alloc(s, 0);
	r = reports();
	ak_kmem_cache_free(s, q + 8);
	expect_report(r, "free of an interior pointer");
	p = ak_kmem_cache_alloc(o, 0);
	r = reports();
	ak_kmem_cache_free(s, p);
	expect_report(r, "free of another cache's object");
	ak_kmem_cache_free(o, p);
	assert_int_equal(stat_of(s, AK_SLAB_DEBUG_BAD_FREE), 4);

#ifndef ASAN
	/* ASan stops these writes itself: there they are its to catch */
	r = reports();
	q[40] = 1;			/* one past the end */
	ak_kmem_cache_free(s, q);
	expect_report(r, "right red zone overwrite");
	assert_int_equal(stat_of(s, AK_SLAB_DEBUG_REDZONE), 1);
	q = ak_kmem_cache_alloc(s, 0);
	ak_kmem_cache_free(s, q);
	r = reports();
	q[3] = 0;			/* after free */
	/* a LIFO design hands q straight back: that alloc checks it */
	p = ak_kmem_cache_alloc(s, 0);
	ak_kmem_cache_free(s, p);
	if (p == q)
		expect_report(r, "write after free");
	else
		print_message("# write after free: %p not reused at once\n",
			      (void *)q);
#else
	ak_kmem_cache_free(s, q);
#endif
	/* destroy with live objects: reported, cache kept */
	p = ak_kmem_cache_alloc(s, AK_GFP_ZERO);
	assert_int_equal(p[39], 0);
	r = reports();
	errno = 0;
	assert_int_equal(ak_kmem_cache_destroy(s), -1);
	assert_int_equal(errno, EBUSY);
	expect_report(r, "destroy with a live object");
	ak_kmem_cache_free(s, p);
	assert_int_equal(ak_kmem_cache_destroy(s), 0);
	destroy_clean(o);
	free(m);
}

static void test_destroy_live(void **state)
{
	struct ak_kmem_cache *s = make(state, 32, 0, 0);
	void *p[3];
	unsigned long r = reports();

	assert_int_equal(ak_kmem_cache_alloc_bulk(s, 0, 3, p), 3);
	assert_int_equal(ak_kmem_cache_audit(s), 3);
	assert_int_equal(ak_kmem_cache_destroy(s), -1);
	assert_int_equal(errno, EBUSY);
	expect_report(r, "destroy with live objects");
	ak_kmem_cache_free_bulk(s, 3, p);
	destroy_clean(s);
}

/* ---- allocation failure: NULL, nothing lost ---- */

static long vm_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0;

	if (f) {
		if (fscanf(f, "%ld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * sysconf(_SC_PAGESIZE);
}

#define CHILD_CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "# child: %s:%d: %s\n", __FILE__, \
				__LINE__, #c);				\
			_exit(1);					\
		}							\
	} while (0)

enum { OOM_MAX = 40000, OOM_BULK = 20000 };

/*
 * fn(fp, flags) in a child, for what may not run in this process (a
 * capped address space, the kmalloc caches' design); its exit status.
 */
static int run_child(int (*fn)(enum ak_slab_fastpath, unsigned int),
		     enum ak_slab_fastpath fp, unsigned int flags)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(fp, flags));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* In a child: the address space capped, or slab mappings refused. */
static int oom_child(enum ak_slab_fastpath fp, unsigned int flags)
{
	struct ak_kmem_cache *s = ak_kmem_cache_create("oom", 256, 0, 0, fp);
	void **p = calloc(OOM_MAX, sizeof(*p)), **b = calloc(OOM_BULK,
							       sizeof(*b));
	struct rlimit old, rl;
	size_t n = 0, i;
	cpu_set_t one;
	void *probe;
	long live;

	(void)flags;
	/*
	 * On one CPU: "what is freed under the cap can be had again" holds
	 * for the CPU that freed it.  A migration between that free and the
	 * allocation after it would leave the object in the first CPU's
	 * slab and ask the second for a new one, which the cap refuses.
	 */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	CHILD_CHECK(s && p && b);
	for (; n < 100; n++) {
		p[n] = ak_kmem_cache_alloc(s, 0);
		CHILD_CHECK(p[n]);
		memset(p[n], (int)n, 256);
	}
	getrlimit(RLIMIT_AS, &old);
	rl = old;
	rl.rlim_cur = (rlim_t)vm_bytes() + (2u << 20);
	CHILD_CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
	/* qemu-user does not apply RLIMIT_AS */
	probe = mmap(NULL, 64u << 20, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe != MAP_FAILED) {
		munmap(probe, 64u << 20);
		return 77;
	}
	for (; n < OOM_MAX; n++) {
		errno = 0;
		p[n] = ak_kmem_cache_alloc(s, 0);
		if (!p[n])
			break;
		memset(p[n], (int)n, 256);
	}
	CHILD_CHECK(n < OOM_MAX);
	CHILD_CHECK(errno == ENOMEM);
	/* all or nothing: a bulk call too big for the rest fails whole */
	CHILD_CHECK(ak_kmem_cache_alloc_bulk(s, 0, OOM_BULK, b) == 0);
	for (i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < 256; k++)
			CHILD_CHECK(((unsigned char *)p[i])[k] ==
				    (unsigned char)i);
	}
	/* what is freed under the cap can be had again */
	ak_kmem_cache_free(s, p[--n]);
	CHILD_CHECK((p[n] = ak_kmem_cache_alloc(s, 0)) != NULL);
	n++;
	setrlimit(RLIMIT_AS, &old);
	/*
	 * The audit allocates its bookkeeping with calloc, which under the
	 * cap only an allocator with room left in its heap can serve (a
	 * preloaded one may have to map: make check-preload): so after it.
	 */
	live = ak_kmem_cache_audit(s);
	CHILD_CHECK(live == (long)n);
	{
		uint64_t st[AK_SLAB_NR_STATS];

		ak_kmem_cache_stats(s, st);
		CHILD_CHECK(st[AK_SLAB_OOM] > 0);
		CHILD_CHECK(st[AK_SLAB_BULK_ALLOC_FAIL] == 1);
		fprintf(stdout, "# %zu objects before mmap failed, %llu refusals\n",
			n, (unsigned long long)st[AK_SLAB_OOM]);
	}
	CHILD_CHECK(ak_kmem_cache_alloc_bulk(s, 0, OOM_BULK, b) == OOM_BULK);
	ak_kmem_cache_free_bulk(s, OOM_BULK, b);
	for (i = 0; i < n; i++)
		ak_kmem_cache_free(s, p[i]);
	CHILD_CHECK(ak_kmem_cache_audit(s) == 0);
	CHILD_CHECK(ak_kmem_cache_destroy(s) == 0);
	free(p);
	free(b);
	return 0;
}

static void test_oom(void **state)
{
	int rc = run_child(oom_child, design(state), 0);

	if (rc == 77)
		ak_skip("RLIMIT_AS is not enforced here (qemu-user)");
	assert_int_equal(rc, 0);
}

/* ---- kmalloc, in a child: its caches' design is fixed per process ---- */

static int kmalloc_child(enum ak_slab_fastpath fp, unsigned int flags)
{
	static void *p[2000];
	size_t n = 0, i, size;
	uint64_t x = 88172645463325252ull;

	CHILD_CHECK(ak_kmalloc_set_fastpath(fp, flags) == 0);
	for (size = 1; size <= AK_KMALLOC_MAX_SIZE; size += 1 + size / 3) {
		char *q = ak_kmalloc(size, 0);
		size_t al;

		CHILD_CHECK(q);
		CHILD_CHECK(ak_ksize(q) >= size);
		al = ak_ksize(q);
		if (!(al & (al - 1)))
			CHILD_CHECK((uintptr_t)q % (al > 4096 ? 4096 : al) == 0);
		memset(q, 0x33, size);
		ak_kfree(q);
		q = ak_kzalloc(size, 0);
		for (i = 0; i < size; i++)
			CHILD_CHECK(q[i] == 0);
		ak_kfree(q);
	}
	CHILD_CHECK(ak_kmalloc_set_fastpath(fp, 0) == -1 && errno == EBUSY);
	CHILD_CHECK(ak_kmalloc(0, 0) == NULL && errno == EINVAL);
	CHILD_CHECK(ak_kmalloc(AK_KMALLOC_MAX_SIZE + 1, 0) == NULL &&
		    errno == EINVAL);
	CHILD_CHECK(ak_kmalloc_cache(0) == NULL);
	CHILD_CHECK(ak_kmalloc_cache(200) == ak_kmalloc_cache(256));
	CHILD_CHECK(ak_kmalloc_cache(96) != ak_kmalloc_cache(128));
	ak_kfree(NULL);
	for (i = 0; i < 20000; i++) {
		if (n < AK_ARRAY_SIZE(p) && rnd(&x) % 2) {
			size = 1 + rnd(&x) % (rnd(&x) % 8 ? 512 : 16384);
			p[n] = ak_kmalloc(size, 0);
			CHILD_CHECK(p[n]);
			memset(p[n], 1, size);
			n++;
		} else if (n) {
			size_t j = rnd(&x) % n;

			ak_kfree(p[j]);
			p[j] = p[--n];
		}
	}
	while (n)
		ak_kfree(p[--n]);
	if (flags & AK_SLAB_DEBUG) {
		unsigned long before = reports();
		char stack[16];

		ak_slab_set_report(on_report, NULL);
		ak_kfree(stack);
		CHILD_CHECK(reports() == before + 1);
	}
	for (size = 8; size <= AK_KMALLOC_MAX_SIZE; size *= 2)
		CHILD_CHECK(ak_kmem_cache_audit(ak_kmalloc_cache(size)) == 0);
	return 0;
}

static void test_kmalloc(void **state)
{
	assert_int_equal(run_child(kmalloc_child, design(state), 0), 0);
	assert_int_equal(run_child(kmalloc_child, design(state), AK_SLAB_DEBUG),
			 0);
}

/* ---- statistics ---- */

static void test_stats(void **state)
{
	struct ak_kmem_cache *s = make(state, 256, 0, AK_SLAB_STATS);
	void *p[100];
	unsigned int i;

	for (i = 0; i < 100; i++)
		p[i] = ak_kmem_cache_alloc(s, 0);
	for (i = 0; i < 100; i++)
		ak_kmem_cache_free(s, p[i]);
	assert_int_equal(stat_of(s, AK_SLAB_ALLOC_FAST), 100);
	assert_int_equal(stat_of(s, AK_SLAB_FREE_FAST), 100);
	assert_true(stat_of(s, AK_SLAB_ALLOC_SLOW) >= 1);
	assert_true(stat_of(s, AK_SLAB_ALLOC_NEW_SLAB) >= 1);
	for (i = 0; i < AK_SLAB_NR_STATS; i++)
		assert_non_null(ak_slab_stat_name((enum ak_slab_stat)i));
	assert_null(ak_slab_stat_name(AK_SLAB_NR_STATS));
	destroy_clean(s);
}

/* ---- the inline fastpaths ---- */

/*
 * Whether a cache's calls run its design's rseq section inline here: in
 * the rseq modes, without debug or statistics, outside ASan, for the
 * designs that have one (include/atomkit/slab/).
 */
static bool inline_expected(struct ak_kmem_cache *s)
{
	struct ak_kmem_cache_info i;

	ak_kmem_cache_info(s, &i);
#if !AK_HAVE_ARCH_RSEQ || defined(ASAN)
	return false;
#else
	return ak_percpu_mode_is_rseq(i.mode) &&
	       !(i.flags & (AK_SLAB_DEBUG | AK_SLAB_STATS)) &&
	       (i.fastpath == AK_SLAB_ARRAY || i.fastpath == AK_SLAB_SHEAF ||
		i.fastpath == AK_SLAB_RSEQ_LIST);
#endif
}

/* On the CPU the thread is on, so that no migration empties its copy. */
static void pin(cpu_set_t *old)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	sched_getaffinity(0, sizeof(*old), old);
	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

/* N warm alloc+free pairs: how many calls went to the library. */
static unsigned long pairs_calls(struct ak_kmem_cache *s, unsigned int n,
				 unsigned long *aborts)
{
	unsigned long calls = lib_calls, a = ak_rseq_aborts();
	unsigned int i;
	void *p;

	for (i = 0; i < n; i++) {
		p = ak_kmem_cache_alloc(s, 0);
		assert_non_null(p);
		*(volatile char *)p = 1;
		ak_kmem_cache_free(s, p);
	}
	*aborts = ak_rseq_aborts() - a;
	return lib_calls - calls;
}

/*
 * The calls take the inline path exactly where the mode report says so:
 * once the thread's copy has objects (and, rseq-list, its slot a slab),
 * a pinned thread's pairs make no call but after an aborted section.
 * Elsewhere every call goes to the library, as do __GFP_ZERO, and debug
 * and statistics caches, whose checked path refuses a foreign object.
 */
static void test_inline(void **state)
{
	enum { N = 1000 };
	struct ak_kmem_cache *s = make(state, 64, 0, 0);
	struct ak_kmem_cache *st = make(state, 64, 0, AK_SLAB_STATS);
	struct ak_kmem_cache *dbg = make(state, 64, 0, AK_SLAB_DEBUG);
	struct ak_kmem_cache_info info;
	unsigned long calls, aborts, r;
	bool inl = inline_expected(s);
	cpu_set_t old;
	char *p;

	ak_kmem_cache_info(s, &info);
	print_message("# %s: %s\n", inl ? "inline" : "calls", info.how);
	assert_int_equal(strstr(info.how, "inline") != NULL, inl);
	assert_false(inline_expected(st) || inline_expected(dbg));
	pin(&old);
	ak_kmem_cache_free(s, ak_kmem_cache_alloc(s, 0));
	calls = pairs_calls(s, N, &aborts);
	if (inl) {
		print_message("# %lu calls, %lu aborts in %d pairs\n", calls,
			      aborts, N);
		/*
		 * A pinned thread keeps its CPU; its mm_cid, which the
		 * kernel hands out, may change under it once (a refill
		 * and a flush of the new slot's copy).
		 */
		assert_true(calls <= aborts +
			    (mode == AK_PERCPU_RSEQ_MM_CID ? 4 : 0));
	} else {
		assert_int_equal(calls, 2 * N);
	}
	ak_kmem_cache_free(st, ak_kmem_cache_alloc(st, 0));
	assert_int_equal(pairs_calls(st, N, &aborts), 2 * N);
	assert_int_equal(stat_of(st, AK_SLAB_ALLOC_FAST), N + 1);
	assert_int_equal(stat_of(st, AK_SLAB_FREE_FAST), N + 1);

	calls = lib_calls;
	p = ak_kmem_cache_alloc(s, AK_GFP_ZERO);
	assert_non_null(p);
	assert_int_equal(lib_calls - calls, 1);
	assert_int_equal(p[0] | p[63], 0);

	r = reports();
	calls = lib_calls;
	ak_kmem_cache_free(dbg, p);
	expect_report(r, "free of another cache's object");
	assert_int_equal(lib_calls - calls, 1);
	assert_int_equal(stat_of(dbg, AK_SLAB_DEBUG_BAD_FREE), 1);
	ak_kmem_cache_free(s, p);
	sched_setaffinity(0, sizeof(old), &old);
	destroy_clean(s);
	destroy_clean(st);
	destroy_clean(dbg);
}

/* tests/slab_design_array.c: a file built with AK_SLAB_DESIGN=array */
extern __thread unsigned long design_array_calls;
void *design_array_alloc(struct ak_kmem_cache *s);
void design_array_free(struct ak_kmem_cache *s, void *p);

/* Through the calls of a build fixed to design kind k (3: that file's). */
static void *alloc_fixed(struct ak_kmem_cache *s, unsigned int k)
{
	switch (k) {
	case 0: return __ak_kmem_cache_alloc_kind(s, 0, __AK_SLAB_INLINE_ARRAY);
	case 1: return __ak_kmem_cache_alloc_kind(s, 0, __AK_SLAB_INLINE_SHEAF);
	case 2: return __ak_kmem_cache_alloc_kind(s, 0, __AK_SLAB_INLINE_LIST);
	default: return design_array_alloc(s);
	}
}

static void free_fixed(struct ak_kmem_cache *s, void *p, unsigned int k)
{
	switch (k) {
	case 0: __ak_kmem_cache_free_kind(s, p, __AK_SLAB_INLINE_ARRAY); break;
	case 1: __ak_kmem_cache_free_kind(s, p, __AK_SLAB_INLINE_SHEAF); break;
	case 2: __ak_kmem_cache_free_kind(s, p, __AK_SLAB_INLINE_LIST); break;
	default: design_array_free(s, p); break;
	}
}

/*
 * A caller built for one design (AK_SLAB_DESIGN) runs inline exactly on
 * the caches of that design that the library runs inline, and calls the
 * library for every other cache, whatever its design or mode: each fixed
 * kind's calls on this design's cache, and those of a file built with
 * AK_SLAB_DESIGN=array.
 */
static void test_fixed_design(void **state)
{
	enum { N = 500 };
	static const enum ak_slab_fastpath of_kind[] = {
		AK_SLAB_ARRAY, AK_SLAB_SHEAF, AK_SLAB_RSEQ_LIST, AK_SLAB_ARRAY,
	};
	struct ak_kmem_cache *s = make(state, 64, 0, 0);
	unsigned long calls, a;
	unsigned int k, i;
	cpu_set_t old;
	bool mine;
	void *p;

	pin(&old);
	ak_kmem_cache_free(s, ak_kmem_cache_alloc(s, 0));
	for (k = 0; k < AK_ARRAY_SIZE(of_kind); k++) {
		mine = inline_expected(s) && design(state) == of_kind[k];
		calls = lib_calls + design_array_calls;
		a = ak_rseq_aborts();
		for (i = 0; i < N; i++) {
			p = alloc_fixed(s, k);
			assert_non_null(p);
			*(volatile char *)p = 1;
			free_fixed(s, p, k);
		}
		calls = lib_calls + design_array_calls - calls;
		a = ak_rseq_aborts() - a;
		print_message("# kind %u: %lu calls, %lu aborts in %d pairs\n",
			      k, calls, a, N);
		if (mine)	/* as test_inline: mm_cid may move once */
			assert_true(calls <= a + (mode == AK_PERCPU_RSEQ_MM_CID ?
						  4 : 0));
		else
			assert_int_equal(calls, 2 * N);
	}
	sched_setaffinity(0, sizeof(old), &old);
	destroy_clean(s);
}

/*
 * The freelist designs free onto the per-CPU list only objects of the
 * slab the slot owns; rseq-list's inline free checks that inside its
 * section.  A slot that used up one slab owns the next, and an object
 * of the first then goes to its slab: one call, one remote free.
 */
static void test_owner_check(void **state)
{
	struct ak_kmem_cache *s;
	struct ak_kmem_cache_info info;
	unsigned long calls, remote, a;
	size_t n, i;
	cpu_set_t old;
	void **p;

	if (design(state) != AK_SLAB_SLUB_TID &&
	    design(state) != AK_SLAB_SLUB_LOCAL &&
	    design(state) != AK_SLAB_RSEQ_LIST)
		ak_skip("the freelist designs own slabs; this one draws objects from any");
	s = make(state, 64, 0, 0);
	ak_kmem_cache_info(s, &info);
	n = info.objects_per_slab;
	p = calloc(n + 1, sizeof(*p));
	assert_non_null(p);
	pin(&old);
	for (i = 0; i <= n; i++)
		assert_non_null(p[i] = ak_kmem_cache_alloc(s, 0));
	/* the first slab's objects, all on the slot's list, then a new one */
	assert_true(((uintptr_t)p[0] ^ (uintptr_t)p[n - 1]) < info.slab_size);
	assert_true(((uintptr_t)p[0] ^ (uintptr_t)p[n]) >= info.slab_size);

	remote = stat_of(s, AK_SLAB_FREE_REMOTE);
	calls = lib_calls;
	a = ak_rseq_aborts();
	ak_kmem_cache_free(s, p[n]);		/* the owned slab's */
	assert_int_equal(stat_of(s, AK_SLAB_FREE_REMOTE), remote);
	ak_kmem_cache_free(s, p[0]);		/* the first slab's */
	assert_int_equal(stat_of(s, AK_SLAB_FREE_REMOTE), remote + 1);
	if (inline_expected(s))
		assert_true(lib_calls - calls >= 1 &&
			    lib_calls - calls <= 1 + ak_rseq_aborts() - a);
	else
		assert_int_equal(lib_calls - calls, 2);
	sched_setaffinity(0, sizeof(old), &old);
	for (i = 1; i < n; i++)
		ak_kmem_cache_free(s, p[i]);
	free(p);
	destroy_clean(s);
}

/*
 * Threads, each on whatever CPU it is moved to, allocate a round of
 * objects, stamp each, and free their neighbour's: every free of a
 * foreign object, every CPU's copy in use at once.  A stamp found
 * changed is an object handed out twice.  At the end each holds one
 * round: the audit must count exactly those.
 */
#define HANDOFF_THREADS	4
#define HANDOFF_K	96
#ifdef AK_SLAB_STRESS
# define HANDOFF_ROUNDS	500UL
#else
# define HANDOFF_ROUNDS	2000UL
#endif

struct handoff {
	struct ak_kmem_cache *s;
	unsigned long rounds, bad;
	pthread_barrier_t b;
	uint64_t *box[HANDOFF_THREADS][HANDOFF_K];
};

struct handoff_arg {
	struct handoff *h;
	unsigned int self;
};

static uint64_t stamp(unsigned int t, unsigned long r, unsigned int k)
{
	return ((uint64_t)t << 48) | ((uint64_t)r << 16) | k;
}

static void *handoff_thread(void *arg)
{
	struct handoff_arg *a = arg;
	struct handoff *h = a->h;
	unsigned int me = a->self, nb = (me + 1) % HANDOFF_THREADS, k;
	unsigned long r;

	for (r = 0;; r++) {
		for (k = 0; k < HANDOFF_K; k++) {
			uint64_t *p = ak_kmem_cache_alloc(h->s, 0);

			if (!p)
				abort();
			p[0] = p[7] = stamp(me, r, k);
			h->box[me][k] = p;
		}
		if (r == h->rounds)
			return NULL;	/* the last round is held */
		pthread_barrier_wait(&h->b);
		for (k = 0; k < HANDOFF_K; k++) {
			uint64_t *p = h->box[nb][k];

			if (p[0] != stamp(nb, r, k) || p[7] != p[0])
				__atomic_fetch_add(&h->bad, 1,
						   __ATOMIC_RELAXED);
			ak_kmem_cache_free(h->s, p);
		}
		pthread_barrier_wait(&h->b);
	}
}

static void test_stress_inline_handoff(void **state)
{
	struct handoff *h = calloc(1, sizeof(*h));
	struct handoff_arg args[HANDOFF_THREADS];
	pthread_t th[HANDOFF_THREADS];
	unsigned int t;

	assert_non_null(h);
	h->s = make(state, 64, 0, 0);
	h->rounds = ak_test_iters(HANDOFF_ROUNDS);
	pthread_barrier_init(&h->b, NULL, HANDOFF_THREADS);
	for (t = 0; t < HANDOFF_THREADS; t++) {
		args[t].h = h;
		args[t].self = t;
		assert_int_equal(pthread_create(&th[t], NULL, handoff_thread,
						&args[t]), 0);
	}
	for (t = 0; t < HANDOFF_THREADS; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);
	assert_int_equal(h->bad, 0);
	assert_distinct((void **)h->box, HANDOFF_THREADS * HANDOFF_K, 64);
	assert_int_equal(ak_kmem_cache_audit(h->s),
			 HANDOFF_THREADS * HANDOFF_K);
	for (t = 0; t < HANDOFF_THREADS; t++)
		ak_kmem_cache_free_bulk(h->s, HANDOFF_K, (void **)h->box[t]);
	pthread_barrier_destroy(&h->b);
	destroy_clean(h->s);
	free(h);
}

/* ---- per-CPU partial slabs (the freelist designs) ---- */

/* The kernel's set_cpu_partial() by stride. */
static void check_knob_default(enum ak_slab_fastpath d, size_t size,
			       unsigned int want)
{
	struct ak_kmem_cache *s = ak_kmem_cache_create("knob", size, 0, 0, d);
	struct ak_kmem_cache_info i;

	assert_non_null(s);
	ak_kmem_cache_info(s, &i);
	assert_int_equal(i.cpu_partial, freelist_design(d) ? want : 0);
	assert_int_equal(ak_kmem_cache_destroy(s), 0);
}

static void test_cpu_partial_knob(void **state)
{
	enum ak_slab_fastpath d = design(state);
	struct ak_kmem_cache_args args = { .cpu_partial = 40 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ak_kmem_cache_info i;
	struct ak_kmem_cache *s;

	check_knob_default(d, 64, 120);
	check_knob_default(d, 256, 52);
	check_knob_default(d, 1024, 24);
	if (page <= AK_KMALLOC_MAX_SIZE)
		check_knob_default(d, page, 6);
	s = ak_kmem_cache_create_args("knob", 64, 0, 0, d, &args);
	assert_non_null(s);
	ak_kmem_cache_info(s, &i);
	assert_int_equal(i.cpu_partial, freelist_design(d) ? 40 : 0);
	/* 0 turns it off in every design; more only where there is one */
	assert_int_equal(ak_kmem_cache_set_cpu_partial(s, 0), 0);
	ak_kmem_cache_info(s, &i);
	assert_int_equal(i.cpu_partial, 0);
	errno = 0;
	assert_int_equal(ak_kmem_cache_set_cpu_partial(s, 10),
			 freelist_design(d) ? 0 : -1);
	if (!freelist_design(d))
		assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(ak_kmem_cache_set_cpu_partial(s, (1u << 24) + 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ak_kmem_cache_destroy(s), 0);
	args.cpu_partial = AK_SLAB_CPU_PARTIAL_NONE;
	s = ak_kmem_cache_create_args("knob", 64, 0, 0, d, &args);
	assert_non_null(s);
	ak_kmem_cache_info(s, &i);
	assert_int_equal(i.cpu_partial, 0);
	assert_int_equal(ak_kmem_cache_destroy(s), 0);
}

#define CP_OBJS		8	/* objects per slab */
#define CP_SLABS	5

struct cp_remote {
	struct ak_kmem_cache *s;
	void *p;
};

static void *cp_remote_free(void *arg)
{
	struct cp_remote *r = arg;

	ak_kmem_cache_free(r->s, r->p);
	return NULL;
}

static void cp_places(struct ak_kmem_cache *s, size_t cpu_partial_slabs,
		      size_t cpu_partial, size_t node_slabs, size_t allocated)
{
	struct ak_kmem_cache_places pl;

	assert_int_equal(ak_kmem_cache_audit_places(s, &pl), 0);
	assert_int_equal(pl.cpu_partial_slabs, cpu_partial_slabs);
	assert_int_equal(pl.cpu_partial, cpu_partial);
	assert_int_equal(pl.node_slabs, node_slabs);
	assert_int_equal(pl.allocated, allocated);
}

/* Did the call add exactly want to counter i? */
#define CP_DELTA(s, i, before, want) \
	assert_int_equal(stat_of(s, i) - (before)[i], want)

static void cp_snap(struct ak_kmem_cache *s, uint64_t st[AK_SLAB_NR_STATS])
{
	ak_kmem_cache_stats(s, st);
}

static bool same_set(void **a, void **b, size_t n)
{
	size_t i, j, hit;

	for (i = 0; i < n; i++) {
		for (j = 0, hit = 0; j < n; j++)
			hit += a[i] == b[j];
		if (hit != 1)
			return false;
	}
	return true;
}

/*
 * On one slot, slabs of CP_OBJS objects and cpu_partial 2: a free that
 * makes a full slab partial puts it on the CPU's list; the fourth such
 * free finds the list's slabs with more than 2 free objects, and sends
 * them to the node's list in one lock hold; the slow path takes the
 * CPU's slab before the node's; bulk allocation too, and a trip to the
 * node's list brings more for the CPU's list, until the objects taken
 * exceed cpu_partial / 2; a free from another thread to a slab on a
 * CPU's list goes to the slab, which stays there.
 */
static void test_cpu_partial(void **state)
{
	struct ak_kmem_cache_args args = { .slab_size = small_slab(),
					   .max_objects = CP_OBJS };
	uint64_t st[AK_SLAB_NR_STATS];
	void *p[CP_SLABS * CP_OBJS], *freed[4], *got[4], *q;
	struct ak_kmem_cache_info info;
	struct cp_remote r;
	struct ak_kmem_cache *s;
	cpu_set_t old;
	pthread_t t;
	size_t i, live;

	if (!freelist_design(design(state)))
		ak_skip("per-CPU partial slabs are the freelist designs'");
	if (cpu_partial_off)
		ak_skip("the knob is set here");
	s = ak_kmem_cache_create_args("cpu-partial", 64, 0, AK_SLAB_STATS,
				      design(state), &args);
	assert_non_null(s);
	assert_int_equal(ak_kmem_cache_set_cpu_partial(s, 2), 0);
	ak_kmem_cache_info(s, &info);
	assert_int_equal(info.objects_per_slab, CP_OBJS);
	assert_int_equal(info.cpu_partial, 2);
	pin(&old);

	/* slabs 0..4 full, slab 4 the slot's */
	for (i = 0; i < AK_ARRAY_SIZE(p); i++) {
		assert_non_null(p[i] = ak_kmem_cache_alloc(s, 0));
		assert_true(((uintptr_t)p[i] ^ (uintptr_t)p[i - i % CP_OBJS]) <
			    info.slab_size);
	}
	live = AK_ARRAY_SIZE(p);
	cp_places(s, 0, 0, 0, live);

	/* full -> partial: the CPU's list, no lock, no node list */
	cp_snap(s, st);
	ak_kmem_cache_free(s, p[0 * CP_OBJS]);
	live--;
	CP_DELTA(s, AK_SLAB_CPU_PARTIAL_FREE, st, 1);
	CP_DELTA(s, AK_SLAB_ADD_PARTIAL, st, 0);
	cp_places(s, 1, 1, 0, live);
	ak_kmem_cache_free(s, p[1 * CP_OBJS]);
	ak_kmem_cache_free(s, p[2 * CP_OBJS]);
	live -= 2;
	cp_places(s, 3, 3, 0, live);

	/* the fourth: the three go to the node in one batch */
	cp_snap(s, st);
	ak_kmem_cache_free(s, p[3 * CP_OBJS]);
	live--;
	CP_DELTA(s, AK_SLAB_CPU_PARTIAL_FREE, st, 1);
	CP_DELTA(s, AK_SLAB_CPU_PARTIAL_DRAIN, st, 1);
	CP_DELTA(s, AK_SLAB_ADD_PARTIAL, st, 3);
	cp_places(s, 1, 1, 3, live);

	/* the slow path: the CPU's partial slab, not the node's */
	cp_snap(s, st);
	q = ak_kmem_cache_alloc(s, 0);
	live++;
	assert_ptr_equal(q, p[3 * CP_OBJS]);
	CP_DELTA(s, AK_SLAB_CPU_PARTIAL_ALLOC, st, 1);
	CP_DELTA(s, AK_SLAB_ALLOC_PARTIAL, st, 0);
	cp_places(s, 0, 0, 3, live);

	/* bulk: the CPU's partial slab first */
	ak_kmem_cache_free(s, p[4 * CP_OBJS]);
	live--;
	cp_places(s, 1, 1, 3, live);
	cp_snap(s, st);
	assert_int_equal(ak_kmem_cache_alloc_bulk(s, 0, 1, got), 1);
	live++;
	assert_ptr_equal(got[0], p[4 * CP_OBJS]);
	CP_DELTA(s, AK_SLAB_BULK_ALLOC_CPU_PARTIAL, st, 1);
	CP_DELTA(s, AK_SLAB_BULK_ALLOC_PARTIAL, st, 0);
	cp_places(s, 0, 0, 3, live);

	/*
	 * Then the node's: a slab, and one more for the CPU's list (1 free
	 * object taken is not above 2 / 2, 2 are); the CPU's list; the
	 * node's again.
	 */
	cp_snap(s, st);
	assert_int_equal(ak_kmem_cache_alloc_bulk(s, 0, 3, got), 3);
	live += 3;
	for (i = 0; i < 3; i++)
		freed[i] = p[i * CP_OBJS];
	assert_true(same_set(got, freed, 3));
	CP_DELTA(s, AK_SLAB_BULK_ALLOC_PARTIAL, st, 2);
	CP_DELTA(s, AK_SLAB_BULK_ALLOC_CPU_PARTIAL, st, 1);
	CP_DELTA(s, AK_SLAB_CPU_PARTIAL_NODE, st, 1);
	CP_DELTA(s, AK_SLAB_ALLOC_PARTIAL, st, 2);
	cp_places(s, 0, 0, 0, live);

	/*
	 * Another thread frees to a slab on this slot's list (in the
	 * per-thread mode, surely another slot): onto the slab, which
	 * stays where it is, with both objects.
	 */
	cp_snap(s, st);
	ak_kmem_cache_free(s, p[1 * CP_OBJS + 1]);
	r.s = s;
	r.p = p[1 * CP_OBJS + 2];
	assert_int_equal(pthread_create(&t, NULL, cp_remote_free, &r), 0);
	pthread_join(t, NULL);
	live -= 2;
	CP_DELTA(s, AK_SLAB_CPU_PARTIAL_FREE, st, 1);
	CP_DELTA(s, AK_SLAB_FREE_REMOTE, st, 2);
	cp_places(s, 1, 2, 0, live);
	got[0] = ak_kmem_cache_alloc(s, 0);
	got[1] = ak_kmem_cache_alloc(s, 0);
	live += 2;
	freed[0] = p[1 * CP_OBJS + 1];
	freed[1] = p[1 * CP_OBJS + 2];
	/*
	 * Both, from this slot's list; but a thread's mm_cid may change as
	 * another comes and goes, and then the slab waits on the old one's.
	 */
	if (!same_set(got, freed, 2)) {
		if (mode != AK_PERCPU_RSEQ_MM_CID)
			fail_msg("the slot's partial slab was not taken");
		print_message("# the thread's mm_cid changed\n");
		for (i = 0; i < 2; i++)
			if (got[i] != freed[0] && got[i] != freed[1])
				ak_kmem_cache_free(s, got[i]);
		/* still free: not freed again below */
		for (i = 0; i < 2; i++)
			if (got[0] != freed[i] && got[1] != freed[i])
				p[1 * CP_OBJS + 1 + i] = NULL;
	} else {
		cp_places(s, 0, 0, 0, live);
	}
	sched_setaffinity(0, sizeof(old), &old);

	/* everything back: the slot's list and the node's hold them all */
	for (i = 0; i < AK_ARRAY_SIZE(p); i++)
		ak_kmem_cache_free(s, p[i]);	/* NULL: ignored */
	destroy_clean(s);
}

/* ---- where a slot's objects come from (home-list designs) ---- */

#ifndef AK_SLAB_STRESS

/*
 * Another thread, alive throughout, that allocated N objects of s and
 * freed them all: its slot's slabs have free objects on its list, and
 * (sheaf) its barn shard holds full sheaves.
 */
struct other_slot {
	struct ak_kmem_cache *s;
	void *p[64];
	pthread_barrier_t done, release;
};

static void *other_slot_fn(void *arg)
{
	struct other_slot *o = arg;
	unsigned int i;

	for (i = 0; i < AK_ARRAY_SIZE(o->p); i++)
		o->p[i] = ak_kmem_cache_alloc(o->s, 0);
	for (i = 0; i < AK_ARRAY_SIZE(o->p); i++)
		if (o->p[i])
			ak_kmem_cache_free(o->s, o->p[i]);
	pthread_barrier_wait(&o->done);
	pthread_barrier_wait(&o->release);
	return NULL;
}

static uintptr_t slab_of(const void *p)
{
	return (uintptr_t)p & ~(uintptr_t)4095;
}

static bool in_others_slabs(const struct other_slot *o, const void *p)
{
	unsigned int i;

	for (i = 0; i < AK_ARRAY_SIZE(o->p); i++)
		if (slab_of(o->p[i]) == slab_of(p))
			return true;
	return false;
}

/*
 * Small slabs of 16 objects; sheaves of 4, two full ones per shard.
 * Needs one slot per thread, which only the per-thread mode promises.
 */
static struct ak_kmem_cache *other_slot_start(struct other_slot *o,
					      enum ak_slab_fastpath d,
					      pthread_t *t)
{
	struct ak_kmem_cache_args args = { .slab_size = small_slab(),
					   .max_objects = 16,
					   .array_limit = 4,
					   .sheaf_capacity = 4,
					   .barn_max = 2,
					   .locked_batch = 4 };
	unsigned int i;

	if (mode != AK_PERCPU_THREAD)
		ak_skip("needs a slot per thread: the per-thread mode's");
	o->s = ak_kmem_cache_create_args("slots", 64, 0, AK_SLAB_STATS, d,
					 &args);
	assert_non_null(o->s);
	pthread_barrier_init(&o->done, NULL, 2);
	pthread_barrier_init(&o->release, NULL, 2);
	assert_int_equal(pthread_create(t, NULL, other_slot_fn, o), 0);
	pthread_barrier_wait(&o->done);
	for (i = 0; i < AK_ARRAY_SIZE(o->p); i++)
		assert_non_null(o->p[i]);
	return o->s;
}

static void other_slot_end(struct other_slot *o, pthread_t t, void **q,
			   size_t n)
{
	ak_kmem_cache_free_bulk(o->s, n, q);
	pthread_barrier_wait(&o->release);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&o->done);
	pthread_barrier_destroy(&o->release);
	destroy_clean(o->s);
}

/*
 * A slot with no slab of its own makes one, though another slot's slabs
 * have free objects: drawing on them would tie it to that slot's list
 * for good.  Its next objects come from that slab too.  (locked keeps
 * one freelist for all, which the other thread's frees filled.)
 */
static void test_own_slab_first(void **state)
{
	static const enum ak_slab_fastpath home[] = {
		AK_SLAB_ARRAY, AK_SLAB_SHEAF,
	};
	struct other_slot o;
	unsigned int d, i;
	uint64_t made;
	void *q[16];
	pthread_t t;

	(void)state;
	for (d = 0; d < AK_ARRAY_SIZE(home); d++) {
		other_slot_start(&o, home[d], &t);
		made = stat_of(o.s, AK_SLAB_ALLOC_NEW_SLAB);
		assert_true(stat_of(o.s, AK_SLAB_FLUSH_OBJS) > 0);
		for (i = 0; i < AK_ARRAY_SIZE(q); i++) {
			assert_non_null(q[i] = ak_kmem_cache_alloc(o.s, 0));
			if (in_others_slabs(&o, q[i]) ||
			    slab_of(q[i]) != slab_of(q[0]))
				fail_msg("%s: object %u from another slab",
					 ak_slab_fastpath_name(home[d]), i);
		}
		assert_int_equal(stat_of(o.s, AK_SLAB_ALLOC_NEW_SLAB),
				 made + 1);
		other_slot_end(&o, t, q, AK_ARRAY_SIZE(q));
	}
}

/*
 * Sheaf: once all of its own slab is in use, a slot takes a full sheaf
 * another CPU of the node parked in its barn shard before it maps
 * another slab; and not before.
 */
static void test_sheaf_steal(void **state)
{
	struct other_slot o;
	uint64_t made;
	unsigned int i;
	void *q[17];
	pthread_t t;

	(void)state;
	other_slot_start(&o, AK_SLAB_SHEAF, &t);
	assert_int_equal(stat_of(o.s, AK_SLAB_BARN_PUT_FULL), 2);
	made = stat_of(o.s, AK_SLAB_ALLOC_NEW_SLAB);
	for (i = 0; i < 16; i++)
		assert_non_null(q[i] = ak_kmem_cache_alloc(o.s, 0));
	assert_int_equal(stat_of(o.s, AK_SLAB_BARN_STEAL), 0);
	assert_non_null(q[16] = ak_kmem_cache_alloc(o.s, 0));
	assert_int_equal(stat_of(o.s, AK_SLAB_BARN_STEAL), 1);
	assert_true(in_others_slabs(&o, q[16]));
	assert_int_equal(stat_of(o.s, AK_SLAB_ALLOC_NEW_SLAB), made + 1);
	other_slot_end(&o, t, q, AK_ARRAY_SIZE(q));
}
#endif

/* ---- design-independent ---- */

static void test_bad_input(void **state)
{
	struct ak_kmem_cache_args args = { .slab_size = 3000 };

	(void)state;
	errno = 0;
	assert_null(ak_kmem_cache_create("x", 0, 0, 0, AK_SLAB_SLUB_TID));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ak_kmem_cache_create("x", AK_KMALLOC_MAX_SIZE + 1, 0, 0,
					 AK_SLAB_SLUB_TID));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ak_kmem_cache_create("x", 64, 24, 0, AK_SLAB_ARRAY));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ak_kmem_cache_create("x", 64, 3, 0, AK_SLAB_ARRAY));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ak_kmem_cache_create("x", 64, 8192, 0, AK_SLAB_ARRAY));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ak_kmem_cache_create("x", 64, 0, 0x100,
					 AK_SLAB_LOCKED));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ak_kmem_cache_create("x", 64, 0, 0,
					 AK_SLAB_NR_FASTPATHS));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ak_kmem_cache_create_args("x", 64, 0, 0, AK_SLAB_SHEAF,
					      &args));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ak_slab_fastpath_parse("sheaf"), AK_SLAB_SHEAF);
	assert_int_equal(ak_slab_fastpath_parse("nope"), -1);
	assert_null(ak_slab_fastpath_name(AK_SLAB_NR_FASTPATHS));
	assert_int_equal(ak_kmem_cache_destroy(NULL), 0);
	/* a slab below the page size (64 KiB kernels): refused, not mapped */
	if (small_slab() > 4096) {
		struct ak_kmem_cache_args half = { .slab_size = small_slab() / 2 };

		errno = 0;
		assert_null(ak_kmem_cache_create_args("x", 64, 0, 0,
						      AK_SLAB_SLUB_TID, &half));
		assert_int_equal(errno, EINVAL);
	}
}

/* A small slab with few objects: the slab layer's edges get exercised. */
static void test_small_slabs(void **state)
{
	struct ak_kmem_cache_args args = { .slab_size = small_slab(),
					   .max_objects = 5,
					   .array_limit = 4,
					   .sheaf_capacity = 3,
					   .barn_max = 1,
					   .locked_batch = 2 };
	struct ak_kmem_cache *s = ak_kmem_cache_create_args(
		"small", 200, 64, 0, design(state), &args);
	struct ak_kmem_cache_info info;
	static void *p[300];
	unsigned int r, i, n = 0;
	uint64_t x = 77;

	assert_non_null(s);
	ak_kmem_cache_info(s, &info);
	assert_int_equal(info.objects_per_slab, 5);
	for (r = 0; r < 20000; r++) {
		if (n < AK_ARRAY_SIZE(p) && rnd(&x) % 2) {
			assert_non_null(p[n] = ak_kmem_cache_alloc(s, 0));
			assert_int_equal((uintptr_t)p[n] % 64, 0);
			n++;
		} else if (n) {
			i = (unsigned int)(rnd(&x) % n);
			ak_kmem_cache_free(s, p[i]);
			p[i] = p[--n];
		}
	}
	assert_distinct(p, n, 200);
	assert_int_equal(ak_kmem_cache_audit(s), n);
	ak_kmem_cache_free_bulk(s, n, p);
	ak_kmem_cache_shrink(s);
	destroy_clean(s);
}

struct test_def {
	const char *name;
	CMUnitTestFunction fn;
};

static const struct test_def per_design[] = {
	{ "basic", test_basic },
	{ "align_zero", test_align_zero },
	{ "bulk", test_bulk },
	{ "small_slabs", test_small_slabs },
	{ "stats", test_stats },
	{ "inline", test_inline },
	{ "fixed_design", test_fixed_design },
	{ "owner_check", test_owner_check },
	{ "cpu_partial_knob", test_cpu_partial_knob },
	{ "cpu_partial", test_cpu_partial },
	{ "stress_inline_handoff", test_stress_inline_handoff },
	{ "stress", test_stress },
	{ "stress_migration", test_stress_migration },
	{ "stress_debug", test_stress_debug },
	{ "debug_errors", test_debug_errors },
	{ "destroy_live", test_destroy_live },
	{ "oom", test_oom },
	{ "kmalloc", test_kmalloc },
};

#define NTESTS	(3 + AK_ARRAY_SIZE(per_design) * AK_SLAB_NR_FASTPATHS)

static struct CMUnitTest all_tests[NTESTS], freelist_tests[NTESTS];
static char names[NTESTS][64];
static size_t ntests_built, nfreelist_tests;

static void build_tests(void)
{
	struct CMUnitTest *tests = all_tests;
	size_t i, d, k = 0;

	tests[k].name = "bad_input";
	tests[k++].test_func = test_bad_input;
#ifndef AK_SLAB_STRESS
	tests[k].name = "own_slab_first";
	tests[k++].test_func = test_own_slab_first;
	tests[k].name = "sheaf_steal";
	tests[k++].test_func = test_sheaf_steal;
#endif
	for (d = 0; d < AK_SLAB_NR_FASTPATHS; d++)
		for (i = 0; i < AK_ARRAY_SIZE(per_design); i++, k++) {
#ifdef AK_SLAB_STRESS
			if (strncmp(per_design[i].name, "stress", 6)) {
				k--;
				continue;
			}
#endif
			snprintf(names[k], sizeof(names[k]), "%s: %s",
				 ak_slab_fastpath_name((enum ak_slab_fastpath)d),
				 per_design[i].name);
			tests[k].name = names[k];
			tests[k].test_func = per_design[i].fn;
			tests[k].initial_state = (void *)(intptr_t)d;
			/* with the knob at 0: the designs it changes */
			if (freelist_design((enum ak_slab_fastpath)d))
				freelist_tests[nfreelist_tests++] = tests[k];
		}
	ntests_built = k;
}

struct run {
	enum ak_percpu_mode mode;
	bool cpu_partial_off;
};

static int set_mode(void *arg)
{
	const struct run *r = arg;
	enum ak_percpu_mode m = r->mode;

	if (ak_percpu_set_mode(m))
		return -1;
	mode = m;
	cpu_partial_off = r->cpu_partial_off;
	ak_slab_set_report(on_report, NULL);
	return 0;
}

/*
 * The suite in one mode, in a child; its TAP lines come through a pipe.
 * Then the freelist designs' part again with cpu_partial at 0.
 */
static int run_mode(enum ak_percpu_mode m, unsigned int *ntests)
{
	struct run r = { m, false };
	char group[64];
	int failed;

	snprintf(group, sizeof(group), "slab[%s]", ak_percpu_mode_name(m));
	failed = ak_test_run_child(group, all_tests, ntests_built,
				   ak_test_mode_skip(m), set_mode, &r, ntests);
	r.cpu_partial_off = true;
	snprintf(group, sizeof(group), "slab[%s, cpu_partial 0]",
		 ak_percpu_mode_name(m));
	return failed + ak_test_run_child(group, freelist_tests,
					  nfreelist_tests,
					  ak_test_mode_skip(m), set_mode, &r,
					  ntests);
}

int main(int argc, char **argv)
{
	unsigned int ntests = 0;
	int m, failed = 0;

	(void)argc;
	(void)argv;
	build_tests();
	for (m = 0; m < AK_PERCPU_NR_MODES; m++)
		failed += run_mode((enum ak_percpu_mode)m, &ntests);
	printf("1..%u\n", ntests);
	return failed ? 1 : 0;
}
