/* SPDX-License-Identifier: MIT */
/*
 * arm64 for atomkit-rseq-check (doc/testing.md, "The rseq abort
 * injector"): the breakpoint, where the registers are, and how long an
 * instruction is, for the tracer; the marker trap, for the target.
 *
 * The breakpoint is BRK #0, the one a debugger plants: the kernel turns
 * it into SIGTRAP with the pc still on it (uprobes' immediate is another).
 * Instructions are little-endian words even on aarch64_be.  The registers
 * are the NT_PRSTATUS regset, struct user_pt_regs: x0-x30, sp, pc.
 */
#ifndef ATOMKIT_ARCH_ARM64_RSEQ_CHECK_H
#define ATOMKIT_ARCH_ARM64_RSEQ_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define AK_HAVE_ARCH_RSEQ_CHECK	1
#define AK_RC_ARCH		"arm64"

#define AK_RC_TRAP_BYTES	{ 0x00, 0x00, 0x20, 0xd4 }
#define AK_RC_TRAP_LEN		4
#define AK_RC_TRAP_PC_AFTER	0

#define AK_RC_REG_ARG0		0
#define AK_RC_REG_ARG1		1
#define AK_RC_REG_PC		32

static inline void __ak_rseq_check_trap(void *c, unsigned long ev)
{
	register void *x0 __asm__("x0") = c;
	register unsigned long x1 __asm__("x1") = ev;

	__asm__ __volatile__("brk #0" : : "r"(x0), "r"(x1) : "memory");
}

/* Every instruction is one word. */
static inline size_t ak_rc_insn_len(const uint8_t *p, size_t n)
{
	(void)p;
	return n >= 4 ? 4 : 0;
}

#endif /* ATOMKIT_ARCH_ARM64_RSEQ_CHECK_H */
