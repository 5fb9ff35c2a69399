// SPDX-License-Identifier: MIT
/*
 * Cache-line transfer by placement, as the SOSP'13 (ccbench) and PACT'15
 * studies measure it: a line left Modified, Exclusive, Shared or Invalid
 * by one thread at each placement class, then one load, CAS, fetch_add
 * or xchg by another thread; latency per state and distance.
 *
 * Two threads, pinned by the harness to the first two CPUs of the class:
 * A (thread 1) puts a line into the state, B (thread 0) performs one
 * operation on it, timed alone between two reads of the counter.  Each
 * round uses the next of CL_LINES lines, CL_STRIDE bytes apart (each on
 * a page of its own, at its own offset in the page) and visited in a
 * fixed shuffled order, so that no prefetcher can fetch a line ahead of
 * the operation.  The threads take turns on a counter in a line of its
 * own ("turn"), spinning with relaxed loads: the hand-off never touches
 * a measured line, and one hand-off serves CL_GROUP lines (A prepares
 * them all, then B measures them one by one), so that a run spends its
 * time measuring rather than handing off.  The states, as B's operation
 * finds them:
 *
 *   M  A stored to the line: Modified in A's cache, in no other.
 *   E  the line was flushed from every cache (clflush; dc civac on
 *      arm64; dcbf on ppc64), then A loaded it: Exclusive (clean) in A's
 *      cache, the only copy.  Where no flush instruction exists, E is
 *      approximated by M (and S by a store of A's instead of the flush
 *      and load), and the label says so.
 *   S  flushed, then A loaded it, then B loaded it: Shared (clean) in
 *      both caches, so B's CAS, fetch_add or xchg is an upgrade that
 *      must invalidate A's copy.  A load by B would hit its own copy, so
 *      S/load runs three threads instead: flushed, then A and a third
 *      thread C (thread 2, on the class's third CPU) load it and B, who
 *      has no copy, loads from the sharers, ccbench's LOAD_FROM_SHARED.
 *      Where the class has no third CPU apart from A's and B's (any class
 *      of a two-PU machine), S/load is skipped with that reason.
 *   I  flushed from every cache: B's operation goes to memory (the
 *      memory of the node B's pages were first touched on), so the
 *      distance to A does not matter.  No flush instruction: skipped.
 *   L1 the baseline, one thread (cacheline/L1/<op>): B stored to the line
 *      just before, so the operation hits its own L1.
 *
 * The operations are the kernel-style full-ordered defaults
 * (ak_cmpxchg, ak_fetch_add and ak_xchg of include/atomkit/cmpxchg.h) and
 * a plain volatile load; B knows each line's value, so every CAS succeeds
 * (the "cas_failed" counter says if one did not).  The figure, in the
 * counter's ticks per iteration (one iteration is one round), is raw: it
 * includes one read of the counter and a fence that makes the operation
 * complete before the second read (lfence on x86-64, dsb ish on arm64,
 * sync on ppc64).  What those add is measured by B, on its CPU, at the
 * start of every run, as ccbench measures its correction: the same timed
 * region with no operation in it, in rounds until they are steady
 * (akb_timer_cost()); the "timer_ticks" counter is that correction, to be
 * subtracted from the raw figure ("timer_iqr" its spread, "timer_steady"
 * 1 when the rounds agreed), and "read_cost" is the run context's cost
 * of back-to-back reads, kept for comparison.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <atomkit/cmpxchg.h>

#include "akbench.h"
#include "bench.h"
#include "counter.h"

#define CL_LINES	32		/* one batch */
#define CL_GROUP	8		/* lines per hand-off */
#define CL_STRIDE	(4096 + 64)

_Static_assert(CL_LINES % CL_GROUP == 0, "a batch is whole groups");

enum cl_state { CL_M, CL_E, CL_S, CL_I, CL_L1, CL_NR_STATES };
enum cl_op { CL_LOAD, CL_CAS, CL_FETCH_ADD, CL_XCHG, CL_NR_OPS };

static const char *const cl_state_names[CL_NR_STATES] = {
	"M", "E", "S", "I", "L1",
};

static const char *const cl_op_names[CL_NR_OPS] = {
	"load", "cas", "fetch_add", "xchg",
};

static const char *const cl_op_how[CL_NR_OPS] = {
	"plain load", "ak_cmpxchg", "ak_fetch_add", "ak_xchg",
};

struct cl_bench {
	enum cl_state state;
	enum cl_op op;
};

static struct cl_bench cl_table[CL_NR_STATES * CL_NR_OPS];

static char cl_buf[CL_LINES * CL_STRIDE] __attribute__((aligned(4096)));
static unsigned int cl_order[CL_LINES];

/* The hand-off, in a line of its own. */
static struct {
	uint64_t turn;		/* group g, stage t runs while turn == ng + t */
	uint64_t ticks;		/* B's ticks for the batch that just ended */
	int cpu[3];
} cl_hand __attribute__((aligned(128)));

/*
 * cl_flush() writes a line back and drops it from every cache in the
 * coherence domain; cl_flush_done() waits until the flushes before it
 * have completed, so that a later load misses.
 */
#if defined(__x86_64__)
# define CL_FLUSH_INSN "clflush"
static inline void cl_flush(void *p)
{
	__asm__ __volatile__("clflush (%0)" : : "r"(p) : "memory");
}

static inline void cl_flush_done(void)
{
	__asm__ __volatile__("mfence" ::: "memory");
}

static inline void cl_complete(void)
{
	__asm__ __volatile__("lfence" ::: "memory");
}
#elif defined(__aarch64__)
# define CL_FLUSH_INSN "dc civac"
static inline void cl_flush(void *p)
{
	__asm__ __volatile__("dc civac, %0" : : "r"(p) : "memory");
}

static inline void cl_flush_done(void)
{
	__asm__ __volatile__("dsb ish" ::: "memory");
}

static inline void cl_complete(void)
{
	__asm__ __volatile__("dsb ish" ::: "memory");
}
#elif defined(__powerpc64__)
# define CL_FLUSH_INSN "dcbf"
static inline void cl_flush(void *p)
{
	__asm__ __volatile__("dcbf 0, %0" : : "r"(p) : "memory");
}

static inline void cl_flush_done(void)
{
	__asm__ __volatile__("sync" ::: "memory");
}

static inline void cl_complete(void)
{
	__asm__ __volatile__("sync" ::: "memory");
}
#else
/* No flush instruction known here: E and S are approximated, I skipped. */
static inline void cl_complete(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#endif

#ifdef CL_FLUSH_INSN
# define CL_HAVE_FLUSH 1
#else
# define CL_HAVE_FLUSH 0
# define CL_FLUSH_INSN "no flush"
static inline void cl_flush(void *p)
{
	(void)p;
}

static inline void cl_flush_done(void)
{
}
#endif

static inline uint64_t *cl_line(uint64_t round)
{
	return (uint64_t *)(void *)(cl_buf +
				    (size_t)cl_order[round % CL_LINES] *
				    CL_STRIDE);
}

/*
 * Until turn reaches want; the counter only grows.  (At the end of a
 * batch C waits for B's last hand-off while A may already have moved the
 * turn past it, so the test is not for equality.)
 */
static inline void cl_wait(uint64_t want)
{
	unsigned int spins = 0;

	while (__atomic_load_n(&cl_hand.turn, __ATOMIC_ACQUIRE) < want) {
		/* a preempted partner: do not spin out the time slice */
		if (++spins >= 1u << 16) {
			sched_yield();
			spins = 0;
		} else {
			ak_cpu_relax();
		}
	}
}

static inline uint64_t cl_read(uint64_t *p)
{
	return *(volatile uint64_t *)p;
}

/* Whether A stores a known value (the round) into the line. */
static bool cl_a_writes(enum cl_state st)
{
	return st == CL_M ||
	       (!CL_HAVE_FLUSH && (st == CL_E || st == CL_S));
}

/*
 * A, and C for S/load: put the group of lines from round r0 on into the
 * state.  The flushes of a group are issued together and waited for once,
 * and A's loads of them are independent, so that setting up a group costs
 * about one memory access rather than one per line.
 */
static void cl_prepare(const struct cl_bench *b, int tid, uint64_t r0)
{
	uint64_t j, v;

	if (tid == 2) {		/* C: the second sharer */
		for (j = 0; j < CL_GROUP; j++) {
			v = cl_read(cl_line(r0 + j));
			akb_keep(v);
		}
		return;
	}
	if (cl_a_writes(b->state)) {
		for (j = 0; j < CL_GROUP; j++)
			*(volatile uint64_t *)cl_line(r0 + j) = r0 + j;
		return;
	}
	if (b->state != CL_E && b->state != CL_S && b->state != CL_I)
		return;
	for (j = 0; j < CL_GROUP; j++)
		cl_flush(cl_line(r0 + j));
	cl_flush_done();
	if (b->state == CL_I)
		return;
	for (j = 0; j < CL_GROUP; j++) {
		v = cl_read(cl_line(r0 + j));
		akb_keep(v);
	}
}

/*
 * The timed region of cl_measure() with no operation in it: what the
 * counter and the completing fence add to every figure.
 */
static uint64_t cl_empty(void *arg)
{
	uint64_t t0, t1;

	(void)arg;
	t0 = akb_ticks();
	cl_complete();
	t1 = akb_ticks();
	return t1 - t0;
}

/* B: the one timed operation; returns its ticks. */
static uint64_t cl_measure(const struct cl_bench *b, uint64_t *p,
			   uint64_t round, uint64_t *shadow, uint64_t *fails)
{
	unsigned int idx = cl_order[round % CL_LINES];
	enum cl_op op = b->op;	/* in a register: no load in the timed part */
	uint64_t expect, got = 0, t0, t1;

	if (b->state == CL_L1)
		*(volatile uint64_t *)p = round;
	expect = cl_a_writes(b->state) || b->state == CL_L1 ? round :
		 shadow[idx];

	t0 = akb_ticks();
	switch (op) {
	case CL_LOAD:
		got = cl_read(p);
		akb_keep(got);
		break;
	case CL_CAS:
		got = ak_cmpxchg(p, expect, expect + 1);
		break;
	case CL_FETCH_ADD:
		got = ak_fetch_add(p, 1);
		break;
	case CL_XCHG:
		got = ak_xchg(p, round);
		break;
	case CL_NR_OPS:
		break;
	}
	cl_complete();
	t1 = akb_ticks();

	switch (op) {
	case CL_LOAD:
		shadow[idx] = got;
		break;
	case CL_CAS:
		if (got != expect)
			(*fails)++;
		shadow[idx] = got == expect ? expect + 1 : got;
		break;
	case CL_FETCH_ADD:
		shadow[idx] = got + 1;
		break;
	case CL_XCHG:
		shadow[idx] = round;
		break;
	case CL_NR_OPS:
		break;
	}
	return t1 - t0;
}

static void cl_label(struct akb_state *s, const struct cl_bench *b,
		     int nthreads)
{
	char buf[256], cpus[64];
	const char *what = "";

	switch (b->state) {
	case CL_M:
		what = "M: A stored to it";
		break;
	case CL_E:
		what = CL_HAVE_FLUSH ?
		       "E: flushed (" CL_FLUSH_INSN "), then A loaded it" :
		       "E approximated by M (no cache flush instruction here): A stored to it";
		break;
	case CL_S:
		if (!CL_HAVE_FLUSH)
			what = nthreads == 3 ?
			       "S approximated (no cache flush instruction here): A stored to it, then C loaded it" :
			       "S approximated (no cache flush instruction here): A stored to it, then B loaded it";
		else
			what = nthreads == 3 ?
			       "S: flushed (" CL_FLUSH_INSN "), then A and C loaded it" :
			       "S: flushed (" CL_FLUSH_INSN "), then A and B loaded it";
		break;
	case CL_I:
		what = "I: flushed (" CL_FLUSH_INSN "): from memory";
		break;
	case CL_L1:
		what = "L1: B stored to it just before";
		break;
	case CL_NR_STATES:
		break;
	}
	if (nthreads == 1)
		snprintf(cpus, sizeof(cpus), "cpu %d", cl_hand.cpu[0]);
	else if (nthreads == 2)
		snprintf(cpus, sizeof(cpus), "B cpu %d, A cpu %d",
			 cl_hand.cpu[0], cl_hand.cpu[1]);
	else
		snprintf(cpus, sizeof(cpus), "B cpu %d, A cpu %d, C cpu %d",
			 cl_hand.cpu[0], cl_hand.cpu[1], cl_hand.cpu[2]);
	snprintf(buf, sizeof(buf), "%s; B: one %s; %s", what,
		 cl_op_how[b->op], cpus);
	akb_label(s, buf);
}

/*
 * Group g of CL_GROUP lines: A (stage 0) prepares them, C (stage 1,
 * S/load only) loads them, B (the last stage) measures one operation on
 * each; each stage waits for turn == g * nthreads + stage and moves it on
 * by one, so one hand-off serves CL_GROUP measurements.  Every thread
 * runs the same groups, as Google Benchmark gives every thread the same
 * iterations (a batch is CL_LINES of them, a whole number of groups).
 */
static void cl_run(struct akb_state *s)
{
	const struct cl_bench *b = akb_arg(s);
	int tid = akb_thread_index(s), nt = akb_threads(s);
	uint64_t stage = tid == 0 ? (uint64_t)nt - 1 : (uint64_t)tid - 1;
	uint64_t shadow[CL_LINES];
	uint64_t n, i, j, r = 0, g = 0, fails = 0, ticks;
	struct akb_timer_cost tc = { 0 };
	bool first = true;

	cl_hand.cpu[tid < 3 ? tid : 2] = akb_cpu(s);
	if (tid == 0) {
		memset(cl_buf, 0, sizeof(cl_buf));
		memset(shadow, 0, sizeof(shadow));
		__atomic_store_n(&cl_hand.turn, 0, __ATOMIC_RELAXED);
	}
	while (akb_batch(s, &n)) {
		if (first) {
			first = false;
			/* Google Benchmark's start barrier published cpu[] */
			if (nt == 3 && (cl_hand.cpu[2] < 0 ||
					cl_hand.cpu[2] == cl_hand.cpu[0] ||
					cl_hand.cpu[2] == cl_hand.cpu[1])) {
				/* every thread skips: the next batch ends it */
				akb_skip(s, AKB_SKIP_THIRD_CPU, NULL);
				continue;
			}
			/* the others wait for their turn meanwhile, as
			 * they do while B measures */
			if (tid == 0)
				akb_timer_cost(cl_empty, NULL, &tc);
		}
		ticks = 0;
		for (i = 0; i < n; i += CL_GROUP, g++) {
			cl_wait(g * (uint64_t)nt + stage);
			if (tid) {
				cl_prepare(b, tid, r);
				r += CL_GROUP;
			} else {
				/* S, two threads: B takes its shared copies */
				for (j = 0; b->state == CL_S && nt == 2 &&
				     j < CL_GROUP; j++) {
					uint64_t v = cl_read(cl_line(r + j));

					akb_keep(v);
				}
				for (j = 0; j < CL_GROUP; j++, r++)
					ticks += cl_measure(b, cl_line(r), r,
							    shadow, &fails);
			}
			if (tid == 0 && i + CL_GROUP >= n)
				cl_hand.ticks = ticks;
			__atomic_store_n(&cl_hand.turn,
					 g * (uint64_t)nt + stage + 1,
					 __ATOMIC_RELEASE);
		}
		if (tid) {
			/* every thread reports the same time: B's */
			cl_wait(g * (uint64_t)nt);
			ticks = cl_hand.ticks;
		}
		akb_set_ticks(s, ticks);
	}
	if (tid == 0 && r) {
		cl_label(s, b, nt);
		akb_counter(s, "read_cost", akb_counter_info()->read_cost);
		akb_counter(s, "timer_ticks", tc.ticks);
		akb_counter(s, "timer_iqr", tc.iqr);
		akb_counter(s, "timer_steady", tc.steady);
		if (b->op == CL_CAS)
			akb_counter(s, "cas_failed", (double)fails);
	}
}

static void cl_shuffle(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned int k, j, t;

	for (k = 0; k < CL_LINES; k++)
		cl_order[k] = k;
	for (k = CL_LINES - 1; k > 0; k--) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		j = (unsigned int)((x >> 33) % (k + 1));
		t = cl_order[k];
		cl_order[k] = cl_order[j];
		cl_order[j] = t;
	}
}

void akb_suite_cacheline(void)
{
	int st, op;

	cl_shuffle();
	for (st = 0; st < CL_NR_STATES; st++)
		for (op = 0; op < CL_NR_OPS; op++) {
			struct cl_bench *b = &cl_table[st * CL_NR_OPS + op];
			struct akb_def *d;

			b->state = (enum cl_state)st;
			b->op = (enum cl_op)op;
			if (st == CL_L1) {
				d = akb_new("cacheline", cl_run, b,
					    AKB_MANUAL_TIME);
			} else {
				d = akb_new("cacheline", cl_run, b,
					    AKB_PLACED | AKB_MANUAL_TIME);
				akb_set_threads(d, st == CL_S && op == CL_LOAD ?
						3 : 2);
			}
			akb_part(d, "state", cl_state_names[st]);
			akb_part(d, "op", cl_op_names[op]);
			akb_set_batch(d, CL_LINES);
			if (st == CL_I && !CL_HAVE_FLUSH)
				akb_skip_always(d, AKB_SKIP_NO_FLUSH, NULL);
		}
}
