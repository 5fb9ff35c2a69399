// SPDX-License-Identifier: MIT
/*
 * A caller built for one slab design, as a port fixing its allocator
 * builds it (AK_SLAB_DESIGN=array): tests/test_slab.c's fixed_design test
 * runs its calls on every design's cache and counts those that went to
 * the library.
 */
#include <stdint.h>

extern __thread unsigned long design_array_calls;
__thread unsigned long design_array_calls;

#define AK_SLAB_DESIGN		array
#define AK_SLAB_CALL_HOOK(s)	((void)(s), design_array_calls++)
#include <atomkit/slab.h>

AK_STATIC_ASSERT(AK_SLAB_DESIGN_FIXED == __AK_SLAB_INLINE_ARRAY,
		 "AK_SLAB_DESIGN=array names the array design's kind");

void *design_array_alloc(struct ak_kmem_cache *s);
void design_array_free(struct ak_kmem_cache *s, void *p);

void *design_array_alloc(struct ak_kmem_cache *s)
{
	return ak_kmem_cache_alloc(s, 0);
}

void design_array_free(struct ak_kmem_cache *s, void *p)
{
	ak_kmem_cache_free(s, p);
}
