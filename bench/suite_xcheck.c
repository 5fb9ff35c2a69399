// SPDX-License-Identifier: MIT
/*
 * A cross-check of the suite's own figures: on x86-64 the ratio
 * unlocked/locked cmpxchg that prim/x86_64/cmpxchg64/{nolock,lock}/lat
 * report must agree, within 10%, with a separately written loop of
 * inline asm.
 *
 * Each iteration measures the two operations twice, independently:
 *
 *   asm    a hand-written loop of XC_N dependent `lock cmpxchgq` (and one
 *          of `cmpxchgq`), each operation's expected value the previous
 *          one's result, timed with the TSC directly (lfence; rdtsc
 *          before, rdtscp; lfence after, or lfence; rdtsc where the CPU
 *          lacks rdtscp); total ticks over total operations of XC_RUNS
 *          runs, the statistic the suite reports (a minimum would pick
 *          the luckiest run: the unlocked chain through memory runs at
 *          two speeds on this project's x86-64 machine, its fastest run
 *          3.2 to 4.1 ticks per CAS against a mean of 5.2 to 5.8, and
 *          min against mean disagreed by 30 to 50%); the minimum is
 *          reported beside it;
 *   suite  the atomkit inline functions ak_x86_cmpxchg64_lock and
 *          ak_x86_cmpxchg64_nolock in the dependent chain of
 *          bench/suite_uncontended.c's LAT_cmpxchg, in batches of the
 *          harness's default 1000, with the selected counter read at the
 *          edges of each batch as akb_batch() reads it; total ticks over
 *          total operations, as the suite reports them.
 *
 * Counters: ratio_asm, ratio_suite (unlocked/locked, each in its own unit,
 * so the ratio has none), agreement = ratio_suite / ratio_asm, and the
 * per-operation figures behind them.  Outside 0.9 .. 1.1 the label says
 * DISAGREE; this is a benchmark, not a test, so nothing fails.  Other
 * arches register the benchmark as skipped (AKB_SKIP_X86_64_ONLY).
 */
#include <stdio.h>

#include <atomkit/cmpxchg.h>

#include "akbench.h"
#include "bench.h"
#include "counter.h"

/*
 * The suite's one benchmark: the rest of its name is in no field, as the
 * suite alone tells readers which it is.
 */
static struct akb_def *xc_new(akb_fn fn)
{
	struct akb_def *d = akb_new("xcheck", fn, NULL, 0);

	akb_part(d, NULL, "x86_64");
	akb_part(d, NULL, "cmpxchg64_lock_vs_nolock");
	return d;
}

#if defined(__x86_64__) && defined(AK_ARCH_X86_64)
#include <cpuid.h>

#define XC_N		10000	/* operations per timed run */
#define XC_RUNS		10	/* timed runs per iteration, each side */
#define XC_BATCH	1000	/* suite: akb_set_batch()'s default */

struct xc_line { uint64_t v; } __attribute__((aligned(64)));

static bool xc_rdtscp;

static inline uint64_t xc_tsc_start(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence"
			     : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t xc_tsc_end(void)
{
	uint32_t lo, hi, aux;

	if (xc_rdtscp)
		__asm__ __volatile__("rdtscp\n\tlfence"
				     : "=a"(lo), "=d"(hi), "=c"(aux)
				     : : "memory");
	else
		__asm__ __volatile__("lfence\n\trdtsc\n\tlfence"
				     : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

/*
 * n dependent CAS: the expected value is in rax, the new one rax + 1; on
 * success rax keeps the old value, so the next expected value is rax + 1,
 * which depends on the CAS just done.  Returns TSC ticks for the loop.
 */
#define XC_ASM_LOOP(fn, lock)						\
static __attribute__((noinline)) uint64_t fn(uint64_t *p, uint64_t n)	\
{									\
	uint64_t v = *(volatile uint64_t *)p, t0, t1;			\
									\
	t0 = xc_tsc_start();						\
	__asm__ __volatile__("1:\n\t"					\
			     "leaq 1(%%rax), %%rdx\n\t"			\
			     lock "cmpxchgq %%rdx, %[m]\n\t"		\
			     "incq %%rax\n\t"				\
			     "decq %[n]\n\t"				\
			     "jnz 1b"					\
			     : "+a"(v), [n] "+r"(n), [m] "+m"(*p)	\
			     :						\
			     : "rdx", "cc", "memory");			\
	t1 = xc_tsc_end();						\
	return t1 - t0;							\
}

XC_ASM_LOOP(xc_asm_lock, "lock; ")
XC_ASM_LOOP(xc_asm_nolock, "")

/* The suite's chain, one batch, timed as the harness times a batch. */
#define XC_SUITE_LOOP(fn, op)						\
static __attribute__((noinline)) uint64_t fn(uint64_t *p, uint64_t *vp,	\
					     uint64_t n)		\
{									\
	uint64_t v = *vp, i, t0, t1;					\
									\
	t0 = akb_ticks();						\
	for (i = 0; i < n; i++)						\
		v = op(p, v, v + 1) + 1;				\
	t1 = akb_ticks();						\
	*vp = v;							\
	return t1 - t0;							\
}

XC_SUITE_LOOP(xc_suite_lock, ak_x86_cmpxchg64_lock)
XC_SUITE_LOOP(xc_suite_nolock, ak_x86_cmpxchg64_nolock)

/* Total ticks of XC_RUNS runs; *best gets the fastest run's. */
static uint64_t xc_asm_sum(uint64_t (*fn)(uint64_t *, uint64_t),
			   uint64_t *p, uint64_t *best)
{
	uint64_t sum = 0, t;
	int k;

	fn(p, XC_N);	/* warm: line, TLB, branch predictors */
	for (k = 0; k < XC_RUNS; k++) {
		t = fn(p, XC_N);
		sum += t;
		*best = t < *best ? t : *best;
	}
	return sum;
}

static uint64_t xc_suite_sum(uint64_t (*fn)(uint64_t *, uint64_t *,
					    uint64_t),
			     uint64_t *p, uint64_t *v)
{
	uint64_t sum = 0;
	int k;

	fn(p, v, XC_BATCH);	/* warm */
	for (k = 0; k < XC_RUNS * XC_N / XC_BATCH; k++)
		sum += fn(p, v, XC_BATCH);
	return sum;
}

static void bm_xcheck(struct akb_state *s)
{
	static struct xc_line x;
	uint64_t n, i, it = 0, v;
	uint64_t asm_lock = 0, asm_nolock = 0;
	uint64_t min_lock = UINT64_MAX, min_nolock = UINT64_MAX;
	uint64_t suite_lock = 0, suite_nolock = 0, suite_ops = 0;
	double r_asm, r_suite, agree, lk, nl;
	char buf[256];

	x.v = 0;
	v = 0;
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++, it++) {
			asm_lock += xc_asm_sum(xc_asm_lock, &x.v, &min_lock);
			asm_nolock += xc_asm_sum(xc_asm_nolock, &x.v,
						 &min_nolock);
			v = x.v;
			suite_lock += xc_suite_sum(xc_suite_lock, &x.v, &v);
			suite_nolock += xc_suite_sum(xc_suite_nolock, &x.v, &v);
			suite_ops += XC_RUNS * XC_N;
		}
	if (!it || !suite_lock || !asm_lock)
		return;
	r_asm = (double)asm_nolock / (double)asm_lock;
	r_suite = (double)suite_nolock / (double)suite_lock;
	agree = r_suite / r_asm;
	akb_counter(s, "ratio_asm", r_asm);
	akb_counter(s, "ratio_suite", r_suite);
	akb_counter(s, "agreement", agree);
	akb_counter(s, "asm_lock_tsc", (double)asm_lock / (double)suite_ops);
	akb_counter(s, "asm_nolock_tsc",
		    (double)asm_nolock / (double)suite_ops);
	akb_counter(s, "asm_min_lock_tsc", (double)min_lock / XC_N);
	akb_counter(s, "asm_min_nolock_tsc", (double)min_nolock / XC_N);
	lk = (double)suite_lock / (double)suite_ops;
	nl = (double)suite_nolock / (double)suite_ops;
	akb_counter(s, "suite_lock_ticks", lk);
	akb_counter(s, "suite_nolock_ticks", nl);
	snprintf(buf, sizeof(buf),
		 "%s: nolock/lock %.3f (asm, %s) vs %.3f (suite, %s)",
		 agree < 0.9 || agree > 1.1 ? "DISAGREE" : "agree within 10%",
		 r_asm, xc_rdtscp ? "rdtscp" : "rdtsc",
		 r_suite, akb_counter_info()->key);
	akb_label(s, buf);
	if (x.v != v)
		akb_fail(s, "the cmpxchg chain lost its value");
}

void akb_suite_xcheck(void)
{
	unsigned int a, b, c, d;
	struct akb_def *def;

	if (__get_cpuid(0x80000001, &a, &b, &c, &d))
		xc_rdtscp = d & (1u << 27);
	def = xc_new(bm_xcheck);
	akb_set_batch(def, 1);	/* one cross-check per iteration */
}
#else
static void bm_xcheck(struct akb_state *s)
{
	uint64_t n;

	while (akb_batch(s, &n))
		;
}

void akb_suite_xcheck(void)
{
	akb_skip_always(xc_new(bm_xcheck), AKB_SKIP_X86_64_ONLY, NULL);
}
#endif
