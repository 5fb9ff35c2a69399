/* SPDX-License-Identifier: MIT */
/*
 * The array design's inline fastpath (doc/slab.md, "array"): pop and
 * push on this CPU's struct ak_percpu_array, one rseq section each, on
 * the cache's per-CPU copies (f->cpu, f->cpu_stride) with f->limit
 * slots.  Any object of the cache may go into any copy, so a free checks
 * no owner.  Included by <atomkit/slab.h>, which runs it for a cache of
 * kind __AK_SLAB_INLINE_ARRAY: 0 done, 1 empty or full, -1 aborted.
 */
#ifndef ATOMKIT_SLAB_ARRAY_H
#define ATOMKIT_SLAB_ARRAY_H

#ifndef ATOMKIT_SLAB_H
# error "include <atomkit/slab.h>, which includes this"
#endif

#if AK_HAVE_ARCH_RSEQ
__ak_inline int __ak_slab_array_alloc(const struct ak_kmem_cache_fast *f,
				      struct ak_rseq_abi *rs,
				      const uint32_t *idp, void **p)
{
	return ak_rseq_array_pop(rs, idp, &f->cpu, &f->cpu_stride, p);
}

__ak_inline int __ak_slab_array_free(const struct ak_kmem_cache_fast *f,
				     struct ak_rseq_abi *rs,
				     const uint32_t *idp,
				     unsigned long limit, void *p)
{
	return ak_rseq_array_push(rs, idp, &f->cpu, &f->cpu_stride,
				  limit, p);
}
#endif

#endif /* ATOMKIT_SLAB_ARRAY_H */
