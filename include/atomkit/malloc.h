/* SPDX-License-Identifier: MIT */
/*
 * libatomkit-malloc.so: the malloc family on atomkit's slab cache, for
 * LD_PRELOAD (doc/malloc.md).  The library exports the malloc family and
 * this one call, by which a program (or a test) can ask whether it runs
 * on it, and in which design and mode:
 *
 *	int (*info)(struct ak_malloc_info *) =
 *		dlsym(RTLD_DEFAULT, "ak_malloc_info");
 */
#ifndef ATOMKIT_MALLOC_H
#define ATOMKIT_MALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ak_malloc_info {
	const char *design;		/* the slab design: "sheaf", ... */
	const char *mode;		/* the per-CPU mode: "rseq", ... */
	size_t large_maps;		/* large runs mapped so far */
	size_t large_cached;		/* bytes of freed runs kept for reuse */
	size_t meta_bytes;		/* bytes the private allocator mapped */
	size_t fallback_allocs;		/* served without the per-CPU layer */
	size_t deferred_frees;		/* slab frees put off to another thread */
};

/* Fills *out and returns 0; -1 before the allocator is set up. */
int ak_malloc_info(struct ak_malloc_info *out);

#ifdef __cplusplus
}
#endif

#endif /* ATOMKIT_MALLOC_H */
