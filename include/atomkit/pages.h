/* SPDX-License-Identifier: MIT */
/*
 * The page layer: the bottom of atomkit's allocators, below the per-CPU
 * layer and the slab cache (doc/architecture.md, "Layers").  As the
 * kernel's page allocator serves its slab allocator, a page source serves
 * ours, with two things: runs of pages for slabs, and the small blocks
 * the layers above keep their own metadata in (caches, partial lists,
 * sheaves, the slab registry, per-thread slots).
 *
 * libatomkit's default source maps each run on its own (mmap, aligned to
 * its size) and takes metadata from libc's malloc.  libatomkit-malloc.so,
 * which is libc's malloc, sets its page heap instead (pages/heap.c), so
 * that nothing in the layers above calls back up into the malloc built on
 * them.
 *
 * Every run a source hands out starts with a header of AK_PAGE_RUN_HDR
 * bytes, laid out as struct ak_page_run: its first cache line is the
 * user's (a slab keeps its lock-free pair there), then the word naming
 * the run's owner (a slab: its cache) and the magic word saying what the
 * run is.  A page source that finds runs by address (the page heap's
 * chunk map) tells its own runs from slabs by that word; the slab layer
 * overlays its header on this one and asserts that it does
 * (slab/internal.h), as the kernel's struct slab overlays struct page.
 */
#ifndef ATOMKIT_PAGES_H
#define ATOMKIT_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <atomkit/compiler.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AK_PAGE_RUN_HDR		128u
/* the magic word of a run the slab layer made a slab of */
#define AK_PAGE_MAGIC_SLAB	0x51ab5eedc0ffee00ul

struct ak_page_run {
	unsigned char user[64];		/* the run's user's first line */
	void *owner;			/* a slab: its cache */
	unsigned long magic;		/* AK_PAGE_MAGIC_*, or the source's own */
};

AK_STATIC_ASSERT(sizeof(struct ak_page_run) <= AK_PAGE_RUN_HDR,
		 "the page layer's run header");

struct ak_page_source {
	const char *name;
	/*
	 * size bytes (a power of two, at least a page) aligned to size, or
	 * NULL (errno ENOMEM); unmap takes such a run back
	 */
	void *(*map)(size_t size);
	void (*unmap)(void *base, size_t size);
	/*
	 * size bytes aligned to align (a power of two, at most 4096), zero
	 * filled, or NULL; meta_free(NULL) does nothing
	 */
	void *(*meta_alloc)(size_t size, size_t align);
	void (*meta_free)(void *p);
	/*
	 * AK_PAGE_REUSE: unmap keeps the pages for the next map (a heap), so
	 * the slab layer gives its empty slabs back while their cache lives
	 */
	unsigned int flags;
};

#define AK_PAGE_REUSE	0x1u

/*
 * Sets the page source of the process, before anything was taken from
 * the current one (the first cache, per-CPU slot or slab): 0, or -1 with
 * errno EBUSY after that (EINVAL for NULL or a source missing a call).
 * The source must outlive the process's use of atomkit.
 */
int ak_page_source_set(const struct ak_page_source *src);
/* The source in use (libatomkit's own unless one was set). */
const struct ak_page_source *ak_page_source(void);

/* What the layers above call: the source's calls, marking it in use. */
void *ak_page_map(size_t size);
void ak_page_unmap(void *base, size_t size);
void *ak_page_meta_alloc(size_t size, size_t align);
/* n * size bytes, zeroed, aligned for any type; NULL on overflow too */
void *ak_page_meta_calloc(size_t n, size_t size);
void ak_page_meta_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* ATOMKIT_PAGES_H */
