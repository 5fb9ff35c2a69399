// SPDX-License-Identifier: MIT
/*
 * Sheaves: each slot has a main sheaf (an array of free objects) and a
 * spare; a sheaf is moved whole, never copied.  In an rseq mode the
 * inline fastpath (<atomkit/slab/sheaf.h>) pops and pushes on main in
 * place, one rseq section each.  The general path, and every slow path,
 * takes main out of the slot with this_cpu_xchg (so no other thread can
 * touch it: the user-space stand-in for the kernel's local_trylock),
 * pops or pushes one object, and puts it back with
 * this_cpu_cmpxchg(NULL -> sheaf).  If the slot got another main
 * meanwhile (we migrated, or a thread of this CPU found it empty-handed),
 * ours is parked: as the spare, in the barn, or flushed.  The spare is
 * only touched with SMP atomics (acq_rel), the barn (per node: full and
 * empty sheaves, kept in one shard per slot) under the shard's lock.
 */
#include <stdlib.h>
#include "internal.h"

/* The layout the array_ptr sections expect (arch/generic/percpu.h). */
struct sheaf {
	unsigned long size;
	void *objs[];
};

/*
 * main is taken and put back with this_cpu ops, or popped and pushed in
 * place by one rseq section (the inline fastpath); spare with SMP ops
 */
struct sheaf_cpu {
	struct sheaf *main;
	struct sheaf *spare;
};

AK_STATIC_ASSERT(offsetof(struct sheaf, size) == 0 &&
		 offsetof(struct sheaf, objs) == 8 &&
		 offsetof(struct sheaf_cpu, main) == 0,
		 "the array_ptr sections' layout");

static inline struct sheaf_cpu *sheaf_cpus(struct ak_kmem_cache *s)
{
	return s->fast.cpu;
}

/*
 * The sheaf barn of a node is kept in shards, one per slot, each on
 * lines of its own: a CPU parks its sheaves in its own shard and takes
 * them back from there, and takes from the node's other shards only
 * when its own slabs are all in use (doc/slab.md "Sheaf").
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

static struct sheaf **spare_of_this_cpu(struct ak_kmem_cache *s)
{
	return &ak_this_cpu_ptr(sheaf_cpus(s))->spare;
}

static struct sheaf *sheaf_new(struct ak_kmem_cache *s)
{
	size_t size = sizeof(struct sheaf) +
		      (size_t)s->sheaf.cap * sizeof(void *);
	struct sheaf *sh;

	/* lines of its own: two CPUs' sheaves must not share one */
	sh = ak_page_meta_alloc(SLAB_ALIGN(size, (size_t)CACHELINE), CACHELINE);
	if (!sh)
		return NULL;
	sh->size = 0;
	slab_stat(s, AK_SLAB_SHEAF_NEW, 1);
	return sh;
}

static void sheaf_flush(struct ak_kmem_cache *s, struct sheaf *sh)
{
	if (!sh->size)
		return;
	slab_free_fps(s, sh->objs, sh->size);
	slab_stat(s, AK_SLAB_FLUSH, 1);
	slab_stat(s, AK_SLAB_FLUSH_OBJS, sh->size);
	sh->size = 0;
}

static struct barn_shard *shard(struct ak_kmem_cache *s, unsigned int i)
{
	return ak_per_cpu_ptr(s->sheaf.barn, i);
}

static unsigned int this_slot(struct ak_kmem_cache *s)
{
	return ak_percpu_this_slot(s->mode) % s->nr_home;
}

static struct barn_shard *own_shard(struct ak_kmem_cache *s)
{
	return shard(s, this_slot(s));
}

static struct sheaf **shard_list(struct ak_kmem_cache *s,
				 struct barn_shard *b, bool full)
{
	return full ? b->sh : b->sh + s->sheaf.barn_max;
}

/* Under b's lock: the newest sheaf of a list, or NULL. */
static struct sheaf *shard_pop(struct ak_kmem_cache *s, struct barn_shard *b,
			       bool full)
{
	unsigned int *nr = full ? &b->nr_full : &b->nr_empty, k = *nr;

	if (!k)
		return NULL;
	__atomic_store_n(nr, k - 1, __ATOMIC_RELAXED);
	slab_stat(s, full ? AK_SLAB_BARN_GET_FULL : AK_SLAB_BARN_GET_EMPTY, 1);
	return shard_list(s, b, full)[k - 1];
}

/* Under b's lock: park sh on a list, if it has room. */
static bool shard_push(struct ak_kmem_cache *s, struct barn_shard *b,
		       bool full, struct sheaf *sh)
{
	unsigned int *nr = full ? &b->nr_full : &b->nr_empty;

	if (*nr >= s->sheaf.barn_max)
		return false;
	shard_list(s, b, full)[*nr] = sh;
	__atomic_store_n(nr, *nr + 1, __ATOMIC_RELAXED);
	slab_stat(s, full ? AK_SLAB_BARN_PUT_FULL : AK_SLAB_BARN_PUT_EMPTY, 1);
	return true;
}

static unsigned int shard_count(const struct barn_shard *b, bool full)
{
	return __atomic_load_n(full ? &b->nr_full : &b->nr_empty,
			       __ATOMIC_RELAXED);
}

/* A full (or empty) sheaf from shard b, or NULL. */
static struct sheaf *barn_get(struct ak_kmem_cache *s, struct barn_shard *b,
			      bool full)
{
	struct sheaf *sh;

	if (!shard_count(b, full))
		return NULL;
	slab_lock(&b->lock);
	sh = shard_pop(s, b, full);
	slab_unlock(&b->lock);
	return sh;
}

static bool barn_put(struct ak_kmem_cache *s, struct barn_shard *b,
		     struct sheaf *sh, bool full)
{
	bool ok;

	if (shard_count(b, full) >= s->sheaf.barn_max)
		return false;
	slab_lock(&b->lock);
	ok = shard_push(s, b, full, sh);
	slab_unlock(&b->lock);
	return ok;
}

/*
 * Main is empty: a full sheaf of this slot's shard b for *give (an empty
 * one, or NULL) in one hold of its lock, as the kernel's
 * barn_replace_empty_sheaf().  *give is NULLed when the shard kept it.
 */
static struct sheaf *barn_replace_empty(struct ak_kmem_cache *s,
					struct barn_shard *b,
					struct sheaf **give)
{
	struct sheaf *full;

	if (!shard_count(b, true))
		return NULL;
	slab_lock(&b->lock);
	full = shard_pop(s, b, true);
	if (full && *give && shard_push(s, b, false, *give))
		*give = NULL;
	slab_unlock(&b->lock);
	return full;
}

/*
 * Main is full: this slot's shard b takes it and gives an empty sheaf
 * back (*empty, NULL if it has none) in one hold, as the kernel's
 * barn_replace_full_sheaf().  False when it has no room for it.
 */
static bool barn_replace_full(struct ak_kmem_cache *s, struct barn_shard *b,
			      struct sheaf *full, struct sheaf **empty)
{
	bool ok;

	*empty = NULL;
	if (shard_count(b, true) >= s->sheaf.barn_max)
		return false;
	slab_lock(&b->lock);
	ok = shard_push(s, b, true, full);
	if (ok)
		*empty = shard_pop(s, b, false);
	slab_unlock(&b->lock);
	return ok;
}

/*
 * A full sheaf from a shard of this node's barn other than slot's, or
 * NULL: what the node's other CPUs parked is for any CPU of the node
 * once its own slabs run out, as the kernel's barn is.
 */
static struct sheaf *barn_steal(struct ak_kmem_cache *s, unsigned int slot)
{
	unsigned int node = shard(s, slot)->node, i;
	struct sheaf *sh;

	for (i = 1; i < s->nr_home; i++) {
		struct barn_shard *b = shard(s, (slot + i) % s->nr_home);

		if (b->node != node)
			continue;
		sh = barn_get(s, b, true);
		if (sh) {
			slab_stat(s, AK_SLAB_BARN_STEAL, 1);
			return sh;
		}
	}
	return NULL;
}

/* A sheaf we hold and cannot use: spare, barn, or flushed and freed. */
static void sheaf_park(struct ak_kmem_cache *s, struct sheaf *sh)
{
	struct sheaf *none = NULL;
	struct barn_shard *b;

	if (__atomic_compare_exchange_n(spare_of_this_cpu(s), &none, sh, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	b = own_shard(s);
	if (sh->size == s->sheaf.cap && barn_put(s, b, sh, true))
		return;
	sheaf_flush(s, sh);
	if (barn_put(s, b, sh, false))
		return;
	ak_page_meta_free(sh);
	slab_stat(s, AK_SLAB_SHEAF_DROP, 1);
}

static void sheaf_put_back(struct ak_kmem_cache *s, struct sheaf *sh)
{
	if (s->mode == AK_PERCPU_ATOMIC)
		__atomic_thread_fence(__ATOMIC_RELEASE);
	if (ak_unlikely(ak_this_cpu_cmpxchg((struct sheaf **)s->fast.cpu,
					    (struct sheaf *)NULL, sh) != NULL))
		sheaf_park(s, sh);
}

/*
 * main out of the slot: the fastpath's and the bulk calls'.  The atomic
 * mode's ops are relaxed; the others stay on one CPU.
 */
__ak_inline struct sheaf *take_main(struct ak_kmem_cache *s)
{
	struct sheaf *sh = ak_this_cpu_xchg((struct sheaf **)s->fast.cpu,
					    (struct sheaf *)NULL);

	if (s->mode == AK_PERCPU_ATOMIC)
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return sh;
}

static struct sheaf *take_spare(struct ak_kmem_cache *s)
{
	return __atomic_exchange_n(spare_of_this_cpu(s), NULL,
				   __ATOMIC_ACQ_REL);
}

/*
 * For bulk, holding sh (NULL or empty): a sheaf with objects, the spare
 * or a full one of this slot's barn shard; an empty spare becomes sh if
 * it was NULL.
 */
static struct sheaf *sheaf_full_one(struct ak_kmem_cache *s,
				    struct sheaf **sh)
{
	struct sheaf *sp = take_spare(s);

	if (sp && sp->size) {
		slab_stat(s, AK_SLAB_SHEAF_SWAP, 1);
		return sp;
	}
	if (sp) {
		if (!*sh)
			*sh = sp;
		else
			sheaf_park(s, sp);
	}
	return barn_get(s, own_shard(s), true);
}

static size_t sheaf_refill(struct ak_kmem_cache *s, struct sheaf *sh,
			   unsigned int from)
{
	size_t from_new;

	sh->size = slab_take_objects(s, s->sheaf.cap, sh->objs, from,
				     &from_new);
	if (sh->size) {
		slab_stat(s, AK_SLAB_REFILL, 1);
		slab_stat(s, AK_SLAB_REFILL_OBJS, sh->size);
	}
	return sh->size;
}

/*
 * Main (sh, or NULL when the slot had none) is empty.  In the order that
 * keeps lines on this CPU: the spare, a full sheaf of this slot's barn
 * shard, this slot's partial slabs.  Only when all of its slabs are in
 * use does it take what other CPUs of the node parked (their shards),
 * then objects of other slots' slabs, then a new slab (doc/slab.md).
 */
static __attribute__((noinline)) void *
sheaf_alloc_slow(struct ak_kmem_cache *s, struct sheaf *sh)
{
	struct sheaf *sp = take_spare(s), *full = NULL;
	unsigned int slot = this_slot(s);
	struct barn_shard *b = shard(s, slot);
	size_t from_new;
	void *fp;

	slab_stat(s, AK_SLAB_ALLOC_SLOW, 1);
	if (!sh)
		slab_stat(s, AK_SLAB_PCPU_BUSY, 1);
	if (sp && sp->size) {
		slab_stat(s, AK_SLAB_SHEAF_SWAP, 1);
		full = sp;
		goto swap;
	}
	if (sp && !sh)
		sh = sp;
	else if (sp)
		sheaf_park(s, sp);	/* empty: stays the spare */
	full = barn_replace_empty(s, b, &sh);
	if (full)
		goto swap;
	if (!sh)
		sh = barn_get(s, b, false);
	if (!sh)
		sh = sheaf_new(s);
	if (!sh) {
		/* no memory for a sheaf: one object straight from a slab */
		return slab_take_objects(s, 1, &fp, SLAB_FROM_ANY,
					 &from_new) ? fp : NULL;
	}
	if (sheaf_refill(s, sh, SLAB_FROM_OWN))
		goto pop;
	if (slab_owns_slabs(s) && (full = barn_steal(s, slot)))
		goto swap;
	if (sheaf_refill(s, sh, SLAB_FROM_OTHERS | SLAB_FROM_NEW))
		goto pop;
	full = barn_steal(s, slot);	/* out of memory: whatever is parked */
	if (full)
		goto swap;
	sheaf_put_back(s, sh);
	return NULL;
swap:
	if (sh)
		sheaf_park(s, sh);
	sh = full;
pop:
	fp = sh->objs[--sh->size];
	sheaf_put_back(s, sh);
	return fp;
}

/*
 * Main (sh, or NULL) is full: a sheaf with room, or NULL.  The spare if
 * it has room; else main becomes the spare if there is none; else main
 * goes to the barn for an empty one, or, the barn being full, is flushed
 * to its slabs and used again.
 */
static struct sheaf *sheaf_room(struct ak_kmem_cache *s, struct sheaf *sh)
{
	struct sheaf *sp = take_spare(s), *t = NULL;
	struct barn_shard *b = own_shard(s);

	if (sp && sp->size < s->sheaf.cap) {
		slab_stat(s, AK_SLAB_SHEAF_SWAP, 1);
		if (sh)
			sheaf_park(s, sh);
		return sp;
	}
	if (sp) {
		sheaf_park(s, sp);	/* full: stays the spare */
	} else if (sh) {
		sheaf_park(s, sh);
		sh = NULL;
	}
	if (sh && !barn_replace_full(s, b, sh, &t)) {
		sheaf_flush(s, sh);
		return sh;
	}
	if (!t)
		t = barn_get(s, b, false);
	if (!t)
		t = sheaf_new(s);
	return t;
}

static __attribute__((noinline)) void
sheaf_free_slow(struct ak_kmem_cache *s, struct sheaf *sh, void *fp)
{
	struct sheaf *t;

	slab_stat(s, AK_SLAB_FREE_SLOW, 1);
	if (!sh)
		slab_stat(s, AK_SLAB_PCPU_BUSY, 1);
	t = sheaf_room(s, sh);
	if (!t) {
		slab_free_fps(s, &fp, 1);
		return;
	}
	t->objs[t->size++] = fp;
	sheaf_put_back(s, t);
}

/*
 * In an rseq mode, up to n objects to or from main in place, with one
 * section that copies them all (the array_ptr _n sections): the kernel's
 * bulk calls memcpy to and from pcs->main under local_trylock.  How many
 * moved; 0 in the other modes, or when main is absent, empty or full.
 */
static size_t main_pop_n(struct ak_kmem_cache *s, size_t n, void **fps)
{
	return ak_this_cpu_array_ptr_pop_n(s->fast.cpu, fps, n);
}

static size_t main_push_n(struct ak_kmem_cache *s, size_t n, void **fps)
{
	return ak_this_cpu_array_ptr_push_n(s->fast.cpu, s->sheaf.cap, fps, n);
}

/*
 * Main in place (rseq), then main taken out, then the spare, then full
 * sheaves of this slot's barn shard: each one hold.
 */
static size_t sheaf_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
{
	struct sheaf *sh, *other;
	size_t k = main_pop_n(s, n, fps);

	if (k == n)
		return k;
	sh = take_main(s);
	while (sh && sh->size && k < n)
		fps[k++] = sh->objs[--sh->size];
	while (k < n && (other = sheaf_full_one(s, &sh))) {
		while (other->size && k < n)
			fps[k++] = other->objs[--other->size];
		sheaf_park(s, other);
	}
	if (sh)
		sheaf_put_back(s, sh);
	return k;
}

static void sheaf_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
{
	size_t i = main_push_n(s, n, fps);
	struct sheaf *sh;

	if (i == n)
		goto out;
	sh = take_main(s);
	while (i < n) {
		if (!sh || sh->size >= s->sheaf.cap) {
			sh = sheaf_room(s, sh);
			if (!sh)
				break;
		}
		while (i < n && sh->size < s->sheaf.cap)
			sh->objs[sh->size++] = fps[i++];
	}
	if (sh)
		sheaf_put_back(s, sh);
	if (i < n)
		slab_free_fps(s, fps + i, n - i);
out:
	slab_stat_fast(s, AK_SLAB_BULK_FREE_CPU, i);
	slab_stat(s, AK_SLAB_BULK_FREE_SLAB, n - i);
}

static void drop(struct ak_kmem_cache *s, struct sheaf *sh)
{
	if (!sh)
		return;
	sheaf_flush(s, sh);
	ak_page_meta_free(sh);
}

static void sheaf_drain(struct ak_kmem_cache *s)
{
	unsigned int cpu, i, k;

	ak_for_each_cpu(cpu) {
		struct sheaf_cpu *c = ak_per_cpu_ptr(sheaf_cpus(s), cpu);

		drop(s, c->main);
		drop(s, c->spare);
		c->main = c->spare = NULL;
	}
	for (i = 0; i < s->nr_home; i++) {
		struct barn_shard *b = shard(s, i);

		for (k = 0; k < b->nr_full; k++)
			drop(s, shard_list(s, b, true)[k]);
		for (k = 0; k < b->nr_empty; k++)
			drop(s, shard_list(s, b, false)[k]);
		b->nr_full = b->nr_empty = 0;
	}
}

static void visit(struct ak_kmem_cache *s, struct sheaf *sh,
		  slab_visit_fn fn, void *arg)
{
	unsigned int i;

	for (i = 0; sh && i < sh->size; i++)
		fn(s, sh->objs[i], arg);
}

static void sheaf_visit(struct ak_kmem_cache *s, slab_visit_fn fn, void *arg)
{
	unsigned int cpu, i, k;

	ak_for_each_cpu(cpu) {
		struct sheaf_cpu *c = ak_per_cpu_ptr(sheaf_cpus(s), cpu);

		visit(s, c->main, fn, arg);
		visit(s, c->spare, fn, arg);
	}
	for (i = 0; i < s->nr_home; i++)
		for (k = 0; k < shard(s, i)->nr_full; k++)
			visit(s, shard_list(s, shard(s, i), true)[k], fn, arg);
}

/* The barn: one shard per slot, per-CPU memory, each on lines of its own. */
static int sheaf_init(struct ak_kmem_cache *s,
		      const struct ak_kmem_cache_args *args)
{
	unsigned int i;

	s->sheaf.cap = args->sheaf_capacity ? args->sheaf_capacity : 32;
	if (s->sheaf.cap > 1024)
		s->sheaf.cap = 1024;
	s->sheaf.barn_max = args->barn_max ? args->barn_max : 10;
	if (s->sheaf.barn_max > 1024)
		s->sheaf.barn_max = 1024;
	s->fast.limit = s->sheaf.cap;
	s->fast.cpu = ak_percpu_alloc(sizeof(struct sheaf_cpu), CACHELINE);
	if (!s->fast.cpu)
		return -1;
	s->sheaf.barn = ak_percpu_alloc(sizeof(struct barn_shard) +
					2 * (size_t)s->sheaf.barn_max *
						sizeof(struct sheaf *),
					CACHELINE);
	if (!s->sheaf.barn) {
		ak_percpu_free(s->fast.cpu);
		s->fast.cpu = NULL;
		return -1;
	}
	for (i = 0; i < s->nr_home; i++)
		shard(s, i)->node = slab_node_of_cpu(s, i);
	return 0;
}

static void sheaf_fini(struct ak_kmem_cache *s)
{
	ak_percpu_free(s->sheaf.barn);
	ak_percpu_free(s->fast.cpu);
	s->sheaf.barn = NULL;
	s->fast.cpu = NULL;
}

/* ---- the fastpath ---- */

__ak_inline void *sheaf_alloc(struct ak_kmem_cache *s)
{
	struct sheaf *sh = take_main(s);
	void *fp;

	if (ak_unlikely(!sh || !sh->size))
		return sheaf_alloc_slow(s, sh);
	fp = sh->objs[--sh->size];
	SLAB_WINDOW();
	sheaf_put_back(s, sh);
	return fp;
}

__ak_inline void sheaf_free(struct ak_kmem_cache *s, void *fp)
{
	struct sheaf *sh = take_main(s);

	if (ak_unlikely(!sh || sh->size >= s->sheaf.cap))
		return sheaf_free_slow(s, sh, fp);
	sh->objs[sh->size++] = fp;
	sheaf_put_back(s, sh);
}

SLAB_ENTRY_POINTS(sheaf)

static const char *sheaf_how(struct ak_kmem_cache *s, bool inlined)
{
	if (inlined)
		return "main sheaf popped/pushed in place: one rseq section each, inline in the caller; the section reads the id itself; the slow path takes main by this_cpu_xchg";
	return ak_percpu_mode_is_rseq(s->mode) ?
	       "main sheaf taken by this_cpu_xchg, put back by this_cpu_cmpxchg (rseq sections)" :
	       s->mode == AK_PERCPU_ATOMIC ?
	       "main sheaf taken by this_cpu_xchg, put back by this_cpu_cmpxchg (SMP-safe cmpxchg) with acquire/release fences" :
	       "main sheaf taken by this_cpu_xchg, put back by this_cpu_cmpxchg (_local cmpxchg)";
}

static void sheaf_fork(struct ak_kmem_cache *s, bool take)
{
	unsigned int i;

	for (i = 0; i < s->nr_home; i++) {
		if (take)
			slab_lock(&shard(s, i)->lock);
		else
			slab_unlock(&shard(s, i)->lock);
	}
}

const struct slab_design slab_sheaf = {
	.name = "sheaf",
	.entry = { sheaf_entry_alloc, sheaf_entry_free },
	.inline_kind = __AK_SLAB_INLINE_SHEAF,
	.alloc = sheaf_alloc,
	.free = sheaf_free,
	.bulk_alloc_cpu = sheaf_bulk_alloc_cpu,
	.bulk_refill = slab_bulk_refill,
	.bulk_free = sheaf_bulk_free,
	.drain = sheaf_drain,
	.visit = sheaf_visit,
	.init = sheaf_init,
	.fini = sheaf_fini,
	.how = sheaf_how,
	.slot_lists = true,
	.fork = sheaf_fork,
};
