/* SPDX-License-Identifier: MIT */
/*
 * atomkit-rseq-check where the arch has no rseq sections (the generic
 * build, other hosts): the target's markers do nothing and each case runs
 * once, and the tracer refuses to run, saying why.
 */
#ifndef ATOMKIT_ARCH_GENERIC_RSEQ_CHECK_H
#define ATOMKIT_ARCH_GENERIC_RSEQ_CHECK_H

#ifndef AK_HAVE_ARCH_RSEQ_CHECK
# define AK_HAVE_ARCH_RSEQ_CHECK	0
# define AK_RC_ARCH		"generic"

static inline void __ak_rseq_check_trap(void *c, unsigned long ev)
{
	(void)c;
	(void)ev;
}
#endif

#endif /* ATOMKIT_ARCH_GENERIC_RSEQ_CHECK_H */
