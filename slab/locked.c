// SPDX-License-Identifier: MIT
/*
 * The baseline: one mutex per cache over one freelist (fp space), refilled
 * from the slabs in a batch when empty and trimmed to two batches when it
 * holds more than four batches.  No per-CPU state at all.
 */
#include "internal.h"

#define MAX_BATCH	1024

static void *locked_alloc(struct ak_kmem_cache *s)
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
	k = slab_take_objects(s, s->locked.batch, buf, SLAB_FROM_ANY,
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
	if (s->locked.count <= 4ul * s->locked.batch)
		return NULL;
	*n = s->locked.count - 2ul * s->locked.batch;
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

static void locked_free(struct ak_kmem_cache *s, void *fp)
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

static size_t locked_bulk_alloc_cpu(struct ak_kmem_cache *s, size_t n, void **fps)
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

static void locked_bulk_free(struct ak_kmem_cache *s, size_t n, void **fps)
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

static void locked_drain(struct ak_kmem_cache *s)
{
	void *head = s->locked.head;

	s->locked.head = NULL;
	s->locked.count = 0;
	if (head) {
		slab_free_chain_any(s, head);
		slab_stat(s, AK_SLAB_FLUSH, 1);
	}
}

static void locked_visit(struct ak_kmem_cache *s, slab_visit_fn fn, void *arg)
{
	unsigned long i = 0;
	void *fp;

	for (fp = s->locked.head; fp; fp = fp_next(fp)) {
		fn(s, fp, arg);
		/* a cycle would loop: the audit caught it */
		if (++i > (unsigned long)s->objects * s->nr_slabs + 1)
			break;
	}
}

static int locked_init(struct ak_kmem_cache *s,
		       const struct ak_kmem_cache_args *args)
{
	s->locked.batch = args->locked_batch ? args->locked_batch : 64;
	if (s->locked.batch > MAX_BATCH)
		s->locked.batch = MAX_BATCH;
	pthread_mutex_init(&s->locked.lock, NULL);
	return 0;
}

static void locked_fini(struct ak_kmem_cache *s)
{
	pthread_mutex_destroy(&s->locked.lock);
}

SLAB_ENTRY_POINTS(locked)

static const char *locked_how(struct ak_kmem_cache *s, bool inlined)
{
	(void)s;
	(void)inlined;
	return "one pthread mutex per cache";
}

static void locked_fork(struct ak_kmem_cache *s, bool take)
{
	if (take)
		pthread_mutex_lock(&s->locked.lock);
	else
		pthread_mutex_unlock(&s->locked.lock);
}

const struct slab_design slab_locked = {
	.name = "locked",
	.entry = { locked_entry_alloc, locked_entry_free },
	.alloc = locked_alloc,
	.free = locked_free,
	.bulk_alloc_cpu = locked_bulk_alloc_cpu,
	.bulk_refill = slab_bulk_refill,
	.bulk_free = locked_bulk_free,
	.drain = locked_drain,
	.visit = locked_visit,
	.init = locked_init,
	.fini = locked_fini,
	.how = locked_how,
	.slot_lists = true,
	.fork = locked_fork,
};
