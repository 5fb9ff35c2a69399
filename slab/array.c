// SPDX-License-Identifier: MIT
/*
 * The SLAB-style design: a per-CPU array of free objects (fp space),
 * popped and pushed with this_cpu_array_pop/push, or by the inline
 * fastpath (<atomkit/slab/array.h>) with one rseq section each, on
 * s->fast; refilled from the slabs in batches when empty, flushed back
 * in batches when full.  Objects of any slab go into any array, as in
 * SLAB (no alien caches).
 *
 * The per-CPU API's bulk ops (array_ptr _n) work on a sheaf's layout, not
 * on struct ak_percpu_array, so a refill or flush moves its batch one
 * array op per object; taking the batch from the slabs is one lock hold.
 */
#include "internal.h"

#define MAX_BATCH	1024

/* The per-CPU arrays: the cache's per-CPU structure */
static inline struct ak_percpu_array *arrays(struct ak_kmem_cache *s)
{
	return s->fast.cpu;
}

static __attribute__((noinline)) void *array_alloc_slow(struct ak_kmem_cache *s)
{
	void *buf[MAX_BATCH], *fp;
	size_t k, i, from_new;

	slab_stat(s, AK_SLAB_ALLOC_SLOW, 1);
	k = slab_take_objects(s, s->array.batch, buf, SLAB_FROM_ANY,
			      &from_new);
	if (!k)
		return NULL;
	slab_stat(s, AK_SLAB_REFILL, 1);
	slab_stat(s, AK_SLAB_REFILL_OBJS, k);
	fp = buf[--k];
	for (i = 0; i < k; i++)
		if (ak_this_cpu_array_push(arrays(s), s->array.limit, buf[i]))
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

	while (k < n && (buf[k] = ak_this_cpu_array_pop(arrays(s))))
		k++;
	return k;
}

static size_t flush_batch(struct ak_kmem_cache *s)
{
	void *buf[MAX_BATCH];
	size_t k = array_pop_n(s, s->array.batch, buf);

	if (k) {
		slab_free_fps(s, buf, k);
		slab_stat(s, AK_SLAB_FLUSH, 1);
		slab_stat(s, AK_SLAB_FLUSH_OBJS, k);
	}
	return k;
}

static __attribute__((noinline)) void
array_free_slow(struct ak_kmem_cache *s, void *fp)
{
	slab_stat(s, AK_SLAB_FREE_SLOW, 1);
	flush_batch(s);
	if (ak_this_cpu_array_push(arrays(s), s->array.limit, fp)) {
		slab_stat(s, AK_SLAB_PCPU_BUSY, 1);
		slab_free_fps(s, &fp, 1);
	}
}

static size_t array_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
{
	return array_pop_n(s, n, fps);
}

static void array_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
{
	size_t i = 0, cpu = 0;

	while (i < n) {
		if (!ak_this_cpu_array_push(arrays(s), s->array.limit,
					    fps[i])) {
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

static void array_drain(struct ak_kmem_cache *s)
{
	unsigned int cpu;

	ak_for_each_cpu(cpu) {
		struct ak_percpu_array *a = ak_per_cpu_ptr(arrays(s), cpu);

		if (a->count) {
			slab_free_fps(s, a->slots, a->count);
			slab_stat(s, AK_SLAB_FLUSH, 1);
			slab_stat(s, AK_SLAB_FLUSH_OBJS, a->count);
		}
		a->count = 0;
	}
}

static void array_visit(struct ak_kmem_cache *s, slab_visit_fn fn, void *arg)
{
	unsigned int cpu, i;

	ak_for_each_cpu(cpu) {
		struct ak_percpu_array *a = ak_per_cpu_ptr(arrays(s), cpu);

		for (i = 0; i < a->count && i < s->array.limit; i++)
			fn(s, a->slots[i], arg);
	}
}

static unsigned int array_default_limit(size_t size)
{
	/* SLAB's enable_cpucache() */
	if (size > 4096)
		return 8;
	if (size > 1024)
		return 24;
	if (size > 256)
		return 54;
	return 120;
}

static int array_init(struct ak_kmem_cache *s,
		      const struct ak_kmem_cache_args *args)
{
	s->array.limit = args->array_limit ? args->array_limit :
					     array_default_limit(s->object_size);
	if (s->array.limit > MAX_BATCH)
		s->array.limit = MAX_BATCH;
	s->array.batch = args->array_batch ? args->array_batch :
					     (s->array.limit + 1) / 2;
	if (s->array.batch > s->array.limit)
		s->array.batch = s->array.limit;
	s->fast.limit = s->array.limit;
	s->fast.cpu = ak_percpu_alloc(ak_percpu_array_size(s->array.limit),
				      CACHELINE);
	return s->fast.cpu ? 0 : -1;
}

static void array_fini(struct ak_kmem_cache *s)
{
	ak_percpu_free(s->fast.cpu);
	s->fast.cpu = NULL;
}

/* ---- the fastpath ---- */

__ak_inline void *array_alloc(struct ak_kmem_cache *s)
{
	void *fp = ak_this_cpu_array_pop(arrays(s));

	if (ak_unlikely(!fp))
		return array_alloc_slow(s);
	return fp;
}

__ak_inline void array_free(struct ak_kmem_cache *s, void *fp)
{
	if (ak_unlikely(ak_this_cpu_array_push(arrays(s), s->array.limit, fp)))
		array_free_slow(s, fp);
}

SLAB_ENTRY_POINTS(array)

static const char *array_how(struct ak_kmem_cache *s, bool inlined)
{
	if (inlined)
		return "array pop/push: one rseq section each, inline in the caller; the section reads the id itself";
	return ak_percpu_mode_is_rseq(s->mode) ?
	       "this_cpu_array_pop/push: one rseq section each" :
	       "this_cpu_array_pop/push fallback: per-copy try-lock";
}

const struct slab_design slab_array = {
	.name = "array",
	.entry = { array_entry_alloc, array_entry_free },
	.inline_kind = __AK_SLAB_INLINE_ARRAY,
	.alloc = array_alloc,
	.free = array_free,
	.bulk_alloc_cpu = array_bulk_alloc_cpu,
	.bulk_refill = slab_bulk_refill,
	.bulk_free = array_bulk_free,
	.drain = array_drain,
	.visit = array_visit,
	.init = array_init,
	.fini = array_fini,
	.how = array_how,
	.slot_lists = true,
};
