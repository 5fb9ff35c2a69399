/* SPDX-License-Identifier: MIT */
/*
 * ppc64 rseq critical sections for the per-CPU ops, big- and little-
 * endian.  Contract: doc/primitives.md, "Per-CPU operations"; the calling
 * convention of the ak_arch_rseq_* functions is in arch/generic/percpu.h.
 *
 * Shape of every section (labels 1-7 are reserved for it), as on x86-64:
 *
 *	descriptor 3: {0, 0, start 1f, post-commit 2f - 1f, abort 4f}
 *	rs->rseq_cs = &3b		(bcl/mflr/addis/addi, then std)
 *   1:	if (*cpu_field != cpu) goto 4	(the CPU or mm_cid we computed for)
 *	loads, compares (a mismatch leaves for 5), injection point
 *	one committing stw/std (stq for 128 bits)
 *   2:	rc = 0
 *	branch over the signature, then the abort handler 4: rc = -1
 *   5:	rc = 1
 *
 * Once the descriptor is published and the id checked, any preemption,
 * migration or signal before the commit makes the kernel restart the
 * thread at 4, so the commit lands only on the slot of the CPU it runs
 * on.  The signature is the word before 4: 0x0fe5000b, twui r5,11, which
 * traps if ever executed.  Instructions and data share the byte order on
 * ppc64 (unlike aarch64_be), so .long emits it right on both.  The
 * descriptor's fields are native-endian too, which .long/.quad give.
 *
 * The descriptor's address is formed pc-relative: bcl 20,31 to the next
 * instruction (the form the hardware does not push on its return-address
 * stack), mflr, then addis/addi of (3b - 7b)@ha/@l, which the assembler
 * turns into R_PPC64_REL16_HA/LO.  That needs neither the TOC (r2 is not
 * set up in a function the compiler thinks needs none) nor a text
 * relocation, as the absolute lis/ori/rldicr/oris/ori form would in a
 * PIE or shared library; it costs the link register, clobbered.
 *
 * The register that held the descriptor's address is reused to load the
 * id and, in the array ops, for the scaled index.  Every register used as
 * a base, or as the ra of addi/addis, is constrained to "b": r0 there
 * reads as literal zero.  32-bit values are compared with cmpw and stored
 * with stw, which look at the low word only, so whatever the ABI leaves
 * in the upper half of a uint32_t's register does not matter.
 */
#ifndef ATOMKIT_ARCH_PPC64_PERCPU_H
#define ATOMKIT_ARCH_PPC64_PERCPU_H

#ifndef __powerpc64__
# error "atomkit was configured for ppc64 but the compiler targets another arch"
#endif

#include <atomkit/rseq-abi.h>
#include <atomkit/u128.h>
#include <atomkit/cmpxchg.h>	/* ak_ppc_has_quadword() */

#define AK_HAVE_ARCH_RSEQ	1
#define AK_RSEQ_SIG		0x0fe5000b

#ifdef AK_RSEQ_STRESS
/*
 * Widen the window between the id check and the commit.  isync waits for
 * every earlier instruction to complete, tens of cycles each, so this is
 * roughly a µs, as the x86 pauses are; nop would be folded away.
 */
# define __AK_PPC_RSEQ_INJECT	".rept 64\n\tisync\n\t.endr\n\t"
#else
# define __AK_PPC_RSEQ_INJECT	""
#endif

#define __AK_PPC_STR(x)		#x
#define __AK_PPC_XSTR(x)	__AK_PPC_STR(x)

#define __AK_PPC_RSEQ_ENTER						\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n"							\
	"3:\n\t"							\
	".long 0x0, 0x0\n\t"						\
	".quad 1f, (2f - 1f), 4f\n\t"					\
	".popsection\n\t"						\
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
	".quad 3b\n\t"							\
	".popsection\n\t"						\
	"bcl 20, 31, 7f\n"						\
	"7:\n\t"							\
	"mflr %[cs]\n\t"						\
	"addis %[cs], %[cs], (3b - 7b)@ha\n\t"				\
	"addi %[cs], %[cs], (3b - 7b)@l\n\t"				\
	"std %[cs], " __AK_PPC_XSTR(AK_RSEQ_CS_OFFSET) "(%[rs])\n"	\
	"1:\n\t"							\
	"lwz %[cs], 0(%[field])\n\t"					\
	"cmpw 0, %[cs], %[cpu]\n\t"					\
	"bne- 0, 4f\n\t"

#define __AK_PPC_RSEQ_EXIT						\
	"2:\n\t"							\
	"li %[rc], 0\n\t"						\
	"b 6f\n\t"							\
	".long 0x0fe5000b\n"						\
	"4:\n\t"							\
	"li %[rc], -1\n\t"						\
	"b 6f\n"							\
	"5:\n\t"							\
	"li %[rc], 1\n"							\
	"6:\n"

/* Operands and clobbers every section takes. */
#define __AK_PPC_RSEQ_OUT	[rc] "=&r"(rc), [cs] "=&b"(cs)
#define __AK_PPC_RSEQ_IN	[rs] "b"(rs), [field] "b"(field), [cpu] "r"(cpu)
#define __AK_PPC_RSEQ_CLOBBER	"memory", "cr0", "lr"

/* l: the load, c: the compare, s: the store for the width. */
#define __AK_PPC_RSEQ_WIDTH(bits, l, c, s)				\
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
	__asm__ __volatile__(__AK_PPC_RSEQ_ENTER			\
		l " %[o], 0(%[p])\n\t"					\
		"add %[t], %[o], %[v]\n\t"				\
		__AK_PPC_RSEQ_INJECT					\
		s " %[t], 0(%[p])\n"					\
		__AK_PPC_RSEQ_EXIT					\
		: __AK_PPC_RSEQ_OUT, [o] "=&r"(o), [t] "=&r"(t)		\
		: __AK_PPC_RSEQ_IN, [p] "b"(p), [v] "r"(v)		\
		: __AK_PPC_RSEQ_CLOBBER);				\
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
	uint##bits##_t sv;						\
	uint64_t cs;							\
	int rc;								\
									\
	__asm__ __volatile__(__AK_PPC_RSEQ_ENTER			\
		l " %[sv], 0(%[p])\n\t"					\
		c " 0, %[sv], %[e]\n\t"					\
		"bne- 0, 5f\n\t"					\
		__AK_PPC_RSEQ_INJECT					\
		s " %[n], 0(%[p])\n"					\
		__AK_PPC_RSEQ_EXIT					\
		: __AK_PPC_RSEQ_OUT, [sv] "=&r"(sv)			\
		: __AK_PPC_RSEQ_IN, [p] "b"(p), [e] "r"(expect),	\
		  [n] "r"(new_)						\
		: __AK_PPC_RSEQ_CLOBBER);				\
	*seen = sv;							\
	return rc;							\
}

__AK_PPC_RSEQ_WIDTH(32, "lwz", "cmpw", "stw")
__AK_PPC_RSEQ_WIDTH(64, "ld", "cmpd", "std")

/*
 * 128 bits: two ld (word0 at the lower address), compare both, commit
 * with one stq.  A single instruction cannot be split by preemption on
 * this CPU and the section makes this CPU the only writer of the slot, so
 * the pair is stored whole (and read whole: a write between the two loads
 * would need a preemption, which aborts).  ISA 2.07 made lq/stq available
 * in problem state and single-copy atomic when quadword aligned.
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
 * The caller has no fallback for an rseq op, so a CPU without the
 * quadword instructions is a bug here, caught in debug builds.  Every
 * ppc64le build assumes POWER8, so the check folds away there.
 */
__ak_inline int ak_arch_rseq_cmpxchg128(struct ak_rseq_abi *rs,
					const uint32_t *field, uint32_t cpu,
					ak_u128 *p, ak_u128 expect,
					ak_u128 new_, ak_u128 *seen)
{
	uint64_t e0 = ak_u128_word0(expect), e1 = ak_u128_word1(expect);
	uint64_t nh_ = ak_u128_hi(new_), nl_ = ak_u128_lo(new_);
	uint64_t s0, s1, cs;
	int rc;

	AK_BUG_ON(!AK_IS_ALIGNED16(p));
	AK_BUG_ON(!ak_ppc_has_quadword());
	{
		register uint64_t nh __asm__("r6") = nh_;
		register uint64_t nl __asm__("r7") = nl_;

		__asm__ __volatile__(__AK_PPC_RSEQ_ENTER
			"ld %[s0], 0(%[p])\n\t"
			"ld %[s1], 8(%[p])\n\t"
			"cmpd 0, %[s0], %[e0]\n\t"
			"bne- 0, 5f\n\t"
			"cmpd 0, %[s1], %[e1]\n\t"
			"bne- 0, 5f\n\t"
			__AK_PPC_RSEQ_INJECT
			".machine push\n\t"
			".machine power8\n\t"
			"stq %[nh], 0(%[p])\n\t"
			".machine pop\n"
			__AK_PPC_RSEQ_EXIT
			: __AK_PPC_RSEQ_OUT, [s0] "=&r"(s0), [s1] "=&r"(s1)
			: __AK_PPC_RSEQ_IN, [p] "b"(p), [e0] "r"(e0),
			  [e1] "r"(e1), [nh] "r"(nh), [nl] "r"(nl)
			: __AK_PPC_RSEQ_CLOBBER);
	}
	*seen = ak_u128_from_words(s0, s1);
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

	__asm__ __volatile__(__AK_PPC_RSEQ_ENTER
		"ld %[n], 0(%[h])\n\t"
		"cmpdi 0, %[n], 0\n\t"
		"beq- 0, 5f\n\t"
		"ld %[x], 0(%[n])\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[x], 0(%[h])\n"
		__AK_PPC_RSEQ_EXIT
		: __AK_PPC_RSEQ_OUT, [n] "=&b"(n), [x] "=&r"(next)
		: __AK_PPC_RSEQ_IN, [h] "b"(head)
		: __AK_PPC_RSEQ_CLOBBER);
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

	__asm__ __volatile__(__AK_PPC_RSEQ_ENTER
		"ld %[t], 0(%[h])\n\t"
		"std %[t], 0(%[n])\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[n], 0(%[h])\n"
		__AK_PPC_RSEQ_EXIT
		: __AK_PPC_RSEQ_OUT, [t] "=&r"(t)
		: __AK_PPC_RSEQ_IN, [h] "b"(head), [n] "b"(node)
		: __AK_PPC_RSEQ_CLOBBER);
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

	__asm__ __volatile__(__AK_PPC_RSEQ_ENTER
		"ld %[t], 0(%[c])\n\t"
		"cmpld 0, %[t], %[l]\n\t"
		"bge- 0, 5f\n\t"
		"sldi %[cs], %[t], 3\n\t"
		"stdx %[o], %[s], %[cs]\n\t"
		"addi %[t], %[t], 1\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[t], 0(%[c])\n"
		__AK_PPC_RSEQ_EXIT
		: __AK_PPC_RSEQ_OUT, [t] "=&b"(t)
		: __AK_PPC_RSEQ_IN, [c] "b"(count), [s] "b"(slots),
		  [l] "r"(limit), [o] "r"(obj)
		: __AK_PPC_RSEQ_CLOBBER);
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

	__asm__ __volatile__(__AK_PPC_RSEQ_ENTER
		"ld %[t], 0(%[c])\n\t"
		"cmpdi 0, %[t], 0\n\t"
		"beq- 0, 5f\n\t"
		"addi %[t], %[t], -1\n\t"
		"sldi %[cs], %[t], 3\n\t"
		"ldx %[o], %[s], %[cs]\n\t"
		__AK_PPC_RSEQ_INJECT
		"std %[t], 0(%[c])\n"
		__AK_PPC_RSEQ_EXIT
		: __AK_PPC_RSEQ_OUT, [t] "=&b"(t), [o] "=&r"(o)
		: __AK_PPC_RSEQ_IN, [c] "b"(count), [s] "b"(slots)
		: __AK_PPC_RSEQ_CLOBBER);
	*obj = o;
	return rc;
}

#endif /* ATOMKIT_ARCH_PPC64_PERCPU_H */
