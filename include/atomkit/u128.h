/* SPDX-License-Identifier: MIT */
/*
 * The double-word type used by the 128-bit operations.
 */
#ifndef ATOMKIT_U128_H
#define ATOMKIT_U128_H

#include <stdint.h>
#include <atomkit/compiler.h>

/*
 * Every 128-bit instruction atomkit uses (cmpxchg16b, casp/ldxp/stxp,
 * lqarx/stqcx.) needs a 16-byte aligned operand, so the alignment is part
 * of the type: an ak_u128 object, or a struct member of that type, is
 * always aligned; only a cast can produce a misaligned pointer, and the
 * ops catch that in debug builds.
 */
typedef unsigned __int128 ak_u128 __attribute__((aligned(16)));

AK_STATIC_ASSERT(sizeof(ak_u128) == 16, "ak_u128 must be 16 bytes");
AK_STATIC_ASSERT(AK_ALIGNOF(ak_u128) == 16, "ak_u128 must be 16-byte aligned");

static inline ak_u128 ak_u128_make(uint64_t hi, uint64_t lo)
{
	return ((ak_u128)hi << 64) | lo;
}

static inline uint64_t ak_u128_hi(ak_u128 v)
{
	return (uint64_t)(v >> 64);
}

static inline uint64_t ak_u128_lo(ak_u128 v)
{
	return (uint64_t)v;
}

/*
 * The value of a pair of adjacent words {w0 at the lower address, w1 at the
 * higher} as an ak_u128: w0 is the low half on little-endian and the high
 * half on big-endian.  cmpxchg_double is built on this.
 */
static inline ak_u128 ak_u128_from_words(uint64_t w0, uint64_t w1)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return ak_u128_make(w1, w0);
#else
	return ak_u128_make(w0, w1);
#endif
}

static inline uint64_t ak_u128_word0(ak_u128 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return ak_u128_lo(v);
#else
	return ak_u128_hi(v);
#endif
}

static inline uint64_t ak_u128_word1(ak_u128 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return ak_u128_hi(v);
#else
	return ak_u128_lo(v);
#endif
}

#define AK_IS_ALIGNED16(p)	((((uintptr_t)(p)) & 15) == 0)

/*
 * An arch's 128-bit op that takes its native form when the CPU has it
 * (have() is a cached flag, or a constant) and another form otherwise.
 */
#define AK_U128_PICK(name, have, native, other)				\
static inline __attribute__((always_inline)) ak_u128			\
name(ak_u128 *p, ak_u128 old, ak_u128 new_)				\
{									\
	if (__builtin_expect(!!(have()), 1))				\
		return native(p, old, new_);				\
	return other(p, old, new_);					\
}

/*
 * A try form's answer from the value its 128-bit cmpxchg found: true when
 * that was *old, else *old becomes it.
 */
static inline __attribute__((always_inline)) bool
__ak_u128_tried(ak_u128 *old, ak_u128 found)
{
	if (__builtin_expect(found == *old, 1))
		return true;
	*old = found;
	return false;
}

/*
 * The try form of such a pick: native is a try op with a flag of its own,
 * other a cmpxchg whose answer is compared here.
 */
#define AK_U128_TRY_PICK(name, have, native, other)			\
static inline __attribute__((always_inline)) bool			\
name(ak_u128 *p, ak_u128 *old, ak_u128 new_)				\
{									\
	if (__builtin_expect(!!(have()), 1))				\
		return native(p, old, new_);				\
	return __ak_u128_tried(old, other(p, *old, new_));		\
}

#ifdef __cplusplus
extern "C" {
#endif
/*
 * The clearly named stand-in where no native 128-bit compare-and-exchange
 * exists (or the CPU lacks it at run time): a hashed spinlock, taken with
 * every signal blocked so that it is also safe against the caller's own
 * handlers.  It is atomic only against other atomkit 128-bit ops on the
 * same object.  ak_have_cmpxchg128() reports whether it is in use.
 */
ak_u128 ak_cmpxchg128_lockemu(ak_u128 *p, ak_u128 old, ak_u128 new_);
/*
 * Registers the emulation's fork handlers, once: whoever registers its
 * own, which may hold a lock around a 128-bit op, calls it first, so
 * that fork takes the emulation's locks after its own (src/lockemu.c).
 * The library's constructor calls it too, but a malloc interposer's
 * first call can come before constructors run.
 */
void __ak_lockemu_atfork(void);
#ifdef __cplusplus
}
#endif

#endif /* ATOMKIT_U128_H */
