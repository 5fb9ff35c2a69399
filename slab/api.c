// SPDX-License-Identifier: MIT
/*
 * The fastpaths of the six designs and the public alloc/free calls.  The
 * public calls jump through s->alloc and s->free: the general path, where
 * one switch on s->kind picks the design (a cache with debug checks or
 * statistics has kind K_HOOKED, so neither costs anything on the
 * fastpath of a cache without them), or the rseq entry points of the
 * array, rseq-list and sheaf designs.  Without debug the free pointer is at
 * offset 0, so fp space and object pointers coincide here.
 *
 * Which primitive each step uses and why it is correct in each per-CPU
 * mode: doc/slab.md.
 */
#include <stdlib.h>
#include "internal.h"

/* ---- slub-tid, slub-local, rseq-list: per-CPU freelists ---- */

__ak_inline ak_u128 pair_of(void *head, unsigned long tid)
{
	return ak_u128_from_words((uintptr_t)head, tid);
}

/*
 * Commit {head, tid} -> {nhead, tid + step} for the design:
 *   slub-tid    this_cpu_cmpxchg128 on whichever slot we are on; tids are
 *               unique per slot (tid = slot mod step), so a snapshot taken
 *               on another slot never matches
 *   slub-local  the slot c was pinned before the snapshot: thread mode
 *               cmpxchg128_local, atomic mode the SMP-safe cmpxchg128 on
 *               c, rseq modes only inside a section (this_cpu_cmpxchg128)
 */
__ak_inline bool tid_commit(struct ak_kmem_cache *s, unsigned int kind,
				   struct fl_cpu *c, void *head,
				   unsigned long tid, void *nhead)
{
	ak_u128 o = pair_of(head, tid), n = pair_of(nhead, tid + s->tid_step);

	if (kind == K_LOCAL) {
		if (s->mode == AK_PERCPU_THREAD)
			return ak_try_cmpxchg128_local(&c->pair, &o, n);
		if (s->mode == AK_PERCPU_ATOMIC)
			return ak_try_cmpxchg128(&c->pair, &o, n);
	}
	return ak_this_cpu_try_cmpxchg128((ak_u128 *)s->cpu, &o, n);
}

__ak_inline void *tid_alloc(struct ak_kmem_cache *s, unsigned int kind)
{
	struct fl_cpu *c;
	unsigned long tid;
	void *fp, *next;

	for (;;) {
		c = ak_this_cpu_ptr((struct fl_cpu *)s->cpu);
		tid = READ_ONCE(c->tid);
		ak_barrier();
		fp = READ_ONCE(c->freelist);
		if (ak_unlikely(!fp))
			return fl_alloc_slow(s);
		/* may be stale: slabs stay mapped, the commit then fails */
		next = fp_next(fp);
		SLAB_WINDOW();
		if (ak_likely(tid_commit(s, kind, c, fp, tid, next)))
			return fp;
		slab_stat(s, AK_SLAB_FAST_RETRY, 1);
	}
}

__ak_inline void tid_free(struct ak_kmem_cache *s, unsigned int kind,
				 void *fp)
{
	struct ak_slab *sl = fp_slab(s, fp);
	struct fl_cpu *c;
	unsigned long tid;
	void *head;

	for (;;) {
		c = ak_this_cpu_ptr((struct fl_cpu *)s->cpu);
		tid = READ_ONCE(c->tid);
		ak_barrier();
		if (ak_unlikely(__atomic_load_n(&c->slab, __ATOMIC_RELAXED) != sl))
			return fl_free_remote(s, sl, fp);
		head = READ_ONCE(c->freelist);
		fp_set(fp, head);
		SLAB_WINDOW();
		if (ak_likely(tid_commit(s, kind, c, head, tid, fp)))
			return;
		slab_stat(s, AK_SLAB_FAST_RETRY, 1);
	}
}

__ak_inline void *list_alloc(struct ak_kmem_cache *s)
{
	void *fp = ak_this_cpu_list_pop((struct ak_percpu_list *)s->cpu);

	if (ak_unlikely(!fp))
		return fl_alloc_slow(s);
	return fp;
}

__ak_inline void list_free(struct ak_kmem_cache *s, void *fp)
{
	struct ak_slab *sl = fp_slab(s, fp);
	struct fl_cpu *c = ak_this_cpu_ptr((struct fl_cpu *)s->cpu);

	/* the owner check is a hint: any list may hold any slab's objects */
	if (ak_unlikely(__atomic_load_n(&c->slab, __ATOMIC_RELAXED) != sl))
		return fl_free_remote(s, sl, fp);
	SLAB_WINDOW();
	ak_this_cpu_list_push((struct ak_percpu_list *)s->cpu, fp);
}

/* ---- array ---- */

__ak_inline void *array_alloc(struct ak_kmem_cache *s)
{
	void *fp = ak_this_cpu_array_pop((struct ak_percpu_array *)s->cpu);

	if (ak_unlikely(!fp))
		return array_alloc_slow(s);
	return fp;
}

__ak_inline void array_free(struct ak_kmem_cache *s, void *fp)
{
	if (ak_unlikely(ak_this_cpu_array_push((struct ak_percpu_array *)s->cpu,
					       s->array_limit, fp)))
		array_free_slow(s, fp);
}

/* ---- sheaf ---- */

__ak_inline struct sheaf *sheaf_take(struct ak_kmem_cache *s)
{
	struct sheaf *sh = ak_this_cpu_xchg((struct sheaf **)s->cpu,
					    (struct sheaf *)NULL);

	/* the atomic mode's ops are relaxed; the others stay on one CPU */
	if (s->mode == AK_PERCPU_ATOMIC)
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return sh;
}

__ak_inline void *sheaf_alloc(struct ak_kmem_cache *s)
{
	struct sheaf *sh = sheaf_take(s);
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
	struct sheaf *sh = sheaf_take(s);

	if (ak_unlikely(!sh || sh->size >= s->sheaf_cap))
		return sheaf_free_slow(s, sh, fp);
	sh->objs[sh->size++] = fp;
	sheaf_put_back(s, sh);
}

/* ---- by design, in fp space ---- */

__ak_inline void *design_alloc(struct ak_kmem_cache *s, unsigned int k)
{
	switch (k) {
	case K_TID:
		return tid_alloc(s, K_TID);
	case K_LOCAL:
		return tid_alloc(s, K_LOCAL);
	case K_LIST:
		return list_alloc(s);
	case K_ARRAY:
		return array_alloc(s);
	case K_SHEAF:
		return sheaf_alloc(s);
	default:
		return locked_alloc(s);
	}
}

__ak_inline void design_free(struct ak_kmem_cache *s, unsigned int k,
				    void *fp)
{
	switch (k) {
	case K_TID:
		tid_free(s, K_TID, fp);
		break;
	case K_LOCAL:
		tid_free(s, K_LOCAL, fp);
		break;
	case K_LIST:
		list_free(s, fp);
		break;
	case K_ARRAY:
		array_free(s, fp);
		break;
	case K_SHEAF:
		sheaf_free(s, fp);
		break;
	default:
		locked_free(s, fp);
		break;
	}
}

void *slab_design_alloc(struct ak_kmem_cache *s)
{
	return design_alloc(s, s->fastpath);
}

void slab_design_free(struct ak_kmem_cache *s, void *fp)
{
	design_free(s, s->fastpath, fp);
}

/* ---- the checked path: debug and statistics ---- */

static void *hooked_alloc(struct ak_kmem_cache *s, ak_gfp_t flags)
{
	void *fp = slab_design_alloc(s), *obj;

	slab_stat_fast(s, AK_SLAB_ALLOC_FAST, 1);
	if (!fp) {
		errno = ENOMEM;
		return NULL;
	}
	obj = fp_to_obj(s, fp);
	if (s->flags & AK_SLAB_DEBUG)
		slab_debug_alloc(s, obj);
	else
		slab_asan_alloc(s, obj);
	if (flags & AK_GFP_ZERO)
		memset(obj, 0, s->object_size);
	return obj;
}

static void hooked_free(struct ak_kmem_cache *s, void *obj)
{
	if (s->flags & AK_SLAB_DEBUG) {
		if (!slab_debug_free(s, obj))
			return;
	} else {
		slab_asan_free(s, obj);
	}
	slab_stat_fast(s, AK_SLAB_FREE_FAST, 1);
	slab_design_free(s, obj_to_fp(s, obj));
}

/* ---- the API ---- */

static void *alloc_general(struct ak_kmem_cache *s, ak_gfp_t flags)
{
	unsigned int k = s->kind;
	void *p;

	if (ak_unlikely(k == K_HOOKED))
		return hooked_alloc(s, flags);
	p = design_alloc(s, k);
	if (ak_unlikely(!p)) {
		errno = ENOMEM;
		return NULL;
	}
	slab_asan_alloc(s, p);
	if (ak_unlikely(flags & AK_GFP_ZERO))
		memset(p, 0, s->object_size);
	return p;
}

static void free_general(struct ak_kmem_cache *s, void *p)
{
	unsigned int k = s->kind;

	if (ak_unlikely(!p))
		return;
	if (ak_unlikely(k == K_HOOKED))
		return hooked_free(s, p);
	slab_asan_free(s, p);
	design_free(s, k, p);
}

/* One jump through the cache: the general path or the design's leaf. */
void *ak_kmem_cache_alloc(struct ak_kmem_cache *s, ak_gfp_t flags)
{
	return s->alloc(s, flags);
}

void ak_kmem_cache_free(struct ak_kmem_cache *s, void *p)
{
	s->free(s, p);
}

/*
 * ---- the rseq entry points ----
 *
 * The sections of this_cpu_array_pop/push and this_cpu_list_pop/push in
 * an rseq mode, and sheaf's pop and push on main in place (the array_ptr
 * sections), in their _at forms, without what the general ops do
 * around them on every call: the mode's load and switch, the thread's
 * first-use check, the stride from the per-CPU header, the design
 * switch.  Anything but a clean commit (an empty or full array, an empty
 * list, a foreign slab, an abort, a thread not yet seen) goes to the
 * general path, which does it all again.  Not under ASan, whose
 * annotations live on the general path.
 */
#if AK_HAVE_ARCH_RSEQ && !defined(AK_SLAB_ASAN)
# define SLAB_RSEQ_ENTRIES 1
#endif

#ifdef SLAB_RSEQ_ENTRIES
static __attribute__((noinline)) void *
alloc_aborted(struct ak_kmem_cache *s, ak_gfp_t flags)
{
	ak_rseq_count_abort();
	return alloc_general(s, flags);
}

static __attribute__((noinline)) void free_aborted(struct ak_kmem_cache *s,
						   void *p)
{
	ak_rseq_count_abort();
	free_general(s, p);
}

__ak_inline int array_pop_at(struct ak_kmem_cache *s, struct ak_rseq_abi *rs,
			     const uint32_t *start, const uint32_t *field,
			     void **fp)
{
	(void)start;
	return ak_rseq_array_pop(rs, field, &s->cpu, &s->cpu_stride, fp);
}

__ak_inline int array_push_at(struct ak_kmem_cache *s, struct ak_rseq_abi *rs,
			      const uint32_t *start, const uint32_t *field,
			      void *fp)
{
	(void)start;
	return ak_rseq_array_push(rs, field, &s->cpu, &s->cpu_stride,
				  s->array_limit, fp);
}

__ak_inline int list_pop_at(struct ak_kmem_cache *s, struct ak_rseq_abi *rs,
			    const uint32_t *start, const uint32_t *field,
			    void **fp)
{
	(void)start;
	return ak_rseq_list_pop(rs, field, &s->cpu, &s->cpu_stride, fp);
}

__ak_inline int list_push_at(struct ak_kmem_cache *s, struct ak_rseq_abi *rs,
			     const uint32_t *start, const uint32_t *field,
			     void *fp)
{
	struct fl_cpu *c = (struct fl_cpu *)((char *)s->cpu + s->cpu_stride *
				__atomic_load_n(start, __ATOMIC_RELAXED));

	/* the owner check, as list_free: a hint, so read outside */
	if (__atomic_load_n(&c->slab, __ATOMIC_RELAXED) != fp_slab(s, fp))
		return 1;
	return ak_rseq_list_push(rs, field, &s->cpu, &s->cpu_stride, fp);
}

/* sheaf: main, at +0 of the slot, popped and pushed in place */
__ak_inline int sheaf_pop_at(struct ak_kmem_cache *s, struct ak_rseq_abi *rs,
			     const uint32_t *start, const uint32_t *field,
			     void **fp)
{
	(void)start;
	return ak_rseq_array_ptr_pop(rs, field, &s->cpu, &s->cpu_stride, fp);
}

__ak_inline int sheaf_push_at(struct ak_kmem_cache *s, struct ak_rseq_abi *rs,
			      const uint32_t *start, const uint32_t *field,
			      void *fp)
{
	(void)start;
	return ak_rseq_array_ptr_push(rs, field, &s->cpu, &s->cpu_stride,
				      s->sheaf_cap, fp);
}

/*
 * A design's entry points in one mode: the id's fields at fixed offsets.
 * ak_rseq_area() is NULL until the thread's first general per-CPU op.
 */
#define RSEQ_ENTRIES(name, design, start, field)			\
static void *name##_alloc(struct ak_kmem_cache *s, ak_gfp_t flags)	\
{									\
	struct ak_rseq_abi *rs = ak_rseq_area();			\
	void *p;							\
	int rc;								\
									\
	if (ak_unlikely(flags || !rs))					\
		return alloc_general(s, flags);				\
	rc = design##_pop_at(s, rs, &rs->start, &rs->field, &p);	\
	if (ak_likely(!rc))						\
		return p;						\
	if (rc < 0)							\
		return alloc_aborted(s, flags);				\
	return alloc_general(s, flags);					\
}									\
static void name##_free(struct ak_kmem_cache *s, void *p)		\
{									\
	struct ak_rseq_abi *rs = ak_rseq_area();			\
	int rc;								\
									\
	if (ak_unlikely(!p || !rs))					\
		return free_general(s, p);				\
	rc = design##_push_at(s, rs, &rs->start, &rs->field, p);	\
	if (ak_likely(!rc))						\
		return;							\
	if (rc < 0)							\
		return free_aborted(s, p);				\
	free_general(s, p);						\
}

RSEQ_ENTRIES(array_rseq, array, cpu_id_start, cpu_id)
RSEQ_ENTRIES(array_mm_cid, array, mm_cid, mm_cid)
RSEQ_ENTRIES(list_rseq, list, cpu_id_start, cpu_id)
RSEQ_ENTRIES(list_mm_cid, list, mm_cid, mm_cid)
RSEQ_ENTRIES(sheaf_rseq, sheaf, cpu_id_start, cpu_id)
RSEQ_ENTRIES(sheaf_mm_cid, sheaf, mm_cid, mm_cid)
#endif /* SLAB_RSEQ_ENTRIES */

bool slab_entry_is_leaf(const struct ak_kmem_cache *s)
{
	return s->alloc != alloc_general;
}

void slab_entry_init(struct ak_kmem_cache *s)
{
	bool mm = s->mode == AK_PERCPU_RSEQ_MM_CID;

	s->alloc = alloc_general;
	s->free = free_general;
#ifdef SLAB_RSEQ_ENTRIES
	if (!ak_percpu_mode_is_rseq(s->mode))
		return;
	if (s->kind == K_ARRAY) {
		s->alloc = mm ? array_mm_cid_alloc : array_rseq_alloc;
		s->free = mm ? array_mm_cid_free : array_rseq_free;
	} else if (s->kind == K_LIST) {
		s->alloc = mm ? list_mm_cid_alloc : list_rseq_alloc;
		s->free = mm ? list_mm_cid_free : list_rseq_free;
	} else if (s->kind == K_SHEAF) {
		s->alloc = mm ? sheaf_mm_cid_alloc : sheaf_rseq_alloc;
		s->free = mm ? sheaf_mm_cid_free : sheaf_rseq_free;
	}
#else
	(void)mm;
#endif
}

/* ---- bulk ---- */

static size_t bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
{
	switch (s->fastpath) {
	case AK_SLAB_SLUB_TID:
	case AK_SLAB_SLUB_LOCAL:
	case AK_SLAB_RSEQ_LIST:
		return fl_bulk_alloc_cpu(s, n, fps);
	case AK_SLAB_ARRAY:
		return array_bulk_alloc_cpu(s, n, fps);
	case AK_SLAB_SHEAF:
		return sheaf_bulk_alloc_cpu(s, n, fps);
	default:
		return locked_bulk_alloc_cpu(s, n, fps);
	}
}

static void bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
{
	switch (s->fastpath) {
	case AK_SLAB_SLUB_TID:
	case AK_SLAB_SLUB_LOCAL:
	case AK_SLAB_RSEQ_LIST:
		fl_bulk_free(s, n, fps);
		break;
	case AK_SLAB_ARRAY:
		array_bulk_free(s, n, fps);
		break;
	case AK_SLAB_SHEAF:
		sheaf_bulk_free(s, n, fps);
		break;
	default:
		locked_bulk_free(s, n, fps);
		break;
	}
}

/*
 * The per-CPU level first (one critical section or lock hold where the
 * design has one), then the partial lists (one lock hold), then new
 * slabs.  If they cannot give n, everything taken goes back to the slabs
 * and the call fails whole.
 */
int ak_kmem_cache_alloc_bulk(struct ak_kmem_cache *s, ak_gfp_t flags,
			     size_t n, void **p)
{
	size_t cpu, got, partial = 0, fresh = 0, i;

	if (!n)
		return 0;
	if ((size_t)(int)n != n) {
		errno = EINVAL;
		return 0;
	}
	got = cpu = bulk_alloc_cpu(s, n, p);
	if (got < n && s->fastpath <= AK_SLAB_RSEQ_LIST) {
		got += fl_bulk_refill(s, n - got, p + got, &cpu, &partial,
				      &fresh);
	} else if (got < n) {
		i = slab_take_objects(s, n - got, p + got, SLAB_FROM_ANY,
				      &fresh);
		partial = i - fresh;
		got += i;
	}
	if (got < n) {
		slab_free_fps(s, p, got);
		slab_stat(s, AK_SLAB_BULK_ALLOC_FAIL, 1);
		errno = ENOMEM;
		return 0;
	}
	/* bulk_alloc_objs is the sum of the three (ak_kmem_cache_stats()) */
	slab_stat_fast(s, AK_SLAB_BULK_ALLOC, 1);
	slab_stat_fast(s, AK_SLAB_BULK_ALLOC_CPU, cpu);
	slab_stat(s, AK_SLAB_BULK_ALLOC_PARTIAL, partial);
	slab_stat(s, AK_SLAB_BULK_ALLOC_NEW, fresh);
#ifndef AK_SLAB_ASAN
	/* fp space is object space, and nothing to check or clear */
	if (!(s->flags & AK_SLAB_DEBUG) && !(flags & AK_GFP_ZERO))
		return (int)n;
#endif
	for (i = 0; i < n; i++) {
		p[i] = fp_to_obj(s, p[i]);
		if (s->flags & AK_SLAB_DEBUG)
			slab_debug_alloc(s, p[i]);
		else
			slab_asan_alloc(s, p[i]);
		if (flags & AK_GFP_ZERO)
			memset(p[i], 0, s->object_size);
	}
	return (int)n;
}

void ak_kmem_cache_free_bulk(struct ak_kmem_cache *s, size_t n, void **p)
{
	void *buf[64];
	size_t i, k;

	if (!n)
		return;
	/* bulk_free_objs: bulk_free_cpu + bulk_free_slab, as they count */
	slab_stat_fast(s, AK_SLAB_BULK_FREE, 1);
	if (!(s->flags & AK_SLAB_DEBUG)) {
		for (i = 0; i < n; i++)
			slab_asan_free(s, p[i]);
		bulk_free(s, n, p);	/* fp space is object space here */
		return;
	}
	for (i = 0; i < n;) {
		for (k = 0; i < n && k < 64; i++)
			if (p[i] && slab_debug_free(s, p[i]))
				buf[k++] = obj_to_fp(s, p[i]);
		if (k)
			bulk_free(s, k, buf);
	}
}

/* ---- what each design holds, for the audit ---- */

void slab_visit_cached(struct ak_kmem_cache *s, slab_visit_fn fn, void *arg)
{
	unsigned int cpu, i;
	void *fp;

	switch (s->fastpath) {
	case AK_SLAB_SLUB_TID:
	case AK_SLAB_SLUB_LOCAL:
	case AK_SLAB_RSEQ_LIST:
		ak_for_each_cpu(cpu) {
			struct fl_cpu *c = ak_per_cpu_ptr((struct fl_cpu *)s->cpu,
							  cpu);

			for (fp = c->freelist, i = 0; fp; fp = fp_next(fp)) {
				fn(s, fp, arg);
				/* a cycle would loop: the audit caught it */
				if (++i > s->objects * s->nr_slabs + 1)
					break;
			}
		}
		break;
	case AK_SLAB_ARRAY:
		ak_for_each_cpu(cpu) {
			struct ak_percpu_array *a =
				ak_per_cpu_ptr((struct ak_percpu_array *)s->cpu,
					       cpu);

			for (i = 0; i < a->count && i < s->array_limit; i++)
				fn(s, a->slots[i], arg);
		}
		break;
	case AK_SLAB_SHEAF:
		sheaf_visit_cached(s, fn, arg);
		break;
	default:
		for (fp = s->locked.head, i = 0; fp; fp = fp_next(fp)) {
			fn(s, fp, arg);
			if (++i > s->objects * s->nr_slabs + 1)
				break;
		}
		break;
	}
}
