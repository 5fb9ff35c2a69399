/* SPDX-License-Identifier: MIT */
/*
 * x86-64 rseq critical sections: one asm goto function per section, each
 * named after its pseudo-code in doc/primitives.md, "rseq critical
 * sections".  Every section has the same frame, read top to bottom:
 *
 *	descriptor 3: {0, 0, start 1f, post-commit 2f - 1f, abort 4f}
 *	rs->rseq_cs = &3b
 *   1:	c = *base + *idp * *stride	(the id read inside the section)
 *	loads and compares; a failed compare leaves for the caller's fail
 *	path, or for 2 where the caller needs what was seen
 *	injection point (AK_RSEQ_STRESS)
 *	the one committing store
 *   2:	falls through to the caller: committed
 *	out of line, in .text.unlikely: the signature, then
 *   4:	jmp abort
 *
 * The id is read after 1, so there is no id to check: a preemption,
 * migration or signal anywhere between 1 and 2 makes the kernel restart
 * the thread at 4, whichever id it read.  The signature is the immediate
 * of a ud1, so the 4 bytes before the abort handler are an instruction
 * that faults if ever executed.  base and stride are read from memory by
 * the section (imul and add with a memory source), through their
 * addresses in registers, not "m" operands: GCC materializes an "m"
 * operand's address anew before each asm goto in a loop where the
 * section sits behind a branch (the this_cpu ops' one test), two leas or
 * moves per op, while an address in a register it keeps out of the loop.
 */
#ifndef ATOMKIT_ARCH_X86_64_PERCPU_H
#define ATOMKIT_ARCH_X86_64_PERCPU_H

#ifndef __x86_64__
# error "atomkit was configured for x86_64 but the compiler targets another arch"
#endif

#include <atomkit/rseq-abi.h>
#include <atomkit/u128.h>

#define AK_RSEQ_SIG		0x53053053

#if AK_HAVE_ASM_GOTO_OUTPUT
#define AK_HAVE_ARCH_RSEQ	1

/* ud1 with AK_RSEQ_SIG as its immediate, just before the abort handler */
#define __AK_X86_RSEQ_SIGNATURE						\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long " __AK_RSEQ_XSTR(AK_RSEQ_SIG) "\n"

#ifdef AK_RSEQ_STRESS
/* Widen the window between the id read and the commit: ~µs of pause. */
# define __AK_X86_RSEQ_INJECT	".rept 16\n\tpause\n\t.endr\n\t"
#else
# define __AK_X86_RSEQ_INJECT	""
#endif

/*
 * rseq_write(bits): *c = v.  Never fails: nothing is read from the copy,
 * so the store is the section's only access to it, and an abort before
 * it leaves the copy as it was.
 * rseq_add(bits): *c += v; *old = the value before.  Never fails.
 * rseq_cmpxchg(bits): if (*c == expect) *c = new_; *seen = what was there.
 * A failed compare leaves through 2 with seen, as clang before 16 keeps
 * outputs on the fallthrough path only.  mov takes its width from the
 * registers, so the text serves both widths.
 */
#define __AK_X86_RSEQ_WIDTH(bits)					\
__ak_inline int ak_rseq_write##bits(struct ak_rseq_abi *rs,		\
				    const uint32_t *idp,		\
				    void *const *base,			\
				    const size_t *stride, uint##bits##_t v) \
{									\
	uintptr_t c;							\
									\
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR			\
		"leaq 3b(%%rip), %[c]\n\t"				\
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n" \
		"1:\n\t"						\
		"movl (%[idp]), %k[c]\n\t"				\
		"imulq (%[st]), %[c]\n\t"				\
		"addq (%[b]), %[c]\n\t"					\
		__AK_X86_RSEQ_INJECT					\
		"mov %[v], (%[c])\n"					\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_X86_RSEQ_SIGNATURE					\
		"4:\n\t"						\
		"jmp %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&r"(c)						\
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),	\
		  [st] "r"(stride), [v] "r"(v)				\
		: "memory", "cc"					\
		: abort);						\
	__AK_RSEQ_EDGE();						\
	return 0;							\
abort:									\
	__AK_RSEQ_EDGE();						\
	return -1;							\
}									\
									\
__ak_inline int ak_rseq_add##bits(struct ak_rseq_abi *rs,		\
				  const uint32_t *idp, void *const *base, \
				  const size_t *stride, uint##bits##_t v,	\
				  uint##bits##_t *old)			\
{									\
	uintptr_t c;							\
	uint##bits##_t o, t;						\
									\
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR			\
		"leaq 3b(%%rip), %[c]\n\t"				\
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n" \
		"1:\n\t"						\
		"movl (%[idp]), %k[c]\n\t"				\
		"imulq (%[st]), %[c]\n\t"					\
		"addq (%[b]), %[c]\n\t"					\
		"mov (%[c]), %[o]\n\t"					\
		"mov %[o], %[t]\n\t"					\
		"add %[v], %[t]\n\t"					\
		__AK_X86_RSEQ_INJECT					\
		"mov %[t], (%[c])\n"					\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_X86_RSEQ_SIGNATURE					\
		"4:\n\t"						\
		"jmp %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&r"(c), [o] "=&r"(o), [t] "=&r"(t)		\
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),	\
		  [st] "r"(stride), [v] "er"(v)			\
		: "memory", "cc"					\
		: abort);						\
	__AK_RSEQ_EDGE();						\
	*old = o;							\
	return 0;							\
abort:									\
	__AK_RSEQ_EDGE();						\
	return -1;							\
}									\
									\
__ak_inline int ak_rseq_cmpxchg##bits(struct ak_rseq_abi *rs,		\
				      const uint32_t *idp,		\
				      void *const *base,		\
				      const size_t *stride,		\
				      uint##bits##_t expect,		\
				      uint##bits##_t new_,		\
				      uint##bits##_t *seen)		\
{									\
	uintptr_t c;							\
	uint##bits##_t s;						\
									\
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR			\
		"leaq 3b(%%rip), %[c]\n\t"				\
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n" \
		"1:\n\t"						\
		"movl (%[idp]), %k[c]\n\t"				\
		"imulq (%[st]), %[c]\n\t"					\
		"addq (%[b]), %[c]\n\t"					\
		"mov (%[c]), %[s]\n\t"					\
		"cmp %[e], %[s]\n\t"					\
		"jne 2f\n\t"						\
		__AK_X86_RSEQ_INJECT					\
		"mov %[n], (%[c])\n"					\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_X86_RSEQ_SIGNATURE					\
		"4:\n\t"						\
		"jmp %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&r"(c), [s] "=&r"(s)				\
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),	\
		  [st] "r"(stride), [e] "er"(expect), [n] "r"(new_)	\
		: "memory", "cc"					\
		: abort);						\
	__AK_RSEQ_EDGE();						\
	*seen = s;							\
	return s != expect;						\
abort:									\
	__AK_RSEQ_EDGE();						\
	return -1;							\
}

__AK_X86_RSEQ_WIDTH(32)
__AK_X86_RSEQ_WIDTH(64)

/*
 * rseq_cmpxchg128: if (*c == expect) *c = new_; *seen = what was there.
 * The unlocked cmpxchg16b is the compare and the commit in one
 * instruction: on a mismatch it stores nothing and loads what it found
 * into rdx:rax, so seen == expect exactly when it committed.  Unlocked is
 * enough: the section makes this CPU the only writer of the copy, and one
 * instruction cannot be split by a preemption.
 */
__ak_inline int __ak_rseq_cmpxchg128(struct ak_rseq_abi *rs,
				     const uint32_t *idp, void *const *base,
				     const size_t *stride, ak_u128 expect,
				     ak_u128 new_, ak_u128 *seen)
{
	uint64_t lo = ak_u128_lo(expect), hi = ak_u128_hi(expect);
	uintptr_t c;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		__AK_X86_RSEQ_INJECT
		"cmpxchg16b (%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), "+a"(lo), "+d"(hi)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride), "b"(ak_u128_lo(new_)),
		  "c"(ak_u128_hi(new_))
		: "memory", "cc"
		: abort);
	__AK_RSEQ_EDGE();
	*seen = ak_u128_make(hi, lo);
	return *seen != expect;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/*
 * rseq_list_pop: node = c->head; if (!node) fail; c->head = node->next.
 * The head is at +0 of the copy.
 */
__ak_inline int ak_rseq_list_pop(struct ak_rseq_abi *rs, const uint32_t *idp,
				 void *const *base, const size_t *stride,
				 void **node)
{
	uintptr_t c;
	void *n, *x;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"mov (%[c]), %[n]\n\t"
		"test %[n], %[n]\n\t"
		"jz %l[fail]\n\t"
		"mov (%[n]), %[x]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[x], (%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [n] "=&r"(n), [x] "=&r"(x)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride)
		: "memory", "cc"
		: fail, abort);
	__AK_RSEQ_EDGE();
	*node = n;
	return 0;
fail:
	__AK_RSEQ_EDGE();
	return 1;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/* rseq_list_push: node->next = c->head; c->head = node.  Never fails. */
__ak_inline int ak_rseq_list_push(struct ak_rseq_abi *rs, const uint32_t *idp,
				  void *const *base, const size_t *stride,
				  void *node)
{
	uintptr_t c;
	void *t;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"mov (%[c]), %[t]\n\t"
		"mov %[t], (%[n])\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[n], (%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride), [n] "r"(node)
		: "memory", "cc"
		: abort);
	__AK_RSEQ_EDGE();
	return 0;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/*
 * rseq_list_push_owned: if (c->owner != owner) fail; node->next =
 * c->head; c->head = node.  The owner word at +16 of the copy, after
 * the list's {head, seq}.
 */
__ak_inline int ak_rseq_list_push_owned(struct ak_rseq_abi *rs,
					const uint32_t *idp,
					void *const *base,
					const size_t *stride, uintptr_t owner,
					void *node)
{
	uintptr_t c;
	void *t;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"cmp %[w], 16(%[c])\n\t"
		"jne %l[fail]\n\t"
		"mov (%[c]), %[t]\n\t"
		"mov %[t], (%[n])\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[n], (%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride), [w] "r"(owner), [n] "r"(node)
		: "memory", "cc"
		: fail, abort);
	__AK_RSEQ_EDGE();
	return 0;
fail:
	__AK_RSEQ_EDGE();
	return 1;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/*
 * rseq_array_pop: if (!c->count) fail; *obj = c->slots[--c->count].
 * count at +0 of the copy, slots at +16 (struct ak_percpu_array).
 */
__ak_inline int ak_rseq_array_pop(struct ak_rseq_abi *rs, const uint32_t *idp,
				  void *const *base, const size_t *stride,
				  void **obj)
{
	uintptr_t c, t;
	void *o;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"mov (%[c]), %[t]\n\t"
		"test %[t], %[t]\n\t"
		"jz %l[fail]\n\t"
		"mov 8(%[c], %[t], 8), %[o]\n\t"
		"sub $1, %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t), [o] "=&r"(o)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride)
		: "memory", "cc"
		: fail, abort);
	__AK_RSEQ_EDGE();
	*obj = o;
	return 0;
fail:
	__AK_RSEQ_EDGE();
	return 1;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/*
 * rseq_array_push: if (c->count >= limit) fail;
 * c->slots[c->count++] = obj.
 */
__ak_inline int ak_rseq_array_push(struct ak_rseq_abi *rs,
				   const uint32_t *idp, void *const *base,
				   const size_t *stride, unsigned long limit,
				   void *obj)
{
	uintptr_t c, t;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"mov (%[c]), %[t]\n\t"
		"cmp %[l], %[t]\n\t"
		"jae %l[fail]\n\t"
		"mov %[o], 16(%[c], %[t], 8)\n\t"
		"add $1, %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride), [l] "er"(limit), [o] "r"(obj)
		: "memory", "cc"
		: fail, abort);
	__AK_RSEQ_EDGE();
	return 0;
fail:
	__AK_RSEQ_EDGE();
	return 1;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/*
 * rseq_array_ptr_pop: a = c->ptr; if (!a || !a->count) fail;
 * *obj = a->slots[--a->count].
 * The array pointer at +0 of the copy; the array {count +0, slots +8}.
 */
__ak_inline int ak_rseq_array_ptr_pop(struct ak_rseq_abi *rs,
				      const uint32_t *idp, void *const *base,
				      const size_t *stride, void **obj)
{
	uintptr_t c, a, t;
	void *o;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"mov (%[c]), %[a]\n\t"
		"test %[a], %[a]\n\t"
		"jz %l[fail]\n\t"
		"mov (%[a]), %[t]\n\t"
		"test %[t], %[t]\n\t"
		"jz %l[fail]\n\t"
		"mov (%[a], %[t], 8), %[o]\n\t"
		"sub $1, %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[a])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [o] "=&r"(o)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride)
		: "memory", "cc"
		: fail, abort);
	__AK_RSEQ_EDGE();
	*obj = o;
	return 0;
fail:
	__AK_RSEQ_EDGE();
	return 1;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/*
 * rseq_array_ptr_push: a = c->ptr; if (!a || a->count >= limit) fail;
 * a->slots[a->count++] = obj.
 */
__ak_inline int ak_rseq_array_ptr_push(struct ak_rseq_abi *rs,
				       const uint32_t *idp, void *const *base,
				       const size_t *stride,
				       unsigned long limit, void *obj)
{
	uintptr_t c, a, t;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"mov (%[c]), %[a]\n\t"
		"test %[a], %[a]\n\t"
		"jz %l[fail]\n\t"
		"mov (%[a]), %[t]\n\t"
		"cmp %[l], %[t]\n\t"
		"jae %l[fail]\n\t"
		"mov %[o], 8(%[a], %[t], 8)\n\t"
		"add $1, %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[a])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride), [l] "er"(limit), [o] "r"(obj)
		: "memory", "cc"
		: fail, abort);
	__AK_RSEQ_EDGE();
	return 0;
fail:
	__AK_RSEQ_EDGE();
	return 1;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/*
 * rseq_array_ptr_pop_n: a = c->ptr; k = min(*n, a ? a->count : 0);
 * if (!k) fail; copy a->slots[a->count - k, a->count) to dst;
 * a->count -= k; *n = k.
 * The copy runs inside the section (an abort leaves copies that nobody
 * reads) and the count's store commits them all.  The copy: an odd first
 * word, then two a turn (labels 7-9).
 */
__ak_inline int ak_rseq_array_ptr_pop_n(struct ak_rseq_abi *rs,
					const uint32_t *idp, void *const *base,
					const size_t *stride, void **dst,
					unsigned long *n)
{
	unsigned long c, a, t, k = *n, x, i, r;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"mov (%[c]), %[a]\n\t"
		"test %[a], %[a]\n\t"
		"jz %l[fail]\n\t"
		"mov (%[a]), %[t]\n\t"
		"cmp %[t], %[k]\n\t"
		"cmova %[t], %[k]\n\t"
		"test %[k], %[k]\n\t"
		"jz %l[fail]\n\t"
		"sub %[k], %[t]\n\t"
		"lea 8(%[a], %[t], 8), %[x]\n\t"
		"xor %[i], %[i]\n\t"
		"test $1, %[k]\n\t"
		"jz 7f\n\t"
		"mov (%[x]), %[r]\n\t"
		"mov %[r], (%[d])\n\t"
		"mov $1, %[i]\n"
		"7:\n\t"
		"cmp %[k], %[i]\n\t"
		"jae 9f\n"
		"8:\n\t"
		"mov (%[x], %[i], 8), %[r]\n\t"
		"mov %[r], (%[d], %[i], 8)\n\t"
		"mov 8(%[x], %[i], 8), %[r]\n\t"
		"mov %[r], 8(%[d], %[i], 8)\n\t"
		"add $2, %[i]\n\t"
		"cmp %[k], %[i]\n\t"
		"jb 8b\n"
		"9:\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[a])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [k] "+&r"(k),
		  [x] "=&r"(x), [i] "=&r"(i), [r] "=&r"(r)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride), [d] "r"(dst)
		: "memory", "cc"
		: fail, abort);
	__AK_RSEQ_EDGE();
	*n = k;
	return 0;
fail:
	__AK_RSEQ_EDGE();
	return 1;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

/*
 * rseq_array_ptr_push_n: a = c->ptr; k = min(*n, a ? limit - a->count : 0);
 * if (!k) fail; copy src[0, k) to a->slots[a->count, a->count + k);
 * a->count += k; *n = k.
 */
__ak_inline int ak_rseq_array_ptr_push_n(struct ak_rseq_abi *rs,
					 const uint32_t *idp,
					 void *const *base,
					 const size_t *stride,
					 unsigned long limit,
					 void *const *src, unsigned long *n)
{
	unsigned long c, a, t, k = *n, x, i, r;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"leaq 3b(%%rip), %[c]\n\t"
		"movq %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"movl (%[idp]), %k[c]\n\t"
		"imulq (%[st]), %[c]\n\t"
		"addq (%[b]), %[c]\n\t"
		"mov (%[c]), %[a]\n\t"
		"test %[a], %[a]\n\t"
		"jz %l[fail]\n\t"
		"mov (%[a]), %[t]\n\t"
		"mov %[l], %[x]\n\t"
		"sub %[t], %[x]\n\t"
		"cmp %[x], %[k]\n\t"
		"cmova %[x], %[k]\n\t"
		"test %[k], %[k]\n\t"
		"jz %l[fail]\n\t"
		"lea 8(%[a], %[t], 8), %[x]\n\t"
		"xor %[i], %[i]\n\t"
		"test $1, %[k]\n\t"
		"jz 7f\n\t"
		"mov (%[s]), %[r]\n\t"
		"mov %[r], (%[x])\n\t"
		"mov $1, %[i]\n"
		"7:\n\t"
		"cmp %[k], %[i]\n\t"
		"jae 9f\n"
		"8:\n\t"
		"mov (%[s], %[i], 8), %[r]\n\t"
		"mov %[r], (%[x], %[i], 8)\n\t"
		"mov 8(%[s], %[i], 8), %[r]\n\t"
		"mov %[r], 8(%[x], %[i], 8)\n\t"
		"add $2, %[i]\n\t"
		"cmp %[k], %[i]\n\t"
		"jb 8b\n"
		"9:\n\t"
		"add %[k], %[t]\n\t"
		__AK_X86_RSEQ_INJECT
		"mov %[t], (%[a])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_X86_RSEQ_SIGNATURE
		"4:\n\t"
		"jmp %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [k] "+&r"(k),
		  [x] "=&r"(x), [i] "=&r"(i), [r] "=&r"(r)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(base),
		  [st] "r"(stride), [l] "er"(limit), [s] "r"(src)
		: "memory", "cc"
		: fail, abort);
	__AK_RSEQ_EDGE();
	*n = k;
	return 0;
fail:
	__AK_RSEQ_EDGE();
	return 1;
abort:
	__AK_RSEQ_EDGE();
	return -1;
}

#endif /* AK_HAVE_ASM_GOTO_OUTPUT */

#endif /* ATOMKIT_ARCH_X86_64_PERCPU_H */
