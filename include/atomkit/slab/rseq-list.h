/* SPDX-License-Identifier: MIT */
/*
 * The rseq-list design's inline fastpath (doc/slab.md, "rseq-list"): pop
 * and push on this CPU's free list, one rseq section each.  A free goes
 * onto the list only if its object's slab (its address masked with
 * f->slab_mask) is the slab the slot owns, the word after the list's
 * {head, seq} in the copy; that compare runs inside the push's section,
 * on the copy it pushes onto.  Any other object goes to its own slab,
 * through the library.  Included by <atomkit/slab.h> for a cache of kind
 * __AK_SLAB_INLINE_LIST: 0 done, 1 empty or another slab's, -1 aborted.
 */
#ifndef ATOMKIT_SLAB_RSEQ_LIST_H
#define ATOMKIT_SLAB_RSEQ_LIST_H

#ifndef ATOMKIT_SLAB_H
# error "include <atomkit/slab.h>, which includes this"
#endif

#if AK_HAVE_ARCH_RSEQ
__ak_inline int __ak_slab_list_alloc(const struct ak_kmem_cache_fast *f,
				     struct ak_rseq_abi *rs,
				     const uint32_t *idp, void **p)
{
	return ak_rseq_list_pop(rs, idp, &f->cpu, &f->cpu_stride, p);
}

__ak_inline int __ak_slab_list_free(const struct ak_kmem_cache_fast *f,
				    struct ak_rseq_abi *rs,
				    const uint32_t *idp, void *p)
{
	return ak_rseq_list_push_owned(rs, idp, &f->cpu, &f->cpu_stride,
				       (uintptr_t)p & __ak_slab_mask(f), p);
}
#endif

#endif /* ATOMKIT_SLAB_RSEQ_LIST_H */
