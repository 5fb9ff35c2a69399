/* SPDX-License-Identifier: MIT */
/*
 * What malloc.c (the malloc family over the kmalloc caches) and pages.c
 * (the private allocator and the large-object path) share.
 *
 * Every pointer the library hands out lies in a run whose first bytes are
 * a header, and the run starts on an AKM_CHUNK boundary at or below the
 * pointer, no more than AKM_CHUNK below it: so (p - 1) rounded down to
 * AKM_CHUNK is always that header, and a magic word at the offset the slab
 * header keeps its own says which of three kinds of run it is.  A slab's
 * objects never start at the slab's base (its header is there), nor does a
 * run's; hence the "- 1", which lets a run aligned to AKM_CHUNK or more
 * keep its header a whole chunk below the pointer.
 */
#ifndef AKM_H
#define AKM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../slab/internal.h"

#define AKM_CHUNK	((uintptr_t)AK_SLAB_DEFAULT_SIZE)
#define AKM_MAGIC_LARGE	0x1a49e5eedc0ffee1ul
#define AKM_MAGIC_META	0x3e7a5eedc0ffee2ul

/* The header of a large run or of a chunk of the private allocator. */
struct akm_run {
	size_t map_len;			/* bytes mapped from the header on */
	size_t off;			/* pointer - header (large) */
	size_t size;			/* meta: its class; large: usable */
	struct akm_run *next;		/* the cache of freed runs */
	char pad[offsetof(struct ak_slab, magic) - 4 * sizeof(size_t)];
	unsigned long magic;
};

AK_STATIC_ASSERT(offsetof(struct akm_run, magic) ==
		 offsetof(struct ak_slab, magic), "one magic word for all");
AK_STATIC_ASSERT(sizeof(struct akm_run) <= SLAB_HDR_SIZE, "run header");

static inline struct akm_run *akm_run_of(const void *p)
{
	return (struct akm_run *)(((uintptr_t)p - 1) & ~(AKM_CHUNK - 1));
}

/*
 * Calls made while this thread is inside the library (setting it up, or
 * a library call such as fopen or pthread_atfork that allocates) are
 * served by the private allocator: never back into the slab layer.
 */
extern __thread unsigned int akm_nest
	__attribute__((tls_model("initial-exec"), visibility("hidden")));

/* pages.c: a small locked allocator, for metadata and fallbacks */
void *akm_meta_alloc(size_t n, size_t align);
void akm_meta_free(struct akm_run *r, void *p);
size_t akm_meta_usable(const struct akm_run *r);

/* pages.c: objects too big (or too aligned) for the kmalloc caches */
void *akm_large_alloc(size_t n, size_t align, bool zero);
void akm_large_free(struct akm_run *r);
size_t akm_large_usable(const struct akm_run *r);
/* grow in place (no copy, no move); false when it cannot */
bool akm_large_grow(struct akm_run *r, size_t n);
void akm_pages_fork(bool take);
void akm_pages_stats(size_t *maps, size_t *cached, size_t *meta);

/* One whole line to fd 2, in one write: no stdio, no allocation. */
void akm_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* AKM_H */
