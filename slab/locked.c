// SPDX-License-Identifier: MIT
/*
 * The baseline: one mutex per cache over one freelist (fp space), refilled
 * from the slabs in a batch when empty and trimmed by a batch when it
 * holds more than four.  No per-CPU state at all.
 */
#include "internal.h"

#define MAX_BATCH	1024

void *locked_alloc(struct ak_kmem_cache *s)
{
	void *buf[MAX_BATCH], *fp;
	size_t k, i, from_new;

	pthread_mutex_lock(&s->locked.lock);
	fp = s->locked.head;
	if (ak_likely(fp)) {
		s->locked.head = fp_next(fp);
		s->locked.count--;
		pthread_mutex_unlock(&s->locked.lock);
		return fp;
	}
	slab_stat(s, AK_SLAB_ALLOC_SLOW, 1);
	k = slab_take_objects(s, s->locked_batch, buf, SLAB_FROM_ANY,
			      &from_new);
	if (k) {
		for (i = 1; i + 1 < k; i++)
			fp_set(buf[i], buf[i + 1]);
		if (k > 1)
			fp_set(buf[k - 1], NULL);
		s->locked.head = k > 1 ? buf[1] : NULL;
		s->locked.count = k - 1;
		slab_stat(s, AK_SLAB_REFILL, 1);
		slab_stat(s, AK_SLAB_REFILL_OBJS, k);
	}
	pthread_mutex_unlock(&s->locked.lock);
	return k ? buf[0] : NULL;
}

/* Under the lock: past four batches, detach all but two. */
static void *trim(struct ak_kmem_cache *s, unsigned long *n)
{
	void *head, *p;
	unsigned long i;

	*n = 0;
	if (s->locked.count <= 4ul * s->locked_batch)
		return NULL;
	*n = s->locked.count - 2ul * s->locked_batch;
	head = p = s->locked.head;
	for (i = 1; i < *n; i++)
		p = fp_next(p);
	s->locked.head = fp_next(p);
	fp_set(p, NULL);
	s->locked.count -= *n;
	return head;
}

static void trimmed(struct ak_kmem_cache *s, void *head, unsigned long n)
{
	if (!head)
		return;
	slab_free_chain_any(s, head);
	slab_stat(s, AK_SLAB_FLUSH, 1);
	slab_stat(s, AK_SLAB_FLUSH_OBJS, n);
}

void locked_free(struct ak_kmem_cache *s, void *fp)
{
	unsigned long n;
	void *excess;

	pthread_mutex_lock(&s->locked.lock);
	fp_set(fp, s->locked.head);
	s->locked.head = fp;
	s->locked.count++;
	excess = trim(s, &n);
	pthread_mutex_unlock(&s->locked.lock);
	trimmed(s, excess, n);
}

size_t locked_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
{
	size_t k = 0;
	void *fp;

	pthread_mutex_lock(&s->locked.lock);
	for (fp = s->locked.head; fp && k < n; fp = fp_next(fp))
		fps[k++] = fp;
	s->locked.head = fp;
	s->locked.count -= k;
	pthread_mutex_unlock(&s->locked.lock);
	return k;
}

void locked_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
{
	unsigned long k;
	void *excess;
	size_t i;

	for (i = 0; i + 1 < n; i++)
		fp_set(fps[i], fps[i + 1]);
	pthread_mutex_lock(&s->locked.lock);
	fp_set(fps[n - 1], s->locked.head);
	s->locked.head = fps[0];
	s->locked.count += n;
	excess = trim(s, &k);
	pthread_mutex_unlock(&s->locked.lock);
	trimmed(s, excess, k);
	slab_stat_fast(s, AK_SLAB_BULK_FREE_CPU, n);
}

void locked_drain(struct ak_kmem_cache *s)
{
	void *head = s->locked.head;

	s->locked.head = NULL;
	s->locked.count = 0;
	if (head) {
		slab_free_chain_any(s, head);
		slab_stat(s, AK_SLAB_FLUSH, 1);
	}
}
