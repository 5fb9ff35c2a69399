/* SPDX-License-Identifier: MIT */
/*
 * What the atomkit-bench program's parts say to each other: the binding's
 * set-up calls used by main, the run context, and the suites' register
 * functions (one per file, listed in AKB_SUITES).
 */
#ifndef AKB_BENCH_H
#define AKB_BENCH_H

#include "akbench.h"

#ifdef __cplusplus
extern "C" {
#endif

void akb_set_placements(unsigned int mask);
void akb_set_sweep(const int *threads, int n);
void akb_add_context(const char *key, const char *value);
int akb_gbench_run(int *argc, char **argv);
/*
 * The most threads one run may have here (16 per PU, at least 64, at
 * most AKB_THREADS_LIMIT): --threads refuses more, no default plans more,
 * and a suite's per-thread arrays hold that many.
 */
#define AKB_THREADS_LIMIT 8192	/* twice the 4096 PUs of the largest */
int akb_max_threads(void);
/* The most threads a run registered so far is planned with, of the
 * benchmarks whose names start with prefix. */
int akb_planned_threads(const char *prefix);

/* Adds the machine and build description to the run context. */
void akb_env_context(void (*add)(const char *key, const char *value));
/* Whether we run under emulation (qemu-user); *why says how we know. */
int akb_emulated(const char **why);
/*
 * --quick: a correctness run whose figures nobody reads (bench-quick, the
 * cross rig); untimed warm-up rounds shrink to a few objects.
 */
void akb_set_quick(void);
int akb_quick(void);
/*
 * A benchmark of variant v, named and given its fields from the variant
 * (suite_uncontended.c): "<suite>/<arch>/<prim><width>/<name>", to which
 * the caller may add parts.
 */
struct ak_variant;
struct akb_def *akb_variant_new(const char *suite, akb_fn fn,
				const struct ak_variant *v, unsigned int flags);
/*
 * A cold malloc run of the slab suite, in the fresh process main() is
 * (--slab-cold-child=SIZE,N,COUNTER); its exit status.
 */
int akb_slab_cold_child(const char *spec);

/*
 * The suites, in the order they run: the one place a suite is declared.
 * Each is S(name, prefix, needs, title): the register function
 * akb_suite_<name>(), the start of every benchmark name it registers,
 * what some or all of its benchmarks need (comma-separated, from the
 * list below; without it they are skipped with a documented reason, or
 * for preload left to scripts/run-bench) and what it measures.
 * `atomkit-bench --list-suites` prints them as JSON, and scripts/run-bench
 * reads this list from here: keep each S( on one line with its name and
 * prefix.
 *
 *   rseq         Linux rseq (the rseq per-CPU mode)
 *   cpu-feature  a CPU feature some variants need (LSE, CX16, lqarx ...)
 *   hwloc        the topology from hwloc: one run per placement class
 *   threads      one thread per PU and more (akb_max_threads())
 *   preload      the malloc rows again under each system allocator,
 *                preloaded into a process of its own (scripts/run-bench)
 *   x86-64       x86-64 only
 *   cache-flush  a cache-line flush instruction
 */
#define AKB_SUITES(S)							\
	S(harness, "harness/", "",					\
	  "the harness's own cost: the batched loop, one crossing per iteration, one counter read") \
	S(uncontended, "prim/", "cpu-feature",				\
	  "every variant of every primitive, one thread, the line in L1: latency and throughput") \
	S(percpu, "percpu/", "rseq,cpu-feature",			\
	  "this_cpu_* operations and the slab fastpaths' pairs in every per-CPU mode, one thread") \
	S(casfail, "cas/", "cpu-feature",				\
	  "a compare-and-swap that succeeds against one that fails")	\
	S(contention, "contention/", "cpu-feature,threads",		\
	  "1 to twice the PUs threads updating one cache line: throughput and fairness") \
	S(cacheline, "cacheline/", "hwloc,cache-flush",			\
	  "one operation on a line another thread left M, E, S or I, per placement class") \
	S(xcheck, "xcheck/", "x86-64",					\
	  "the lock/nolock cmpxchg ratio against a hand-written asm loop") \
	S(slab, "slab/", "rseq,threads,preload",			\
	  "the slab fastpath designs beside malloc: sequential, paired, concurrent, remote and bulk")

#define AKB_SUITE_DECL(s, prefix, needs, title) void akb_suite_##s(void);
AKB_SUITES(AKB_SUITE_DECL)
#undef AKB_SUITE_DECL

#ifdef __cplusplus
}
#endif

#endif /* AKB_BENCH_H */
