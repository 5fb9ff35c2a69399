/* SPDX-License-Identifier: MIT */
/*
 * ppc64 (both endiannesses) for atomkit-rseq-check (doc/testing.md, "The
 * rseq abort injector"): the breakpoint, where the registers are, and how
 * long an instruction is, for the tracer; the marker trap, for the target.
 *
 * The breakpoint is the unconditional trap, tw 31,0,0, which the kernel
 * turns into SIGTRAP with nip still on it; it is stored in the target's
 * byte order, as every instruction is.  The registers are the
 * NT_PRSTATUS regset, struct pt_regs: gpr[0-31], then nip.
 */
#ifndef ATOMKIT_ARCH_PPC64_RSEQ_CHECK_H
#define ATOMKIT_ARCH_PPC64_RSEQ_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define AK_HAVE_ARCH_RSEQ_CHECK	1
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
# define AK_RC_ARCH		"ppc64"
# define AK_RC_TRAP_BYTES	{ 0x7f, 0xe0, 0x00, 0x08 }
#else
# define AK_RC_ARCH		"ppc64le"
# define AK_RC_TRAP_BYTES	{ 0x08, 0x00, 0xe0, 0x7f }
#endif
#define AK_RC_TRAP_LEN		4
#define AK_RC_TRAP_PC_AFTER	0

#define AK_RC_REG_ARG0		3
#define AK_RC_REG_ARG1		4
#define AK_RC_REG_PC		32

static inline void __ak_rseq_check_trap(void *c, unsigned long ev)
{
	register void *r3 __asm__("r3") = c;
	register unsigned long r4 __asm__("r4") = ev;

	__asm__ __volatile__("trap" : : "r"(r3), "r"(r4) : "memory");
}

/* Every instruction is one word (no prefixed ones in a section). */
static inline size_t ak_rc_insn_len(const uint8_t *p, size_t n)
{
	(void)p;
	return n >= 4 ? 4 : 0;
}

#endif /* ATOMKIT_ARCH_PPC64_RSEQ_CHECK_H */
