/* SPDX-License-Identifier: MIT */
/*
 * Placement classes derived from the machine's topology (hwloc): which
 * PUs the threads of a multi-thread benchmark run on.  The first two PUs
 * of a class have exactly the class's nearest common ancestor, so a
 * two-thread benchmark measures that distance; more threads take the
 * class's further PUs in order, then wrap around (oversubscription).
 */
#ifndef AKB_TOPO_H
#define AKB_TOPO_H

#include <stddef.h>

#include "skips.h"

#ifdef __cplusplus
extern "C" {
#endif

enum akb_place {
	AKB_PLACE_SMT,		/* two PUs of one core */
	AKB_PLACE_CORE,		/* two cores sharing a cache below the LLC */
	AKB_PLACE_LLC,		/* two cores sharing only the last-level cache */
	AKB_PLACE_PACKAGE,	/* two cores of one package, different LLCs */
	AKB_PLACE_NUMA,		/* two NUMA nodes */
	AKB_PLACE_SPREAD,	/* every PU, distinct cores first */
	AKB_PLACE_NR
};

int akb_topo_init(char *err, size_t errlen);
const char *akb_place_name(enum akb_place p);
/* "smt,llc" or "all" into a mask of (1 << class); -1 and err if bad. */
int akb_place_parse(const char *list, unsigned int *mask, char *err,
		    size_t errlen);
/*
 * OS CPU numbers of a class in thread order; 0 if absent, and *why is the
 * documented skip that says why (bench/skips.h).
 */
int akb_place_cpus(enum akb_place p, const int **cpus, enum akb_skip *why);
int akb_nr_pus(void);
int akb_nr_cores(void);
/* One more than the highest OS CPU number: what a mask of them must hold. */
int akb_cpu_limit(void);
/* Binds the calling thread to one OS CPU and checks with sched_getcpu(). */
int akb_pin_self(int cpu, char *err, size_t errlen);
/*
 * The calling thread's CPU mask, of whatever size the kernel's is, kept
 * before a run pins the thread; restoring it frees it, and either gives
 * NULL or -1 and err on failure.
 */
struct akb_affinity;
struct akb_affinity *akb_affinity_save(char *err, size_t errlen);
int akb_affinity_restore(struct akb_affinity *a, char *err, size_t errlen);
/* One line: packages, NUMA nodes, caches, cores, PUs, SMT. */
const char *akb_topo_summary(void);
/* "hwloc 2.9.0", "sched_getaffinity (hwloc not built in)" or "(... failed)". */
const char *akb_topo_source(void);
/* The CPU model as hwloc or /proc/cpuinfo names it. */
const char *akb_cpu_model(void);

#ifdef __cplusplus
}
#endif

#endif /* AKB_TOPO_H */
