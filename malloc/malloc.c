// SPDX-License-Identifier: MIT
/*
 * libatomkit-malloc.so: the malloc family on the kmalloc caches of the
 * slab cache, for LD_PRELOAD (doc/malloc.md).  The design comes from
 * AK_MALLOC_DESIGN (or AK_KMALLOC_FASTPATH), the per-CPU mode from
 * AK_PERCPU_MODE, as ak_kmalloc() and the per-CPU layer read them.
 *
 * The library carries its own hidden copy of pages/, src/ and slab/, and
 * sets its page heap (pages/heap.c) as their page source: their slabs
 * are the heap's spans and their own metadata comes from its private
 * allocator, and so do calls made while a thread is inside the library
 * (libc's fopen while the caches are set up, pthread key storage while a
 * thread claims its slot): nothing re-enters the slab layer from below
 * it.  This file uses the public interfaces of the layers below alone.  A thread that cannot use the per-CPU layer (its
 * rseq area cannot be registered, no thread slot is free) is served by
 * the private allocator, and the slab objects it frees are handed to the
 * next thread that can.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <atomkit/malloc.h>
#include <atomkit/pages.h>
#include <atomkit/percpu.h>
#include <atomkit/slab.h>
#include "../pages/heap.h"

#define EXPORT	__attribute__((visibility("default")))

/*
 * Calls made while this thread is inside the library (setting it up, or
 * a library call such as fopen or pthread_atfork that allocates) are
 * served by the private allocator: never back into the slab layer.
 */
static __thread unsigned int akm_nest
	__attribute__((tls_model("initial-exec")));

/*
 * The malloc's size classes (doc/malloc.md, "Size classes"): 16 to 128
 * bytes in steps of 16, then four classes per doubling up to 256 KiB, so
 * that no request wastes more than a fifth of its object.  Each class is
 * a cache of the design under test, its slabs as large as it takes to
 * hold several objects with little left over.
 */
#define NR_CLASSES	52
#define SMALL_MAX	((size_t)256 << 10)
/* the largest slab_size struct ak_kmem_cache_args takes */
#define MAX_SLAB_SIZE	((size_t)4 << 20)

static struct ak_kmem_cache *classes[NR_CLASSES];
/* the per-CPU mode once set up, else -1 */
static int ready_mode = -1;
static enum ak_slab_fastpath design;
/* AK_SLAB_CPU_PARTIAL, as args.cpu_partial takes it (0: the default) */
static unsigned int cpu_partial;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool atfork_done;

/* slab objects freed by threads without the per-CPU layer */
static void *deferred;
static size_t nr_fallback, nr_deferred;

static inline unsigned int class_index(size_t n)
{
	unsigned int e;

	if (n <= 128)
		return n ? (unsigned int)((n - 1) >> 4) : 0;
	/* n in (2^e, 2^(e+1)]: four steps of 2^(e-2) */
	e = 63 - (unsigned int)__builtin_clzl(n - 1);
	return 8 + (e - 7) * 4 +
	       (unsigned int)(((n - 1) - ((size_t)1 << e)) >> (e - 2));
}

static size_t class_size(unsigned int i)
{
	unsigned int e;

	if (i < 8)
		return (size_t)(i + 1) << 4;
	e = 7 + (i - 8) / 4;
	return ((size_t)1 << e) + ((size_t)((i - 8) % 4 + 1) << (e - 2));
}

/* A class's objects are aligned to its size's lowest set bit, to a page. */
static size_t class_align(unsigned int i)
{
	size_t sz = class_size(i), a = sz & -sz;

	return a > AK_SLAB_MAX_ALIGN ? AK_SLAB_MAX_ALIGN : a;
}

static inline struct ak_kmem_cache *class_of(size_t n)
{
	return classes[class_index(n)];
}

/*
 * Class i's cache: its slab the smallest power of two from a chunk (16
 * KiB) and a page that holds 4 objects or more with at most an eighth left over, and per-CPU
 * levels that hold about the same bytes at every size.
 */
static struct ak_kmem_cache *class_create(unsigned int i)
{
	size_t sz = class_size(i), align = class_align(i), first, slab, n;
	struct ak_kmem_cache_args args = { 0 };
	char name[32];

	first = (AK_PAGE_RUN_HDR + align - 1) & ~(align - 1);
	slab = (size_t)sysconf(_SC_PAGESIZE);
	for (slab = slab > AKP_CHUNK ? slab : AKP_CHUNK;
	     slab < MAX_SLAB_SIZE; slab *= 2) {
		n = (slab - first) / sz;
		if (n >= 4 && (slab - first - n * sz) * 8 <= slab)
			break;
	}
	args.slab_size = (unsigned int)slab;
	if (sz > 4096) {
		n = ((size_t)256 << 10) / sz;
		args.array_limit = (unsigned int)(n < 2 ? 2 : n);
		args.locked_batch = args.array_limit;
		n = ((size_t)512 << 10) / sz;
		args.sheaf_capacity = (unsigned int)(n < 2 ? 2 : n > 32 ? 32 : n);
		args.barn_max = sz > (64 << 10) ? 2 : 0;
	}
	args.cpu_partial = cpu_partial;
	snprintf(name, sizeof(name), "malloc-%zu", sz);
	return ak_kmem_cache_create_args(name, sz, align, 0, design, &args);
}

/* Can this thread take the kmalloc caches' fastpath now? */
static inline bool thread_ready(void)
{
	int m = __atomic_load_n(&ready_mode, __ATOMIC_ACQUIRE);

	if (ak_unlikely(akm_nest || m < 0))
		return false;
	return ak_percpu_thread_ready((enum ak_percpu_mode)m);
}

static void report(const char *msg, void *arg)
{
	(void)arg;
	akp_say("%s", msg);
}

/*
 * fork(): every lock of the allocator, in the order the code nests them
 * (doc/malloc.md, "fork").
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&init_lock);
	if (ready_mode >= 0) {
		ak_percpu_fork(true);
		ak_slab_fork(classes, NR_CLASSES, true);
	}
	akp_heap_fork(true);
}

static void fork_release(void)
{
	akp_heap_fork(false);
	if (ready_mode >= 0) {
		ak_slab_fork(classes, NR_CLASSES, false);
		ak_percpu_fork(false);
	}
	pthread_mutex_unlock(&init_lock);
}

static void counts_now(struct ak_malloc_info *out);

/*
 * The counts a child of fork() inherited from its parent: the child's own
 * (ak_malloc_info(), the AK_MALLOC_STATS line) start from them, so that
 * the lines of a parent and of a child that both exit add up to what the
 * two did, never counting the parent's calls twice.
 */
static struct ak_malloc_info inherited;

static void fork_child(void)
{
	fork_release();
	if (ready_mode >= 0)
		counts_now(&inherited);
}

/* A bad setting is refused before anything runs on it. */
static void __attribute__((noreturn)) refuse(void)
{
	_exit(2);
}

/* Under init_lock, this thread nested. */
static void setup(void)
{
	const char *var = "AK_MALLOC_DESIGN", *env = getenv(var), *why = NULL;
	int fp, m;

	/* before anything below takes a page or a block of metadata */
	if (ak_page_source_set(&akp_heap_source)) {
		akp_say("atomkit-malloc: the page heap cannot be the page source: %s",
			strerror(errno));
		refuse();
	}
	if (!env || !*env) {
		var = "AK_KMALLOC_FASTPATH";
		env = getenv(var);
	}
	fp = env && *env ? ak_slab_fastpath_parse(env) : AK_SLAB_ARRAY;
	if (fp < 0) {
		akp_say("atomkit-malloc: %s=%s: unknown design (slub-tid, slub-local, rseq-list, array, sheaf, locked)",
			var, env);
		refuse();
	}
	env = getenv("AK_PERCPU_MODE");
	if (env && *env) {
		m = ak_percpu_mode_parse(env);
		if (m < 0) {
			akp_say("atomkit-malloc: AK_PERCPU_MODE=%s: unknown mode (rseq, rseq-mm_cid, atomic, thread)",
				env);
			refuse();
		}
		if (!ak_percpu_mode_available((enum ak_percpu_mode)m, &why)) {
			akp_say("atomkit-malloc: AK_PERCPU_MODE=%s: %s", env,
				why);
			refuse();
		}
	}
	env = getenv("AK_SLAB_CPU_PARTIAL");
	if (env && *env) {
		char *end;
		unsigned long n = strtoul(env, &end, 10);

		if (*end || *env == '-' || n > (1ul << 24)) {
			akp_say("atomkit-malloc: AK_SLAB_CPU_PARTIAL=%s: not a number of objects from 0 to 16777216",
				env);
			refuse();
		}
		cpu_partial = n ? (unsigned int)n : AK_SLAB_CPU_PARTIAL_NONE;
	}
	ak_slab_set_report(report, NULL);
	m = ak_percpu_mode();
	design = (enum ak_slab_fastpath)fp;
	/* the caches are made as their sizes are first asked for */
	if (!atfork_done) {
		/* ours after the 128-bit emulation's: it locks innermost */
		__ak_lockemu_atfork();
		pthread_atfork(fork_prepare, fork_release, fork_child);
		atfork_done = true;
	}
	__atomic_store_n(&ready_mode, m, __ATOMIC_RELEASE);
}

/* Class i's cache, made now if it is not yet: NULL without memory. */
static struct ak_kmem_cache *__attribute__((noinline))
class_make(unsigned int i)
{
	struct ak_kmem_cache *c;

	akm_nest++;
	pthread_mutex_lock(&init_lock);
	c = classes[i];
	if (!c) {
		c = class_create(i);
		if (c)
			__atomic_store_n(&classes[i], c, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&init_lock);
	akm_nest--;
	return c;
}

static bool init(void)
{
	bool ok;

	akm_nest++;
	pthread_mutex_lock(&init_lock);
	if (ready_mode < 0)
		setup();
	ok = ready_mode >= 0;
	pthread_mutex_unlock(&init_lock);
	akm_nest--;
	return ok;
}

/* Before the program's constructors: a bad setting fails at once. */
static void __attribute__((constructor)) akm_ctor(void)
{
	if (!akm_nest)
		init();
}

static void drain_deferred(void)
{
	void *p = __atomic_exchange_n(&deferred, NULL, __ATOMIC_ACQUIRE);

	while (p) {
		void *next = *(void **)p;
		ak_kmem_cache_free(ak_kmem_cache_of_run(akp_run_of(p)), p);
		p = next;
	}
}

/*
 * The thread's first call, or one the fastpath turned away: set up the
 * library, then the thread's part of the per-CPU layer.  False when the
 * thread must do without it.
 */
static bool thread_setup(void)
{
	bool ok;

	if (akm_nest)
		return false;
	if (__atomic_load_n(&ready_mode, __ATOMIC_ACQUIRE) < 0 && !init())
		return false;
	akm_nest++;
	ok = ak_percpu_thread_try_init();
	akm_nest--;
	if (ok && __atomic_load_n(&deferred, __ATOMIC_RELAXED))
		drain_deferred();
	return ok;
}

static void defer(void *p)
{
	void *old = __atomic_load_n(&deferred, __ATOMIC_RELAXED);

	do
		*(void **)p = old;
	while (!__atomic_compare_exchange_n(&deferred, &old, p, true,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
	__atomic_fetch_add(&nr_deferred, 1, __ATOMIC_RELAXED);
}

static size_t pow2_up(size_t n)
{
	return n <= 1 ? 1 : (size_t)1 << (64 - __builtin_clzl(n - 1));
}

/* The class of n bytes aligned to align, or NR_CLASSES if none. */
static unsigned int class_aligned(size_t n, size_t align)
{
	unsigned int i;

	if (n > SMALL_MAX || align > AK_SLAB_MAX_ALIGN)
		return NR_CLASSES;
	i = class_index(n > align ? n : align);
	while (i < NR_CLASSES && class_align(i) < align)
		i++;
	return i;
}

/* Everything the fastpath does not take. */
static void *alloc_slow(size_t n, size_t align, bool zero)
{
	unsigned int i = class_aligned(n, align);
	struct ak_kmem_cache *c;
	void *p;

	if (i < NR_CLASSES) {
		if (thread_ready() || thread_setup()) {
			c = __atomic_load_n(&classes[i], __ATOMIC_ACQUIRE);
			if (!c)
				c = class_make(i);
			p = c ? ak_kmem_cache_alloc(c, 0) : NULL;
		} else {
			__atomic_fetch_add(&nr_fallback, 1, __ATOMIC_RELAXED);
			p = akp_meta_alloc(class_size(i), align);
		}
		if (!p) {
			errno = ENOMEM;
			return NULL;
		}
		if (zero)
			memset(p, 0, n);
		return p;
	}
	/* a program whose first call is a large one checks its settings too */
	if (__atomic_load_n(&ready_mode, __ATOMIC_ACQUIRE) < 0 && !akm_nest)
		init();
	return akp_large_alloc(n, align, zero);
}

static inline void *alloc(size_t n)
{
	struct ak_kmem_cache *c;

	if (ak_likely(n <= SMALL_MAX && thread_ready() && (c = class_of(n)))) {
		void *p = ak_kmem_cache_alloc(c, 0);

		if (ak_unlikely(!p))
			errno = ENOMEM;
		return p;
	}
	return alloc_slow(n, 0, false);
}

static void *alloc_aligned(size_t align, size_t n)
{
	return align <= 16 ? alloc(n) : alloc_slow(n, align, false);
}

static void __attribute__((noinline)) free_other(struct akp_run *r, void *p)
{
	if (!r) {
		akp_say("atomkit-malloc: free(%p): not a pointer of this allocator",
			p);
		abort();
	} else if (r->magic == AKP_MAGIC_LARGE) {
		akp_large_free(r);
	} else if (r->magic == AKP_MAGIC_META) {
		akp_meta_free(r, p);
	} else {
		akp_say("atomkit-malloc: free(%p): not a pointer of this allocator",
			p);
		abort();
	}
}

static inline void release(void *p)
{
	struct akp_run *r;

	if (ak_unlikely(!p))
		return;
	r = akp_run_of(p);
	if (ak_likely(r && r->magic == AK_PAGE_MAGIC_SLAB)) {
		if (ak_likely(thread_ready()) || thread_setup())
			ak_kmem_cache_free(ak_kmem_cache_of_run(r), p);
		else
			defer(p);
		return;
	}
	free_other(r, p);
}

static size_t usable(void *p)
{
	struct akp_run *r = akp_run_of(p);

	if (!r)
		;
	else if (r->magic == AK_PAGE_MAGIC_SLAB)
		return ak_kmem_cache_size(ak_kmem_cache_of_run(r));
	if (r->magic == AKP_MAGIC_LARGE)
		return akp_large_usable(r);
	if (r->magic == AKP_MAGIC_META)
		return akp_meta_usable(r);
	akp_say("atomkit-malloc: malloc_usable_size(%p): not a pointer of this allocator",
		p);
	abort();
}

/* ---- the malloc family ---- */

EXPORT void *malloc(size_t n)
{
	return alloc(n);
}

EXPORT void free(void *p)
{
	release(p);
}

EXPORT void *calloc(size_t n, size_t m)
{
	struct ak_kmem_cache *c;
	size_t t;
	void *p;

	if (__builtin_mul_overflow(n, m, &t)) {
		errno = ENOMEM;
		return NULL;
	}
	if (ak_likely(t <= SMALL_MAX && thread_ready() && (c = class_of(t)))) {
		p = ak_kmem_cache_alloc(c, 0);
		if (ak_unlikely(!p)) {
			errno = ENOMEM;
			return NULL;
		}
		return memset(p, 0, t);
	}
	return alloc_slow(t, 0, true);
}

EXPORT void *realloc(void *p, size_t n)
{
	struct akp_run *r;
	size_t old;
	void *q;

	if (!p)
		return alloc(n);
	if (!n) {
		/* as glibc: the object is freed, NULL returned */
		release(p);
		return NULL;
	}
	old = usable(p);
	r = akp_run_of(p);
	if (n <= old) {
		/* a shrink keeps the object unless it would waste half */
		if (n > old / 2 || r->magic == AKP_MAGIC_META)
			return p;
	} else if (r->magic == AKP_MAGIC_LARGE && akp_large_grow(r, n)) {
		return p;
	}
	q = alloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, n < old ? n : old);
	release(p);
	return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
	size_t t;

	if (__builtin_mul_overflow(n, m, &t)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, t);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int err = errno;
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = alloc_aligned(align, n);
	if (!p) {
		errno = err;
		return ENOMEM;
	}
	*out = p;
	return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return alloc_aligned(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
	/* as glibc: any alignment, rounded up to a power of two */
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	return alloc_aligned(pow2_up(align), n);
}

EXPORT void *valloc(size_t n)
{
	return alloc_aligned((size_t)sysconf(_SC_PAGESIZE), n);
}

EXPORT void *pvalloc(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (n > SIZE_MAX - pg) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc_aligned(pg, n ? (n + pg - 1) & ~(pg - 1) : pg);
}

EXPORT size_t malloc_usable_size(void *p)
{
	return p ? usable(p) : 0;
}

/* The counts since the library was set up, and the bytes held now. */
static void counts_now(struct ak_malloc_info *out)
{
	struct akp_stats h;

	memset(out, 0, sizeof(*out));
	akp_heap_stats(&h);
	out->slabs_made = h.slabs_made;
	out->slabs_released = h.slabs_released;
	out->large_allocs = h.large_allocs;
	out->heap_hits = h.hits;
	out->heap_misses = h.misses;
	out->maps = h.maps;
	out->unmaps = h.unmaps;
	out->madvise_calls = h.madvises;
	out->mapped_bytes = h.mapped;
	out->dirty_bytes = h.dirty;
	out->purged_bytes = h.clean;
	out->meta_bytes = h.meta;
	out->refills = ak_slab_refills();
	out->fallback_allocs = __atomic_load_n(&nr_fallback, __ATOMIC_RELAXED);
	out->deferred_frees = __atomic_load_n(&nr_deferred, __ATOMIC_RELAXED);
}

/* The fields of struct ak_malloc_info that count calls, not bytes. */
static const size_t count_fields[] = {
	offsetof(struct ak_malloc_info, refills),
	offsetof(struct ak_malloc_info, slabs_made),
	offsetof(struct ak_malloc_info, slabs_released),
	offsetof(struct ak_malloc_info, large_allocs),
	offsetof(struct ak_malloc_info, heap_hits),
	offsetof(struct ak_malloc_info, heap_misses),
	offsetof(struct ak_malloc_info, maps),
	offsetof(struct ak_malloc_info, unmaps),
	offsetof(struct ak_malloc_info, madvise_calls),
	offsetof(struct ak_malloc_info, fallback_allocs),
	offsetof(struct ak_malloc_info, deferred_frees),
};

EXPORT int ak_malloc_info(struct ak_malloc_info *out)
{
	int m = __atomic_load_n(&ready_mode, __ATOMIC_ACQUIRE);
	size_t k;

	if (m < 0)
		return -1;
	counts_now(out);
	for (k = 0; k < sizeof(count_fields) / sizeof(*count_fields); k++)
		*(size_t *)((char *)out + count_fields[k]) -=
			*(size_t *)((char *)&inherited + count_fields[k]);
	out->design = ak_slab_fastpath_name(design);
	out->mode = ak_percpu_mode_name((enum ak_percpu_mode)m);
	return 0;
}

/*
 * AK_MALLOC_STATS=PATH: the counters as one JSON line appended to PATH
 * at exit, one write(2) so that the processes of one run (a make and its
 * compilers) never interleave their lines.
 */
static void __attribute__((destructor)) akm_stats_dtor(void)
{
	const char *path = getenv("AK_MALLOC_STATS");
	struct ak_malloc_info i;
	char buf[1024];
	int fd, n;

	if (!path || !*path || ak_malloc_info(&i))
		return;
	n = snprintf(buf, sizeof(buf),
		     "{\"pid\": %ld, \"design\": \"%s\", \"mode\": \"%s\", "
		     "\"refills\": %zu, \"slabs_made\": %zu, "
		     "\"slabs_released\": %zu, \"large_allocs\": %zu, "
		     "\"heap_hits\": %zu, \"heap_misses\": %zu, "
		     "\"maps\": %zu, \"unmaps\": %zu, "
		     "\"madvise_calls\": %zu, \"mapped_bytes\": %zu, "
		     "\"dirty_bytes\": %zu, \"purged_bytes\": %zu, "
		     "\"meta_bytes\": %zu, \"fallback_allocs\": %zu, "
		     "\"deferred_frees\": %zu}\n",
		     (long)getpid(), i.design, i.mode, i.refills,
		     i.slabs_made, i.slabs_released, i.large_allocs,
		     i.heap_hits, i.heap_misses, i.maps, i.unmaps,
		     i.madvise_calls, i.mapped_bytes, i.dirty_bytes,
		     i.purged_bytes, i.meta_bytes, i.fallback_allocs,
		     i.deferred_frees);
	if (n <= 0 || (size_t)n >= sizeof(buf))
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, buf, (size_t)n) < 0)
		n = 0;
	close(fd);
}
