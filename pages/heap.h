/* SPDX-License-Identifier: MIT */
/*
 * The page heap (heap.c), the page source of libatomkit-malloc.so: what
 * the malloc family (malloc/malloc.c) above it needs besides the slab
 * layer it serves.
 *
 * Every run of pages the heap hands out (a slab, a large object's run, a
 * chunk of the private allocator, a free span) starts with the page
 * layer's run header (<atomkit/pages.h>), whose magic word says which
 * kind it is: the heap's own kinds here, AK_PAGE_MAGIC_SLAB for the runs
 * the slab layer made slabs of.  The runs are made of AKP_CHUNK-sized
 * chunks, and the chunk map (heap.c) gives, for the chunk holding p - 1,
 * the header of the run that owns it: the one lookup free() needs,
 * whatever the run's size.  A run's objects never start at its base (its
 * header is there), nor does a large run's; hence the "- 1", which lets
 * a run aligned to AKP_CHUNK or more keep its header a whole chunk below
 * the pointer.
 */
#ifndef AK_PAGES_HEAP_H
#define AK_PAGES_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <atomkit/pages.h>

#define AKP_CHUNK_SHIFT	14
#define AKP_CHUNK	((uintptr_t)1 << AKP_CHUNK_SHIFT)
#define AKP_MAGIC_LARGE	0x1a49e5eedc0ffee1ul
#define AKP_MAGIC_META	0x3e7a5eedc0ffee2ul
#define AKP_MAGIC_FREE	0x5f4eeeedc0ffee3ul

/*
 * A chunk is the smallest slab where pages are 4 KiB; where they are 64
 * KiB (arm64 and ppc64 kernels may use them), a slab is at least a page,
 * and so a few chunks.
 */

/*
 * The header of a large run, a private chunk, or a free span of the page
 * heap: the page layer's run header (struct ak_page_run), the heap's own
 * fields in the line a slab keeps for itself.
 */
struct akp_run {
	size_t map_len;			/* bytes of the run from the header */
	size_t off;			/* pointer - header (large) */
	size_t size;			/* meta: its class; large: usable */
	struct akp_run *next, *prev;	/* free spans: their bin */
	uint64_t freed_ms;		/* free spans: when (decay) */
	unsigned int flags;		/* AKP_RUN_* */
	unsigned int bin;		/* free spans: the bin it is in */
	char pad[offsetof(struct ak_page_run, owner) - 6 * sizeof(size_t) -
		 2 * sizeof(unsigned int)];
	void *owner;			/* unused: the heap's runs are its own */
	unsigned long magic;
};

#define AKP_RUN_DIRTY	1u	/* free span: pages not given back */
#define AKP_RUN_HUGE	2u	/* large run: an mmap of its own */

AK_STATIC_ASSERT(offsetof(struct akp_run, magic) ==
		 offsetof(struct ak_page_run, magic), "one magic word for all");
AK_STATIC_ASSERT(sizeof(struct akp_run) <= AK_PAGE_RUN_HDR, "run header");

/* The chunk map: two levels over 48 bits of address, chunks of AKP_CHUNK. */
#define AKP_MAP_BITS	48
#define AKP_LEAF_BITS	16
#define AKP_ROOT_BITS	(AKP_MAP_BITS - AKP_CHUNK_SHIFT - AKP_LEAF_BITS)

extern struct akp_run **akp_chunk_root[1u << AKP_ROOT_BITS]
	__attribute__((visibility("hidden")));

/* The header of the run p was handed out from, or NULL if none is ours. */
static inline struct akp_run *akp_run_of(const void *p)
{
	uintptr_t c = ((uintptr_t)p - 1) >> AKP_CHUNK_SHIFT;
	struct akp_run **leaf;

	if (ak_unlikely(c >> (AKP_ROOT_BITS + AKP_LEAF_BITS)))
		return NULL;
	leaf = __atomic_load_n(&akp_chunk_root[c >> AKP_LEAF_BITS],
			       __ATOMIC_ACQUIRE);
	if (ak_unlikely(!leaf))
		return NULL;
	return leaf[c & ((1u << AKP_LEAF_BITS) - 1)];
}

/*
 * The heap as the page source of the layers above (ak_page_source_set()):
 * its spans for slabs, its private allocator for their metadata.
 */
extern const struct ak_page_source akp_heap_source;

/* a small locked allocator, for metadata and fallbacks */
void *akp_meta_alloc(size_t n, size_t align);
void akp_meta_free(struct akp_run *r, void *p);
size_t akp_meta_usable(const struct akp_run *r);

/* objects too big (or too aligned) for the slab classes */
void *akp_large_alloc(size_t n, size_t align, bool zero);
void akp_large_free(struct akp_run *r);
size_t akp_large_usable(const struct akp_run *r);
/* grow in place (no copy, no move); false when it cannot */
bool akp_large_grow(struct akp_run *r, size_t n);
/* fork(): the heap's locks taken before (take), released after */
void akp_heap_fork(bool take);

/* the page heap's counters and bytes */
struct akp_stats {
	size_t slabs_made, slabs_released, large_allocs;
	size_t hits, misses, maps, unmaps, madvises;
	size_t mapped, dirty, clean, meta;
};
void akp_heap_stats(struct akp_stats *out);

/* One whole line to fd 2, in one write: no stdio, no allocation. */
void akp_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* AK_PAGES_HEAP_H */
