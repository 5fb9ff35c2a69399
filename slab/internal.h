/* SPDX-License-Identifier: MIT */
/*
 * The slab cache's insides, shared by the files of slab/: the slab layer
 * (slab.c), what every design shares (api.c) and the designs, one file
 * each (struct slab_design).  doc/slab.md draws every structure and says
 * which primitive touches which word.
 *
 * Free objects are linked through a free pointer word inside the object
 * (offset 0) or, in debug mode, after its right red zone.  Every list of
 * free objects (a slab's freelist, the per-CPU freelists, chains) links
 * the addresses of those words ("fp space": fp = obj + s->fp_off), so that
 * the per-CPU list ops, which link through a node's first word, serve
 * both layouts.
 */
#ifndef AK_SLAB_INTERNAL_H
#define AK_SLAB_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <atomkit/pages.h>
#include <atomkit/slab.h>

/* ---- ASan: tell it which bytes of our slabs are objects in use ---- */

#if defined(__SANITIZE_ADDRESS__)
# define AK_SLAB_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define AK_SLAB_ASAN 1
# endif
#endif
#ifdef AK_SLAB_ASAN
# include <sanitizer/asan_interface.h>
# define slab_asan_poison(p, n)	 ASAN_POISON_MEMORY_REGION(p, n)
# define slab_asan_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
# define slab_asan_poison(p, n)	 ((void)(p), (void)(n))
# define slab_asan_unpoison(p, n) ((void)(p), (void)(n))
#endif

/* a slab's header is the page layer's run header (<atomkit/pages.h>) */
#define SLAB_HDR_SIZE	AK_PAGE_RUN_HDR
#define SLAB_MAGIC	AK_PAGE_MAGIC_SLAB
#define CACHELINE	64

#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define SLAB_ALIGN(x, a) (((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))

/*
 * A slab: the header at the start of its run of pages, then objects.
 * fc is the pair {freelist, counters} that remote frees update lock-free
 * with one cmpxchg128; counters are inuse (objects not on freelist) in
 * the low half and, in the high half, the id + 1 of the per-CPU slot that
 * owns the slab ("frozen", as SLUB says), or 0.
 */
union slab_fc {
	ak_u128 v;
	struct {
		void *freelist;		/* word 0: lower address */
		uint64_t counters;	/* word 1 */
	};
};

struct ak_slab {
	union slab_fc fc;
	/* written only as slabs are made and released, under slabs_lock */
	struct ak_slab *all_prev;
	/*
	 * The next slab on the CPU partial list it is on (slub.c), written
	 * by whoever puts it there, before the per-CPU op that does; read,
	 * perhaps stale, by whoever takes it off.  SMP atomics.
	 */
	struct ak_slab *cpu_next;
	/* free objects of it and the slabs after it, when it was put there */
	unsigned int cpu_pobjects;
	char pad0[CACHELINE - sizeof(union slab_fc) - 2 * sizeof(void *) -
		  sizeof(unsigned int)];
	/* read-mostly from here */
	struct ak_kmem_cache *cache;
	unsigned long magic;
	char *first;			/* first object's stride */
	unsigned int objects;
	unsigned int node;
	struct ak_slab *next, *prev;	/* partial list, under its lock */
	struct ak_slab *all_next;	/* every slab of the cache */
	unsigned int on_partial;
	/*
	 * The partial list the slab goes on, fixed when it is made: 0 for
	 * its node's (slub-tid, slub-local, rseq-list), else the slot + 1
	 * whose list it is (array, sheaf, locked: slab_list_of()).
	 */
	unsigned int list_id;
} __attribute__((aligned(CACHELINE)));

AK_STATIC_ASSERT(sizeof(struct ak_slab) <= SLAB_HDR_SIZE, "slab header");
/* the overlay on the page layer's run header, as struct slab on struct page */
AK_STATIC_ASSERT(offsetof(struct ak_slab, cache) ==
		 offsetof(struct ak_page_run, owner) &&
		 offsetof(struct ak_slab, magic) ==
		 offsetof(struct ak_page_run, magic),
		 "a slab's cache and magic where the page layer reads them");

#define CNT_INUSE(c)		((uint32_t)(c))
#define CNT_OWNER(c)		((uint32_t)((uint64_t)(c) >> 32))
#define CNT_MAKE(inuse, owner)	(((uint64_t)(owner) << 32) | (uint32_t)(inuse))

static inline union slab_fc slab_fc_read(struct ak_slab *sl)
{
	union slab_fc f;

	/* a torn snapshot only fails the cmpxchg128 that follows */
	f.freelist = __atomic_load_n(&sl->fc.freelist, __ATOMIC_RELAXED);
	f.counters = __atomic_load_n(&sl->fc.counters, __ATOMIC_RELAXED);
	return f;
}

/*
 * The stress build (tests/test_slab_stress) widens every window between
 * a snapshot and the op that commits it: a spin, now and then a
 * sched_yield() so that another thread of the CPU runs inside it.
 */
#ifdef AK_SLAB_STRESS
void slab_stress_window(void);
# define SLAB_WINDOW()	slab_stress_window()
#else
# define SLAB_WINDOW()	do { } while (0)
#endif

static inline bool slab_fc_cmpxchg(struct ak_slab *sl, union slab_fc old,
				   union slab_fc new_)
{
	SLAB_WINDOW();
	return ak_try_cmpxchg128(&sl->fc.v, &old.v, new_.v);
}

/*
 * The partial-list and barn locks are held for a few hundred cycles at
 * most (a batch of pointers, a list splice), so they spin as the
 * kernel's list_lock does: a sleeping mutex turns every contended refill
 * into two futex calls.  After a while spinning the waiter yields, in
 * case the holder was preempted on this CPU (more threads than CPUs).
 */
typedef struct {
	unsigned int v;
} slab_lock_t;

#define SLAB_LOCK_SPINS	256

void slab_lock_slow(slab_lock_t *l);

static inline void slab_lock(slab_lock_t *l)
{
	if (ak_unlikely(__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE)))
		slab_lock_slow(l);
}

static inline void slab_unlock(slab_lock_t *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

/* ---- partial lists (per node, per slot) ---- */

/* A partial list: slabs with free objects that no slot owns. */
struct slab_list {
	slab_lock_t lock;
	struct ak_slab *partial;
	unsigned long nr_partial;
	unsigned long nr_slabs;		/* made for it (home lists), atomic */
} __attribute__((aligned(CACHELINE)));

struct slab_node {
	struct slab_list list;		/* the partial list */
};

/* ---- the designs ---- */

struct ak_kmem_cache;
struct slab_design;

struct fl_cpu;
struct barn_shard;

/*
 * Each design's own state in the cache, touched only by its file
 * (slub.c, array.c, sheaf.c, locked.c).
 */
struct fl_partial;

struct slub_state {
	unsigned long tid_step;		/* power of two >= slots */
	/* each slot's partial slabs (per-CPU memory), slub.c */
	struct fl_partial *partial;
	/* the slow path's one per-CPU op: fl_commit() for the design */
	bool (*commit)(struct ak_kmem_cache *s, struct fl_cpu *c, void *head,
		       unsigned long tid, void *nhead);
};

struct array_state {
	unsigned int limit, batch;
};

struct sheaf_state {
	unsigned int cap;		/* objects per sheaf */
	unsigned int barn_max;		/* sheaves per shard and list */
	struct barn_shard *barn;	/* one shard per slot: per-CPU memory */
};

/* one lock, one freelist (fp space) */
struct locked_state {
	pthread_mutex_t lock;
	void *head;
	unsigned long count;
	unsigned int batch;
};

/* The public alloc and free, in object space. */
struct slab_entry {
	void *(*alloc)(struct ak_kmem_cache *s, ak_gfp_t flags);
	void (*free)(struct ak_kmem_cache *s, void *p);
};

struct ak_kmem_cache {
	/*
	 * What the inline fastpaths of <atomkit/slab.h> read: the design's
	 * per-CPU structure, its stride, the slab mask, the per-CPU level's
	 * capacity (set by the design's init), and the kind and id field
	 * (slab_entry_init()).
	 */
	struct ak_kmem_cache_fast fast;
	/*
	 * The library's alloc and free past the inline part (api.c): the
	 * checked path for a cache with debug or statistics, else its
	 * design's entry points.
	 */
	void *(*alloc)(struct ak_kmem_cache *s, ak_gfp_t flags);
	void (*free)(struct ak_kmem_cache *s, void *p);
	/* what the fastpaths read */
	const struct slab_design *ops;
	unsigned int fp_off;		/* free pointer from the object */
	unsigned int object_size;
	enum ak_percpu_mode mode;
	unsigned int flags;

	union {
		struct slub_state slub;
		struct array_state array;
		struct sheaf_state sheaf;
		struct locked_state locked;
	} __attribute__((aligned(CACHELINE)));

	enum ak_slab_fastpath fastpath;
	/* geometry */
	unsigned int align, stride, obj_off, first_off;
	unsigned int slab_size, objects;
	/* empty slabs a partial list keeps before it gives one back */
	unsigned int min_partial;
	/* the kernel's cpu_partial (objects): 0 without (design, or off) */
	unsigned int cpu_partial;

	uint64_t *stats;		/* per-CPU u64[AK_SLAB_NR_STATS] */
	unsigned int nr_nodes;
	struct slab_node *nodes;
	/* a partial list per slot where the design asks for it (else NULL) */
	struct slab_list *home_lists;
	unsigned int nr_home;

	pthread_mutex_t slabs_lock;
	struct ak_slab *all_slabs;
	unsigned long nr_slabs;

	char name[64];
};

AK_STATIC_ASSERT(offsetof(struct ak_kmem_cache, fast) == 0,
		 "the inline fastpaths read the cache's head");

/* Visit every free object a design's per-CPU level or store holds. */
typedef void (*slab_visit_fn)(struct ak_kmem_cache *s, void *fp, void *arg);
/* Visit every slab on a slot's partial list. */
typedef void (*slab_visit_slab_fn)(struct ak_kmem_cache *s,
				   struct ak_slab *sl, void *arg);

/* Where a bulk allocation's objects came from, by level. */
struct slab_bulk_from {
	size_t cpu;		/* the per-CPU level, and the slot's own slab */
	size_t cpu_partial;	/* the slot's partial slabs */
	size_t partial;		/* the shared partial lists */
	size_t fresh;		/* new slabs */
};

/*
 * A design: one file, one of these (slab.c indexes them by enum
 * ak_slab_fastpath).  Pointers are in fp space unless said otherwise.
 */
struct slab_design {
	const char *name;
	/* without hooks, in object space: what s->alloc and s->free get */
	struct slab_entry entry;
	/*
	 * Its inline fastpath in <atomkit/slab/<design>.h>, run in the rseq
	 * modes on a cache without hooks; __AK_SLAB_CALL where it has none
	 */
	enum __ak_slab_inline inline_kind;
	/* the fastpath, for the checked path */
	void *(*alloc)(struct ak_kmem_cache *s);
	void (*free)(struct ak_kmem_cache *s, void *fp);
	/* bulk: up to n from the per-CPU level (or store) */
	size_t (*bulk_alloc_cpu)(struct ak_kmem_cache *s, size_t n,
				 void **fps);
	/*
	 * bulk, past the per-CPU level: up to n from the slabs, adding to
	 * the counts of where they came from (*cpu: the slot's own slab)
	 */
	size_t (*bulk_refill)(struct ak_kmem_cache *s, size_t n, void **fps,
			      struct slab_bulk_from *from);
	void (*bulk_free)(struct ak_kmem_cache *s, size_t n, void **fps);
	/* with the cache quiet: everything cached back to the slabs */
	void (*drain)(struct ak_kmem_cache *s);
	void (*visit)(struct ak_kmem_cache *s, slab_visit_fn fn, void *arg);
	/*
	 * Per-CPU partial slabs (the freelist designs; else NULL): put sl,
	 * which a free just made partial, on this slot's list; and, with
	 * the cache quiet, visit the slabs of every slot's list, returning
	 * false if a list's counts disagree with its slabs.
	 */
	void (*put_partial)(struct ak_kmem_cache *s, struct ak_slab *sl);
	bool (*visit_partial)(struct ak_kmem_cache *s, slab_visit_slab_fn fn,
			      void *arg);
	/*
	 * After the slab layer's parts: tunables from args, s->fast.cpu and the
	 * design's state; 0, or -1 without memory, having undone its part.
	 */
	int (*init)(struct ak_kmem_cache *s,
		    const struct ak_kmem_cache_args *args);
	void (*fini)(struct ak_kmem_cache *s);
	/*
	 * which primitive the fastpath runs on, for ak_kmem_cache_info();
	 * inlined: the cache runs the design's inline fastpath
	 */
	const char *(*how)(struct ak_kmem_cache *s, bool inlined);
	/* its slabs go on a partial list per slot, not per node */
	bool slot_lists;
	/* take (or release) the design's own locks across fork(); or NULL */
	void (*fork)(struct ak_kmem_cache *s, bool take);
};

/*
 * Hidden: test_slab_stress links slab/ into itself beside libatomkit, and
 * the library's copies of these must not be the same globals as its own.
 */
extern __attribute__((visibility("hidden"))) const struct slab_design
	slab_slub_tid, slab_slub_local, slab_rseq_list, slab_array,
	slab_sheaf, slab_locked;

/* ---- helpers ---- */

static inline void *obj_to_fp(const struct ak_kmem_cache *s, void *obj)
{
	return (char *)obj + s->fp_off;
}

static inline void *fp_to_obj(const struct ak_kmem_cache *s, void *fp)
{
	return (char *)fp - s->fp_off;
}

/* Link words may be read while another thread writes them (stale pops). */
static inline void *fp_next(void *fp)
{
	return __atomic_load_n((void **)fp, __ATOMIC_RELAXED);
}

static inline void fp_set(void *fp, void *next)
{
	__atomic_store_n((void **)fp, next, __ATOMIC_RELAXED);
}

static inline struct slab_list *slab_list_of(struct ak_kmem_cache *s,
					     const struct ak_slab *sl)
{
	return sl->list_id ? &s->home_lists[sl->list_id - 1] :
			     &s->nodes[sl->node].list;
}

static inline struct ak_slab *fp_slab(const struct ak_kmem_cache *s, void *p)
{
	return (struct ak_slab *)((uintptr_t)p & s->fast.slab_mask);
}

/*
 * A counter += n on this slot's copy, as cheaply as the mode allows: the
 * kernel's stat() is a this_cpu_inc.  Slow paths count every time, so
 * it must not cost a locked add where the mode does not need one.
 */
__ak_inline void slab_stat(struct ak_kmem_cache *s, enum ak_slab_stat i,
			     uint64_t n)
{
	if (n)
		ak_this_cpu_add_elem64(s->stats, i, n);
}

/*
 * A fastpath event (every call, the bulk calls' per-CPU part): counted
 * only in a cache made with AK_SLAB_STATS, as the kernel counts none
 * without CONFIG_SLUB_STATS.  Slow-path events always count.
 */
__ak_inline void slab_stat_fast(struct ak_kmem_cache *s, enum ak_slab_stat i,
				uint64_t n)
{
	if (s->flags & AK_SLAB_STATS)
		slab_stat(s, i, n);
}

/* ASan view of an object handed out or taken back. */
static inline void slab_asan_alloc(const struct ak_kmem_cache *s, void *obj)
{
	(void)s;
	(void)obj;
#ifdef AK_SLAB_ASAN
	/* the free pointer word (offset 0 unless debug) stays readable */
	slab_asan_unpoison(obj, s->object_size > 8 || s->fp_off ?
			   s->object_size : 8);
#endif
}

static inline void slab_asan_free(const struct ak_kmem_cache *s, void *obj)
{
	(void)s;
	(void)obj;
#ifdef AK_SLAB_ASAN
	if (s->fp_off)
		slab_asan_poison(obj, s->fp_off);
	else if (s->stride > 8)
		slab_asan_poison((char *)obj + 8, s->stride - 8);
#endif
}

/* A chain of free objects in fp space, NULL-terminated. */
struct chain {
	void *head, *tail;
	unsigned long n;
};

/* ---- slab layer (slab.c) ---- */

unsigned int slab_this_node(struct ak_kmem_cache *s);
/* The node of CPU cpu (0 when unknown or beyond the cache's nodes). */
unsigned int slab_node_of_cpu(struct ak_kmem_cache *s, unsigned int cpu);
void slab_report(struct ak_kmem_cache *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Objects of chain c (all of one slab) back onto their slab, lock-free. */
void slab_free_chain(struct ak_kmem_cache *s, struct ak_slab *sl, void *head,
		     void *tail, unsigned long n);
/* Any objects (fp space) back to their slabs, grouped by slab. */
void slab_free_fps(struct ak_kmem_cache *s, void **fps, size_t n);
void slab_group_chains(struct ak_kmem_cache *s, void **fps, size_t n,
		       void (*fn)(struct ak_kmem_cache *s, struct ak_slab *sl,
				  struct chain *c, void *arg),
		       void *arg);
/* A chain of objects of any slabs back to their slabs. */
void slab_free_chain_any(struct ak_kmem_cache *s, void *head);

/*
 * Freeze a slab for per-CPU owner id + 1: from the node's partial list or
 * a new slab.  Returns its free objects as c (c->n >= 1), NULL when no
 * memory.  The slab's counters then say inuse = objects, owner.  With
 * more (cpu_partial), as the kernel's get_partial_node(): in the same
 * lock hold, further slabs off the node's list until their free objects
 * and the frozen one's exceed more / 2, unfrozen and linked through
 * cpu_next into *extra, for the slot's partial list.
 */
struct ak_slab *slab_get_frozen(struct ak_kmem_cache *s, unsigned long owner,
				struct chain *c, bool *fresh, unsigned int more,
				struct ak_slab **extra);
/*
 * Freeze for owner a slab taken off a slot's partial list (unfrozen, on
 * no list, with free objects); its free objects as c.  false if it had
 * none (it then stays on no list, full, until a free).
 */
bool slab_freeze(struct ak_kmem_cache *s, struct ak_slab *sl,
		 unsigned long owner, struct chain *c);
/*
 * A slot's partial slabs, linked through cpu_next, onto their nodes'
 * lists: one lock hold per run of one node, as the kernel's
 * __put_partials(); empty slabs beyond min_partial go back to the pages.
 */
void slab_unfreeze_partials(struct ak_kmem_cache *s, struct ak_slab *list);
/* The kernel's default cpu_partial for the cache's stride. */
unsigned int slab_default_cpu_partial(struct ak_kmem_cache *s);
/* Take the remote frees of a slab owned by owner; false when none/not. */
bool slab_take_frozen(struct ak_kmem_cache *s, struct ak_slab *sl,
		      unsigned long owner, struct chain *c);
/* Give up ownership: the slab goes on its partial list if it has frees. */
void slab_unfreeze(struct ak_kmem_cache *s, struct ak_slab *sl,
		   unsigned long owner);

/* Where slab_take_objects() may look, in this order. */
#define SLAB_FROM_OWN		0x1u	/* this slot's (or node's) partial list */
#define SLAB_FROM_OTHERS	0x2u	/* the other slots' partial lists */
#define SLAB_FROM_NEW		0x4u	/* new slabs */
#define SLAB_FROM_ANY		0x7u

/*
 * Up to n objects (fp space) into fps[]: from the partial lists that from
 * names (one lock hold each), then, with SLAB_FROM_NEW, from new slabs.
 * Returns how many; *from_new says how many of those came from new slabs.
 */
size_t slab_take_objects(struct ak_kmem_cache *s, size_t n, void **fps,
			 unsigned int from, size_t *from_new);
/* Has this slot (home-list caches) made a slab of its own yet? */
bool slab_owns_slabs(struct ak_kmem_cache *s);

/* ---- what the designs share: here and in api.c ---- */

/* The end of a public alloc: errno, ASan and __GFP_ZERO. */
__ak_inline void *slab_alloc_done(struct ak_kmem_cache *s, void *p,
				  ak_gfp_t flags)
{
	if (ak_unlikely(!p)) {
		errno = ENOMEM;
		return NULL;
	}
	slab_asan_alloc(s, p);
	if (ak_unlikely(flags & AK_GFP_ZERO))
		memset(p, 0, s->object_size);
	return p;
}

/*
 * A design's entry points without hooks: its fastpath in fp space
 * (design_alloc(s), design_free(s, fp), inline in its file) behind the
 * public call's checks.  Where the inline fastpath of <atomkit/slab.h>
 * ran first and failed (empty, full, aborted), they do it all again.
 */
#define SLAB_ENTRY_POINTS(design)					\
static void *								\
design##_entry_alloc(struct ak_kmem_cache *s, ak_gfp_t flags)		\
{									\
	return slab_alloc_done(s, design##_alloc(s), flags);		\
}									\
static void								\
design##_entry_free(struct ak_kmem_cache *s, void *p)			\
{									\
	if (ak_unlikely(!p))						\
		return;							\
	slab_asan_free(s, p);						\
	design##_free(s, p);						\
}

/*
 * Choose s->alloc and s->free for the design, mode and flags, and
 * whether the inline fastpath runs (s->fast.kind).
 */
void slab_entry_init(struct ak_kmem_cache *s);

/* bulk_refill for the designs that draw from unfrozen slabs */
size_t slab_bulk_refill(struct ak_kmem_cache *s, size_t n, void **fps,
			struct slab_bulk_from *from);

/* ---- debug mode (debug.c) ---- */

void slab_debug_init_object(struct ak_kmem_cache *s, void *obj);
/* After an object was taken from the design: check and mark in use. */
void slab_debug_alloc(struct ak_kmem_cache *s, void *obj);
/* Before an object is given to the design: false if it must not be. */
bool slab_debug_free(struct ak_kmem_cache *s, void *obj);

/* The slab of p if p lies in a slab of s (any cache if s is NULL). */
struct ak_slab *slab_registry_find(struct ak_kmem_cache *s, const void *p);
void slab_registry_add(struct ak_slab *sl, uintptr_t size);
void slab_registry_del(struct ak_slab *sl);

/*
 * Times a design's slow path asked the slab layer for objects
 * (ak_slab_refills()).  Slabs come from the page layer below
 * (<atomkit/pages.h>); with a source that reuses pages (AK_PAGE_REUSE), a
 * slab that empties while no slot owns it goes back to it once its
 * partial list holds min_partial others.
 */
__attribute__((visibility("hidden"))) size_t slab_refill_count(void);

/* Largest object of a cache with a slab size of its own (args). */
#define SLAB_MAX_OBJECT		(1u << 20)
#define SLAB_MAX_SLAB_SIZE	(4u << 20)

/* ---- kmalloc's size classes (kmalloc.c, and malloc/'s fastpath) ---- */

#define KMALLOC_NR_CLASSES	14

/* The class of size (1..AK_KMALLOC_MAX_SIZE), as the kernel's kmalloc_index. */
static inline unsigned int kmalloc_index(size_t size)
{
	/* sizes 1..192 by (size - 1) / 8, as the kernel's size_index */
	static const unsigned char size_index[24] = {
		0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
		5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6,
	};

	if (size <= 192)
		return size_index[(size - 1) >> 3];
	/* 193..256 -> 7, ..., 8193..16384 -> 13 */
	return (unsigned int)(64 - __builtin_clzl((unsigned long)size - 1)) - 1;
}

/*
 * fork() from a threaded process (the malloc interposer's atfork hooks):
 * every lock of the kmalloc caches, the per-CPU layer and the slab
 * registry taken before, released after in parent and child, so that the
 * child finds none held by a thread it does not have.
 */
__attribute__((visibility("hidden"))) void __ak_kmalloc_fork(bool take);
__attribute__((visibility("hidden"))) void slab_fork_cache(struct ak_kmem_cache *s,
							   bool take);
__attribute__((visibility("hidden"))) void slab_fork_registry(bool take);

#endif /* AK_SLAB_INTERNAL_H */
