// SPDX-License-Identifier: MIT
/*
 * Sheaves: each slot has a main sheaf (an array of free objects) and a
 * spare; a sheaf is moved whole, never copied.  The fastpath takes main
 * out of the slot with this_cpu_xchg (so no other thread can touch it:
 * the user-space stand-in for the kernel's local_trylock), pops or pushes
 * one object, and puts it back with this_cpu_cmpxchg(NULL -> sheaf).  If
 * the slot got another main meanwhile (we migrated, or a thread of this
 * CPU found it empty-handed), ours is parked: as the spare, in the barn,
 * or flushed.  The spare is only touched with SMP atomics (acq_rel), the
 * barn (per node: full and empty sheaves) under its lock.
 */
#include <stdlib.h>
#include "internal.h"

static struct sheaf **spare_of_this_cpu(struct ak_kmem_cache *s)
{
	return &ak_this_cpu_ptr((struct sheaf_cpu *)s->cpu)->spare;
}

static struct sheaf *sheaf_new(struct ak_kmem_cache *s)
{
	size_t size = sizeof(struct sheaf) +
		      (size_t)s->sheaf_cap * sizeof(void *);
	struct sheaf *sh;

	/* lines of its own: two CPUs' sheaves must not share one */
	if (posix_memalign((void **)&sh, CACHELINE,
			   SLAB_ALIGN(size, (size_t)CACHELINE)))
		return NULL;
	sh->next = NULL;
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

static struct sheaf *barn_get(struct ak_kmem_cache *s, bool full)
{
	struct slab_node *n = &s->nodes[slab_this_node(s)];
	struct sheaf **list = full ? &n->full : &n->empty, *sh;

	if (!READ_ONCE(*list))
		return NULL;
	slab_lock(&n->barn_lock);
	sh = *list;
	if (sh) {
		*list = sh->next;
		if (full)
			n->nr_full--;
		else
			n->nr_empty--;
	}
	slab_unlock(&n->barn_lock);
	if (sh)
		slab_stat(s, full ? AK_SLAB_BARN_GET_FULL :
				    AK_SLAB_BARN_GET_EMPTY, 1);
	return sh;
}

static bool barn_put(struct ak_kmem_cache *s, struct sheaf *sh, bool full)
{
	struct slab_node *n = &s->nodes[slab_this_node(s)];
	unsigned int *nr = full ? &n->nr_full : &n->nr_empty;

	slab_lock(&n->barn_lock);
	if (*nr >= s->barn_max) {
		slab_unlock(&n->barn_lock);
		return false;
	}
	sh->next = full ? n->full : n->empty;
	if (full)
		n->full = sh;
	else
		n->empty = sh;
	++*nr;
	slab_unlock(&n->barn_lock);
	slab_stat(s, full ? AK_SLAB_BARN_PUT_FULL : AK_SLAB_BARN_PUT_EMPTY, 1);
	return true;
}

/* A sheaf we hold and cannot use: spare, barn, or flushed and freed. */
static void sheaf_park(struct ak_kmem_cache *s, struct sheaf *sh)
{
	struct sheaf *none = NULL;

	if (__atomic_compare_exchange_n(spare_of_this_cpu(s), &none, sh, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	if (sh->size == s->sheaf_cap && barn_put(s, sh, true))
		return;
	sheaf_flush(s, sh);
	if (barn_put(s, sh, false))
		return;
	free(sh);
	slab_stat(s, AK_SLAB_SHEAF_DROP, 1);
}

void sheaf_put_back(struct ak_kmem_cache *s, struct sheaf *sh)
{
	if (s->mode == AK_PERCPU_ATOMIC)
		__atomic_thread_fence(__ATOMIC_RELEASE);
	if (ak_unlikely(ak_this_cpu_cmpxchg((struct sheaf **)s->cpu,
					    (struct sheaf *)NULL, sh) != NULL))
		sheaf_park(s, sh);
}

static struct sheaf *take_spare(struct ak_kmem_cache *s)
{
	return __atomic_exchange_n(spare_of_this_cpu(s), NULL,
				   __ATOMIC_ACQ_REL);
}

/* We hold sh (NULL or empty): a sheaf with objects (spare, barn). */
static struct sheaf *sheaf_full_one(struct ak_kmem_cache *s,
				    struct sheaf **sh)
{
	struct sheaf *sp = take_spare(s), *full;

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
	full = barn_get(s, true);
	return full;
}

void *sheaf_alloc_slow(struct ak_kmem_cache *s, struct sheaf *sh)
{
	struct sheaf *full;
	size_t from_new;
	void *fp;

	slab_stat(s, AK_SLAB_ALLOC_SLOW, 1);
	if (!sh)
		slab_stat(s, AK_SLAB_PCPU_BUSY, 1);
	full = sheaf_full_one(s, &sh);
	if (full) {
		if (sh)
			sheaf_park(s, sh);
		sh = full;
		goto pop;
	}
	if (!sh)
		sh = barn_get(s, false);
	if (!sh)
		sh = sheaf_new(s);
	if (!sh) {
		/* no memory for a sheaf: one object straight from a slab */
		return slab_take_objects(s, 1, &fp, true, &from_new) ? fp :
								       NULL;
	}
	sh->size = (unsigned int)slab_take_objects(s, s->sheaf_cap, sh->objs,
						   true, &from_new);
	if (!sh->size) {
		sheaf_put_back(s, sh);
		return NULL;
	}
	slab_stat(s, AK_SLAB_REFILL, 1);
	slab_stat(s, AK_SLAB_REFILL_OBJS, sh->size);
pop:
	fp = sh->objs[--sh->size];
	sheaf_put_back(s, sh);
	return fp;
}

/* We hold sh (NULL or full): a sheaf with room, or NULL. */
static struct sheaf *sheaf_room(struct ak_kmem_cache *s, struct sheaf *sh)
{
	struct sheaf *sp = take_spare(s), *two[2] = { sh, sp }, *t = NULL;
	unsigned int i;

	if (sp && sp->size < s->sheaf_cap) {
		slab_stat(s, AK_SLAB_SHEAF_SWAP, 1);
		if (sh)
			sheaf_park(s, sh);
		return sp;
	}
	/* full ones to the barn; if it is full too, flush one and use it */
	for (i = 0; i < 2; i++) {
		if (!two[i] || barn_put(s, two[i], true))
			continue;
		sheaf_flush(s, two[i]);
		if (!t)
			t = two[i];
		else
			sheaf_park(s, two[i]);
	}
	if (!t)
		t = barn_get(s, false);
	if (!t)
		t = sheaf_new(s);
	return t;
}

void sheaf_free_slow(struct ak_kmem_cache *s, struct sheaf *sh, void *fp)
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

static struct sheaf *take_main(struct ak_kmem_cache *s)
{
	struct sheaf *sh = ak_this_cpu_xchg((struct sheaf **)s->cpu,
					    (struct sheaf *)NULL);

	if (s->mode == AK_PERCPU_ATOMIC)
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return sh;
}

/* Main, then spare, then full sheaves of the barn: each one hold. */
size_t sheaf_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
{
	struct sheaf *sh = take_main(s), *other;
	size_t k = 0;

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

void sheaf_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
{
	struct sheaf *sh = take_main(s);
	size_t i = 0;

	while (i < n) {
		if (!sh || sh->size >= s->sheaf_cap) {
			sh = sheaf_room(s, sh);
			if (!sh)
				break;
		}
		while (i < n && sh->size < s->sheaf_cap)
			sh->objs[sh->size++] = fps[i++];
	}
	if (sh)
		sheaf_put_back(s, sh);
	if (i < n)
		slab_free_fps(s, fps + i, n - i);
	slab_stat(s, AK_SLAB_BULK_FREE_CPU, i);
	slab_stat(s, AK_SLAB_BULK_FREE_SLAB, n - i);
}

static void drop(struct ak_kmem_cache *s, struct sheaf *sh)
{
	if (!sh)
		return;
	sheaf_flush(s, sh);
	free(sh);
}

void sheaf_drain(struct ak_kmem_cache *s)
{
	struct sheaf *sh, *next;
	unsigned int cpu, n;

	ak_for_each_cpu(cpu) {
		struct sheaf_cpu *c = ak_per_cpu_ptr((struct sheaf_cpu *)s->cpu,
						     cpu);

		drop(s, c->main);
		drop(s, c->spare);
		c->main = c->spare = NULL;
	}
	for (n = 0; n < s->nr_nodes; n++) {
		struct slab_node *nd = &s->nodes[n];

		for (sh = nd->full; sh; sh = next) {
			next = sh->next;
			drop(s, sh);
		}
		for (sh = nd->empty; sh; sh = next) {
			next = sh->next;
			drop(s, sh);
		}
		nd->full = nd->empty = NULL;
		nd->nr_full = nd->nr_empty = 0;
	}
}
