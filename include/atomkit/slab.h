/* SPDX-License-Identifier: MIT */
/*
 * A slab cache after the kernel's kmem_cache API, with six fastpath
 * designs chosen per cache, so that one run can compare them all.  The
 * designs, their data structures and the per-CPU modes in which each is
 * correct are described in doc/slab.md.
 *
 *   slub-tid	per-CPU {freelist, tid}, this_cpu_cmpxchg128 (SLUB)
 *   slub-local	per-CPU {freelist, tid}, cmpxchg_double_local on the
 *		pinned slot (the 2007 cmpxchg_local variant)
 *   rseq-list	per-CPU freelist, one rseq critical section per op, no tid
 *   array	per-CPU array of object pointers, refilled and flushed in
 *		batches (SLAB)
 *   sheaf	per-CPU main and spare sheaves swapped whole with a
 *		per-node barn, kept in per-CPU shards (the newer SLUB
 *		sheaves)
 *   locked	one lock per cache (the baseline)
 *
 * Slabs are runs of pages from the page layer below (<atomkit/pages.h>:
 * by default an mmap each), never unmapped while their cache lives
 * (libatomkit-malloc.so gives its empty slabs back to its page heap,
 * which keeps them mapped: doc/slab.md); the caches' own metadata comes
 * from the page layer too.  None of these calls may be made from a signal handler.
 */
#ifndef ATOMKIT_SLAB_H
#define ATOMKIT_SLAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <atomkit/pages.h>
#include <atomkit/percpu.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ak_slab_fastpath {
	AK_SLAB_SLUB_TID,
	AK_SLAB_SLUB_LOCAL,
	AK_SLAB_RSEQ_LIST,
	AK_SLAB_ARRAY,
	AK_SLAB_SHEAF,
	AK_SLAB_LOCKED,
	AK_SLAB_NR_FASTPATHS
};

/* "slub-tid", ...; NULL for no such design. */
const char *ak_slab_fastpath_name(enum ak_slab_fastpath fp);
/* By name; -1 when unknown. */
int ak_slab_fastpath_parse(const char *name);

/* Cache flags (ak_kmem_cache_create). */
#define AK_SLAB_DEBUG		0x1u	/* red zones, poisoning, double-free checks */
#define AK_SLAB_STATS		0x2u	/* count fastpath events too */
#define AK_SLAB_HWCACHE_ALIGN	0x4u	/* objects on cache-line boundaries */

/* Allocation flags. */
typedef unsigned int ak_gfp_t;
#define AK_GFP_KERNEL		0x0u
#define AK_GFP_ZERO		0x1u	/* as __GFP_ZERO: the object is zeroed */

/* Largest object a cache or ak_kmalloc() serves. */
#define AK_KMALLOC_MAX_SIZE	16384u
/* Largest alignment a cache honours. */
#define AK_SLAB_MAX_ALIGN	4096u
/* Slab size unless a cache asks for another (all kmalloc caches). */
#define AK_SLAB_DEFAULT_SIZE	(128u * 1024)

struct ak_kmem_cache;

/*
 * Tuning a benchmark may want; zero fields take the defaults.  slab_size
 * is a power of two from 4 KiB, and at least the page size, to 4 MiB
 * (else EINVAL); a cache given one may hold objects up to 1 MiB.
 * ak_kfree() takes objects only of caches with the default slab size.
 */
struct ak_kmem_cache_args {
	unsigned int slab_size;		/* bytes per slab */
	unsigned int max_objects;	/* carve at most this many per slab */
	unsigned int array_limit;	/* array: per-CPU capacity */
	unsigned int array_batch;	/* array: refill/flush batch */
	unsigned int sheaf_capacity;	/* sheaf: objects per sheaf */
	unsigned int barn_max;		/* sheaf: full (and empty) sheaves per barn shard */
	unsigned int locked_batch;	/* locked: refill batch */
	/*
	 * slub-tid, slub-local, rseq-list: the kernel's cpu_partial, the
	 * free objects a CPU's partial slabs may hold (see
	 * ak_kmem_cache_set_cpu_partial()); 0 the kernel's default for the
	 * object size, AK_SLAB_CPU_PARTIAL_NONE no per-CPU partial slabs.
	 */
	unsigned int cpu_partial;
};

#define AK_SLAB_CPU_PARTIAL_NONE	(~0u)

/*
 * A cache of size-byte objects aligned to align (0: 8; else a power of
 * two up to AK_SLAB_MAX_ALIGN).  NULL with errno EINVAL (size 0 or above
 * AK_KMALLOC_MAX_SIZE, or 1 MiB with args->slab_size, or more than a
 * slab holds; bad alignment, flags or design) or ENOMEM.
 * AK_SLAB_DEBUG=1 in the environment sets AK_SLAB_DEBUG on every cache.
 */
struct ak_kmem_cache *ak_kmem_cache_create(const char *name, size_t size,
					   size_t align, unsigned int flags,
					   enum ak_slab_fastpath fastpath);
struct ak_kmem_cache *
ak_kmem_cache_create_args(const char *name, size_t size, size_t align,
			  unsigned int flags, enum ak_slab_fastpath fastpath,
			  const struct ak_kmem_cache_args *args);

/*
 * ak_kmem_cache_alloc(s, flags): one object, or NULL (errno ENOMEM) when
 * no memory could be mapped.  ak_kmem_cache_free(s, p) frees it (NULL is
 * ignored).  Both are inline below: "the inline fastpaths".
 */

/*
 * n objects into p[0..n): returns n, or 0 when they could not all be had,
 * and then nothing was taken.  free_bulk frees p[0..n) (p is not changed;
 * every entry must be an object: NULL is skipped only in debug mode).
 */
int ak_kmem_cache_alloc_bulk(struct ak_kmem_cache *s, ak_gfp_t flags,
			     size_t n, void **p);
void ak_kmem_cache_free_bulk(struct ak_kmem_cache *s, size_t n, void **p);

/*
 * With no other thread using the cache: return every object the per-CPU
 * structures hold to its slab.  shrink keeps the cache; destroy then
 * releases it, unless objects are still allocated: then it reports how
 * many, keeps the cache (usable, and destroyable once they are freed) and
 * returns -1 with errno EBUSY.
 */
void ak_kmem_cache_shrink(struct ak_kmem_cache *s);
int ak_kmem_cache_destroy(struct ak_kmem_cache *s);

/*
 * With no other thread using the cache: walk every slab, per-CPU
 * structure and store, check that each free object is held in exactly one
 * place and that the slab counters agree.  Returns the number of objects
 * allocated (neither free nor cached), or -1 after reporting an
 * inconsistency.
 */
long ak_kmem_cache_audit(struct ak_kmem_cache *s);

/*
 * The same walk, saying where each object is: every object of every slab
 * is counted in exactly one of these.  0, or -1 after reporting an
 * inconsistency (a slab on two lists, a partial slab on none, a count
 * that disagrees).
 */
struct ak_kmem_cache_places {
	size_t allocated;	/* neither free nor cached */
	size_t cpu;		/* on the per-CPU level (lists, stores) and its slabs */
	size_t cpu_partial;	/* on the slabs of the CPUs' partial lists */
	size_t node;		/* on the slabs of the shared partial lists */
	size_t slabs, cpu_slabs, cpu_partial_slabs, node_slabs;
};

int ak_kmem_cache_audit_places(struct ak_kmem_cache *s,
			       struct ak_kmem_cache_places *out);

/*
 * The kernel's cpu_partial knob (its sysfs file), for slub-tid,
 * slub-local and rseq-list: a free that makes a full slab partial puts it
 * on the freeing CPU's partial list, without the shared list's lock; the
 * alloc slow path and bulk allocation take those slabs before the shared
 * list's.  A CPU's list holds slabs while the free objects they had when
 * put there add up to no more than objects (the kernel's accounting from
 * 3.x to 5.15, "pobjects"); the next put moves the list to the shared
 * lists in one lock hold.  0 turns it off (slabs already on a CPU's list
 * stay there until taken, or until ak_kmem_cache_shrink()).  The
 * default, as the kernel's set_cpu_partial(): 120 objects below 256 bytes
 * of stride, 52 below 1 KiB, 24 below a page, 6 from a page.  Returns 0,
 * or -1 with errno EINVAL for another design (objects > 0) or objects
 * above 1 << 24.
 */
int ak_kmem_cache_set_cpu_partial(struct ak_kmem_cache *s,
				  unsigned int objects);

/* ---- statistics and the mode report ---- */

enum ak_slab_stat {
	AK_SLAB_ALLOC_FAST,	/* alloc calls, slow ones too (AK_SLAB_STATS only) */
	AK_SLAB_FREE_FAST,	/* free calls, slow ones too (AK_SLAB_STATS only) */
	AK_SLAB_ALLOC_SLOW,	/* per-CPU level empty: slow path */
	AK_SLAB_FREE_SLOW,	/* per-CPU level full, busy or not the owner */
	AK_SLAB_FREE_REMOTE,	/* objects pushed onto their slab's freelist */
	AK_SLAB_ALLOC_OWN_SLAB,	/* remote frees taken back from the own slab */
	AK_SLAB_ALLOC_PARTIAL,	/* slabs taken (or objects drawn) from partial lists */
	AK_SLAB_ALLOC_NEW_SLAB,	/* slabs mapped */
	AK_SLAB_DEACTIVATE,	/* own slabs given up (unfrozen) */
	AK_SLAB_ADD_PARTIAL,	/* slabs put on a partial list */
	AK_SLAB_FAST_RETRY,	/* fastpath commits that failed (tid, compare) */
	AK_SLAB_SLAB_RETRY,	/* slab {freelist, counters} cmpxchg128 failures */
	AK_SLAB_REFILL,		/* array/sheaf/locked refills from slabs */
	AK_SLAB_REFILL_OBJS,
	AK_SLAB_FLUSH,		/* batches returned from per-CPU level to slabs */
	AK_SLAB_FLUSH_OBJS,
	AK_SLAB_PCPU_BUSY,	/* per-CPU structure busy (try-lock, sheaf taken) */
	AK_SLAB_SHEAF_SWAP,	/* main and spare swapped */
	AK_SLAB_BARN_GET_FULL,
	AK_SLAB_BARN_PUT_FULL,
	AK_SLAB_BARN_GET_EMPTY,
	AK_SLAB_BARN_PUT_EMPTY,
	AK_SLAB_BARN_STEAL,	/* full sheaves taken from another CPU's barn shard */
	AK_SLAB_SHEAF_NEW,	/* sheaves allocated */
	AK_SLAB_SHEAF_DROP,	/* sheaves flushed and released (barn full) */
	AK_SLAB_BULK_ALLOC,	/* successful alloc_bulk calls (AK_SLAB_STATS only) */
	AK_SLAB_BULK_ALLOC_OBJS,	/* the sum of the next four (AK_SLAB_STATS only) */
	AK_SLAB_BULK_ALLOC_CPU,	/* ... objects from the per-CPU level (AK_SLAB_STATS only) */
	AK_SLAB_BULK_ALLOC_PARTIAL, /* ... from the shared partial lists */
	AK_SLAB_BULK_ALLOC_NEW,	/* ... from new slabs */
	AK_SLAB_BULK_ALLOC_CPU_PARTIAL,	/* ... from the CPU's partial slabs */
	AK_SLAB_BULK_ALLOC_FAIL,
	AK_SLAB_BULK_FREE,	/* free_bulk calls (AK_SLAB_STATS only) */
	AK_SLAB_BULK_FREE_OBJS,	/* the sum of the next two (AK_SLAB_STATS only) */
	AK_SLAB_BULK_FREE_CPU,	/* ... objects to the per-CPU level (AK_SLAB_STATS only) */
	AK_SLAB_BULK_FREE_SLAB,	/* ... to their slabs */
	AK_SLAB_OOM,		/* slab mappings refused */
	AK_SLAB_CPU_PARTIAL_ALLOC,	/* slabs taken from the CPU's partial list */
	AK_SLAB_CPU_PARTIAL_FREE,	/* slabs a free put on the CPU's partial list */
	AK_SLAB_CPU_PARTIAL_NODE,	/* slabs moved from a node's list to the CPU's */
	AK_SLAB_CPU_PARTIAL_DRAIN,	/* CPU partial lists moved to the nodes' */
	AK_SLAB_DEBUG_DOUBLE_FREE,
	AK_SLAB_DEBUG_BAD_FREE,	/* pointer not an object of the cache */
	AK_SLAB_DEBUG_REDZONE,	/* red zone overwritten */
	AK_SLAB_DEBUG_POISON,	/* free object written to */
	AK_SLAB_NR_STATS
};

/* "alloc_fast", ...; NULL for no such counter. */
const char *ak_slab_stat_name(enum ak_slab_stat i);

/* The counters summed over all per-CPU copies (racy while in use). */
void ak_kmem_cache_stats(struct ak_kmem_cache *s,
			 uint64_t out[AK_SLAB_NR_STATS]);

struct ak_kmem_cache_info {
	const char *name;
	enum ak_slab_fastpath fastpath;
	const char *fastpath_name;
	enum ak_percpu_mode mode;	/* the per-CPU mode in use */
	const char *mode_name;
	const char *how;		/* which primitive the fastpath runs in this mode */
	unsigned int flags;
	size_t object_size, align, stride;
	size_t slab_size, objects_per_slab;
	unsigned int nr_nodes;
	unsigned long nr_slabs;		/* slabs mapped now */
	unsigned int cpu_partial;	/* the knob (objects), 0 off */
};

void ak_kmem_cache_info(struct ak_kmem_cache *s,
			struct ak_kmem_cache_info *out);
/* One line: "name: design on mode (how), size/stride, slab geometry". */
int ak_kmem_cache_describe(struct ak_kmem_cache *s, char *buf, size_t len);
/* Info and every counter, one per line. */
void ak_kmem_cache_print_stats(struct ak_kmem_cache *s, FILE *f);

/*
 * Where reports go (debug-mode errors, destroy with live objects): by
 * default "atomkit slab: ..." lines on stderr.  NULL restores that.
 */
void ak_slab_set_report(void (*fn)(const char *msg, void *arg), void *arg);

/* The object size a cache was made with (the kernel's kmem_cache_size). */
unsigned int ak_kmem_cache_size(struct ak_kmem_cache *s);

/*
 * The cache a slab's run belongs to, from the run's base: for a page
 * source that finds runs by address (libatomkit-malloc.so's page heap),
 * once the run's magic word says AK_PAGE_MAGIC_SLAB (<atomkit/pages.h>).
 */
static inline struct ak_kmem_cache *ak_kmem_cache_of_run(const void *run)
{
	return (struct ak_kmem_cache *)((const struct ak_page_run *)run)->owner;
}

/*
 * Times a design's slow path asked the slab layer for objects (a
 * refill), all caches together since the process started.
 */
size_t ak_slab_refills(void);

/*
 * fork() from a threaded process: every lock of the n caches (NULL
 * entries skipped) and of the slab registry, taken before (take) and
 * released after in parent and child, so that the child finds none held
 * by a thread it does not have.  Below them: ak_percpu_fork(); the page
 * source's own locks are the source's.
 */
void ak_slab_fork(struct ak_kmem_cache *const *caches, unsigned int n,
		  bool take);

/* ---- kmalloc ---- */

/*
 * size bytes from the kmalloc caches (8, 16, 32, 64, 96, 128, 192, 256,
 * 512, 1k, 2k, 4k, 8k, 16k), power-of-two sizes naturally aligned (up to
 * 4096), the others to 32 or 64.  NULL with errno EINVAL for size 0 or
 * above AK_KMALLOC_MAX_SIZE, ENOMEM without memory.
 */
void *ak_kmalloc(size_t size, ak_gfp_t flags);
static inline void *ak_kzalloc(size_t size, ak_gfp_t flags)
{
	return ak_kmalloc(size, flags | AK_GFP_ZERO);
}
/* Frees an object of ak_kmalloc() (or of a default-slab-size cache). */
void ak_kfree(const void *p);
/* Usable size of an object of ak_kmalloc(). */
size_t ak_ksize(const void *p);
/* The kmalloc cache serving size (NULL if none), for stats. */
struct ak_kmem_cache *ak_kmalloc_cache(size_t size);

/*
 * The design and flags of the kmalloc caches, before the first
 * ak_kmalloc(): 0, or -1 with errno EBUSY (already created) or EINVAL.
 * AK_KMALLOC_FASTPATH=<name> in the environment chooses it too.
 */
int ak_kmalloc_set_fastpath(enum ak_slab_fastpath fp, unsigned int flags);

/* ---- the inline fastpaths (doc/slab.md, "The inline fastpaths") ---- */

/*
 * What the inline calls read, at the head of every cache.  The library
 * sets kind when the cache is made: the design whose fastpath the calls
 * run here, one rseq section on this CPU's copy of cpu, or 0 (not an rseq
 * mode, debug or statistics, an ASan build, a design without one) for a
 * call to the library.  Everything else about the cache stays private.
 */
enum __ak_slab_inline {
	__AK_SLAB_CALL,			/* every call goes to the library */
	__AK_SLAB_INLINE_ARRAY,		/* <atomkit/slab/array.h> */
	__AK_SLAB_INLINE_SHEAF,		/* <atomkit/slab/sheaf.h> */
	__AK_SLAB_INLINE_LIST,		/* <atomkit/slab/rseq-list.h> */
	__AK_SLAB_NR_KINDS
};

struct ak_kmem_cache_fast {
	void *cpu;			/* the design's per-CPU structure */
	size_t cpu_stride;		/* bytes between its copies */
	uintptr_t slab_mask;		/* ~(slab size - 1): an object's slab */
	unsigned long limit;		/* array, sheaf: objects per copy */
	/*
	 * The id in struct ak_rseq_abi; for kind 0, AK_RSEQ_OP_NONE, so
	 * that the sum with the thread's area says in one sign test both
	 * "no inline fastpath" and "not registered" (as the per-CPU ops'
	 * one test, <atomkit/percpu.h>).
	 */
	uintptr_t id_off;
	unsigned int kind;		/* enum __ak_slab_inline */
	/*
	 * id_off once more per inline kind (kind_off[kind - 1]): the
	 * cache's own kind's word is id_off, the others AK_RSEQ_OP_NONE.
	 * A caller built for one design (AK_SLAB_DESIGN) reads only its
	 * kind's word: one sign test then says "registered, and a cache of
	 * this design", with no kind to read or compare.
	 */
	uintptr_t kind_off[__AK_SLAB_NR_KINDS - 1];
};

static inline const struct ak_kmem_cache_fast *
__ak_kmem_cache_fast(const struct ak_kmem_cache *s)
{
	return (const struct ak_kmem_cache_fast *)(const void *)s;
}

/*
 * The library's alloc and free without the inline part: the cache's
 * design through its general path (or the checked one, with debug or
 * statistics).  What the inline calls fall back to.
 */
void *__ak_kmem_cache_alloc(struct ak_kmem_cache *s, ak_gfp_t flags);
void __ak_kmem_cache_free(struct ak_kmem_cache *s, void *p);

/*
 * A TU may define AK_SLAB_CALL_HOOK(s) before including this header: it
 * runs each time an inline call goes to the library (tests count them).
 */
#ifndef AK_SLAB_CALL_HOOK
# define AK_SLAB_CALL_HOOK(s)	((void)(s))
#endif

#ifdef __cplusplus
}
#endif

#if AK_HAVE_ARCH_RSEQ
/*
 * The thread's rseq area and the cache's id field in it, as the per-CPU
 * ops take them (<atomkit/percpu.h>, __ak_percpu_fast): loads of words
 * that do not change while the cache and the thread live, which the
 * compiler may merge past the sections' memory clobbers.  False for a
 * cache without an inline fastpath, or before the thread's area is
 * registered.
 */
__ak_inline bool __ak_slab_rseq_ctx(const uintptr_t *off,
				    struct ak_rseq_abi **rs,
				    const uint32_t **idp)
{
	uintptr_t a = __ak_rseq_op_area_stable();
	uintptr_t id = a + (uintptr_t)__ak_load_stable64(off);

	*rs = (struct ak_rseq_abi *)a;
	*idp = (const uint32_t *)id;
	return ak_likely((intptr_t)id >= 0);
}

/* The cache's objects per copy (array, sheaf): fixed when it is made. */
__ak_inline unsigned long __ak_slab_limit(const struct ak_kmem_cache_fast *f)
{
	return (unsigned long)__ak_load_stable64(&f->limit);
}

/* And the mask that gives an object's slab (rseq-list's owner test). */
__ak_inline uintptr_t __ak_slab_mask(const struct ak_kmem_cache_fast *f)
{
	return (uintptr_t)__ak_load_stable64(&f->slab_mask);
}
#endif

#include <atomkit/slab/array.h>
#include <atomkit/slab/sheaf.h>
#include <atomkit/slab/rseq-list.h>

/*
 * One sign test for a cache without an inline fastpath (kind 0) and a
 * thread not registered (both a call), then one test of the cache's kind
 * per design, in a fixed order: a cache's kind never changes, so each is
 * taken the same way on every call.  A design's part returns what its
 * section did: 0 done, 1 the library's way (empty, full, not this slot's
 * slab), -1 aborted by the kernel.  Without sections (the generic build,
 * a compiler without asm goto outputs) every call goes to the library.
 *
 * fixed, a constant: 0 for that, or the one kind a caller built for one
 * design runs (AK_SLAB_DESIGN, below), as a port that builds one
 * allocator in has it: the sign test is then on that kind's word of
 * kind_off, so that a cache of any other design fails it too and calls
 * the library, and no kind is read.
 */
__ak_inline void *__ak_kmem_cache_alloc_kind(struct ak_kmem_cache *s,
					     ak_gfp_t flags,
					     unsigned int fixed)
{
#if AK_HAVE_ARCH_RSEQ
	const struct ak_kmem_cache_fast *f = __ak_kmem_cache_fast(s);
	unsigned int kind = fixed ? fixed : __ak_load_stable32(&f->kind);
	struct ak_rseq_abi *rs;
	const uint32_t *idp;
	bool ok = __ak_slab_rseq_ctx(fixed ? &f->kind_off[fixed - 1] :
				     &f->id_off, &rs, &idp);
	void *p;
	int rc;

	/* the loads before any branch: a caller's loop may keep them */
	if (ak_unlikely(flags) || !ok)
		goto call;
	if (ak_likely(kind == __AK_SLAB_INLINE_ARRAY))
		rc = __ak_slab_array_alloc(f, rs, idp, &p);
	else if (kind == __AK_SLAB_INLINE_SHEAF)
		rc = __ak_slab_sheaf_alloc(f, rs, idp, &p);
	else
		rc = __ak_slab_list_alloc(f, rs, idp, &p);
	if (ak_likely(!rc))
		return p;
	if (rc < 0)
		ak_rseq_count_abort();
call:
#endif
	(void)fixed;
	AK_SLAB_CALL_HOOK(s);
	return __ak_kmem_cache_alloc(s, flags);
}

__ak_inline void __ak_kmem_cache_free_kind(struct ak_kmem_cache *s, void *p,
					   unsigned int fixed)
{
#if AK_HAVE_ARCH_RSEQ
	const struct ak_kmem_cache_fast *f = __ak_kmem_cache_fast(s);
	unsigned int kind = fixed ? fixed : __ak_load_stable32(&f->kind);
	unsigned long limit = __ak_slab_limit(f);
	struct ak_rseq_abi *rs;
	const uint32_t *idp;
	bool ok = __ak_slab_rseq_ctx(fixed ? &f->kind_off[fixed - 1] :
				     &f->id_off, &rs, &idp);
	int rc;

	/* the loads before any branch: a caller's loop may keep them */
	if (ak_unlikely(!p))
		return;
	if (!ok)
		goto call;
	if (ak_likely(kind == __AK_SLAB_INLINE_ARRAY))
		rc = __ak_slab_array_free(f, rs, idp, limit, p);
	else if (kind == __AK_SLAB_INLINE_SHEAF)
		rc = __ak_slab_sheaf_free(f, rs, idp, limit, p);
	else
		rc = __ak_slab_list_free(f, rs, idp, p);
	if (ak_likely(!rc))
		return;
	if (rc < 0)
		ak_rseq_count_abort();
call:
#endif
	(void)fixed;
	AK_SLAB_CALL_HOOK(s);
	__ak_kmem_cache_free(s, p);
}

/* The calls as the library runs them: the kind read from the cache. */
__ak_inline void *__ak_kmem_cache_alloc_inline(struct ak_kmem_cache *s,
					       ak_gfp_t flags)
{
	return __ak_kmem_cache_alloc_kind(s, flags, 0);
}

__ak_inline void __ak_kmem_cache_free_inline(struct ak_kmem_cache *s,
					     void *p)
{
	__ak_kmem_cache_free_kind(s, p, 0);
}

/*
 * AK_SLAB_DESIGN=array (or sheaf, rseq_list) when compiling: the calls
 * of that file run that design's inline fastpath only, with no test of
 * the cache's design beyond the sign test every call makes; caches of
 * the other designs still work, each call going to the library.  As
 * AK_PERCPU_MODE does for the per-CPU ops (doc/slab.md, "A design fixed
 * at build time").
 */
#ifdef AK_SLAB_DESIGN
# define __AK_SLAB_DESIGN_array		1
# define __AK_SLAB_DESIGN_sheaf		2
# define __AK_SLAB_DESIGN_rseq_list	3
# define __AK_SLAB_CAT2(a, b)		a##b
# define __AK_SLAB_CAT(a, b)		__AK_SLAB_CAT2(a, b)
# define AK_SLAB_DESIGN_FIXED \
	__AK_SLAB_CAT(__AK_SLAB_DESIGN_, AK_SLAB_DESIGN)
# if AK_SLAB_DESIGN_FIXED < 1 || AK_SLAB_DESIGN_FIXED > 3
#  error "AK_SLAB_DESIGN must be one of array, sheaf, rseq_list"
# endif
#endif

/*
 * AK_SLAB_NO_INLINE defined before including: the library's functions,
 * which run the same inline part (for callers that take their address,
 * programs built before it, and this library's own definition).
 */
#ifdef AK_SLAB_NO_INLINE
# ifdef __cplusplus
extern "C" {
# endif
void *ak_kmem_cache_alloc(struct ak_kmem_cache *s, ak_gfp_t flags);
void ak_kmem_cache_free(struct ak_kmem_cache *s, void *p);
# ifdef __cplusplus
}
# endif
#elif defined(AK_SLAB_DESIGN_FIXED)
__ak_inline void *ak_kmem_cache_alloc(struct ak_kmem_cache *s,
				      ak_gfp_t flags)
{
	return __ak_kmem_cache_alloc_kind(s, flags, AK_SLAB_DESIGN_FIXED);
}

__ak_inline void ak_kmem_cache_free(struct ak_kmem_cache *s, void *p)
{
	__ak_kmem_cache_free_kind(s, p, AK_SLAB_DESIGN_FIXED);
}
#else
__ak_inline void *ak_kmem_cache_alloc(struct ak_kmem_cache *s,
				      ak_gfp_t flags)
{
	return __ak_kmem_cache_alloc_inline(s, flags);
}

__ak_inline void ak_kmem_cache_free(struct ak_kmem_cache *s, void *p)
{
	__ak_kmem_cache_free_inline(s, p);
}
#endif

#endif /* ATOMKIT_SLAB_H */
