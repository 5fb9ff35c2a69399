/* SPDX-License-Identifier: MIT */
/*
 * The Linux rseq ABI (include/uapi/linux/rseq.h), as atomkit uses it, and
 * the per-thread registration (src/rseq.c).  See doc/primitives.md,
 * "Per-CPU operations".
 */
#ifndef ATOMKIT_RSEQ_ABI_H
#define ATOMKIT_RSEQ_ABI_H

#include <stdint.h>
#include <atomkit/compiler.h>

/* struct rseq: 32 bytes, 32-byte aligned; fields at fixed offsets. */
struct ak_rseq_abi {
	uint32_t cpu_id_start;	/* 0: always a valid CPU number */
	uint32_t cpu_id;	/* 4: -1 uninitialized, -2 registration failed */
	uint64_t rseq_cs;	/* 8: the running critical section's descriptor */
	uint32_t flags;		/* 16 */
	uint32_t node_id;	/* 20: Linux 6.3+ */
	uint32_t mm_cid;	/* 24: compact id within the mm, Linux 6.3+ */
	uint32_t end[1];	/* 28 */
} __attribute__((aligned(32)));

#define AK_RSEQ_CPU_ID_UNINITIALIZED	((uint32_t)-1)
#define AK_RSEQ_CPU_ID_REGISTRATION_FAILED ((uint32_t)-2)

/* Offsets the asm uses. */
#define AK_RSEQ_CS_OFFSET	8

/* A constant as asm text: AK_RSEQ_CS_OFFSET, each arch's AK_RSEQ_SIG. */
#define __AK_RSEQ_STR(x)	#x
#define __AK_RSEQ_XSTR(x)	__AK_RSEQ_STR(x)

/*
 * Every rseq section is one asm goto with outputs: it leaves for its
 * caller's abort path (and, where it has one, its compare-failed path)
 * through C labels, so that a commit falls through with no return code to
 * set and test.  That needs GCC 11 or clang 11; with an older compiler
 * the arches define no sections (AK_HAVE_ARCH_RSEQ 0) and the rseq modes
 * are unavailable.  Clang before 16 keeps outputs valid only on the
 * fallthrough path, so no section reads an output after a jump to a label.
 */
/*
 * An empty asm right after every section's asm goto and as the first
 * statement at each C label it jumps to.  GCC 12 was seen to drop the
 * copy of a cmpxchg section's output on the fallthrough (arm64: seen
 * read from a register nothing had set, found by the system rig), and,
 * in a sanitizer build, to aim a section's fail exit past the
 * instruction that set its caller's return value in a block it merged
 * with.  The kernel works around the same asm goto bugs (GCC PR 113921)
 * with an empty asm after the asm goto.  It emits nothing.
 */
#define __AK_RSEQ_EDGE()	__asm__ ("")

#if (defined(__clang__) && __clang_major__ >= 11) || \
	(!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11)
# define AK_HAVE_ASM_GOTO_OUTPUT	1
#else
# define AK_HAVE_ASM_GOTO_OUTPUT	0
#endif

/*
 * The asm that emits a critical section's descriptor (struct rseq_cs:
 * version 0, flags 0, start_ip, post_commit_offset, abort_ip, 32-byte
 * aligned) at local label 3, for a section that starts at label 1,
 * commits just before label 2 and aborts to label 4 (the instruction
 * after the arch's signature), and lists it in
 * __rseq_cs_ptr_array (as librseq does, for debuggers).  The same on
 * every 64-bit arch: .quad is native-endian, as the kernel reads it.
 */
#define __AK_RSEQ_DESCRIPTOR						\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n"							\
	"3:\n\t"							\
	".long 0x0, 0x0\n\t"						\
	".quad 1f, (2f - 1f), 4f\n\t"					\
	".popsection\n\t"						\
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
	".quad 3b\n\t"							\
	".popsection\n\t"

#ifdef __cplusplus
extern "C" {
#endif

/* This thread's rseq area once registered (by glibc or by us), else NULL. */
extern __thread struct ak_rseq_abi *__ak_rseq_area
	__attribute__((tls_model("initial-exec")));

/*
 * Registers the calling thread where glibc did not: init aborts where
 * that is impossible, try_init returns NULL.
 */
struct ak_rseq_abi *__ak_rseq_thread_init(void);
struct ak_rseq_abi *__ak_rseq_thread_try_init(void);

/* Counts an aborted critical section (all threads together). */
void __ak_rseq_count_abort(void);

#ifdef __cplusplus
}
#endif

static inline struct ak_rseq_abi *ak_rseq_thread(void)
{
	struct ak_rseq_abi *rs = __ak_rseq_area;

	if (ak_unlikely(!rs))
		rs = __ak_rseq_thread_init();
	return rs;
}

#endif /* ATOMKIT_RSEQ_ABI_H */
