// SPDX-License-Identifier: MIT
/*
 * The SLAB-style design: a per-CPU array of free objects (fp space),
 * popped and pushed with this_cpu_array_pop/push; refilled from the slabs
 * in batches when empty, flushed back in batches when full.  Objects of
 * any slab go into any array, as in SLAB (no alien caches).
 *
 * atomkit has no bulk array op yet, so a refill or flush moves its batch
 * one op per object; taking the batch from the slabs is one lock hold.
 */
#include "internal.h"

#define MAX_BATCH	1024

void *array_alloc_slow(struct ak_kmem_cache *s)
{
	void *buf[MAX_BATCH], *fp;
	size_t k, i, from_new;

	slab_stat(s, AK_SLAB_ALLOC_SLOW, 1);
	k = slab_take_objects(s, s->array_batch, buf, SLAB_FROM_ANY,
			      &from_new);
	if (!k)
		return NULL;
	slab_stat(s, AK_SLAB_REFILL, 1);
	slab_stat(s, AK_SLAB_REFILL_OBJS, k);
	fp = buf[--k];
	for (i = 0; i < k; i++)
		if (ak_this_cpu_array_push((struct ak_percpu_array *)s->cpu,
					   s->array_limit, buf[i]))
			break;
	if (i < k) {
		/* full or busy meanwhile (another thread, a migration) */
		slab_stat(s, AK_SLAB_PCPU_BUSY, 1);
		slab_free_fps(s, buf + i, k - i);
	}
	return fp;
}

/* Pop up to n from this CPU's array into buf; how many. */
static size_t array_pop_n(struct ak_kmem_cache *s, size_t n, void **buf)
{
	size_t k = 0;

	while (k < n && (buf[k] = ak_this_cpu_array_pop(
				 (struct ak_percpu_array *)s->cpu)))
		k++;
	return k;
}

static size_t flush_batch(struct ak_kmem_cache *s)
{
	void *buf[MAX_BATCH];
	size_t k = array_pop_n(s, s->array_batch, buf);

	if (k) {
		slab_free_fps(s, buf, k);
		slab_stat(s, AK_SLAB_FLUSH, 1);
		slab_stat(s, AK_SLAB_FLUSH_OBJS, k);
	}
	return k;
}

void array_free_slow(struct ak_kmem_cache *s, void *fp)
{
	slab_stat(s, AK_SLAB_FREE_SLOW, 1);
	flush_batch(s);
	if (ak_this_cpu_array_push((struct ak_percpu_array *)s->cpu,
				   s->array_limit, fp)) {
		slab_stat(s, AK_SLAB_PCPU_BUSY, 1);
		slab_free_fps(s, &fp, 1);
	}
}

size_t array_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
{
	return array_pop_n(s, n, fps);
}

void array_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
{
	size_t i = 0, cpu = 0;

	while (i < n) {
		if (!ak_this_cpu_array_push((struct ak_percpu_array *)s->cpu,
					    s->array_limit, fps[i])) {
			i++;
			cpu++;
			continue;
		}
		/* full: make room as a single free would; busy: give up */
		if (!flush_batch(s))
			break;
	}
	if (i < n)
		slab_free_fps(s, fps + i, n - i);
	slab_stat_fast(s, AK_SLAB_BULK_FREE_CPU, cpu);
	slab_stat(s, AK_SLAB_BULK_FREE_SLAB, n - i);
}

void array_drain(struct ak_kmem_cache *s)
{
	unsigned int cpu;

	ak_for_each_cpu(cpu) {
		struct ak_percpu_array *a =
			ak_per_cpu_ptr((struct ak_percpu_array *)s->cpu, cpu);

		if (a->count) {
			slab_free_fps(s, a->slots, a->count);
			slab_stat(s, AK_SLAB_FLUSH, 1);
			slab_stat(s, AK_SLAB_FLUSH_OBJS, a->count);
		}
		a->count = 0;
	}
}
