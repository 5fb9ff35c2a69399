/* SPDX-License-Identifier: MIT */
/*
 * arm64 rseq critical sections for the per-CPU ops.  Contract:
 * doc/primitives.md, "Per-CPU operations".  This header holds the asm;
 * arch/generic/percpu.h wraps each body in its ak_arch_rseq_* function
 * and says what the pieces below must provide.
 *
 * Shape of every section (labels 1-6 are reserved for it), as on x86-64:
 *
 *	descriptor 3: {0, 0, start 1f, post-commit 2f - 1f, abort 4f}
 *	rs->rseq_cs = &3b		(adrp/add/str)
 *   1:	if (*cpu_field != cpu) goto 4	(the CPU or mm_cid we computed for)
 *	loads, compares (a mismatch leaves for 5), injection point
 *	one committing str (stp for 128 bits)
 *   2:	rc = 0
 *	branch over the signature, then the abort handler 4: rc = -1
 *   5:	rc = 1
 *
 * Once the descriptor is published and the id checked, any preemption,
 * migration or signal before the commit makes the kernel restart the
 * thread at 4, so the commit lands only on the slot of the CPU it runs
 * on.  The signature is the word before 4: `.inst 0xd428bc00`, BRK
 * #0x45e0, which traps if ever executed.  It is emitted with .inst, not
 * .long, because instructions are little-endian even on aarch64_be, and
 * the kernel compares the signature as an instruction fetched from there.
 *
 * The register that held the descriptor's address is reused to load the
 * id, so a section needs no scratch beyond its own operands.  32-bit
 * values are loaded, compared and stored through their w names only (the
 * AAPCS64 leaves a 32-bit value's upper half undefined).
 */
#ifndef ATOMKIT_ARCH_ARM64_PERCPU_H
#define ATOMKIT_ARCH_ARM64_PERCPU_H

#ifndef __aarch64__
# error "atomkit was configured for arm64 but the compiler targets another arch"
#endif

#include <atomkit/rseq-abi.h>
#include <atomkit/u128.h>

#define AK_HAVE_ARCH_RSEQ	1
#define AK_RSEQ_SIG		0xd428bc00

#ifdef AK_RSEQ_STRESS
/*
 * Widen the window between the id check and the commit.  yield is a nop
 * on most cores; isb drains the pipeline, tens of cycles each, so this is
 * roughly a µs, as the x86 pauses are.
 */
# define __AK_ARM64_RSEQ_INJECT	".rept 64\n\tisb\n\t.endr\n\t"
#else
# define __AK_ARM64_RSEQ_INJECT	""
#endif

#define __AK_ARM64_STR(x)	#x
#define __AK_ARM64_XSTR(x)	__AK_ARM64_STR(x)

#define __AK_ARCH_RSEQ_ENTER						\
	__AK_RSEQ_DESCRIPTOR						\
	"adrp %[cs], 3b\n\t"						\
	"add %[cs], %[cs], :lo12:3b\n\t"				\
	"str %[cs], [%[rs], #" __AK_ARM64_XSTR(AK_RSEQ_CS_OFFSET) "]\n" \
	"1:\n\t"							\
	"ldr %w[cs], [%[field]]\n\t"					\
	"cmp %w[cs], %w[cpu]\n\t"					\
	"b.ne 4f\n\t"

#define __AK_ARCH_RSEQ_EXIT						\
	"2:\n\t"							\
	"mov %w[rc], #0\n\t"						\
	"b 6f\n\t"							\
	".inst 0xd428bc00\n"						\
	"4:\n\t"							\
	"mov %w[rc], #-1\n\t"						\
	"b 6f\n"							\
	"5:\n\t"							\
	"mov %w[rc], #1\n"						\
	"6:\n"

#define __AK_ARCH_RSEQ_OUT	[rc] "=&r"(rc), [cs] "=&r"(cs)
#define __AK_ARCH_RSEQ_IN	[rs] "r"(rs), [field] "r"(field), [cpu] "r"(cpu)
#define __AK_ARCH_RSEQ_CLOBBER	"memory", "cc"
#define __AK_ARCH_RSEQ_B	"r"

/*
 * Each op's body, wrapped and given its operands in arch/generic/percpu.h.
 * __AK_ARM64_R<bits> is the register prefix the asm names a value of that
 * width with: w for 32 bits, x for 64.
 */
#define __AK_ARM64_R32		"w"
#define __AK_ARM64_R64		"x"

#define __AK_ARCH_RSEQ_ADD(bits)					\
	"ldr %" __AK_ARM64_R##bits "[o], [%[p]]\n\t"			\
	"add %" __AK_ARM64_R##bits "[t], %" __AK_ARM64_R##bits "[o], %"	\
		__AK_ARM64_R##bits "[v]\n\t"				\
	__AK_ARM64_RSEQ_INJECT						\
	"str %" __AK_ARM64_R##bits "[t], [%[p]]\n"

#define __AK_ARCH_RSEQ_CMPXCHG(bits)					\
	"ldr %" __AK_ARM64_R##bits "[s], [%[p]]\n\t"			\
	"cmp %" __AK_ARM64_R##bits "[s], %" __AK_ARM64_R##bits "[e]\n\t" \
	"b.ne 5f\n\t"							\
	__AK_ARM64_RSEQ_INJECT						\
	"str %" __AK_ARM64_R##bits "[n], [%[p]]\n"

#define __AK_ARCH_RSEQ_LIST_POP						\
	"ldr %[n], [%[h]]\n\t"						\
	"cbz %[n], 5f\n\t"						\
	"ldr %[x], [%[n]]\n\t"						\
	__AK_ARM64_RSEQ_INJECT						\
	"str %[x], [%[h]]\n"

#define __AK_ARCH_RSEQ_LIST_PUSH					\
	"ldr %[t], [%[h]]\n\t"						\
	"str %[t], [%[n]]\n\t"						\
	__AK_ARM64_RSEQ_INJECT						\
	"str %[n], [%[h]]\n"

#define __AK_ARCH_RSEQ_ARRAY_PUSH					\
	"ldr %[t], [%[c]]\n\t"						\
	"cmp %[t], %[l]\n\t"						\
	"b.hs 5f\n\t"							\
	"str %[o], [%[s], %[t], lsl #3]\n\t"				\
	"add %[t], %[t], #1\n\t"					\
	__AK_ARM64_RSEQ_INJECT						\
	"str %[t], [%[c]]\n"

#define __AK_ARCH_RSEQ_ARRAY_POP					\
	"ldr %[t], [%[c]]\n\t"						\
	"cbz %[t], 5f\n\t"						\
	"sub %[t], %[t], #1\n\t"					\
	"ldr %[o], [%[s], %[t], lsl #3]\n\t"				\
	__AK_ARM64_RSEQ_INJECT						\
	"str %[t], [%[c]]\n"

/*
 * The array *[p] points to: count at +0, slots at +8.  [a] steps to the
 * slots after the count is read, so that the scaled index needs no add.
 */
#define __AK_ARCH_RSEQ_ARRAY_PTR_PUSH					\
	"ldr %[a], [%[p]]\n\t"						\
	"cbz %[a], 5f\n\t"						\
	"ldr %[t], [%[a]], #8\n\t"					\
	"cmp %[t], %[l]\n\t"						\
	"b.hs 5f\n\t"							\
	"str %[o], [%[a], %[t], lsl #3]\n\t"				\
	"add %[t], %[t], #1\n\t"					\
	__AK_ARM64_RSEQ_INJECT						\
	"stur %[t], [%[a], #-8]\n"

#define __AK_ARCH_RSEQ_ARRAY_PTR_POP					\
	"ldr %[a], [%[p]]\n\t"						\
	"cbz %[a], 5f\n\t"						\
	"ldr %[t], [%[a]], #8\n\t"					\
	"cbz %[t], 5f\n\t"						\
	"sub %[t], %[t], #1\n\t"					\
	"ldr %[o], [%[a], %[t], lsl #3]\n\t"				\
	__AK_ARM64_RSEQ_INJECT						\
	"stur %[t], [%[a], #-8]\n"

/*
 * The bulk forms (arch/generic/percpu.h): [k] = min(k, count) or min(k,
 * limit - count), the copy a word a turn (label 8), the count's store
 * the commit.
 */
#define __AK_ARM64_COPY_N(from, to)					\
	"mov %[i], #0\n"						\
	"8:\n\t"							\
	"ldr %[r], [" from ", %[i], lsl #3]\n\t"			\
	"str %[r], [" to ", %[i], lsl #3]\n\t"				\
	"add %[i], %[i], #1\n\t"					\
	"cmp %[i], %[k]\n\t"						\
	"b.lo 8b\n\t"

#define __AK_ARCH_RSEQ_ARRAY_PTR_POP_N					\
	"ldr %[a], [%[p]]\n\t"						\
	"cbz %[a], 5f\n\t"						\
	"ldr %[t], [%[a]]\n\t"						\
	"cmp %[k], %[t]\n\t"						\
	"csel %[k], %[t], %[k], hi\n\t"					\
	"cbz %[k], 5f\n\t"						\
	"sub %[t], %[t], %[k]\n\t"					\
	"add %[x], %[a], #8\n\t"					\
	"add %[x], %[x], %[t], lsl #3\n\t"				\
	__AK_ARM64_COPY_N("%[x]", "%[d]")				\
	__AK_ARM64_RSEQ_INJECT						\
	"str %[t], [%[a]]\n"

#define __AK_ARCH_RSEQ_ARRAY_PTR_PUSH_N					\
	"ldr %[a], [%[p]]\n\t"						\
	"cbz %[a], 5f\n\t"						\
	"ldr %[t], [%[a]]\n\t"						\
	"sub %[x], %[l], %[t]\n\t"					\
	"cmp %[k], %[x]\n\t"						\
	"csel %[k], %[x], %[k], hi\n\t"					\
	"cbz %[k], 5f\n\t"						\
	"add %[x], %[a], #8\n\t"					\
	"add %[x], %[x], %[t], lsl #3\n\t"				\
	__AK_ARM64_COPY_N("%[s]", "%[x]")				\
	"add %[t], %[t], %[k]\n\t"					\
	__AK_ARM64_RSEQ_INJECT						\
	"str %[t], [%[a]]\n"

/*
 * 128 bits: ldp both words, compare both, commit with one stp.  A single
 * instruction cannot be split by preemption on this CPU and the section
 * makes this CPU the only writer of the slot, so the pair is stored whole
 * (and read whole: a write between the two loads would need a preemption,
 * which aborts).  The first register of ldp/stp is the word at the lower
 * address, ak_u128_word0, on either endianness.
 */
#define __AK_ARCH_RSEQ_CMPXCHG128					\
do {									\
	uint64_t s0, s1;						\
									\
	__asm__ __volatile__(__AK_ARCH_RSEQ_ENTER			\
		"ldp %[s0], %[s1], [%[p]]\n\t"				\
		"cmp %[s0], %[e0]\n\t"					\
		"ccmp %[s1], %[e1], #0, eq\n\t"				\
		"b.ne 5f\n\t"						\
		__AK_ARM64_RSEQ_INJECT					\
		"stp %[n0], %[n1], [%[p]]\n"				\
		__AK_ARCH_RSEQ_EXIT					\
		: __AK_ARCH_RSEQ_OUT, [s0] "=&r"(s0), [s1] "=&r"(s1)	\
		: __AK_ARCH_RSEQ_IN, [p] "r"(p),			\
		  [e0] "r"(ak_u128_word0(expect)),			\
		  [e1] "r"(ak_u128_word1(expect)),			\
		  [n0] "r"(ak_u128_word0(new_)),			\
		  [n1] "r"(ak_u128_word1(new_))				\
		: __AK_ARCH_RSEQ_CLOBBER);				\
	*seen = ak_u128_from_words(s0, s1);				\
} while (0)

#endif /* ATOMKIT_ARCH_ARM64_PERCPU_H */
