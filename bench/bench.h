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

#define AKB_SUITES(S)		\
	S(harness)		\
	S(uncontended)		\
	S(percpu)		\
	S(casfail)		\
	S(contention)		\
	S(cacheline)		\
	S(xcheck)		\
	S(slab)

#define AKB_SUITE_DECL(s) void akb_suite_##s(void);
AKB_SUITES(AKB_SUITE_DECL)
#undef AKB_SUITE_DECL

#ifdef __cplusplus
}
#endif

#endif /* AKB_BENCH_H */
