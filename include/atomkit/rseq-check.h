/* SPDX-License-Identifier: MIT */
/*
 * The target side of atomkit-rseq-check, the rseq abort injector
 * (doc/testing.md, "The rseq abort injector").  A target program runs
 * each of its cases in a loop:
 *
 *	struct ak_rseq_check_case c = {
 *		.name = "percpu/add64",
 *		.regions = { { copies, bytes } },	// what others see
 *	};
 *
 *	while (ak_rseq_check_begin(&c)) {
 *		before = ...;
 *		one operation, which enters rseq sections;
 *		ak_rseq_check_end(&c, after == before + 1,
 *				  "%lu, then %lu", before, after);
 *	}
 *	return ak_rseq_check_exit();
 *
 * Under the tracer, ak_rseq_check_begin() and _end() trap to it: it says
 * how often the case runs again (once to find the sections the operation
 * enters, then once per instruction of each), puts a breakpoint on one
 * instruction per run, reads the regions when the section it stopped
 * aborts (they must be as they were before the run: an aborted section
 * has no visible effect), and reads the verdict at the end (the retry
 * committed exactly once).  Run alone, each case runs once, and
 * ak_rseq_check_exit() says whether every verdict was right.
 *
 * The program must be single-threaded while its cases run: a breakpoint
 * in a thread the tracer does not trace would kill it.
 */
#ifndef ATOMKIT_RSEQ_CHECK_H
#define ATOMKIT_RSEQ_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AK_RSEQ_CHECK_MAGIC	0x616b7263u	/* "akrc" */
#define AK_RSEQ_CHECK_REGIONS	4

struct ak_rseq_check_region {
	const void *p;
	size_t len;
};

/* The layout is the protocol with the tracer: fields only at the end. */
struct ak_rseq_check_case {
	uint32_t magic;		/* set by ak_rseq_check_begin() */
	uint32_t again;		/* tracer: run again, as variant again-1 */
	const char *name;	/* the case, as the report names it */
	/* memory an aborted section must leave as it found it */
	struct ak_rseq_check_region regions[AK_RSEQ_CHECK_REGIONS];
	uint32_t ok;		/* target: the last run's verdict */
	uint32_t runs;		/* target: runs so far */
	char why[200];		/* target: what was wrong */
};

/* Events of the marker trap (the second argument register). */
#define AK_RSEQ_CHECK_BEGIN	1
#define AK_RSEQ_CHECK_END	2

/* True when the case is to run (again). */
bool ak_rseq_check_begin(struct ak_rseq_check_case *c);
/*
 * Which variant of its input the case should run: 0, then 1, 2... while
 * the tracer runs a stop again whose instruction the last run did not
 * reach.  A case whose section has a branch that one input never takes
 * (a clamp, an odd count) varies its input with it.
 */
static inline unsigned int
ak_rseq_check_variant(const struct ak_rseq_check_case *c)
{
	return c->again ? c->again - 1 : 0;
}
/* The run's verdict: ok, or what was wrong (printf format). */
void ak_rseq_check_end(struct ak_rseq_check_case *c, bool ok,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether a tracer is attached (then the markers trap to it). */
bool ak_rseq_check_traced(void);
/* 0 when every run's verdict was right, else 1 (an exit status). */
int ak_rseq_check_exit(void);

#ifdef __cplusplus
}
#endif

#endif /* ATOMKIT_RSEQ_CHECK_H */
