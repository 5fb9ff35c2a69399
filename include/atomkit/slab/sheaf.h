/* SPDX-License-Identifier: MIT */
/*
 * The sheaf design's inline fastpath (doc/slab.md, "sheaf"): pop and
 * push on this CPU's main sheaf in place, one array_ptr rseq section
 * each: the copy holds the pointer to main, {size, objs[f->limit]}.  A
 * section finds main absent while the library's general path has taken
 * it out of the slot, and was aborted if it ran when that happened.  Any
 * object of the cache may go into any sheaf: no owner to check.
 * Included by <atomkit/slab.h> for a cache of kind
 * __AK_SLAB_INLINE_SHEAF: 0 done, 1 empty, full or absent, -1 aborted.
 */
#ifndef ATOMKIT_SLAB_SHEAF_H
#define ATOMKIT_SLAB_SHEAF_H

#ifndef ATOMKIT_SLAB_H
# error "include <atomkit/slab.h>, which includes this"
#endif

#if AK_HAVE_ARCH_RSEQ
__ak_inline int __ak_slab_sheaf_alloc(const struct ak_kmem_cache_fast *f,
				      struct ak_rseq_abi *rs,
				      const uint32_t *idp, void **p)
{
	return ak_rseq_array_ptr_pop(rs, idp, &f->cpu, &f->cpu_stride, p);
}

__ak_inline int __ak_slab_sheaf_free(const struct ak_kmem_cache_fast *f,
				     struct ak_rseq_abi *rs,
				     const uint32_t *idp,
				     unsigned long limit, void *p)
{
	return ak_rseq_array_ptr_push(rs, idp, &f->cpu, &f->cpu_stride,
				      limit, p);
}
#endif

#endif /* ATOMKIT_SLAB_SHEAF_H */
