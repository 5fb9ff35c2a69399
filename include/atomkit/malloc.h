/* SPDX-License-Identifier: MIT */
/*
 * libatomkit-malloc.so: the malloc family on atomkit's slab cache, for
 * LD_PRELOAD (doc/malloc.md).  The library exports the malloc family and
 * this one call, by which a program (or a test) can ask whether it runs
 * on it, and in which design and mode:
 *
 *	int (*info)(struct ak_malloc_info *) =
 *		dlsym(RTLD_DEFAULT, "ak_malloc_info");
 *
 * With AK_MALLOC_STATS=PATH in its environment, each process on the
 * library appends these counters to PATH as one line of JSON when it
 * exits (doc/malloc.md, "Counters"): the whole-program benchmarks read
 * them beside each run.
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
	/* where the time goes: counts since the process started */
	size_t refills;			/* a design's slow path asked the slabs */
	size_t slabs_made;		/* slabs carved from the page heap */
	size_t slabs_released;		/* empty slabs given back to it */
	size_t large_allocs;		/* objects above the slab classes */
	size_t heap_hits;		/* page-heap requests met by free spans */
	size_t heap_misses;		/* ... that needed new address space */
	size_t maps;			/* mmap calls */
	size_t unmaps;			/* munmap calls */
	size_t madvise_calls;		/* pages given back (MADV_DONTNEED) */
	/* bytes, now */
	size_t mapped_bytes;		/* address space the library holds */
	size_t dirty_bytes;		/* free spans not yet given back */
	size_t purged_bytes;		/* free spans given back, kept mapped */
	size_t meta_bytes;		/* the private allocator's chunks */
	size_t fallback_allocs;		/* served without the per-CPU layer */
	size_t deferred_frees;		/* slab frees put off to another thread */
};

/* Fills *out and returns 0; -1 before the allocator is set up. */
int ak_malloc_info(struct ak_malloc_info *out);

#ifdef __cplusplus
}
#endif

#endif /* ATOMKIT_MALLOC_H */
