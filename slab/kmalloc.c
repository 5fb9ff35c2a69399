// SPDX-License-Identifier: MIT
/*
 * ak_kmalloc(): the kernel's kmalloc size classes, one cache each, all
 * with the default slab size so that ak_kfree() finds the slab (and from
 * it the cache) by masking the address.  Created at the first call.
 */
#include <stdlib.h>
#include "internal.h"

#define NR_KMALLOC	KMALLOC_NR_CLASSES

static const unsigned int kmalloc_size[NR_KMALLOC] = {
	8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192, 16384
};

static struct ak_kmem_cache *caches[NR_KMALLOC];
static bool created;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fastpath = -1;
static unsigned int kflags;

int ak_kmalloc_set_fastpath(enum ak_slab_fastpath fp, unsigned int flags)
{
	int rc = 0;

	if ((unsigned int)fp >= AK_SLAB_NR_FASTPATHS ||
	    (flags & ~(AK_SLAB_DEBUG | AK_SLAB_STATS))) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&lock);
	if (__atomic_load_n(&created, __ATOMIC_ACQUIRE)) {
		errno = EBUSY;
		rc = -1;
	} else {
		fastpath = fp;
		kflags = flags;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

static bool create_all(void)
{
	const char *env = getenv("AK_KMALLOC_FASTPATH");
	const char *dbg = getenv("AK_SLAB_DEBUG");
	unsigned int i;
	char name[32];
	bool ok = true;

	pthread_mutex_lock(&lock);
	if (created)
		goto out;
	if (fastpath < 0)
		fastpath = env && ak_slab_fastpath_parse(env) >= 0 ?
			   ak_slab_fastpath_parse(env) : AK_SLAB_ARRAY;
	if (dbg && *dbg && strcmp(dbg, "0"))
		kflags |= AK_SLAB_DEBUG;
	for (i = 0; i < NR_KMALLOC; i++) {
		unsigned int sz = kmalloc_size[i];
		size_t align = (sz & (sz - 1)) ? (sz == 96 ? 32 : 64) :
			       sz > 4096 ? 4096 : sz;

		if (caches[i])
			continue;
		snprintf(name, sizeof(name), "kmalloc-%u", sz);
		caches[i] = ak_kmem_cache_create(name, sz, align, kflags,
						 (enum ak_slab_fastpath)fastpath);
		if (!caches[i]) {
			ok = false;	/* retried at the next call */
			goto out;
		}
	}
	__atomic_store_n(&created, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&lock);
	return ok;
}

struct ak_kmem_cache *ak_kmalloc_cache(size_t size)
{
	if (!size || size > AK_KMALLOC_MAX_SIZE)
		return NULL;
	if (ak_unlikely(!__atomic_load_n(&created, __ATOMIC_ACQUIRE)) &&
	    !create_all())
		return NULL;
	return caches[kmalloc_index(size)];
}

void *ak_kmalloc(size_t size, ak_gfp_t flags)
{
	struct ak_kmem_cache *s;

	if (ak_unlikely(!size || size > AK_KMALLOC_MAX_SIZE)) {
		errno = EINVAL;
		return NULL;
	}
	s = ak_kmalloc_cache(size);
	if (ak_unlikely(!s)) {
		errno = ENOMEM;
		return NULL;
	}
	return ak_kmem_cache_alloc(s, flags);
}

static struct ak_slab *slab_of(const void *p)
{
	struct ak_slab *sl;

	/* with debug kmalloc caches, check before reading anything */
	if (ak_unlikely(kflags & AK_SLAB_DEBUG)) {
		sl = slab_registry_find(NULL, p);
		if (!sl || sl->magic != SLAB_MAGIC ||
		    sl->cache->slab_size != AK_SLAB_DEFAULT_SIZE) {
			slab_report(NULL, "kfree %p: not a kmalloc object", p);
			return NULL;
		}
		return sl;
	}
	return (struct ak_slab *)((uintptr_t)p &
				  ~(uintptr_t)(AK_SLAB_DEFAULT_SIZE - 1));
}

void ak_kfree(const void *p)
{
	struct ak_slab *sl;

	if (ak_unlikely(!p))
		return;
	sl = slab_of(p);
	if (sl)
		ak_kmem_cache_free(sl->cache, (void *)p);
}

size_t ak_ksize(const void *p)
{
	struct ak_slab *sl = p ? slab_of(p) : NULL;

	return sl ? sl->cache->object_size : 0;
}

void __ak_kmalloc_fork(bool take)
{
	unsigned int i;

	if (take) {
		pthread_mutex_lock(&lock);
		ak_percpu_fork(true);
		for (i = 0; i < NR_KMALLOC; i++)
			if (caches[i])
				slab_fork_cache(caches[i], true);
		slab_fork_registry(true);
		return;
	}
	slab_fork_registry(false);
	for (i = NR_KMALLOC; i-- > 0;)
		if (caches[i])
			slab_fork_cache(caches[i], false);
	ak_percpu_fork(false);
	pthread_mutex_unlock(&lock);
}
