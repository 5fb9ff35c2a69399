// SPDX-License-Identifier: MIT
/*
 * The per-CPU freelist designs: slub-tid, slub-local, rseq-list.  One
 * file for the three, as they share the per-CPU structure and the whole
 * slow path, and differ only in their fastpath and in fl_commit(), the
 * one per-CPU op through which every change of a list goes.
 *
 * Each slot owns at most one frozen slab (c->slab, a hint written only
 * with SMP atomics, never inside an rseq section), whose objects it frees
 * onto its own list; any object on any list is correct, as objects on
 * per-CPU lists count as in use in their slabs.  Every change of a list
 * is one per-CPU op: pop, push, install a chain on an empty list, splice
 * a chain in front, or take the whole list.
 *
 * Each slot also keeps a short list of partial slabs of its own, as
 * SLUB's CONFIG_SLUB_CPU_PARTIAL: slabs a free made partial, which the
 * slow path takes before the node's list.  Those slabs are nobody's (not
 * frozen) and on no shared list; the list is {head, ptid}, changed only
 * by a 16-byte per-CPU op as slub-local's pair, whatever the design.
 *
 * Which primitive each step uses and why it is correct in each per-CPU
 * mode: doc/slab.md.
 */
#include "internal.h"

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

/* rseq-list's inline free compares its owner (<atomkit/slab/rseq-list.h>) */
AK_STATIC_ASSERT(offsetof(struct fl_cpu, list) == 0 &&
		 offsetof(struct fl_cpu, slab) == 16,
		 "the layout of ak_rseq_list_push_owned()");

static inline struct fl_cpu *fl_cpus(struct ak_kmem_cache *s)
{
	return s->fast.cpu;
}

/*
 * A slot's partial slabs, linked through their cpu_next.  ptid: in its
 * low PC_COUNT_BITS the head's cpu_pobjects (the free objects the slabs
 * had as they were put on, as the kernel's pobjects), above them a
 * sequence unique to the slot, as slub-tid's tid (slot mod tid_step, +
 * tid_step per op): a pop reads the head's cpu_next, which may be stale,
 * and only an unchanged ptid says it is not; a pair seen on one slot
 * never matches another's.
 */
struct fl_partial {
	union {
		ak_u128 pair;
		struct {
			struct ak_slab *head;	/* word 0 */
			unsigned long ptid;	/* word 1 */
		};
	};
};

#define PC_COUNT_BITS	25
#define PC_COUNT_MASK	((1ul << PC_COUNT_BITS) - 1)
#define PC_COUNT(w)	((unsigned int)((w) & PC_COUNT_MASK))

enum fl_kind {
	FL_TID,
	FL_LOCAL,
	FL_LIST,
};

/*
 * Replace {head, tid} by {nhead, tid + step} on c's list, as one per-CPU
 * op; kind is a constant at every call, so each design's path holds only
 * its own branch:
 *   slub-tid    this_cpu_cmpxchg128 on whichever slot we are on; tids are
 *               unique per slot (tid = slot mod step), so a snapshot taken
 *               on another slot never matches
 *   slub-local  the slot c was pinned before the snapshot: thread mode
 *               cmpxchg128_local, atomic mode the SMP-safe cmpxchg128 on
 *               c, rseq modes only inside a section (this_cpu_cmpxchg128)
 *   rseq-list   rseq modes: this_cpu_cmpxchg of the head word (only the
 *               slow path's push and take-all use it; a head that went
 *               and came back is still the head, so no seq is needed);
 *               fallback modes: {head, seq} -> {nhead, seq + 1} as the
 *               list ops do, on c, the slot we are on or SMP-safe
 */
__ak_inline bool fl_commit(struct ak_kmem_cache *s, enum fl_kind kind,
			   struct fl_cpu *c, void *head, unsigned long tid,
			   void *nhead)
{
	unsigned long step = kind == FL_LIST ? 1 : s->slub.tid_step;
	ak_u128 o = ak_u128_from_words((uintptr_t)head, tid);
	ak_u128 n = ak_u128_from_words((uintptr_t)nhead, tid + step);

	SLAB_WINDOW();
	if (kind == FL_LIST && ak_percpu_mode_is_rseq(s->mode))
		return ak_this_cpu_cmpxchg((void **)s->fast.cpu, head, nhead) ==
		       head;
	if (kind != FL_TID) {
		if (s->mode == AK_PERCPU_THREAD)
			return ak_try_cmpxchg128_local(&c->pair, &o, n);
		if (s->mode == AK_PERCPU_ATOMIC)
			return ak_try_cmpxchg128(&c->pair, &o, n);
	}
	return ak_this_cpu_try_cmpxchg128((ak_u128 *)s->fast.cpu, &o, n);
}

/* The slow path's commit, one per design (s->slub.commit). */
static bool tid_commit(struct ak_kmem_cache *s, struct fl_cpu *c, void *head,
		       unsigned long tid, void *nhead)
{
	return fl_commit(s, FL_TID, c, head, tid, nhead);
}

static bool local_commit(struct ak_kmem_cache *s, struct fl_cpu *c,
			 void *head, unsigned long tid, void *nhead)
{
	return fl_commit(s, FL_LOCAL, c, head, tid, nhead);
}

static bool list_commit(struct ak_kmem_cache *s, struct fl_cpu *c,
			void *head, unsigned long tid, void *nhead)
{
	return fl_commit(s, FL_LIST, c, head, tid, nhead);
}

/* ---- the slow path ---- */

struct snap {
	struct fl_cpu *c;
	void *head;
	unsigned long tid;	/* rseq-list: seq */
};

static void snap(struct ak_kmem_cache *s, struct snap *sn)
{
	sn->c = ak_this_cpu_ptr(fl_cpus(s));
	sn->tid = READ_ONCE(sn->c->tid);
	ak_barrier();
	sn->head = READ_ONCE(sn->c->freelist);
}

/* Replace the head seen in sn by nhead: the design's fl_commit(). */
static bool commit(struct ak_kmem_cache *s, const struct snap *sn,
		   void *nhead)
{
	return s->slub.commit(s, sn->c, sn->head, sn->tid, nhead);
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

/* ---- the slot's partial slabs ---- */

struct psnap {
	struct fl_partial *p;
	struct ak_slab *head;
	unsigned long w;
};

static void psnap(struct ak_kmem_cache *s, struct psnap *ps)
{
	ps->p = ak_this_cpu_ptr(s->slub.partial);
	/* in atomic mode another CPU may have written it: head after w */
	ps->w = __atomic_load_n(&ps->p->ptid, __ATOMIC_ACQUIRE);
	ps->head = __atomic_load_n(&ps->p->head, __ATOMIC_ACQUIRE);
}

/*
 * {head, w} -> {nhead, next sequence | count}: slub-local's op, so that
 * the partial list is as safe as the freelist in every mode (rseq: a
 * section on the CPU we are on; atomic: SMP-safe on the slot seen; thread:
 * _local on the thread's own slot).
 */
static bool pcommit(struct ak_kmem_cache *s, const struct psnap *ps,
		    struct ak_slab *nhead, unsigned int count)
{
	ak_u128 o = ak_u128_from_words((uintptr_t)ps->head, ps->w);
	ak_u128 n = ak_u128_from_words((uintptr_t)nhead,
			(ps->w & ~PC_COUNT_MASK) +
			(s->slub.tid_step << PC_COUNT_BITS) + count);

	SLAB_WINDOW();
	if (s->mode == AK_PERCPU_THREAD)
		return ak_try_cmpxchg128_local(&ps->p->pair, &o, n);
	if (s->mode == AK_PERCPU_ATOMIC)
		return ak_try_cmpxchg128(&ps->p->pair, &o, n);
	return ak_this_cpu_try_cmpxchg128((ak_u128 *)s->slub.partial, &o, n);
}

/* The slot's next partial slab, off its list; NULL when none. */
static struct ak_slab *pop_partial(struct ak_kmem_cache *s)
{
	struct ak_slab *next;
	struct psnap ps;

	for (;;) {
		psnap(s, &ps);
		if (!ps.head)
			return NULL;
		next = __atomic_load_n(&ps.head->cpu_next, __ATOMIC_RELAXED);
		if (pcommit(s, &ps, next, next ?
			    __atomic_load_n(&next->cpu_pobjects,
					    __ATOMIC_RELAXED) : 0))
			return ps.head;
		slab_stat(s, AK_SLAB_FAST_RETRY, 1);
	}
}

/*
 * sl onto the slot's list.  With drain, as the kernel's put_cpu_partial():
 * a list whose slabs had more than cpu_partial free objects is replaced
 * by sl alone, and goes to the nodes' lists in one lock hold per node.
 */
static void push_partial(struct ak_kmem_cache *s, struct ak_slab *sl,
			 bool drain)
{
	union slab_fc f = slab_fc_read(sl);
	unsigned long n, nfree = sl->objects - CNT_INUSE(f.counters);
	struct ak_slab *gone, *rest;
	struct psnap ps;

	/* racy, as the kernel's: a free may be on its way */
	if (!nfree || nfree > sl->objects)
		nfree = 1;
	for (;;) {
		psnap(s, &ps);
		n = PC_COUNT(ps.w);
		gone = NULL;
		rest = ps.head;
		if (rest && drain && n > READ_ONCE(s->cpu_partial)) {
			gone = rest;
			rest = NULL;
			n = 0;
		}
		n += nfree;
		if (n > PC_COUNT_MASK)
			n = PC_COUNT_MASK;
		__atomic_store_n(&sl->cpu_next, rest, __ATOMIC_RELAXED);
		__atomic_store_n(&sl->cpu_pobjects, (unsigned int)n,
				 __ATOMIC_RELAXED);
		if (pcommit(s, &ps, sl, (unsigned int)n))
			break;
		slab_stat(s, AK_SLAB_FAST_RETRY, 1);
	}
	if (gone) {
		slab_unfreeze_partials(s, gone);
		slab_stat(s, AK_SLAB_CPU_PARTIAL_DRAIN, 1);
	}
}

/* A free made sl partial (slab_free_chain()): onto this slot's list. */
static void fl_put_partial(struct ak_kmem_cache *s, struct ak_slab *sl)
{
	slab_stat(s, AK_SLAB_CPU_PARTIAL_FREE, 1);
	push_partial(s, sl, true);
}

enum fl_from {
	FROM_OWN,		/* the remote frees of the slot's own slab */
	FROM_CPU_PARTIAL,	/* a slab off the slot's partial list */
	FROM_PARTIAL,		/* a slab off the node's */
	FROM_NEW,		/* a new slab */
};

/*
 * A chain for the slot we are on: the remote frees of the slab it owns,
 * or, giving that up, a slab frozen for it (the slot's partial list, the
 * node's, else new).  false when no memory.
 */
static bool refill_chain(struct ak_kmem_cache *s, struct chain *ch,
			 enum fl_from *from)
{
	struct fl_cpu *c = ak_this_cpu_ptr(fl_cpus(s));
	unsigned long owner = c->id + 1;
	struct ak_slab *x, *y, *prev, *extra;
	bool fresh;

	x = __atomic_load_n(&c->slab, __ATOMIC_ACQUIRE);
	if (x) {
		if (slab_take_frozen(s, x, owner, ch)) {
			*from = FROM_OWN;
			return true;
		}
		slab_unfreeze(s, x, owner);
	}
	while ((y = pop_partial(s))) {
		if (slab_freeze(s, y, owner, ch)) {
			slab_stat(s, AK_SLAB_CPU_PARTIAL_ALLOC, 1);
			*from = FROM_CPU_PARTIAL;
			goto got;
		}
	}
	y = slab_get_frozen(s, owner, ch, &fresh, READ_ONCE(s->cpu_partial),
			    &extra);
	if (!y)
		return false;
	*from = fresh ? FROM_NEW : FROM_PARTIAL;
	/* as the kernel's put_cpu_partial(s, slab, 0): no drain */
	while ((x = extra)) {
		extra = __atomic_load_n(&x->cpu_next, __ATOMIC_RELAXED);
		push_partial(s, x, false);
	}
got:
	/* any slab this displaces was frozen for this slot: thaw it */
	prev = __atomic_exchange_n(&c->slab, y, __ATOMIC_ACQ_REL);
	if (prev && prev != y)
		slab_unfreeze(s, prev, owner);
	return true;
}

/* The list is empty: refill it, and hand out the chain's first object. */
static __attribute__((noinline)) void *fl_alloc_slow(struct ak_kmem_cache *s)
{
	enum fl_from from;
	struct chain ch;
	void *fp, *rest;

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
static size_t fl_bulk_refill(struct ak_kmem_cache *s, size_t n, void **fps,
			     struct slab_bulk_from *bf)
{
	size_t got = 0, k;
	enum fl_from from;
	struct chain ch;
	void *p;

	while (got < n && refill_chain(s, &ch, &from)) {
		for (k = 0, p = ch.head; p && got < n; k++, p = fp_next(p))
			fps[got++] = p;
		if (p)
			install(s, p, ch.tail);
		*(from == FROM_OWN ? &bf->cpu :
		  from == FROM_CPU_PARTIAL ? &bf->cpu_partial :
		  from == FROM_PARTIAL ? &bf->partial : &bf->fresh) += k;
	}
	return got;
}

static __attribute__((noinline)) void
fl_free_remote(struct ak_kmem_cache *s, struct ak_slab *sl, void *fp)
{
	slab_stat(s, AK_SLAB_FREE_SLOW, 1);
	slab_free_chain(s, sl, fp, fp, 1);
}

/* Take the whole list in one op, keep n, put the rest back in one op. */
static size_t fl_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
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

static void fl_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
{
	struct fl_cpu *c = ak_this_cpu_ptr(fl_cpus(s));

	slab_group_chains(s, fps, n, bulk_free_chain,
			  __atomic_load_n(&c->slab, __ATOMIC_RELAXED));
}

/* With the cache quiet: every list back to the slabs, every slab thawed. */
static void fl_drain(struct ak_kmem_cache *s)
{
	unsigned int cpu;

	ak_for_each_cpu(cpu) {
		struct fl_cpu *c = ak_per_cpu_ptr(fl_cpus(s), cpu);
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
	/* last: the frees above may have put slabs on this slot's list */
	ak_for_each_cpu(cpu) {
		struct fl_partial *p = ak_per_cpu_ptr(s->slub.partial, cpu);
		struct ak_slab *list = p->head;

		p->head = NULL;
		p->ptid = (p->ptid & ~PC_COUNT_MASK) +
			  (s->slub.tid_step << PC_COUNT_BITS);
		if (list) {
			slab_unfreeze_partials(s, list);
			slab_stat(s, AK_SLAB_CPU_PARTIAL_DRAIN, 1);
		}
	}
}

/*
 * The head's count is its cpu_pobjects, and each slab's that of the next
 * plus at least one (fewer where it saturated).
 */
static bool fl_visit_partial(struct ak_kmem_cache *s, slab_visit_slab_fn fn,
			     void *arg)
{
	unsigned long i, want;
	unsigned int cpu;
	struct ak_slab *sl;
	bool ok = true;

	ak_for_each_cpu(cpu) {
		struct fl_partial *p = ak_per_cpu_ptr(s->slub.partial, cpu);

		want = PC_COUNT(p->ptid);
		if (!p->head && want)
			ok = false;
		for (sl = p->head, i = 0; sl; sl = sl->cpu_next) {
			fn(s, sl, arg);
			if (sl->cpu_pobjects != want ||
			    (want <= (sl->cpu_next ? sl->cpu_next->cpu_pobjects :
				      0) && want != PC_COUNT_MASK))
				ok = false;
			want = sl->cpu_next ? sl->cpu_next->cpu_pobjects : 0;
			/* a cycle would loop: the audit caught it */
			if (++i > s->nr_slabs) {
				ok = false;
				break;
			}
		}
	}
	return ok;
}

static void fl_visit(struct ak_kmem_cache *s, slab_visit_fn fn, void *arg)
{
	unsigned int cpu, i;
	void *fp;

	ak_for_each_cpu(cpu) {
		struct fl_cpu *c = ak_per_cpu_ptr(fl_cpus(s), cpu);

		for (fp = c->freelist, i = 0; fp; fp = fp_next(fp)) {
			fn(s, fp, arg);
			/* a cycle would loop: the audit caught it */
			if (++i > s->objects * s->nr_slabs + 1)
				break;
		}
	}
}

/*
 * tid_per_slot: tid = slot (mod step), so that a pair seen on one slot
 * never matches another (slub-*); rseq-list's seq needs no such thing.
 */
static int fl_init(struct ak_kmem_cache *s,
		   bool (*commit)(struct ak_kmem_cache *, struct fl_cpu *,
				  void *, unsigned long, void *),
		   bool tid_per_slot)
{
	unsigned int cpu, n = ak_nr_cpus();

	s->fast.cpu = ak_percpu_alloc(sizeof(struct fl_cpu), CACHELINE);
	if (!s->fast.cpu)
		return -1;
	s->slub.partial = ak_percpu_alloc(sizeof(struct fl_partial),
					  CACHELINE);
	if (!s->slub.partial) {
		ak_percpu_free(s->fast.cpu);
		s->fast.cpu = NULL;
		return -1;
	}
	s->slub.commit = commit;
	s->slub.tid_step = 1;
	while (s->slub.tid_step < n)
		s->slub.tid_step <<= 1;
	ak_for_each_cpu(cpu) {
		struct fl_cpu *c = ak_per_cpu_ptr(fl_cpus(s), cpu);

		c->id = cpu;
		c->tid = tid_per_slot ? cpu : 0;
		ak_per_cpu_ptr(s->slub.partial, cpu)->ptid =
			(unsigned long)cpu << PC_COUNT_BITS;
	}
	return 0;
}

static void fl_fini(struct ak_kmem_cache *s)
{
	ak_percpu_free(s->slub.partial);
	s->slub.partial = NULL;
	ak_percpu_free(s->fast.cpu);
	s->fast.cpu = NULL;
}

/* ---- slub-tid, slub-local: {freelist, tid} ---- */

__ak_inline void *tid_alloc(struct ak_kmem_cache *s, enum fl_kind kind)
{
	struct fl_cpu *c;
	unsigned long tid;
	void *fp, *next;

	for (;;) {
		c = ak_this_cpu_ptr(fl_cpus(s));
		tid = READ_ONCE(c->tid);
		ak_barrier();
		fp = READ_ONCE(c->freelist);
		if (ak_unlikely(!fp))
			return fl_alloc_slow(s);
		/* may be stale: slabs stay mapped, the commit then fails */
		next = fp_next(fp);
		if (ak_likely(fl_commit(s, kind, c, fp, tid, next)))
			return fp;
		slab_stat(s, AK_SLAB_FAST_RETRY, 1);
	}
}

__ak_inline void tid_free(struct ak_kmem_cache *s, enum fl_kind kind,
			  void *fp)
{
	struct ak_slab *sl = fp_slab(s, fp);
	struct fl_cpu *c;
	unsigned long tid;
	void *head;

	for (;;) {
		c = ak_this_cpu_ptr(fl_cpus(s));
		tid = READ_ONCE(c->tid);
		ak_barrier();
		if (ak_unlikely(__atomic_load_n(&c->slab, __ATOMIC_RELAXED) != sl))
			return fl_free_remote(s, sl, fp);
		head = READ_ONCE(c->freelist);
		fp_set(fp, head);
		if (ak_likely(fl_commit(s, kind, c, head, tid, fp)))
			return;
		slab_stat(s, AK_SLAB_FAST_RETRY, 1);
	}
}

static void *slub_tid_alloc(struct ak_kmem_cache *s)
{
	return tid_alloc(s, FL_TID);
}

static void slub_tid_free(struct ak_kmem_cache *s, void *fp)
{
	tid_free(s, FL_TID, fp);
}

SLAB_ENTRY_POINTS(slub_tid)

static int slub_tid_init(struct ak_kmem_cache *s,
			 const struct ak_kmem_cache_args *args)
{
	(void)args;
	return fl_init(s, tid_commit, true);
}

static const char *slub_tid_how(struct ak_kmem_cache *s, bool inlined)
{
	(void)inlined;
	return ak_percpu_mode_is_rseq(s->mode) ?
	       "this_cpu_cmpxchg128 of {freelist, tid}: rseq section, 16-byte commit" :
	       s->mode == AK_PERCPU_ATOMIC ?
	       "this_cpu_cmpxchg128 of {freelist, tid}: SMP-safe cmpxchg128 on sched_getcpu()'s slot" :
	       "this_cpu_cmpxchg128 of {freelist, tid}: cmpxchg128_local on the thread's slot";
}

const struct slab_design slab_slub_tid = {
	.name = "slub-tid",
	.entry = { slub_tid_entry_alloc, slub_tid_entry_free },
	.alloc = slub_tid_alloc,
	.free = slub_tid_free,
	.bulk_alloc_cpu = fl_bulk_alloc_cpu,
	.bulk_refill = fl_bulk_refill,
	.bulk_free = fl_bulk_free,
	.drain = fl_drain,
	.visit = fl_visit,
	.put_partial = fl_put_partial,
	.visit_partial = fl_visit_partial,
	.init = slub_tid_init,
	.fini = fl_fini,
	.how = slub_tid_how,
};

static void *slub_local_alloc(struct ak_kmem_cache *s)
{
	return tid_alloc(s, FL_LOCAL);
}

static void slub_local_free(struct ak_kmem_cache *s, void *fp)
{
	tid_free(s, FL_LOCAL, fp);
}

SLAB_ENTRY_POINTS(slub_local)

static int slub_local_init(struct ak_kmem_cache *s,
			   const struct ak_kmem_cache_args *args)
{
	(void)args;
	return fl_init(s, local_commit, true);
}

static const char *slub_local_how(struct ak_kmem_cache *s, bool inlined)
{
	(void)inlined;
	return ak_percpu_mode_is_rseq(s->mode) ?
	       "cmpxchg_double_local inside an rseq section (this_cpu_cmpxchg_double): a bare _local op would race other threads of the CPU" :
	       s->mode == AK_PERCPU_ATOMIC ?
	       "cmpxchg_double, the SMP-safe form, on the slot pinned once (cmpxchg_local is not safe across CPUs)" :
	       "cmpxchg_double_local on the thread's pinned slot";
}

const struct slab_design slab_slub_local = {
	.name = "slub-local",
	.entry = { slub_local_entry_alloc, slub_local_entry_free },
	.alloc = slub_local_alloc,
	.free = slub_local_free,
	.bulk_alloc_cpu = fl_bulk_alloc_cpu,
	.bulk_refill = fl_bulk_refill,
	.bulk_free = fl_bulk_free,
	.drain = fl_drain,
	.visit = fl_visit,
	.put_partial = fl_put_partial,
	.visit_partial = fl_visit_partial,
	.init = slub_local_init,
	.fini = fl_fini,
	.how = slub_local_how,
};

/* ---- rseq-list: the list ops, no tid ---- */

__ak_inline void *list_alloc(struct ak_kmem_cache *s)
{
	void *fp = ak_this_cpu_list_pop((struct ak_percpu_list *)s->fast.cpu);

	if (ak_unlikely(!fp))
		return fl_alloc_slow(s);
	return fp;
}

__ak_inline void list_free(struct ak_kmem_cache *s, void *fp)
{
	struct ak_slab *sl = fp_slab(s, fp);
	struct fl_cpu *c = ak_this_cpu_ptr(fl_cpus(s));

	/* the owner check is a hint: any list may hold any slab's objects */
	if (ak_unlikely(__atomic_load_n(&c->slab, __ATOMIC_RELAXED) != sl))
		return fl_free_remote(s, sl, fp);
	SLAB_WINDOW();
	ak_this_cpu_list_push((struct ak_percpu_list *)s->fast.cpu, fp);
}

SLAB_ENTRY_POINTS(list)

static int list_init(struct ak_kmem_cache *s,
		     const struct ak_kmem_cache_args *args)
{
	(void)args;
	return fl_init(s, list_commit, false);
}

static const char *list_how(struct ak_kmem_cache *s, bool inlined)
{
	if (inlined)
		return "list pop/push: one rseq section each, no tid, inline in the caller; the section reads the id itself and checks the owner";
	return ak_percpu_mode_is_rseq(s->mode) ?
	       "this_cpu_list_pop/push: one rseq section each, no tid" :
	       s->mode == AK_PERCPU_ATOMIC ?
	       "this_cpu_list_pop/push fallback: SMP-safe cmpxchg128 of {head, seq}" :
	       "this_cpu_list_pop/push fallback: cmpxchg128_local of {head, seq}";
}

const struct slab_design slab_rseq_list = {
	.name = "rseq-list",
	.entry = { list_entry_alloc, list_entry_free },
	.inline_kind = __AK_SLAB_INLINE_LIST,
	.alloc = list_alloc,
	.free = list_free,
	.bulk_alloc_cpu = fl_bulk_alloc_cpu,
	.bulk_refill = fl_bulk_refill,
	.bulk_free = fl_bulk_free,
	.drain = fl_drain,
	.visit = fl_visit,
	.put_partial = fl_put_partial,
	.visit_partial = fl_visit_partial,
	.init = list_init,
	.fini = fl_fini,
	.how = list_how,
};
