// SPDX-License-Identifier: MIT
/*
 * Contended updates through every SMP-safe variant: NTHREADS threads (more
 * than this machine's 2 cores) each add ITERS through the variant's CAS
 * loop, and the total must be exact.  xchg and fetch_add get their own
 * exactness checks: an exchange chain must conserve its tokens, and
 * fetch_add must count.
 */
#include <pthread.h>
#include <string.h>
#include "variants.h"

#define NTHREADS	4
#define CAS_ITERS	1000000UL	/* per thread, per CAS variant */
#define RMW_ITERS	200000UL	/* per thread, xchg and fetch_add */

/* 64-bit counters start below 2^32 so the total carries into bit 32. */
#define START64		(0xffffffffull - 1000)
#define START_HI	0x0123000000000000ull

static struct {
	const struct ak_variant *v;
	unsigned long iters;
	pthread_barrier_t go;
	union {
		uint32_t c32;
		uint64_t c64;
		ak_u128 c128;
	} __attribute__((aligned(64))) shared;
	uint64_t tokens[NTHREADS];	/* xchg: what each thread holds */
} T;

static void cas_loop(void)
{
	unsigned long i;

	for (i = 0; i < T.iters; i++)
		vinc(T.v, &T.shared, 3);
}

/* Pass tokens along: each thread swaps what it holds with the slot. */
static void xchg_loop(int self)
{
	const struct ak_variant *v = T.v;
	uint64_t tok = T.tokens[self];
	unsigned long i;

	for (i = 0; i < T.iters; i++) {
		if (v->width == 32)
			tok = v->fn.xchg32(&T.shared.c32, (uint32_t)tok);
		else
			tok = v->fn.xchg64(&T.shared.c64, tok);
	}
	T.tokens[self] = tok;
}

static void *worker(void *arg)
{
	int self = (int)(intptr_t)arg;

	pthread_barrier_wait(&T.go);
	if (T.v->kind == ak_prim_xchg)
		xchg_loop(self);
	else
		cas_loop();
	return NULL;
}

static void run_threads(void)
{
	pthread_t th[NTHREADS];
	int i;

	assert_int_equal(pthread_barrier_init(&T.go, NULL, NTHREADS), 0);
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker,
						(void *)(intptr_t)i), 0);
	for (i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&T.go);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_xchg(void)
{
	uint64_t all[NTHREADS + 1];
	int i;

	/* tokens 1..NTHREADS and the slot's 0: each must survive once */
	memcpy(all, T.tokens, sizeof(T.tokens));
	all[NTHREADS] = T.v->width == 32 ? T.shared.c32 : T.shared.c64;
	qsort(all, NTHREADS + 1, sizeof(all[0]), cmp_u64);
	for (i = 0; i <= NTHREADS; i++)
		assert_int_equal(all[i], T.v->width == 32 ? (uint64_t)i :
				 (uint64_t)i << 33 | i);
}

static void test_variant(void **state)
{
	const struct ak_variant *v = *state;
	unsigned long total;
	int i;

	SKIP_UNUSABLE(v);
	memset(&T.shared, 0, sizeof(T.shared));
	T.v = v;
	T.iters = ak_test_iters(v->kind == ak_prim_cmpxchg ||
				v->kind == ak_prim_try_cmpxchg ?
				CAS_ITERS : RMW_ITERS);
	total = T.iters * NTHREADS;
	if (v->width == 64 && v->kind != ak_prim_xchg)
		T.shared.c64 = START64;
	if (v->width == 128)
		T.shared.c128 = ak_u128_make(START_HI, START64);
	for (i = 0; i < NTHREADS; i++)
		T.tokens[i] = v->width == 32 ? (uint64_t)i + 1 :
			      (uint64_t)(i + 1) << 33 | (i + 1);

	run_threads();

	if (v->kind == ak_prim_xchg) {
		check_xchg();
		return;
	}
	switch (v->width) {
	case 32:
		assert_int_equal(T.shared.c32, (uint32_t)total);
		break;
	case 64:
		assert_int_equal(T.shared.c64, START64 + total);
		break;
	case 128:
		/* both halves moved together, every time */
		assert_int_equal(ak_u128_lo(T.shared.c128), START64 + total);
		assert_int_equal(ak_u128_hi(T.shared.c128),
				 START_HI + 3 * (uint64_t)total);
		break;
	}
}

static bool smp_safe(const struct ak_variant *v)
{
	return v->smp_safe;
}

int main(void)
{
	return ak_run_with_variants("contended", NULL, 0, test_variant,
				    smp_safe);
}
