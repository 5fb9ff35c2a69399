/* SPDX-License-Identifier: MIT */
/*
 * akbench: benchmarks written in C, run by Google Benchmark.
 *
 * A benchmark is a C function that runs a batched loop:
 *
 *	static void bm_foo(struct akb_state *s)
 *	{
 *		uint64_t n;
 *
 *		while (akb_batch(s, &n))
 *			for (uint64_t i = 0; i < n; i++)
 *				op();
 *	}
 *
 * Each akb_batch() crossing into C++ is paid once per batch, not per
 * operation (doc/benchmarks.md, "Harness overhead").  The harness reads the
 * chosen counter (PAPI_TOT_CYC, the arch's counter, or ns) around the whole
 * loop and reports it per iteration beside Google Benchmark's own times.
 *
 * Multi-thread benchmarks are registered once per placement class given
 * with --placement (bench/topo.c); each thread is pinned before its loop
 * and checked with sched_getcpu().
 */
#ifndef AKBENCH_H
#define AKBENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "skips.h"

#ifdef __cplusplus
extern "C" {
#endif

struct akb_state;
struct akb_def;
typedef void (*akb_fn)(struct akb_state *s);

/* Flags for akb_new(). */
#define AKB_PLACED	0x1u	/* run once per --placement class */
#define AKB_MANUAL_TIME	0x2u	/* the body reports time: akb_set_ticks() */
#define AKB_SWEEP	0x4u	/* threads 1, 2, 4 .. PUs, then 2 x PUs
				 * (or the --threads list) */

/* ---- registration (from a suite's register function) ---- */

/*
 * A benchmark of the suite named suite, running fn; arg is returned by
 * akb_arg().  Its identity is given once, part by part, from which the
 * harness builds both its name and its fields (akb_part() below).
 */
struct akb_def *akb_new(const char *suite, akb_fn fn, const void *arg,
			unsigned int flags);
void akb_add_arg(struct akb_def *d, int64_t v);	/* one run per value */
void akb_arg_name(struct akb_def *d, const char *name);
void akb_set_threads(struct akb_def *d, int threads);
/* Iterations per akb_batch() (default 1000, 1 for slow bodies). */
void akb_set_batch(struct akb_def *d, uint64_t batch);
/*
 * Registered, but every run reports "skipped: <text>[: <detail>]" (a
 * documented skip, bench/skips.h) and nothing else; detail may be NULL.
 */
void akb_skip_always(struct akb_def *d, enum akb_skip why,
		     const char *detail);
/*
 * The benchmark's identity, one part at a time, each written as
 * "ak_<key>" into its entry of Google Benchmark's JSON, so that readers
 * (atomkit-report) take the parts from fields instead of splitting the
 * name; the suite's is "ak_suite", from akb_new().  akb_part() adds
 * "/<value>" to the name as well, so that the name is the suite and the
 * parts in the order given ("prim/x86_64/cmpxchg64/lock/lat") and cannot
 * drift from the fields; with key NULL, in the name only.  akb_field()
 * gives a field that is not in the name (an instruction, a width).
 * Placement and the akb_arg_name() argument are added to both by the
 * harness.
 */
void akb_part(struct akb_def *d, const char *key, const char *value);
void akb_field(struct akb_def *d, const char *key, const char *value);
void akb_field_num(struct akb_def *d, const char *key, long value);
/* Registers everything akb_new() built; called by main, not by suites. */
void akb_register_all(void);

/* ---- inside a benchmark ---- */

bool akb_batch(struct akb_state *s, uint64_t *n);
const void *akb_arg(const struct akb_state *s);
int64_t akb_range(const struct akb_state *s);	/* the akb_add_arg value */
int akb_thread_index(const struct akb_state *s);
int akb_threads(const struct akb_state *s);
/* The OS CPU this thread was pinned to, or -1 when not pinned. */
int akb_cpu(const struct akb_state *s);

/* A counter summed over threads, per iteration, or as a rate per second. */
void akb_counter(struct akb_state *s, const char *name, double v);
void akb_counter_avg(struct akb_state *s, const char *name, double v);
void akb_counter_rate(struct akb_state *s, const char *name, double v);
void akb_label(struct akb_state *s, const char *label);
/*
 * Both end the run through Google Benchmark's error.  akb_skip(): what
 * this machine or build lacks, "skipped: <text>[: <detail>]" from the
 * table of bench/skips.h; akb_fail(): anything else that went wrong,
 * "failed: <what>".
 */
void akb_skip(struct akb_state *s, enum akb_skip why, const char *detail);
void akb_fail(struct akb_state *s, const char *what);
/* AKB_MANUAL_TIME: this batch took ticks of the counter. */
void akb_set_ticks(struct akb_state *s, uint64_t ticks);

/* A spin barrier for the threads of one run (thread 0 resets it). */
void akb_thread_barrier(struct akb_state *s);

/* Keeps v in a register and the computation of it alive. */
#define akb_keep(v) __asm__ __volatile__("" : "+r"(v))
#define akb_clobber() __asm__ __volatile__("" ::: "memory")

#ifdef __cplusplus
}
#endif

#endif /* AKBENCH_H */
