/* SPDX-License-Identifier: MIT */
/*
 * x86-64 rseq critical sections for the per-CPU ops.  Contract:
 * doc/primitives.md, "Per-CPU operations"; the calling convention of the
 * ak_arch_rseq_* functions is in arch/generic/percpu.h.
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

#define __AK_X86_RSEQ_ENTER						\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n"							\
	"3:\n\t"							\
	".long 0x0, 0x0\n\t"						\
	".quad 1f, (2f - 1f), 4f\n\t"					\
	".popsection\n\t"						\
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
	".quad 3b\n\t"							\
	".popsection\n\t"						\
	"leaq 3b(%%rip), %[cs]\n\t"					\
	"movq %[cs], 8(%[rs])\n"					\
	"1:\n\t"							\
	"cmpl %[cpu], (%[field])\n\t"					\
	"jnz 4f\n\t"

#define __AK_X86_RSEQ_EXIT						\
	"2:\n\t"							\
	"xorl %[rc], %[rc]\n\t"						\
	"jmp 6f\n\t"							\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long 0x53053053\n"						\
	"4:\n\t"							\
	"movl $-1, %[rc]\n\t"						\
	"jmp 6f\n"							\
	"5:\n\t"							\
	"movl $1, %[rc]\n"						\
	"6:\n"

/* Operands every section takes. */
#define __AK_X86_RSEQ_OUT	[rc] "=&r"(rc), [cs] "=&r"(cs)
#define __AK_X86_RSEQ_IN	[rs] "r"(rs), [field] "r"(field), [cpu] "r"(cpu)

#define __AK_X86_RSEQ_WIDTH(bits)					\
/* *p += v; *old = the value before. */					\
__ak_inline int								\
ak_arch_rseq_add##bits(struct ak_rseq_abi *rs, const uint32_t *field,	\
		       uint32_t cpu, uint##bits##_t *p, uint##bits##_t v,	\
		       uint##bits##_t *old)				\
{									\
	uint##bits##_t o, t;						\
	uint64_t cs;							\
	int rc;								\
									\
	__asm__ __volatile__(__AK_X86_RSEQ_ENTER			\
		"mov (%[p]), %[o]\n\t"					\
		"mov %[o], %[t]\n\t"					\
		"add %[v], %[t]\n\t"					\
		__AK_X86_RSEQ_INJECT					\
		"mov %[t], (%[p])\n"					\
		__AK_X86_RSEQ_EXIT					\
		: __AK_X86_RSEQ_OUT, [o] "=&r"(o), [t] "=&r"(t)		\
		: __AK_X86_RSEQ_IN, [p] "r"(p), [v] "r"(v)		\
		: "memory", "cc");					\
	*old = o;							\
	return rc;							\
}									\
/* if (*p == expect) *p = new_; *seen = the value found. */		\
__ak_inline int								\
ak_arch_rseq_cmpxchg##bits(struct ak_rseq_abi *rs, const uint32_t *field, \
			   uint32_t cpu, uint##bits##_t *p,		\
			   uint##bits##_t expect, uint##bits##_t new_,	\
			   uint##bits##_t *seen)			\
{									\
	uint##bits##_t s;						\
	uint64_t cs;							\
	int rc;								\
									\
	__asm__ __volatile__(__AK_X86_RSEQ_ENTER			\
		"mov (%[p]), %[s]\n\t"					\
		"cmp %[e], %[s]\n\t"					\
		"jnz 5f\n\t"						\
		__AK_X86_RSEQ_INJECT					\
		"mov %[n], (%[p])\n"					\
		__AK_X86_RSEQ_EXIT					\
		: __AK_X86_RSEQ_OUT, [s] "=&r"(s)			\
		: __AK_X86_RSEQ_IN, [p] "r"(p), [e] "r"(expect),	\
		  [n] "r"(new_)						\
		: "memory", "cc");					\
	*seen = s;							\
	return rc;							\
}

__AK_X86_RSEQ_WIDTH(32)
__AK_X86_RSEQ_WIDTH(64)

/*
 * 128 bits: the unlocked cmpxchg16b is itself the commit, one instruction
 * that compares and stores both words; whether it matched is read from ZF
 * after the section.
 */
__ak_inline int ak_arch_rseq_cmpxchg128(struct ak_rseq_abi *rs,
					const uint32_t *field, uint32_t cpu,
					ak_u128 *p, ak_u128 expect,
					ak_u128 new_, ak_u128 *seen)
{
	uint64_t lo = ak_u128_lo(expect), hi = ak_u128_hi(expect), cs;
	int rc;

	AK_BUG_ON(!AK_IS_ALIGNED16(p));
	__asm__ __volatile__(__AK_X86_RSEQ_ENTER
		__AK_X86_RSEQ_INJECT
		"cmpxchg16b (%[p])\n"
		"2:\n\t"
		"jnz 5f\n\t"
		"xorl %[rc], %[rc]\n\t"
		"jmp 6f\n\t"
		".byte 0x0f, 0xb9, 0x3d\n\t"
		".long 0x53053053\n"
		"4:\n\t"
		"movl $-1, %[rc]\n\t"
		"jmp 6f\n"
		"5:\n\t"
		"movl $1, %[rc]\n"
		"6:\n"
		: __AK_X86_RSEQ_OUT, "+a"(lo), "+d"(hi)
		: __AK_X86_RSEQ_IN, [p] "r"(p), "b"(ak_u128_lo(new_)),
		  "c"(ak_u128_hi(new_))
		: "memory", "cc");
	*seen = ak_u128_make(hi, lo);
	return rc;
}

/* Freelist pop: node = *head; if (!node) fail; *head = node->next. */
__ak_inline int ak_arch_rseq_list_pop(struct ak_rseq_abi *rs,
				      const uint32_t *field, uint32_t cpu,
				      void **head, void **node)
{
	void *n, *next;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_X86_RSEQ_ENTER
		"mov (%[h]), %[n]\n\t"
		"test %[n], %[n]\n\t"
		"jz 5f\n\t"
		"mov (%[n]), %[x]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[x], (%[h])\n"
		__AK_X86_RSEQ_EXIT
		: __AK_X86_RSEQ_OUT, [n] "=&r"(n), [x] "=&r"(next)
		: __AK_X86_RSEQ_IN, [h] "r"(head)
		: "memory", "cc");
	*node = n;
	return rc;
}

/* Freelist push: node->next = *head; *head = node.  Never fails. */
__ak_inline int ak_arch_rseq_list_push(struct ak_rseq_abi *rs,
				       const uint32_t *field, uint32_t cpu,
				       void **head, void *node)
{
	void *t;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_X86_RSEQ_ENTER
		"mov (%[h]), %[t]\n\t"
		"mov %[t], (%[n])\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[n], (%[h])\n"
		__AK_X86_RSEQ_EXIT
		: __AK_X86_RSEQ_OUT, [t] "=&r"(t)
		: __AK_X86_RSEQ_IN, [h] "r"(head), [n] "r"(node)
		: "memory", "cc");
	return rc;
}

/* Array push: if (*count >= limit) fail; slots[*count] = obj; ++*count. */
__ak_inline int ak_arch_rseq_array_push(struct ak_rseq_abi *rs,
					const uint32_t *field, uint32_t cpu,
					unsigned long *count, void **slots,
					unsigned long limit, void *obj)
{
	unsigned long t;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_X86_RSEQ_ENTER
		"mov (%[c]), %[t]\n\t"
		"cmp %[l], %[t]\n\t"
		"jae 5f\n\t"
		"mov %[o], (%[s], %[t], 8)\n\t"
		"add $1, %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[c])\n"
		__AK_X86_RSEQ_EXIT
		: __AK_X86_RSEQ_OUT, [t] "=&r"(t)
		: __AK_X86_RSEQ_IN, [c] "r"(count), [s] "r"(slots),
		  [l] "r"(limit), [o] "r"(obj)
		: "memory", "cc");
	return rc;
}

/* Array pop: if (!*count) fail; *obj = slots[*count - 1]; --*count. */
__ak_inline int ak_arch_rseq_array_pop(struct ak_rseq_abi *rs,
				       const uint32_t *field, uint32_t cpu,
				       unsigned long *count, void **slots,
				       void **obj)
{
	unsigned long t;
	void *o;
	uint64_t cs;
	int rc;

	__asm__ __volatile__(__AK_X86_RSEQ_ENTER
		"mov (%[c]), %[t]\n\t"
		"test %[t], %[t]\n\t"
		"jz 5f\n\t"
		"mov -8(%[s], %[t], 8), %[o]\n\t"
		"sub $1, %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[c])\n"
		__AK_X86_RSEQ_EXIT
		: __AK_X86_RSEQ_OUT, [t] "=&r"(t), [o] "=&r"(o)
		: __AK_X86_RSEQ_IN, [c] "r"(count), [s] "r"(slots)
		: "memory", "cc");
	*obj = o;
	return rc;
}

#endif /* ATOMKIT_ARCH_X86_64_PERCPU_H */
