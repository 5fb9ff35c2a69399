/* SPDX-License-Identifier: MIT */
/*
 * The slab cache's insides, shared by the files of slab/.  doc/slab.md
 * draws every structure here and says which primitive touches which word.
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

#define SLAB_HDR_SIZE	128
#define SLAB_MAGIC	0x51ab5eedc0ffee00ul
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
	char pad0[CACHELINE - sizeof(union slab_fc)];
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

/* ---- partial lists (per node, per slot) and the sheaf barn ---- */

/* A partial list: slabs with free objects that no slot owns. */
struct slab_list {
	slab_lock_t lock;
	struct ak_slab *partial;
	unsigned long nr_partial;
	unsigned long nr_slabs;		/* made for it (home lists), atomic */
} __attribute__((aligned(CACHELINE)));

/* The layout the array_ptr sections expect (arch/generic/percpu.h). */
struct sheaf {
	unsigned long size;
	void *objs[];
};

struct slab_node {
	struct slab_list list;		/* the partial list */
};

/*
 * The sheaf barn of a node is kept in shards, one per slot, each on
 * lines of its own: a CPU parks its sheaves in its own shard and takes
 * them back from there, and takes from the node's other shards only
 * when its own slabs are all in use (sheaf.c, doc/slab.md "Sheaf").
 * sh[0, barn_max) holds the full sheaves, oldest first, and
 * sh[barn_max, 2 * barn_max) the empty ones.  The counts are read
 * without the lock as hints.
 */
struct barn_shard {
	slab_lock_t lock;
	unsigned int nr_full, nr_empty;
	unsigned int node;		/* the node of its slot's CPU */
	struct sheaf *sh[];
} __attribute__((aligned(CACHELINE)));

/* ---- per-CPU structures of each design ---- */

/* slub-tid, slub-local, rseq-list (the pair is its {head, seq} there). */
struct fl_cpu {
	union {
		ak_u128 pair;
		struct {
			void *freelist;		/* word 0 */
			unsigned long tid;	/* word 1 */
		};
		struct ak_percpu_list list;
	};
	struct ak_slab *slab;	/* the slab this slot owns: a hint, SMP atomics */
	unsigned long id;	/* slot number */
};

/*
 * sheaf: main is taken and put back with this_cpu ops, or popped and
 * pushed in place by one rseq section (the entry points); spare with SMP
 * ops
 */
struct sheaf_cpu {
	struct sheaf *main;
	struct sheaf *spare;
};

AK_STATIC_ASSERT(offsetof(struct sheaf, size) == 0 &&
		 offsetof(struct sheaf, objs) == 8 &&
		 offsetof(struct sheaf_cpu, main) == 0,
		 "the array_ptr sections' layout");

/* ---- the cache ---- */

enum slab_kind {
	K_TID = AK_SLAB_SLUB_TID,
	K_LOCAL = AK_SLAB_SLUB_LOCAL,
	K_LIST = AK_SLAB_RSEQ_LIST,
	K_ARRAY = AK_SLAB_ARRAY,
	K_SHEAF = AK_SLAB_SHEAF,
	K_LOCKED = AK_SLAB_LOCKED,
	K_HOOKED		/* debug or stats: the checked path */
};

struct ak_kmem_cache {
	/*
	 * The public alloc and free: the general path (a switch on kind),
	 * or, for a design with a one-section rseq fastpath (array,
	 * rseq-list, sheaf) in an rseq mode without hooks, a leaf for that
	 * design and mode (api.c).
	 */
	void *(*alloc)(struct ak_kmem_cache *s, ak_gfp_t flags);
	void (*free)(struct ak_kmem_cache *s, void *p);
	/* what the fastpaths read */
	void *cpu;			/* per-CPU structure, copy 0 */
	size_t cpu_stride;		/* bytes between its copies */
	unsigned int kind;
	unsigned int fastpath;
	uintptr_t slab_mask;		/* ~(slab_size - 1) */
	unsigned long tid_step;		/* power of two >= slots */
	unsigned int fp_off;		/* free pointer from the object */
	unsigned int object_size;
	unsigned int array_limit, array_batch;
	unsigned int sheaf_cap;
	enum ak_percpu_mode mode;
	unsigned int flags;

	/* geometry */
	unsigned int align, stride, obj_off, first_off;
	unsigned int slab_size, objects, barn_max, locked_batch;

	uint64_t *stats;		/* per-CPU u64[AK_SLAB_NR_STATS] */
	unsigned int nr_nodes;
	struct slab_node *nodes;
	/* array, sheaf, locked: a partial list per slot (else NULL) */
	struct slab_list *home_lists;
	unsigned int nr_home;
	/* sheaf: the barn's shards, one per slot (per-CPU memory) */
	void *barn;

	pthread_mutex_t slabs_lock;
	struct ak_slab *all_slabs;
	unsigned long nr_slabs;

	/* locked: one lock, one freelist (fp space) */
	struct {
		pthread_mutex_t lock;
		void *head;
		unsigned long count;
	} locked __attribute__((aligned(CACHELINE)));

	char name[64];
};

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
	return (struct ak_slab *)((uintptr_t)p & s->slab_mask);
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
 * memory.  The slab's counters then say inuse = objects, owner.
 */
struct ak_slab *slab_get_frozen(struct ak_kmem_cache *s, unsigned long owner,
				struct chain *c, bool *fresh);
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

/* ---- designs ---- */

void *fl_alloc_slow(struct ak_kmem_cache *s);
void fl_free_remote(struct ak_kmem_cache *s, struct ak_slab *sl, void *fp);
size_t fl_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps);
size_t fl_bulk_refill(struct ak_kmem_cache *s, size_t n, void **fps,
		      size_t *own, size_t *partial, size_t *fresh);
void fl_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps);
void fl_drain(struct ak_kmem_cache *s);
void fl_init(struct ak_kmem_cache *s);

void *array_alloc_slow(struct ak_kmem_cache *s);
void array_free_slow(struct ak_kmem_cache *s, void *fp);
size_t array_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps);
void array_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps);
void array_drain(struct ak_kmem_cache *s);

/* The barn's shards: 0, or -1 without memory (fini frees them). */
int sheaf_init(struct ak_kmem_cache *s);
void sheaf_fini(struct ak_kmem_cache *s);
void *sheaf_alloc_slow(struct ak_kmem_cache *s, struct sheaf *sh);
void sheaf_free_slow(struct ak_kmem_cache *s, struct sheaf *sh, void *fp);
size_t sheaf_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps);
void sheaf_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps);
void sheaf_drain(struct ak_kmem_cache *s);
void sheaf_put_back(struct ak_kmem_cache *s, struct sheaf *sh);

void *locked_alloc(struct ak_kmem_cache *s);
void locked_free(struct ak_kmem_cache *s, void *fp);
size_t locked_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps);
void locked_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps);
void locked_drain(struct ak_kmem_cache *s);

/* The fastpath of each design in fp space (api.c), for bulk and debug. */
void *slab_design_alloc(struct ak_kmem_cache *s);
void slab_design_free(struct ak_kmem_cache *s, void *fp);
/* Choose s->alloc and s->free for the design, mode and flags (api.c). */
void slab_entry_init(struct ak_kmem_cache *s);
/* Whether they are a design's own rseq entry points. */
bool slab_entry_is_leaf(const struct ak_kmem_cache *s);

/* Visit every free object a design's per-CPU level or store holds. */
typedef void (*slab_visit_fn)(struct ak_kmem_cache *s, void *fp, void *arg);
void slab_visit_cached(struct ak_kmem_cache *s, slab_visit_fn fn, void *arg);
void sheaf_visit_cached(struct ak_kmem_cache *s, slab_visit_fn fn, void *arg);

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

#endif /* AK_SLAB_INTERNAL_H */
