/* SPDX-License-Identifier: MIT */
/*
 * Generic side of the per-CPU ops.  An arch with rseq critical sections
 * defines AK_HAVE_ARCH_RSEQ, AK_RSEQ_SIG and these functions, all with the
 * same convention: they run on the slot of CPU (or mm_cid) `cpu`, check
 * *field (rs->cpu_id or rs->mm_cid) against it inside the section, and
 * return 0 when the commit happened, 1 when a compare failed (nothing
 * stored), -1 when the kernel aborted the section (nothing stored; the
 * caller recomputes the slot and retries).
 *
 *   ak_arch_rseq_add{32,64}(rs, field, cpu, p, v, &old)
 *   ak_arch_rseq_cmpxchg{32,64}(rs, field, cpu, p, expect, new, &seen)
 *   ak_arch_rseq_cmpxchg128(rs, field, cpu, p, expect, new, &seen)
 *   ak_arch_rseq_list_pop(rs, field, cpu, &head, &node)
 *   ak_arch_rseq_list_push(rs, field, cpu, &head, node)
 *   ak_arch_rseq_array_push(rs, field, cpu, &count, slots, limit, obj)
 *   ak_arch_rseq_array_pop(rs, field, cpu, &count, slots, &obj)
 *
 * Without them (the generic build, other hosts) the rseq modes are
 * unavailable and the fallbacks serve every op.
 */
#ifndef ATOMKIT_ARCH_GENERIC_PERCPU_H
#define ATOMKIT_ARCH_GENERIC_PERCPU_H

#ifndef AK_HAVE_ARCH_RSEQ
# define AK_HAVE_ARCH_RSEQ	0
/* Never called: the rseq modes are unavailable, so their branch is dead. */
__ak_inline int __ak_no_rseq(void)
{
	__builtin_trap();
}
# define ak_arch_rseq_add32(...)	__ak_no_rseq()
# define ak_arch_rseq_add64(...)	__ak_no_rseq()
# define ak_arch_rseq_cmpxchg32(...)	__ak_no_rseq()
# define ak_arch_rseq_cmpxchg64(...)	__ak_no_rseq()
# define ak_arch_rseq_cmpxchg128(...)	__ak_no_rseq()
# define ak_arch_rseq_list_pop(...)	__ak_no_rseq()
# define ak_arch_rseq_list_push(...)	__ak_no_rseq()
# define ak_arch_rseq_array_push(...)	__ak_no_rseq()
# define ak_arch_rseq_array_pop(...)	__ak_no_rseq()
#endif

#endif /* ATOMKIT_ARCH_GENERIC_PERCPU_H */
