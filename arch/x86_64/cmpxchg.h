/* SPDX-License-Identifier: MIT */
/*
 * x86-64 cmpxchg family.  Contract: doc/primitives.md.
 *
 * Every locked RMW on x86 is a full barrier, on success and on failure, so
 * the _relaxed/_acquire/_release forms are the locked instruction too: x86
 * has nothing weaker that is still atomic across CPUs.  _local drops the
 * lock prefix, as the kernel's cmpxchg_local does: one instruction cannot
 * be split by a signal on the same thread, but another CPU can interleave
 * with its read and write, so _local is NOT SMP-safe here.
 */
#ifndef ATOMKIT_ARCH_X86_64_CMPXCHG_H
#define ATOMKIT_ARCH_X86_64_CMPXCHG_H

#ifndef __x86_64__
# error "atomkit was configured for x86_64 but the compiler targets another arch"
#endif

#include <atomkit/compiler.h>
#include <atomkit/u128.h>
#include <atomkit/cpu.h>

#define __AK_X86_CMPXCHG(bits, sfx, name, lock)				\
__ak_inline uint##bits##_t						\
ak_x86_cmpxchg##bits##_##name(uint##bits##_t *p, uint##bits##_t old,	\
			      uint##bits##_t new_)			\
{									\
	__asm__ __volatile__(lock "cmpxchg" sfx " %2, %1"		\
			     : "+a"(old), "+m"(*p)			\
			     : "r"(new_)				\
			     : "memory", "cc");				\
	return old;							\
}									\
/* ZF tells success, so the try form needs no compare of its own. */	\
__ak_inline bool							\
ak_x86_try_cmpxchg##bits##_##name(uint##bits##_t *p,			\
				  uint##bits##_t *old,			\
				  uint##bits##_t new_)			\
{									\
	uint##bits##_t o = *old;					\
	bool ok;							\
									\
	__asm__ __volatile__(lock "cmpxchg" sfx " %3, %1"		\
			     : "=@ccz"(ok), "+m"(*p), "+a"(o)		\
			     : "r"(new_)				\
			     : "memory");				\
	if (ak_unlikely(!ok))						\
		*old = o;						\
	return ok;							\
}

#define __AK_X86_WIDTH(bits, sfx)					\
__AK_X86_CMPXCHG(bits, sfx, lock, "lock; ")				\
__AK_X86_CMPXCHG(bits, sfx, nolock, "")					\
/* xchg with memory is implicitly locked: there is no cheaper form. */	\
__ak_inline uint##bits##_t						\
ak_x86_xchg##bits(uint##bits##_t *p, uint##bits##_t v)			\
{									\
	__asm__ __volatile__("xchg" sfx " %0, %1"			\
			     : "+r"(v), "+m"(*p) : : "memory");		\
	return v;							\
}									\
/* The kernel's this_cpu_xchg: an unlocked cmpxchg loop beats xchg. */	\
__ak_inline uint##bits##_t						\
ak_x86_xchg##bits##_nolock(uint##bits##_t *p, uint##bits##_t v)		\
{									\
	uint##bits##_t old = *(volatile uint##bits##_t *)p;		\
									\
	while (!ak_x86_try_cmpxchg##bits##_nolock(p, &old, v))		\
		;							\
	return old;							\
}									\
__ak_inline uint##bits##_t						\
ak_x86_fetch_add##bits(uint##bits##_t *p, uint##bits##_t v)		\
{									\
	__asm__ __volatile__("lock; xadd" sfx " %0, %1"			\
			     : "+r"(v), "+m"(*p) : : "memory", "cc");	\
	return v;							\
}

__AK_X86_WIDTH(32, "l")
__AK_X86_WIDTH(64, "q")

/*
 * cmpxchg16b: old in RDX:RAX, new in RCX:RBX; on failure RDX:RAX receive
 * the current value, so both are in/out operands.  The destination is
 * written even on failure (the line is dirtied), and it must be 16-byte
 * aligned or the CPU raises #GP.
 */
#define __AK_X86_CMPXCHG128(name, lock)					\
__ak_inline ak_u128							\
ak_x86_cmpxchg128_##name(ak_u128 *p, ak_u128 old, ak_u128 new_)		\
{									\
	uint64_t lo = ak_u128_lo(old), hi = ak_u128_hi(old);		\
									\
	AK_BUG_ON(!AK_IS_ALIGNED16(p));					\
	__asm__ __volatile__(lock "cmpxchg16b %2"			\
			     : "+a"(lo), "+d"(hi), "+m"(*p)		\
			     : "b"(ak_u128_lo(new_)),			\
			       "c"(ak_u128_hi(new_))			\
			     : "memory", "cc");				\
	return ak_u128_make(hi, lo);					\
}									\
__ak_inline bool							\
ak_x86_try_cmpxchg128_##name(ak_u128 *p, ak_u128 *old, ak_u128 new_)	\
{									\
	uint64_t lo = ak_u128_lo(*old), hi = ak_u128_hi(*old);		\
	bool ok;							\
									\
	AK_BUG_ON(!AK_IS_ALIGNED16(p));					\
	__asm__ __volatile__(lock "cmpxchg16b %3"			\
			     : "=@ccz"(ok), "+a"(lo), "+d"(hi), "+m"(*p) \
			     : "b"(ak_u128_lo(new_)),			\
			       "c"(ak_u128_hi(new_))			\
			     : "memory");				\
	if (ak_unlikely(!ok))						\
		*old = ak_u128_make(hi, lo);				\
	return ok;							\
}

__AK_X86_CMPXCHG128(lock, "lock; ")
__AK_X86_CMPXCHG128(nolock, "")

/*
 * CX16 is missing only on the first x86-64 CPUs; the check is one load of
 * a cached flag (a constant when built with -mcx16).
 */
__ak_inline bool ak_x86_has_cx16(void)
{
#ifdef __GCC_HAVE_SYNC_COMPARE_AND_SWAP_16
	return true;
#else
	return ak_cpu_has(AK_CPU_CX16);
#endif
}

AK_U128_PICK(ak_x86_cmpxchg128, ak_x86_has_cx16,
	     ak_x86_cmpxchg128_lock,
	     ak_cmpxchg128_lockemu)

AK_U128_PICK(ak_x86_cmpxchg128_local, ak_x86_has_cx16,
	     ak_x86_cmpxchg128_nolock,
	     ak_cmpxchg128_lockemu)

AK_U128_TRY_PICK(ak_x86_try_cmpxchg128, ak_x86_has_cx16,
		 ak_x86_try_cmpxchg128_lock,
		 ak_cmpxchg128_lockemu)

AK_U128_TRY_PICK(ak_x86_try_cmpxchg128_local, ak_x86_has_cx16,
		 ak_x86_try_cmpxchg128_nolock,
		 ak_cmpxchg128_lockemu)

#define AK_HAVE_ARCH_CMPXCHG		1
#define AK_HAVE_ARCH_CMPXCHG128		1
#define AK_CMPXCHG_LOCAL_SMP_SAFE	0

#define ak_arch_cmpxchg32		ak_x86_cmpxchg32_lock
#define ak_arch_cmpxchg64		ak_x86_cmpxchg64_lock
#define ak_arch_cmpxchg32_relaxed	ak_x86_cmpxchg32_lock
#define ak_arch_cmpxchg64_relaxed	ak_x86_cmpxchg64_lock
#define ak_arch_cmpxchg32_acquire	ak_x86_cmpxchg32_lock
#define ak_arch_cmpxchg64_acquire	ak_x86_cmpxchg64_lock
#define ak_arch_cmpxchg32_release	ak_x86_cmpxchg32_lock
#define ak_arch_cmpxchg64_release	ak_x86_cmpxchg64_lock
#define ak_arch_cmpxchg32_local		ak_x86_cmpxchg32_nolock
#define ak_arch_cmpxchg64_local		ak_x86_cmpxchg64_nolock
#define ak_arch_try_cmpxchg32		ak_x86_try_cmpxchg32_lock
#define ak_arch_try_cmpxchg64		ak_x86_try_cmpxchg64_lock
#define ak_arch_try_cmpxchg32_relaxed	ak_x86_try_cmpxchg32_lock
#define ak_arch_try_cmpxchg64_relaxed	ak_x86_try_cmpxchg64_lock
#define ak_arch_try_cmpxchg32_acquire	ak_x86_try_cmpxchg32_lock
#define ak_arch_try_cmpxchg64_acquire	ak_x86_try_cmpxchg64_lock
#define ak_arch_try_cmpxchg32_release	ak_x86_try_cmpxchg32_lock
#define ak_arch_try_cmpxchg64_release	ak_x86_try_cmpxchg64_lock
#define ak_arch_try_cmpxchg32_local	ak_x86_try_cmpxchg32_nolock
#define ak_arch_try_cmpxchg64_local	ak_x86_try_cmpxchg64_nolock
#define ak_arch_xchg32			ak_x86_xchg32
#define ak_arch_xchg64			ak_x86_xchg64
#define ak_arch_xchg32_local		ak_x86_xchg32_nolock
#define ak_arch_xchg64_local		ak_x86_xchg64_nolock
#define ak_arch_fetch_add32		ak_x86_fetch_add32
#define ak_arch_fetch_add64		ak_x86_fetch_add64
#define ak_arch_fetch_add32_relaxed	ak_x86_fetch_add32
#define ak_arch_fetch_add64_relaxed	ak_x86_fetch_add64
#define ak_arch_cmpxchg128		ak_x86_cmpxchg128
#define ak_arch_cmpxchg128_local	ak_x86_cmpxchg128_local
#define ak_arch_try_cmpxchg128		ak_x86_try_cmpxchg128
#define ak_arch_try_cmpxchg128_local	ak_x86_try_cmpxchg128_local

/* Columns: see AK_GENERIC_VARIANTS and include/atomkit/registry.h. */
#define AK_ARCH_VARIANTS(V)						\
	V(cmpxchg, 32, lock, full, 1, "lock cmpxchgl", ak_x86_cmpxchg32_lock, ak_always) \
	V(cmpxchg, 64, lock, full, 1, "lock cmpxchgq", ak_x86_cmpxchg64_lock, ak_always) \
	V(cmpxchg, 32, nolock, local, 0, "cmpxchgl", ak_x86_cmpxchg32_nolock, ak_always) \
	V(cmpxchg, 64, nolock, local, 0, "cmpxchgq", ak_x86_cmpxchg64_nolock, ak_always) \
	V(try_cmpxchg, 32, lock, full, 1, "lock cmpxchgl; setz", ak_x86_try_cmpxchg32_lock, ak_always) \
	V(try_cmpxchg, 64, lock, full, 1, "lock cmpxchgq; setz", ak_x86_try_cmpxchg64_lock, ak_always) \
	V(try_cmpxchg, 32, nolock, local, 0, "cmpxchgl; setz", ak_x86_try_cmpxchg32_nolock, ak_always) \
	V(try_cmpxchg, 64, nolock, local, 0, "cmpxchgq; setz", ak_x86_try_cmpxchg64_nolock, ak_always) \
	V(xchg, 32, xchg, full, 1, "xchgl (implicit lock)", ak_x86_xchg32, ak_always) \
	V(xchg, 64, xchg, full, 1, "xchgq (implicit lock)", ak_x86_xchg64, ak_always) \
	V(xchg, 32, nolock, local, 0, "cmpxchgl loop", ak_x86_xchg32_nolock, ak_always) \
	V(xchg, 64, nolock, local, 0, "cmpxchgq loop", ak_x86_xchg64_nolock, ak_always) \
	V(fetch_add, 32, lock, full, 1, "lock xaddl", ak_x86_fetch_add32, ak_always) \
	V(fetch_add, 64, lock, full, 1, "lock xaddq", ak_x86_fetch_add64, ak_always) \
	V(cmpxchg, 128, lock, full, 1, "lock cmpxchg16b", ak_x86_cmpxchg128_lock, ak_need_cx16) \
	V(cmpxchg, 128, nolock, local, 0, "cmpxchg16b", ak_x86_cmpxchg128_nolock, ak_need_cx16) \
	V(try_cmpxchg, 128, lock, full, 1, "lock cmpxchg16b; setz", ak_x86_try_cmpxchg128_lock, ak_need_cx16) \
	V(try_cmpxchg, 128, nolock, local, 0, "cmpxchg16b; setz", ak_x86_try_cmpxchg128_nolock, ak_need_cx16)

#endif /* ATOMKIT_ARCH_X86_64_CMPXCHG_H */
