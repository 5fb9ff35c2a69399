// SPDX-License-Identifier: MIT
/*
 * What every design shares: the public alloc/free calls, the checked
 * path for debug and statistics, and the bulk calls.  The public calls
 * are inline in <atomkit/slab.h>: for a cache whose kind says so they run
 * the design's rseq section themselves, and otherwise (or when it fails)
 * call __ak_kmem_cache_alloc/free here, which jump through s->alloc and
 * s->free, set once per cache: the checked path for a cache with debug
 * checks or statistics (so neither costs anything on the fastpath of a
 * cache without them), else the design's own entry points (struct
 * slab_design, one file each).  Without debug the free pointer is at
 * offset 0, so fp space and object pointers coincide here.
 *
 * Which primitive each step uses and why it is correct in each per-CPU
 * mode: doc/slab.md.
 */
#include <stdlib.h>
/* this file defines ak_kmem_cache_alloc and _free for the library */
#define AK_SLAB_NO_INLINE
#include "internal.h"

/* ---- the checked path: debug and statistics ---- */

static void *hooked_alloc(struct ak_kmem_cache *s, ak_gfp_t flags)
{
	void *fp = s->ops->alloc(s), *obj;

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
	if (ak_unlikely(!obj))
		return;
	if (s->flags & AK_SLAB_DEBUG) {
		if (!slab_debug_free(s, obj))
			return;
	} else {
		slab_asan_free(s, obj);
	}
	slab_stat_fast(s, AK_SLAB_FREE_FAST, 1);
	s->ops->free(s, obj_to_fp(s, obj));
}

/* ---- the API ---- */

/* Past the inline part: one jump, to the checked path or the design's. */
void *__ak_kmem_cache_alloc(struct ak_kmem_cache *s, ak_gfp_t flags)
{
	return s->alloc(s, flags);
}

void __ak_kmem_cache_free(struct ak_kmem_cache *s, void *p)
{
	s->free(s, p);
}

/* For callers that do not inline them: the same inline part, then the jump. */
void *ak_kmem_cache_alloc(struct ak_kmem_cache *s, ak_gfp_t flags)
{
	return __ak_kmem_cache_alloc_inline(s, flags);
}

void ak_kmem_cache_free(struct ak_kmem_cache *s, void *p)
{
	__ak_kmem_cache_free_inline(s, p);
}

void slab_entry_init(struct ak_kmem_cache *s)
{
	unsigned int k;

	s->fast.kind = __AK_SLAB_CALL;
	s->fast.id_off = AK_RSEQ_OP_NONE;
	for (k = 0; k < __AK_SLAB_NR_KINDS - 1; k++)
		s->fast.kind_off[k] = AK_RSEQ_OP_NONE;
	if (s->flags & (AK_SLAB_DEBUG | AK_SLAB_STATS)) {
		s->alloc = hooked_alloc;
		s->free = hooked_free;
		return;
	}
	s->alloc = s->ops->entry.alloc;
	s->free = s->ops->entry.free;
	/*
	 * The inline fastpath runs sections, and skips what the entry points
	 * do for ASan: neither where there are none, nor under ASan.
	 */
#if AK_HAVE_ARCH_RSEQ && !defined(AK_SLAB_ASAN)
	if (ak_percpu_mode_is_rseq(s->mode) &&
	    s->ops->inline_kind != __AK_SLAB_CALL) {
		s->fast.id_off = s->mode == AK_PERCPU_RSEQ_MM_CID ?
			offsetof(struct ak_rseq_abi, mm_cid) :
			offsetof(struct ak_rseq_abi, cpu_id);
		s->fast.kind = s->ops->inline_kind;
		s->fast.kind_off[s->fast.kind - 1] = s->fast.id_off;
	}
#endif
}

/* ---- bulk ---- */

size_t slab_bulk_refill(struct ak_kmem_cache *s, size_t n, void **fps,
			struct slab_bulk_from *from)
{
	size_t got, from_new;

	got = slab_take_objects(s, n, fps, SLAB_FROM_ANY, &from_new);
	from->partial += got - from_new;
	from->fresh += from_new;
	return got;
}

/*
 * The per-CPU level first (one critical section or lock hold where the
 * design has one), then the slot's partial slabs where the design has
 * them (as the kernel's "bulk allocation from per cpu partial pages"),
 * then the shared partial lists (one lock hold), then new slabs.  If
 * they cannot give n, everything taken goes back to the slabs and the
 * call fails whole.
 */
int ak_kmem_cache_alloc_bulk(struct ak_kmem_cache *s, ak_gfp_t flags,
			     size_t n, void **p)
{
	struct slab_bulk_from from = { 0 };
	size_t got, i;

	if (!n)
		return 0;
	if ((size_t)(int)n != n) {
		errno = EINVAL;
		return 0;
	}
	got = from.cpu = s->ops->bulk_alloc_cpu(s, n, p);
	if (got < n)
		got += s->ops->bulk_refill(s, n - got, p + got, &from);
	if (got < n) {
		slab_free_fps(s, p, got);
		slab_stat(s, AK_SLAB_BULK_ALLOC_FAIL, 1);
		errno = ENOMEM;
		return 0;
	}
	/* bulk_alloc_objs is the sum of the four (ak_kmem_cache_stats()) */
	slab_stat_fast(s, AK_SLAB_BULK_ALLOC, 1);
	slab_stat_fast(s, AK_SLAB_BULK_ALLOC_CPU, from.cpu);
	slab_stat(s, AK_SLAB_BULK_ALLOC_CPU_PARTIAL, from.cpu_partial);
	slab_stat(s, AK_SLAB_BULK_ALLOC_PARTIAL, from.partial);
	slab_stat(s, AK_SLAB_BULK_ALLOC_NEW, from.fresh);
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
		s->ops->bulk_free(s, n, p);	/* fp space is object space here */
		return;
	}
	for (i = 0; i < n;) {
		for (k = 0; i < n && k < 64; i++)
			if (p[i] && slab_debug_free(s, p[i]))
				buf[k++] = obj_to_fp(s, p[i]);
		if (k)
			s->ops->bulk_free(s, k, buf);
	}
}

/* ---- what the layer above may ask of the slab layer as a whole ---- */

unsigned int ak_kmem_cache_size(struct ak_kmem_cache *s)
{
	return s->object_size;
}

size_t ak_slab_refills(void)
{
	return slab_refill_count();
}

/* The caches in order, then the registry; released the other way. */
void ak_slab_fork(struct ak_kmem_cache *const *caches, unsigned int n,
		  bool take)
{
	unsigned int i;

	if (take) {
		for (i = 0; i < n; i++)
			if (caches[i])
				slab_fork_cache(caches[i], true);
		slab_fork_registry(true);
		return;
	}
	slab_fork_registry(false);
	for (i = n; i-- > 0;)
		if (caches[i])
			slab_fork_cache(caches[i], false);
}
