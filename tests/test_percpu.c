// SPDX-License-Identifier: MIT
/*
 * Per-CPU ops in every mode.  main() runs the whole suite once per mode,
 * each in a child process (the mode is fixed per process), relays the
 * children's TAP lines and prints the plan at the end.  A mode this
 * machine lacks (rseq under qemu-user: ENOSYS) is reported as skipped
 * with its reason, and the fallbacks run instead.
 *
 * Built twice: plainly, and with AK_RSEQ_STRESS, where the rseq sections
 * carry delay injection points and the storms must make the kernel abort
 * some of them.  Each build also holds the suite compiled again with the
 * mode fixed at build time (AK_PERCPU_MODE, the wrappers
 * test_percpu_fixed_*.c), run after the modes chosen at run time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <atomkit/percpu.h>
#include "ak_test.h"

#define NTHREADS	8
#ifdef AK_RSEQ_STRESS
/* every section is widened by ~µs: fewer passes give as many races */
# define ITERS		100000UL	/* per thread */
#else
# define ITERS		1000000UL	/* per thread */
#endif
#define TIMER_US	20
#define MIGRATE_EVERY	1000		/* ops between affinity changes */
#define NNODES		1024
#define HOLD		4		/* nodes a list/array thread holds */
#define ARRAY_LIMIT	64

enum storm { CALM, MIGRATION, SIGNALS };

static enum ak_percpu_mode mode;

static void skip_unless_rseq_for_stress(void)
{
#ifdef AK_RSEQ_STRESS
	if (mode > AK_PERCPU_RSEQ_MM_CID)
		ak_skip("stress build: exercises rseq aborts only");
#endif
}

/* ---- storms ---- */

static cpu_set_t allowed;
static int nallowed;

static void migrate(unsigned long i, int self)
{
	cpu_set_t one;
	int k, n = (int)((i / MIGRATE_EVERY + self) % nallowed), c;

	for (c = 0, k = -1; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed) && ++k == n)
			break;
	CPU_ZERO(&one);
	CPU_SET(c, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

/* The handler's own work, counted, on the same variable. */
static void (*handler_op)(void);
static unsigned long handled;
static __thread volatile sig_atomic_t handled_here;	/* by this thread */
static __thread timer_t thread_timer;
static __thread volatile sig_atomic_t timer_armed;
static const struct itimerspec next_shot = {
	.it_value = { 0, TIMER_US * 1000 },
};

/* One-shot, re-armed after the work: a slow delivery cannot starve us. */
static void on_timer(int sig)
{
	int saved = errno;

	(void)sig;
	if (handler_op) {
		handler_op();
		__atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
		handled_here = 1;
	}
	if (timer_armed)
		timer_settime(thread_timer, 0, &next_shot, NULL);
	errno = saved;
}

static void storm_start(enum storm s)
{
	struct sigevent sev;

	if (s != SIGNALS)
		return;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &thread_timer))
		abort();
	timer_armed = 1;
	timer_settime(thread_timer, 0, &next_shot, NULL);
}

static void storm_stop(enum storm s)
{
	if (s != SIGNALS)
		return;
	timer_armed = 0;
	timer_delete(thread_timer);
}

static void storm_setup(enum storm s)
{
	struct sigaction sa;

	handled = 0;
	if (s == MIGRATION) {
		CPU_ZERO(&allowed);
		sched_getaffinity(0, sizeof(allowed), &allowed);
		nallowed = CPU_COUNT(&allowed);
		if (nallowed < 2)
			ak_skip("migration storm needs 2 CPUs, %d allowed",
				nallowed);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_timer;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
}

/* Run fn(self) on NTHREADS threads, each under the storm. */
static enum storm cur_storm;
static void (*thread_body)(int self, unsigned long iters);
static unsigned long thread_iters;

/*
 * Odd threads are set up for per-CPU ops before their body, even ones at
 * their first op, inside the body's loop: an op's first test reads the
 * thread's rseq area with a load the compiler may keep from before that,
 * so the even threads' ops may all take the out-of-line path, the odd
 * threads' the inline one, on the same copies at once.
 */
static void *thread_main(void *arg)
{
	int self = (int)(intptr_t)arg;

	if (self & 1)
		(void)ak_percpu_thread_try_init();
	storm_start(cur_storm);
	thread_body(self, thread_iters);
	storm_stop(cur_storm);
	return NULL;
}

static void run_threads(enum storm s, void (*body)(int, unsigned long),
			unsigned long iters)
{
	pthread_t th[NTHREADS];
	int i;

	storm_setup(s);
	cur_storm = s;
	thread_body = body;
	thread_iters = iters;
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, thread_main,
						(void *)(intptr_t)i), 0);
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
}

/* ---- single-thread semantics ---- */

/*
 * The calling thread held on the CPU it is on, so that a sequence of
 * this_cpu ops meets one copy: a migration between two of them would
 * (correctly) move to another CPU's copy.  Returns the old mask in *old.
 */
static void pin_here(cpu_set_t *old)
{
	cpu_set_t one;
	int c = sched_getcpu();

	assert_int_equal(sched_getaffinity(0, sizeof(*old), old), 0);
	assert_true(c >= 0);
	CPU_ZERO(&one);
	CPU_SET(c, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
}

/*
 * One thread, pinned: the list and array ops' results, what a refused
 * push leaves, LIFO order, and that only this CPU's copy changed.
 */
static void list_array_ops(void)
{
	struct ak_percpu_array *ar = ak_percpu_alloc(ak_percpu_array_size(2),
						     64), *a;
	struct ak_percpu_list *li = ak_percpu_alloc(sizeof(*li), 16), *l;
	void *o[3][2] = { { NULL } };	/* objects link through word 0 */
	unsigned int cpu, other = 0;

	assert_non_null(ar);
	assert_non_null(li);
	assert_null(ak_this_cpu_array_pop(ar));
	assert_int_equal(ak_this_cpu_array_push(ar, 2, o[0]), 0);
	assert_int_equal(ak_this_cpu_array_push(ar, 2, o[1]), 0);
	assert_int_equal(ak_this_cpu_array_push(ar, 2, o[2]), 1);
	a = ak_this_cpu_ptr(ar);
	assert_int_equal(a->count, 2);
	assert_ptr_equal(a->slots[0], o[0]);
	assert_ptr_equal(a->slots[1], o[1]);
	ak_for_each_cpu(cpu)
		other += ak_per_cpu_ptr(ar, cpu)->count;
	assert_int_equal(other, 2);
	assert_ptr_equal(ak_this_cpu_array_pop(ar), o[1]);
	assert_ptr_equal(ak_this_cpu_array_pop(ar), o[0]);
	assert_null(ak_this_cpu_array_pop(ar));
	assert_int_equal(a->count, 0);

	assert_null(ak_this_cpu_list_pop(li));
	ak_this_cpu_list_push(li, o[0]);
	ak_this_cpu_list_push(li, o[1]);
	l = ak_this_cpu_ptr(li);
	assert_ptr_equal(l->head, o[1]);
	assert_ptr_equal(o[1][0], o[0]);
	assert_null(o[0][0]);
	other = 0;
	ak_for_each_cpu(cpu)
		other += ak_per_cpu_ptr(li, cpu)->head != NULL;
	assert_int_equal(other, 1);
	assert_ptr_equal(ak_this_cpu_list_pop(li), o[1]);
	assert_ptr_equal(ak_this_cpu_list_pop(li), o[0]);
	assert_null(ak_this_cpu_list_pop(li));
	assert_null(l->head);
	ak_percpu_free(ar);
	ak_percpu_free(li);
}

static void test_ops(void **state)
{
	uint32_t *c32 = ak_percpu_alloc(sizeof(*c32), 4);
	uint64_t *c64 = ak_percpu_alloc(sizeof(*c64), 8);
	void **pp = ak_percpu_alloc(sizeof(void *), 8);
	uint64_t o64;
	unsigned int cpu, n = ak_nr_cpus();
	cpu_set_t saved;
	int x;

	(void)state;
	pin_here(&saved);
	assert_non_null(c32);
	assert_non_null(c64);
	assert_non_null(pp);
	/* copies are zeroed, distinct and on lines of their own */
	ak_for_each_cpu(cpu) {
		assert_int_equal(*ak_per_cpu_ptr(c64, cpu), 0);
		if (cpu)
			assert_true((char *)ak_per_cpu_ptr(c64, cpu) -
				    (char *)ak_per_cpu_ptr(c64, cpu - 1) >= 64);
	}
	assert_true(n >= 1);
	assert_true(AK_IS_ALIGNED16(ak_per_cpu_ptr(c64, n - 1)) ||
		    ((uintptr_t)ak_per_cpu_ptr(c64, n - 1) & 7) == 0);

	ak_this_cpu_write(c32, 0xfffffffeu);
	ak_this_cpu_inc(c32);
	assert_int_equal(ak_this_cpu_add_return(c32, 1), 0);	/* wraps */
	ak_this_cpu_dec(c32);
	assert_int_equal(ak_percpu_sum_u32(c32), 0xffffffffu);
	assert_int_equal(ak_this_cpu_xchg(c32, 7u), 0xffffffffu);
	assert_int_equal(ak_this_cpu_cmpxchg(c32, 7u, 8u), 7u);
	assert_int_equal(ak_this_cpu_cmpxchg(c32, 7u, 9u), 8u);
	assert_int_equal(ak_percpu_sum_u32(c32), 8u);

	ak_this_cpu_add(c64, 0xffffffffull);
	ak_this_cpu_add(c64, 2);			/* carries past 32 bits */
	assert_int_equal(ak_percpu_sum_u64(c64), 0x100000001ull);
	o64 = 1;
	assert_false(ak_this_cpu_try_cmpxchg(c64, &o64, 5));
	assert_int_equal(o64, 0x100000001ull);
	assert_true(ak_this_cpu_try_cmpxchg(c64, &o64, 5));
	assert_int_equal(ak_this_cpu_read(c64), 5);

	assert_null(ak_this_cpu_xchg(pp, (void *)&x));
	assert_ptr_equal(ak_this_cpu_cmpxchg(pp, (void *)&x, NULL), &x);
	assert_null(ak_this_cpu_read(pp));

	list_array_ops();

	ak_percpu_free(c32);
	ak_percpu_free(c64);
	ak_percpu_free(pp);
	sched_setaffinity(0, sizeof(saved), &saved);
}

/*
 * Whether every copy of a per-CPU uint32_t[2] (word 0 written, word 1 a
 * neighbour that no write may touch), uint64_t and pointer holds what it
 * should: its mark (a pointer's, never dereferenced), or want in the
 * copy of slot this.
 */
#define WRITE_MARK32(cpu)	(0xa5a50000u + (cpu))
#define WRITE_MARK64(cpu)	(0x5a5a5a5a00000000ull + (cpu))
#define WRITE_MARKP(cpu)	((void *)(uintptr_t)(0x5a5a0000u + 8 * (cpu)))

static void check_copies(const uint32_t *c32, const uint64_t *c64,
			 void *const *pp, unsigned int this, uint32_t want32,
			 uint64_t want64, void *wantp)
{
	unsigned int cpu;

	ak_for_each_cpu(cpu) {
		const uint32_t *w = ak_per_cpu_ptr(c32, cpu);

		assert_int_equal(w[0], cpu == this ? want32 :
				 WRITE_MARK32(cpu));
		assert_int_equal(w[1], ~WRITE_MARK32(cpu));
		assert_int_equal(*ak_per_cpu_ptr(c64, cpu),
				 cpu == this ? want64 : WRITE_MARK64(cpu));
		assert_ptr_equal(*ak_per_cpu_ptr(pp, cpu),
				 cpu == this ? wantp : WRITE_MARKP(cpu));
	}
}

/*
 * One thread, pinned: write stores its whole value, of either width and
 * of a pointer, to this CPU's copy only, and leaves the bytes beside a
 * 32-bit copy and every other copy as they were.
 */
static void test_write(void **state)
{
	uint32_t *c32 = ak_percpu_alloc(2 * sizeof(*c32), 4);
	uint64_t *c64 = ak_percpu_alloc(sizeof(*c64), 8);
	void **pp = ak_percpu_alloc(sizeof(void *), 8);
	unsigned int cpu, this;
	cpu_set_t saved;
	uint64_t i;
	int x;

	(void)state;
	pin_here(&saved);
	assert_non_null(c32);
	assert_non_null(c64);
	assert_non_null(pp);
	ak_for_each_cpu(cpu) {
		ak_per_cpu_ptr(c32, cpu)[0] = WRITE_MARK32(cpu);
		ak_per_cpu_ptr(c32, cpu)[1] = ~WRITE_MARK32(cpu);
		*ak_per_cpu_ptr(c64, cpu) = WRITE_MARK64(cpu);
		*ak_per_cpu_ptr(pp, cpu) = WRITE_MARKP(cpu);
	}
	this = (unsigned int)(((char *)ak_this_cpu_ptr(c64) - (char *)c64) /
			      ak_percpu_stride(c64));
	assert_true(this < ak_nr_cpus());

	ak_this_cpu_write(c32, 0xfffffffeu);
	ak_this_cpu_write(c64, 0x8000000100000003ull);	/* both halves */
	ak_this_cpu_write(pp, (void *)&x);
	check_copies(c32, c64, pp, this, 0xfffffffeu, 0x8000000100000003ull,
		     &x);
	assert_int_equal(ak_this_cpu_read(c32), 0xfffffffeu);
	assert_int_equal(ak_this_cpu_read(c64), 0x8000000100000003ull);

	/* overwritten, whatever was there; the last value stays */
	for (i = 1; i <= 1000; i++) {
		ak_this_cpu_write(c32, (uint32_t)i);
		ak_this_cpu_write(c64, i << 32 | i);
		ak_this_cpu_write(pp, i & 1 ? NULL : (void *)&x);
	}
	check_copies(c32, c64, pp, this, 1000, 1000ull << 32 | 1000, &x);
	ak_this_cpu_write(c32, 0);
	ak_this_cpu_write(c64, 0);
	ak_this_cpu_write(pp, NULL);
	check_copies(c32, c64, pp, this, 0, 0, NULL);

	ak_percpu_free(c32);
	ak_percpu_free(c64);
	ak_percpu_free(pp);
	sched_setaffinity(0, sizeof(saved), &saved);
}

static void test_alloc_errors(void **state)
{
	(void)state;
	errno = 0;
	assert_null(ak_percpu_alloc(0, 8));
	assert_int_equal(errno, EINVAL);
	assert_null(ak_percpu_alloc(8, 24));	/* not a power of two */
	assert_int_equal(errno, EINVAL);
	/* the mode cannot change once per-CPU memory exists */
	{
		void *p = ak_percpu_alloc(8, 8);
		enum ak_percpu_mode other = mode == AK_PERCPU_THREAD ?
			AK_PERCPU_ATOMIC : AK_PERCPU_THREAD;

		assert_non_null(p);
		assert_int_equal(ak_percpu_set_mode(other), -1);
#ifdef AK_PERCPU_MODE_FIXED
		assert_int_equal(errno, ENOTSUP);	/* never another mode */
#else
		assert_int_equal(errno, EBUSY);
#endif
		assert_int_equal(ak_percpu_mode(), mode);
		ak_percpu_free(p);
	}
}

/* ---- counter under storms ---- */

static uint64_t *counter;

static void count_op(void)
{
	ak_this_cpu_inc(counter);
}

/*
 * Under the signal storm a thread goes on past iters until its timer has
 * fired once (at most 100 times as long): a timer tick can outlast a
 * scaled-down run under emulation, and a storm that never struck tests
 * nothing.  The ops past iters are counted in extra_ops.
 */
static unsigned long extra_ops;

static void count_body(int self, unsigned long iters)
{
	unsigned long i;

	for (i = 0; i < iters || (cur_storm == SIGNALS && !handled_here &&
				  i < 100 * iters); i++) {
		if (cur_storm == MIGRATION && i % MIGRATE_EVERY == 0)
			migrate(i, self);
		ak_this_cpu_inc(counter);
	}
	if (i > iters)
		__atomic_fetch_add(&extra_ops, i - iters, __ATOMIC_RELAXED);
}

static void counter_test(enum storm s)
{
	unsigned long iters = ak_test_iters(ITERS);

	skip_unless_rseq_for_stress();
	counter = ak_percpu_alloc(sizeof(*counter), 8);
	assert_non_null(counter);
	handler_op = count_op;
	extra_ops = 0;
	run_threads(s, count_body, iters);
	handler_op = NULL;
	if (s == SIGNALS) {
		print_message("# %lu increments from signal handlers\n",
			      handled);
		assert_true(handled > 0);
	}
	assert_int_equal(ak_percpu_sum_u64(counter),
			 (uint64_t)iters * NTHREADS + extra_ops + handled);
	ak_percpu_free(counter);
}

static void test_counter(void **s) { (void)s; counter_test(CALM); }
static void test_counter_migration(void **s) { (void)s; counter_test(MIGRATION); }
static void test_counter_signals(void **s) { (void)s; counter_test(SIGNALS); }

/* ---- 128-bit pairs under both storms ---- */

static ak_u128 *pairs;

static void pair_op(void)
{
	ak_u128 *p = ak_this_cpu_ptr(pairs), o = *(volatile ak_u128 *)p;

	while (!ak_this_cpu_try_cmpxchg128(pairs, &o, o + ak_u128_make(3, 1)))
		;
}

static void pair_body(int self, unsigned long iters)
{
	unsigned long i;

	for (i = 0; i < iters; i++) {
		if (i % MIGRATE_EVERY == 0 && nallowed >= 2)
			migrate(i, self);
		pair_op();
	}
}

static void test_cmpxchg128_pairs(void **state)
{
	unsigned long iters = ak_test_iters(ITERS) / 4, lo = 0;
	unsigned int cpu;

	(void)state;
	skip_unless_rseq_for_stress();
	pairs = ak_percpu_alloc(sizeof(*pairs), 16);
	assert_non_null(pairs);
	CPU_ZERO(&allowed);
	sched_getaffinity(0, sizeof(allowed), &allowed);
	nallowed = CPU_COUNT(&allowed);
	handler_op = pair_op;
	run_threads(SIGNALS, pair_body, iters);
	handler_op = NULL;
	ak_for_each_cpu(cpu) {
		ak_u128 v = *ak_per_cpu_ptr(pairs, cpu);

		/* both halves moved together on every copy */
		assert_int_equal(ak_u128_hi(v), 3 * ak_u128_lo(v));
		lo += ak_u128_lo(v);
	}
	assert_int_equal(lo, iters * NTHREADS + handled);
	ak_percpu_free(pairs);
}

/* ---- freelist and array: every object accounted for, exactly once ---- */

struct node {
	struct node *next;
	unsigned long id;
};

/*
 * The array an array_ptr slot points to (the sections' layout: count at
 * +0, slots at +8), as a slab sheaf.
 */
struct parray {
	unsigned long count;
	void *slots[ARRAY_LIMIT];
};

enum pool { POOL_LIST, POOL_ARRAY, POOL_ARRAY_PTR };

static struct node nodes[NNODES];
/*
 * A list with the owner word list_push_owned compares (+16): every copy
 * says LIST_OWNER, the slab cache's rseq-list a slab.
 */
struct olist {
	struct ak_percpu_list l;
	uintptr_t owner;
};

#define LIST_OWNER	((uintptr_t)0x5a5a000)
#define LIST_POISON	((struct node *)0x1)

static struct ak_percpu_list *lists;	/* struct olist copies */
static struct ak_percpu_array *arrays;
static struct parray **parrays;
static struct parray *parray_store;	/* one per copy */
static void *held[NTHREADS][HOLD];
/* array_ptr: an array a thread took out of a slot and could not put back */
static struct parray *held_parray[NTHREADS];
static enum pool body_pool;

/*
 * array_ptr pop and push, the sections sheaf's entry points run: on the
 * array of the slot, in place.  Only in the rseq modes.
 */
static void *parray_pop(void)
{
	return ak_this_cpu_array_ptr_pop((void *const *)parrays);
}

static bool parray_push(void *obj)
{
	return !ak_this_cpu_array_ptr_push((void *const *)parrays,
					   ARRAY_LIMIT, obj);
}

/*
 * What the slow path of sheaf does: take the slot's array out with
 * this_cpu_xchg, change it with plain ops, put it back with
 * this_cpu_cmpxchg on the slot of the CPU we are on now; if that slot
 * got an array meanwhile (we migrated), keep ours and try again later.
 */
static void parray_swap(int self)
{
	struct parray *a = held_parray[self];

	if (!a)
		a = ak_this_cpu_xchg(parrays, (struct parray *)NULL);
	if (!a)
		return;
	if (a->count > 1) {	/* reverse the last two: still one of each */
		void *x = a->slots[a->count - 1];

		a->slots[a->count - 1] = a->slots[a->count - 2];
		a->slots[a->count - 2] = x;
	}
	held_parray[self] = ak_this_cpu_cmpxchg(parrays, (struct parray *)NULL,
						a) ? a : NULL;
}

/*
 * The bulk sections: up to *n at once; how many moved (0: none).  Their
 * aborts are counted apart too (bulk_aborts), so that the stress build
 * can show that these sections, not only their neighbours, restart.
 */
static unsigned long bulk_aborts;

/* The section itself, run until it is not aborted, its aborts counted. */
static int bulk_run(bool pop, void **objs, unsigned long *n)
{
	struct ak_rseq_abi *rs = ak_rseq_thread();
	const uint32_t *idp = ak_rseq_id_field(rs, mode);
	void *base = parrays;
	size_t stride = ak_percpu_stride(parrays);
	unsigned long want = *n;
	int rc;

	for (;;) {
		*n = want;
		rc = pop ? ak_rseq_array_ptr_pop_n(rs, idp, &base, &stride,
						   objs, n) :
			   ak_rseq_array_ptr_push_n(rs, idp, &base, &stride,
						    ARRAY_LIMIT, objs, n);
		if (rc >= 0)
			return rc;
		ak_rseq_count_abort();
		__atomic_fetch_add(&bulk_aborts, 1, __ATOMIC_RELAXED);
	}
}

static unsigned long parray_pop_n(void **dst, unsigned long n)
{
	return bulk_run(true, dst, &n) ? 0 : n;
}

static unsigned long parray_push_n(void *const *src, unsigned long n)
{
	return bulk_run(false, (void **)src, &n) ? 0 : n;
}

/* array_ptr, every third turn: take and give what we can in one go. */
static void parray_bulk_turn(int self, unsigned long i, int *n)
{
	void **h = held[self];
	unsigned long k;

	if (*n < HOLD) {
		k = parray_pop_n(h + *n, (unsigned long)(HOLD - *n));
		if (k > (unsigned long)(HOLD - *n))
			abort();	/* a worker thread: no cmocka assert */
		*n += (int)k;
		/*
		 * An aborted try copies too, and may have copied more than
		 * the try that committed: past *n lie objects never taken,
		 * which the final count would see twice.
		 */
		memset(h + *n, 0, (size_t)(HOLD - *n) * sizeof(*h));
	}
	if (*n && (i & 1)) {
		k = parray_push_n(h, (unsigned long)*n);
		if (k > (unsigned long)*n)
			abort();
		memmove(h, h + k, (size_t)(*n - (int)k) * sizeof(*h));
		*n -= (int)k;
		memset(h + *n, 0, (size_t)(HOLD - *n) * sizeof(*h));
	}
}

/*
 * Every other push of a node, in the rseq modes: list_push_owned, which
 * must refuse another owner and store nothing (the link stays as set),
 * then take the copy's own.
 */
static int list_push_owned(void *obj, uintptr_t owner)
{
	struct ak_rseq_abi *rs = ak_rseq_thread();
	const uint32_t *idp = ak_rseq_id_field(rs, mode);
	void *base = lists;
	size_t stride = ak_percpu_stride(lists);
	int rc;

	while ((rc = ak_rseq_list_push_owned(rs, idp, &base, &stride, owner,
					     obj)) < 0)
		ak_rseq_count_abort();
	return rc;
}

static void list_give(void *obj)
{
	struct node *n = obj;

	if (!ak_percpu_mode_is_rseq(mode) || n->id % 2) {
		ak_this_cpu_list_push(lists, obj);
		return;
	}
	n->next = LIST_POISON;
	/* a worker thread: no cmocka assert */
	if (list_push_owned(obj, LIST_OWNER + 4096) != 1 ||
	    n->next != LIST_POISON || list_push_owned(obj, LIST_OWNER))
		abort();
}

static void *take(enum pool k)
{
	switch (k) {
	case POOL_ARRAY:
		return ak_this_cpu_array_pop(arrays);
	case POOL_ARRAY_PTR:
		return parray_pop();
	default:
		return ak_this_cpu_list_pop(lists);
	}
}

static bool give(enum pool k, void *obj)
{
	switch (k) {
	case POOL_ARRAY:
		return ak_this_cpu_array_push(arrays, ARRAY_LIMIT, obj) == 0;
	case POOL_ARRAY_PTR:
		return parray_push(obj);
	default:
		list_give(obj);
		return true;
	}
}

static void pool_body(int self, unsigned long iters)
{
	unsigned long i;
	int n = 0, k;

	for (i = 0; i < iters; i++) {
		void *o;

		if (cur_storm == MIGRATION && i % MIGRATE_EVERY == 0)
			migrate(i, self);
		if (body_pool == POOL_ARRAY_PTR &&
		    (i % 64 == 0 || held_parray[self]))
			parray_swap(self);
		if (body_pool == POOL_ARRAY_PTR && i % 3 == 0) {
			parray_bulk_turn(self, i, &n);
			continue;
		}
		if (n < HOLD && (o = take(body_pool)))
			held[self][n++] = o;
		if (n && (i & 1) && give(body_pool, held[self][n - 1]))
			held[self][--n] = NULL;
	}
	/* put back what we still hold (an array may refuse: keep it) */
	for (k = n - 1; k >= 0; k--)
		if (give(body_pool, held[self][k]))
			held[self][k] = NULL;
}

static void count_array(unsigned char *seen, void *const *slots,
			unsigned long count)
{
	unsigned long k;

	assert_true(count <= ARRAY_LIMIT);
	for (k = 0; k < count; k++)
		seen[((struct node *)slots[k])->id]++;
}

static void pool_test(enum pool kind, enum storm s)
{
	static unsigned char seen[NNODES];
	unsigned long iters = ak_test_iters(ITERS);
	unsigned int cpu, i, t, k, total = 0;

	skip_unless_rseq_for_stress();
	if (kind == POOL_ARRAY_PTR && mode > AK_PERCPU_RSEQ_MM_CID)
		ak_skip("array_ptr sections: rseq modes only");
	memset(seen, 0, sizeof(seen));
	memset(held, 0, sizeof(held));
	memset(held_parray, 0, sizeof(held_parray));
	parray_store = calloc(ak_nr_cpus(), sizeof(*parray_store));
	assert_non_null(parray_store);
	lists = ak_percpu_alloc(sizeof(struct olist), 16);
	arrays = ak_percpu_alloc(ak_percpu_array_size(ARRAY_LIMIT), 64);
	parrays = ak_percpu_alloc(sizeof(*parrays), 64);
	assert_non_null(lists);
	assert_non_null(arrays);
	assert_non_null(parrays);
	ak_for_each_cpu(cpu) {
		struct olist *ol = (struct olist *)ak_per_cpu_ptr(lists, cpu);

		*ak_per_cpu_ptr(parrays, cpu) = &parray_store[cpu];
		ol->owner = LIST_OWNER;
	}
	/* deal the nodes out over the copies */
	for (i = 0; i < NNODES; i++) {
		nodes[i].id = i;
		cpu = i % ak_nr_cpus();
		if (kind == POOL_ARRAY) {
			struct ak_percpu_array *a = ak_per_cpu_ptr(arrays, cpu);

			if (a->count == ARRAY_LIMIT)
				break;
			a->slots[a->count++] = &nodes[i];
		} else if (kind == POOL_ARRAY_PTR) {
			struct parray *a = &parray_store[cpu];

			if (a->count == ARRAY_LIMIT)
				break;
			a->slots[a->count++] = &nodes[i];
		} else {
			struct ak_percpu_list *l = ak_per_cpu_ptr(lists, cpu);

			nodes[i].next = l->head;
			l->head = &nodes[i];
		}
	}
	total = i;
	body_pool = kind;
	run_threads(s, pool_body, iters);

	ak_for_each_cpu(cpu) {
		if (kind == POOL_ARRAY) {
			struct ak_percpu_array *a = ak_per_cpu_ptr(arrays, cpu);

			count_array(seen, a->slots, a->count);
		} else if (kind == POOL_ARRAY_PTR) {
			/* every array is in a slot or held: count each once */
			struct parray *a = &parray_store[cpu];

			count_array(seen, a->slots, a->count);
		} else {
			struct node *n = ak_per_cpu_ptr(lists, cpu)->head;

			for (; n; n = n->next) {
				assert_true(n >= nodes && n < nodes + NNODES);
				if (++seen[n->id] > 1)
					fail_msg("node %lu on the lists twice",
						 n->id);
			}
		}
	}
	if (kind == POOL_ARRAY_PTR) {
		unsigned int in_slots = 0, in_hand = 0;

		ak_for_each_cpu(cpu)
			in_slots += *ak_per_cpu_ptr(parrays, cpu) != NULL;
		for (t = 0; t < NTHREADS; t++)
			in_hand += held_parray[t] != NULL;
		assert_int_equal(in_slots + in_hand, ak_nr_cpus());
	}
	for (t = 0; t < NTHREADS; t++)
		for (k = 0; k < HOLD; k++)
			if (held[t][k])
				seen[((struct node *)held[t][k])->id]++;
	for (i = 0; i < total; i++)
		if (seen[i] != 1)
			fail_msg("node %u seen %u times", i, seen[i]);
	ak_percpu_free(lists);
	ak_percpu_free(arrays);
	ak_percpu_free(parrays);
	free(parray_store);
}

static void test_list(void **s) { (void)s; pool_test(POOL_LIST, CALM); }
static void test_list_migration(void **s) { (void)s; pool_test(POOL_LIST, MIGRATION); }
static void test_list_signals(void **s) { (void)s; pool_test(POOL_LIST, SIGNALS); }
static void test_array(void **s) { (void)s; pool_test(POOL_ARRAY, CALM); }
static void test_array_migration(void **s) { (void)s; pool_test(POOL_ARRAY, MIGRATION); }
static void test_array_ptr(void **s) { (void)s; pool_test(POOL_ARRAY_PTR, CALM); }
static void test_array_ptr_migration(void **s) { (void)s; pool_test(POOL_ARRAY_PTR, MIGRATION); }
static void test_array_ptr_signals(void **s) { (void)s; pool_test(POOL_ARRAY_PTR, SIGNALS); }

/* ---- the stress build: the restart path really ran ---- */

#ifdef AK_RSEQ_STRESS
static void test_aborts_taken(void **state)
{
	unsigned long before;

	(void)state;
	skip_unless_rseq_for_stress();

	counter_test(SIGNALS);
	counter_test(MIGRATION);
	print_message("# %lu rseq aborts\n", ak_rseq_aborts());
	assert_true(ak_rseq_aborts() > 0);
	/* the list (push_owned too), array and array_ptr sections restart */
	before = ak_rseq_aborts();
	pool_test(POOL_LIST, SIGNALS);
	print_message("# %lu in the list sections\n", ak_rseq_aborts() - before);
	assert_true(ak_rseq_aborts() > before);
	before = ak_rseq_aborts();
	pool_test(POOL_ARRAY, SIGNALS);
	print_message("# %lu in the array sections\n", ak_rseq_aborts() - before);
	assert_true(ak_rseq_aborts() > before);
	before = ak_rseq_aborts();
	bulk_aborts = 0;
	pool_test(POOL_ARRAY_PTR, SIGNALS);
	print_message("# %lu in the array_ptr sections, %lu of them in the bulk (_n) ones\n",
		      ak_rseq_aborts() - before, bulk_aborts);
	assert_true(ak_rseq_aborts() > before);
	assert_true(bulk_aborts > 0);
}
#endif

/* ---- the abort counts: every thread's, summed ---- */

/*
 * Each thread runs the add section itself and counts what the kernel
 * made it do: every -1 is an abort, which it also counts with
 * ak_rseq_count_abort() as the ops do.  Then its own count of aborts
 * must be ak_rseq_thread_aborts(), and all of them together what
 * ak_rseq_aborts() moved by.  In the stress build it goes on until it
 * has seen one (at most 100 times iters): the signal storm must make
 * some there.  The plain build asserts none: an emulated CPU (qemu-system
 * under TCG) takes interrupts between translated blocks only, which a
 * section without the stress build's delay may never straddle.  A second
 * pass runs the API's op, which counts its own.
 */
#ifdef AK_RSEQ_STRESS
# define MUST_ABORT	true
#else
# define MUST_ABORT	false
#endif

static unsigned long seen_aborts[NTHREADS], counted_aborts[NTHREADS];
static bool by_api;

static void nop_op(void)
{
}

static void abort_body(int self, unsigned long iters)
{
	struct ak_rseq_abi *rs = ak_rseq_thread();
	const uint32_t *idp = ak_rseq_id_field(rs, mode);
	unsigned long i, seen = 0, before = ak_rseq_thread_aborts();
	size_t stride = ak_percpu_stride(counter);
	void *base = counter;
	uint64_t old;

	for (i = 0; i < iters ||
	     (MUST_ABORT && !seen && !by_api && i < 100 * iters); i++) {
		if (by_api) {
			ak_this_cpu_inc(counter);
			continue;
		}
		while (ak_rseq_add64(rs, idp, &base, &stride, 1, &old) < 0) {
			seen++;
			ak_rseq_count_abort();
		}
	}
	if (i > iters)
		__atomic_fetch_add(&extra_ops, i - iters, __ATOMIC_RELAXED);
	seen_aborts[self] = seen;
	counted_aborts[self] = ak_rseq_thread_aborts() - before;
}

static void test_abort_counts(void **state)
{
	unsigned long iters = ak_test_iters(ITERS) / 4, before, seen, counted;
	int t, pass;

	(void)state;
	if (mode > AK_PERCPU_RSEQ_MM_CID)
		ak_skip("abort counts: rseq modes only");
	counter = ak_percpu_alloc(sizeof(*counter), 8);
	assert_non_null(counter);
	extra_ops = 0;		/* both passes' */
	for (pass = 0; pass < 2; pass++) {
		by_api = pass;
		handler_op = nop_op;
		before = ak_rseq_aborts();
		run_threads(SIGNALS, abort_body, iters);
		handler_op = NULL;
		seen = counted = 0;
		for (t = 0; t < NTHREADS; t++) {
			if (!by_api)
				assert_int_equal(counted_aborts[t],
						 seen_aborts[t]);
			seen += seen_aborts[t];
			counted += counted_aborts[t];
		}
		print_message("# %s: %lu aborts in %d threads, %lu summed\n",
			      by_api ? "this_cpu_inc" : "the add section",
			      counted, NTHREADS, ak_rseq_aborts() - before);
		assert_int_equal(ak_rseq_aborts() - before, counted);
		if (MUST_ABORT && !by_api)
			assert_true(seen > 0);
	}
	assert_int_equal(ak_percpu_sum_u64(counter),
			 2 * (uint64_t)iters * NTHREADS + extra_ops);
	ak_percpu_free(counter);
}

/* ---- registration ---- */

static void need_rseq(void)
{
	if (mode > AK_PERCPU_RSEQ_MM_CID)
		ak_skip("registration: tests rseq modes only");
}

static void *inc_thread(void *arg)
{
	pthread_barrier_t *b = arg;
	unsigned long i;

	if (b)
		pthread_barrier_wait(b);
	for (i = 0; i < 100000; i++)
		ak_this_cpu_inc(counter);
	assert_true(ak_rseq_thread()->cpu_id < AK_RSEQ_CPU_ID_REGISTRATION_FAILED);
	return NULL;
}

/* Threads that exist before the first per-CPU op, and ones made after. */
static void test_registration_threads(void **state)
{
	pthread_barrier_t b;
	pthread_t early, late;

	(void)state;
	need_rseq();
	assert_int_equal(pthread_barrier_init(&b, NULL, 2), 0);
	assert_int_equal(pthread_create(&early, NULL, inc_thread, &b), 0);
	counter = ak_percpu_alloc(sizeof(*counter), 8);
	ak_this_cpu_inc(counter);
	pthread_barrier_wait(&b);
	assert_int_equal(pthread_create(&late, NULL, inc_thread, NULL), 0);
	pthread_join(early, NULL);
	pthread_join(late, NULL);
	assert_int_equal(ak_percpu_sum_u64(counter), 200001);
	ak_percpu_free(counter);
	pthread_barrier_destroy(&b);
}

static void test_registration_fork(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	need_rseq();
	counter = ak_percpu_alloc(sizeof(*counter), 8);
	ak_this_cpu_inc(counter);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		inc_thread(NULL);	/* the forked thread stays registered */
		_exit(ak_percpu_sum_u64(counter) == 100001 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(ak_percpu_sum_u64(counter), 1);
	ak_percpu_free(counter);
}

static char *self_exe;

/*
 * Run this test again with glibc's registration off: we must register.
 * No shell: the system rig's guests have none.
 */
static void test_registration_tunable(void **state)
{
	char env_mode[64];
	char *argv[] = { self_exe, "--registration-child", NULL };
	char *envp[] = { "GLIBC_TUNABLES=glibc.pthread.rseq=0", env_mode,
			 NULL, NULL };
	const char *lib = getenv("LD_LIBRARY_PATH");
	char env_lib[1024];
	int status;
	pid_t pid;

	(void)state;
	need_rseq();
	if (strcmp(ak_rseq_owner(), "glibc"))
		ak_skip("glibc does not register rseq here (owner: %s)",
			ak_rseq_owner());
	snprintf(env_mode, sizeof(env_mode), "AK_PERCPU_MODE=%s",
		 ak_percpu_mode_name(mode));
	if (lib) {
		snprintf(env_lib, sizeof(env_lib), "LD_LIBRARY_PATH=%s", lib);
		envp[2] = env_lib;
	}
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execve(self_exe, argv, envp);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static __attribute__((unused)) int registration_child(void)
{
	pthread_t t;

	if (strcmp(ak_rseq_owner(), "atomkit")) {
		fprintf(stderr, "owner is %s, want atomkit\n", ak_rseq_owner());
		return 1;
	}
	counter = ak_percpu_alloc(sizeof(*counter), 8);
	pthread_create(&t, NULL, inc_thread, NULL);
	inc_thread(NULL);
	pthread_join(t, NULL);
	return ak_percpu_sum_u64(counter) == 200000 ? 0 : 1;
}

static void test_mode_reported(void **state)
{
	(void)state;
	assert_int_equal(ak_percpu_mode(), mode);
	print_message("# mode %s, %u copies, rseq owner %s\n",
		      ak_percpu_mode_name(mode), ak_nr_cpus(), ak_rseq_owner());
	/* on a real kernel the rseq modes must run on a registered area */
	if (mode <= AK_PERCPU_RSEQ_MM_CID && ak_test_require_rseq()) {
		assert_true(!strcmp(ak_rseq_owner(), "glibc") ||
			    !strcmp(ak_rseq_owner(), "atomkit"));
		assert_true(ak_rseq_thread()->cpu_id <
			    AK_RSEQ_CPU_ID_REGISTRATION_FAILED);
	}
}

static const struct CMUnitTest tests[] = {
	AK_TEST(test_mode_reported),
	AK_TEST(test_ops),
	AK_TEST(test_write),
	AK_TEST(test_alloc_errors),
	AK_TEST(test_counter),
	AK_TEST(test_counter_migration),
	AK_TEST(test_counter_signals),
	AK_TEST(test_cmpxchg128_pairs),
	AK_TEST(test_list),
	AK_TEST(test_list_migration),
	AK_TEST(test_list_signals),
	AK_TEST(test_array),
	AK_TEST(test_array_migration),
	AK_TEST(test_array_ptr),
	AK_TEST(test_array_ptr_migration),
	AK_TEST(test_array_ptr_signals),
#ifdef AK_RSEQ_STRESS
	AK_TEST(test_aborts_taken),
#endif
	AK_TEST(test_abort_counts),
	AK_TEST(test_registration_threads),
	AK_TEST(test_registration_fork),
	AK_TEST(test_registration_tunable),
};

static int set_mode(void *arg)
{
	enum ak_percpu_mode m = *(enum ak_percpu_mode *)arg;

	if (ak_percpu_set_mode(m))
		return -1;
	mode = m;
	return 0;
}

/* The suite in one mode, in a child; its TAP lines come through a pipe. */
static int run_mode(enum ak_percpu_mode m, const char *how,
		    unsigned int *ntests)
{
	char group[96];

	snprintf(group, sizeof(group), "percpu[%s%s]", ak_percpu_mode_name(m),
		 how);
	return ak_test_run_child(group, tests, AK_ARRAY_SIZE(tests),
				 ak_test_mode_skip(m), set_mode, &m, ntests);
}

#ifdef PERCPU_FIXED_RUN
/* This build's suite, in the mode it fixes: run by the plain build. */
int PERCPU_FIXED_RUN(unsigned int *ntests);

int PERCPU_FIXED_RUN(unsigned int *ntests)
{
	self_exe = realpath("/proc/self/exe", NULL);
	return run_mode((enum ak_percpu_mode)AK_PERCPU_MODE_FIXED,
			", fixed at build time", ntests);
}
#else
int percpu_fixed_rseq(unsigned int *ntests);
int percpu_fixed_rseq_mm_cid(unsigned int *ntests);

int main(int argc, char **argv)
{
	unsigned int ntests = 0;
	int m, failed = 0;

	self_exe = realpath("/proc/self/exe", NULL);
	if (argc > 1 && !strcmp(argv[1], "--registration-child"))
		return registration_child();
	for (m = 0; m < AK_PERCPU_NR_MODES; m++)
		failed += run_mode((enum ak_percpu_mode)m, "", &ntests);
	failed += percpu_fixed_rseq(&ntests);
	failed += percpu_fixed_rseq_mm_cid(&ntests);
	printf("1..%u\n", ntests);
	free(self_exe);
	return failed ? 1 : 0;
}
#endif
