// SPDX-License-Identifier: MIT
/*
 * Contention: 1 to N threads (N = PUs, then 2N oversubscribed) updating
 * one cache line with each SMP-safe primitive: throughput, and fairness
 * as the spread of per-thread counts.
 *
 * Every SMP-safe 64-bit cmpxchg, try_cmpxchg, xchg and fetch_add variant
 * of the registry is run, and the 128-bit cmpxchg variants as an update
 * of a pair of counters; an increment under a pthread spinlock and under
 * a pthread mutex are the references.  A CAS variant runs the kernel's
 * retry loop: one plain read, then cmpxchg(old, old + 1) until it
 * succeeds, each retry starting from the value the failed CAS returned;
 * successes and failures are both counted.
 *
 * The runs are time-based, as lockhammer's preferred mode is, so that a
 * thread the line favours can do more than the others: one iteration of
 * Google Benchmark is one window of CT_WINDOW_US.  The threads meet on
 * akb_thread_barrier() (so that none is still in the last window), then
 * thread 0 reads the clock and opens the window by moving the window word
 * on; the others wait for that, so no operation falls before the clock
 * was read even when thread 0 is preempted after the barrier.  Thread 0
 * reads the clock every CT_CHECK_EVERY operations and closes the window
 * by moving the word on again; the others load it, relaxed, after every
 * operation.  A thread preempted past the end of its window sees the
 * moved word as soon as it runs again, and the waits yield, so
 * oversubscribed runs (2N threads) end promptly.  There a window is
 * CT_WINDOW_OVER_US, longer than a few scheduler time slices: in windows
 * shorter than one, a thread sharing thread 0's CPU would only ever run
 * while thread 0 waits at the barrier, and count nothing.  And there a
 * spinlock waiter could spin out its time slice behind a preempted
 * holder, with thread 0 unable to close the window while it waits, so
 * the spinlock reference waits with pthread_spin_trylock, watching the
 * window and yielding now and then; its label says so.
 *
 * Google Benchmark sums iterations over threads, so its Time column for
 * T threads is the window divided by T; the counter's ticks per iteration
 * (tsc_ticks, ...) are one window.
 *
 * Each thread adds its counts to its own slot after each window.  When
 * the last akb_batch() has returned false in thread 0, Google Benchmark's
 * stop barrier has seen every thread finish, so thread 0 reads the slots:
 * the coefficient of variation of the per-thread totals (0: perfectly
 * fair; lockhammer's "lasom") and the ratio of the smallest to the
 * largest, and it checks that the line holds exactly the sum of the
 * successful increments (for everything but xchg).
 *
 * The windows are timed with the arch's counter (TSC, cntvct_el0,
 * timebase), which runs while a thread is preempted, where PAPI's cycles
 * of thread 0 would not; the length is converted to the selected
 * counter's ticks for akb_set_ticks().  Counters: "ops" (all threads, per
 * second), "ops_per_window" (all threads), "fails_per_op" (CAS variants:
 * failed CAS per successful one), "cv" and "min_max" (fairness).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomkit/registry.h>

#include "akbench.h"
#include "bench.h"
#include "counter.h"
#include "topo.h"

#define CT_WINDOW_US	2000	/* one iteration */
#define CT_WINDOW_OVER_US 20000	/* oversubscribed: a few time slices */
#define CT_CHECK_EVERY	16	/* thread 0 reads the clock every 16 ops */

typedef uint64_t __attribute__((may_alias)) ct_alias64;

/*
 * The contended line: the counter, and for the references the lock beside
 * it as a lock usually sits beside what it protects; all in the first 64
 * bytes of 128, so that the adjacent-line prefetcher's pair is ours too.
 */
static struct ct_line {
	union {
		uint64_t word;
		ak_u128 pair;
	} u;
	union {
		pthread_spinlock_t spin;
		pthread_mutex_t mutex;
	} lk;
} ct_line __attribute__((aligned(128)));

_Static_assert(sizeof(struct ct_line) <= 64, "the line must be one line");

/* Written once per window by thread 0; every other thread reads it. */
static struct {
	uint64_t window;	/* window k runs while window == 2k + 1 */
	uint64_t ticks;		/* the length of the window that ended */
} ct_ctl __attribute__((aligned(128)));

/* One per thread, for akb_max_threads() (from the topology). */
static struct ct_slot {
	uint64_t ops;
	uint64_t fails;
	int cpu;
} __attribute__((aligned(64))) *ct_slots;
static int ct_nslots;

struct ct {
	struct akb_state *s;
	const struct ak_variant *v;
	int tid;
	int nthreads;
	bool first;
	bool shared_cpu;	/* some threads share a CPU: oversubscribed */
	uint64_t k;		/* the window this thread is in */
	uint64_t t0;		/* thread 0: start of the window, arch ticks */
	uint64_t len;		/* thread 0: window length, arch ticks */
	double to_counter;	/* counter ticks per arch tick */
	uint64_t ops;
};

/*
 * Every thread, before its first akb_batch(): each sets up its own slot,
 * and only thread 0 what is shared, as no other thread reads it before
 * Google Benchmark's start barrier.
 */
static void ct_begin(struct akb_state *s, struct ct *c)
{
	const struct akb_counter_info *ci = akb_counter_info();

	memset(c, 0, sizeof(*c));
	c->s = s;
	c->v = akb_arg(s);
	c->tid = akb_thread_index(s);
	c->nthreads = akb_threads(s);
	c->first = true;
	c->len = (uint64_t)(akb_arch_hz(NULL) * CT_WINDOW_US / 1e6);
	c->to_counter = ci->kind == AKB_COUNTER_ARCH ? 1.0 :
			ci->hz / akb_arch_hz(NULL);
	if (c->nthreads > ct_nslots) {
		char n[96];

		/*
		 * Not planned (no sweep passes akb_max_threads()), unless the
		 * slots could not be had.  Every thread: the first
		 * akb_batch() then ends the run.
		 */
		snprintf(n, sizeof(n),
			 "%d threads, and slots for %d (out of memory when registered)",
			 c->nthreads, ct_nslots);
		akb_fail(s, n);
		c->tid = 1;	/* not thread 0: reports nothing */
		return;
	}
	ct_slots[c->tid].ops = 0;
	ct_slots[c->tid].fails = 0;
	ct_slots[c->tid].cpu = akb_cpu(s);
	if (c->tid == 0) {
		memset(&ct_line.u, 0, sizeof(ct_line.u));
		__atomic_store_n(&ct_ctl.window, 0, __ATOMIC_RELAXED);
	}
}

/* Whether two threads of this run share a CPU (or are not pinned). */
static bool ct_cpus_shared(const struct ct *c)
{
	int limit = akb_cpu_limit(), t;
	unsigned char *seen = calloc((size_t)limit / 8 + 1, 1);
	bool shared = false;

	if (!seen)	/* guessed from the count alone */
		return c->nthreads > akb_nr_pus();
	for (t = 0; t < c->nthreads && !shared; t++) {
		int cpu = ct_slots[t].cpu;

		if (cpu < 0 || cpu >= limit)
			shared = c->nthreads > akb_nr_pus();
		else if (seen[cpu / 8] & (1u << (cpu % 8)))
			shared = true;
		else
			seen[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
	}
	free(seen);
	return shared;
}

static bool ct_window(struct ct *c)
{
	uint64_t n;

	if (!akb_batch(c->s, &n))
		return false;
	if (c->first) {
		/* Google Benchmark's start barrier published every slot */
		c->shared_cpu = ct_cpus_shared(c);
		c->first = false;
		if (c->shared_cpu)
			c->len = (uint64_t)(akb_arch_hz(NULL) *
					    CT_WINDOW_OVER_US / 1e6);
	}
	akb_thread_barrier(c->s);
	if (c->tid == 0) {
		c->t0 = akb_arch_ticks();
		__atomic_store_n(&ct_ctl.window, 2 * c->k + 1,
				 __ATOMIC_RELEASE);
	} else {
		unsigned int spins = 0;

		/* no operation before thread 0 has read the clock */
		while (__atomic_load_n(&ct_ctl.window, __ATOMIC_ACQUIRE) ==
		       2 * c->k)
			if (++spins > 256)
				sched_yield();
			else
				ak_cpu_relax();
	}
	return true;
}

/* i: operations done in this window (thread 0 reads the clock every few) */
static inline bool ct_stop(struct ct *c, uint64_t i)
{
	uint64_t now;

	if (c->tid)
		return __atomic_load_n(&ct_ctl.window, __ATOMIC_RELAXED) !=
		       2 * c->k + 1;
	if (i % CT_CHECK_EVERY)
		return false;
	now = akb_arch_ticks();
	if (now - c->t0 < c->len)
		return false;
	ct_ctl.ticks = (uint64_t)((double)(now - c->t0) * c->to_counter);
	__atomic_store_n(&ct_ctl.window, 2 * c->k + 2, __ATOMIC_RELEASE);
	return true;
}

static void ct_end(struct ct *c, uint64_t ok, uint64_t fails)
{
	uint64_t ticks;

	/* pairs with the release of ct_stop(): ct_ctl.ticks is this window's */
	(void)__atomic_load_n(&ct_ctl.window, __ATOMIC_ACQUIRE);
	ticks = ct_ctl.ticks;
	ct_slots[c->tid].ops += ok;
	ct_slots[c->tid].fails += fails;
	c->ops += ok;
	c->k++;
	/* last, so that little falls between it and the next akb_batch() */
	akb_set_ticks(c->s, ticks);
}

/*
 * After the loop.  check: whether final must equal the sum of the
 * successful operations.
 */
static void ct_finish(struct ct *c, bool cas, bool check, uint64_t final,
		      const char *what)
{
	uint64_t sum = 0, fails = 0, lo = UINT64_MAX, hi = 0;
	double mean, var = 0;
	char buf[256];
	int t, len;

	akb_counter_rate(c->s, "ops", (double)c->ops);
	if (c->tid || !c->k)
		return;
	for (t = 0; t < c->nthreads; t++) {
		uint64_t x = ct_slots[t].ops;

		sum += x;
		fails += ct_slots[t].fails;
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	mean = (double)sum / c->nthreads;
	for (t = 0; t < c->nthreads; t++) {
		double d = (double)ct_slots[t].ops - mean;

		var += d * d;
	}
	var /= c->nthreads;
	akb_counter(c->s, "ops_per_window", (double)sum / (double)c->k);
	if (cas)
		akb_counter(c->s, "fails_per_op",
			    sum ? (double)fails / (double)sum : 0);
	akb_counter(c->s, "cv", mean > 0 ? sqrt(var) / mean : 0);
	akb_counter(c->s, "min_max", hi ? (double)lo / (double)hi : 0);

	len = snprintf(buf, sizeof(buf), "%s; %d ms windows; cpus", what,
		       (c->shared_cpu ? CT_WINDOW_OVER_US : CT_WINDOW_US) /
		       1000);
	for (t = 0; t < c->nthreads && t < 8 && len < (int)sizeof(buf); t++)
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "%s%d",
				t ? "," : " ", ct_slots[t].cpu);
	if (c->nthreads > 8 && len < (int)sizeof(buf))
		snprintf(buf + len, sizeof(buf) - (size_t)len, ",...");
	akb_label(c->s, buf);

	if (check && final != sum) {
		snprintf(buf, sizeof(buf),
			 "lost updates: the line holds %llu after %llu successful increments",
			 (unsigned long long)final, (unsigned long long)sum);
		akb_fail(c->s, buf);
	}
}

static void ct_label(const struct ct *c, char *buf, size_t size)
{
	snprintf(buf, size, "%s [%s]%s", c->v->insn, c->v->order,
		 c->v->width == 128 ? ", a pair of counters" : "");
}

/* ---- the loop every body shares ---- */

#define CT_LOOP(c, body)						\
	while (ct_window(c)) {						\
		uint64_t ok = 0, fails = 0;				\
									\
		while (!ct_stop(c, ok)) {				\
			body;						\
		}							\
		ct_end(c, ok, fails);					\
	}

#define CT_READ64()	(*(volatile ct_alias64 *)&ct_line.u.word)

static inline ak_u128 ct_read128(void)
{
	volatile ct_alias64 *w = (volatile ct_alias64 *)&ct_line.u.pair;
	uint64_t w0 = w[0], w1 = w[1];

	return ak_u128_from_words(w0, w1);
}

/* ---- one body per (primitive, width) the suite runs ---- */

#define CT_BODY_cmpxchg_64(fn)						\
	{								\
		uint64_t old = CT_READ64(), r;				\
									\
		while ((r = fn(&ct_line.u.word, old, old + 1)) != old) { \
			fails++;					\
			old = r;					\
		}							\
		ok++;							\
	}

#define CT_BODY_try_cmpxchg_64(fn)					\
	{								\
		uint64_t old = CT_READ64();				\
									\
		while (!fn(&ct_line.u.word, &old, old + 1))		\
			fails++;					\
		ok++;							\
	}

/* Both halves count: a torn update would leave them unequal. */
#define CT_BODY_cmpxchg_128(fn)						\
	{								\
		ak_u128 old = ct_read128(), r;				\
									\
		for (;;) {						\
			ak_u128 nw = ak_u128_make(ak_u128_hi(old) + 1,	\
						  ak_u128_lo(old) + 1);	\
									\
			r = fn(&ct_line.u.pair, old, nw);		\
			if (r == old)					\
				break;					\
			fails++;					\
			old = r;					\
		}							\
		ok++;							\
	}

#define CT_BODY_try_cmpxchg_128(fn)					\
	{								\
		ak_u128 old = ct_read128();				\
									\
		while (!fn(&ct_line.u.pair, &old,			\
			   ak_u128_make(ak_u128_hi(old) + 1,		\
					ak_u128_lo(old) + 1)))		\
			fails++;					\
		ok++;							\
	}

#define CT_BODY_xchg_64(fn)						\
	{								\
		uint64_t r = fn(&ct_line.u.word, ok);			\
									\
		akb_keep(r);						\
		ok++;							\
	}

#define CT_BODY_fetch_add_64(fn)					\
	{								\
		fn(&ct_line.u.word, 1);					\
		ok++;							\
	}

#define CT_KIND_cmpxchg_64	1, 1, 64
#define CT_KIND_try_cmpxchg_64	1, 1, 64
#define CT_KIND_cmpxchg_128	1, 1, 128
#define CT_KIND_try_cmpxchg_128	1, 1, 128
#define CT_KIND_xchg_64		0, 0, 64
#define CT_KIND_fetch_add_64	0, 1, 64

static void ct_finish_kind(struct ct *c, bool cas, bool check, int width,
			   const char *what)
{
	uint64_t final;

	if (width == 128) {
		ak_u128 v = ct_line.u.pair;

		/* unequal halves: report the smaller, the check then fails */
		final = ak_u128_hi(v) == ak_u128_lo(v) ? ak_u128_lo(v) :
			UINT64_MAX;
	} else {
		final = ct_line.u.word;
	}
	ct_finish(c, cas, check, final, what);
}

#define CT_FINISH(c, cas, check, width, what)				\
	ct_finish_kind(c, cas, check, width, what)
#define CT_FINISH_(args)	CT_FINISH args

#define CT_DEFINE(tag, prim, width, name, fn)				\
	static void ct_##tag##_##prim##width##_##name(struct akb_state *s) \
	{								\
		struct ct c;						\
		char what[160];						\
									\
		ct_begin(s, &c);					\
		ct_label(&c, what, sizeof(what));			\
		CT_LOOP(&c, CT_BODY_##prim##_##width(fn));		\
		CT_FINISH_((&c, CT_KIND_##prim##_##width, what));	\
	}

/*
 * Which (primitive, width) pairs the suite runs; the others expand to
 * nothing.  CT_HAS_<prim>_<width>(...) is its arguments for a pair that
 * runs.
 */
#define CT_HAS_cmpxchg_32(...)
#define CT_HAS_cmpxchg_64(...)	__VA_ARGS__
#define CT_HAS_cmpxchg_128(...)	__VA_ARGS__
#define CT_HAS_try_cmpxchg_32(...)
#define CT_HAS_try_cmpxchg_64(...)	__VA_ARGS__
#define CT_HAS_try_cmpxchg_128(...)	__VA_ARGS__
#define CT_HAS_xchg_32(...)
#define CT_HAS_xchg_64(...)	__VA_ARGS__
#define CT_HAS_fetch_add_32(...)
#define CT_HAS_fetch_add_64(...)	__VA_ARGS__

#define CT_BM(tag, prim, width, name, order, smp, insn, fn, usable)	\
	CT_HAS_##prim##_##width(CT_DEFINE(tag, prim, width, name, fn))
#define CT_BM_ARCH(...)	CT_BM(arch, __VA_ARGS__)
#define CT_BM_GEN(...)	CT_BM(gen, __VA_ARGS__)

#ifdef AK_ARCH_VARIANTS
AK_ARCH_VARIANTS(CT_BM_ARCH)
#endif
AK_GENERIC_VARIANTS(CT_BM_GEN)

struct ct_entry {
	const char *arch;
	const char *id;		/* prim<width>/name */
	akb_fn fn;
};

#define CT_ENT(tag, arch_, prim, width, name, ...)			\
	CT_HAS_##prim##_##width({ arch_, #prim #width "/" #name,	\
				  ct_##tag##_##prim##width##_##name },)
#define CT_ENT_ARCH(...)	CT_ENT(arch, AK_ARCH_NAME, __VA_ARGS__)
#define CT_ENT_GEN(...)		CT_ENT(gen, "generic", __VA_ARGS__)

static const struct ct_entry ct_entries[] = {
#ifdef AK_ARCH_VARIANTS
	AK_ARCH_VARIANTS(CT_ENT_ARCH)
#endif
	AK_GENERIC_VARIANTS(CT_ENT_GEN)
};

/* ---- references: an increment under a lock on the same line ---- */

static void ct_ref_spinlock(struct akb_state *s)
{
	struct ct c;

	ct_begin(s, &c);
	if (c.tid == 0)
		pthread_spin_init(&ct_line.lk.spin, PTHREAD_PROCESS_PRIVATE);
	while (ct_window(&c)) {
		uint64_t ok = 0, fails = 0;

		while (!ct_stop(&c, ok)) {
			/*
			 * Oversubscribed, a waiter may spin on the CPU of a
			 * preempted holder for the rest of its time slice,
			 * and thread 0 could not end the window while it
			 * waits: there, wait with trylock, watch the window
			 * and yield now and then.
			 */
			if (c.shared_cpu) {
				unsigned int spins = 0;
				bool quit = false;

				while (pthread_spin_trylock(&ct_line.lk.spin)) {
					if (ct_stop(&c, 0)) {
						quit = true;
						break;
					}
					if (++spins % 64 == 0)
						sched_yield();
					else
						ak_cpu_relax();
				}
				if (quit)
					break;
			} else {
				pthread_spin_lock(&ct_line.lk.spin);
			}
			(*(volatile uint64_t *)&ct_line.u.word)++;
			pthread_spin_unlock(&ct_line.lk.spin);
			ok++;
		}
		ct_end(&c, ok, fails);
	}
	ct_finish(&c, false, true, ct_line.u.word,
		  c.shared_cpu ?
		  "pthread_spin_trylock, yielding (oversubscribed); x++; pthread_spin_unlock" :
		  "pthread_spin_lock; x++; pthread_spin_unlock");
	if (c.tid == 0)
		pthread_spin_destroy(&ct_line.lk.spin);
}

static void ct_ref_mutex(struct akb_state *s)
{
	struct ct c;

	ct_begin(s, &c);
	if (c.tid == 0)
		pthread_mutex_init(&ct_line.lk.mutex, NULL);
	CT_LOOP(&c, {
		pthread_mutex_lock(&ct_line.lk.mutex);
		(*(volatile uint64_t *)&ct_line.u.word)++;
		pthread_mutex_unlock(&ct_line.lk.mutex);
		ok++;
	});
	ct_finish(&c, false, true, ct_line.u.word,
		  "pthread_mutex_lock; x++; pthread_mutex_unlock");
	if (c.tid == 0)
		pthread_mutex_destroy(&ct_line.lk.mutex);
}

/* Every benchmark's flags (and batch 1: an iteration is a whole window) */
#define CT_FLAGS	(AKB_SWEEP | AKB_MANUAL_TIME)

void akb_suite_contention(void)
{
	char full[128];
	size_t k;

	ct_nslots = akb_max_threads();
	ct_slots = aligned_alloc(64, sizeof(*ct_slots) * (size_t)ct_nslots);
	if (!ct_slots)
		ct_nslots = 0;	/* every run fails, and says why */
	for (k = 0; k < sizeof(ct_entries) / sizeof(ct_entries[0]); k++) {
		const struct ct_entry *e = &ct_entries[k];
		const struct ak_variant *v;

		snprintf(full, sizeof(full), "%s/%s", e->arch, e->id);
		v = ak_variant_find(full);
		if (!v || !v->smp_safe)
			continue;
		akb_set_batch(akb_variant_new("contention", e->fn, v,
					      CT_FLAGS), 1);
	}
	for (k = 0; k < 2; k++) {
		static const char *const lock[] = { "spinlock", "mutex" };
		struct akb_def *d = akb_new("contention", k ? ct_ref_mutex :
					    ct_ref_spinlock, NULL, CT_FLAGS);

		akb_set_batch(d, 1);
		akb_part(d, "arch", "ref");
		akb_part(d, "op", lock[k]);
	}
}
