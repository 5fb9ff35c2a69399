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
 * The same for the per-CPU ops' one test (<atomkit/percpu.h>): the area
 * once registered, else AK_RSEQ_OP_NONE (-2^62), whose sum with any id
 * field's offset is negative.
 */
extern __thread uintptr_t __ak_rseq_op_area
	__attribute__((tls_model("initial-exec")));
#define AK_RSEQ_OP_NONE		((uintptr_t)3 << 62)

/*
 * Registers the calling thread where glibc did not: init aborts where
 * that is impossible, try_init returns NULL.
 */
struct ak_rseq_abi *__ak_rseq_thread_init(void);
struct ak_rseq_abi *__ak_rseq_thread_try_init(void);

/*
 * The aborts of the calling thread's critical sections are counted in a
 * counter of its own (a word no other thread writes; src/rseq.c keeps
 * every thread's and sums them when asked), claimed at its first abort:
 * the abort path then costs one increment, with no atomic on a line that
 * every thread shares.
 */
extern __thread unsigned long *__ak_rseq_abort_ctr
	__attribute__((tls_model("initial-exec")));
unsigned long *__ak_rseq_abort_ctr_init(void);

#ifdef __cplusplus
}
#endif

/*
 * Counts an aborted critical section of the calling thread.  Only its
 * own thread writes the counter, so a plain increment would do but for
 * the readers, which must see whole words: a relaxed store.
 */
static inline void __ak_rseq_count_abort(void)
{
	unsigned long *c = __ak_rseq_abort_ctr;

	if (ak_unlikely(!c))
		c = __ak_rseq_abort_ctr_init();
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/*
 * A load that the compiler may merge with any other of the same address
 * and keep out of a loop, past the critical sections' memory clobbers:
 * for a word that does not change while any per-CPU op can run (glibc's
 * rseq offset, the per-CPU mode).  Like the kernel's this_cpu_read_stable:
 * an asm that does not say it reads memory.  Where no arch asm is known,
 * a plain load (correct; only kept in the loop).
 */
#if defined(__x86_64__)
# define __AK_LOAD_STABLE32	"movl (%1), %0"
# define __AK_LOAD_STABLE64	"movq (%1), %0"
# define __AK_LOAD_STABLE_BASE	"r"
#elif defined(__aarch64__)
# define __AK_LOAD_STABLE32	"ldr %w0, [%1]"
# define __AK_LOAD_STABLE64	"ldr %0, [%1]"
# define __AK_LOAD_STABLE_BASE	"r"
#elif defined(__powerpc64__)
# define __AK_LOAD_STABLE32	"lwz %0, 0(%1)"
# define __AK_LOAD_STABLE64	"ld %0, 0(%1)"
# define __AK_LOAD_STABLE_BASE	"b"	/* r0 as a base reads as 0 */
#endif

#ifdef __AK_LOAD_STABLE32
static inline uint32_t __ak_load_stable32(const void *p)
{
	uint32_t v;

	__asm__(__AK_LOAD_STABLE32 : "=r"(v) : __AK_LOAD_STABLE_BASE(p));
	return v;
}

static inline uint64_t __ak_load_stable64(const void *p)
{
	uint64_t v;

	__asm__(__AK_LOAD_STABLE64 : "=r"(v) : __AK_LOAD_STABLE_BASE(p));
	return v;
}
#else
static inline uint32_t __ak_load_stable32(const void *p)
{
	return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
}

static inline uint64_t __ak_load_stable64(const void *p)
{
	return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
}
#endif

/*
 * __ak_rseq_op_area, read as a stable load.  On x86-64 the whole access
 * is one asm: the thread pointer is a %fs-relative load to the compiler,
 * which a critical section's memory clobber makes it repeat on every op
 * of a loop, with the GOT load of the variable's offset; as an asm that
 * reads no memory it knows of, both may stay out of the loop, as the
 * thread pointer does on arm64 (tpidr_el0) and ppc64 (r13) by itself.
 * The slab's inline fastpath uses it (a loop of alloc+free pairs keeps
 * the area in a register); the per-CPU ops do not: in their loops the
 * hoisted area took a register the sections needed, and the ops ran
 * slower than with the access repeated (the percpu suite, both builds
 * side by side on the AMD EPYC 2-vCPU VM).
 */
static inline uintptr_t __ak_rseq_op_area_stable(void)
{
#if defined(__x86_64__)
	uintptr_t v;

	__asm__("movq __ak_rseq_op_area@gottpoff(%%rip), %0\n\t"
		"movq %%fs:(%0), %0" : "=r"(v));
	return v;
#else
	return (uintptr_t)__ak_load_stable64(&__ak_rseq_op_area);
#endif
}

/* The calling thread's rseq area, registered at its first call. */
static inline struct ak_rseq_abi *ak_rseq_thread(void)
{
	struct ak_rseq_abi *rs = __ak_rseq_area;

	if (ak_unlikely(!rs))
		rs = __ak_rseq_thread_init();
	return rs;
}

#endif /* ATOMKIT_RSEQ_ABI_H */
