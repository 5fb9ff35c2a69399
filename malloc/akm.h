/* SPDX-License-Identifier: MIT */
/*
 * What malloc.c (the malloc family over the slab caches) and pages.c (the
 * page heap, the private allocator and the large path) share.
 *
 * Every run of pages the library hands out (a slab, a large object's run,
 * a chunk of the private allocator) starts with a header, and a magic word
 * at the offset the slab header keeps its own says which kind it is.  The
 * runs are made of AKM_CHUNK-sized chunks, and the chunk map (pages.c)
 * gives, for the chunk holding p - 1, the header of the run that owns it:
 * the one lookup free() needs, whatever the run's size.  A run's objects
 * never start at its base (its header is there), nor does a large run's;
 * hence the "- 1", which lets a run aligned to AKM_CHUNK or more keep its
 * header a whole chunk below the pointer.
 */
#ifndef AKM_H
#define AKM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../slab/internal.h"

#define AKM_CHUNK_SHIFT	14
#define AKM_CHUNK	((uintptr_t)1 << AKM_CHUNK_SHIFT)
#define AKM_MAGIC_LARGE	0x1a49e5eedc0ffee1ul
#define AKM_MAGIC_META	0x3e7a5eedc0ffee2ul
#define AKM_MAGIC_FREE	0x5f4eeeedc0ffee3ul

/*
 * A chunk is the smallest slab where pages are 4 KiB; where they are 64
 * KiB (arm64 and ppc64 kernels may use them), a slab is at least a page,
 * and so a few chunks.
 */

/*
 * The header of a large run, a private chunk, or a free span of the page
 * heap.  It shares the slab header's first bytes, so that the magic word
 * sits where a slab keeps its own.
 */
struct akm_run {
	size_t map_len;			/* bytes of the run from the header */
	size_t off;			/* pointer - header (large) */
	size_t size;			/* meta: its class; large: usable */
	struct akm_run *next, *prev;	/* free spans: their bin */
	uint64_t freed_ms;		/* free spans: when (decay) */
	unsigned int flags;		/* AKM_RUN_* */
	unsigned int bin;		/* free spans: the bin it is in */
	char pad[offsetof(struct ak_slab, magic) - 6 * sizeof(size_t) -
		 2 * sizeof(unsigned int)];
	unsigned long magic;
};

#define AKM_RUN_DIRTY	1u	/* free span: pages not given back */
#define AKM_RUN_HUGE	2u	/* large run: an mmap of its own */

AK_STATIC_ASSERT(offsetof(struct akm_run, magic) ==
		 offsetof(struct ak_slab, magic), "one magic word for all");
AK_STATIC_ASSERT(sizeof(struct akm_run) <= SLAB_HDR_SIZE, "run header");

/* The chunk map: two levels over 48 bits of address, chunks of AKM_CHUNK. */
#define AKM_MAP_BITS	48
#define AKM_LEAF_BITS	16
#define AKM_ROOT_BITS	(AKM_MAP_BITS - AKM_CHUNK_SHIFT - AKM_LEAF_BITS)

extern struct akm_run **akm_chunk_root[1u << AKM_ROOT_BITS]
	__attribute__((visibility("hidden")));

/* The header of the run p was handed out from, or NULL if none is ours. */
static inline struct akm_run *akm_run_of(const void *p)
{
	uintptr_t c = ((uintptr_t)p - 1) >> AKM_CHUNK_SHIFT;
	struct akm_run **leaf;

	if (ak_unlikely(c >> (AKM_ROOT_BITS + AKM_LEAF_BITS)))
		return NULL;
	leaf = __atomic_load_n(&akm_chunk_root[c >> AKM_LEAF_BITS],
			       __ATOMIC_ACQUIRE);
	if (ak_unlikely(!leaf))
		return NULL;
	return leaf[c & ((1u << AKM_LEAF_BITS) - 1)];
}

/*
 * Calls made while this thread is inside the library (setting it up, or
 * a library call such as fopen or pthread_atfork that allocates) are
 * served by the private allocator: never back into the slab layer.
 */
extern __thread unsigned int akm_nest
	__attribute__((tls_model("initial-exec"), visibility("hidden")));

/* pages.c: the page heap's spans, as the slab layer's page source */
extern const struct slab_pages akm_slab_pages;

/* pages.c: a small locked allocator, for metadata and fallbacks */
void *akm_meta_alloc(size_t n, size_t align);
void akm_meta_free(struct akm_run *r, void *p);
size_t akm_meta_usable(const struct akm_run *r);

/* pages.c: objects too big (or too aligned) for the slab classes */
void *akm_large_alloc(size_t n, size_t align, bool zero);
void akm_large_free(struct akm_run *r);
size_t akm_large_usable(const struct akm_run *r);
/* grow in place (no copy, no move); false when it cannot */
bool akm_large_grow(struct akm_run *r, size_t n);
void akm_pages_fork(bool take);

struct ak_malloc_info;
/* the page heap's counters into *out */
void akm_pages_stats(struct ak_malloc_info *out);

/* One whole line to fd 2, in one write: no stdio, no allocation. */
void akm_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* AKM_H */
