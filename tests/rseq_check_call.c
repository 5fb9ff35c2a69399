// SPDX-License-Identifier: MIT
/*
 * The library's own ak_kmem_cache_alloc/free, out of line, for the rseq
 * check's "call" cases: each has its own copy of the inline fastpaths'
 * sections, which the target's inline ones do not reach.
 */
#define AK_SLAB_NO_INLINE
#include <atomkit/slab.h>

void *rc_call_alloc(struct ak_kmem_cache *s);
void rc_call_free(struct ak_kmem_cache *s, void *p);

void *rc_call_alloc(struct ak_kmem_cache *s)
{
	return ak_kmem_cache_alloc(s, 0);
}

void rc_call_free(struct ak_kmem_cache *s, void *p)
{
	ak_kmem_cache_free(s, p);
}
