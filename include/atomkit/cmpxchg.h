/* SPDX-License-Identifier: MIT */
/*
 * atomkit cmpxchg family: the kernel's cmpxchg, try_cmpxchg, xchg,
 * fetch_add and cmpxchg128/cmpxchg_double, with their orderings and _local
 * forms, in user space.  The contract of every op (meaning, return value,
 * ordering on success and on failure, what _local promises on each arch)
 * is written once, in doc/primitives.md.
 *
 * The word-size ops are type-generic over 32- and 64-bit integers and
 * pointers.  The arch chosen at configure time supplies what it does
 * better (arch/<arch>/cmpxchg.h); arch/generic/cmpxchg.h supplies the rest.
 */
#ifndef ATOMKIT_CMPXCHG_H
#define ATOMKIT_CMPXCHG_H

#include <atomkit/config.h>
#include <atomkit/compiler.h>
#include <atomkit/u128.h>
#include <atomkit/cpu.h>

#if defined(AK_ARCH_X86_64)
# include <atomkit/arch/x86_64/cmpxchg.h>
#elif defined(AK_ARCH_ARM64)
# include <atomkit/arch/arm64/cmpxchg.h>
#elif defined(AK_ARCH_PPC64)
# include <atomkit/arch/ppc64/cmpxchg.h>
#elif !defined(AK_ARCH_GENERIC)
# error "atomkit/config.h names no arch: reinstall atomkit"
#endif
#include <atomkit/arch/generic/cmpxchg.h>

/* 32- and 64-bit views may alias any object of that width. */
typedef uint32_t __attribute__((may_alias)) __ak_alias32;
typedef uint64_t __attribute__((may_alias)) __ak_alias64;

/* The bits of a 4- or 8-byte value of any scalar type, and back. */
#define __ak_bits_of(p)							\
	union {								\
		__typeof__(*(p)) v;					\
		uint32_t u32;						\
		uint64_t u64;						\
	}

/* op(p, a, b) returning the previous value: cmpxchg. */
#define __ak_op2(p, a, b, op)						\
({									\
	__typeof__(&*(p)) __p = (p);					\
	__ak_bits_of(__p) __a = { .v = (a) }, __b = { .v = (b) }, __r;	\
									\
	switch (sizeof(*__p)) {						\
	case 4:								\
		__r.u32 = op##32((__ak_alias32 *)(void *)__p,		\
				 __a.u32, __b.u32);			\
		break;							\
	case 8:								\
		__r.u64 = op##64((__ak_alias64 *)(void *)__p,		\
				 __a.u64, __b.u64);			\
		break;							\
	default:							\
		__ak_bad_width();					\
	}								\
	__r.v;								\
})

/* op(p, a) returning the previous value: xchg, fetch_add. */
#define __ak_op1(p, a, op)						\
({									\
	__typeof__(&*(p)) __p = (p);					\
	__ak_bits_of(__p) __a = { .v = (a) }, __r;			\
									\
	switch (sizeof(*__p)) {						\
	case 4:								\
		__r.u32 = op##32((__ak_alias32 *)(void *)__p, __a.u32);	\
		break;							\
	case 8:								\
		__r.u64 = op##64((__ak_alias64 *)(void *)__p, __a.u64);	\
		break;							\
	default:							\
		__ak_bad_width();					\
	}								\
	__r.v;								\
})

/* try(p, &old, new): bool, *old updated to the value seen on failure. */
#define __ak_try(p, po, n, op)						\
({									\
	__typeof__(&*(p)) __p = (p);					\
	__typeof__(&*(po)) __po = (po);					\
	__ak_bits_of(__p) __o = { .v = *__po }, __n = { .v = (n) };	\
	bool __ok;							\
									\
	switch (sizeof(*__p)) {						\
	case 4:								\
		__ok = op##32((__ak_alias32 *)(void *)__p, &__o.u32,	\
			      __n.u32);					\
		break;							\
	case 8:								\
		__ok = op##64((__ak_alias64 *)(void *)__p, &__o.u64,	\
			      __n.u64);					\
		break;							\
	default:							\
		__ak_bad_width();					\
		__ok = false;						\
	}								\
	if (!__ok)							\
		*__po = __o.v;						\
	__ok;								\
})

/* ---- cmpxchg: returns the value found at *p ---- */
#define ak_cmpxchg(p, o, n)	    __ak_op2(p, o, n, ak_arch_cmpxchg)
#define ak_cmpxchg_relaxed(p, o, n) __ak_op2(p, o, n, ak_arch_cmpxchg_relaxed_)
#define ak_cmpxchg_acquire(p, o, n) __ak_op2(p, o, n, ak_arch_cmpxchg_acquire_)
#define ak_cmpxchg_release(p, o, n) __ak_op2(p, o, n, ak_arch_cmpxchg_release_)
#define ak_cmpxchg_local(p, o, n)   __ak_op2(p, o, n, ak_arch_cmpxchg_local_)

/* ---- try_cmpxchg: true on success, else *po = value found ---- */
#define ak_try_cmpxchg(p, po, n)	 __ak_try(p, po, n, ak_arch_try_cmpxchg)
#define ak_try_cmpxchg_relaxed(p, po, n) \
	__ak_try(p, po, n, ak_arch_try_cmpxchg_relaxed_)
#define ak_try_cmpxchg_acquire(p, po, n) \
	__ak_try(p, po, n, ak_arch_try_cmpxchg_acquire_)
#define ak_try_cmpxchg_release(p, po, n) \
	__ak_try(p, po, n, ak_arch_try_cmpxchg_release_)
#define ak_try_cmpxchg_local(p, po, n) \
	__ak_try(p, po, n, ak_arch_try_cmpxchg_local_)

/* ---- xchg and fetch_add: return the previous value ---- */
#define ak_xchg(p, v)		   __ak_op1(p, v, ak_arch_xchg)
#define ak_xchg_local(p, v)	   __ak_op1(p, v, ak_arch_xchg_local_)
#define ak_fetch_add(p, v)	   __ak_op1(p, v, ak_arch_fetch_add)
#define ak_fetch_add_relaxed(p, v) __ak_op1(p, v, ak_arch_fetch_add_relaxed_)

/*
 * The token pasting above needs the width before the order suffix
 * (ak_arch_cmpxchg64_relaxed); these names put it there.
 */
#define ak_arch_cmpxchg_relaxed_32	ak_arch_cmpxchg32_relaxed
#define ak_arch_cmpxchg_relaxed_64	ak_arch_cmpxchg64_relaxed
#define ak_arch_cmpxchg_acquire_32	ak_arch_cmpxchg32_acquire
#define ak_arch_cmpxchg_acquire_64	ak_arch_cmpxchg64_acquire
#define ak_arch_cmpxchg_release_32	ak_arch_cmpxchg32_release
#define ak_arch_cmpxchg_release_64	ak_arch_cmpxchg64_release
#define ak_arch_cmpxchg_local_32	ak_arch_cmpxchg32_local
#define ak_arch_cmpxchg_local_64	ak_arch_cmpxchg64_local
#define ak_arch_try_cmpxchg_relaxed_32	ak_arch_try_cmpxchg32_relaxed
#define ak_arch_try_cmpxchg_relaxed_64	ak_arch_try_cmpxchg64_relaxed
#define ak_arch_try_cmpxchg_acquire_32	ak_arch_try_cmpxchg32_acquire
#define ak_arch_try_cmpxchg_acquire_64	ak_arch_try_cmpxchg64_acquire
#define ak_arch_try_cmpxchg_release_32	ak_arch_try_cmpxchg32_release
#define ak_arch_try_cmpxchg_release_64	ak_arch_try_cmpxchg64_release
#define ak_arch_try_cmpxchg_local_32	ak_arch_try_cmpxchg32_local
#define ak_arch_try_cmpxchg_local_64	ak_arch_try_cmpxchg64_local
#define ak_arch_xchg_local_32		ak_arch_xchg32_local
#define ak_arch_xchg_local_64		ak_arch_xchg64_local
#define ak_arch_fetch_add_relaxed_32	ak_arch_fetch_add32_relaxed
#define ak_arch_fetch_add_relaxed_64	ak_arch_fetch_add64_relaxed

/* ---- 128-bit ---- */

/* Whether the 128-bit ops run a native instruction on this machine. */
#ifdef __cplusplus
extern "C" {
#endif
bool ak_have_cmpxchg128(void);
#ifdef __cplusplus
}
#endif

static inline ak_u128 ak_cmpxchg128(ak_u128 *p, ak_u128 old, ak_u128 new_)
{
	AK_BUG_ON(!AK_IS_ALIGNED16(p));
	return ak_arch_cmpxchg128(p, old, new_);
}

static inline ak_u128 ak_cmpxchg128_local(ak_u128 *p, ak_u128 old,
					  ak_u128 new_)
{
	AK_BUG_ON(!AK_IS_ALIGNED16(p));
	return ak_arch_cmpxchg128_local(p, old, new_);
}

static inline bool ak_try_cmpxchg128(ak_u128 *p, ak_u128 *old, ak_u128 new_)
{
	AK_BUG_ON(!AK_IS_ALIGNED16(p));
	return ak_arch_try_cmpxchg128(p, old, new_);
}

static inline bool ak_try_cmpxchg128_local(ak_u128 *p, ak_u128 *old,
					   ak_u128 new_)
{
	AK_BUG_ON(!AK_IS_ALIGNED16(p));
	return ak_arch_try_cmpxchg128_local(p, old, new_);
}

/*
 * The older kernel form: two adjacent unsigned longs, p1 16-byte aligned
 * and p2 == p1 + 1; true when both matched and both were replaced.
 */
#define __ak_cmpxchg_double(p1, p2, o1, o2, n1, n2, try128)		\
({									\
	unsigned long *__p1 = (p1), *__p2 = (p2);			\
	ak_u128 __o = ak_u128_from_words((uint64_t)(uintptr_t)(o1),	\
					 (uint64_t)(uintptr_t)(o2));			\
									\
	AK_STATIC_ASSERT(sizeof(*__p1) == 8,				\
		       "cmpxchg_double needs 64-bit words");		\
	AK_BUG_ON(__p2 != __p1 + 1);					\
	(void)__p2;							\
	try128((ak_u128 *)(void *)__p1, &__o,				\
	       ak_u128_from_words((uint64_t)(uintptr_t)(n1),		\
				  (uint64_t)(uintptr_t)(n2)));				\
})

#define ak_cmpxchg_double(p1, p2, o1, o2, n1, n2) \
	__ak_cmpxchg_double(p1, p2, o1, o2, n1, n2, ak_try_cmpxchg128)
#define ak_cmpxchg_double_local(p1, p2, o1, o2, n1, n2) \
	__ak_cmpxchg_double(p1, p2, o1, o2, n1, n2, ak_try_cmpxchg128_local)

#endif /* ATOMKIT_CMPXCHG_H */
