// SPDX-License-Identifier: MIT
/*
 * The page heap, the page source of libatomkit-malloc.so (doc/malloc.md,
 * "The page heap"):
 *
 * - the page heap: address space reserved in regions of at least
 *   GROW_MIN, handed out as spans of whole chunks (AKP_CHUNK) to the slab
 *   layer (a slab of any order, aligned to its size) and to the large
 *   path.  A freed span is coalesced with free neighbours and kept in a
 *   bin by its length; its pages go back to the kernel (MADV_DONTNEED)
 *   only once it has stayed free for DECAY_MS, checked on the heap's own
 *   calls, never on a fastpath.  Regions are never unmapped.
 * - the chunk map: for every chunk of a span in use, the span's header,
 *   so that free() finds a slab of any order, or a large run, from the
 *   pointer alone.
 * - the private allocator: what the slab layer allocates for itself
 *   (caches, sheaves, the registry), what libc allocates while this
 *   thread is inside the library, and what a thread that cannot use the
 *   per-CPU layer asks for.  Power-of-two classes from 16 bytes to 64
 *   KiB, carved from chunks of the heap, one lock: never on a fastpath.
 * - the large path: objects above the slab classes, and alignments they
 *   do not give, in spans of the heap; above HUGE_MIN, an mmap each.
 *
 * Lock order: meta_lock, then heap.lock (the private allocator takes its
 * chunks from the heap; the heap allocates nothing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include "heap.h"

/* A run's magic word, which free() reads without the heap's lock. */
static inline void magic_set(struct akp_run *r, unsigned long m)
{
	__atomic_store_n(&r->magic, m, __ATOMIC_RELAXED);
}

static inline unsigned long magic_of(const struct akp_run *r)
{
	return __atomic_load_n(&r->magic, __ATOMIC_RELAXED);
}

#define META_MIN_SHIFT	4
#define META_MAX_SHIFT	16
#define META_CLASSES	(META_MAX_SHIFT - META_MIN_SHIFT + 1)
/* each class carves chunks of its own this long from the heap */
#define META_CHUNK	((size_t)128 << 10)

/* bins 1..NR_BINS-1: free spans of that many chunks; bin 0: longer */
#define NR_BINS		64
/* address space reserved at a time (less when that is refused) */
#define GROW_MIN	((size_t)32 << 20)
/* a large run above this is an mmap of its own */
#define HUGE_MIN	((size_t)64 << 20)
/* a free span's pages are given back after this long */
#define DECAY_MS	1000
/* ... or at once, oldest first, past this many dirty bytes */
#define DIRTY_MAX	((size_t)256 << 20)

#define LEAF_ENTRIES	(1u << AKP_LEAF_BITS)
#define LEAF_BYTES	(LEAF_ENTRIES * sizeof(struct akp_run *))

struct akp_run **akp_chunk_root[1u << AKP_ROOT_BITS];

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	void *free;			/* freed objects, linked through word 0 */
	char *bump, *end;		/* the rest of the newest chunk */
} meta[META_CLASSES];
static size_t meta_mapped;

static struct {
	pthread_mutex_t lock;
	struct akp_run *bins[NR_BINS];
	uint64_t next_purge_ms;
	/* bytes */
	size_t mapped, dirty, clean;
	/* counts */
	size_t hits, misses, maps, unmaps, madvises;
	size_t slabs_made, slabs_released, large_allocs;
} heap = { .lock = PTHREAD_MUTEX_INITIALIZER };

void akp_say(const char *fmt, ...)
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

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static uintptr_t round_up(uintptr_t x, uintptr_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* ---- the chunk map (all of it under heap.lock, but the lookups) ---- */

static struct akp_run **map_leaf(uintptr_t c, bool make)
{
	struct akp_run **leaf = akp_chunk_root[c >> AKP_LEAF_BITS];
	void *m;

	if (leaf || !make)
		return leaf;
	m = mmap(NULL, LEAF_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	heap.maps++;
	if (m == MAP_FAILED)
		return NULL;
	heap.mapped += LEAF_BYTES;
	__atomic_store_n(&akp_chunk_root[c >> AKP_LEAF_BITS],
			 (struct akp_run **)m, __ATOMIC_RELEASE);
	return m;
}

/* The entry of chunk c, or NULL. */
static struct akp_run *map_get(uintptr_t c)
{
	struct akp_run **leaf;

	if (c >> (AKP_ROOT_BITS + AKP_LEAF_BITS))
		return NULL;
	leaf = map_leaf(c, false);
	return leaf ? leaf[c & (LEAF_ENTRIES - 1)] : NULL;
}

/* Every chunk of [base, base + len) has a leaf: false when one can't. */
static bool map_reserve(uintptr_t base, size_t len)
{
	uintptr_t c, last = (base + len - 1) >> AKP_CHUNK_SHIFT;

	if (last >> (AKP_ROOT_BITS + AKP_LEAF_BITS))
		return false;
	for (c = base >> AKP_CHUNK_SHIFT; c <= last;
	     c = (c | (LEAF_ENTRIES - 1)) + 1)
		if (!map_leaf(c, true))
			return false;
	return true;
}

/* Chunks [first, last] to r; their leaves exist (map_reserve). */
static void map_set(uintptr_t first, uintptr_t last, struct akp_run *r)
{
	uintptr_t c;

	for (c = first; c <= last; c++)
		__atomic_store_n(&akp_chunk_root[c >> AKP_LEAF_BITS]
				 [c & (LEAF_ENTRIES - 1)], r,
				 __ATOMIC_RELAXED);
}

static void map_span(struct akp_run *r, size_t len, struct akp_run *to)
{
	uintptr_t b = (uintptr_t)r;

	map_set(b >> AKP_CHUNK_SHIFT, (b + len - 1) >> AKP_CHUNK_SHIFT, to);
}

/*
 * len bytes from a run start R such that R + off is a multiple of align
 * (R on an AKP_CHUNK boundary when align is smaller), with its leaves:
 * NULL when mmap refuses.
 */
static struct akp_run *map_run(size_t len, size_t off, size_t align)
{
	size_t need = align > AKP_CHUNK ? align : AKP_CHUNK, total;
	uintptr_t m, r;

	if (len > SIZE_MAX - need)
		return NULL;
	total = len + need;
	m = (uintptr_t)mmap(NULL, total, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	heap.maps++;
	if (m == (uintptr_t)MAP_FAILED)
		return NULL;
	if (align > AKP_CHUNK)
		r = round_up(m + off, align) - off;
	else
		r = round_up(m, AKP_CHUNK);
	if (r > m) {
		munmap((void *)m, r - m);
		heap.unmaps++;
	}
	if (m + total > r + len) {
		munmap((void *)(r + len), m + total - (r + len));
		heap.unmaps++;
	}
	if (!map_reserve(r, len)) {
		munmap((void *)r, len);
		heap.unmaps++;
		return NULL;
	}
	heap.mapped += len;
	return (struct akp_run *)r;
}

/* ---- the page heap's spans (under heap.lock) ---- */

static unsigned int bin_of(size_t len)
{
	size_t n = len >> AKP_CHUNK_SHIFT;

	return n < NR_BINS ? (unsigned int)n : 0;
}

static void bin_del(struct akp_run *f)
{
	if (f->prev)
		f->prev->next = f->next;
	else
		heap.bins[f->bin] = f->next;
	if (f->next)
		f->next->prev = f->prev;
	if (f->flags & AKP_RUN_DIRTY)
		heap.dirty -= f->map_len;
	else
		heap.clean -= f->map_len;
}

/*
 * [b, b + len) as a free span, without looking at its neighbours.  A
 * clean span (AKP_RUN_DIRTY clear) is zero past its header.
 */
static void span_put(uintptr_t b, size_t len, unsigned int flags,
		     uint64_t t)
{
	struct akp_run *f = (struct akp_run *)b;

	f->map_len = len;
	f->off = f->size = 0;
	f->freed_ms = t;
	f->flags = flags;
	f->bin = bin_of(len);
	f->prev = NULL;
	f->next = heap.bins[f->bin];
	if (f->next)
		f->next->prev = f;
	heap.bins[f->bin] = f;
	magic_set(f, AKP_MAGIC_FREE);
	/* the ends, for the neighbours that coalesce with it */
	map_set(b >> AKP_CHUNK_SHIFT, b >> AKP_CHUNK_SHIFT, f);
	map_set((b + len - 1) >> AKP_CHUNK_SHIFT,
		(b + len - 1) >> AKP_CHUNK_SHIFT, f);
	if (flags & AKP_RUN_DIRTY)
		heap.dirty += len;
	else
		heap.clean += len;
}

static struct akp_run *free_span_at(uintptr_t c)
{
	struct akp_run *h = map_get(c);

	return h && magic_of(h) == AKP_MAGIC_FREE ? h : NULL;
}

/* [b, b + len) freed: coalesced with its free neighbours, into a bin. */
static void span_free(uintptr_t b, size_t len, bool dirty, uint64_t t)
{
	unsigned int flags = dirty ? AKP_RUN_DIRTY : 0;
	struct akp_run *h;

	h = b >> AKP_CHUNK_SHIFT ? free_span_at((b >> AKP_CHUNK_SHIFT) - 1) :
				   NULL;
	if (h && (uintptr_t)h + h->map_len == b) {
		bin_del(h);
		if (!(flags | (h->flags & AKP_RUN_DIRTY)))
			memset((void *)b, 0, sizeof(*h)); /* stays clean */
		flags |= h->flags & AKP_RUN_DIRTY;
		if (h->freed_ms > t)
			t = h->freed_ms;
		len += h->map_len;
		b = (uintptr_t)h;
	}
	h = free_span_at((b + len) >> AKP_CHUNK_SHIFT);
	if (h && (uintptr_t)h == b + len) {
		bin_del(h);
		if (!(flags | (h->flags & AKP_RUN_DIRTY)))
			memset(h, 0, sizeof(*h));
		flags |= h->flags & AKP_RUN_DIRTY;
		if (h->freed_ms > t)
			t = h->freed_ms;
		len += h->map_len;
	}
	span_put(b, len, flags, t);
}

/*
 * A dirty free span's pages back to the kernel; it stays in its bin,
 * clean: zero past its header (the bytes no whole page covers, by hand).
 */
static void purge(struct akp_run *f)
{
	uintptr_t pg = page_size(), b = (uintptr_t)f, e = b + f->map_len;
	uintptr_t from = round_up(b + sizeof(*f), pg), to = e & ~(pg - 1);

	if (from < to) {
		madvise((void *)from, to - from, MADV_DONTNEED);
		heap.madvises++;
	} else {
		from = to = e;
	}
	memset((char *)f + sizeof(*f), 0, from - (b + sizeof(*f)));
	memset((void *)to, 0, e - to);
	f->flags &= ~AKP_RUN_DIRTY;
	heap.dirty -= f->map_len;
	heap.clean += f->map_len;
}

/* Spans free for DECAY_MS (every dirty one past DIRTY_MAX) purged. */
static void maybe_purge(uint64_t now)
{
	struct akp_run *f;
	unsigned int i;
	bool all;

	if (now < heap.next_purge_ms && heap.dirty <= DIRTY_MAX)
		return;
	all = heap.dirty > DIRTY_MAX;
	heap.next_purge_ms = now + DECAY_MS / 4;
	for (i = 0; i < NR_BINS; i++)
		for (f = heap.bins[i]; f; f = f->next)
			if ((f->flags & AKP_RUN_DIRTY) &&
			    (all || now - f->freed_ms >= DECAY_MS))
				purge(f);
}

/* The free span where len bytes fit with start + phase aligned, or NULL. */
static struct akp_run *fit(size_t len, size_t align, size_t phase,
			   uintptr_t *startp)
{
	struct akp_run *f, *best = NULL;
	unsigned int i = bin_of(len);
	uintptr_t start, bstart = 0;

	for (; i != 0 && i < NR_BINS; i++)
		for (f = heap.bins[i]; f; f = f->next) {
			start = round_up((uintptr_t)f + phase, align) - phase;
			if (start >= (uintptr_t)f &&
			    start + len <= (uintptr_t)f + f->map_len) {
				*startp = start;
				return f;
			}
		}
	/* the long spans: the shortest that fits */
	for (f = heap.bins[0]; f; f = f->next) {
		start = round_up((uintptr_t)f + phase, align) - phase;
		if (start >= (uintptr_t)f &&
		    start + len <= (uintptr_t)f + f->map_len &&
		    (!best || f->map_len < best->map_len)) {
			best = f;
			bstart = start;
		}
	}
	*startp = bstart;
	return best;
}

/* [start, start + len) out of free span f; the rest stays free. */
static struct akp_run *carve(struct akp_run *f, uintptr_t start, size_t len,
			     bool *clean)
{
	uintptr_t b = (uintptr_t)f, e = b + f->map_len;
	unsigned int flags = f->flags;
	uint64_t t = f->freed_ms;
	struct akp_run *r = (struct akp_run *)start;

	bin_del(f);
	if (start > b)
		span_put(b, start - b, flags, t);
	if (start + len < e)
		span_put(start + len, e - (start + len), flags, t);
	magic_set(r, 0);
	map_span(r, len, r);
	*clean = !(flags & AKP_RUN_DIRTY);
	return r;
}

/*
 * A span of len bytes (a multiple of AKP_CHUNK) whose start + phase is a
 * multiple of align (at least AKP_CHUNK); *clean says it is zero past its
 * first AK_PAGE_RUN_HDR bytes.  NULL when no address space can be had.
 */
static struct akp_run *heap_alloc(size_t len, size_t align, size_t phase,
				  bool *clean)
{
	struct akp_run *f, *g;
	uintptr_t start;
	size_t want;

	pthread_mutex_lock(&heap.lock);
	maybe_purge(now_ms());
	f = fit(len, align, phase, &start);
	if (f) {
		heap.hits++;
	} else {
		heap.misses++;
		want = len + (align > AKP_CHUNK ? align : 0);
		g = want < GROW_MIN ? map_run(GROW_MIN, 0, 0) : NULL;
		if (!g) {
			g = map_run(want, 0, 0);
		} else {
			want = GROW_MIN;
		}
		if (!g) {
			pthread_mutex_unlock(&heap.lock);
			errno = ENOMEM;
			return NULL;
		}
		span_free((uintptr_t)g, want, false, 0);
		f = fit(len, align, phase, &start);
		if (ak_unlikely(!f)) {		/* cannot be: it was made to fit */
			pthread_mutex_unlock(&heap.lock);
			errno = ENOMEM;
			return NULL;
		}
	}
	f = carve(f, start, len, clean);
	pthread_mutex_unlock(&heap.lock);
	return f;
}

static void heap_free(struct akp_run *r, size_t len)
{
	uint64_t now = now_ms();

	pthread_mutex_lock(&heap.lock);
	span_free((uintptr_t)r, len, true, now);
	maybe_purge(now);
	pthread_mutex_unlock(&heap.lock);
}

/* ---- the page source of the layers above ---- */

static void *slab_span_map(size_t size)
{
	bool clean;
	void *p = heap_alloc(size, size, 0, &clean);

	if (p)
		__atomic_fetch_add(&heap.slabs_made, 1, __ATOMIC_RELAXED);
	return p;
}

static void slab_span_unmap(void *base, size_t size)
{
	__atomic_fetch_add(&heap.slabs_released, 1, __ATOMIC_RELAXED);
	heap_free(base, size);
}

static void *meta_alloc_zero(size_t size, size_t align)
{
	void *p = akp_meta_alloc(size ? size : 1, align);

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	return memset(p, 0, size);
}

/* Metadata the private allocator gave, or a large run it went to. */
static void meta_release(void *p)
{
	struct akp_run *r = akp_run_of(p);

	if (r && r->magic == AKP_MAGIC_META) {
		akp_meta_free(r, p);
	} else if (r && r->magic == AKP_MAGIC_LARGE) {
		akp_large_free(r);
	} else {
		akp_say("atomkit-malloc: metadata %p: not the page heap's", p);
		abort();
	}
}

const struct ak_page_source akp_heap_source = {
	.name = "page heap",
	.map = slab_span_map,
	.unmap = slab_span_unmap,
	.meta_alloc = meta_alloc_zero,
	.meta_free = meta_release,
	.flags = AK_PAGE_REUSE,
};

/* ---- the private allocator ---- */

static unsigned int meta_class(size_t n)
{
	unsigned int sh = META_MIN_SHIFT;

	while (((size_t)1 << sh) < n)
		sh++;
	return sh - META_MIN_SHIFT;
}

void *akp_meta_alloc(size_t n, size_t align)
{
	size_t sz = n > align ? n : align;
	unsigned int c;
	void *p;

	if (sz > ((size_t)1 << META_MAX_SHIFT))
		return akp_large_alloc(n, align, false);
	c = meta_class(sz);
	sz = (size_t)1 << (c + META_MIN_SHIFT);
	pthread_mutex_lock(&meta_lock);
	p = meta[c].free;
	if (p) {
		meta[c].free = *(void **)p;
	} else {
		if (!meta[c].bump || sz > (size_t)(meta[c].end - meta[c].bump)) {
			bool clean;
			struct akp_run *r = heap_alloc(META_CHUNK, AKP_CHUNK, 0,
						       &clean);

			if (!r) {
				pthread_mutex_unlock(&meta_lock);
				return NULL;
			}
			r->map_len = META_CHUNK;
			r->size = sz;
			r->magic = AKP_MAGIC_META;
			meta_mapped += META_CHUNK;
			/* objects naturally aligned, clear of the header */
			meta[c].bump = (char *)r + (sz > AK_PAGE_RUN_HDR ? sz :
						    AK_PAGE_RUN_HDR);
			meta[c].end = (char *)r + META_CHUNK;
		}
		p = meta[c].bump;
		meta[c].bump += sz;
	}
	pthread_mutex_unlock(&meta_lock);
	return p;
}

void akp_meta_free(struct akp_run *r, void *p)
{
	unsigned int c = meta_class(r->size);

	pthread_mutex_lock(&meta_lock);
	*(void **)p = meta[c].free;
	meta[c].free = p;
	pthread_mutex_unlock(&meta_lock);
}

size_t akp_meta_usable(const struct akp_run *r)
{
	return r->size;
}

/* ---- the large path ---- */

void *akp_large_alloc(size_t n, size_t align, bool zero)
{
	size_t pg = page_size(), off, len;
	struct akp_run *r;
	bool clean = true;

	if (align < 16)
		align = 16;
	/* the header below the pointer, within the chunk below it */
	off = align > AK_PAGE_RUN_HDR ? align : AK_PAGE_RUN_HDR;
	if (off > AKP_CHUNK)
		off = AKP_CHUNK;
	if (n > SIZE_MAX / 2 - off - AKP_CHUNK) {
		errno = ENOMEM;
		return NULL;
	}
	len = round_up(off + n, AKP_CHUNK);
	if (len > HUGE_MIN) {
		len = round_up(off + n, pg);
		pthread_mutex_lock(&heap.lock);
		r = map_run(len, off, align);
		if (r)
			map_span(r, AKP_CHUNK, r);	/* p - 1 is there */
		pthread_mutex_unlock(&heap.lock);
		if (!r) {
			errno = ENOMEM;
			return NULL;
		}
		r->flags = AKP_RUN_HUGE;
	} else {
		r = heap_alloc(len, align > AKP_CHUNK ? align : AKP_CHUNK,
			       align > AKP_CHUNK ? AKP_CHUNK : 0, &clean);
		if (!r)
			return NULL;
		r->flags = 0;
	}
	__atomic_fetch_add(&heap.large_allocs, 1, __ATOMIC_RELAXED);
	r->map_len = len;
	r->off = off;
	r->size = len - off;
	r->next = r->prev = NULL;
	magic_set(r, AKP_MAGIC_LARGE);
	if (zero && !clean)
		memset((char *)r + off, 0, n);
	return (char *)r + off;
}

void akp_large_free(struct akp_run *r)
{
	if (!(r->flags & AKP_RUN_HUGE)) {
		heap_free(r, r->map_len);
		return;
	}
	pthread_mutex_lock(&heap.lock);
	map_span(r, AKP_CHUNK, NULL);
	heap.mapped -= r->map_len;
	heap.unmaps++;
	pthread_mutex_unlock(&heap.lock);
	r->magic = 0;
	munmap(r, r->map_len);
}

size_t akp_large_usable(const struct akp_run *r)
{
	return r->size;
}

bool akp_large_grow(struct akp_run *r, size_t n)
{
	size_t pg = page_size(), len, more;
	struct akp_run *h;
	bool ok = false, clean;

	if (n > SIZE_MAX / 2 - r->off - AKP_CHUNK)
		return false;
	if (r->flags & AKP_RUN_HUGE) {
		len = round_up(r->off + n, pg);
		if (len <= r->map_len)
			return true;
		if (mremap(r, r->map_len, len, 0) == MAP_FAILED)
			return false;
		pthread_mutex_lock(&heap.lock);
		heap.mapped += len - r->map_len;
		pthread_mutex_unlock(&heap.lock);
		r->map_len = len;
		r->size = len - r->off;
		return true;
	}
	len = round_up(r->off + n, AKP_CHUNK);
	if (len <= r->map_len)
		return true;
	more = len - r->map_len;
	pthread_mutex_lock(&heap.lock);
	h = free_span_at(((uintptr_t)r + r->map_len) >> AKP_CHUNK_SHIFT);
	if (h && (uintptr_t)h == (uintptr_t)r + r->map_len &&
	    h->map_len >= more) {
		heap.hits++;
		map_span(carve(h, (uintptr_t)h, more, &clean), more, r);
		r->map_len = len;
		r->size = len - r->off;
		ok = true;
	}
	pthread_mutex_unlock(&heap.lock);
	return ok;
}

void akp_heap_fork(bool take)
{
	if (take) {
		pthread_mutex_lock(&meta_lock);
		pthread_mutex_lock(&heap.lock);
	} else {
		pthread_mutex_unlock(&heap.lock);
		pthread_mutex_unlock(&meta_lock);
	}
}

void akp_heap_stats(struct akp_stats *out)
{
	pthread_mutex_lock(&meta_lock);
	out->meta = meta_mapped;
	pthread_mutex_unlock(&meta_lock);
	pthread_mutex_lock(&heap.lock);
	out->slabs_made = heap.slabs_made;
	out->slabs_released = heap.slabs_released;
	out->large_allocs = heap.large_allocs;
	out->hits = heap.hits;
	out->misses = heap.misses;
	out->maps = heap.maps;
	out->unmaps = heap.unmaps;
	out->madvises = heap.madvises;
	out->mapped = heap.mapped;
	out->dirty = heap.dirty;
	out->clean = heap.clean;
	pthread_mutex_unlock(&heap.lock);
}
