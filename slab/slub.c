// SPDX-License-Identifier: MIT
/*
 * Slow paths of the per-CPU freelist designs (slub-tid, slub-local,
 * rseq-list).  Each slot owns at most one frozen slab (c->slab, a hint
 * written only with SMP atomics, never inside an rseq section), whose
 * objects it frees onto its own list; any object on any list is correct,
 * as objects on per-CPU lists count as in use in their slabs.  Every
 * change of a list is one per-CPU op: pop, push, install a chain on an
 * empty list, splice a chain in front, or take the whole list.
 */
#include "internal.h"

static bool rseq_mode(const struct ak_kmem_cache *s)
{
	return s->mode == AK_PERCPU_RSEQ || s->mode == AK_PERCPU_RSEQ_MM_CID;
}

struct snap {
	struct fl_cpu *c;
	void *head;
	unsigned long tid;	/* rseq-list: seq */
};

static void snap(struct ak_kmem_cache *s, struct snap *sn)
{
	sn->c = ak_this_cpu_ptr((struct fl_cpu *)s->cpu);
	sn->tid = READ_ONCE(sn->c->tid);
	ak_barrier();
	sn->head = READ_ONCE(sn->c->freelist);
}

/*
 * Replace the head seen in sn by nhead, as one per-CPU op:
 *   slub-tid    this_cpu_cmpxchg128 {head, tid} -> {nhead, tid + step}
 *   slub-local  the same on the pinned slot: cmpxchg128_local (thread),
 *               cmpxchg128 (atomic), this_cpu_cmpxchg128 (rseq)
 *   rseq-list   rseq modes: this_cpu_cmpxchg of the head word (only push
 *               and take-all use it; a head that went and came back is
 *               still the head, so no seq is needed); fallback modes:
 *               {head, seq} -> {nhead, seq + 1} as the list ops do
 */
static bool commit(struct ak_kmem_cache *s, const struct snap *sn,
		   void *nhead)
{
	ak_u128 o, n;

	SLAB_WINDOW();
	if (s->fastpath == AK_SLAB_RSEQ_LIST) {
		if (rseq_mode(s))
			return ak_this_cpu_cmpxchg((void **)s->cpu, sn->head,
						   nhead) == sn->head;
		o = ak_u128_from_words((uintptr_t)sn->head, sn->tid);
		n = ak_u128_from_words((uintptr_t)nhead, sn->tid + 1);
		/* sn->c is the slot we are on in these modes, or SMP-safe */
		if (s->mode == AK_PERCPU_ATOMIC)
			return ak_try_cmpxchg128(&sn->c->pair, &o, n);
		return ak_try_cmpxchg128_local(&sn->c->pair, &o, n);
	}
	o = ak_u128_from_words((uintptr_t)sn->head, sn->tid);
	n = ak_u128_from_words((uintptr_t)nhead, sn->tid + s->tid_step);
	if (s->fastpath == AK_SLAB_SLUB_LOCAL && !rseq_mode(s)) {
		if (s->mode == AK_PERCPU_THREAD)
			return ak_try_cmpxchg128_local(&sn->c->pair, &o, n);
		return ak_try_cmpxchg128(&sn->c->pair, &o, n);
	}
	return ak_this_cpu_try_cmpxchg128((ak_u128 *)s->cpu, &o, n);
}

static void *chain_tail(void *head)
{
	void *next;

	while ((next = fp_next(head)))
		head = next;
	return head;
}

/* Put a private chain on the list of the slot we are on. */
static void install(struct ak_kmem_cache *s, void *head, void *tail)
{
	struct snap sn;

	for (;;) {
		snap(s, &sn);
		if (sn.head) {
			/* not empty after all: splice in front */
			if (!tail)
				tail = chain_tail(head);
			fp_set(tail, sn.head);
		} else if (tail) {
			fp_set(tail, NULL);
		}
		if (commit(s, &sn, head))
			return;
		slab_stat(s, AK_SLAB_FAST_RETRY, 1);
	}
}

void fl_init(struct ak_kmem_cache *s)
{
	unsigned int cpu, n = ak_nr_cpus();

	s->tid_step = 1;
	while (s->tid_step < n)
		s->tid_step <<= 1;
	ak_for_each_cpu(cpu) {
		struct fl_cpu *c = ak_per_cpu_ptr((struct fl_cpu *)s->cpu, cpu);

		c->id = cpu;
		/* tid = slot (mod step): a pair seen on one slot never matches another */
		c->tid = s->fastpath == AK_SLAB_RSEQ_LIST ? 0 : cpu;
	}
}

/*
 * A chain for the slot we are on: the remote frees of the slab it owns,
 * or, giving that up, a slab frozen for it (partial list, else new).
 * *from: 0 own slab, 1 partial, 2 new; false when no memory.
 */
static bool refill_chain(struct ak_kmem_cache *s, struct chain *ch, int *from)
{
	struct fl_cpu *c = ak_this_cpu_ptr((struct fl_cpu *)s->cpu);
	unsigned long owner = c->id + 1;
	struct ak_slab *x, *y, *prev;
	bool fresh;

	x = __atomic_load_n(&c->slab, __ATOMIC_ACQUIRE);
	if (x) {
		if (slab_take_frozen(s, x, owner, ch)) {
			*from = 0;
			return true;
		}
		slab_unfreeze(s, x, owner);
	}
	y = slab_get_frozen(s, owner, ch, &fresh);
	if (!y)
		return false;
	*from = fresh ? 2 : 1;
	/* any slab this displaces was frozen for this slot: thaw it */
	prev = __atomic_exchange_n(&c->slab, y, __ATOMIC_ACQ_REL);
	if (prev && prev != y)
		slab_unfreeze(s, prev, owner);
	return true;
}

/* The list is empty: refill it, and hand out the chain's first object. */
void *fl_alloc_slow(struct ak_kmem_cache *s)
{
	struct chain ch;
	void *fp, *rest;
	int from;

	slab_stat(s, AK_SLAB_ALLOC_SLOW, 1);
	if (!refill_chain(s, &ch, &from))
		return NULL;
	fp = ch.head;
	rest = fp_next(fp);
	if (rest)
		install(s, rest, ch.tail);
	return fp;
}

/*
 * Bulk, past the list: as many refills as it takes, each chain's rest
 * going onto the list, so that the objects freed later find their slab
 * owned here, as in SLUB's bulk path through ___slab_alloc.
 */
size_t fl_bulk_refill(struct ak_kmem_cache *s, size_t n, void **fps,
		      size_t *own, size_t *partial, size_t *fresh)
{
	size_t got = 0, k;
	struct chain ch;
	int from;
	void *p;

	while (got < n && refill_chain(s, &ch, &from)) {
		for (k = 0, p = ch.head; p && got < n; k++, p = fp_next(p))
			fps[got++] = p;
		if (p)
			install(s, p, ch.tail);
		*(from == 0 ? own : from == 1 ? partial : fresh) += k;
	}
	return got;
}

void fl_free_remote(struct ak_kmem_cache *s, struct ak_slab *sl, void *fp)
{
	slab_stat(s, AK_SLAB_FREE_SLOW, 1);
	slab_free_chain(s, sl, fp, fp, 1);
}

/* Take the whole list in one op, keep n, put the rest back in one op. */
size_t fl_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
{
	struct snap sn;
	size_t k;
	void *p;

	for (;;) {
		snap(s, &sn);
		if (!sn.head)
			return 0;
		if (commit(s, &sn, NULL))
			break;
		slab_stat(s, AK_SLAB_FAST_RETRY, 1);
	}
	for (k = 0, p = sn.head; p && k < n; p = fp_next(p))
		fps[k++] = p;
	if (p)
		install(s, p, NULL);
	return k;
}

/*
 * Objects grouped by slab: a group of the slab this slot owns goes onto
 * the list in one op, any other group onto its slab in one cmpxchg128.
 */
/* A chain of the slot's own slab goes onto its list, others to their slab. */
static void bulk_free_chain(struct ak_kmem_cache *s, struct ak_slab *sl,
			    struct chain *c, void *own)
{
	if (sl == own) {
		install(s, c->head, c->tail);
		slab_stat_fast(s, AK_SLAB_BULK_FREE_CPU, c->n);
	} else {
		slab_free_chain(s, sl, c->head, c->tail, c->n);
		slab_stat(s, AK_SLAB_BULK_FREE_SLAB, c->n);
	}
}

void fl_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
{
	struct fl_cpu *c = ak_this_cpu_ptr((struct fl_cpu *)s->cpu);

	slab_group_chains(s, fps, n, bulk_free_chain,
			  __atomic_load_n(&c->slab, __ATOMIC_RELAXED));
}

/* With the cache quiet: every list back to the slabs, every slab thawed. */
void fl_drain(struct ak_kmem_cache *s)
{
	unsigned int cpu;

	ak_for_each_cpu(cpu) {
		struct fl_cpu *c = ak_per_cpu_ptr((struct fl_cpu *)s->cpu, cpu);
		struct ak_slab *x = c->slab;
		void *head = c->freelist;

		c->freelist = NULL;
		c->slab = NULL;
		if (head) {
			slab_free_chain_any(s, head);
			slab_stat(s, AK_SLAB_FLUSH, 1);
		}
		if (x)
			slab_unfreeze(s, x, c->id + 1);
	}
}
