/* SPDX-License-Identifier: MIT */
/*
 * Compiler helpers shared by every atomkit header.
 */
#ifndef ATOMKIT_COMPILER_H
#define ATOMKIT_COMPILER_H

#include <stdbool.h>
#include <stdint.h>

#define ak_likely(x)	__builtin_expect(!!(x), 1)
#define ak_unlikely(x)	__builtin_expect(!!(x), 0)
#define ak_barrier()	__asm__ __volatile__("" ::: "memory")
#define __ak_inline	static inline __attribute__((always_inline))

/*
 * A spin-wait hint, as the kernel's cpu_relax(): in a loop that waits for
 * another thread, give the SMT sibling the core (and a compiler barrier,
 * so the awaited load is made again).
 */
static inline void ak_cpu_relax(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#elif defined(__powerpc64__)
	__asm__ __volatile__("or 27,27,27" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#ifdef __cplusplus
# define AK_STATIC_ASSERT(c, msg)	static_assert(c, msg)
# define AK_ALIGNOF(t)			alignof(t)
#else
# define AK_STATIC_ASSERT(c, msg)	_Static_assert(c, msg)
# define AK_ALIGNOF(t)			_Alignof(t)
#endif

/*
 * Debug checks (AK_BUG_ON) are on unless NDEBUG is defined or AK_DEBUG is
 * set to 0: misuse such as an unaligned 128-bit pointer is then caught with
 * a message and abort() rather than a fault or a torn update.
 */
#ifndef AK_DEBUG
# ifdef NDEBUG
#  define AK_DEBUG 0
# else
#  define AK_DEBUG 1
# endif
#endif

#ifdef __cplusplus
extern "C" {
#endif
__attribute__((noreturn, cold))
void ak_bug(const char *file, int line, const char *what);
#ifdef __cplusplus
}
#endif

#define AK_BUG_ON(cond)							\
	do {								\
		if (AK_DEBUG && ak_unlikely(cond))			\
			ak_bug(__FILE__, __LINE__, #cond);		\
	} while (0)

/* Fails the build when a type-generic op meets an unsupported width. */
extern void __ak_bad_width(void)
	__attribute__((error("atomkit: operand must be 4 or 8 bytes wide")));

#endif /* ATOMKIT_COMPILER_H */
