/* SPDX-License-Identifier: MIT */
/*
 * Generic cmpxchg family on the compiler's C11 __atomic builtins.
 *
 * Two jobs: the variants named ak_generic_<op><width>_<order> are always
 * compiled, on every arch, so the compiler's own code (on arm64, whatever
 * -moutline-atomics makes of it) can be measured beside the hand-written
 * asm; and every ak_arch_* op an arch header leaves undefined falls back to
 * one of them here.  The contract of each op is in doc/primitives.md.
 *
 * "full" follows the kernel, not C11: a full barrier before and after a
 * relaxed RMW (asm-generic's __atomic_op_fence).  A C11 seq_cst RMW is not
 * that strong on arm64 or ppc64 (an earlier plain store may pass a later
 * plain load), so it is offered as its own variant, not as full.
 * On failure no ordering is promised at any order, as in the kernel.
 */
#ifndef ATOMKIT_ARCH_GENERIC_CMPXCHG_H
#define ATOMKIT_ARCH_GENERIC_CMPXCHG_H

#include <atomkit/compiler.h>
#include <atomkit/u128.h>

#define __AK_GEN_ORDER_OPS(bits, order, mo)				\
__ak_inline uint##bits##_t						\
ak_generic_cmpxchg##bits##_##order(uint##bits##_t *p,			\
				   uint##bits##_t old,			\
				   uint##bits##_t new_)			\
{									\
	__atomic_compare_exchange_n(p, &old, new_, false, mo,		\
				    __ATOMIC_RELAXED);			\
	return old;							\
}									\
__ak_inline uint##bits##_t						\
ak_generic_xchg##bits##_##order(uint##bits##_t *p, uint##bits##_t v)	\
{									\
	return __atomic_exchange_n(p, v, mo);				\
}									\
__ak_inline uint##bits##_t						\
ak_generic_fetch_add##bits##_##order(uint##bits##_t *p,		\
				     uint##bits##_t v)			\
{									\
	return __atomic_fetch_add(p, v, mo);				\
}

#define __AK_GEN_FULL_OPS(bits)						\
__ak_inline uint##bits##_t						\
ak_generic_cmpxchg##bits##_full(uint##bits##_t *p, uint##bits##_t old,	\
				uint##bits##_t new_)			\
{									\
	bool ok;							\
									\
	__atomic_thread_fence(__ATOMIC_SEQ_CST);			\
	ok = __atomic_compare_exchange_n(p, &old, new_, false,		\
					 __ATOMIC_RELAXED,		\
					 __ATOMIC_RELAXED);		\
	if (ok)								\
		__atomic_thread_fence(__ATOMIC_SEQ_CST);		\
	return old;							\
}									\
__ak_inline uint##bits##_t						\
ak_generic_xchg##bits##_full(uint##bits##_t *p, uint##bits##_t v)	\
{									\
	__atomic_thread_fence(__ATOMIC_SEQ_CST);			\
	v = __atomic_exchange_n(p, v, __ATOMIC_RELAXED);		\
	__atomic_thread_fence(__ATOMIC_SEQ_CST);			\
	return v;							\
}									\
__ak_inline uint##bits##_t						\
ak_generic_fetch_add##bits##_full(uint##bits##_t *p, uint##bits##_t v)	\
{									\
	__atomic_thread_fence(__ATOMIC_SEQ_CST);			\
	v = __atomic_fetch_add(p, v, __ATOMIC_RELAXED);			\
	__atomic_thread_fence(__ATOMIC_SEQ_CST);			\
	return v;							\
}

#define __AK_GEN_WIDTH(bits)						\
	__AK_GEN_ORDER_OPS(bits, relaxed, __ATOMIC_RELAXED)		\
	__AK_GEN_ORDER_OPS(bits, acquire, __ATOMIC_ACQUIRE)		\
	__AK_GEN_ORDER_OPS(bits, release, __ATOMIC_RELEASE)		\
	__AK_GEN_ORDER_OPS(bits, acq_rel, __ATOMIC_ACQ_REL)		\
	__AK_GEN_ORDER_OPS(bits, seq_cst, __ATOMIC_SEQ_CST)		\
	__AK_GEN_FULL_OPS(bits)

__AK_GEN_WIDTH(32)
__AK_GEN_WIDTH(64)

/*
 * 128 bits: see ak_cmpxchg128_lockemu() in <atomkit/u128.h>.  The
 * compiler's own 16-byte __atomic is not used: on several targets it is a
 * libatomic call with a lock table of its own (GCC PR 80878), which would
 * not interoperate with the native paths.
 */

/* ---- fallbacks for whatever the arch header did not define ---- */

#ifndef ak_arch_cmpxchg32
# define ak_arch_cmpxchg32		ak_generic_cmpxchg32_full
#endif
#ifndef ak_arch_cmpxchg64
# define ak_arch_cmpxchg64		ak_generic_cmpxchg64_full
#endif
#ifndef ak_arch_cmpxchg32_relaxed
# define ak_arch_cmpxchg32_relaxed	ak_generic_cmpxchg32_relaxed
#endif
#ifndef ak_arch_cmpxchg64_relaxed
# define ak_arch_cmpxchg64_relaxed	ak_generic_cmpxchg64_relaxed
#endif
#ifndef ak_arch_cmpxchg32_acquire
# define ak_arch_cmpxchg32_acquire	ak_generic_cmpxchg32_acquire
#endif
#ifndef ak_arch_cmpxchg64_acquire
# define ak_arch_cmpxchg64_acquire	ak_generic_cmpxchg64_acquire
#endif
#ifndef ak_arch_cmpxchg32_release
# define ak_arch_cmpxchg32_release	ak_generic_cmpxchg32_release
#endif
#ifndef ak_arch_cmpxchg64_release
# define ak_arch_cmpxchg64_release	ak_generic_cmpxchg64_release
#endif
/* Relaxed is already atomic against the thread's own signal handlers. */
#ifndef ak_arch_cmpxchg32_local
# define ak_arch_cmpxchg32_local	ak_arch_cmpxchg32_relaxed
#endif
#ifndef ak_arch_cmpxchg64_local
# define ak_arch_cmpxchg64_local	ak_arch_cmpxchg64_relaxed
#endif

#ifndef ak_arch_xchg32
# define ak_arch_xchg32			ak_generic_xchg32_full
#endif
#ifndef ak_arch_xchg64
# define ak_arch_xchg64			ak_generic_xchg64_full
#endif
#ifndef ak_arch_xchg32_local
# define ak_arch_xchg32_local		ak_generic_xchg32_relaxed
#endif
#ifndef ak_arch_xchg64_local
# define ak_arch_xchg64_local		ak_generic_xchg64_relaxed
#endif
#ifndef ak_arch_fetch_add32
# define ak_arch_fetch_add32		ak_generic_fetch_add32_full
#endif
#ifndef ak_arch_fetch_add64
# define ak_arch_fetch_add64		ak_generic_fetch_add64_full
#endif
#ifndef ak_arch_fetch_add32_relaxed
# define ak_arch_fetch_add32_relaxed	ak_generic_fetch_add32_relaxed
#endif
#ifndef ak_arch_fetch_add64_relaxed
# define ak_arch_fetch_add64_relaxed	ak_generic_fetch_add64_relaxed
#endif

#ifndef ak_arch_cmpxchg128
# define ak_arch_cmpxchg128		ak_cmpxchg128_lockemu
#endif
#ifndef ak_arch_cmpxchg128_local
# define ak_arch_cmpxchg128_local	ak_cmpxchg128_lockemu
#endif
/*
 * try forms the arch did not write with a flag of its own: one compare
 * after the cmpxchg, and the value seen written back on failure.
 */
#define __AK_TRY_FROM(name, type, cmpxchg)				\
__ak_inline bool name(type *p, type *old, type new_)			\
{									\
	type r = cmpxchg(p, *old, new_);				\
									\
	if (ak_likely(r == *old))					\
		return true;						\
	*old = r;							\
	return false;							\
}
#ifndef ak_arch_try_cmpxchg32
__AK_TRY_FROM(__ak_try_cmpxchg32, uint32_t, ak_arch_cmpxchg32)
# define ak_arch_try_cmpxchg32	__ak_try_cmpxchg32
#endif
#ifndef ak_arch_try_cmpxchg32_relaxed
__AK_TRY_FROM(__ak_try_cmpxchg32_relaxed, uint32_t, ak_arch_cmpxchg32_relaxed)
# define ak_arch_try_cmpxchg32_relaxed	__ak_try_cmpxchg32_relaxed
#endif
#ifndef ak_arch_try_cmpxchg32_acquire
__AK_TRY_FROM(__ak_try_cmpxchg32_acquire, uint32_t, ak_arch_cmpxchg32_acquire)
# define ak_arch_try_cmpxchg32_acquire	__ak_try_cmpxchg32_acquire
#endif
#ifndef ak_arch_try_cmpxchg32_release
__AK_TRY_FROM(__ak_try_cmpxchg32_release, uint32_t, ak_arch_cmpxchg32_release)
# define ak_arch_try_cmpxchg32_release	__ak_try_cmpxchg32_release
#endif
#ifndef ak_arch_try_cmpxchg32_local
__AK_TRY_FROM(__ak_try_cmpxchg32_local, uint32_t, ak_arch_cmpxchg32_local)
# define ak_arch_try_cmpxchg32_local	__ak_try_cmpxchg32_local
#endif
#ifndef ak_arch_try_cmpxchg64
__AK_TRY_FROM(__ak_try_cmpxchg64, uint64_t, ak_arch_cmpxchg64)
# define ak_arch_try_cmpxchg64	__ak_try_cmpxchg64
#endif
#ifndef ak_arch_try_cmpxchg64_relaxed
__AK_TRY_FROM(__ak_try_cmpxchg64_relaxed, uint64_t, ak_arch_cmpxchg64_relaxed)
# define ak_arch_try_cmpxchg64_relaxed	__ak_try_cmpxchg64_relaxed
#endif
#ifndef ak_arch_try_cmpxchg64_acquire
__AK_TRY_FROM(__ak_try_cmpxchg64_acquire, uint64_t, ak_arch_cmpxchg64_acquire)
# define ak_arch_try_cmpxchg64_acquire	__ak_try_cmpxchg64_acquire
#endif
#ifndef ak_arch_try_cmpxchg64_release
__AK_TRY_FROM(__ak_try_cmpxchg64_release, uint64_t, ak_arch_cmpxchg64_release)
# define ak_arch_try_cmpxchg64_release	__ak_try_cmpxchg64_release
#endif
#ifndef ak_arch_try_cmpxchg64_local
__AK_TRY_FROM(__ak_try_cmpxchg64_local, uint64_t, ak_arch_cmpxchg64_local)
# define ak_arch_try_cmpxchg64_local	__ak_try_cmpxchg64_local
#endif
#ifndef ak_arch_try_cmpxchg128
__AK_TRY_FROM(__ak_try_cmpxchg128, ak_u128, ak_arch_cmpxchg128)
# define ak_arch_try_cmpxchg128	__ak_try_cmpxchg128
#endif
#ifndef ak_arch_try_cmpxchg128_local
__AK_TRY_FROM(__ak_try_cmpxchg128_local, ak_u128, ak_arch_cmpxchg128_local)
# define ak_arch_try_cmpxchg128_local	__ak_try_cmpxchg128_local
#endif

#ifndef AK_HAVE_ARCH_CMPXCHG128
# define AK_HAVE_ARCH_CMPXCHG128	0
#endif
#ifndef AK_CMPXCHG_LOCAL_SMP_SAFE
# define AK_CMPXCHG_LOCAL_SMP_SAFE	1
#endif

/*
 * Variants every arch registers: the compiler's code at each C11 order,
 * the kernel-style full form, and the 128-bit emulation.  Columns are
 * those of AK_ARCH_VARIANTS (see include/atomkit/registry.h).
 */
#define __AK_GEN_ORDER_VARIANTS(V, order, pre, post)			\
	V(cmpxchg, 32, c11_##order, order, 1, pre "__atomic_compare_exchange_n" post, ak_generic_cmpxchg32_##order, ak_always) \
	V(cmpxchg, 64, c11_##order, order, 1, pre "__atomic_compare_exchange_n" post, ak_generic_cmpxchg64_##order, ak_always) \
	V(xchg, 32, c11_##order, order, 1, pre "__atomic_exchange_n" post, ak_generic_xchg32_##order, ak_always) \
	V(xchg, 64, c11_##order, order, 1, pre "__atomic_exchange_n" post, ak_generic_xchg64_##order, ak_always) \
	V(fetch_add, 32, c11_##order, order, 1, pre "__atomic_fetch_add" post, ak_generic_fetch_add32_##order, ak_always) \
	V(fetch_add, 64, c11_##order, order, 1, pre "__atomic_fetch_add" post, ak_generic_fetch_add64_##order, ak_always)

#define AK_GENERIC_VARIANTS(V)						\
	__AK_GEN_ORDER_VARIANTS(V, full, "fence; ", " relaxed; fence") \
	__AK_GEN_ORDER_VARIANTS(V, seq_cst, "", " seq_cst")		\
	__AK_GEN_ORDER_VARIANTS(V, acq_rel, "", " acq_rel")		\
	__AK_GEN_ORDER_VARIANTS(V, acquire, "", " acquire")		\
	__AK_GEN_ORDER_VARIANTS(V, release, "", " release")		\
	__AK_GEN_ORDER_VARIANTS(V, relaxed, "", " relaxed")		\
	V(cmpxchg, 128, lockemu, full, 1, "hashed spinlock, signals blocked", ak_cmpxchg128_lockemu, ak_always)

#endif /* ATOMKIT_ARCH_GENERIC_CMPXCHG_H */
