/* SPDX-License-Identifier: MIT */
/*
 * x86-64 rseq critical sections for the per-CPU ops.  Contract:
 * doc/primitives.md, "Per-CPU operations".  This header holds the asm;
 * arch/generic/percpu.h wraps each body in its ak_arch_rseq_* function
 * and says what the pieces below must provide.
 *
 * Shape of every section (labels 1-6 are reserved for it):
 *
 *	descriptor 3: {0, 0, start 1f, post-commit 2f - 1f, abort 4f}
 *	rs->rseq_cs = &3b
 *   1:	if (*cpu_field != cpu) goto 4	(the CPU or mm_cid we computed for)
 *	loads, compares (a mismatch leaves for 5), injection point
 *	one committing store
 *   2:	rc = 0
 *	signature, then the abort handler 4: rc = -1
 *   5:	rc = 1
 *
 * Once the descriptor is published and the id checked, any preemption,
 * migration or signal before the commit makes the kernel restart the
 * thread at 4, so the commit lands only on the slot of the CPU it runs
 * on.  The signature is the immediate of a ud1, so the 4 bytes before the
 * abort handler are an instruction that faults if ever executed.
 */
#ifndef ATOMKIT_ARCH_X86_64_PERCPU_H
#define ATOMKIT_ARCH_X86_64_PERCPU_H

#ifndef __x86_64__
# error "atomkit was configured for x86_64 but the compiler targets another arch"
#endif

#include <atomkit/rseq-abi.h>
#include <atomkit/u128.h>

#define AK_HAVE_ARCH_RSEQ	1
#define AK_RSEQ_SIG		0x53053053

#ifdef AK_RSEQ_STRESS
/* Widen the window between the id check and the commit: ~µs of pause. */
# define __AK_X86_RSEQ_INJECT	".rept 16\n\tpause\n\t.endr\n\t"
#else
# define __AK_X86_RSEQ_INJECT	""
#endif

#define __AK_ARCH_RSEQ_ENTER						\
	__AK_RSEQ_DESCRIPTOR						\
	"leaq 3b(%%rip), %[cs]\n\t"					\
	"movq %[cs], 8(%[rs])\n"					\
	"1:\n\t"							\
	"cmpl %[cpu], (%[field])\n\t"					\
	"jnz 4f\n\t"

/* The signature and the abort handler, after 2 and before 6. */
#define __AK_X86_RSEQ_ABORT						\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long 0x53053053\n"						\
	"4:\n\t"							\
	"movl $-1, %[rc]\n\t"						\
	"jmp 6f\n"							\
	"5:\n\t"							\
	"movl $1, %[rc]\n"						\
	"6:\n"

#define __AK_ARCH_RSEQ_EXIT						\
	"2:\n\t"							\
	"xorl %[rc], %[rc]\n\t"						\
	"jmp 6f\n\t"							\
	__AK_X86_RSEQ_ABORT

#define __AK_ARCH_RSEQ_OUT	[rc] "=&r"(rc), [cs] "=&r"(cs)
#define __AK_ARCH_RSEQ_IN	[rs] "r"(rs), [field] "r"(field), [cpu] "r"(cpu)
#define __AK_ARCH_RSEQ_CLOBBER	"memory", "cc"
#define __AK_ARCH_RSEQ_B	"r"

/*
 * Each op's body, wrapped and given its operands in arch/generic/percpu.h;
 * mov takes its width from the registers.
 */
#define __AK_ARCH_RSEQ_ADD(bits)					\
	"mov (%[p]), %[o]\n\t"						\
	"mov %[o], %[t]\n\t"						\
	"add %[v], %[t]\n\t"						\
	__AK_X86_RSEQ_INJECT						\
	"mov %[t], (%[p])\n"

#define __AK_ARCH_RSEQ_CMPXCHG(bits)					\
	"mov (%[p]), %[s]\n\t"						\
	"cmp %[e], %[s]\n\t"						\
	"jnz 5f\n\t"							\
	__AK_X86_RSEQ_INJECT						\
	"mov %[n], (%[p])\n"

#define __AK_ARCH_RSEQ_LIST_POP						\
	"mov (%[h]), %[n]\n\t"						\
	"test %[n], %[n]\n\t"						\
	"jz 5f\n\t"							\
	"mov (%[n]), %[x]\n\t"						\
	__AK_X86_RSEQ_INJECT						\
	"mov %[x], (%[h])\n"

#define __AK_ARCH_RSEQ_LIST_PUSH					\
	"mov (%[h]), %[t]\n\t"						\
	"mov %[t], (%[n])\n\t"						\
	__AK_X86_RSEQ_INJECT						\
	"mov %[n], (%[h])\n"

#define __AK_ARCH_RSEQ_ARRAY_PUSH					\
	"mov (%[c]), %[t]\n\t"						\
	"cmp %[l], %[t]\n\t"						\
	"jae 5f\n\t"							\
	"mov %[o], (%[s], %[t], 8)\n\t"					\
	"add $1, %[t]\n\t"						\
	__AK_X86_RSEQ_INJECT						\
	"mov %[t], (%[c])\n"

#define __AK_ARCH_RSEQ_ARRAY_POP					\
	"mov (%[c]), %[t]\n\t"						\
	"test %[t], %[t]\n\t"						\
	"jz 5f\n\t"							\
	"mov -8(%[s], %[t], 8), %[o]\n\t"				\
	"sub $1, %[t]\n\t"						\
	__AK_X86_RSEQ_INJECT						\
	"mov %[t], (%[c])\n"

/*
 * The array the pointer at slot points to: count at +0, slots at +8.
 * Written once for both forms: slot is %[p] here and the copy %[c] in
 * the _at form, fail 5f here and the asm goto label there.
 */
#define __AK_X86_ARRAY_PTR_PUSH(slot, fail)				\
	"mov (" slot "), %[a]\n\t"					\
	"test %[a], %[a]\n\t"						\
	"jz " fail "\n\t"						\
	"mov (%[a]), %[t]\n\t"						\
	"cmp %[l], %[t]\n\t"						\
	"jae " fail "\n\t"						\
	"mov %[o], 8(%[a], %[t], 8)\n\t"				\
	"add $1, %[t]\n\t"						\
	__AK_X86_RSEQ_INJECT						\
	"mov %[t], (%[a])\n"

#define __AK_X86_ARRAY_PTR_POP(slot, fail)				\
	"mov (" slot "), %[a]\n\t"					\
	"test %[a], %[a]\n\t"						\
	"jz " fail "\n\t"						\
	"mov (%[a]), %[t]\n\t"						\
	"test %[t], %[t]\n\t"						\
	"jz " fail "\n\t"						\
	"mov (%[a], %[t], 8), %[o]\n\t"					\
	"sub $1, %[t]\n\t"						\
	__AK_X86_RSEQ_INJECT						\
	"mov %[t], (%[a])\n"

/*
 * Up to [k] objects at once (bulk): [k] becomes min(k, what there is or
 * what fits), the copy runs inside the section (an abort leaves copies
 * that nobody reads), and the count's store commits them all.  Pop
 * copies slots[count - k, count) to [d]; push copies [s][0, k) to
 * slots[count, count + k).  The copy, from [from] to [to]: an odd first
 * word, then two a turn (labels 7-9).
 */
#define __AK_X86_COPY_N(from, to)					\
	"xor %[i], %[i]\n\t"						\
	"test $1, %[k]\n\t"						\
	"jz 7f\n\t"							\
	"mov (" from "), %[r]\n\t"					\
	"mov %[r], (" to ")\n\t"					\
	"mov $1, %[i]\n"						\
	"7:\n\t"							\
	"cmp %[k], %[i]\n\t"						\
	"jae 9f\n"							\
	"8:\n\t"							\
	"mov (" from ", %[i], 8), %[r]\n\t"				\
	"mov %[r], (" to ", %[i], 8)\n\t"				\
	"mov 8(" from ", %[i], 8), %[r]\n\t"				\
	"mov %[r], 8(" to ", %[i], 8)\n\t"				\
	"add $2, %[i]\n\t"						\
	"cmp %[k], %[i]\n\t"						\
	"jb 8b\n"							\
	"9:\n\t"

#define __AK_X86_ARRAY_PTR_POP_N(slot, fail)				\
	"mov (" slot "), %[a]\n\t"					\
	"test %[a], %[a]\n\t"						\
	"jz " fail "\n\t"						\
	"mov (%[a]), %[t]\n\t"						\
	"cmp %[t], %[k]\n\t"						\
	"cmova %[t], %[k]\n\t"						\
	"test %[k], %[k]\n\t"						\
	"jz " fail "\n\t"						\
	"sub %[k], %[t]\n\t"						\
	"lea 8(%[a], %[t], 8), %[x]\n\t"				\
	__AK_X86_COPY_N("%[x]", "%[d]")					\
	__AK_X86_RSEQ_INJECT						\
	"mov %[t], (%[a])\n"

#define __AK_X86_ARRAY_PTR_PUSH_N(slot, fail)				\
	"mov (" slot "), %[a]\n\t"					\
	"test %[a], %[a]\n\t"						\
	"jz " fail "\n\t"						\
	"mov (%[a]), %[t]\n\t"						\
	"mov %[l], %[x]\n\t"						\
	"sub %[t], %[x]\n\t"						\
	"cmp %[x], %[k]\n\t"						\
	"cmova %[x], %[k]\n\t"						\
	"test %[k], %[k]\n\t"						\
	"jz " fail "\n\t"						\
	"lea 8(%[a], %[t], 8), %[x]\n\t"				\
	__AK_X86_COPY_N("%[s]", "%[x]")					\
	"add %[k], %[t]\n\t"						\
	__AK_X86_RSEQ_INJECT						\
	"mov %[t], (%[a])\n"

#define __AK_ARCH_RSEQ_ARRAY_PTR_POP_N	__AK_X86_ARRAY_PTR_POP_N("%[p]", "5f")
#define __AK_ARCH_RSEQ_ARRAY_PTR_PUSH_N	__AK_X86_ARRAY_PTR_PUSH_N("%[p]", "5f")

#define __AK_ARCH_RSEQ_ARRAY_PTR_PUSH	__AK_X86_ARRAY_PTR_PUSH("%[p]", "5f")
#define __AK_ARCH_RSEQ_ARRAY_PTR_POP	__AK_X86_ARRAY_PTR_POP("%[p]", "5f")

/*
 * 128 bits: the unlocked cmpxchg16b is itself the commit, one instruction
 * that compares and stores both words; whether it matched is read from ZF
 * right after it, so the exit is this section's own.
 */
#define __AK_ARCH_RSEQ_CMPXCHG128					\
do {									\
	uint64_t lo = ak_u128_lo(expect), hi = ak_u128_hi(expect);	\
									\
	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER			\
		__AK_X86_RSEQ_INJECT					\
		"cmpxchg16b (%[p])\n"					\
		"2:\n\t"						\
		"jnz 5f\n\t"						\
		"xorl %[rc], %[rc]\n\t"					\
		"jmp 6f\n\t"						\
		__AK_X86_RSEQ_ABORT					\
		: __AK_ARCH_RSEQ_OUT, "+a"(lo), "+d"(hi)		\
		: __AK_ARCH_RSEQ_IN, [p] "r"(p), "b"(ak_u128_lo(new_)),	\
		  "c"(ak_u128_hi(new_))					\
		: __AK_ARCH_RSEQ_CLOBBER);				\
	*seen = ak_u128_make(hi, lo);					\
} while (0)

/*
 * The _at forms of the list and array ops (arch/generic/percpu.h): the
 * section reads the id itself, after 1, and finds the copy from it, as
 * tcmalloc's per-CPU caches do.  Nothing is read before the section, so
 * there is no id to check: the kernel restarts any section that is
 * preempted, migrated or signalled after 1, whichever id it read.
 * [c] is the copy, *base + id * *stride; base and stride are memory
 * operands, so that they hold no registers.
 *
 * They leave through asm goto, so that a commit falls through to the
 * caller's code with no rc to set and test (the slab fastpath is a few
 * instructions more than the section); the abort handler, after its
 * signature, sits out of line.  That needs asm goto with outputs (GCC
 * 11, clang 11); without it the generic _at forms serve.
 */
#if (defined(__clang__) && __clang_major__ >= 11) || \
	(!defined(__clang__) && __GNUC__ >= 11)
#define AK_HAVE_ARCH_RSEQ_AT	1

#define __AK_X86_RSEQ_ENTER_AT						\
	__AK_RSEQ_DESCRIPTOR						\
	"leaq 3b(%%rip), %[c]\n\t"					\
	"movq %[c], 8(%[rs])\n"					\
	"1:\n\t"							\
	"movl (%[field]), %k[c]\n\t"					\
	"imulq %[st], %[c]\n\t"					\
	"addq %[b], %[c]\n\t"

#define __AK_X86_RSEQ_EXIT_AT						\
	"2:\n\t"							\
	".pushsection .text.unlikely, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long 0x53053053\n"						\
	"4:\n\t"							\
	"jmp %l[abort]\n\t"						\
	".popsection\n"

#define __AK_X86_RSEQ_AT_IN	[rs] "r"(rs), [field] "r"(field),	\
				[b] "m"(*base), [st] "m"(*stride)

/* 0: committed; 1: the compare failed ([fail]); -1: aborted. */
#define __AK_X86_RSEQ_AT_RETURN						\
	return 0;							\
fail:									\
	return 1;							\
abort:									\
	return -1

/* the head at +0 of the copy */
__ak_inline int ak_arch_rseq_list_pop_at(struct ak_rseq_abi *rs,
					 const uint32_t *start,
					 const uint32_t *field, void *const *base,
					 const size_t *stride, void **node)
{
	uintptr_t c;
	void *n, *x;

	(void)start;
	__asm__ __volatile__ goto(__AK_X86_RSEQ_ENTER_AT
		"mov (%[c]), %[n]\n\t"
		"test %[n], %[n]\n\t"
		"jz %l[fail]\n\t"
		"mov (%[n]), %[x]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[x], (%[c])\n"
		__AK_X86_RSEQ_EXIT_AT
		: [c] "=&r"(c), [n] "=&r"(n), [x] "=&r"(x)
		: __AK_X86_RSEQ_AT_IN
		: __AK_ARCH_RSEQ_CLOBBER
		: fail, abort);
	*node = n;
	__AK_X86_RSEQ_AT_RETURN;
}

__ak_inline int ak_arch_rseq_list_push_at(struct ak_rseq_abi *rs,
					  const uint32_t *start,
					  const uint32_t *field, void *const *base,
					  const size_t *stride, void *node)
{
	uintptr_t c;
	void *t;

	(void)start;
	__asm__ __volatile__ goto(__AK_X86_RSEQ_ENTER_AT
		"mov (%[c]), %[t]\n\t"
		"mov %[t], (%[n])\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[n], (%[c])\n"
		__AK_X86_RSEQ_EXIT_AT
		: [c] "=&r"(c), [t] "=&r"(t)
		: __AK_X86_RSEQ_AT_IN, [n] "r"(node)
		: __AK_ARCH_RSEQ_CLOBBER
		: abort);
	return 0;
abort:
	return -1;
}

/* count at +0 of the copy, slots at +16 (struct ak_percpu_array) */
__ak_inline int ak_arch_rseq_array_pop_at(struct ak_rseq_abi *rs,
					  const uint32_t *start,
					  const uint32_t *field, void *const *base,
					  const size_t *stride, void **obj)
{
	uintptr_t c, t;
	void *o;

	(void)start;
	__asm__ __volatile__ goto(__AK_X86_RSEQ_ENTER_AT
		"mov (%[c]), %[t]\n\t"
		"test %[t], %[t]\n\t"
		"jz %l[fail]\n\t"
		"mov 8(%[c], %[t], 8), %[o]\n\t"
		"sub $1, %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[c])\n"
		__AK_X86_RSEQ_EXIT_AT
		: [c] "=&r"(c), [t] "=&r"(t), [o] "=&r"(o)
		: __AK_X86_RSEQ_AT_IN
		: __AK_ARCH_RSEQ_CLOBBER
		: fail, abort);
	*obj = o;
	__AK_X86_RSEQ_AT_RETURN;
}

__ak_inline int ak_arch_rseq_array_push_at(struct ak_rseq_abi *rs,
					   const uint32_t *start,
					   const uint32_t *field, void *const *base,
					   const size_t *stride, unsigned long limit,
					   void *obj)
{
	uintptr_t c, t;

	(void)start;
	__asm__ __volatile__ goto(__AK_X86_RSEQ_ENTER_AT
		"mov (%[c]), %[t]\n\t"
		"cmp %[l], %[t]\n\t"
		"jae %l[fail]\n\t"
		"mov %[o], 16(%[c], %[t], 8)\n\t"
		"add $1, %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[c])\n"
		__AK_X86_RSEQ_EXIT_AT
		: [c] "=&r"(c), [t] "=&r"(t)
		: __AK_X86_RSEQ_AT_IN, [l] "r"(limit), [o] "r"(obj)
		: __AK_ARCH_RSEQ_CLOBBER
		: fail, abort);
	__AK_X86_RSEQ_AT_RETURN;
}

/* the array pointer at +0 of the copy; the array as above */
__ak_inline int ak_arch_rseq_array_ptr_pop_at(struct ak_rseq_abi *rs,
					      const uint32_t *start,
					      const uint32_t *field,
					      void *const *base,
					      const size_t *stride, void **obj)
{
	uintptr_t c, a, t;
	void *o;

	(void)start;
	__asm__ __volatile__ goto(__AK_X86_RSEQ_ENTER_AT
		__AK_X86_ARRAY_PTR_POP("%[c]", "%l[fail]")
		__AK_X86_RSEQ_EXIT_AT
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [o] "=&r"(o)
		: __AK_X86_RSEQ_AT_IN
		: __AK_ARCH_RSEQ_CLOBBER
		: fail, abort);
	*obj = o;
	__AK_X86_RSEQ_AT_RETURN;
}

__ak_inline int ak_arch_rseq_array_ptr_push_at(struct ak_rseq_abi *rs,
					       const uint32_t *start,
					       const uint32_t *field,
					       void *const *base,
					       const size_t *stride,
					       unsigned long limit, void *obj)
{
	uintptr_t c, a, t;

	(void)start;
	__asm__ __volatile__ goto(__AK_X86_RSEQ_ENTER_AT
		__AK_X86_ARRAY_PTR_PUSH("%[c]", "%l[fail]")
		__AK_X86_RSEQ_EXIT_AT
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t)
		: __AK_X86_RSEQ_AT_IN, [l] "r"(limit), [o] "r"(obj)
		: __AK_ARCH_RSEQ_CLOBBER
		: fail, abort);
	__AK_X86_RSEQ_AT_RETURN;
}

/* the bulk forms: *n in, and out on a commit */
__ak_inline int ak_arch_rseq_array_ptr_pop_n_at(struct ak_rseq_abi *rs,
						const uint32_t *start,
						const uint32_t *field,
						void *const *base,
						const size_t *stride,
						void **dst, unsigned long *n)
{
	unsigned long c, a, t, k = *n, x, i, r;

	(void)start;
	__asm__ __volatile__ goto(__AK_X86_RSEQ_ENTER_AT
		__AK_X86_ARRAY_PTR_POP_N("%[c]", "%l[fail]")
		__AK_X86_RSEQ_EXIT_AT
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [k] "+&r"(k),
		  [x] "=&r"(x), [i] "=&r"(i), [r] "=&r"(r)
		: __AK_X86_RSEQ_AT_IN, [d] "r"(dst)
		: __AK_ARCH_RSEQ_CLOBBER
		: fail, abort);
	*n = k;
	__AK_X86_RSEQ_AT_RETURN;
}

__ak_inline int ak_arch_rseq_array_ptr_push_n_at(struct ak_rseq_abi *rs,
						 const uint32_t *start,
						 const uint32_t *field,
						 void *const *base,
						 const size_t *stride,
						 unsigned long limit,
						 void *const *src,
						 unsigned long *n)
{
	unsigned long c, a, t, k = *n, x, i, r;

	(void)start;
	__asm__ __volatile__ goto(__AK_X86_RSEQ_ENTER_AT
		__AK_X86_ARRAY_PTR_PUSH_N("%[c]", "%l[fail]")
		__AK_X86_RSEQ_EXIT_AT
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [k] "+&r"(k),
		  [x] "=&r"(x), [i] "=&r"(i), [r] "=&r"(r)
		: __AK_X86_RSEQ_AT_IN, [l] "r"(limit), [s] "r"(src)
		: __AK_ARCH_RSEQ_CLOBBER
		: fail, abort);
	*n = k;
	__AK_X86_RSEQ_AT_RETURN;
}
#endif /* asm goto with outputs */

#endif /* ATOMKIT_ARCH_X86_64_PERCPU_H */
