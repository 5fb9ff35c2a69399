/* SPDX-License-Identifier: MIT */
/*
 * x86-64 for atomkit-rseq-check (doc/testing.md, "The rseq abort
 * injector"): the breakpoint, where the registers are, and how long an
 * instruction is, for the tracer; the marker trap, for the target.
 *
 * int3 is one byte, so a breakpoint covers exactly the instruction it
 * replaces, and the trap leaves rip after it.  The registers are the
 * NT_PRSTATUS regset, struct user_regs_struct, read as unsigned longs.
 */
#ifndef ATOMKIT_ARCH_X86_64_RSEQ_CHECK_H
#define ATOMKIT_ARCH_X86_64_RSEQ_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define AK_HAVE_ARCH_RSEQ_CHECK	1
#define AK_RC_ARCH		"x86_64"

#define AK_RC_TRAP_BYTES	{ 0xcc }
#define AK_RC_TRAP_LEN		1
/* rip after an int3 is the byte after it */
#define AK_RC_TRAP_PC_AFTER	1

/* user_regs_struct: rsi, rdi, rip */
#define AK_RC_REG_ARG1		13
#define AK_RC_REG_ARG0		14
#define AK_RC_REG_PC		16

/* The target's marker: the case in rdi, the event in rsi, then int3. */
static inline void __ak_rseq_check_trap(void *c, unsigned long ev)
{
	__asm__ __volatile__("int3" : : "D"(c), "S"(ev) : "memory");
}

/*
 * The length of the instruction at p (n bytes readable), or 0 for one
 * this decoder does not know.  It knows the general-purpose instructions
 * of the one-byte and 0F maps and the 0F38/0F3A maps' lengths, which is
 * what compilers and our sections emit between two labels; VEX, EVEX and
 * 3DNow! encodings are refused, so that a section using them is reported
 * rather than stopped at the wrong bytes.
 */

/* one-byte map: M ModRM; immediate: B byte, W word, Z 16/32, V 16/32/64 */
enum { __AK_RC_M = 0x10, __AK_RC_B = 1, __AK_RC_W = 2, __AK_RC_Z = 3,
       __AK_RC_V = 4, __AK_RC_BAD = 0x80 };

static inline unsigned int __ak_rc_x86_onebyte(uint8_t op)
{
	if (op < 0x40) {
		switch (op & 7) {
		case 0: case 1: case 2: case 3: return __AK_RC_M;
		case 4: return __AK_RC_B;
		case 5: return __AK_RC_Z;
		default: return __AK_RC_BAD;	/* prefixes: before */
		}
	}
	if (op < 0x60)			/* push, pop */
		return 0;
	if (op >= 0x70 && op <= 0x7f)	/* jcc rel8 */
		return __AK_RC_B;
	if (op >= 0x84 && op <= 0x8f)	/* test, xchg, mov, lea, pop */
		return __AK_RC_M;
	if (op >= 0x90 && op <= 0x9f && op != 0x9a)
		return 0;
	if (op >= 0xa4 && op <= 0xaf && op != 0xa8 && op != 0xa9)
		return 0;
	if (op >= 0xb0 && op <= 0xb7)
		return __AK_RC_B;
	if (op >= 0xb8 && op <= 0xbf)
		return __AK_RC_V;
	if (op >= 0xd8 && op <= 0xdf)	/* x87 */
		return __AK_RC_M;
	switch (op) {
	case 0x63: return __AK_RC_M;
	case 0x68: return __AK_RC_Z;
	case 0x69: return __AK_RC_M | __AK_RC_Z;
	case 0x6a: return __AK_RC_B;
	case 0x6b: return __AK_RC_M | __AK_RC_B;
	case 0x6c: case 0x6d: case 0x6e: case 0x6f: return 0;
	case 0x80: case 0x83: return __AK_RC_M | __AK_RC_B;
	case 0x81: return __AK_RC_M | __AK_RC_Z;
	case 0xa8: return __AK_RC_B;
	case 0xa9: return __AK_RC_Z;
	case 0xc0: case 0xc1: return __AK_RC_M | __AK_RC_B;
	case 0xc2: case 0xca: return __AK_RC_W;
	case 0xc3: case 0xc9: case 0xcb: case 0xcc: case 0xcf: return 0;
	case 0xc6: return __AK_RC_M | __AK_RC_B;
	case 0xc7: return __AK_RC_M | __AK_RC_Z;
	case 0xcd: return __AK_RC_B;
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: return __AK_RC_M;
	case 0xd7: return 0;
	case 0xe0: case 0xe1: case 0xe2: case 0xe3:
	case 0xe4: case 0xe5: case 0xe6: case 0xe7: case 0xeb:
		return __AK_RC_B;
	case 0xe8: case 0xe9: return __AK_RC_Z;
	case 0xec: case 0xed: case 0xee: case 0xef:
	case 0xf1: case 0xf4: case 0xf5:
	case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd:
		return 0;
	case 0xf6: case 0xf7:		/* test has an immediate: below */
	case 0xfe: case 0xff:
		return __AK_RC_M;
	}
	return __AK_RC_BAD;		/* A0-A3, C8, VEX, EVEX, invalid */
}

static inline unsigned int __ak_rc_x86_twobyte(uint8_t op)
{
	if (op >= 0x80 && op <= 0x8f)	/* jcc rel32 */
		return __AK_RC_Z;
	if (op >= 0xc8 && op <= 0xcf)	/* bswap */
		return 0;
	switch (op) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b:
	case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35:
	case 0x37: case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8:
	case 0xa9: case 0xaa:
		return 0;
	case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac:
	case 0xba: case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		return __AK_RC_M | __AK_RC_B;
	case 0x0f: case 0x38: case 0x3a:	/* handled by the caller */
		return __AK_RC_BAD;
	}
	return __AK_RC_M;
}

static inline size_t ak_rc_insn_len(const uint8_t *p, size_t n)
{
	size_t i = 0, imm = 0;
	int opsize16 = 0, addr32 = 0, rexw = 0;
	unsigned int f;
	uint8_t op;

	for (;; i++) {			/* legacy prefixes, then REX */
		if (i >= n || i > 14)
			return 0;
		switch (p[i]) {
		case 0x66: opsize16 = 1; continue;
		case 0x67: addr32 = 1; continue;
		case 0xf0: case 0xf2: case 0xf3: case 0x2e: case 0x36:
		case 0x3e: case 0x26: case 0x64: case 0x65:
			continue;
		}
		break;
	}
	(void)addr32;			/* 64-bit mode: same ModRM forms */
	if ((p[i] & 0xf0) == 0x40) {
		rexw = !!(p[i] & 8);
		if (++i >= n)
			return 0;
	}
	op = p[i++];
	if (op == 0x0f) {
		if (i >= n)
			return 0;
		op = p[i++];
		if (op == 0x38)
			f = __AK_RC_M;
		else if (op == 0x3a)
			f = __AK_RC_M | __AK_RC_B;
		else
			f = __ak_rc_x86_twobyte(op);
		if (f & __AK_RC_BAD)
			return 0;
		if (op == 0x38 || op == 0x3a)
			i++;		/* the third opcode byte */
		if ((f & 0xf) == __AK_RC_Z)	/* jcc: always rel32 */
			imm = 4;
	} else {
		f = __ak_rc_x86_onebyte(op);
		if (f & __AK_RC_BAD)
			return 0;
		if (op == 0xe8 || op == 0xe9)	/* call, jmp: rel32 */
			imm = 4;
	}
	if (f & __AK_RC_M) {
		uint8_t modrm, mod, rm;

		if (i >= n)
			return 0;
		modrm = p[i++];
		mod = modrm >> 6;
		rm = modrm & 7;
		if ((op == 0xf6 || op == 0xf7) && !(modrm & 0x30))
			f |= op == 0xf6 ? __AK_RC_B : __AK_RC_Z;
		if (mod != 3) {
			if (rm == 4) {		/* SIB */
				if (i >= n)
					return 0;
				if (mod == 0 && (p[i] & 7) == 5)
					i += 4;	/* no base: disp32 */
				i++;
			} else if (mod == 0 && rm == 5) {
				i += 4;		/* rip-relative */
			}
			if (mod == 1)
				i += 1;
			else if (mod == 2)
				i += 4;
		}
	}
	if (!imm) {
		switch (f & 0xf) {
		case __AK_RC_B: imm = 1; break;
		case __AK_RC_W: imm = 2; break;
		case __AK_RC_Z: imm = opsize16 ? 2 : 4; break;
		case __AK_RC_V: imm = rexw ? 8 : opsize16 ? 2 : 4; break;
		}
	}
	i += imm;
	return i <= n ? i : 0;
}

#endif /* ATOMKIT_ARCH_X86_64_RSEQ_CHECK_H */
