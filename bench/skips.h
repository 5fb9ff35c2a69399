/* SPDX-License-Identifier: MIT */
/*
 * The documented skips: the closed set of reasons for which a benchmark
 * may not run on a machine or build that lacks a placement class, a CPU
 * feature, a per-CPU mode or an arch.  A skip names its reason by ID
 * (AKB_SKIP_<ID>), never by a literal, and `atomkit-bench --list-skips`
 * prints the texts below, one a line, so that a test can tell a
 * documented skip from anything else.
 *
 * A run's error_message (Google Benchmark's SkipWithError) is one of:
 *
 *	skipped: <text>			a documented skip
 *	skipped: <text>: <detail>	the same, with what the machine said
 *					(e.g. the library's reason for
 *					refusing a per-CPU mode)
 *	failed: <what>			a real failure of the run (lost
 *					updates, an allocation that failed,
 *					a leak ...): never a skip
 *
 * No text contains ": ", so the text ends at the first ": " after
 * "skipped: ", or at the end.
 */
#ifndef AKB_SKIPS_H
#define AKB_SKIPS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AKB_SKIPS(S)							\
	/* placement classes the topology lacks (bench/topo.c) */	\
	S(NO_SMT, "no SMT siblings here")				\
	S(NO_MID_CACHE,							\
	  "no cache below the last level is shared by two cores here")	\
	S(NO_CACHES, "hwloc reports no caches here")			\
	S(NO_LLC_PAIR,							\
	  "no last-level cache is shared by two cores that share nothing below it") \
	S(ONE_LLC, "no package has more than one last-level cache here") \
	S(ONE_NUMA, "one NUMA node here")				\
	S(NO_HWLOC,							\
	  "the topology is unknown, hwloc is not built in (install libhwloc-dev and reconfigure)") \
	S(HWLOC_FAILED,							\
	  "the topology is unknown, hwloc could not load it")		\
	S(THIRD_CPU,							\
	  "S/load needs a third CPU in this class, besides those of A and B") \
	/* the CPU, the kernel, the arch */				\
	S(UNUSABLE,							\
	  "this CPU lacks the feature it needs (or AK_CPU_DISABLE hides it)") \
	S(PERCPU_MODE, "the library refuses this per-CPU mode here")	\
	S(RSEQ_ONLY,							\
	  "an rseq-only op or section, and this per-CPU mode is not rseq") \
	S(NO_FLUSH,							\
	  "I needs a cache flush instruction, and none is known on this arch") \
	S(X86_64_ONLY,							\
	  "x86-64 only (it checks lock cmpxchg against cmpxchg)")	\
	S(NO_FRESH_PROCESS,						\
	  "under emulation this program could not start a fresh process of itself for a cold malloc run")

#define AKB_SKIP_ENUM(id, text) AKB_SKIP_##id,
enum akb_skip {
	AKB_SKIPS(AKB_SKIP_ENUM)
	AKB_SKIP_NR
};
#undef AKB_SKIP_ENUM

/*
 * The table's text of a reason.  Inline, so that bench/topo.c can name its
 * absent classes' reasons wherever it is linked.
 */
static inline const char *akb_skip_text(enum akb_skip why)
{
#define AKB_SKIP_TEXT(id, text) text,
	static const char *const texts[] = { AKB_SKIPS(AKB_SKIP_TEXT) };
#undef AKB_SKIP_TEXT

	return (unsigned int)why < AKB_SKIP_NR ? texts[why] : "?";
}

/* "skipped: <text>[: <detail>]" into buf; detail may be NULL. */
void akb_skip_message(char *buf, size_t size, enum akb_skip why,
		      const char *detail);
/* "failed: <what>" into buf. */
void akb_fail_message(char *buf, size_t size, const char *what);
/* Every text, one a line (--list-skips). */
void akb_list_skips(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* AKB_SKIPS_H */
