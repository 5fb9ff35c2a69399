// SPDX-License-Identifier: MIT
/*
 * The page layer under the slab cache (<atomkit/pages.h>): a page source
 * set before anything was taken serves every slab and every block of the
 * slab and per-CPU layers' metadata, and gets back exactly what it gave;
 * a slab's header overlays the page layer's run header; the source is
 * fixed once used; and the public calls the malloc interposer makes of
 * the slab and per-CPU layers answer as they should.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <atomkit/pages.h>
#include <atomkit/slab.h>
#include "ak_test.h"

/* ---- a page source over the default one, counting ---- */

static const struct ak_page_source *below;
static unsigned long maps, unmaps, metas, meta_frees, bad_meta;

#define NR_BLOCKS 4096
static void *blocks[NR_BLOCKS];		/* metadata given out, not back */

static void *count_map(size_t size)
{
	void *p = below->map(size);

	if (p)
		__atomic_fetch_add(&maps, 1, __ATOMIC_RELAXED);
	return p;
}

static void count_unmap(void *base, size_t size)
{
	__atomic_fetch_add(&unmaps, 1, __ATOMIC_RELAXED);
	below->unmap(base, size);
}

static void *count_meta_alloc(size_t size, size_t align)
{
	void *p = below->meta_alloc(size, align);
	size_t i;

	if (!p)
		return NULL;
	__atomic_fetch_add(&metas, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NR_BLOCKS; i++) {
		void *none = NULL;

		if (__atomic_compare_exchange_n(&blocks[i], &none, p, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	return p;
}

static void count_meta_free(void *p)
{
	size_t i;

	__atomic_fetch_add(&meta_frees, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NR_BLOCKS; i++) {
		void *mine = p;

		if (__atomic_compare_exchange_n(&blocks[i], &mine, NULL, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	if (i == NR_BLOCKS)
		__atomic_fetch_add(&bad_meta, 1, __ATOMIC_RELAXED);
	below->meta_free(p);
}

static const struct ak_page_source counting = {
	.name = "counting",
	.map = count_map,
	.unmap = count_unmap,
	.meta_alloc = count_meta_alloc,
	.meta_free = count_meta_free,
};

static int set_rc = -2;

/* ---- tests ---- */

static void test_source_set_first(void **state)
{
	(void)state;
	assert_int_equal(set_rc, 0);
	assert_ptr_equal(ak_page_source(), &counting);
	assert_string_equal(below->name, "mmap");
}

static void test_source_refuses_bad(void **state)
{
	struct ak_page_source half = counting;

	(void)state;
	errno = 0;
	assert_int_equal(ak_page_source_set(NULL), -1);
	assert_int_equal(errno, EINVAL);
	half.meta_free = NULL;
	errno = 0;
	assert_int_equal(ak_page_source_set(&half), -1);
	assert_int_equal(errno, EINVAL);
	assert_ptr_equal(ak_page_source(), &counting);
}

/* Every slab and metadata block of a cache's life comes from the source. */
static void test_cache_on_source(void **state)
{
	enum ak_slab_fastpath fp;
	unsigned long m0, u0, f0;
	void *p[600];
	size_t i;

	(void)state;
	for (fp = 0; fp < AK_SLAB_NR_FASTPATHS; fp++) {
		struct ak_kmem_cache *s;

		m0 = maps;
		u0 = unmaps;
		f0 = meta_frees;
		s = ak_kmem_cache_create("pages", 200, 0, 0, fp);
		assert_non_null(s);
		assert_true(metas > 0);
		assert_int_equal(ak_kmem_cache_size(s), 200);
		for (i = 0; i < AK_ARRAY_SIZE(p); i++) {
			p[i] = ak_kmem_cache_alloc(s, 0);
			assert_non_null(p[i]);
			memset(p[i], 0xa5, 200);
		}
		/* 600 objects of 200 bytes: more than one 128 KiB slab */
		assert_true(maps - m0 >= 1);
		for (i = 0; i < AK_ARRAY_SIZE(p); i++)
			ak_kmem_cache_free(s, p[i]);
		assert_int_equal(ak_kmem_cache_audit(s), 0);
		assert_int_equal(ak_kmem_cache_destroy(s), 0);
		/* every slab back, the cache's metadata with them */
		assert_int_equal(unmaps - u0, maps - m0);
		assert_true(meta_frees > f0);
		assert_int_equal(bad_meta, 0);
	}
}

/* A slab's header is the page layer's run header, with its cache. */
static void test_slab_overlays_run(void **state)
{
	struct ak_kmem_cache *s;
	const struct ak_page_run *r;
	void *p;

	(void)state;
	s = ak_kmem_cache_create("overlay", 64, 0, 0, AK_SLAB_LOCKED);
	assert_non_null(s);
	p = ak_kmem_cache_alloc(s, 0);
	assert_non_null(p);
	r = (const struct ak_page_run *)((uintptr_t)p &
					 ~(uintptr_t)(AK_SLAB_DEFAULT_SIZE - 1));
	assert_true((const char *)p >= (const char *)r + AK_PAGE_RUN_HDR);
	assert_int_equal(r->magic, AK_PAGE_MAGIC_SLAB);
	assert_ptr_equal(ak_kmem_cache_of_run(r), s);
	ak_kmem_cache_free(s, p);
	assert_int_equal(ak_kmem_cache_destroy(s), 0);
}

/* Once used, the source stays: another is refused, the same is not. */
static void test_source_fixed_once_used(void **state)
{
	static const struct ak_page_source other = {
		.name = "other",
		.map = count_map,
		.unmap = count_unmap,
		.meta_alloc = count_meta_alloc,
		.meta_free = count_meta_free,
	};

	(void)state;
	errno = 0;
	assert_int_equal(ak_page_source_set(&other), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(ak_page_source_set(&counting), 0);
	assert_ptr_equal(ak_page_source(), &counting);
}

/* What the malloc interposer asks of the layers, through their headers. */
static void test_public_calls(void **state)
{
	struct ak_kmem_cache *s, *caches[2];
	size_t before = ak_slab_refills();
	void *p;

	(void)state;
	assert_true(ak_percpu_thread_try_init());
	assert_true(ak_percpu_thread_ready(ak_percpu_mode()));
	s = ak_kmem_cache_create("public", 32, 0, 0, AK_SLAB_SLUB_TID);
	assert_non_null(s);
	p = ak_kmem_cache_alloc(s, 0);
	assert_non_null(p);
	/* a new cache's first object takes a refill */
	assert_true(ak_slab_refills() > before);
	caches[0] = s;
	caches[1] = NULL;
	ak_slab_fork(caches, 2, true);
	ak_slab_fork(caches, 2, false);
	ak_percpu_fork(true);
	ak_percpu_fork(false);
	ak_kmem_cache_free(s, p);
	assert_int_equal(ak_kmem_cache_destroy(s), 0);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		AK_TEST(test_source_set_first),
		AK_TEST(test_source_refuses_bad),
		AK_TEST(test_cache_on_source),
		AK_TEST(test_slab_overlays_run),
		AK_TEST(test_source_fixed_once_used),
		AK_TEST(test_public_calls),
	};

	/* before anything of atomkit runs: nothing was taken yet */
	below = ak_page_source();
	set_rc = ak_page_source_set(&counting);
	return ak_test_main("pages", tests, AK_ARRAY_SIZE(tests));
}
