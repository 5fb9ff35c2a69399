/* SPDX-License-Identifier: MIT */
/*
 * ppc64 rseq critical sections, big- and little-endian: one asm goto
 * function per section, each named after its pseudo-code in
 * doc/primitives.md, "rseq critical sections".  Every section has the
 * same frame, read top to bottom:
 *
 *	descriptor 3: {0, 0, start 1f, post-commit 2f - 1f, abort 4f}
 *	rs->rseq_cs = &3b		(bcl/mflr/addis/addi, then std)
 *   1:	c = base + *idp * stride	(the id read inside the section)
 *	loads and compares; a failed compare leaves for the caller's fail
 *	path, or for 2 where the caller needs what was seen
 *	injection point (AK_RSEQ_STRESS)
 *	the one committing stw/std (stq for 128 bits)
 *   2:	falls through to the caller: committed
 *	out of line, in .text.unlikely: the signature, then
 *   4:	b abort
 *
 * The id is read after 1, so there is no id to check: a preemption,
 * migration or signal anywhere between 1 and 2 makes the kernel restart
 * the thread at 4, whichever id it read.  base and stride are loaded
 * before the section: they are the same on every CPU.
 *
 * The signature is the word before 4, twui r5,11, which traps if ever
 * executed.  Instructions and data share the byte order on ppc64 (unlike
 * aarch64_be), so .long emits it right on both; the descriptor's fields
 * are native-endian too, which .long/.quad give.
 *
 * The descriptor's address is formed pc-relative: bcl 20,31 to the next
 * instruction (label 5; the form the hardware does not push on its
 * return-address stack), mflr, then addis/addi of (3b - 5b)@ha/@l, which
 * the assembler turns into R_PPC64_REL16_HA/LO.  That needs neither the
 * TOC (r2 is not set up in a function the compiler thinks needs none,
 * ELFv1 or ELFv2) nor a text relocation, as the absolute form would in a
 * PIE or shared library; it costs the link register, clobbered.
 *
 * Every register used as a base, or as the ra of addi/addis, is
 * constrained to "b": r0 there reads as literal zero.  (An index stepped
 * by addi once got r0, stuck at 8 and looped until the kernel aborted
 * the section, on every retry: found by the system rig.)  32-bit values
 * are compared with cmpw and stored with stw, which look at the low word
 * only, so whatever the ABI leaves in the upper half of a uint32_t's
 * register does not matter.
 */
#ifndef ATOMKIT_ARCH_PPC64_PERCPU_H
#define ATOMKIT_ARCH_PPC64_PERCPU_H

#ifndef __powerpc64__
# error "atomkit was configured for ppc64 but the compiler targets another arch"
#endif

#include <atomkit/rseq-abi.h>
#include <atomkit/u128.h>
#include <atomkit/cmpxchg.h>	/* ak_ppc_has_quadword() */

#define AK_RSEQ_SIG		0x0fe5000b

#if AK_HAVE_ASM_GOTO_OUTPUT
#define AK_HAVE_ARCH_RSEQ	1

#define __AK_PPC_RSEQ_SIGNATURE	".long " __AK_RSEQ_XSTR(AK_RSEQ_SIG) "\n"

#ifdef AK_RSEQ_STRESS
/*
 * Widen the window between the id read and the commit.  isync waits for
 * every earlier instruction to complete, tens of cycles each, so this is
 * roughly a µs, as the x86 pauses are; nop would be folded away.
 */
# define __AK_PPC_RSEQ_INJECT	".rept 64\n\tisync\n\t.endr\n\t"
#else
# define __AK_PPC_RSEQ_INJECT	""
#endif

/*
 * rseq_write(bits): *c = v.  Never fails: the store is the section's
 * only access to the copy, so an abort before it leaves the copy as it
 * was.
 * rseq_add(bits): *c += v; *old = the value before.  Never fails.
 * rseq_cmpxchg(bits): if (*c == expect) *c = new_; *seen = what was there.
 * A failed compare leaves through 2 with seen, as clang before 16 keeps
 * outputs on the fallthrough path only.  LD, CMP and ST are the width's
 * load, compare and store.
 */
#define __AK_PPC_RSEQ_WIDTH(bits, LD, CMP, ST)				\
__ak_inline int ak_rseq_write##bits(struct ak_rseq_abi *rs,		\
				    const uint32_t *idp,		\
				    void *const *base,			\
				    const size_t *stride, uint##bits##_t v) \
{									\
	uintptr_t c;							\
									\
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR			\
		"bcl 20, 31, 5f\n"					\
		"5:\n\t"						\
		"mflr %[c]\n\t"						\
		"addis %[c], %[c], (3b - 5b)@ha\n\t"			\
		"addi %[c], %[c], (3b - 5b)@l\n\t"			\
		"std %[c], "						\
			__AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"	\
		"1:\n\t"						\
		"lwz %[c], 0(%[idp])\n\t"				\
		"mulld %[c], %[c], %[st]\n\t"				\
		"add %[c], %[c], %[b]\n\t"				\
		__AK_PPC_RSEQ_INJECT					\
		ST " %[v], 0(%[c])\n"					\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_PPC_RSEQ_SIGNATURE					\
		"4:\n\t"						\
		"b %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&b"(c)						\
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),		\
		  [st] "r"(*stride), [v] "r"(v)				\
		: "memory", "cr0", "lr"					\
		: abort);						\
	__AK_RSEQ_EDGE();						\
	return 0;							\
abort:									\
	__AK_RSEQ_EDGE();						\
	return -1;							\
}									\
									\
__ak_inline int ak_rseq_add##bits(struct ak_rseq_abi *rs,		\
				  const uint32_t *idp, void *const *base,	\
				  const size_t *stride, uint##bits##_t v,	\
				  uint##bits##_t *old)			\
{									\
	uintptr_t c;							\
	uint##bits##_t o, t;						\
									\
	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR			\
		"bcl 20, 31, 5f\n"					\
		"5:\n\t"						\
		"mflr %[c]\n\t"						\
		"addis %[c], %[c], (3b - 5b)@ha\n\t"			\
		"addi %[c], %[c], (3b - 5b)@l\n\t"			\
		"std %[c], "						\
			__AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"	\
		"1:\n\t"						\
		"lwz %[c], 0(%[idp])\n\t"				\
		"mulld %[c], %[c], %[st]\n\t"				\
		"add %[c], %[c], %[b]\n\t"				\
		LD " %[o], 0(%[c])\n\t"					\
		"add %[t], %[o], %[v]\n\t"				\
		__AK_PPC_RSEQ_INJECT					\
		ST " %[t], 0(%[c])\n"					\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_PPC_RSEQ_SIGNATURE					\
		"4:\n\t"						\
		"b %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&b"(c), [o] "=&r"(o), [t] "=&r"(t)		\
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),		\
		  [st] "r"(*stride), [v] "r"(v)				\
		: "memory", "cr0", "lr"					\
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
		"bcl 20, 31, 5f\n"					\
		"5:\n\t"						\
		"mflr %[c]\n\t"						\
		"addis %[c], %[c], (3b - 5b)@ha\n\t"			\
		"addi %[c], %[c], (3b - 5b)@l\n\t"			\
		"std %[c], "						\
			__AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"	\
		"1:\n\t"						\
		"lwz %[c], 0(%[idp])\n\t"				\
		"mulld %[c], %[c], %[st]\n\t"				\
		"add %[c], %[c], %[b]\n\t"				\
		LD " %[s], 0(%[c])\n\t"					\
		CMP " 0, %[s], %[e]\n\t"				\
		"bne- 0, 2f\n\t"					\
		__AK_PPC_RSEQ_INJECT					\
		ST " %[n], 0(%[c])\n"					\
		"2:\n\t"						\
		".pushsection .text.unlikely, \"ax\"\n\t"		\
		__AK_PPC_RSEQ_SIGNATURE					\
		"4:\n\t"						\
		"b %l[abort]\n\t"					\
		".popsection\n"						\
		: [c] "=&b"(c), [s] "=&r"(s)				\
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),		\
		  [st] "r"(*stride), [e] "r"(expect),			\
		  [n] "r"(new_)						\
		: "memory", "cr0", "lr"					\
		: abort);						\
	__AK_RSEQ_EDGE();						\
	*seen = s;							\
	return s != expect;						\
abort:									\
	__AK_RSEQ_EDGE();						\
	return -1;							\
}

__AK_PPC_RSEQ_WIDTH(32, "lwz", "cmpw", "stw")
__AK_PPC_RSEQ_WIDTH(64, "ld", "cmpd", "std")

/*
 * rseq_cmpxchg128: if (*c == expect) *c = new_; *seen = what was there.
 * Two ld (word0 at the lower address), compare both, commit with one
 * stq.  A single instruction cannot be split by a preemption and the
 * section makes this CPU the only writer of the copy, so the pair is
 * stored whole (and read whole: a write between the two loads would need
 * a preemption, which aborts).  ISA 2.07 made lq/stq available in problem
 * state and single-copy atomic when quadword aligned.
 *
 * stq stores an even/odd register pair; as for lqarx/stqcx. (see
 * cmpxchg.h), the even register is the high doubleword of the quadword's
 * value in both byte orders: in big-endian mode it goes to EA, in little-
 * endian mode it is stored byte-reversed at EA+8 and the odd one at EA.
 * So even = ak_u128_hi(new_) on both, and the pair is pinned to r6:r7
 * with register variables, set from plain locals just before the asm.
 * stq names only the even register; the odd one is an operand as well so
 * that the compiler keeps the low half of new_ in r7.
 *
 * stq is a privileged instruction before ISA 2.07 and would raise SIGILL.
 * The rseq modes are refused on such a CPU (ak_percpu_mode_available()),
 * so reaching here without the quadword instructions is a bug, caught in
 * debug builds.  Every ppc64le build assumes POWER8, so the check folds
 * away there.
 */
__ak_inline int __ak_rseq_cmpxchg128(struct ak_rseq_abi *rs,
				     const uint32_t *idp, void *const *base,
				     const size_t *stride, ak_u128 expect,
				     ak_u128 new_, ak_u128 *seen)
{
	uint64_t e0 = ak_u128_word0(expect), e1 = ak_u128_word1(expect);
	uint64_t nh_ = ak_u128_hi(new_), nl_ = ak_u128_lo(new_);
	uint64_t s0, s1;
	uintptr_t c;

	AK_BUG_ON(!ak_ppc_has_quadword());
	{
		register uint64_t nh __asm__("r6") = nh_;
		register uint64_t nl __asm__("r7") = nl_;

		__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
			"bcl 20, 31, 5f\n"
			"5:\n\t"
			"mflr %[c]\n\t"
			"addis %[c], %[c], (3b - 5b)@ha\n\t"
			"addi %[c], %[c], (3b - 5b)@l\n\t"
			"std %[c], "
				__AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
			"1:\n\t"
			"lwz %[c], 0(%[idp])\n\t"
			"mulld %[c], %[c], %[st]\n\t"
			"add %[c], %[c], %[b]\n\t"
			"ld %[s0], 0(%[c])\n\t"
			"ld %[s1], 8(%[c])\n\t"
			"cmpd 0, %[s0], %[e0]\n\t"
			"bne- 0, 2f\n\t"
			"cmpd 0, %[s1], %[e1]\n\t"
			"bne- 0, 2f\n\t"
			__AK_PPC_RSEQ_INJECT
			".machine push\n\t"
			".machine power8\n\t"
			"stq %[nh], 0(%[c])\n\t"
			".machine pop\n"
			"2:\n\t"
			".pushsection .text.unlikely, \"ax\"\n\t"
			__AK_PPC_RSEQ_SIGNATURE
			"4:\n\t"
			"b %l[abort]\n\t"
			".popsection\n"
			: [c] "=&b"(c), [s0] "=&r"(s0), [s1] "=&r"(s1)
			: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
			  [st] "r"(*stride), [e0] "r"(e0),
			  [e1] "r"(e1), [nh] "r"(nh), [nl] "r"(nl)
			: "memory", "cr0", "lr"
			: abort);
		__AK_RSEQ_EDGE();
	}
	*seen = ak_u128_from_words(s0, s1);
	return s0 != e0 || s1 != e1;
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
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[n], 0(%[c])\n\t"
		"cmpdi 0, %[n], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"ld %[x], 0(%[n])\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[x], 0(%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [n] "=&b"(n), [x] "=&r"(x)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride)
		: "memory", "cr0", "lr"
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
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[t], 0(%[c])\n\t"
		"std %[t], 0(%[n])\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[n], 0(%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [t] "=&r"(t)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [n] "b"(node)
		: "memory", "cr0", "lr"
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
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[t], 16(%[c])\n\t"
		"cmpd 0, %[t], %[w]\n\t"
		"bne- 0, %l[fail]\n\t"
		"ld %[t], 0(%[c])\n\t"
		"std %[t], 0(%[n])\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[n], 0(%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [t] "=&r"(t)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [w] "r"(owner), [n] "b"(node)
		: "memory", "cr0", "lr"
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
	uintptr_t c, t, x;
	void *o;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[t], 0(%[c])\n\t"
		"cmpdi 0, %[t], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"addi %[t], %[t], -1\n\t"
		"sldi %[x], %[t], 3\n\t"
		"add %[x], %[x], %[c]\n\t"
		"ld %[o], 16(%[x])\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[t], 0(%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [t] "=&b"(t), [x] "=&b"(x), [o] "=&r"(o)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride)
		: "memory", "cr0", "lr"
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
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[t], 0(%[c])\n\t"
		"cmpld 0, %[t], %[l]\n\t"
		"bge- 0, %l[fail]\n\t"
		"sldi %[x], %[t], 3\n\t"
		"add %[x], %[x], %[c]\n\t"
		"std %[o], 16(%[x])\n\t"
		"addi %[t], %[t], 1\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[t], 0(%[c])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [t] "=&b"(t), [x] "=&b"(x)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [l] "r"(limit),
		  [o] "r"(obj)
		: "memory", "cr0", "lr"
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
 * The array pointer at +0 of the copy; the array {count +0, slots +8}, so
 * the newest slot is at a + count * 8.
 */
__ak_inline int ak_rseq_array_ptr_pop(struct ak_rseq_abi *rs,
				      const uint32_t *idp, void *const *base,
				      const size_t *stride, void **obj)
{
	uintptr_t c, a, t, x;
	void *o;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[a], 0(%[c])\n\t"
		"cmpdi 0, %[a], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"ld %[t], 0(%[a])\n\t"
		"cmpdi 0, %[t], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"sldi %[x], %[t], 3\n\t"
		"ldx %[o], %[a], %[x]\n\t"
		"addi %[t], %[t], -1\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[t], 0(%[a])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [a] "=&b"(a), [t] "=&b"(t), [x] "=&r"(x),
		  [o] "=&r"(o)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride)
		: "memory", "cr0", "lr"
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
 * a->slots[a->count++] = obj.  The new count times 8 is the free slot's
 * offset from a.
 */
__ak_inline int ak_rseq_array_ptr_push(struct ak_rseq_abi *rs,
				       const uint32_t *idp, void *const *base,
				       const size_t *stride,
				       unsigned long limit, void *obj)
{
	uintptr_t c, a, t, x;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[a], 0(%[c])\n\t"
		"cmpdi 0, %[a], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"ld %[t], 0(%[a])\n\t"
		"cmpld 0, %[t], %[l]\n\t"
		"bge- 0, %l[fail]\n\t"
		"addi %[t], %[t], 1\n\t"
		"sldi %[x], %[t], 3\n\t"
		"stdx %[o], %[a], %[x]\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[t], 0(%[a])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [a] "=&b"(a), [t] "=&b"(t), [x] "=&r"(x)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [l] "r"(limit),
		  [o] "r"(obj)
		: "memory", "cr0", "lr"
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
 * The copy, a word a turn with [i] a byte offset up to [m] = k * 8
 * (label 9), runs inside the section (an abort leaves copies that nobody
 * reads) and the count's store commits it.
 */
__ak_inline int ak_rseq_array_ptr_pop_n(struct ak_rseq_abi *rs,
					const uint32_t *idp, void *const *base,
					const size_t *stride, void **dst,
					unsigned long *n)
{
	unsigned long c, a, t, k = *n, x, i, r, m;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[a], 0(%[c])\n\t"
		"cmpdi 0, %[a], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"ld %[t], 0(%[a])\n\t"
		"cmpld 0, %[k], %[t]\n\t"
		"ble- 0, 8f\n\t"
		"mr %[k], %[t]\n"
		"8:\n\t"
		"cmpdi 0, %[k], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"subf %[t], %[k], %[t]\n\t"
		"sldi %[x], %[t], 3\n\t"
		"add %[x], %[x], %[a]\n\t"
		"addi %[x], %[x], 8\n\t"
		"li %[i], 0\n\t"
		"sldi %[m], %[k], 3\n"
		"9:\n\t"
		"ldx %[r], %[x], %[i]\n\t"
		"stdx %[r], %[d], %[i]\n\t"
		"addi %[i], %[i], 8\n\t"
		"cmpld 0, %[i], %[m]\n\t"
		"blt- 0, 9b\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[t], 0(%[a])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [a] "=&b"(a), [t] "=&b"(t), [k] "+&r"(k),
		  [x] "=&b"(x), [i] "=&b"(i), [r] "=&r"(r), [m] "=&r"(m)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [d] "b"(dst)
		: "memory", "cr0", "lr"
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
	unsigned long c, a, t, k = *n, x, i, r, m;

	__asm__ __volatile__ goto(__AK_RSEQ_DESCRIPTOR
		"bcl 20, 31, 5f\n"
		"5:\n\t"
		"mflr %[c]\n\t"
		"addis %[c], %[c], (3b - 5b)@ha\n\t"
		"addi %[c], %[c], (3b - 5b)@l\n\t"
		"std %[c], " __AK_RSEQ_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"
		"1:\n\t"
		"lwz %[c], 0(%[idp])\n\t"
		"mulld %[c], %[c], %[st]\n\t"
		"add %[c], %[c], %[b]\n\t"
		"ld %[a], 0(%[c])\n\t"
		"cmpdi 0, %[a], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"ld %[t], 0(%[a])\n\t"
		"subf %[x], %[t], %[l]\n\t"
		"cmpld 0, %[k], %[x]\n\t"
		"ble- 0, 8f\n\t"
		"mr %[k], %[x]\n"
		"8:\n\t"
		"cmpdi 0, %[k], 0\n\t"
		"beq- 0, %l[fail]\n\t"
		"sldi %[x], %[t], 3\n\t"
		"add %[x], %[x], %[a]\n\t"
		"addi %[x], %[x], 8\n\t"
		"li %[i], 0\n\t"
		"sldi %[m], %[k], 3\n"
		"9:\n\t"
		"ldx %[r], %[s], %[i]\n\t"
		"stdx %[r], %[x], %[i]\n\t"
		"addi %[i], %[i], 8\n\t"
		"cmpld 0, %[i], %[m]\n\t"
		"blt- 0, 9b\n\t"
		"add %[t], %[t], %[k]\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[t], 0(%[a])\n"
		"2:\n\t"
		".pushsection .text.unlikely, \"ax\"\n\t"
		__AK_PPC_RSEQ_SIGNATURE
		"4:\n\t"
		"b %l[abort]\n\t"
		".popsection\n"
		: [c] "=&b"(c), [a] "=&b"(a), [t] "=&b"(t), [k] "+&r"(k),
		  [x] "=&b"(x), [i] "=&b"(i), [r] "=&r"(r), [m] "=&r"(m)
		: [rs] "b"(rs), [idp] "b"(idp), [b] "r"(*base),
		  [st] "r"(*stride), [l] "r"(limit),
		  [s] "b"(src)
		: "memory", "cr0", "lr"
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

#endif /* ATOMKIT_ARCH_PPC64_PERCPU_H */
