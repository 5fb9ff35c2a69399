// SPDX-License-Identifier: MIT
/*
 * _local is atomic against the calling thread's own signal handlers, as
 * the kernel's is against its own CPU's interrupts.  The thread counts
 * with a _local CAS loop while a timer signal, every ~20 us, runs a
 * handler that counts the same variable the same way; no increment may be
 * lost.  This is the one test a non-atomic read-modify-write fails.
 */
#include <signal.h>
#include <string.h>
#include <time.h>
#include "variants.h"

#define ITERS		1000000UL
#define TIMER_US	20

enum op {
	OP_API32, OP_API64, OP_API_TRY32, OP_API_TRY64, OP_API128,
	OP_API_TRY128, OP_API_DOUBLE, OP_VARIANT
};

static struct {
	enum op op;
	const struct ak_variant *v;
	uint32_t c32;
	uint64_t c64;
	ak_u128 c128;
	volatile unsigned long handled;
	volatile sig_atomic_t armed;
} S;

/* One increment, by the op under test, of its counter. */
static void increment(void)
{
	const struct ak_variant *v = S.v;

	switch (S.op) {
	case OP_API32: {
		uint32_t o = *(volatile uint32_t *)&S.c32, r;

		while ((r = ak_cmpxchg_local(&S.c32, o, o + 1)) != o)
			o = r;
		break;
	}
	case OP_API64: {
		uint64_t o = *(volatile uint64_t *)&S.c64, r;

		while ((r = ak_cmpxchg_local(&S.c64, o, o + 1)) != o)
			o = r;
		break;
	}
	case OP_API_TRY32: {
		uint32_t o = *(volatile uint32_t *)&S.c32;

		while (!ak_try_cmpxchg_local(&S.c32, &o, o + 1))
			;
		break;
	}
	case OP_API_TRY64: {
		uint64_t o = *(volatile uint64_t *)&S.c64;

		while (!ak_try_cmpxchg_local(&S.c64, &o, o + 1))
			;
		break;
	}
	case OP_API128: {
		ak_u128 o = *(volatile ak_u128 *)&S.c128, r;

		while ((r = ak_cmpxchg128_local(&S.c128, o,
						o + ak_u128_make(1, 1))) != o)
			o = r;
		break;
	}
	case OP_API_TRY128: {
		ak_u128 o = *(volatile ak_u128 *)&S.c128;

		while (!ak_try_cmpxchg128_local(&S.c128, &o,
						o + ak_u128_make(1, 1)))
			;
		break;
	}
	case OP_API_DOUBLE: {
		unsigned long *w = (unsigned long *)(void *)&S.c128;
		unsigned long a, b;

		do {
			a = ((volatile unsigned long *)w)[0];
			b = ((volatile unsigned long *)w)[1];
		} while (!ak_cmpxchg_double_local(&w[0], &w[1], a, b, a + 1,
						  b + 1));
		break;
	}
	case OP_VARIANT:
		vinc(v, v->width == 32 ? (void *)&S.c32 :
			v->width == 64 ? (void *)&S.c64 : (void *)&S.c128, 1);
		break;
	}
}

/*
 * One-shot, re-armed by the handler: the next signal comes ~20 us after
 * this one ends, so a slow handler (qemu-user takes far longer than 20 us
 * to deliver a signal) cannot starve the thread it interrupts.
 */
static timer_t timer;
static const struct itimerspec next_shot = { .it_value = { 0, TIMER_US * 1000 } };

static void on_alarm(int sig)
{
	(void)sig;
	increment();
	S.handled++;
	if (S.armed)
		timer_settime(timer, 0, &next_shot, NULL);
}

static uint64_t count_of(void)
{
	unsigned int width = S.op == OP_VARIANT ? S.v->width :
		(S.op == OP_API32 || S.op == OP_API_TRY32) ? 32 :
		(S.op == OP_API64 || S.op == OP_API_TRY64) ? 64 : 128;

	switch (width) {
	case 32:
		return S.c32;
	case 64:
		return S.c64;
	default:
		/* both halves counted: they must agree */
		assert_int_equal(ak_u128_hi(S.c128), ak_u128_lo(S.c128));
		return ak_u128_lo(S.c128);
	}
}

static void run(enum op op, const struct ak_variant *v)
{
	struct sigaction sa;
	struct sigevent sev = {
		.sigev_notify = SIGEV_SIGNAL,
		.sigev_signo = SIGALRM,
	};
	unsigned long i, iters = ak_test_iters(ITERS);
	uint64_t expected;

	memset(&S, 0, sizeof(S));
	S.op = op;
	S.v = v;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	S.armed = 1;
	assert_int_equal(timer_settime(timer, 0, &next_shot, NULL), 0);
	for (i = 0; i < iters; i++)
		increment();
	S.armed = 0;
	assert_int_equal(timer_delete(timer), 0);
	signal(SIGALRM, SIG_IGN);

	expected = iters + S.handled;
	print_message("# %lu increments, %lu from the handler\n", iters,
		      (unsigned long)S.handled);
	/* the race must have been run for the result to mean anything */
	assert_true(S.handled > 0);
	assert_int_equal(count_of(), expected);
}

static void test_api32(void **s) { (void)s; run(OP_API32, NULL); }
static void test_api64(void **s) { (void)s; run(OP_API64, NULL); }
static void test_api_try32(void **s) { (void)s; run(OP_API_TRY32, NULL); }
static void test_api_try64(void **s) { (void)s; run(OP_API_TRY64, NULL); }
static void test_api128(void **s) { (void)s; run(OP_API128, NULL); }
static void test_api_try128(void **s) { (void)s; run(OP_API_TRY128, NULL); }
static void test_api_double(void **s) { (void)s; run(OP_API_DOUBLE, NULL); }

static void test_variant(void **state)
{
	const struct ak_variant *v = *state;

	SKIP_UNUSABLE(v);
	run(OP_VARIANT, v);
}

/* The variants whose order is "local" or relaxed CAS: what _local maps to. */
static bool local_cas(const struct ak_variant *v)
{
	return (v->kind == ak_prim_cmpxchg || v->kind == ak_prim_try_cmpxchg) &&
	       (!strcmp(v->order, "local") || !strcmp(v->order, "relaxed"));
}

int main(void)
{
	static const struct CMUnitTest api[] = {
		AK_TEST(test_api32),
		AK_TEST(test_api64),
		AK_TEST(test_api_try32),
		AK_TEST(test_api_try64),
		AK_TEST(test_api128),
		AK_TEST(test_api_try128),
		AK_TEST(test_api_double),
	};

	return ak_run_with_variants("local_signal", api, AK_ARRAY_SIZE(api),
				    test_variant, local_cas);
}
