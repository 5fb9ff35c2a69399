// SPDX-License-Identifier: MIT
/*
 * The benchmark harness's own measuring parts: the counter is monotonic,
 * its frequency agrees with CLOCK_MONOTONIC, a dependent chain twice as
 * long measures twice as long, pinned threads run where their placement
 * says, without PAPI every counter still names its unit, and the timer
 * correction takes steady rounds and ignores unsteady ones.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ak_test.h"
#include "../bench/counter.h"
#include "../bench/topo.h"

static void test_monotonic(void **state)
{
	unsigned long i, n = ak_test_iters(1000000);
	uint64_t prev = akb_arch_ticks(), now, back = 0;

	(void)state;
	for (i = 0; i < n; i++) {
		now = akb_arch_ticks();
		if (now < prev)
			back++;
		prev = now;
	}
	assert_int_equal(back, 0);
	assert_true(akb_arch_ticks() > prev - 1);
}

static void test_frequency(void **state)
{
	const char *src;
	double hz = akb_arch_hz(&src), got;
	struct timespec d = { 0, 200 * 1000 * 1000 };
	uint64_t n0, t0, n1, t1;

	(void)state;
	assert_true(hz > 0);
	n0 = akb_now_ns();
	t0 = akb_arch_ticks();
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	t1 = akb_arch_ticks();
	n1 = akb_now_ns();
	got = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
	printf("# %s: %.3f MHz (%s), measured over 200 ms: %.3f MHz\n",
	       akb_arch_counter_name(), hz / 1e6, src, got / 1e6);
	assert_true(got > 0.9 * hz && got < 1.1 * hz);
}

/*
 * k dependent multiply-adds; the chain cannot overlap with itself.  Not
 * inlined, so that both lengths run the very same loop: inlined twice,
 * the two copies may be laid out (and, under qemu, translated)
 * differently, and the ratio then measures that, not the counter.
 */
static __attribute__((noinline)) uint64_t chain(unsigned long k)
{
	uint64_t v = 1, t0, t1;
	unsigned long i;

	t0 = akb_arch_ticks();
	for (i = 0; i < k; i++) {
		v = v * 3 + 1;
		__asm__ __volatile__("" : "+r"(v));
	}
	t1 = akb_arch_ticks();
	__asm__ __volatile__("" :: "r"(v));
	return t1 - t0;
}

/*
 * The best of 40 interleaved pairs, in up to five rounds: on a loaded
 * host (a CI machine running qemu beside other jobs) one round's best
 * can still be a disturbed one, and a counter that is not linear fails
 * every round, not one.
 */
static double chain_ratio(unsigned long k)
{
	uint64_t best1 = UINT64_MAX, best2 = UINT64_MAX, t;
	int i;

	for (i = 0; i < 40; i++) {
		t = chain(k);
		if (t < best1)
			best1 = t;
		t = chain(2 * k);
		if (t < best2)
			best2 = t;
	}
	printf("# chain of %lu: %llu ticks, of %lu: %llu ticks, ratio %.3f\n",
	       k, (unsigned long long)best1, 2 * k,
	       (unsigned long long)best2, (double)best2 / (double)best1);
	return (double)best2 / (double)best1;
}

static bool doubles(double ratio)
{
	return ratio >= 1.8 && ratio <= 2.2;
}

static void test_chain_doubles(void **state)
{
	unsigned long k = 200000;
	double ratio;
	int round;

	(void)state;
	chain(k);	/* warm up: frequency, caches */
	ratio = chain_ratio(k);
	for (round = 1; round < 5 && !doubles(ratio); round++)
		ratio = chain_ratio(k);
	assert_true(doubles(ratio));
}

struct pin_arg {
	int cpu;
	int rc;
	int seen;
	char err[256];
};

static void *pin_thread(void *p)
{
	struct pin_arg *a = p;
	volatile unsigned long spin;
	int i;

	a->rc = akb_pin_self(a->cpu, a->err, sizeof(a->err));
	a->seen = a->cpu;
	for (i = 0; i < 20 && !a->rc; i++) {
		for (spin = 0; spin < 100000; spin++)
			;
		sched_yield();
		if (sched_getcpu() != a->cpu)
			a->seen = sched_getcpu();
	}
	return NULL;
}

static void test_pinning(void **state)
{
	char err[256];
	int c, i, tried = 0;

	(void)state;
	assert_int_equal(akb_topo_init(err, sizeof(err)), 0);
	printf("# %s: %s\n", akb_topo_source(), akb_topo_summary());
	for (c = 0; c < AKB_PLACE_NR; c++) {
		const int *cpus;
		enum akb_skip why;
		int n = akb_place_cpus((enum akb_place)c, &cpus, &why);

		if (!n) {
			printf("# placement %s: absent (%s)\n",
			       akb_place_name((enum akb_place)c),
			       akb_skip_text(why));
			assert_true(why < AKB_SKIP_NR);
			continue;
		}
		for (i = 0; i < n && i < 16; i++) {
			struct pin_arg a = { .cpu = cpus[i] };
			pthread_t t;

			assert_int_equal(pthread_create(&t, NULL, pin_thread,
							&a), 0);
			pthread_join(t, NULL);
			if (a.rc)
				printf("# %s\n", a.err);
			assert_int_equal(a.rc, 0);
			assert_int_equal(a.seen, cpus[i]);
			tried++;
		}
		if (c != AKB_PLACE_SPREAD)
			assert_true(n >= 2);
	}
	assert_true(tried > 0);
}

static void test_pin_refused(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(akb_topo_init(err, sizeof(err)), 0);
	/* a CPU that cannot exist: refused with a message, no crash */
	assert_int_equal(akb_pin_self(4095, err, sizeof(err)), -1);
	assert_true(strstr(err, "4095") != NULL);
}

static void test_units_without_papi(void **state)
{
	const struct akb_counter_info *ci = akb_counter_info();
	const char *why;
	char err[512];

	(void)state;
	assert_int_equal(akb_counter_select("tsc", err, sizeof(err)), 0);
	assert_int_equal(ci->kind, AKB_COUNTER_ARCH);
	assert_true(strstr(ci->unit, " ticks at ") || strstr(ci->unit, "ns "));
	assert_true(strstr(ci->unit, akb_arch_counter_name()) != NULL);
	assert_true(ci->hz > 0);
	assert_true(ci->read_cost > 0);
	assert_int_equal(akb_counter_select("ns", err, sizeof(err)), 0);
	assert_int_equal(ci->kind, AKB_COUNTER_NS);
	assert_string_equal(ci->key, "clock_ns");
	assert_int_equal(akb_counter_select("auto", err, sizeof(err)), 0);
	if (!akb_papi_probe(&why)) {
		printf("# PAPI unavailable here: %s\n", why);
		assert_int_equal(ci->kind, AKB_COUNTER_ARCH);
		assert_int_equal(akb_counter_select("papi", err, sizeof(err)),
				 -1);
		assert_true(strstr(err, "PAPI_TOT_CYC") != NULL);
		assert_true(strstr(err, why) != NULL);
	} else {
		assert_int_equal(ci->kind, AKB_COUNTER_PAPI);
		assert_true(strstr(ci->unit, "PAPI_TOT_CYC") != NULL);
	}
	assert_int_equal(akb_counter_select("bogus", err, sizeof(err)), -1);
	assert_true(strstr(err, "unknown counter") != NULL);
}

/*
 * akb_timer_cost() on synthetic samples: a script of rounds, each round
 * TC_SAMPLES (1001) samples drawn from its own kind.
 */
enum tc_kind { TC_CONST, TC_WIDE, TC_OUTLIERS, TC_STEPS };

struct tc_script {
	const enum tc_kind *kind;	/* per round; the last one repeats */
	const uint64_t *value;		/* per round, likewise */
	int nr;
	long sample;			/* samples handed out */
};

static uint64_t tc_sample(void *arg)
{
	struct tc_script *t = arg;
	long round = t->sample / 1001, i = t->sample % 1001;
	int r = round < t->nr ? (int)round : t->nr - 1;

	t->sample++;
	switch (t->kind[r]) {
	case TC_WIDE:		/* 0 .. 2 x value, evenly */
		return (uint64_t)i * 2 * t->value[r] / 1000;
	case TC_OUTLIERS:	/* one in ten is an interrupt */
		return i % 10 == 3 ? 100000 : t->value[r];
	case TC_STEPS:		/* a counter that steps by 21 */
		return t->value[r] + (i % 4 == 0 ? 0 : i % 4 == 3 ? 42 : 21);
	default:
		return t->value[r];
	}
}

static void tc_run(const enum tc_kind *kind, const uint64_t *value, int nr,
		   struct akb_timer_cost *out)
{
	struct tc_script t = { kind, value, nr, 0 };

	akb_timer_cost(tc_sample, &t, out);
	assert_int_equal(t.sample, (long)out->rounds * 1001);
}

static void test_timer_cost(void **state)
{
	static const enum tc_kind noisy_first[] = {
		TC_WIDE, TC_WIDE, TC_WIDE, TC_WIDE, TC_WIDE, TC_CONST,
	};
	static const uint64_t noisy_v[] = { 60, 60, 60, 60, 60, 50 };
	static const enum tc_kind four[] = {
		TC_CONST, TC_CONST, TC_CONST, TC_CONST,
	};
	static const uint64_t drift[] = { 200, 100, 98, 101 };
	static const enum tc_kind wide[] = { TC_WIDE };
	static const enum tc_kind outliers[] = { TC_OUTLIERS };
	static const enum tc_kind steps[] = { TC_STEPS };
	static const uint64_t forty[] = { 40 }, five_hundred[] = { 500 };
	static const uint64_t base[] = { 42 };
	static const struct {
		const char *what;
		const enum tc_kind *kind;
		const uint64_t *value;
		int nr;
		bool steady;
		int rounds;
		double ticks, iqr;
	} cases[] = {
		{ "the same every time: three rounds, that figure",
		  four, forty, 1, true, 3, 40, 0 },
		{ "spread rounds first: not counted, they break no run",
		  noisy_first, noisy_v, 6, true, 8, 50, 0 },
		{ "a round far off starts the run again; its lowest is taken",
		  four, drift, 4, true, 4, 98, 0 },
		{ "never steady: every round taken, the lowest median",
		  wide, five_hundred, 1, false, 30, 500, 500 },
		{ "interrupts in one sample of ten move no quartile",
		  outliers, forty, 1, true, 3, 40, 0 },
		{ "a coarse counter: a spread of one step is steady",
		  steps, base, 1, true, 3, 63, 21 },
	};
	struct akb_timer_cost c;
	size_t i;

	(void)state;
	for (i = 0; i < AK_ARRAY_SIZE(cases); i++) {
		printf("# %s\n", cases[i].what);
		tc_run(cases[i].kind, cases[i].value, cases[i].nr, &c);
		assert_int_equal(c.steady, cases[i].steady);
		assert_int_equal(c.rounds, cases[i].rounds);
		assert_true(c.ticks == cases[i].ticks);
		assert_true(c.iqr == cases[i].iqr);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		AK_TEST(test_monotonic),
		AK_TEST(test_frequency),
		AK_TEST(test_chain_doubles),
		AK_TEST(test_pinning),
		AK_TEST(test_pin_refused),
		AK_TEST(test_units_without_papi),
		AK_TEST(test_timer_cost),
	};

	return ak_test_main("bench_counter", tests, AK_ARRAY_SIZE(tests));
}
