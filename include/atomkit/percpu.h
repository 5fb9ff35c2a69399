/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU variables and the kernel's this_cpu_* operations in user space.
 * Contract: doc/primitives.md, "Per-CPU operations".
 *
 * The kernel's this_cpu ops are atomic against their own CPU for free,
 * because the per-CPU offset is folded into one instruction.  User space
 * computes the slot first, so a migration in between would race with the
 * other CPU's owner; only restartable sequences (rseq) close that gap.
 * The mode, chosen once per process (ak_percpu_mode()), says which of
 * these serves every op:
 *
 *   rseq         slot = rseq cpu_id; each op one rseq critical section
 *   rseq-mm_cid  slot = rseq mm_cid (compact: as many hot copies as
 *                threads running at once, not as CPUs)
 *   atomic       slot = sched_getcpu(); SMP-atomic ops on it, correct
 *                under migration, slower
 *   thread       slot = one per thread, no sharing; ops atomic only
 *                against the thread's own signal handlers
 *
 * None gives memory ordering, as in the kernel.
 */
#ifndef ATOMKIT_PERCPU_H
#define ATOMKIT_PERCPU_H

#include <stddef.h>
#include <sched.h>
#include <atomkit/cmpxchg.h>
#include <atomkit/rseq-abi.h>

#if defined(AK_ARCH_X86_64)
# include <atomkit/arch/x86_64/percpu.h>
#elif defined(AK_ARCH_ARM64)
# include <atomkit/arch/arm64/percpu.h>
#elif defined(AK_ARCH_PPC64)
# include <atomkit/arch/ppc64/percpu.h>
#endif
#include <atomkit/arch/generic/percpu.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ak_percpu_mode {
	AK_PERCPU_RSEQ,
	AK_PERCPU_RSEQ_MM_CID,
	AK_PERCPU_ATOMIC,
	AK_PERCPU_THREAD,
	AK_PERCPU_NR_MODES
};

extern int __ak_percpu_mode;
int __ak_percpu_mode_init(void);

/*
 * The mode fixed at build time: -DAK_PERCPU_MODE=rseq (or rseq_mm_cid,
 * atomic, thread) when compiling, or configure --with-percpu-mode=MODE
 * for the library and everything built with it.  Every op is then the
 * one inline path of that mode, with nothing to test at run time; the
 * other modes are unavailable (ak_percpu_mode_available() says why).
 */
#ifdef AK_PERCPU_MODE
# define __AK_PERCPU_FIXED_rseq		1
# define __AK_PERCPU_FIXED_rseq_mm_cid	2
# define __AK_PERCPU_FIXED_atomic	3
# define __AK_PERCPU_FIXED_thread	4
# define __AK_PERCPU_CAT2(a, b)	a##b
# define __AK_PERCPU_CAT(a, b)	__AK_PERCPU_CAT2(a, b)
# define AK_PERCPU_MODE_FIXED \
	(__AK_PERCPU_CAT(__AK_PERCPU_FIXED_, AK_PERCPU_MODE) - 1)
# if AK_PERCPU_MODE_FIXED < 0
#  error "AK_PERCPU_MODE must be one of rseq, rseq_mm_cid, atomic, thread"
# endif
#endif

/*
 * The mode in use, chosen at the first call: AK_PERCPU_MODE from the
 * environment (rseq, rseq-mm_cid, atomic, thread) or ak_percpu_set_mode(),
 * else rseq where available, else atomic; or the mode fixed at build time.
 */
static inline enum ak_percpu_mode ak_percpu_mode(void)
{
#ifdef AK_PERCPU_MODE_FIXED
	return (enum ak_percpu_mode)AK_PERCPU_MODE_FIXED;
#else
	int m = __atomic_load_n(&__ak_percpu_mode, __ATOMIC_RELAXED);

	if (ak_unlikely(m < 0))
		m = __ak_percpu_mode_init();
	return (enum ak_percpu_mode)m;
#endif
}

/*
 * How an op finds out, with one test, that it may run its rseq section
 * inline: two words that do not change while any op can run, each read
 * with a load the compiler keeps out of a loop of ops (no dependence on
 * memory, so the sections' memory clobbers do not make it load again):
 *
 *   __ak_rseq_op_area (per thread)  the thread's rseq area once
 *                                   registered, else AK_RSEQ_OP_NONE
 *   __ak_percpu_op_off (process)    in the rseq modes the offset of the
 *                                   id field their sections read
 *                                   (cpu_id, mm_cid), else AK_RSEQ_OP_NONE
 *
 * Their sum is the id field's address, and its sign bit is clear exactly
 * when both are set: an area is a user address (below 2^56 on every
 * arch), AK_RSEQ_OP_NONE is -2^62, and two of them add up to -2^63.  So
 * the op adds the two, tests the sign and runs the section with the area
 * and the id field in registers, as a hand-written port would; anything
 * else (another mode, the thread's first op, the mode not chosen yet)
 * goes to the op's out-of-line path, which asks for the mode itself.
 */
extern uintptr_t __ak_percpu_op_off;

#define __AK_RSEQ_ID_OFF(m)						\
	((m) == AK_PERCPU_RSEQ ? offsetof(struct ak_rseq_abi, cpu_id) :	\
	 (m) == AK_PERCPU_RSEQ_MM_CID ?					\
		offsetof(struct ak_rseq_abi, mm_cid) : 0)

static inline uintptr_t __ak_percpu_op_off_peek(void)
{
#if !AK_HAVE_ARCH_RSEQ
	return AK_RSEQ_OP_NONE;
#elif defined(AK_PERCPU_MODE_FIXED)
	return AK_PERCPU_MODE_FIXED <= AK_PERCPU_RSEQ_MM_CID ?
		__AK_RSEQ_ID_OFF(AK_PERCPU_MODE_FIXED) : AK_RSEQ_OP_NONE;
#else
	return (uintptr_t)__ak_load_stable64(&__ak_percpu_op_off);
#endif
}

/*
 * Whether the ops' out-of-line path is inline instead: where no mode but
 * one that has no rseq section can be in use (the mode fixed at build
 * time to atomic or thread, or no sections for this arch or compiler),
 * that mode's code is all there is, and no call is needed to keep it out
 * of the way.
 */
#if !AK_HAVE_ARCH_RSEQ || \
	(defined(AK_PERCPU_MODE_FIXED) && AK_PERCPU_MODE_FIXED > 1)
# define __AK_PERCPU_INLINE_FALLBACK	1
#else
# define __AK_PERCPU_INLINE_FALLBACK	0
#endif

/*
 * The mode as the ops read it: a load the compiler keeps out of a loop of
 * ops (the mode cannot change while per-CPU memory exists, and an op
 * needs some).  A load merged with one made before the mode was chosen
 * still reads -1: the call then returns the mode at once, unlocked.
 */
static inline enum ak_percpu_mode __ak_percpu_mode_op(void)
{
#ifdef AK_PERCPU_MODE_FIXED
	return (enum ak_percpu_mode)AK_PERCPU_MODE_FIXED;
#else
	int m = (int)__ak_load_stable32(&__ak_percpu_mode);

	if (ak_unlikely(m < 0))
		m = __ak_percpu_mode_init();
	return (enum ak_percpu_mode)m;
#endif
}

/* "rseq", "rseq-mm_cid", "atomic", "thread"; NULL for no such mode. */
const char *ak_percpu_mode_name(enum ak_percpu_mode m);
/* By name; -1 when the name is unknown. */
int ak_percpu_mode_parse(const char *name);

/*
 * Whether mode m can run here; if not and why is non-NULL, *why says why
 * ("rseq unavailable (ENOSYS)").
 */
bool ak_percpu_mode_available(enum ak_percpu_mode m, const char **why);

/*
 * Choose the mode before any per-CPU memory exists.  0 on success; -1 with
 * errno ENOTSUP (unavailable here), EBUSY (per-CPU memory already
 * allocated under another mode) or EINVAL.
 */
int ak_percpu_set_mode(enum ak_percpu_mode m);

/* Who registered this process's rseq areas: "glibc", "atomkit", "none". */
const char *ak_rseq_owner(void);

/*
 * Critical sections aborted by the kernel so far: all threads together
 * (every thread's count, summed now), and the calling thread's.
 */
unsigned long ak_rseq_aborts(void);
unsigned long ak_rseq_thread_aborts(void);

/* Number of per-CPU copies of every variable (possible CPUs, or threads). */
unsigned int ak_nr_cpus(void);

/*
 * size bytes, zeroed, once per copy, each copy aligned to align (a power
 * of two) and on cache lines of its own.  Returns the per-CPU pointer
 * (copy 0), to be passed to the ops below; NULL with errno on failure.
 */
void *ak_percpu_alloc(size_t size, size_t align);
void ak_percpu_free(void *pcp);

/*
 * Built with the mode fixed: the calls that depend on the library's mode
 * make it the fixed one first, so that a program built so may use a
 * library built with the mode chosen at run time.
 */
bool __ak_percpu_fixed_available(enum ak_percpu_mode fixed,
				 enum ak_percpu_mode m, const char **why);
int __ak_percpu_fixed_set_mode(enum ak_percpu_mode fixed,
			       enum ak_percpu_mode m);
void *__ak_percpu_fixed_alloc(enum ak_percpu_mode fixed, size_t size,
			      size_t align);
unsigned int __ak_percpu_fixed_nr_cpus(enum ak_percpu_mode fixed);

#if defined(AK_PERCPU_MODE_FIXED) && !defined(__AK_PERCPU_LIBRARY)
# define ak_percpu_mode_available(m, why) \
	__ak_percpu_fixed_available(AK_PERCPU_MODE_FIXED, m, why)
# define ak_percpu_set_mode(m) \
	__ak_percpu_fixed_set_mode(AK_PERCPU_MODE_FIXED, m)
# define ak_percpu_alloc(size, align) \
	__ak_percpu_fixed_alloc(AK_PERCPU_MODE_FIXED, size, align)
# define ak_nr_cpus() __ak_percpu_fixed_nr_cpus(AK_PERCPU_MODE_FIXED)
#endif

struct __ak_percpu_hdr {
	size_t stride;		/* bytes between copies */
	void *copy0;		/* the per-CPU pointer, for the sections */
	size_t size;
	void *base;
	unsigned int nr;
} __attribute__((aligned(64)));

#ifdef __cplusplus
}
#endif

static inline size_t __ak_percpu_stride(const void *pcp)
{
	return ((const struct __ak_percpu_hdr *)pcp - 1)->stride;
}

/* Copy number cpu of the per-CPU variable pcp. */
#define ak_per_cpu_ptr(pcp, cpu)					\
	((__typeof__(&*(pcp)))((char *)(pcp) +				\
			       (size_t)(cpu) * __ak_percpu_stride(pcp)))

#define ak_for_each_cpu(cpu)						\
	for ((cpu) = 0; (cpu) < ak_nr_cpus(); (cpu)++)

#ifdef __cplusplus
extern "C" {
#endif
/* glibc declares it only under _GNU_SOURCE; the atomic mode needs it. */
int sched_getcpu(void);
extern __thread int __ak_thread_slot __attribute__((tls_model("initial-exec")));
int __ak_thread_slot_init(void);
int __ak_thread_slot_try_init(void);
#ifdef __cplusplus
}
#endif

/* The slot the calling thread would use now (a hint under migration). */
static inline unsigned int __ak_this_slot(enum ak_percpu_mode m)
{
	struct ak_rseq_abi *rs;
	int s;

	switch (m) {
	case AK_PERCPU_RSEQ:
		rs = ak_rseq_thread();
		return __atomic_load_n(&rs->cpu_id_start, __ATOMIC_RELAXED);
	case AK_PERCPU_RSEQ_MM_CID:
		rs = ak_rseq_thread();
		return __atomic_load_n(&rs->mm_cid, __ATOMIC_RELAXED);
	case AK_PERCPU_ATOMIC:
		s = sched_getcpu();
		return s < 0 ? 0 : (unsigned int)s;
	default:
		s = __ak_thread_slot;
		return ak_likely(s >= 0) ? (unsigned int)s :
		       (unsigned int)__ak_thread_slot_init();
	}
}

/*
 * Can the calling thread run per-CPU ops in mode m now, without setting
 * anything up (its rseq area registered, its thread slot claimed)?  For a
 * caller that must never abort or allocate on a thread's first op (the
 * malloc interposer): it calls ak_percpu_thread_try_init() when not.
 */
static inline bool ak_percpu_thread_ready(enum ak_percpu_mode m)
{
	switch (m) {
	case AK_PERCPU_RSEQ:
	case AK_PERCPU_RSEQ_MM_CID:
		return __ak_rseq_area != NULL;
	case AK_PERCPU_THREAD:
		return __ak_thread_slot >= 0;
	default:
		return true;
	}
}

#ifdef __cplusplus
extern "C" {
#endif
/*
 * Set the calling thread up for per-CPU ops in the mode in use: true, or
 * false where it cannot be (rseq registration refused, every thread slot
 * taken), errno untouched either way.
 */
bool ak_percpu_thread_try_init(void);

/*
 * fork() from a threaded process: the per-CPU layer's lock taken before
 * (take), released after in parent and child (the malloc interposer's
 * atfork hooks; the slab layer's are ak_slab_fork()).
 */
void ak_percpu_fork(bool take);
#ifdef __cplusplus
}
#endif

/*
 * What an op of an rseq mode needs besides the variable: the thread's
 * rseq area and the id field its sections read.
 */
struct __ak_rseq_ctx {
	struct ak_rseq_abi *rs;
	const uint32_t *idp;
};

/*
 * The ops' one test: true, with *x set, when the op may run its rseq
 * section inline (an rseq mode, and this thread's area registered);
 * false sends it to its out-of-line path.  A loop of ops that started
 * before the thread's first op may keep the first loads and take the
 * out-of-line path on every op; it still runs the section, after a call.
 */
static inline bool __ak_percpu_fast(struct __ak_rseq_ctx *x)
{
#if __AK_PERCPU_INLINE_FALLBACK
	(void)x;
	return false;
#else
	uintptr_t a = (uintptr_t)__ak_load_stable64(&__ak_rseq_op_area);
	uintptr_t idp = a + __ak_percpu_op_off_peek();

	x->rs = (struct ak_rseq_abi *)a;
	x->idp = (const uint32_t *)idp;
	return ak_likely((intptr_t)idp >= 0);
#endif
}

/*
 * An op's out-of-line path, the one for every mode: a call to a function
 * of its own (so that the inlined op is its rseq path and the loop around
 * it stays small, its registers free for the section), or, where that
 * mode is all there can be, inline.  NAME##_slow (__AK_PERCPU_NOINLINE)
 * runs NAME##_mode, the op's body for the mode read then; an op calls it
 * through __AK_PERCPU_OUT(NAME, args).  The atomic mode's word ops were
 * inline behind a second test once: a loop of rseq-mode ops compiled
 * around that code held a pointer on the stack and reloaded it on every
 * op (doc/primitives.md).
 */
#define __AK_PERCPU_NOINLINE	static __attribute__((noinline, unused))
#if __AK_PERCPU_INLINE_FALLBACK
# define __AK_PERCPU_OUT(name, ...) \
	name##_mode(__ak_percpu_mode_op(), __VA_ARGS__)
#else
# define __AK_PERCPU_OUT(name, ...)	name##_slow(__VA_ARGS__)
#endif

__AK_PERCPU_NOINLINE unsigned int __ak_this_slot_slow(void)
{
	return __ak_this_slot(__ak_percpu_mode_op());
}

/*
 * The slot, for ak_this_cpu_ptr(): in an rseq mode, the load of the id
 * field the sections read (the thread is registered: never -1).
 */
static inline unsigned int __ak_this_slot_op(void)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __atomic_load_n(x.idp, __ATOMIC_RELAXED);
#if __AK_PERCPU_INLINE_FALLBACK
	return __ak_this_slot(__ak_percpu_mode_op());
#else
	return __ak_this_slot_slow();
#endif
}

#define ak_this_cpu_ptr(pcp)						\
	ak_per_cpu_ptr(pcp, __ak_this_slot_op())
#if AK_HAVE_ARCH_RSEQ
# define __AK_RSEQ_MODE(m)	((m) <= AK_PERCPU_RSEQ_MM_CID)
#else
# define __AK_RSEQ_MODE(m)	((void)(m), 0)	/* m used, never rseq */
#endif

/* ---- the rseq critical sections, for callers with their own loop ---- */

/*
 * What the slab cache's fastpaths need below the this_cpu ops: the mode
 * test, the calling thread's rseq area without registering it, the
 * stride of a per-CPU allocation, the slot a thread would use now, and
 * each rseq critical section run once, on the copy
 *
 *	c = *base + id * *stride,  id = *idp read inside the section
 *
 * (idp = ak_rseq_id_field(): &rs->cpu_id in the rseq mode, &rs->mm_cid in
 * rseq-mm_cid).  The sections are defined by arch/<arch>/percpu.h:
 *
 *	ak_rseq_write32/64(rs, idp, base, stride, v)
 *	ak_rseq_add32/64(rs, idp, base, stride, v, &old)
 *	ak_rseq_cmpxchg32/64/128(rs, idp, base, stride, expect, new, &seen)
 *	ak_rseq_list_pop(rs, idp, base, stride, &node)
 *	ak_rseq_list_push(rs, idp, base, stride, node)
 *	ak_rseq_list_push_owned(rs, idp, base, stride, owner, node)
 *	ak_rseq_array_pop(rs, idp, base, stride, &obj)
 *	ak_rseq_array_push(rs, idp, base, stride, limit, obj)
 *	ak_rseq_array_ptr_pop(rs, idp, base, stride, &obj)
 *	ak_rseq_array_ptr_push(rs, idp, base, stride, limit, obj)
 *	ak_rseq_array_ptr_pop_n(rs, idp, base, stride, dst, &n)
 *	ak_rseq_array_ptr_push_n(rs, idp, base, stride, limit, src, &n)
 *
 * Each returns 0 when it committed, 1 when a compare failed (empty, full,
 * absent, another owner, a cmpxchg that found another value; nothing
 * stored), -1 when the kernel aborted it (nothing stored: count it with
 * ak_rseq_count_abort() and run it again, or take a slow path).  Call
 * them only in an rseq mode (ak_percpu_mode_is_rseq()).  The pseudo-code
 * of every section is in doc/primitives.md, "rseq critical sections".
 */
static inline bool ak_percpu_mode_is_rseq(enum ak_percpu_mode m)
{
	return __AK_RSEQ_MODE(m);
}

/*
 * The 128-bit section assumes a 16-byte aligned copy (cmpxchg16b faults,
 * and ldp/stp or lq/stq would not be single-copy atomic, on any other):
 * for a caller's own base and stride the debug build checks both.  The
 * this_cpu op runs __ak_rseq_cmpxchg128, the section alone: its base and
 * stride come from ak_percpu_alloc(), which aligns both to a cache line,
 * so a check there would be per-op work on a fact fixed at allocation.
 */
__ak_inline int ak_rseq_cmpxchg128(struct ak_rseq_abi *rs,
				   const uint32_t *idp, void *const *base,
				   const size_t *stride, ak_u128 expect,
				   ak_u128 new_, ak_u128 *seen)
{
	AK_BUG_ON(!AK_IS_ALIGNED16(*base));
	AK_BUG_ON(!AK_IS_ALIGNED16(*stride));
	return __ak_rseq_cmpxchg128(rs, idp, base, stride, expect, new_,
				    seen);
}

/* This thread's rseq area, or NULL before its first per-CPU op. */
static inline struct ak_rseq_abi *ak_rseq_area(void)
{
	return __ak_rseq_area;
}

static inline void ak_rseq_count_abort(void)
{
	__ak_rseq_count_abort();
}

/* The id field a section of mode m reads. */
static inline const uint32_t *ak_rseq_id_field(struct ak_rseq_abi *rs,
					       enum ak_percpu_mode m)
{
	return m == AK_PERCPU_RSEQ ? &rs->cpu_id : &rs->mm_cid;
}

/* Bytes between the copies of a per-CPU allocation. */
static inline size_t ak_percpu_stride(const void *pcp)
{
	return __ak_percpu_stride(pcp);
}

/* The slot the calling thread would use now in mode m (a hint). */
static inline unsigned int ak_percpu_this_slot(enum ak_percpu_mode m)
{
	return __ak_this_slot(m);
}

/*
 * Where the stride of pcp is kept: the sections take it by address, and
 * the header already holds it in memory.
 */
static inline const size_t *__ak_percpu_stridep(const void *pcp)
{
	return &((const struct __ak_percpu_hdr *)pcp - 1)->stride;
}

/*
 * And where copy 0's address is kept: the sections take the base by
 * address too, and from the header, on the stride's line, it costs no
 * store of the pointer to the stack before each section.
 */
static inline void *const *__ak_percpu_basep(const void *pcp)
{
	return &((const struct __ak_percpu_hdr *)pcp - 1)->copy0;
}

/* A per-CPU variable as the sections take it: base and stride. */
#define __AK_PCP(pcp)	__ak_percpu_basep(pcp), __ak_percpu_stridep(pcp)

/* The same in an op's out-of-line path: the thread registered first. */
static inline struct __ak_rseq_ctx __ak_rseq_ctx_mode(enum ak_percpu_mode m)
{
	struct __ak_rseq_ctx x;

	x.rs = ak_rseq_thread();
	x.idp = ak_rseq_id_field(x.rs, m);
	return x;
}

/* ---- word-size ops: add_return and cmpxchg; the rest derive ---- */

/*
 * Each op is three functions: NAME_rseq, its rseq section(s) run with
 * the thread's area and id field (retried on an abort, which is counted);
 * NAME_mode, the op in mode m, for the out-of-line path (NAME_slow, or
 * inline where __AK_PERCPU_INLINE_FALLBACK); and NAME, which runs
 * NAME_rseq inline on the one test of __ak_percpu_fast(), else
 * NAME_mode out of line.
 *
 * add_return works on element i of the per-CPU array pcp, so that one
 * body serves ak_this_cpu_add (i = 0) and ak_this_cpu_add_elem64.
 */
#define __AK_PERCPU_WIDTH(bits)						\
__ak_inline uint##bits##_t						\
__ak_this_cpu_add_return_elem##bits##_rseq(struct __ak_rseq_ctx x,	\
					   uint##bits##_t *pcp,	\
					   size_t i, uint##bits##_t v)	\
{									\
	void *base = &pcp[i];						\
	void *const *bp = i ? &base : __ak_percpu_basep(pcp);		\
	uint##bits##_t old;						\
									\
	while (ak_unlikely(ak_rseq_add##bits(x.rs, x.idp, bp,		\
			__ak_percpu_stridep(pcp), v, &old) < 0))	\
		ak_rseq_count_abort();					\
	return old + v;							\
}									\
__ak_inline uint##bits##_t						\
__ak_this_cpu_add_return_elem##bits##_mode(enum ak_percpu_mode m,	\
					   uint##bits##_t *pcp,	\
					   size_t i, uint##bits##_t v)	\
{									\
	uint##bits##_t *p, old;						\
									\
	if (__AK_RSEQ_MODE(m))						\
		return __ak_this_cpu_add_return_elem##bits##_rseq(	\
				__ak_rseq_ctx_mode(m), pcp, i, v);	\
	p = &ak_per_cpu_ptr(pcp, __ak_this_slot(m))[i];			\
	if (m == AK_PERCPU_ATOMIC)					\
		return ak_fetch_add_relaxed(p, v) + v;			\
	old = *(volatile uint##bits##_t *)p;				\
	while (!ak_try_cmpxchg_local(p, &old, old + v))			\
		;							\
	return old + v;							\
}									\
__AK_PERCPU_NOINLINE uint##bits##_t					\
__ak_this_cpu_add_return_elem##bits##_slow(uint##bits##_t *pcp,	\
					   size_t i, uint##bits##_t v)	\
{									\
	return __ak_this_cpu_add_return_elem##bits##_mode(		\
			__ak_percpu_mode_op(), pcp, i, v);		\
}									\
__ak_inline uint##bits##_t						\
__ak_this_cpu_add_return_elem##bits(uint##bits##_t *pcp, size_t i,	\
				    uint##bits##_t v)			\
{									\
	struct __ak_rseq_ctx x;						\
									\
	if (__ak_percpu_fast(&x))					\
		return __ak_this_cpu_add_return_elem##bits##_rseq(x,	\
							pcp, i, v);	\
	return __AK_PERCPU_OUT(__ak_this_cpu_add_return_elem##bits,	\
			       pcp, i, v);				\
}									\
__ak_inline uint##bits##_t						\
__ak_this_cpu_add_return##bits(uint##bits##_t *pcp, uint##bits##_t v)	\
{									\
	return __ak_this_cpu_add_return_elem##bits(pcp, 0, v);		\
}									\
__ak_inline uint##bits##_t						\
__ak_this_cpu_cmpxchg##bits##_rseq(struct __ak_rseq_ctx x,		\
				   uint##bits##_t *pcp,			\
				   uint##bits##_t o, uint##bits##_t n)	\
{									\
	uint##bits##_t seen;						\
									\
	while (ak_unlikely(ak_rseq_cmpxchg##bits(x.rs, x.idp,		\
			__AK_PCP(pcp), o, n, &seen) < 0))		\
		ak_rseq_count_abort();					\
	return seen;							\
}									\
__ak_inline uint##bits##_t						\
__ak_this_cpu_cmpxchg##bits##_mode(enum ak_percpu_mode m,		\
				   uint##bits##_t *pcp,			\
				   uint##bits##_t o, uint##bits##_t n)	\
{									\
	uint##bits##_t *p;						\
									\
	if (__AK_RSEQ_MODE(m))						\
		return __ak_this_cpu_cmpxchg##bits##_rseq(		\
				__ak_rseq_ctx_mode(m), pcp, o, n);	\
	p = ak_per_cpu_ptr(pcp, __ak_this_slot(m));			\
	if (m == AK_PERCPU_ATOMIC)					\
		return ak_cmpxchg_relaxed(p, o, n);			\
	return ak_cmpxchg_local(p, o, n);				\
}									\
__AK_PERCPU_NOINLINE uint##bits##_t					\
__ak_this_cpu_cmpxchg##bits##_slow(uint##bits##_t *pcp,		\
				   uint##bits##_t o, uint##bits##_t n)	\
{									\
	return __ak_this_cpu_cmpxchg##bits##_mode(__ak_percpu_mode_op(), \
						   pcp, o, n);		\
}									\
__ak_inline uint##bits##_t						\
__ak_this_cpu_cmpxchg##bits(uint##bits##_t *pcp, uint##bits##_t o,	\
			    uint##bits##_t n)				\
{									\
	struct __ak_rseq_ctx x;						\
									\
	if (__ak_percpu_fast(&x))					\
		return __ak_this_cpu_cmpxchg##bits##_rseq(x, pcp, o, n); \
	return __AK_PERCPU_OUT(__ak_this_cpu_cmpxchg##bits, pcp, o, n);	\
}									\
__ak_inline uint##bits##_t						\
__ak_this_cpu_xchg##bits(uint##bits##_t *pcp, uint##bits##_t v)		\
{									\
	struct __ak_rseq_ctx x;						\
	uint##bits##_t o;						\
									\
	/*								\
	 * The copy the id field names now, read with the id the	\
	 * section compares: no second mode test, as the bare section.	\
	 * A slot that moved under us fails the compare.		\
	 */								\
	if (__ak_percpu_fast(&x)) {					\
		do							\
			o = *(volatile uint##bits##_t *)ak_per_cpu_ptr(	\
				pcp, __atomic_load_n(x.idp,		\
						     __ATOMIC_RELAXED)); \
		while (__ak_this_cpu_cmpxchg##bits##_rseq(x, pcp, o, v)	\
		       != o);						\
		return o;						\
	}								\
	for (;;) {							\
		uint##bits##_t *p = ak_this_cpu_ptr(pcp);		\
									\
		o = *(volatile uint##bits##_t *)p;			\
		if (__ak_this_cpu_cmpxchg##bits(pcp, o, v) == o)	\
			return o;					\
	}								\
}

__AK_PERCPU_WIDTH(32)
__AK_PERCPU_WIDTH(64)

/*
 * write, the kernel's this_cpu_write: a store to this CPU's copy, in an
 * rseq mode the section whose commit is the store (nothing compared,
 * nothing to fail).  Elsewhere one relaxed atomic store to the slot: in
 * the atomic mode it lands wholly before or after another CPU's
 * read-modify-write of the same copy, and a single store cannot be split
 * by the thread's own signal handlers in the thread mode.
 */
#define __AK_PERCPU_WRITE(bits)						\
__ak_inline void __ak_this_cpu_write##bits##_rseq(struct __ak_rseq_ctx x, \
						  uint##bits##_t *pcp,	\
						  uint##bits##_t v)	\
{									\
	while (ak_unlikely(ak_rseq_write##bits(x.rs, x.idp,		\
					       __AK_PCP(pcp), v) < 0))	\
		ak_rseq_count_abort();					\
}									\
__ak_inline void __ak_this_cpu_write##bits##_mode(enum ak_percpu_mode m, \
						  uint##bits##_t *pcp,	\
						  uint##bits##_t v)	\
{									\
	if (__AK_RSEQ_MODE(m)) {					\
		__ak_this_cpu_write##bits##_rseq(__ak_rseq_ctx_mode(m),	\
						 pcp, v);		\
		return;							\
	}								\
	__atomic_store_n(ak_per_cpu_ptr(pcp, __ak_this_slot(m)), v,	\
			 __ATOMIC_RELAXED);				\
}									\
__AK_PERCPU_NOINLINE void						\
__ak_this_cpu_write##bits##_slow(uint##bits##_t *pcp, uint##bits##_t v) \
{									\
	__ak_this_cpu_write##bits##_mode(__ak_percpu_mode_op(), pcp, v); \
}									\
/* v back, so that the type-generic __ak_op1() dispatches write too */	\
__ak_inline uint##bits##_t __ak_this_cpu_write##bits(uint##bits##_t *pcp, \
						     uint##bits##_t v)	\
{									\
	struct __ak_rseq_ctx x;						\
									\
	if (__ak_percpu_fast(&x))					\
		__ak_this_cpu_write##bits##_rseq(x, pcp, v);		\
	else								\
		__AK_PERCPU_OUT(__ak_this_cpu_write##bits, pcp, v);	\
	return v;							\
}

__AK_PERCPU_WRITE(32)
__AK_PERCPU_WRITE(64)

#define ak_this_cpu_read(pcp)	(*(volatile __typeof__(&*(pcp)))ak_this_cpu_ptr(pcp))
#define ak_this_cpu_add_return(pcp, v) \
	__ak_op1(pcp, v, __ak_this_cpu_add_return)
#define ak_this_cpu_add(pcp, v)	((void)ak_this_cpu_add_return(pcp, v))
#define ak_this_cpu_inc(pcp)	ak_this_cpu_add(pcp, 1)
#define ak_this_cpu_dec(pcp)	ak_this_cpu_add(pcp, -1)
#define ak_this_cpu_xchg(pcp, v) __ak_op1(pcp, v, __ak_this_cpu_xchg)
#define ak_this_cpu_write(pcp, v) \
	((void)__ak_op1(pcp, v, __ak_this_cpu_write))
#define ak_this_cpu_cmpxchg(pcp, o, n) \
	__ak_op2(pcp, o, n, __ak_this_cpu_cmpxchg)
#define ak_this_cpu_try_cmpxchg(pcp, po, n)				\
({									\
	__typeof__(&*(po)) __tpo = (po);				\
	__typeof__(*__tpo) __to = *__tpo;				\
	__typeof__(*__tpo) __tr = ak_this_cpu_cmpxchg(pcp, __to, n);	\
	bool __tok = __tr == __to;					\
									\
	if (!__tok)							\
		*__tpo = __tr;						\
	__tok;								\
})

/* ---- 128 bits ---- */

/*
 * Every this_cpu op is always inline, as the kernel's are: each is a
 * fastpath's one op.  As a plain inline GCC kept this one out of line in
 * slab/slub.c, so that every slub-tid and slub-local alloc and free made
 * a call that read the mode again.
 */

__ak_inline ak_u128 __ak_this_cpu_cmpxchg128_rseq(struct __ak_rseq_ctx x,
						  ak_u128 *pcp, ak_u128 o,
						  ak_u128 n)
{
	ak_u128 seen;

	while (ak_unlikely(__ak_rseq_cmpxchg128(x.rs, x.idp, __AK_PCP(pcp),
						o, n, &seen) < 0))
		ak_rseq_count_abort();
	return seen;
}

__ak_inline ak_u128 __ak_this_cpu_cmpxchg128_mode(enum ak_percpu_mode m,
						  ak_u128 *pcp, ak_u128 o,
						  ak_u128 n)
{
	ak_u128 *p;

	if (__AK_RSEQ_MODE(m))
		return __ak_this_cpu_cmpxchg128_rseq(__ak_rseq_ctx_mode(m),
						     pcp, o, n);
	p = ak_per_cpu_ptr(pcp, __ak_this_slot(m));
	if (m == AK_PERCPU_ATOMIC)
		return ak_cmpxchg128(p, o, n);
	return ak_cmpxchg128_local(p, o, n);
}

__AK_PERCPU_NOINLINE ak_u128 __ak_this_cpu_cmpxchg128_slow(ak_u128 *pcp,
							   ak_u128 o,
							   ak_u128 n)
{
	return __ak_this_cpu_cmpxchg128_mode(__ak_percpu_mode_op(), pcp, o,
					     n);
}

__ak_inline ak_u128 ak_this_cpu_cmpxchg128(ak_u128 *pcp, ak_u128 o,
					   ak_u128 n)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __ak_this_cpu_cmpxchg128_rseq(x, pcp, o, n);
	return __AK_PERCPU_OUT(__ak_this_cpu_cmpxchg128, pcp, o, n);
}

__ak_inline bool ak_this_cpu_try_cmpxchg128(ak_u128 *pcp, ak_u128 *o,
					    ak_u128 n)
{
	return __ak_u128_tried(o, ak_this_cpu_cmpxchg128(pcp, *o, n));
}

/* The kernel's this_cpu_cmpxchg_double: p2 == p1 + 1, p1 16-aligned. */
#define ak_this_cpu_cmpxchg_double(p1, p2, o1, o2, n1, n2) \
	__ak_cmpxchg_double(p1, p2, o1, o2, n1, n2, ak_this_cpu_try_cmpxchg128)

/* ---- allocator fastpath ops ---- */

/*
 * A per-CPU freelist: objects linked through their first word.  seq is
 * bumped by the non-rseq modes, whose pop is a 128-bit cmpxchg of
 * {head, seq}: without it a pop could succeed on a head that was popped
 * and pushed back meanwhile (ABA).  Objects must stay readable while they
 * can be on a list (the pop may read a stale head's link).
 */
struct ak_percpu_list {
	void *head;
	unsigned long seq;
} __attribute__((aligned(16)));

static inline ak_u128 __ak_list_snapshot(struct ak_percpu_list *l)
{
	/* a torn pair only fails the cmpxchg */
	return ak_u128_from_words(
		(uintptr_t)__atomic_load_n(&l->head, __ATOMIC_RELAXED),
		__atomic_load_n(&l->seq, __ATOMIC_RELAXED));
}

static inline ak_u128 __ak_list_cmpxchg(enum ak_percpu_mode m,
					struct ak_percpu_list *l,
					ak_u128 o, ak_u128 n)
{
	if (m == AK_PERCPU_ATOMIC)
		return ak_cmpxchg128((ak_u128 *)(void *)l, o, n);
	return ak_cmpxchg128_local((ak_u128 *)(void *)l, o, n);
}

__ak_inline void *__ak_this_cpu_list_pop_rseq(struct __ak_rseq_ctx x,
					      struct ak_percpu_list *pcp)
{
	void *node;
	int rc;

	while (ak_unlikely((rc = ak_rseq_list_pop(x.rs, x.idp, __AK_PCP(pcp),
						  &node)) < 0))
		ak_rseq_count_abort();
	return rc ? NULL : node;
}

__ak_inline void *__ak_this_cpu_list_pop_mode(enum ak_percpu_mode m,
					      struct ak_percpu_list *pcp)
{
	struct ak_percpu_list *l;
	void *node;

	if (__AK_RSEQ_MODE(m))
		return __ak_this_cpu_list_pop_rseq(__ak_rseq_ctx_mode(m), pcp);
	l = ak_per_cpu_ptr(pcp, __ak_this_slot(m));
	for (;;) {
		ak_u128 o = __ak_list_snapshot(l);
		uint64_t seq = ak_u128_word1(o);

		node = (void *)(uintptr_t)ak_u128_word0(o);
		if (!node)
			return NULL;
		if (__ak_list_cmpxchg(m, l, o, ak_u128_from_words(
				(uintptr_t)*(void *volatile *)node, seq + 1)) == o)
			return node;
	}
}

__AK_PERCPU_NOINLINE void *__ak_this_cpu_list_pop_slow(
	struct ak_percpu_list *pcp)
{
	return __ak_this_cpu_list_pop_mode(__ak_percpu_mode_op(), pcp);
}

/* Pop the head of this CPU's list; NULL when it is empty. */
__ak_inline void *ak_this_cpu_list_pop(struct ak_percpu_list *pcp)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __ak_this_cpu_list_pop_rseq(x, pcp);
	return __AK_PERCPU_OUT(__ak_this_cpu_list_pop, pcp);
}

__ak_inline void __ak_this_cpu_list_push_rseq(struct __ak_rseq_ctx x,
					      struct ak_percpu_list *pcp,
					      void *node)
{
	while (ak_unlikely(ak_rseq_list_push(x.rs, x.idp, __AK_PCP(pcp),
					     node) < 0))
		ak_rseq_count_abort();
}

__ak_inline void __ak_this_cpu_list_push_mode(enum ak_percpu_mode m,
					      struct ak_percpu_list *pcp,
					      void *node)
{
	struct ak_percpu_list *l;

	if (__AK_RSEQ_MODE(m)) {
		__ak_this_cpu_list_push_rseq(__ak_rseq_ctx_mode(m), pcp, node);
		return;
	}
	l = ak_per_cpu_ptr(pcp, __ak_this_slot(m));
	for (;;) {
		ak_u128 o = __ak_list_snapshot(l);

		*(void *volatile *)node = (void *)(uintptr_t)ak_u128_word0(o);
		if (__ak_list_cmpxchg(m, l, o, ak_u128_from_words(
				(uintptr_t)node, ak_u128_word1(o) + 1)) == o)
			return;
	}
}

__AK_PERCPU_NOINLINE void __ak_this_cpu_list_push_slow(
	struct ak_percpu_list *pcp, void *node)
{
	__ak_this_cpu_list_push_mode(__ak_percpu_mode_op(), pcp, node);
}

/* Push node onto this CPU's list. */
__ak_inline void ak_this_cpu_list_push(struct ak_percpu_list *pcp,
				       void *node)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x)) {
		__ak_this_cpu_list_push_rseq(x, pcp, node);
		return;
	}
	__AK_PERCPU_OUT(__ak_this_cpu_list_push, pcp, node);
}

/*
 * A per-CPU array of object pointers (SLAB's array_cache, a sheaf):
 * allocate it with ak_percpu_alloc(ak_percpu_array_size(limit), 64).  The
 * non-rseq modes guard each copy with a try-lock; a push or pop that finds
 * it taken (another thread on that CPU, or a signal handler of this one)
 * fails as if the array were full or empty, for the caller's slow path,
 * like the kernel's local_trylock in sheaves.
 */
struct ak_percpu_array {
	unsigned long count;
	unsigned long lock;
	void *slots[];
};

/* where the sections of arch/<arch>/percpu.h find the fields */
AK_STATIC_ASSERT(offsetof(struct ak_percpu_array, count) == 0 &&
		 offsetof(struct ak_percpu_array, slots) == 16,
		 "ak_percpu_array layout");
AK_STATIC_ASSERT(offsetof(struct ak_percpu_list, head) == 0,
		 "ak_percpu_list layout");

#define ak_percpu_array_size(limit) \
	(sizeof(struct ak_percpu_array) + (size_t)(limit) * sizeof(void *))

static inline bool __ak_array_trylock(enum ak_percpu_mode m,
				      struct ak_percpu_array *a)
{
	if (m == AK_PERCPU_ATOMIC)
		return ak_cmpxchg_acquire(&a->lock, 0UL, 1UL) == 0;
	return ak_cmpxchg_local(&a->lock, 0UL, 1UL) == 0;
}

static inline void __ak_array_unlock(struct ak_percpu_array *a)
{
	__atomic_store_n(&a->lock, 0, __ATOMIC_RELEASE);
}

__ak_inline int __ak_this_cpu_array_push_rseq(struct __ak_rseq_ctx x,
					      struct ak_percpu_array *pcp,
					      unsigned long limit, void *obj)
{
	int rc;

	while (ak_unlikely((rc = ak_rseq_array_push(x.rs, x.idp,
				__AK_PCP(pcp), limit, obj)) < 0))
		ak_rseq_count_abort();
	return rc;
}

__ak_inline int __ak_this_cpu_array_push_mode(enum ak_percpu_mode m,
					      struct ak_percpu_array *pcp,
					      unsigned long limit, void *obj)
{
	struct ak_percpu_array *a;
	int rc = 1;

	if (__AK_RSEQ_MODE(m))
		return __ak_this_cpu_array_push_rseq(__ak_rseq_ctx_mode(m),
						     pcp, limit, obj);
	a = ak_per_cpu_ptr(pcp, __ak_this_slot(m));
	if (!__ak_array_trylock(m, a))
		return 1;
	if (a->count < limit) {
		a->slots[a->count] = obj;
		a->count++;
		rc = 0;
	}
	__ak_array_unlock(a);
	return rc;
}

__AK_PERCPU_NOINLINE int __ak_this_cpu_array_push_slow(
	struct ak_percpu_array *pcp, unsigned long limit, void *obj)
{
	return __ak_this_cpu_array_push_mode(__ak_percpu_mode_op(), pcp,
					     limit, obj);
}

/* 0 when obj was stored, 1 when the array is full (or busy). */
__ak_inline int ak_this_cpu_array_push(struct ak_percpu_array *pcp,
				       unsigned long limit, void *obj)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __ak_this_cpu_array_push_rseq(x, pcp, limit, obj);
	return __AK_PERCPU_OUT(__ak_this_cpu_array_push, pcp, limit, obj);
}

__ak_inline void *__ak_this_cpu_array_pop_rseq(struct __ak_rseq_ctx x,
					       struct ak_percpu_array *pcp)
{
	void *obj;
	int rc;

	while (ak_unlikely((rc = ak_rseq_array_pop(x.rs, x.idp,
				__AK_PCP(pcp), &obj)) < 0))
		ak_rseq_count_abort();
	return rc ? NULL : obj;
}

__ak_inline void *__ak_this_cpu_array_pop_mode(enum ak_percpu_mode m,
					       struct ak_percpu_array *pcp)
{
	struct ak_percpu_array *a;
	void *obj = NULL;

	if (__AK_RSEQ_MODE(m))
		return __ak_this_cpu_array_pop_rseq(__ak_rseq_ctx_mode(m),
						    pcp);
	a = ak_per_cpu_ptr(pcp, __ak_this_slot(m));
	if (!__ak_array_trylock(m, a))
		return NULL;
	if (a->count)
		obj = a->slots[--a->count];
	__ak_array_unlock(a);
	return obj;
}

__AK_PERCPU_NOINLINE void *__ak_this_cpu_array_pop_slow(
	struct ak_percpu_array *pcp)
{
	return __ak_this_cpu_array_pop_mode(__ak_percpu_mode_op(), pcp);
}

/* The last object stored, or NULL when the array is empty (or busy). */
__ak_inline void *ak_this_cpu_array_pop(struct ak_percpu_array *pcp)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __ak_this_cpu_array_pop_rseq(x, pcp);
	return __AK_PERCPU_OUT(__ak_this_cpu_array_pop, pcp);
}

/*
 * this_cpu_add on element i of a per-CPU array of 64-bit counters (the
 * kernel's this_cpu_add(pcp[i], v), which user space cannot spell: the
 * stride comes from the allocation's start, pcp).  Always inline: the
 * slab cache counts every slow-path event with it (two per remote free),
 * and GCC kept a plain inline copy out of line in each slab file, whose
 * calls tripled what counting costs a remote free that misses in cache.
 */
__ak_inline void ak_this_cpu_add_elem64(uint64_t *pcp, size_t i,
					uint64_t v)
{
	(void)__ak_this_cpu_add_return_elem64(pcp, i, v);
}

/*
 * The array_ptr ops: a per-CPU slot holding a pointer to an array
 * { unsigned long count; void *slots[]; } that only the slot's CPU
 * changes while the slot points to it (sheaf's main).  They exist in the
 * rseq modes only: elsewhere they fail (NULL, 1, 0), and the caller takes
 * the array out with ak_this_cpu_xchg and works on it alone.  The
 * NAME_mode of each is its section in an rseq mode, and the failure
 * otherwise.
 *
 * Pop: the newest object, or NULL (empty, absent, not an rseq mode).
 */
__ak_inline void *__ak_this_cpu_array_ptr_pop_rseq(struct __ak_rseq_ctx x,
						   void *const *pcp)
{
	void *obj;
	int rc;

	while (ak_unlikely((rc = ak_rseq_array_ptr_pop(x.rs, x.idp,
				__AK_PCP(pcp), &obj)) < 0))
		ak_rseq_count_abort();
	return rc ? NULL : obj;
}

__ak_inline void *__ak_this_cpu_array_ptr_pop_mode(enum ak_percpu_mode m,
						   void *const *pcp)
{
	if (!__AK_RSEQ_MODE(m))
		return NULL;
	return __ak_this_cpu_array_ptr_pop_rseq(__ak_rseq_ctx_mode(m), pcp);
}

__AK_PERCPU_NOINLINE void *__ak_this_cpu_array_ptr_pop_slow(void *const *pcp)
{
	return __ak_this_cpu_array_ptr_pop_mode(__ak_percpu_mode_op(), pcp);
}

__ak_inline void *ak_this_cpu_array_ptr_pop(void *const *pcp)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __ak_this_cpu_array_ptr_pop_rseq(x, pcp);
	return __AK_PERCPU_OUT(__ak_this_cpu_array_ptr_pop, pcp);
}

/* Push: 0 when stored, 1 when full, absent or not an rseq mode. */
__ak_inline int __ak_this_cpu_array_ptr_push_rseq(struct __ak_rseq_ctx x,
						  void *const *pcp,
						  unsigned long limit,
						  void *obj)
{
	int rc;

	while (ak_unlikely((rc = ak_rseq_array_ptr_push(x.rs, x.idp,
				__AK_PCP(pcp), limit, obj)) < 0))
		ak_rseq_count_abort();
	return rc;
}

__ak_inline int __ak_this_cpu_array_ptr_push_mode(enum ak_percpu_mode m,
						  void *const *pcp,
						  unsigned long limit,
						  void *obj)
{
	if (!__AK_RSEQ_MODE(m))
		return 1;
	return __ak_this_cpu_array_ptr_push_rseq(__ak_rseq_ctx_mode(m), pcp,
						 limit, obj);
}

__AK_PERCPU_NOINLINE int __ak_this_cpu_array_ptr_push_slow(
	void *const *pcp, unsigned long limit, void *obj)
{
	return __ak_this_cpu_array_ptr_push_mode(__ak_percpu_mode_op(), pcp,
						 limit, obj);
}

__ak_inline int ak_this_cpu_array_ptr_push(void *const *pcp,
					   unsigned long limit, void *obj)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __ak_this_cpu_array_ptr_push_rseq(x, pcp, limit, obj);
	return __AK_PERCPU_OUT(__ak_this_cpu_array_ptr_push, pcp, limit,
			       obj);
}

/*
 * Bulk: up to n objects in one section; how many moved (0: none, or not
 * an rseq mode).  Pop moves the newest min(n, count) to dst in array
 * order; push appends min(n, limit - count) from src.  k is reset on
 * every try: an aborted section may have left it anything.
 */
__ak_inline unsigned long __ak_this_cpu_array_ptr_pop_n_rseq(
	struct __ak_rseq_ctx x, void *const *pcp, void **dst, unsigned long n)
{
	unsigned long k;
	int rc;

	for (;;) {
		k = n;
		rc = ak_rseq_array_ptr_pop_n(x.rs, x.idp, __AK_PCP(pcp),
					      dst, &k);
		if (ak_likely(rc >= 0))
			return rc ? 0 : k;
		ak_rseq_count_abort();
	}
}

__ak_inline unsigned long __ak_this_cpu_array_ptr_pop_n_mode(
	enum ak_percpu_mode m, void *const *pcp, void **dst, unsigned long n)
{
	if (!__AK_RSEQ_MODE(m))
		return 0;
	return __ak_this_cpu_array_ptr_pop_n_rseq(__ak_rseq_ctx_mode(m), pcp,
						  dst, n);
}

__AK_PERCPU_NOINLINE unsigned long __ak_this_cpu_array_ptr_pop_n_slow(
	void *const *pcp, void **dst, unsigned long n)
{
	return __ak_this_cpu_array_ptr_pop_n_mode(__ak_percpu_mode_op(), pcp,
						  dst, n);
}

__ak_inline unsigned long ak_this_cpu_array_ptr_pop_n(void *const *pcp,
						      void **dst,
						      unsigned long n)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __ak_this_cpu_array_ptr_pop_n_rseq(x, pcp, dst, n);
	return __AK_PERCPU_OUT(__ak_this_cpu_array_ptr_pop_n, pcp, dst, n);
}

__ak_inline unsigned long __ak_this_cpu_array_ptr_push_n_rseq(
	struct __ak_rseq_ctx x, void *const *pcp, unsigned long limit,
	void *const *src, unsigned long n)
{
	unsigned long k;
	int rc;

	for (;;) {
		k = n;
		rc = ak_rseq_array_ptr_push_n(x.rs, x.idp, __AK_PCP(pcp),
					      limit, src, &k);
		if (ak_likely(rc >= 0))
			return rc ? 0 : k;
		ak_rseq_count_abort();
	}
}

__ak_inline unsigned long __ak_this_cpu_array_ptr_push_n_mode(
	enum ak_percpu_mode m, void *const *pcp, unsigned long limit,
	void *const *src, unsigned long n)
{
	if (!__AK_RSEQ_MODE(m))
		return 0;
	return __ak_this_cpu_array_ptr_push_n_rseq(__ak_rseq_ctx_mode(m),
						   pcp, limit, src, n);
}

__AK_PERCPU_NOINLINE unsigned long __ak_this_cpu_array_ptr_push_n_slow(
	void *const *pcp, unsigned long limit, void *const *src,
	unsigned long n)
{
	return __ak_this_cpu_array_ptr_push_n_mode(__ak_percpu_mode_op(),
						   pcp, limit, src, n);
}

__ak_inline unsigned long ak_this_cpu_array_ptr_push_n(void *const *pcp,
						       unsigned long limit,
						       void *const *src,
						       unsigned long n)
{
	struct __ak_rseq_ctx x;

	if (__ak_percpu_fast(&x))
		return __ak_this_cpu_array_ptr_push_n_rseq(x, pcp, limit, src,
							   n);
	return __AK_PERCPU_OUT(__ak_this_cpu_array_ptr_push_n, pcp, limit,
			       src, n);
}

/* ---- visiting all copies ---- */

#define __AK_PERCPU_SUM(bits)						\
static inline uint##bits##_t						\
ak_percpu_sum_u##bits(const uint##bits##_t *pcp)			\
{									\
	uint##bits##_t s = 0;						\
	unsigned int cpu;						\
									\
	ak_for_each_cpu(cpu)						\
		s += __atomic_load_n(ak_per_cpu_ptr(pcp, cpu),		\
				     __ATOMIC_RELAXED);			\
	return s;							\
}

__AK_PERCPU_SUM(32)
__AK_PERCPU_SUM(64)

#endif /* ATOMKIT_PERCPU_H */
