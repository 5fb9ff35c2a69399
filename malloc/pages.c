// SPDX-License-Identifier: MIT
/*
 * The runs of pages behind libatomkit-malloc.so that are not slabs:
 *
 * - the private allocator: what the slab layer allocates for itself
 *   (caches, sheaves, the registry), what libc allocates while this
 *   thread is inside the library, and what a thread that cannot use the
 *   per-CPU layer asks for.  Power-of-two classes from 16 bytes to 64
 *   KiB, each class carved from chunks of its own, one lock: it is never
 *   on a fastpath.
 * - the large path: objects above the kmalloc sizes, and alignments the
 *   caches do not give, each in an mmap'd run with a header, freed runs
 *   kept in a small cache for the next request of about their size.
 *
 * Runs start on AKM_CHUNK boundaries (akm.h says why); mmap gives pages,
 * so a run is mapped with room to spare and trimmed.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mman.h>
#include "akm.h"

#define META_MIN_SHIFT	4
#define META_MAX_SHIFT	16
#define META_CLASSES	(META_MAX_SHIFT - META_MIN_SHIFT + 1)

/* freed large runs kept: at most this many, this many bytes each, in all */
#define CACHE_RUNS	16
#define CACHE_RUN_MAX	((size_t)16 << 20)
#define CACHE_TOTAL_MAX	((size_t)64 << 20)

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t large_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	void *free;			/* freed objects, linked through word 0 */
	char *bump, *end;		/* the rest of the newest chunk */
} meta[META_CLASSES];
static size_t meta_mapped;

static struct akm_run *cache;		/* freed runs, newest first */
static unsigned int cache_n;
static size_t cache_bytes, large_maps;

void akm_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		return;
}

static size_t page_size(void)
{
	static size_t pg;

	if (!pg)
		pg = (size_t)sysconf(_SC_PAGESIZE);
	return pg;
}

/*
 * len bytes from a run start R on an AKM_CHUNK boundary, such that R +
 * off is a multiple of align: NULL (errno ENOMEM) when mmap refuses.
 */
static struct akm_run *map_run(size_t len, size_t off, size_t align)
{
	size_t need = align > AKM_CHUNK ? align : AKM_CHUNK, total;
	uintptr_t m, r;

	if (len > SIZE_MAX - need) {
		errno = ENOMEM;
		return NULL;
	}
	total = len + need;
	m = (uintptr_t)mmap(NULL, total, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == (uintptr_t)MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	if (align > AKM_CHUNK)
		r = ((m + off + align - 1) & ~(uintptr_t)(align - 1)) - off;
	else
		r = (m + AKM_CHUNK - 1) & ~(AKM_CHUNK - 1);
	if (r > m)
		munmap((void *)m, r - m);
	if (m + total > r + len)
		munmap((void *)(r + len), m + total - (r + len));
	return (struct akm_run *)r;
}

/* ---- the private allocator ---- */

static unsigned int meta_class(size_t n)
{
	unsigned int sh = META_MIN_SHIFT;

	while (((size_t)1 << sh) < n)
		sh++;
	return sh - META_MIN_SHIFT;
}

void *akm_meta_alloc(size_t n, size_t align)
{
	size_t sz = n > align ? n : align;
	unsigned int c;
	void *p;

	if (sz > ((size_t)1 << META_MAX_SHIFT))
		return akm_large_alloc(n, align, false);
	c = meta_class(sz);
	sz = (size_t)1 << (c + META_MIN_SHIFT);
	pthread_mutex_lock(&meta_lock);
	p = meta[c].free;
	if (p) {
		meta[c].free = *(void **)p;
	} else {
		if (!meta[c].bump || sz > (size_t)(meta[c].end - meta[c].bump)) {
			struct akm_run *r = map_run(AKM_CHUNK, 0, 0);

			if (!r) {
				pthread_mutex_unlock(&meta_lock);
				return NULL;
			}
			r->map_len = AKM_CHUNK;
			r->size = sz;
			r->magic = AKM_MAGIC_META;
			meta_mapped += AKM_CHUNK;
			/* objects naturally aligned, clear of the header */
			meta[c].bump = (char *)r + (sz > SLAB_HDR_SIZE ? sz :
						    SLAB_HDR_SIZE);
			meta[c].end = (char *)r + AKM_CHUNK;
		}
		p = meta[c].bump;
		meta[c].bump += sz;
	}
	pthread_mutex_unlock(&meta_lock);
	return p;
}

void akm_meta_free(struct akm_run *r, void *p)
{
	unsigned int c = meta_class(r->size);

	pthread_mutex_lock(&meta_lock);
	*(void **)p = meta[c].free;
	meta[c].free = p;
	pthread_mutex_unlock(&meta_lock);
}

size_t akm_meta_usable(const struct akm_run *r)
{
	return r->size;
}

/* ---- the large path ---- */

static void unmap_run(struct akm_run *r)
{
	r->magic = 0;
	munmap(r, r->map_len);
}

/* Every cached run unmapped: the address space they hold is wanted. */
static void cache_drop(void)
{
	struct akm_run *r, *next;

	pthread_mutex_lock(&large_lock);
	r = cache;
	cache = NULL;
	cache_n = 0;
	cache_bytes = 0;
	pthread_mutex_unlock(&large_lock);
	for (; r; r = next) {
		next = r->next;
		unmap_run(r);
	}
}

/* A cached run of len to about 1.25 len bytes, or NULL. */
static struct akm_run *cache_take(size_t len)
{
	struct akm_run **pp, *r = NULL;

	if (!__atomic_load_n(&cache_n, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&large_lock);
	for (pp = &cache; *pp; pp = &(*pp)->next) {
		if ((*pp)->map_len >= len &&
		    (*pp)->map_len - len <= len / 4 + AKM_CHUNK) {
			r = *pp;
			*pp = r->next;
			cache_n--;
			cache_bytes -= r->map_len;
			break;
		}
	}
	pthread_mutex_unlock(&large_lock);
	return r;
}

void *akm_large_alloc(size_t n, size_t align, bool zero)
{
	size_t pg = page_size(), off, len;
	struct akm_run *r;
	bool fresh = true;

	if (align < 16)
		align = 16;
	/* the header below the pointer, within the chunk below it */
	off = align > SLAB_HDR_SIZE ? align : SLAB_HDR_SIZE;
	if (off > AKM_CHUNK)
		off = AKM_CHUNK;
	if (n > SIZE_MAX / 2 - off - pg) {
		errno = ENOMEM;
		return NULL;
	}
	len = (off + n + pg - 1) & ~(pg - 1);
	r = align <= AKM_CHUNK ? cache_take(len) : NULL;
	if (r) {
		fresh = false;
	} else {
		r = map_run(len, off, align);
		if (!r) {
			/* the cache may hold what the limit has left */
			cache_drop();
			r = map_run(len, off, align);
			if (!r)
				return NULL;
		}
		r->map_len = len;
		__atomic_fetch_add(&large_maps, 1, __ATOMIC_RELAXED);
	}
	r->off = off;
	r->size = r->map_len - off;
	r->next = NULL;
	r->magic = AKM_MAGIC_LARGE;
	if (zero && !fresh)
		memset((char *)r + off, 0, n);
	return (char *)r + off;
}

void akm_large_free(struct akm_run *r)
{
	if (r->map_len <= CACHE_RUN_MAX) {
		pthread_mutex_lock(&large_lock);
		if (cache_n < CACHE_RUNS &&
		    cache_bytes + r->map_len <= CACHE_TOTAL_MAX) {
			r->next = cache;
			cache = r;
			cache_n++;
			cache_bytes += r->map_len;
			pthread_mutex_unlock(&large_lock);
			return;
		}
		pthread_mutex_unlock(&large_lock);
	}
	unmap_run(r);
}

size_t akm_large_usable(const struct akm_run *r)
{
	return r->size;
}

bool akm_large_grow(struct akm_run *r, size_t n)
{
	size_t pg = page_size(), len;

	if (n > SIZE_MAX / 2 - r->off - pg)
		return false;
	len = (r->off + n + pg - 1) & ~(pg - 1);
	if (len <= r->map_len)
		return true;
	if (mremap(r, r->map_len, len, 0) == MAP_FAILED)
		return false;
	r->map_len = len;
	r->size = len - r->off;
	return true;
}

void akm_pages_fork(bool take)
{
	if (take) {
		pthread_mutex_lock(&large_lock);
		pthread_mutex_lock(&meta_lock);
	} else {
		pthread_mutex_unlock(&meta_lock);
		pthread_mutex_unlock(&large_lock);
	}
}

void akm_pages_stats(size_t *maps, size_t *cached, size_t *metab)
{
	pthread_mutex_lock(&large_lock);
	*maps = large_maps;
	*cached = cache_bytes;
	pthread_mutex_unlock(&large_lock);
	pthread_mutex_lock(&meta_lock);
	*metab = meta_mapped;
	pthread_mutex_unlock(&meta_lock);
}
