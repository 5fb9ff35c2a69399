// SPDX-License-Identifier: MIT
/*
 * A stress test of the malloc backend (issue 23), run by
 * tests/test_malloc_stress.sh under libatomkit-malloc.so in every design
 * and per-CPU mode the machine has, and once on glibc's malloc as the
 * control.  Under the library it checks first that malloc and free
 * resolved to it, in the design and mode asked.
 *
 * Eight threads churn objects of 1 byte to 8 MiB, heavy-tailed
 * (P(size >= s) about s^-3/4, so that most are small and the large path
 * still comes up), some of them aligned to 16 bytes up to 1 MiB; they
 * hand objects to each other through a shared exchange, so that any
 * object may be freed or realloc'd by a thread other than its maker, and
 * realloc grows and shrinks them, across the 16 KiB boundary of the
 * kmalloc classes both ways.  Then a ring, in fixed steps: each thread
 * makes one object of every size class, of the sizes either side of
 * each, of large sizes to 8 MiB and of every alignment, and the next
 * thread checks and frees them, realloc'ing some across 16 KiB first.
 *
 * Every object is filled with a pattern derived from (thread, serial,
 * size) and checked, every byte, before it is freed and before and after
 * each realloc (up to the smaller size).  The test counts every object
 * made, freed and checked: it fails unless made == freed at the end,
 * exactly, and no byte was wrong.
 *
 * Then fork from the eight threads while they churn (each child checks
 * what its parent's forking thread held, frees it, from a new thread
 * too, allocates a mixed set and exits 0), and RLIMIT_AS in a child:
 * each of several sizes, small and large, allocated until malloc says
 * ENOMEM, then all freed, allocated again, and every byte checked.
 *
 * Options, for the driver: --modes prints each per-CPU mode with "yes"
 * or why not; --asan says whether this is a sanitizer build.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <atomkit/malloc.h>
#include "ak_test.h"
#include "malloc_test.h"

#define NTHREADS	8
#define WSET		64		/* objects each thread holds */
#define NEXCH		64		/* the shared exchange's slots */
#define MAX_SIZE	(8ul << 20)
#define MAX_SHIFT	23		/* MAX_SIZE = 1 << MAX_SHIFT */
#define KMALLOC_MAX	16384ul		/* kmalloc's largest class */
#define MAX_ALIGN_SHIFT	20		/* alignments to 1 MiB */
#define RING_MAX	128		/* a thread's part of the ring */
#define CHILD_MAX	96		/* objects a forked child makes */

/* A deadlocked child is killed, and fails, rather than hang the suite. */
#define CHILD_ALARM	120

/* ---- objects and their patterns ---- */

struct obj {
	unsigned char *p;	/* NULL: none */
	size_t size;
	size_t align;		/* 0: malloc's own */
	unsigned int thread;	/* who made (or last realloc'd) it */
	unsigned long serial;	/* that thread's count at the time */
};

struct counts {
	unsigned long made;	/* malloc and the memalign forms */
	unsigned long freed;
	unsigned long checked;	/* objects, and realloc'd prefixes */
	unsigned long reallocs;
	unsigned long up;	/* realloc from <= 16 KiB to above */
	unsigned long down;	/* and back */
	unsigned long remote;	/* freed by another than its maker */
	unsigned long aligned;
	unsigned long large;	/* made above 16 KiB */
	unsigned long largest;
	unsigned long bad_objs;	/* objects with a wrong byte */
	unsigned long bad_bytes;
	unsigned long misaligned;	/* or shorter than asked */
	unsigned long nomem;	/* an allocation that failed */
};

struct worker {
	pthread_t tid;
	unsigned int id;
	uint64_t rng;
	unsigned long serial;
	unsigned long iters;	/* the churn's length; 0: until stop */
	uint32_t ws[WSET];	/* indices into objs[] */
	struct counts c;
};

static uint64_t seed_of(const struct obj *o)
{
	uint64_t x = ((uint64_t)o->thread << 48) ^ ((uint64_t)o->serial << 24) ^
		     (uint64_t)o->size;

	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	return x;
}

/* Word i of the pattern: distinct at each offset, so a shift shows. */
static inline uint64_t pattern(uint64_t seed, size_t i)
{
	return seed ^ ((uint64_t)i * 0xd6e8feb86659fd93ull);
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	size_t i, words = n / 8;
	uint64_t v;

	for (i = 0; i < words; i++) {
		v = pattern(seed, i);
		memcpy(p + 8 * i, &v, 8);
	}
	if (n % 8) {
		v = pattern(seed, words);
		memcpy(p + 8 * words, &v, n % 8);
	}
}

static size_t bytes_differ(const unsigned char *a, const unsigned char *b,
			   size_t n, size_t *first)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++)
		if (a[i] != b[i] && !bad++)
			*first = i;
	return bad;
}

/* How many of p[0..n) differ from fill(seed); the first at *first. */
static size_t verify(const unsigned char *p, size_t n, uint64_t seed,
		     size_t *first)
{
	size_t i, words = n / 8, bad = 0, at = 0, b;
	uint64_t v;

	for (i = 0; i < words; i++) {
		v = pattern(seed, i);
		if (memcmp(p + 8 * i, &v, 8)) {
			b = bytes_differ(p + 8 * i, (unsigned char *)&v, 8,
					 &at);
			if (!bad)
				*first = 8 * i + at;
			bad += b;
		}
	}
	if (n % 8) {
		v = pattern(seed, words);
		b = bytes_differ(p + 8 * words, (unsigned char *)&v, n % 8,
				 &at);
		if (b && !bad)
			*first = 8 * words + at;
		bad += b;
	}
	return bad;
}

static unsigned int reports;

/* Check n bytes of o against its pattern; false (and counted) if any differ. */
static bool check(struct counts *c, const struct obj *o, size_t n,
		  const char *when)
{
	size_t first = 0, bad = verify(o->p, n, seed_of(o), &first);

	c->checked++;
	if (!bad)
		return true;
	c->bad_objs++;
	c->bad_bytes += bad;
	if (__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED) < 8)
		printf("# corrupted %s: %zu of %zu bytes checked wrong in an object of %zu (align %zu, thread %u, serial %lu) at %p, the first at %zu\n",
		       when, bad, n, o->size, o->align, o->thread, o->serial,
		       (void *)o->p, first);
	return false;
}

/* xorshift64*: each thread's own sequence */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/*
 * The octave of a size: octave k (sizes 2^k to 2^(k+1) - 1, and 8 MiB
 * itself for k = 23) is drawn with P(k >= j) = 2^(-3j/4), the size
 * uniform inside it.  s^-1 would be the classic tail, but would reach
 * 16 KiB once in 16384 draws; at s^-3/4 it is once in 1448, at an
 * average of some 230 bytes an object.
 */
static uint32_t octave_at[MAX_SHIFT + 1];

static void init_sizes(void)
{
	double t = 4294967295.0;
	unsigned int k;

	for (k = 0; k <= MAX_SHIFT; k++) {
		octave_at[k] = (uint32_t)t;
		t *= 0.5946035575013605;	/* 2^(-3/4) */
	}
}

static size_t draw_size(uint64_t *s)
{
	uint64_t r = rnd(s);
	uint32_t u = (uint32_t)(r >> 32);
	unsigned int k = 0;

	while (k < MAX_SHIFT && u < octave_at[k + 1])
		k++;
	if (k == MAX_SHIFT)
		return MAX_SIZE;
	return ((size_t)1 << k) + (size_t)(r & (((uint64_t)1 << k) - 1));
}

/* ---- the operations, each counted ---- */

enum form { F_MALLOC, F_POSIX_MEMALIGN, F_ALIGNED_ALLOC, F_MEMALIGN };

/* Allocate o (size, and align in form), fill it; false if refused. */
static bool make(struct counts *c, unsigned int thread, unsigned long *serial,
		 struct obj *o, size_t size, size_t align, enum form form)
{
	void *p = NULL;
	int rc;

	switch (form) {
	case F_MALLOC:
		p = malloc(size);
		align = 0;
		break;
	case F_POSIX_MEMALIGN:
		rc = posix_memalign(&p, align, size);
		if (rc) {
			p = NULL;
			errno = rc;
		}
		break;
	case F_ALIGNED_ALLOC:
		/* C11 asks for a multiple (ASan holds to it) */
		size = (size + align - 1) & ~(align - 1);
		p = aligned_alloc(align, size);
		break;
	case F_MEMALIGN:
		p = memalign(align, size);
		break;
	}
	if (!p) {
		c->nomem++;
		return false;
	}
	if (((uintptr_t)p & 15) || (align && ((uintptr_t)p & (align - 1))) ||
	    malloc_usable_size(p) < size) {
		c->misaligned++;
		if (__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED) < 8)
			printf("# %p for %zu bytes at alignment %zu (form %d): misaligned or short (usable %zu)\n",
			       p, size, align, form, malloc_usable_size(p));
	}
	o->p = p;
	o->size = size;
	o->align = align;
	o->thread = thread;
	o->serial = (*serial)++;
	fill(o->p, size, seed_of(o));
	c->made++;
	if (align)
		c->aligned++;
	if (size > KMALLOC_MAX)
		c->large++;
	if (size > c->largest)
		c->largest = size;
	return true;
}

static void release(struct counts *c, unsigned int thread, struct obj *o)
{
	check(c, o, o->size, "at free");
	if (o->thread != thread)
		c->remote++;
	free(o->p);
	o->p = NULL;
	c->freed++;
}

/* realloc o to n bytes: checked before, its prefix after, refilled. */
static void resize(struct counts *c, unsigned int thread,
		   unsigned long *serial, struct obj *o, size_t n)
{
	unsigned char *q;
	struct obj moved;

	check(c, o, o->size, "before realloc");
	q = realloc(o->p, n);
	if (!q) {
		c->nomem++;
		return;
	}
	moved = *o;
	moved.p = q;
	check(c, &moved, o->size < n ? o->size : n, "after realloc");
	c->reallocs++;
	if (o->size <= KMALLOC_MAX && n > KMALLOC_MAX)
		c->up++;
	if (o->size > KMALLOC_MAX && n <= KMALLOC_MAX)
		c->down++;
	if (n > c->largest)
		c->largest = n;
	o->p = q;
	o->size = n;
	o->align = 0;
	o->thread = thread;
	o->serial = (*serial)++;
	fill(o->p, n, seed_of(o));
}

static void add_counts(struct counts *to, const struct counts *c)
{
	to->made += c->made;
	to->freed += c->freed;
	to->checked += c->checked;
	to->reallocs += c->reallocs;
	to->up += c->up;
	to->down += c->down;
	to->remote += c->remote;
	to->aligned += c->aligned;
	to->large += c->large;
	if (c->largest > to->largest)
		to->largest = c->largest;
	to->bad_objs += c->bad_objs;
	to->bad_bytes += c->bad_bytes;
	to->misaligned += c->misaligned;
	to->nomem += c->nomem;
}

/* The whole run's books: nothing lost, nothing wrong, every step checked. */
static void assert_books(const char *what, const struct counts *c)
{
	printf("# %s: %lu made (%lu aligned, %lu above 16 KiB, the largest %lu bytes), %lu freed (%lu by another thread), %lu reallocs (%lu up across 16 KiB, %lu down), %lu checks; %lu corrupted, %lu misaligned or short, %lu refused\n",
	       what, c->made, c->aligned, c->large, c->largest, c->freed,
	       c->remote, c->reallocs, c->up, c->down, c->checked,
	       c->bad_objs, c->misaligned, c->nomem);
	assert_int_equal(c->bad_objs, 0);
	assert_int_equal(c->bad_bytes, 0);
	assert_int_equal(c->misaligned, 0);
	assert_int_equal(c->nomem, 0);
	assert_int_equal(c->made, c->freed);
	assert_int_equal(c->checked, c->freed + 2 * c->reallocs);
}

/* ---- the churn: eight threads and the exchange ---- */

static struct obj objs[NTHREADS * WSET + NEXCH];
static uint32_t exch[NEXCH];
static struct worker workers[NTHREADS];
static volatile int stop;
static unsigned int running;	/* workers that have begun their loop */
static pthread_barrier_t ring_barrier;
static unsigned long ring_rounds;
static struct obj ring[NTHREADS][RING_MAX];
static unsigned int ring_len[NTHREADS];

static void reset_objs(void)
{
	unsigned int i, t;

	memset(objs, 0, sizeof(objs));
	for (t = 0; t < NTHREADS; t++)
		for (i = 0; i < WSET; i++)
			workers[t].ws[i] = t * WSET + i;
	for (i = 0; i < NEXCH; i++)
		exch[i] = NTHREADS * WSET + i;
}

/* A new object of a drawn size, one in 32 aligned (16 B to 1 MiB). */
static void make_drawn(struct worker *w, struct obj *o)
{
	uint64_t r = rnd(&w->rng);
	size_t size = draw_size(&w->rng), align;
	enum form form;

	if (r % 32) {
		make(&w->c, w->id, &w->serial, o, size, 0, F_MALLOC);
		return;
	}
	align = (size_t)1 << (4 + (r >> 8) % (MAX_ALIGN_SHIFT - 3));
	form = (enum form)(1 + (r >> 16) % 3);
	if (form == F_ALIGNED_ALLOC && align > 4096)
		form = F_POSIX_MEMALIGN;	/* not rounded up to 1 MiB */
	make(&w->c, w->id, &w->serial, o, size, align, form);
}

/* A realloc size: drawn afresh, across 16 KiB, or 2 to 8 times either way. */
static size_t realloc_size(struct worker *w, size_t old)
{
	uint64_t r = rnd(&w->rng);
	size_t n;

	switch (r % 16) {
	case 0:
		return old <= KMALLOC_MAX ?
			KMALLOC_MAX + 1 + (size_t)(r >> 8) % KMALLOC_MAX :
			1 + (size_t)(r >> 8) % KMALLOC_MAX;
	case 1: case 2: case 3: case 4:
		return draw_size(&w->rng);
	default:
		n = (r >> 8) & 1 ? old << (1 + (r >> 9) % 3) :
				   old >> (1 + (r >> 9) % 3);
		return n < 1 ? 1 : n > MAX_SIZE ? MAX_SIZE : n;
	}
}

static void churn_step(struct worker *w)
{
	uint64_t r = rnd(&w->rng);
	unsigned int k = (unsigned int)(r % WSET);
	unsigned int op = (unsigned int)(r >> 8) % 16;
	struct obj *o = &objs[w->ws[k]];

	if (!o->p) {
		make_drawn(w, o);
	} else if (op < 7) {
		release(&w->c, w->id, o);
	} else if (op < 10) {
		resize(&w->c, w->id, &w->serial, o, realloc_size(w, o->size));
	} else {
		/* hand it over; take whatever the slot held */
		w->ws[k] = __atomic_exchange_n(&exch[(r >> 16) % NEXCH],
					       w->ws[k], __ATOMIC_ACQ_REL);
	}
}

/* Free what the thread holds, made by it or by others. */
static void release_ws(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < WSET; i++)
		if (objs[w->ws[i]].p)
			release(&w->c, w->id, &objs[w->ws[i]]);
}

/* The sizes every thread puts in the ring: each class and either side. */
static size_t ring_sizes[64];
static unsigned int nring_sizes;
/* ... and the large ones, each from one thread */
static const size_t ring_large[] = {
	KMALLOC_MAX + 1, 20000, 32769, 65537, 100000, 131073, 262145,
	524289, (1ul << 20) + 1, (2ul << 20) + 1, (4ul << 20) + 1, MAX_SIZE,
	MAX_SIZE - 1,
};

static void init_ring_sizes(void)
{
	size_t s, cand[4];
	unsigned int j, i, n = 0;

	for (j = 0; (1ul << j) <= KMALLOC_MAX; j++) {
		s = 1ul << j;
		cand[0] = s - 1;
		cand[1] = s;
		cand[2] = s + 1;
		cand[3] = s + s / 2;	/* 96, 192: the two odd classes */
		for (i = 0; i < 4; i++)
			if (cand[i] && cand[i] <= KMALLOC_MAX &&
			    (!n || cand[i] > ring_sizes[n - 1]) &&
			    n < AK_ARRAY_SIZE(ring_sizes))
				ring_sizes[n++] = cand[i];
	}
	nring_sizes = n;
}

/* This thread's part of the ring: every size, its share of the large. */
static void ring_fill(struct worker *w)
{
	struct obj *box = ring[w->id];
	unsigned int n = 0, i, sh;

	for (i = 0; i < nring_sizes; i++)
		make(&w->c, w->id, &w->serial, &box[n++], ring_sizes[i], 0,
		     F_MALLOC);
	for (i = w->id; i < AK_ARRAY_SIZE(ring_large); i += NTHREADS)
		make(&w->c, w->id, &w->serial, &box[n++], ring_large[i], 0,
		     F_MALLOC);
	for (sh = 4; sh <= MAX_ALIGN_SHIFT; sh++) {
		size_t a = (size_t)1 << sh;

		make(&w->c, w->id, &w->serial, &box[n++], 100, a,
		     F_POSIX_MEMALIGN);
		if (sh % NTHREADS == w->id % NTHREADS)
			make(&w->c, w->id, &w->serial, &box[n++], 20000, a,
			     F_MEMALIGN);
		if (a <= 4096)
			make(&w->c, w->id, &w->serial, &box[n++], a + 1, a,
			     F_ALIGNED_ALLOC);
	}
	ring_len[w->id] = n;
}

/* The next thread's part: checked and freed here, some realloc'd first. */
static void ring_drain(struct worker *w)
{
	unsigned int from = (w->id + 1) % NTHREADS, i;
	struct obj *box = ring[from];

	for (i = 0; i < ring_len[from]; i++) {
		struct obj *o = &box[i];

		if (!o->p)
			continue;	/* refused: counted by its maker */
		if (i % 4 == 0) {
			size_t there = o->size <= KMALLOC_MAX ?
				KMALLOC_MAX + 1 + i * 97 :
				1 + i * 97 % KMALLOC_MAX;
			size_t back = o->size <= KMALLOC_MAX ?
				1 + i * 89 % KMALLOC_MAX : KMALLOC_MAX + 1 + i;

			resize(&w->c, w->id, &w->serial, o, there);
			resize(&w->c, w->id, &w->serial, o, back);
		}
		release(&w->c, w->id, o);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long i, round;

	__atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
	for (i = 0; w->iters ? i < w->iters :
			       !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
		/* busy, yet leaving the forking thread some CPU */
		if (!w->iters && i % 16 == 0)
			sched_yield();
		churn_step(w);
	}
	if (w->iters) {
		for (round = 0; round < ring_rounds; round++) {
			ring_fill(w);
			pthread_barrier_wait(&ring_barrier);
			ring_drain(w);
			pthread_barrier_wait(&ring_barrier);
		}
	}
	release_ws(w);
	return NULL;
}

/*
 * Start the workers, each churning iters steps (0: until stop), and
 * return once every one of them runs its loop: a fork must find them
 * allocating, not still being born.  Under qemu-user a thread that has
 * not yet run holds, for a moment, a lock of qemu's own (clone_lock)
 * that qemu's fork does not take, and a child forked then hangs in its
 * first pthread_create (doc/testing.md).  SIGALRM stays blocked in them:
 * the forking thread's bounded wait is the one to get it.
 */
static void start_workers(unsigned long iters)
{
	sigset_t alrm, old;
	unsigned int t;

	reset_objs();
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&running, 0, __ATOMIC_RELAXED);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old);
	for (t = 0; t < NTHREADS; t++) {
		struct worker *w = &workers[t];

		memset(&w->c, 0, sizeof(w->c));
		w->id = t;
		w->rng = 0x9e3779b97f4a7c15ull * (t + 1) + 1;
		w->serial = 0;
		w->iters = iters;
		assert_int_equal(pthread_create(&w->tid, NULL, worker_main, w),
				 0);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) < NTHREADS)
		sched_yield();
}

/* Join the workers, free what the exchange holds, add up the books. */
static void stop_workers(struct counts *sum)
{
	struct counts mine = { 0 };
	unsigned int t, i;

	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (t = 0; t < NTHREADS; t++) {
		assert_int_equal(pthread_join(workers[t].tid, NULL), 0);
		add_counts(sum, &workers[t].c);
	}
	for (i = 0; i < NEXCH; i++)
		if (objs[exch[i]].p)
			release(&mine, NTHREADS, &objs[exch[i]]);
	add_counts(sum, &mine);
}

static void t_resolves(void **state)
{
	struct ak_malloc_info in;

	(void)state;
	ak_malloc_check_resolves(&in);
	printf("# on libatomkit-malloc.so: design %s, mode %s\n", in.design,
	       in.mode);
}

/* Eight threads, the exchange, realloc, then the ring. */
static void t_stress(void **state)
{
	struct counts sum = { 0 };

	(void)state;
	ring_rounds = ak_test_iters(4);
	assert_int_equal(pthread_barrier_init(&ring_barrier, NULL, NTHREADS),
			 0);
	start_workers(ak_test_iters(40000));
	stop_workers(&sum);
	pthread_barrier_destroy(&ring_barrier);
	assert_books("stress", &sum);
	/* the ring's reallocs alone cross 16 KiB both ways, every round */
	assert_true(sum.up >= ring_rounds && sum.down >= ring_rounds);
}

/* ---- fork from busy threads ---- */

/* What the forking thread holds across each fork: every range, aligned too. */
static const size_t held_sizes[] = { 1, 16, 100, 1000, 4096, KMALLOC_MAX,
				     KMALLOC_MAX + 1, 100000, (1ul << 20) + 1 };
#define NHELD	(AK_ARRAY_SIZE(held_sizes) + 2)

static struct obj held[NHELD];
static struct obj child_objs[CHILD_MAX], thread_objs[CHILD_MAX];

/* A mixed set into set[], counted in c; how many made. */
static unsigned int make_mixed(struct counts *c, unsigned int thread,
			       unsigned long *serial, struct obj *set)
{
	static const size_t large[] = { KMALLOC_MAX + 1, 100000,
					(1ul << 20) + 1 };
	unsigned int n = 0, i;

	for (i = 0; i < nring_sizes && n < CHILD_MAX; i++)
		make(c, thread, serial, &set[n++], ring_sizes[i], 0, F_MALLOC);
	for (i = 0; i < AK_ARRAY_SIZE(large) && n < CHILD_MAX; i++)
		make(c, thread, serial, &set[n++], large[i], 0, F_MALLOC);
	for (i = 4; i <= MAX_ALIGN_SHIFT && n < CHILD_MAX; i += 2)
		make(c, thread, serial, &set[n++], 3000, (size_t)1 << i,
		     F_POSIX_MEMALIGN);
	return n;
}

struct child_thread {
	struct counts c;
	unsigned int n;
};

/* The child's new thread: frees half of what the parent held, makes a set. */
static void *child_thread_main(void *arg)
{
	struct child_thread *ct = arg;
	unsigned long serial = 0;
	unsigned int i;

	for (i = 0; i < NHELD; i += 2)
		release(&ct->c, 201, &held[i]);
	ct->n = make_mixed(&ct->c, 201, &serial, thread_objs);
	for (i = 0; i < ct->n; i += 3)
		resize(&ct->c, 201, &serial, &thread_objs[i],
		       thread_objs[i].size <= KMALLOC_MAX ? 40000 : 500);
	return NULL;
}

/* The child's work; its exit status (0: all well). */
static int child_work(void)
{
	struct child_thread ct = { { 0 }, 0 };
	struct counts c = { 0 };
	unsigned long serial = 0, made_held = 0;
	unsigned int i, n;
	pthread_t t;

	/* what the parent's forking thread held is whole, and is ours */
	for (i = 0; i < NHELD; i++)
		if (!check(&c, &held[i], held[i].size, "in the child"))
			return 1;
	made_held = NHELD;
	n = make_mixed(&c, 200, &serial, child_objs);
	if (pthread_create(&t, NULL, child_thread_main, &ct) ||
	    pthread_join(t, NULL))
		return 2;
	for (i = 1; i < NHELD; i += 2)
		release(&c, 200, &held[i]);
	for (i = 0; i < n; i++)
		release(&c, 200, &child_objs[i]);
	for (i = 0; i < ct.n; i++)
		release(&c, 200, &thread_objs[i]);
	add_counts(&c, &ct.c);
	if (c.bad_objs || c.misaligned)
		return 3;
	if (c.nomem)
		return 4;
	/* every object the child made or was left is freed, each checked */
	if (c.made + made_held != c.freed ||
	    c.checked != c.freed + NHELD + 2 * c.reallocs)
		return 5;
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Wait for pid, CHILD_ALARM and a minute at most: its status, -1 if hung. */
static int wait_bounded(pid_t pid)
{
	struct sigaction sa, old;
	int status = 0;
	pid_t got;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: waitpid returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarm(CHILD_ALARM + 60);
	got = waitpid(pid, &status, 0);
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	if (got != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void t_fork(void **state)
{
	unsigned long i, n = ak_test_iters(4), serial = 0;
	struct counts sum = { 0 }, mine = { 0 };
	unsigned int k;

	(void)state;
	if (ASAN_BUILD)
		ak_skip("ASan's allocator: a child forked from busy threads can hang in it");
	for (k = 0; k < AK_ARRAY_SIZE(held_sizes); k++)
		make(&mine, NTHREADS, &serial, &held[k], held_sizes[k], 0,
		     F_MALLOC);
	make(&mine, NTHREADS, &serial, &held[k++], 5000, 65536,
	     F_POSIX_MEMALIGN);
	make(&mine, NTHREADS, &serial, &held[k++], 100, 1ul << 20, F_MEMALIGN);
	start_workers(0);
	for (i = 0; i < n; i++) {
		pid_t pid;
		int rc;

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			signal(SIGALRM, SIG_DFL);
			alarm(CHILD_ALARM);
			exit(child_work());
		}
		assert_true(pid > 0);
		rc = wait_bounded(pid);
		if (rc)
			fail_msg("fork %lu: child %s %d (1: the parent's objects corrupted, 2: no thread, 3: corrupted, 4: refused, 5: lost; 10xx: signal)",
				 i, rc < 0 ? "hung, killed;" : "exit", rc);
	}
	stop_workers(&sum);
	for (k = 0; k < NHELD; k++)
		release(&mine, NTHREADS, &held[k]);
	add_counts(&sum, &mine);
	printf("# %lu forks from %d busy threads, each child exited 0\n", n,
	       NTHREADS);
	assert_books("fork", &sum);
}

/* ---- RLIMIT_AS ---- */

/*
 * Stay on the CPU we are on: objects freed into one CPU's cache are not
 * another CPU's to hand out, so after a migration a recount could fall
 * short by what the first CPU's cache holds, by design.
 */
static void pin(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* How far above what the child maps RLIMIT_AS is set: 8 MiB, scaled. */
static size_t rlimit_margin;

/*
 * Set RLIMIT_AS's soft limit rlimit_margin above the address space in
 * use; the limit, or 0 if it could not be set.
 */
static size_t limit_near(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;
	struct rlimit rl;
	int ok;

	if (!f)
		return 0;
	ok = fscanf(f, "%lu", &pages) == 1;
	fclose(f);
	if (!ok || getrlimit(RLIMIT_AS, &rl))
		return 0;
	rl.rlim_cur = pages * (size_t)sysconf(_SC_PAGESIZE) + rlimit_margin;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
		return 0;
	return setrlimit(RLIMIT_AS, &rl) ? 0 : (size_t)rl.rlim_cur;
}

/*
 * Objects of size (align: 0 or posix_memalign's), each linked to the last
 * through its first word and filled after it, until the allocator refuses
 * or max; the chain, the count in *count, errno at the refusal in *err.
 */
static unsigned char *exhaust(struct counts *c, unsigned long *serial,
			      size_t size, size_t align, unsigned long max,
			      unsigned long *count, int *err)
{
	unsigned char *head = NULL;
	struct obj o;

	*count = 0;
	*err = 0;
	while (*count < max) {
		errno = 0;
		if (!make(c, 300, serial, &o, size, align,
			  align ? F_POSIX_MEMALIGN : F_MALLOC)) {
			*err = errno;
			c->nomem--;	/* the refusal asked for */
			break;
		}
		memcpy(o.p, &head, sizeof(head));
		memcpy(o.p + sizeof(head), &o.serial, sizeof(o.serial));
		head = o.p;
		++*count;
	}
	return head;
}

/* Check every object of the chain (all but its two words), then free it. */
static void release_chain(struct counts *c, unsigned char *p, size_t size,
			  size_t align)
{
	const size_t hdr = sizeof(void *) + sizeof(unsigned long);

	while (p) {
		struct obj o = { .p = p, .size = size, .align = align,
				 .thread = 300 };
		unsigned char *next;
		uint64_t v;

		memcpy(&next, p, sizeof(next));
		memcpy(&o.serial, p + sizeof(next), sizeof(o.serial));
		/* the pattern's words behind the chain's two */
		v = pattern(seed_of(&o), 0);
		memcpy(p, &v, 8);
		v = pattern(seed_of(&o), 1);
		if (hdr > 8)
			memcpy(p + 8, &v, hdr - 8);
		release(c, 300, &o);
		p = next;
	}
}

struct rl_round {
	size_t size, align;
};

/* The sizes, largest first; 0: a quarter and an eighth of the margin. */
static struct rl_round rl_rounds[] = {
	{ 0, 0 }, { 0, 0 }, { 4096, 1ul << 20 },
	{ 100000, 0 }, { KMALLOC_MAX, 0 }, { 1000, 0 }, { 64, 0 },
};

/* One size: until ENOMEM, all freed, then again; an exit code, 0 if well. */
static int rlimit_round(struct counts *c, unsigned long *serial,
			const struct rl_round *r, unsigned int i)
{
	size_t limit = limit_near();
	unsigned long max, n, again;
	unsigned char *chain;
	int err;

	/* more than the whole limit holds: the limit was not enforced */
	max = limit / r->size + 1;
	if (!limit)
		return 20 + (int)i * 10;
	chain = exhaust(c, serial, r->size, r->align, max, &n, &err);
	if (n == max)
		return 21 + (int)i * 10;	/* the limit was not enforced */
	if (err != ENOMEM)
		return 22 + (int)i * 10;
	release_chain(c, chain, r->size, r->align);
	chain = exhaust(c, serial, r->size, r->align, n, &again, &err);
	release_chain(c, chain, r->size, r->align);
	printf("# RLIMIT_AS, %zu bytes%s%.0zu: ENOMEM after %lu, then %lu again\n",
	       r->size, r->align ? " aligned to " : "", r->align, n, again);
	if (again < n / 2)
		return 23 + (int)i * 10;
	return 0;
}

/* The child of t_rlimit: its exit status, 0 if all went well. */
static int rlimit_child(void)
{
	struct counts c = { 0 };
	struct obj keep[AK_ARRAY_SIZE(held_sizes)];
	unsigned long serial = 0;
	unsigned int i, k;
	void *probe;
	int rc;

	pin();
	rlimit_margin = ak_test_iters(8) << 20;
	if (rlimit_margin < (2ul << 20))
		rlimit_margin = 2ul << 20;
	rl_rounds[0].size = rlimit_margin / 4 + 1;
	rl_rounds[1].size = rlimit_margin / 8 + 1;
	for (k = 0; k < AK_ARRAY_SIZE(held_sizes); k++)
		if (!make(&c, 301, &serial, &keep[k], held_sizes[k], 0,
			  F_MALLOC))
			return 2;
	/*
	 * qemu-user takes setrlimit(RLIMIT_AS) and enforces nothing
	 * (AK_EMULATED: the cross rig); a real kernel under emulation (the
	 * system rig) does, and runs the test.
	 */
	if (getenv("AK_EMULATED")) {
		if (!limit_near())
			return 3;
		probe = mmap(NULL, 4 * rlimit_margin, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (probe != MAP_FAILED)
			return 77;
	}
	for (i = 0; i < AK_ARRAY_SIZE(rl_rounds); i++) {
		fflush(stdout);
		rc = rlimit_round(&c, &serial, &rl_rounds[i], i);
		if (rc)
			return rc;
		/* what was held all along is whole */
		for (k = 0; k < AK_ARRAY_SIZE(keep); k++)
			if (!check(&c, &keep[k], keep[k].size,
				   "under RLIMIT_AS"))
				return 4;
		c.checked -= AK_ARRAY_SIZE(keep);
	}
	for (k = 0; k < AK_ARRAY_SIZE(keep); k++)
		release(&c, 301, &keep[k]);
	if (c.bad_objs || c.misaligned || c.nomem)
		return 5;
	if (c.made != c.freed || c.checked != c.freed)
		return 6;
	return 0;
}

static void t_rlimit(void **state)
{
	pid_t pid;
	int rc;

	(void)state;
	if (ASAN_BUILD)
		ak_skip("ASan's allocator: its quarantine and shadow decide when it runs out");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(CHILD_ALARM);
		rc = rlimit_child();
		fflush(stdout);
		_exit(rc);
	}
	assert_true(pid > 0);
	rc = wait_bounded(pid);
	if (rc == 77)
		ak_skip("qemu-user does not enforce RLIMIT_AS");
	if (rc)
		fail_msg("rlimit child: %s %d (20 + 10 r + x in round r from 0: x = 0 no limit set, 1 not enforced, 2 no ENOMEM, 3 no recovery; 2, 3: set-up, 4: held objects corrupted, 5: corrupted or refused, 6: lost; 10xx: signal)",
			 rc < 0 ? "hung, killed;" : "exit", rc);
}

static const struct CMUnitTest tests[] = {
	AK_TEST(t_resolves),
	AK_TEST(t_stress),
	AK_TEST(t_fork),
	AK_TEST(t_rlimit),
};

int main(int argc, char **argv)
{
	int m;

	if (argc > 1 && !strcmp(argv[1], "--modes")) {
		for (m = 0; m < AK_PERCPU_NR_MODES; m++) {
			const char *why = NULL;

			printf("%s %s\n", ak_percpu_mode_name(m),
			       ak_percpu_mode_available(m, &why) ? "yes" : why);
		}
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--asan")) {
		printf("%d\n", ASAN_BUILD);
		return 0;
	}
	init_sizes();
	init_ring_sizes();
	return ak_test_main(preloaded_design() ? "malloc_stress" :
			    "malloc_stress[glibc]", tests, AK_ARRAY_SIZE(tests));
}
