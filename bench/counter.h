/* SPDX-License-Identifier: MIT */
/*
 * The benchmark counter: PAPI_TOT_CYC where the PMU allows it, otherwise
 * the arch's own counter (x86-64 TSC, arm64 cntvct_el0, ppc64 timebase),
 * or CLOCK_MONOTONIC in ns.  Chosen once by akb_counter_select(); every
 * figure is reported in its unit, and the unit is always named.
 */
#ifndef AKB_COUNTER_H
#define AKB_COUNTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum akb_counter_kind {
	AKB_COUNTER_PAPI,	/* core cycles, PAPI_TOT_CYC */
	AKB_COUNTER_ARCH,	/* TSC, cntvct_el0 or timebase ticks */
	AKB_COUNTER_NS,		/* clock_gettime(CLOCK_MONOTONIC) */
};

struct akb_counter_info {
	enum akb_counter_kind kind;
	const char *key;	/* counter name in the output: "cycles",
				 * "tsc_ticks", "cntvct_ticks", "tb_ticks",
				 * "clock_ns" */
	char unit[128];		/* "TSC ticks at 2595.9 MHz (lfence;rdtsc)" */
	double hz;		/* ticks per second (PAPI: as measured) */
	const char *hz_source;	/* "cntfrq_el0", "/proc/cpuinfo timebase",
				 * "calibrated against CLOCK_MONOTONIC" */
	double read_cost;	/* one read, in ticks (back-to-back) */
	char papi[160];		/* PAPI status: "available" or why not */
};

/*
 * want: "auto", "papi", "tsc" or "arch" (the arch's counter on any arch),
 * or "ns".  On failure returns -1 with a message in err.
 */
int akb_counter_select(const char *want, char *err, size_t errlen);
const struct akb_counter_info *akb_counter_info(void);
/* Whether PAPI_TOT_CYC can be read here; why not in *why. */
bool akb_papi_probe(const char **why);

/* The arch counter, read in program order with what precedes it. */
uint64_t akb_arch_ticks(void);
/* The arch counter's name ("TSC", "cntvct_el0", "timebase", "ns"). */
const char *akb_arch_counter_name(void);
/* Its frequency in Hz, and where that figure came from. */
double akb_arch_hz(const char **source);

/* The selected counter (per-thread set-up for PAPI happens on first use). */
uint64_t akb_ticks(void);
uint64_t akb_now_ns(void);

/*
 * The counter as another process of this program selected it, without
 * the calibration and read-cost measurement (a fresh process that only
 * reports ticks: the slab suite's cold malloc rows).  kind as
 * akb_counter_kind_name() gives it; -1 when it cannot be had here.
 */
const char *akb_counter_kind_name(enum akb_counter_kind kind);
int akb_counter_select_bare(const char *kind);

/*
 * What the timer adds to a region timed between two reads of it, as
 * ccbench corrects for it: the region with nothing in it, sampled in
 * rounds until the rounds are steady (akb_timer_cost() in counter.c).
 */
struct akb_timer_cost {
	double ticks;		/* the correction: a steady round's median,
				 * the lowest of them */
	double iqr;		/* that round's interquartile range */
	int rounds;		/* rounds taken */
	bool steady;		/* three steady rounds in a row agreed */
};

/* empty(arg): one timed region with nothing in it, its ticks. */
void akb_timer_cost(uint64_t (*empty)(void *arg), void *arg,
		    struct akb_timer_cost *out);

#ifdef __cplusplus
}
#endif

#endif /* AKB_COUNTER_H */
