// SPDX-License-Identifier: MIT
/*
 * The page layer's one switch (<atomkit/pages.h>): which page source the
 * layers above take their slabs and metadata from, and libatomkit's own,
 * which maps each run on its own and takes metadata from libc.
 *
 * The source may change only while nothing was taken from it, since each
 * source takes back only what it gave: the first call through it fixes
 * it for the life of the process.
 *
 * libatomkit-malloc.so builds its copy with AK_PAGES_INITIAL naming its
 * page heap: its copy starts on the heap and has no path to libc's
 * malloc, which is the library itself there.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <atomkit/pages.h>

#ifndef AK_PAGES_INITIAL
/* A run of size bytes aligned to size: map twice as much, trim the ends. */
static void *mmap_map(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 2 * size - page;
	char *m, *base;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	base = (char *)(((uintptr_t)m + size - 1) & ~(uintptr_t)(size - 1));
	if (base > m)
		munmap(m, (size_t)(base - m));
	if (m + len > base + size)
		munmap(base + size, (size_t)(m + len - (base + size)));
	return base;
}

static void mmap_unmap(void *base, size_t size)
{
	munmap(base, size);
}

static void *libc_meta_alloc(size_t size, size_t align)
{
	void *p;

	if (align < sizeof(void *))
		align = sizeof(void *);
	if (posix_memalign(&p, align, size ? size : 1)) {
		errno = ENOMEM;
		return NULL;
	}
	return memset(p, 0, size);
}

static void libc_meta_free(void *p)
{
	free(p);
}

static const struct ak_page_source mmap_source = {
	.name = "mmap",
	.map = mmap_map,
	.unmap = mmap_unmap,
	.meta_alloc = libc_meta_alloc,
	.meta_free = libc_meta_free,
};

static const struct ak_page_source *source = &mmap_source;
#else
extern const struct ak_page_source AK_PAGES_INITIAL;
static const struct ak_page_source *source = &AK_PAGES_INITIAL;
#endif
static bool used;

int ak_page_source_set(const struct ak_page_source *src)
{
	if (!src || !src->map || !src->unmap || !src->meta_alloc ||
	    !src->meta_free) {
		errno = EINVAL;
		return -1;
	}
	/* the one source may be set again: a library set up twice */
	if (__atomic_load_n(&used, __ATOMIC_ACQUIRE) && src != source) {
		errno = EBUSY;
		return -1;
	}
	__atomic_store_n(&source, src, __ATOMIC_RELEASE);
	return 0;
}

const struct ak_page_source *ak_page_source(void)
{
	return __atomic_load_n(&source, __ATOMIC_ACQUIRE);
}

static const struct ak_page_source *use(void)
{
	if (!__atomic_load_n(&used, __ATOMIC_RELAXED))
		__atomic_store_n(&used, true, __ATOMIC_RELEASE);
	return ak_page_source();
}

void *ak_page_map(size_t size)
{
	return use()->map(size);
}

void ak_page_unmap(void *base, size_t size)
{
	use()->unmap(base, size);
}

void *ak_page_meta_alloc(size_t size, size_t align)
{
	return use()->meta_alloc(size, align);
}

void *ak_page_meta_calloc(size_t n, size_t size)
{
	size_t t;

	if (__builtin_mul_overflow(n, size, &t)) {
		errno = ENOMEM;
		return NULL;
	}
	return use()->meta_alloc(t, 16);
}

void ak_page_meta_free(void *p)
{
	if (p)
		use()->meta_free(p);
}
