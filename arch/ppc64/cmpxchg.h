/* SPDX-License-Identifier: MIT */
/*
 * ppc64 cmpxchg family, big- and little-endian.  Contract: doc/primitives.md.
 *
 * Every op is a load-reserve/store-conditional loop; the ordering comes
 * only from the barriers put around it, so each barrier set is its own
 * variant and the names say which barriers run:
 *
 *   sync	  sync; loop; sync	full, as the kernel's cmpxchg
 *   lwsync_sync  lwsync; loop; sync	acq_rel: lwsync does not order an
 *					earlier store against the larx,
 *					so this is not full; it is there to
 *					measure what the leading sync costs
 *   isync	  loop; isync		acquire
 *   lwsync	  lwsync; loop		release
 *   none	  loop			relaxed
 *
 * The barriers stay outside the loop: one between larx and stcx. would
 * make the store-conditional more likely to fail.  A failed compare
 * branches past the trailing barrier, so failure promises no ordering at
 * any order, as in the kernel (doc/primitives.md, "On failure").
 *
 * _local is the relaxed loop, as the kernel's __cmpxchg_u64_local: no
 * barriers, but still atomic against other CPUs, so it is SMP-safe here,
 * unlike x86's unlocked cmpxchg.
 *
 * 128 bits use lqarx/stqcx. (ISA 2.07, POWER8), checked at run time where
 * the compiler may not assume POWER8 (big-endian toolchains default far
 * below it); without them the lock emulation of <atomkit/u128.h> runs.
 */
#ifndef ATOMKIT_ARCH_PPC64_CMPXCHG_H
#define ATOMKIT_ARCH_PPC64_CMPXCHG_H

#ifndef __powerpc64__
# error "atomkit was configured for ppc64 but the compiler targets another arch"
#endif

#include <atomkit/compiler.h>
#include <atomkit/u128.h>
#include <atomkit/cpu.h>

/* Barriers, as the kernel's PPC_ATOMIC_{ENTRY,EXIT}_BARRIER and friends. */
#define __AK_PPC_SYNC	"	sync\n"
#define __AK_PPC_LWSYNC	"	lwsync\n"
#define __AK_PPC_ISYNC	"	isync\n"
#define __AK_PPC_NONE	""

/*
 * "Z" makes the pointer an indexed or indirect address and %y prints it as
 * the "ra,rb" pair the X-form larx/stcx. take, with 0 for a missing ra
 * (r0 there would read as literal zero, which %y never emits).  The
 * "+Z" operand also tells the compiler the asm reads and writes *p.
 *
 * The cmp of the 32-bit form is cmpw: it looks at the low word only, so
 * whatever the compiler left in the upper half of old's register does not
 * matter, and lwarx zero-extends what it loads.
 *
 * The exit barrier sits before label 2, so a failed compare skips it.
 */
#define __AK_PPC_CMPXCHG(bits, larx, cmp, stcx, name, entry, exit)	\
__ak_inline uint##bits##_t						\
ak_ppc_cmpxchg##bits##_##name(uint##bits##_t *p, uint##bits##_t old,	\
			      uint##bits##_t new_)			\
{									\
	uint##bits##_t prev;						\
									\
	__asm__ __volatile__(entry					\
			     "1:	" larx "	%[prev],%y[mem]\n" \
			     "	" cmp "	0,%[prev],%[old]\n"		\
			     "	bne-	2f\n"				\
			     "	" stcx "	%[nv],%y[mem]\n"	\
			     "	bne-	1b\n"				\
			     exit					\
			     "2:"					\
			     : [prev] "=&r"(prev), [mem] "+Z"(*p)	\
			     : [old] "r"(old), [nv] "r"(new_)		\
			     : "cr0", "memory");			\
	return prev;							\
}

/* No compare, so nothing skips the exit barrier: it runs every time. */
#define __AK_PPC_XCHG(bits, larx, stcx, name, entry, exit)		\
__ak_inline uint##bits##_t						\
ak_ppc_xchg##bits##_##name(uint##bits##_t *p, uint##bits##_t v)		\
{									\
	uint##bits##_t prev;						\
									\
	__asm__ __volatile__(entry					\
			     "1:	" larx "	%[prev],%y[mem]\n" \
			     "	" stcx "	%[v],%y[mem]\n"		\
			     "	bne-	1b\n"				\
			     exit					\
			     : [prev] "=&r"(prev), [mem] "+Z"(*p)	\
			     : [v] "r"(v)				\
			     : "cr0", "memory");			\
	return prev;							\
}

/*
 * add works on the whole register; for 32 bits stwcx. stores only the low
 * word, which is the 32-bit sum.
 */
#define __AK_PPC_FETCH_ADD(bits, larx, stcx, name, entry, exit)	\
__ak_inline uint##bits##_t						\
ak_ppc_fetch_add##bits##_##name(uint##bits##_t *p, uint##bits##_t v)	\
{									\
	uint##bits##_t prev, sum;					\
									\
	__asm__ __volatile__(entry					\
			     "1:	" larx "	%[prev],%y[mem]\n" \
			     "	add	%[sum],%[prev],%[v]\n"		\
			     "	" stcx "	%[sum],%y[mem]\n"	\
			     "	bne-	1b\n"				\
			     exit					\
			     : [prev] "=&r"(prev), [sum] "=&r"(sum),	\
			       [mem] "+Z"(*p)				\
			     : [v] "r"(v)				\
			     : "cr0", "memory");			\
	return prev;							\
}

#define __AK_PPC_WIDTH(bits, larx, cmp, stcx)				\
__AK_PPC_CMPXCHG(bits, larx, cmp, stcx, sync,				\
		 __AK_PPC_SYNC, __AK_PPC_SYNC)				\
__AK_PPC_CMPXCHG(bits, larx, cmp, stcx, lwsync_sync,			\
		 __AK_PPC_LWSYNC, __AK_PPC_SYNC)			\
__AK_PPC_CMPXCHG(bits, larx, cmp, stcx, isync,				\
		 __AK_PPC_NONE, __AK_PPC_ISYNC)				\
__AK_PPC_CMPXCHG(bits, larx, cmp, stcx, lwsync,				\
		 __AK_PPC_LWSYNC, __AK_PPC_NONE)			\
__AK_PPC_CMPXCHG(bits, larx, cmp, stcx, none,				\
		 __AK_PPC_NONE, __AK_PPC_NONE)				\
__AK_PPC_XCHG(bits, larx, stcx, sync, __AK_PPC_SYNC, __AK_PPC_SYNC)	\
__AK_PPC_XCHG(bits, larx, stcx, none, __AK_PPC_NONE, __AK_PPC_NONE)	\
__AK_PPC_FETCH_ADD(bits, larx, stcx, sync, __AK_PPC_SYNC, __AK_PPC_SYNC) \
__AK_PPC_FETCH_ADD(bits, larx, stcx, none, __AK_PPC_NONE, __AK_PPC_NONE)

__AK_PPC_WIDTH(32, "lwarx", "cmpw", "stwcx.")
__AK_PPC_WIDTH(64, "ldarx", "cmpd", "stdcx.")

/*
 * lqarx/stqcx. move an even/odd register pair, and the even register
 * always holds the high doubleword of the quadword's value in both byte
 * orders (it comes from the lower address on big-endian, the higher on
 * little-endian).  That is exactly ak_u128_hi() of a native unsigned
 * __int128, so the same code is right on both, and cmpxchg_double's word
 * order is ak_u128_from_words()'s business alone.
 *
 * The pairs are pinned with explicit register variables, r8:r9 for the
 * value loaded and r6:r7 for the new one (r1 and r2 are not free).  They
 * are set from plain locals just before the asm: anything in between
 * that might be a call (ak_u128_hi() is one at -O0) could clobber them.
 * The loaded pair and the compare scratch are early-clobber so that no
 * input, nor the address of *p, shares a register with them; lqarx's
 * target must not be ra or rb.  lqarx and stqcx. name only the even
 * register; the odd ones are operands as well, so that the compiler
 * knows r9 is written and keeps the low half of new in r7.
 *
 * On a failed compare the pair still holds what lqarx read, which is a
 * single-copy atomic snapshot of all 16 bytes: no store-back is needed
 * to return a consistent value.
 *
 * The quadword instructions are assembled under .machine power8 because
 * a big-endian build may target an older CPU; the run-time check below
 * decides whether they are reached.
 */
#define __AK_PPC_CMPXCHG128(name, entry, exit)				\
__ak_inline ak_u128							\
ak_ppc_cmpxchg128_##name(ak_u128 *p, ak_u128 old, ak_u128 new_)		\
{									\
	uint64_t oh = ak_u128_hi(old), ol = ak_u128_lo(old);		\
	uint64_t nh_ = ak_u128_hi(new_), nl_ = ak_u128_lo(new_);	\
	uint64_t hi, lo, th, tl;					\
									\
	AK_BUG_ON(!AK_IS_ALIGNED16(p));					\
	{								\
		register uint64_t rh __asm__("r8");			\
		register uint64_t rl __asm__("r9");			\
		register uint64_t nh __asm__("r6") = nh_;		\
		register uint64_t nl __asm__("r7") = nl_;		\
									\
		__asm__ __volatile__(					\
			"	.machine push\n"			\
			"	.machine power8\n"			\
			entry						\
			"1:	lqarx	%[rh],%y[mem]\n"		\
			"	xor	%[tl],%[rl],%[ol]\n"		\
			"	xor	%[th],%[rh],%[oh]\n"		\
			"	or.	%[tl],%[tl],%[th]\n"		\
			"	bne-	2f\n"				\
			"	stqcx.	%[nh],%y[mem]\n"		\
			"	bne-	1b\n"				\
			exit						\
			"2:\n"						\
			"	.machine pop"				\
			: [rh] "=&r"(rh), [rl] "=&r"(rl),		\
			  [th] "=&r"(th), [tl] "=&r"(tl),		\
			  [mem] "+Z"(*p)				\
			: [oh] "r"(oh), [ol] "r"(ol),			\
			  [nh] "r"(nh), [nl] "r"(nl)			\
			: "cr0", "memory");				\
		hi = rh;						\
		lo = rl;						\
	}								\
	return ak_u128_make(hi, lo);					\
}

__AK_PPC_CMPXCHG128(lqarx_sync, __AK_PPC_SYNC, __AK_PPC_SYNC)
__AK_PPC_CMPXCHG128(lqarx_none, __AK_PPC_NONE, __AK_PPC_NONE)

/*
 * POWER8 and later have the quadword pair; a build for them (every
 * ppc64le one) needs no check, others ask AT_HWCAP2 once.
 */
__ak_inline bool ak_ppc_has_quadword(void)
{
#ifdef _ARCH_PWR8
	return true;
#else
	return ak_cpu_has(AK_CPU_ISA207);
#endif
}

AK_U128_PICK(ak_ppc_cmpxchg128, ak_ppc_has_quadword,
	     ak_ppc_cmpxchg128_lqarx_sync,
	     ak_cmpxchg128_lockemu)

AK_U128_PICK(ak_ppc_cmpxchg128_local, ak_ppc_has_quadword,
	     ak_ppc_cmpxchg128_lqarx_none,
	     ak_cmpxchg128_lockemu)

#define AK_HAVE_ARCH_CMPXCHG		1
#define AK_HAVE_ARCH_CMPXCHG128		1
#define AK_CMPXCHG_LOCAL_SMP_SAFE	1

#define ak_arch_cmpxchg32		ak_ppc_cmpxchg32_sync
#define ak_arch_cmpxchg64		ak_ppc_cmpxchg64_sync
#define ak_arch_cmpxchg32_relaxed	ak_ppc_cmpxchg32_none
#define ak_arch_cmpxchg64_relaxed	ak_ppc_cmpxchg64_none
#define ak_arch_cmpxchg32_acquire	ak_ppc_cmpxchg32_isync
#define ak_arch_cmpxchg64_acquire	ak_ppc_cmpxchg64_isync
#define ak_arch_cmpxchg32_release	ak_ppc_cmpxchg32_lwsync
#define ak_arch_cmpxchg64_release	ak_ppc_cmpxchg64_lwsync
#define ak_arch_cmpxchg32_local		ak_ppc_cmpxchg32_none
#define ak_arch_cmpxchg64_local		ak_ppc_cmpxchg64_none
#define ak_arch_xchg32			ak_ppc_xchg32_sync
#define ak_arch_xchg64			ak_ppc_xchg64_sync
#define ak_arch_xchg32_local		ak_ppc_xchg32_none
#define ak_arch_xchg64_local		ak_ppc_xchg64_none
#define ak_arch_fetch_add32		ak_ppc_fetch_add32_sync
#define ak_arch_fetch_add64		ak_ppc_fetch_add64_sync
#define ak_arch_fetch_add32_relaxed	ak_ppc_fetch_add32_none
#define ak_arch_fetch_add64_relaxed	ak_ppc_fetch_add64_none
#define ak_arch_cmpxchg128		ak_ppc_cmpxchg128
#define ak_arch_cmpxchg128_local	ak_ppc_cmpxchg128_local

/*
 * Columns: see AK_GENERIC_VARIANTS and include/atomkit/registry.h.  The
 * _local forms are the "none" rows: the same code as relaxed.
 */
#define AK_ARCH_VARIANTS(V)						\
	V(cmpxchg, 32, sync, full, 1, "sync; lwarx/cmpw/stwcx.; sync", ak_ppc_cmpxchg32_sync, ak_always) \
	V(cmpxchg, 64, sync, full, 1, "sync; ldarx/cmpd/stdcx.; sync", ak_ppc_cmpxchg64_sync, ak_always) \
	V(cmpxchg, 32, lwsync_sync, acq_rel, 1, "lwsync; lwarx/cmpw/stwcx.; sync", ak_ppc_cmpxchg32_lwsync_sync, ak_always) \
	V(cmpxchg, 64, lwsync_sync, acq_rel, 1, "lwsync; ldarx/cmpd/stdcx.; sync", ak_ppc_cmpxchg64_lwsync_sync, ak_always) \
	V(cmpxchg, 32, isync, acquire, 1, "lwarx/cmpw/stwcx.; isync", ak_ppc_cmpxchg32_isync, ak_always) \
	V(cmpxchg, 64, isync, acquire, 1, "ldarx/cmpd/stdcx.; isync", ak_ppc_cmpxchg64_isync, ak_always) \
	V(cmpxchg, 32, lwsync, release, 1, "lwsync; lwarx/cmpw/stwcx.", ak_ppc_cmpxchg32_lwsync, ak_always) \
	V(cmpxchg, 64, lwsync, release, 1, "lwsync; ldarx/cmpd/stdcx.", ak_ppc_cmpxchg64_lwsync, ak_always) \
	V(cmpxchg, 32, none, relaxed, 1, "lwarx/cmpw/stwcx.", ak_ppc_cmpxchg32_none, ak_always) \
	V(cmpxchg, 64, none, relaxed, 1, "ldarx/cmpd/stdcx.", ak_ppc_cmpxchg64_none, ak_always) \
	V(xchg, 32, sync, full, 1, "sync; lwarx/stwcx.; sync", ak_ppc_xchg32_sync, ak_always) \
	V(xchg, 64, sync, full, 1, "sync; ldarx/stdcx.; sync", ak_ppc_xchg64_sync, ak_always) \
	V(xchg, 32, none, relaxed, 1, "lwarx/stwcx.", ak_ppc_xchg32_none, ak_always) \
	V(xchg, 64, none, relaxed, 1, "ldarx/stdcx.", ak_ppc_xchg64_none, ak_always) \
	V(fetch_add, 32, sync, full, 1, "sync; lwarx/add/stwcx.; sync", ak_ppc_fetch_add32_sync, ak_always) \
	V(fetch_add, 64, sync, full, 1, "sync; ldarx/add/stdcx.; sync", ak_ppc_fetch_add64_sync, ak_always) \
	V(fetch_add, 32, none, relaxed, 1, "lwarx/add/stwcx.", ak_ppc_fetch_add32_none, ak_always) \
	V(fetch_add, 64, none, relaxed, 1, "ldarx/add/stdcx.", ak_ppc_fetch_add64_none, ak_always) \
	V(cmpxchg, 128, lqarx_sync, full, 1, "sync; lqarx/xor/or./stqcx.; sync", ak_ppc_cmpxchg128_lqarx_sync, ak_need_isa207) \
	V(cmpxchg, 128, lqarx_none, relaxed, 1, "lqarx/xor/or./stqcx.", ak_ppc_cmpxchg128_lqarx_none, ak_need_isa207)

#endif /* ATOMKIT_ARCH_PPC64_CMPXCHG_H */
