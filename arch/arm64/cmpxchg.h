/* SPDX-License-Identifier: MIT */
/*
 * arm64 cmpxchg family.  Contract: doc/primitives.md.
 *
 * Two implementations of every op, both always compiled so that each can
 * be tested and measured on any machine that runs it:
 *
 *  - LSE (FEAT_LSE, ARMv8.1): one instruction, cas/swp/ldadd/casp.  The
 *    assembler is told about it per asm statement (.arch_extension lse),
 *    so the library still builds for plain armv8-a and only runs these
 *    after the run-time check.
 *  - LL/SC (ARMv8.0): a load-exclusive/store-exclusive loop, which every
 *    arm64 CPU has.
 *
 * The ak_arch_* ops pick one at run time, as the kernel does with its
 * boot-time alternatives (see ak_arm64_has_lse()).
 *
 * Orderings follow the kernel.  "full" is casal/swpal/ldaddal for LSE: an
 * acquire and a release on one single-copy-atomic RMW, which the kernel
 * relies on as a full barrier.  For LL/SC it is a store-release exclusive
 * followed by dmb ish: the release keeps earlier accesses before the
 * store, the dmb keeps later ones after it, so an acquiring load would add
 * nothing.  A failed compare is promised no ordering at any order, as in
 * the kernel: the LL/SC loop branches past its dmb, and a failed cas
 * stores nothing, so whatever its acquire half gives is incidental.
 * Callers that need ordering on failure add a fence (doc/primitives.md).
 *
 * _local is _relaxed, as in the kernel: still atomic against other CPUs,
 * just unordered, so AK_CMPXCHG_LOCAL_SMP_SAFE is 1 here (unlike x86).
 *
 * The LL/SC loops start with prfm pstl1strm: it asks for the line in a
 * writable state before the load-exclusive, so the store-exclusive need
 * not upgrade it, which would make it likelier to fail under contention.
 */
#ifndef ATOMKIT_ARCH_ARM64_CMPXCHG_H
#define ATOMKIT_ARCH_ARM64_CMPXCHG_H

#ifndef __aarch64__
# error "atomkit was configured for arm64 but the compiler targets another arch"
#endif

#include <atomkit/compiler.h>
#include <atomkit/u128.h>
#include <atomkit/cpu.h>

#define __AK_LSE_PREAMBLE	".arch_extension lse\n"

/*
 * The w argument below is the register width the asm names: w for 32 bits,
 * x for 64.  The AAPCS64 leaves the upper half of a register that holds a
 * 32-bit value undefined, so 32-bit values are compared and stored only
 * through their w names.
 */

/* cas{,a,l,al}: old is overwritten with the value found, hit or miss. */
#define __AK_LSE_CMPXCHG(bits, w, al)					\
__ak_inline uint##bits##_t						\
ak_arm64_cmpxchg##bits##_lse_cas##al(uint##bits##_t *p,		\
				     uint##bits##_t old,		\
				     uint##bits##_t new_)		\
{									\
	__asm__ __volatile__(						\
		__AK_LSE_PREAMBLE					\
		"	cas" #al "	%" #w "[old], %" #w "[new_], %[v]" \
		: [old] "+r"(old), [v] "+Q"(*p)				\
		: [new_] "r"(new_)					\
		: "memory");						\
	return old;							\
}

/*
 * ld{a}xr; cmp; b.ne; st{l}xr; cbnz; [dmb].  A mismatch leaves without a
 * store: a single-register load-exclusive is single-copy atomic by itself,
 * so the value returned is one *p really held.
 */
#define __AK_LLSC_CMPXCHG(bits, w, name, acq, rel, mb)			\
__ak_inline uint##bits##_t						\
ak_arm64_cmpxchg##bits##_llsc_##name(uint##bits##_t *p,		\
				     uint##bits##_t old,		\
				     uint##bits##_t new_)		\
{									\
	uint##bits##_t ret;						\
	uint32_t tmp;							\
									\
	__asm__ __volatile__(						\
		"	prfm	pstl1strm, %[v]\n"			\
		"1:	ld" #acq "xr	%" #w "[ret], %[v]\n"		\
		"	cmp	%" #w "[ret], %" #w "[old]\n"		\
		"	b.ne	2f\n"					\
		"	st" #rel "xr	%w[tmp], %" #w "[new_], %[v]\n"	\
		"	cbnz	%w[tmp], 1b\n"				\
		"	" mb "\n"					\
		"2:"							\
		: [ret] "=&r"(ret), [tmp] "=&r"(tmp),			\
		  [v] "+Q"(*p)						\
		: [old] "r"(old), [new_] "r"(new_)			\
		: "cc", "memory");					\
	return ret;							\
}

/* swp{,al} and ldadd{,al}: Rs is the operand, Rt receives the old value. */
#define __AK_LSE_RMW(bits, w, op, insn, al)				\
__ak_inline uint##bits##_t						\
ak_arm64_##op##bits##_lse_##insn##al(uint##bits##_t *p,		\
				     uint##bits##_t v)			\
{									\
	uint##bits##_t ret;						\
									\
	__asm__ __volatile__(						\
		__AK_LSE_PREAMBLE					\
		"	" #insn #al "	%" #w "[val], %" #w "[ret], %[v]" \
		: [ret] "=r"(ret), [v] "+Q"(*p)				\
		: [val] "r"(v)						\
		: "memory");						\
	return ret;							\
}

/*
 * The xchg and fetch_add loops.  The store-exclusive status register must
 * not be the data or the address register (the architecture makes that
 * CONSTRAINED UNPREDICTABLE), hence a tmp of its own, early-clobbered like
 * everything the loop writes before its last read of an input.
 */
#define __AK_LLSC_XCHG(bits, w, name, rel, mb)				\
__ak_inline uint##bits##_t						\
ak_arm64_xchg##bits##_llsc_##name(uint##bits##_t *p, uint##bits##_t v)	\
{									\
	uint##bits##_t ret;						\
	uint32_t tmp;							\
									\
	__asm__ __volatile__(						\
		"	prfm	pstl1strm, %[v]\n"			\
		"1:	ldxr	%" #w "[ret], %[v]\n"			\
		"	st" #rel "xr	%w[tmp], %" #w "[val], %[v]\n"	\
		"	cbnz	%w[tmp], 1b\n"				\
		"	" mb						\
		: [ret] "=&r"(ret), [tmp] "=&r"(tmp),			\
		  [v] "+Q"(*p)						\
		: [val] "r"(v)						\
		: "memory");						\
	return ret;							\
}

#define __AK_LLSC_FETCH_ADD(bits, w, name, rel, mb)			\
__ak_inline uint##bits##_t						\
ak_arm64_fetch_add##bits##_llsc_##name(uint##bits##_t *p,		\
				       uint##bits##_t v)		\
{									\
	uint##bits##_t ret, res;					\
	uint32_t tmp;							\
									\
	__asm__ __volatile__(						\
		"	prfm	pstl1strm, %[v]\n"			\
		"1:	ldxr	%" #w "[ret], %[v]\n"			\
		"	add	%" #w "[res], %" #w "[ret], %" #w "[val]\n" \
		"	st" #rel "xr	%w[tmp], %" #w "[res], %[v]\n"	\
		"	cbnz	%w[tmp], 1b\n"				\
		"	" mb						\
		: [ret] "=&r"(ret), [res] "=&r"(res),			\
		  [tmp] "=&r"(tmp), [v] "+Q"(*p)			\
		: [val] "r"(v)						\
		: "memory");						\
	return ret;							\
}

#define __AK_ARM64_WIDTH(bits, w)					\
__AK_LSE_CMPXCHG(bits, w, al)						\
__AK_LSE_CMPXCHG(bits, w, a)						\
__AK_LSE_CMPXCHG(bits, w, l)						\
__AK_LSE_CMPXCHG(bits, w, )						\
__AK_LLSC_CMPXCHG(bits, w, mb, , l, "dmb	ish")			\
__AK_LLSC_CMPXCHG(bits, w, acquire, a, , "")				\
__AK_LLSC_CMPXCHG(bits, w, release, , l, "")				\
__AK_LLSC_CMPXCHG(bits, w, acq_rel, a, l, "")				\
__AK_LLSC_CMPXCHG(bits, w, relaxed, , , "")				\
__AK_LSE_RMW(bits, w, xchg, swp, al)					\
__AK_LSE_RMW(bits, w, xchg, swp, )					\
__AK_LSE_RMW(bits, w, fetch_add, ldadd, al)				\
__AK_LSE_RMW(bits, w, fetch_add, ldadd, )				\
__AK_LLSC_XCHG(bits, w, mb, l, "dmb	ish")				\
__AK_LLSC_XCHG(bits, w, relaxed, , "")					\
__AK_LLSC_FETCH_ADD(bits, w, mb, l, "dmb	ish")			\
__AK_LLSC_FETCH_ADD(bits, w, relaxed, , "")

__AK_ARM64_WIDTH(32, w)
__AK_ARM64_WIDTH(64, x)

/*
 * 128 bits.  Both casp and ldxp/stxp name the word at the lower address
 * first, in either endianness, so the halves go in and come out through
 * ak_u128_word0/word1 rather than lo/hi: on aarch64_be the word at the
 * lower address is the high half.
 *
 * casp{,al} wants each pair in consecutive registers starting at an even
 * one, which no constraint can ask for: the pairs are pinned to x0:x1
 * (old, overwritten with the value found) and x2:x3 (new).  Nothing may
 * be called between loading the pinned variables and the asm, as a call
 * would clobber them, so the caller splits the halves first.
 */
#define __AK_LSE_CMPXCHG128(al)						\
__ak_inline ak_u128							\
__ak_arm64_casp##al(ak_u128 *p, uint64_t o0, uint64_t o1, uint64_t n0,	\
		    uint64_t n1)					\
{									\
	register uint64_t x0 __asm__("x0") = o0;			\
	register uint64_t x1 __asm__("x1") = o1;			\
	register uint64_t x2 __asm__("x2") = n0;			\
	register uint64_t x3 __asm__("x3") = n1;			\
	uint64_t r0, r1;						\
									\
	__asm__ __volatile__(						\
		__AK_LSE_PREAMBLE					\
		"	casp" #al "	%[o0], %[o1], %[n0], %[n1], %[v]" \
		: [o0] "+r"(x0), [o1] "+r"(x1), [v] "+Q"(*p)		\
		: [n0] "r"(x2), [n1] "r"(x3)				\
		: "memory");						\
	r0 = x0;							\
	r1 = x1;							\
	return ak_u128_from_words(r0, r1);				\
}									\
__ak_inline ak_u128							\
ak_arm64_cmpxchg128_lse_casp##al(ak_u128 *p, ak_u128 old, ak_u128 new_)	\
{									\
	AK_BUG_ON(!AK_IS_ALIGNED16(p));					\
	return __ak_arm64_casp##al(p, ak_u128_word0(old),		\
				   ak_u128_word1(old),			\
				   ak_u128_word0(new_),			\
				   ak_u128_word1(new_));		\
}

/*
 * ldxp alone is not a single-copy-atomic 128-bit load: the pair read is
 * only known to be one value once a store-exclusive to it succeeds.  So
 * unlike the kernel, which returns whatever ldxp saw, a mismatch stores
 * the pair it read back (stxp, no ordering: failure promises none) and
 * retries if that fails; the value returned is then always one that *p
 * held, which the try forms and every CAS loop depend on.  As with
 * cmpxchg16b, the line is written on failure too, so the target must be
 * writable.  The ccmp makes the flags "ne" when the first words differ,
 * so one b.ne tests both.
 */
#define __AK_LLSC_CMPXCHG128(name, rel, mb)				\
__ak_inline ak_u128							\
ak_arm64_cmpxchg128_llsc_##name(ak_u128 *p, ak_u128 old, ak_u128 new_)	\
{									\
	uint64_t o0 = ak_u128_word0(old), o1 = ak_u128_word1(old);	\
	uint64_t n0 = ak_u128_word0(new_), n1 = ak_u128_word1(new_);	\
	uint64_t r0, r1;						\
	uint32_t tmp;							\
									\
	AK_BUG_ON(!AK_IS_ALIGNED16(p));					\
	__asm__ __volatile__(						\
		"	prfm	pstl1strm, %[v]\n"			\
		"1:	ldxp	%[r0], %[r1], %[v]\n"			\
		"	cmp	%[r0], %[o0]\n"				\
		"	ccmp	%[r1], %[o1], #0, eq\n"			\
		"	b.ne	2f\n"					\
		"	st" #rel "xp	%w[tmp], %[n0], %[n1], %[v]\n"	\
		"	cbnz	%w[tmp], 1b\n"				\
		"	" mb "\n"					\
		"	b	3f\n"					\
		"2:	stxp	%w[tmp], %[r0], %[r1], %[v]\n"		\
		"	cbnz	%w[tmp], 1b\n"				\
		"3:"							\
		: [r0] "=&r"(r0), [r1] "=&r"(r1),			\
		  [tmp] "=&r"(tmp), [v] "+Q"(*p)			\
		: [o0] "r"(o0), [o1] "r"(o1),				\
		  [n0] "r"(n0), [n1] "r"(n1)				\
		: "cc", "memory");					\
	return ak_u128_from_words(r0, r1);				\
}

__AK_LSE_CMPXCHG128(al)
__AK_LSE_CMPXCHG128()
__AK_LLSC_CMPXCHG128(ldxp_stlxp_mb, l, "dmb	ish")
__AK_LLSC_CMPXCHG128(ldxp_stxp, , "")

/*
 * Built with LSE as a baseline (-march=armv8.1-a or later), the check is a
 * constant and the LL/SC paths drop out; otherwise it is one load of the
 * flag cached from HWCAP_ATOMICS, which AK_CPU_DISABLE=lse can clear to
 * run the LL/SC paths on LSE hardware.
 */
__ak_inline bool ak_arm64_has_lse(void)
{
#ifdef __ARM_FEATURE_ATOMICS
	return true;
#else
	return ak_cpu_has(AK_CPU_LSE);
#endif
}

#define __AK_ARM64_PICK_CMPXCHG(bits, sfx, lse, llsc)			\
__ak_inline uint##bits##_t						\
ak_arm64_cmpxchg##bits##sfx(uint##bits##_t *p, uint##bits##_t old,	\
			    uint##bits##_t new_)			\
{									\
	if (ak_likely(ak_arm64_has_lse()))				\
		return ak_arm64_cmpxchg##bits##_##lse(p, old, new_);	\
	return ak_arm64_cmpxchg##bits##_##llsc(p, old, new_);		\
}

#define __AK_ARM64_PICK_RMW(op, bits, sfx, lse, llsc)			\
__ak_inline uint##bits##_t						\
ak_arm64_##op##bits##sfx(uint##bits##_t *p, uint##bits##_t v)		\
{									\
	if (ak_likely(ak_arm64_has_lse()))				\
		return ak_arm64_##op##bits##_##lse(p, v);		\
	return ak_arm64_##op##bits##_##llsc(p, v);			\
}

#define __AK_ARM64_PICK_WIDTH(bits)					\
__AK_ARM64_PICK_CMPXCHG(bits, , lse_casal, llsc_mb)			\
__AK_ARM64_PICK_CMPXCHG(bits, _acquire, lse_casa, llsc_acquire)		\
__AK_ARM64_PICK_CMPXCHG(bits, _release, lse_casl, llsc_release)		\
__AK_ARM64_PICK_CMPXCHG(bits, _relaxed, lse_cas, llsc_relaxed)		\
__AK_ARM64_PICK_RMW(xchg, bits, , lse_swpal, llsc_mb)			\
__AK_ARM64_PICK_RMW(xchg, bits, _relaxed, lse_swp, llsc_relaxed)	\
__AK_ARM64_PICK_RMW(fetch_add, bits, , lse_ldaddal, llsc_mb)		\
__AK_ARM64_PICK_RMW(fetch_add, bits, _relaxed, lse_ldadd, llsc_relaxed)

__AK_ARM64_PICK_WIDTH(32)
__AK_ARM64_PICK_WIDTH(64)

AK_U128_PICK(ak_arm64_cmpxchg128, ak_arm64_has_lse,
	     ak_arm64_cmpxchg128_lse_caspal,
	     ak_arm64_cmpxchg128_llsc_ldxp_stlxp_mb)

AK_U128_PICK(ak_arm64_cmpxchg128_local, ak_arm64_has_lse,
	     ak_arm64_cmpxchg128_lse_casp,
	     ak_arm64_cmpxchg128_llsc_ldxp_stxp)

#define AK_HAVE_ARCH_CMPXCHG		1
#define AK_HAVE_ARCH_CMPXCHG128		1
#define AK_CMPXCHG_LOCAL_SMP_SAFE	1

#define ak_arch_cmpxchg32		ak_arm64_cmpxchg32
#define ak_arch_cmpxchg64		ak_arm64_cmpxchg64
#define ak_arch_cmpxchg32_relaxed	ak_arm64_cmpxchg32_relaxed
#define ak_arch_cmpxchg64_relaxed	ak_arm64_cmpxchg64_relaxed
#define ak_arch_cmpxchg32_acquire	ak_arm64_cmpxchg32_acquire
#define ak_arch_cmpxchg64_acquire	ak_arm64_cmpxchg64_acquire
#define ak_arch_cmpxchg32_release	ak_arm64_cmpxchg32_release
#define ak_arch_cmpxchg64_release	ak_arm64_cmpxchg64_release
#define ak_arch_cmpxchg32_local		ak_arm64_cmpxchg32_relaxed
#define ak_arch_cmpxchg64_local		ak_arm64_cmpxchg64_relaxed
#define ak_arch_xchg32			ak_arm64_xchg32
#define ak_arch_xchg64			ak_arm64_xchg64
#define ak_arch_xchg32_local		ak_arm64_xchg32_relaxed
#define ak_arch_xchg64_local		ak_arm64_xchg64_relaxed
#define ak_arch_fetch_add32		ak_arm64_fetch_add32
#define ak_arch_fetch_add64		ak_arm64_fetch_add64
#define ak_arch_fetch_add32_relaxed	ak_arm64_fetch_add32_relaxed
#define ak_arch_fetch_add64_relaxed	ak_arm64_fetch_add64_relaxed
#define ak_arch_cmpxchg128		ak_arm64_cmpxchg128
#define ak_arch_cmpxchg128_local	ak_arm64_cmpxchg128_local

/*
 * Columns: see AK_GENERIC_VARIANTS and include/atomkit/registry.h.  Every
 * arm64 variant is SMP-safe; the relaxed ones are what _local maps to.
 */
#define __AK_ARM64_WIDTH_VARIANTS(V, bits)				\
	V(cmpxchg, bits, lse_casal, full, 1, "casal", ak_arm64_cmpxchg##bits##_lse_casal, ak_need_lse) \
	V(cmpxchg, bits, lse_casa, acquire, 1, "casa", ak_arm64_cmpxchg##bits##_lse_casa, ak_need_lse) \
	V(cmpxchg, bits, lse_casl, release, 1, "casl", ak_arm64_cmpxchg##bits##_lse_casl, ak_need_lse) \
	V(cmpxchg, bits, lse_cas, relaxed, 1, "cas", ak_arm64_cmpxchg##bits##_lse_cas, ak_need_lse) \
	V(cmpxchg, bits, llsc_mb, full, 1, "ldxr/stlxr loop; dmb ish", ak_arm64_cmpxchg##bits##_llsc_mb, ak_always) \
	V(cmpxchg, bits, llsc_acquire, acquire, 1, "ldaxr/stxr loop", ak_arm64_cmpxchg##bits##_llsc_acquire, ak_always) \
	V(cmpxchg, bits, llsc_release, release, 1, "ldxr/stlxr loop", ak_arm64_cmpxchg##bits##_llsc_release, ak_always) \
	V(cmpxchg, bits, llsc_acq_rel, acq_rel, 1, "ldaxr/stlxr loop", ak_arm64_cmpxchg##bits##_llsc_acq_rel, ak_always) \
	V(cmpxchg, bits, llsc_relaxed, relaxed, 1, "ldxr/stxr loop", ak_arm64_cmpxchg##bits##_llsc_relaxed, ak_always) \
	V(xchg, bits, lse_swpal, full, 1, "swpal", ak_arm64_xchg##bits##_lse_swpal, ak_need_lse) \
	V(xchg, bits, lse_swp, relaxed, 1, "swp", ak_arm64_xchg##bits##_lse_swp, ak_need_lse) \
	V(xchg, bits, llsc_mb, full, 1, "ldxr/stlxr loop; dmb ish", ak_arm64_xchg##bits##_llsc_mb, ak_always) \
	V(xchg, bits, llsc_relaxed, relaxed, 1, "ldxr/stxr loop", ak_arm64_xchg##bits##_llsc_relaxed, ak_always) \
	V(fetch_add, bits, lse_ldaddal, full, 1, "ldaddal", ak_arm64_fetch_add##bits##_lse_ldaddal, ak_need_lse) \
	V(fetch_add, bits, lse_ldadd, relaxed, 1, "ldadd", ak_arm64_fetch_add##bits##_lse_ldadd, ak_need_lse) \
	V(fetch_add, bits, llsc_mb, full, 1, "ldxr/add/stlxr loop; dmb ish", ak_arm64_fetch_add##bits##_llsc_mb, ak_always) \
	V(fetch_add, bits, llsc_relaxed, relaxed, 1, "ldxr/add/stxr loop", ak_arm64_fetch_add##bits##_llsc_relaxed, ak_always)

#define AK_ARCH_VARIANTS(V)						\
	__AK_ARM64_WIDTH_VARIANTS(V, 32)				\
	__AK_ARM64_WIDTH_VARIANTS(V, 64)				\
	V(cmpxchg, 128, lse_caspal, full, 1, "caspal", ak_arm64_cmpxchg128_lse_caspal, ak_need_lse) \
	V(cmpxchg, 128, lse_casp, relaxed, 1, "casp", ak_arm64_cmpxchg128_lse_casp, ak_need_lse) \
	V(cmpxchg, 128, llsc_ldxp_stlxp_mb, full, 1, "ldxp/stlxp loop; dmb ish", ak_arm64_cmpxchg128_llsc_ldxp_stlxp_mb, ak_always) \
	V(cmpxchg, 128, llsc_ldxp_stxp, relaxed, 1, "ldxp/stxp loop", ak_arm64_cmpxchg128_llsc_ldxp_stxp, ak_always)

#endif /* ATOMKIT_ARCH_ARM64_CMPXCHG_H */
