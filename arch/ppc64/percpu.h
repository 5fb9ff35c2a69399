/* SPDX-License-Identifier: MIT */
/*
 * ppc64 rseq critical sections for the per-CPU ops, big- and little-
 * endian.  Contract: doc/primitives.md, "Per-CPU operations".  This
 * header holds the asm; arch/generic/percpu.h wraps each body in its
 * ak_arch_rseq_* function and says what the pieces below must provide.
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

#define __AK_ARCH_RSEQ_ENTER						\
	__AK_RSEQ_DESCRIPTOR						\
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

#define __AK_ARCH_RSEQ_EXIT						\
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

#define __AK_ARCH_RSEQ_OUT	[rc] "=&r"(rc), [cs] "=&b"(cs)
#define __AK_ARCH_RSEQ_IN	[rs] "b"(rs), [field] "b"(field), [cpu] "r"(cpu)
#define __AK_ARCH_RSEQ_CLOBBER	"memory", "cr0", "lr"
#define __AK_ARCH_RSEQ_B	"b"

/*
 * Each op's body, wrapped and given its operands in arch/generic/percpu.h.
 * The load, compare and store for each width:
 */
#define __AK_PPC_LD32		"lwz"
#define __AK_PPC_CMP32		"cmpw"
#define __AK_PPC_ST32		"stw"
#define __AK_PPC_LD64		"ld"
#define __AK_PPC_CMP64		"cmpd"
#define __AK_PPC_ST64		"std"

#define __AK_ARCH_RSEQ_ADD(bits)					\
	__AK_PPC_LD##bits " %[o], 0(%[p])\n\t"				\
	"add %[t], %[o], %[v]\n\t"					\
	__AK_PPC_RSEQ_INJECT						\
	__AK_PPC_ST##bits " %[t], 0(%[p])\n"

#define __AK_ARCH_RSEQ_CMPXCHG(bits)					\
	__AK_PPC_LD##bits " %[s], 0(%[p])\n\t"				\
	__AK_PPC_CMP##bits " 0, %[s], %[e]\n\t"				\
	"bne- 0, 5f\n\t"						\
	__AK_PPC_RSEQ_INJECT						\
	__AK_PPC_ST##bits " %[n], 0(%[p])\n"

#define __AK_ARCH_RSEQ_LIST_POP						\
	"ld %[n], 0(%[h])\n\t"						\
	"cmpdi 0, %[n], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"ld %[x], 0(%[n])\n\t"						\
	__AK_PPC_RSEQ_INJECT						\
	"std %[x], 0(%[h])\n"

#define __AK_ARCH_RSEQ_LIST_PUSH					\
	"ld %[t], 0(%[h])\n\t"						\
	"std %[t], 0(%[n])\n\t"						\
	__AK_PPC_RSEQ_INJECT						\
	"std %[n], 0(%[h])\n"

/* The scaled index goes in the scratch that held the descriptor. */
#define __AK_ARCH_RSEQ_ARRAY_PUSH					\
	"ld %[t], 0(%[c])\n\t"						\
	"cmpld 0, %[t], %[l]\n\t"					\
	"bge- 0, 5f\n\t"						\
	"sldi %[cs], %[t], 3\n\t"					\
	"stdx %[o], %[s], %[cs]\n\t"					\
	"addi %[t], %[t], 1\n\t"					\
	__AK_PPC_RSEQ_INJECT						\
	"std %[t], 0(%[c])\n"

#define __AK_ARCH_RSEQ_ARRAY_POP					\
	"ld %[t], 0(%[c])\n\t"						\
	"cmpdi 0, %[t], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"addi %[t], %[t], -1\n\t"					\
	"sldi %[cs], %[t], 3\n\t"					\
	"ldx %[o], %[s], %[cs]\n\t"					\
	__AK_PPC_RSEQ_INJECT						\
	"std %[t], 0(%[c])\n"

/*
 * The array *[p] points to: count at +0, slots at +8; [cs] (free after
 * ENTER) holds the scaled index, from the count's address, so the slot
 * is at [a] + [cs] + 8.
 */
#define __AK_ARCH_RSEQ_ARRAY_PTR_PUSH					\
	"ld %[a], 0(%[p])\n\t"						\
	"cmpdi 0, %[a], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"ld %[t], 0(%[a])\n\t"						\
	"cmpld 0, %[t], %[l]\n\t"					\
	"bge- 0, 5f\n\t"						\
	"addi %[t], %[t], 1\n\t"					\
	"sldi %[cs], %[t], 3\n\t"					\
	"stdx %[o], %[a], %[cs]\n\t"					\
	__AK_PPC_RSEQ_INJECT						\
	"std %[t], 0(%[a])\n"

#define __AK_ARCH_RSEQ_ARRAY_PTR_POP					\
	"ld %[a], 0(%[p])\n\t"						\
	"cmpdi 0, %[a], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"ld %[t], 0(%[a])\n\t"						\
	"cmpdi 0, %[t], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"sldi %[cs], %[t], 3\n\t"					\
	"ldx %[o], %[a], %[cs]\n\t"					\
	"addi %[t], %[t], -1\n\t"					\
	__AK_PPC_RSEQ_INJECT						\
	"std %[t], 0(%[a])\n"

/*
 * The bulk forms (arch/generic/percpu.h): [k] = min(k, count) or min(k,
 * limit - count) (label 8), the copy a word a turn with [i] a byte
 * offset up to [cs] = k * 8 (label 9), the count's store the commit.
 */
#define __AK_PPC_COPY_N(from, to)					\
	"li %[i], 0\n\t"						\
	"sldi %[cs], %[k], 3\n"						\
	"9:\n\t"							\
	"ldx %[r], " from ", %[i]\n\t"					\
	"stdx %[r], " to ", %[i]\n\t"					\
	"addi %[i], %[i], 8\n\t"					\
	"cmpld 0, %[i], %[cs]\n\t"					\
	"blt- 0, 9b\n\t"

#define __AK_ARCH_RSEQ_ARRAY_PTR_POP_N					\
	"ld %[a], 0(%[p])\n\t"						\
	"cmpdi 0, %[a], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"ld %[t], 0(%[a])\n\t"						\
	"cmpld 0, %[k], %[t]\n\t"					\
	"ble- 0, 8f\n\t"						\
	"mr %[k], %[t]\n"						\
	"8:\n\t"							\
	"cmpdi 0, %[k], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"subf %[t], %[k], %[t]\n\t"					\
	"sldi %[x], %[t], 3\n\t"					\
	"add %[x], %[x], %[a]\n\t"					\
	"addi %[x], %[x], 8\n\t"					\
	__AK_PPC_COPY_N("%[x]", "%[d]")					\
	__AK_PPC_RSEQ_INJECT						\
	"std %[t], 0(%[a])\n"

#define __AK_ARCH_RSEQ_ARRAY_PTR_PUSH_N					\
	"ld %[a], 0(%[p])\n\t"						\
	"cmpdi 0, %[a], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"ld %[t], 0(%[a])\n\t"						\
	"subf %[x], %[t], %[l]\n\t"					\
	"cmpld 0, %[k], %[x]\n\t"					\
	"ble- 0, 8f\n\t"						\
	"mr %[k], %[x]\n"						\
	"8:\n\t"							\
	"cmpdi 0, %[k], 0\n\t"						\
	"beq- 0, 5f\n\t"						\
	"sldi %[x], %[t], 3\n\t"					\
	"add %[x], %[x], %[a]\n\t"					\
	"addi %[x], %[x], 8\n\t"					\
	__AK_PPC_COPY_N("%[s]", "%[x]")					\
	"add %[t], %[t], %[k]\n\t"					\
	__AK_PPC_RSEQ_INJECT						\
	"std %[t], 0(%[a])\n"

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
#define __AK_ARCH_RSEQ_CMPXCHG128					\
do {									\
	uint64_t e0 = ak_u128_word0(expect), e1 = ak_u128_word1(expect); \
	uint64_t nh_ = ak_u128_hi(new_), nl_ = ak_u128_lo(new_);	\
	uint64_t s0, s1;						\
									\
	AK_BUG_ON(!ak_ppc_has_quadword());				\
	{								\
		register uint64_t nh __asm__("r6") = nh_;		\
		register uint64_t nl __asm__("r7") = nl_;		\
									\
		__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER		\
			"ld %[s0], 0(%[p])\n\t"				\
			"ld %[s1], 8(%[p])\n\t"				\
			"cmpd 0, %[s0], %[e0]\n\t"			\
			"bne- 0, 5f\n\t"				\
			"cmpd 0, %[s1], %[e1]\n\t"			\
			"bne- 0, 5f\n\t"				\
			__AK_PPC_RSEQ_INJECT				\
			".machine push\n\t"				\
			".machine power8\n\t"				\
			"stq %[nh], 0(%[p])\n\t"			\
			".machine pop\n"				\
			__AK_ARCH_RSEQ_EXIT				\
			: __AK_ARCH_RSEQ_OUT, [s0] "=&r"(s0), [s1] "=&r"(s1) \
			: __AK_ARCH_RSEQ_IN, [p] "b"(p), [e0] "r"(e0),	\
			  [e1] "r"(e1), [nh] "r"(nh), [nl] "r"(nl)	\
			: __AK_ARCH_RSEQ_CLOBBER);			\
	}								\
	*seen = ak_u128_from_words(s0, s1);				\
} while (0)

#endif /* ATOMKIT_ARCH_PPC64_PERCPU_H */
