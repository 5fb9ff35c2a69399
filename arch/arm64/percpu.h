/* SPDX-License-Identifier: MIT */
/*
 * arm64 rseq critical sections: one asm goto function per section, each
 * named after its pseudo-code in doc/primitives.md, "rseq critical
 * sections".  Every section has the same frame, read top to bottom:
 *
 *	descriptor 3: {0, 0, start 1f, post-commit 2f - 1f, abort 4f}
 *	rs->rseq_cs = &3b		(adrp/add/str)
 *   1:	c = base + *idp * stride	(the id read inside the section)
 *	loads and compares; a failed compare leaves for the caller's fail
 *	path, or for 2 where the caller needs what was seen
 *	injection point (AK_RSEQ_STRESS)
 *	the one committing str (stp for 128 bits)
 *   2:	falls through to the caller: committed
 *	out of line, in .text.unlikely: the signature, then
 *   4:	b abort
 *
 * The id is read after 1, so there is no id to check: a preemption,
 * migration or signal anywhere between 1 and 2 makes the kernel restart
 * the thread at 4, whichever id it read.  base and stride are loaded
 * before the section: they are the same on every CPU.
 *
 * The signature is the word before 4, BRK #0x45e0, which traps if ever
 * executed.  It is emitted with .inst, not .long, because instructions
 * are little-endian even on aarch64_be, and the kernel compares the
 * signature as an instruction fetched from there.  32-bit values are
 * loaded, compared and stored through their w names only (the AAPCS64
 * leaves a 32-bit value's upper half undefined).
 */
#ifndef ATOMKIT_ARCH_ARM64_PERCPU_H
#define ATOMKIT_ARCH_ARM64_PERCPU_H

#ifndef __aarch64__
# error "atomkit was configured for arm64 but the compiler targets another arch"
#endif

#include <atomkit/rseq-abi.h>
#include <atomkit/u128.h>

#define AK_RSEQ_SIG		0xd428bc00

#if AK_HAVE_ASM_GOTO_OUTPUT
#define AK_HAVE_ARCH_RSEQ	1

#define __AK_ARM64_RSEQ_SIGNATURE ".inst " __AK_RSEQ_XSTR(AK_RSEQ_SIG) "\n"

#ifdef AK_RSEQ_STRESS
/*
 * Widen the window between the id read and the commit.  yield is a nop
 * on most cores; isb drains the pipeline, tens of cycles each, so this is
 * roughly a µs, as the x86 pauses are.
 */
# define __AK_ARM64_RSEQ_INJECT	".rept 64\n\tisb\n\t.endr\n\t"
#else
# define __AK_ARM64_RSEQ_INJECT	""
#endif

/*
 * rseq_write(bits): *c = v.  Never fails: the str is the section's only
 * access to the copy, so an abort before it leaves the copy as it was.
 * The same plain str in the LSE and the LL/SC builds: no atomic is
 * needed where the section makes this CPU the copy's only writer.
 * rseq_add(bits): *c += v; *old = the value before.  Never fails.
 * rseq_cmpxchg(bits): if (*c == expect) *c = new_; *seen = what was there.
 * A failed compare leaves through 2 with seen, as clang before 16 keeps
 * outputs on the fallthrough path only.  r is the register prefix of the
 * width: "w" or "x".
 */
#define __AK_ARM64_RSEQ_WIDTH(bits, r)					\
__ak_inline int ak_rseq_write##bits(struct ak_rseq_abi *rs,		\
				    const uint32_t *idp,		\
				    void *const *base,			\
				    const size_t *stride, uint##bits##_t v) \
{									\
	uintptr_t c;							\
									\
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR			\
		"adrp %[c], 3b\n\t"					\
		"add %[c], %[c], :lo12:3b\n\t"				\
		"str %[c], [%[rs], #"					\
			__AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"		\
		"1:\n\t"						\
		"ldr %w[c], [%[idp]]\n\t"				\
		"madd %[c], %[c], %[st], %[b]\n\t"			\
		__AK_ARM64_RSEQ_INJECT					\
		"str %" r "[v], [%[c]]\n"				\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_ARM64_RSEQ_SIGNATURE				\
		"4:\n\t"						\
		"b %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&r"(c)						\
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),	\
		  [st] "r"(*stride), [v] "r"(v)				\
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
		"adrp %[c], 3b\n\t"					\
		"add %[c], %[c], :lo12:3b\n\t"				\
		"str %[c], [%[rs], #"					\
			__AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"		\
		"1:\n\t"						\
		"ldr %w[c], [%[idp]]\n\t"				\
		"madd %[c], %[c], %[st], %[b]\n\t"			\
		"ldr %" r "[o], [%[c]]\n\t"				\
		"add %" r "[t], %" r "[o], %" r "[v]\n\t"		\
		__AK_ARM64_RSEQ_INJECT					\
		"str %" r "[t], [%[c]]\n"				\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_ARM64_RSEQ_SIGNATURE				\
		"4:\n\t"						\
		"b %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&r"(c), [o] "=&r"(o), [t] "=&r"(t)		\
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),	\
		  [st] "r"(*stride), [v] "r"(v)				\
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
		"adrp %[c], 3b\n\t"					\
		"add %[c], %[c], :lo12:3b\n\t"				\
		"str %[c], [%[rs], #"					\
			__AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"		\
		"1:\n\t"						\
		"ldr %w[c], [%[idp]]\n\t"				\
		"madd %[c], %[c], %[st], %[b]\n\t"			\
		"ldr %" r "[s], [%[c]]\n\t"				\
		"cmp %" r "[s], %" r "[e]\n\t"				\
		"b.ne 2f\n\t"						\
		__AK_ARM64_RSEQ_INJECT					\
		"str %" r "[n], [%[c]]\n"				\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_ARM64_RSEQ_SIGNATURE				\
		"4:\n\t"						\
		"b %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&r"(c), [s] "=&r"(s)				\
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),	\
		  [st] "r"(*stride), [e] "r"(expect), [n] "r"(new_)	\
		: "memory", "cc"					\
		: abort);						\
	__AK_RSEQ_EDGE();						\
	*seen = s;							\
	return s != expect;						\
abort:									\
	__AK_RSEQ_EDGE();						\
	return -1;							\
}

__AK_ARM64_RSEQ_WIDTH(32, "w")
__AK_ARM64_RSEQ_WIDTH(64, "x")

/*
 * rseq_cmpxchg128: if (*c == expect) *c = new_; *seen = what was there.
 * ldp both words, compare both, commit with one stp.  A single
 * instruction cannot be split by a preemption and the section makes this
 * CPU the only writer of the copy, so the pair is stored whole (and read
 * whole: a write between the two loads would need a preemption, which
 * aborts).  The first register of ldp/stp is the word at the lower
 * address, ak_u128_word0, on either endianness.
 */
__ak_inline int __ak_rseq_cmpxchg128(struct ak_rseq_abi *rs,
				     const uint32_t *idp, void *const *base,
				     const size_t *stride, ak_u128 expect,
				     ak_u128 new_, ak_u128 *seen)
{
	uintptr_t c;
	uint64_t s0, s1;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldp %[s0], %[s1], [%[c]]\n\t"
		"cmp %[s0], %[e0]\n\t"
		"ccmp %[s1], %[e1], #0, eq\n\t"
		"b.ne 2f\n\t"
		__AK_ARM64_RSEQ_INJECT
		"stp %[n0], %[n1], [%[c]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [s0] "=&r"(s0), [s1] "=&r"(s1)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [e0] "r"(ak_u128_word0(expect)),
		  [e1] "r"(ak_u128_word1(expect)),
		  [n0] "r"(ak_u128_word0(new_)), [n1] "r"(ak_u128_word1(new_))
		: "memory", "cc"
		: abort);
	__AK_RSEQ_EDGE();
	*seen = ak_u128_from_words(s0, s1);
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
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[n], [%[c]]\n\t"
		"cbz %[n], %l[fail]\n\t"
		"ldr %[x], [%[n]]\n\t"
		__AK_ARM64_RSEQ_INJECT
		"str %[x], [%[c]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [n] "=&r"(n), [x] "=&r"(x)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride)
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
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[t], [%[c]]\n\t"
		"str %[t], [%[n]]\n\t"
		__AK_ARM64_RSEQ_INJECT
		"str %[n], [%[c]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [n] "r"(node)
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
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[t], [%[c], #16]\n\t"
		"cmp %[t], %[w]\n\t"
		"b.ne %l[fail]\n\t"
		"ldr %[t], [%[c]]\n\t"
		"str %[t], [%[n]]\n\t"
		__AK_ARM64_RSEQ_INJECT
		"str %[n], [%[c]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [w] "r"(owner), [n] "r"(node)
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
 * count at +0 of the copy, slots at +16 (struct ak_percpu_array); [o]
 * holds the slot's address before its value.
 */
__ak_inline int ak_rseq_array_pop(struct ak_rseq_abi *rs, const uint32_t *idp,
				  void *const *base, const size_t *stride,
				  void **obj)
{
	uintptr_t c, t;
	void *o;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[t], [%[c]]\n\t"
		"cbz %[t], %l[fail]\n\t"
		"sub %[t], %[t], #1\n\t"
		"add %[o], %[c], %[t], lsl #3\n\t"
		"ldr %[o], [%[o], #16]\n\t"
		__AK_ARM64_RSEQ_INJECT
		"str %[t], [%[c]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t), [o] "=&r"(o)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride)
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
	uintptr_t c, t, x;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[t], [%[c]]\n\t"
		"cmp %[t], %[l]\n\t"
		"b.hs %l[fail]\n\t"
		"add %[x], %[c], %[t], lsl #3\n\t"
		"str %[o], [%[x], #16]\n\t"
		"add %[t], %[t], #1\n\t"
		__AK_ARM64_RSEQ_INJECT
		"str %[t], [%[c]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [t] "=&r"(t), [x] "=&r"(x)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [l] "r"(limit), [o] "r"(obj)
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
 * [a] steps to the slots as the count is read, so that the scaled index
 * needs no add.
 */
__ak_inline int ak_rseq_array_ptr_pop(struct ak_rseq_abi *rs,
				      const uint32_t *idp, void *const *base,
				      const size_t *stride, void **obj)
{
	uintptr_t c, a, t;
	void *o;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[a], [%[c]]\n\t"
		"cbz %[a], %l[fail]\n\t"
		"ldr %[t], [%[a]], #8\n\t"
		"cbz %[t], %l[fail]\n\t"
		"sub %[t], %[t], #1\n\t"
		"ldr %[o], [%[a], %[t], lsl #3]\n\t"
		__AK_ARM64_RSEQ_INJECT
		"stur %[t], [%[a], #-8]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [o] "=&r"(o)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride)
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
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[a], [%[c]]\n\t"
		"cbz %[a], %l[fail]\n\t"
		"ldr %[t], [%[a]], #8\n\t"
		"cmp %[t], %[l]\n\t"
		"b.hs %l[fail]\n\t"
		"str %[o], [%[a], %[t], lsl #3]\n\t"
		"add %[t], %[t], #1\n\t"
		__AK_ARM64_RSEQ_INJECT
		"stur %[t], [%[a], #-8]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [l] "r"(limit), [o] "r"(obj)
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
 * The copy, a word a turn (label 8), runs inside the section (an abort
 * leaves copies that nobody reads) and the count's store commits it.
 */
__ak_inline int ak_rseq_array_ptr_pop_n(struct ak_rseq_abi *rs,
					const uint32_t *idp, void *const *base,
					const size_t *stride, void **dst,
					unsigned long *n)
{
	unsigned long c, a, t, k = *n, x, i, r;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[a], [%[c]]\n\t"
		"cbz %[a], %l[fail]\n\t"
		"ldr %[t], [%[a]]\n\t"
		"cmp %[k], %[t]\n\t"
		"csel %[k], %[t], %[k], hi\n\t"
		"cbz %[k], %l[fail]\n\t"
		"sub %[t], %[t], %[k]\n\t"
		"add %[x], %[a], #8\n\t"
		"add %[x], %[x], %[t], lsl #3\n\t"
		"mov %[i], #0\n"
		"8:\n\t"
		"ldr %[r], [%[x], %[i], lsl #3]\n\t"
		"str %[r], [%[d], %[i], lsl #3]\n\t"
		"add %[i], %[i], #1\n\t"
		"cmp %[i], %[k]\n\t"
		"b.lo 8b\n\t"
		__AK_ARM64_RSEQ_INJECT
		"str %[t], [%[a]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [k] "+&r"(k),
		  [x] "=&r"(x), [i] "=&r"(i), [r] "=&r"(r)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [d] "r"(dst)
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
		"adrp %[c], 3b\n\t"
		"add %[c], %[c], :lo12:3b\n\t"
		"str %[c], [%[rs], #" __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "]\n"
		"1:\n\t"
		"ldr %w[c], [%[idp]]\n\t"
		"madd %[c], %[c], %[st], %[b]\n\t"
		"ldr %[a], [%[c]]\n\t"
		"cbz %[a], %l[fail]\n\t"
		"ldr %[t], [%[a]]\n\t"
		"sub %[x], %[l], %[t]\n\t"
		"cmp %[k], %[x]\n\t"
		"csel %[k], %[x], %[k], hi\n\t"
		"cbz %[k], %l[fail]\n\t"
		"add %[x], %[a], #8\n\t"
		"add %[x], %[x], %[t], lsl #3\n\t"
		"mov %[i], #0\n"
		"8:\n\t"
		"ldr %[r], [%[s], %[i], lsl #3]\n\t"
		"str %[r], [%[x], %[i], lsl #3]\n\t"
		"add %[i], %[i], #1\n\t"
		"cmp %[i], %[k]\n\t"
		"b.lo 8b\n\t"
		"add %[t], %[t], %[k]\n\t"
		__AK_ARM64_RSEQ_INJECT
		"str %[t], [%[a]]\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_ARM64_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&r"(c), [a] "=&r"(a), [t] "=&r"(t), [k] "+&r"(k),
		  [x] "=&r"(x), [i] "=&r"(i), [r] "=&r"(r)
		: [rs] "r"(rs), [idp] "r"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [l] "r"(limit), [s] "r"(src)
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

#endif /* ATOMKIT_ARCH_ARM64_PERCPU_H */
