// SPDX-License-Identifier: MIT
/*
 * The 128-bit ops: both halves on success and on failure, a mismatch in
 * either half alone, and the old cmpxchg_double form, whose two words map
 * onto the halves differently on little- and big-endian.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "variants.h"

#define HI 0x8000000000000001ull
#define LO 0xfedcba9876543210ull

struct guarded {
	uint64_t before[2];
	ak_u128 v;
	uint64_t after[2];
};

static void check_guards(const struct guarded *g)
{
	assert_int_equal(g->before[0], 0x1111111111111111ull);
	assert_int_equal(g->before[1], 0x2222222222222222ull);
	assert_int_equal(g->after[0], 0x3333333333333333ull);
	assert_int_equal(g->after[1], 0x4444444444444444ull);
}

static void init_guarded(struct guarded *g, ak_u128 v)
{
	g->before[0] = 0x1111111111111111ull;
	g->before[1] = 0x2222222222222222ull;
	g->v = v;
	g->after[0] = 0x3333333333333333ull;
	g->after[1] = 0x4444444444444444ull;
}

#define assert_u128_equal(a, b)					\
	do {							\
		ak_u128 __x = (a), __y = (b);			\
		assert_int_equal(ak_u128_hi(__x), ak_u128_hi(__y)); \
		assert_int_equal(ak_u128_lo(__x), ak_u128_lo(__y)); \
	} while (0)

/*
 * f(p, old, new) -> value found; try-shaped ops are wrapped to this shape
 * so both kinds run the same checks.
 */
typedef ak_u128 (*cmpxchg128_fn)(const struct ak_variant *, ak_u128 *,
				 ak_u128, ak_u128, bool *);

static ak_u128 via_cmpxchg(const struct ak_variant *v, ak_u128 *p,
			   ak_u128 o, ak_u128 n, bool *ok)
{
	ak_u128 r = v->fn.cmpxchg128(p, o, n);

	*ok = r == o;
	return r;
}

static ak_u128 via_try(const struct ak_variant *v, ak_u128 *p, ak_u128 o,
		       ak_u128 n, bool *ok)
{
	ak_u128 seen = o;

	*ok = v->fn.try_cmpxchg128(p, &seen, n);
	if (*ok)	/* on success *old is left alone */
		assert_u128_equal(seen, o);
	return seen;
}

static void check_128(const struct ak_variant *v, cmpxchg128_fn f)
{
	struct guarded g;
	ak_u128 a = ak_u128_make(HI, LO);
	ak_u128 b = ak_u128_make(~HI, LO ^ 0xff00ff00ff00ff00ull);
	bool ok;

	init_guarded(&g, a);
	assert_u128_equal(f(v, &g.v, a, b, &ok), a);
	assert_true(ok);
	assert_u128_equal(g.v, b);
	check_guards(&g);

	/* mismatch in the high half only, then in the low half only */
	assert_u128_equal(f(v, &g.v, ak_u128_make(HI, ak_u128_lo(b)), a, &ok),
			  b);
	assert_false(ok);
	assert_u128_equal(f(v, &g.v, ak_u128_make(ak_u128_hi(b), LO), a, &ok),
			  b);
	assert_false(ok);
	assert_u128_equal(g.v, b);
	check_guards(&g);

	/* an all-zero value and back */
	assert_u128_equal(f(v, &g.v, b, 0, &ok), b);
	assert_true(ok);
	assert_u128_equal(g.v, 0);
	assert_u128_equal(f(v, &g.v, 0, a, &ok), 0);
	assert_true(ok);
	assert_u128_equal(g.v, a);
	check_guards(&g);
}

static void test_variant(void **state)
{
	const struct ak_variant *v = *state;

	SKIP_UNUSABLE(v);
	check_128(v, v->kind == ak_prim_cmpxchg ? via_cmpxchg : via_try);
}

static bool is_128(const struct ak_variant *v)
{
	return v->width == 128;
}

static void test_api(void **state)
{
	struct guarded g;
	ak_u128 a = ak_u128_make(HI, LO), b = ak_u128_make(LO, HI), o;

	(void)state;
	init_guarded(&g, a);
	assert_u128_equal(ak_cmpxchg128(&g.v, a, b), a);
	assert_u128_equal(ak_cmpxchg128_local(&g.v, a, a), b);
	assert_u128_equal(ak_cmpxchg128_local(&g.v, b, a), b);
	o = b;
	assert_false(ak_try_cmpxchg128(&g.v, &o, 0));
	assert_u128_equal(o, a);
	assert_true(ak_try_cmpxchg128(&g.v, &o, b));
	assert_false(ak_try_cmpxchg128_local(&g.v, &o, 0));
	assert_u128_equal(o, b);
	assert_true(ak_try_cmpxchg128_local(&g.v, &o, 0));
	assert_u128_equal(g.v, 0);
	check_guards(&g);
}

/*
 * cmpxchg_double(p1, p2, ...): p1 is the word at the lower address.  As an
 * ak_u128 that word is the low half on little-endian and the high half on
 * big-endian; change one word and check which half moved.
 */
struct pair {
	unsigned long w0, w1;
} __attribute__((aligned(16)));

static void test_cmpxchg_double(void **state)
{
	struct pair s = { 0x1010101010101010ul, 0x2020202020202020ul };
	ak_u128 as128;
	bool little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

	(void)state;
	/* replace w0 only */
	assert_true(ak_cmpxchg_double(&s.w0, &s.w1, 0x1010101010101010ul,
				      0x2020202020202020ul, 0xaaul,
				      0x2020202020202020ul));
	assert_int_equal(s.w0, 0xaa);
	assert_int_equal(s.w1, 0x2020202020202020ul);
	memcpy(&as128, &s, sizeof(as128));
	if (little) {
		assert_int_equal(ak_u128_lo(as128), 0xaa);
		assert_int_equal(ak_u128_hi(as128), 0x2020202020202020ul);
	} else {
		assert_int_equal(ak_u128_hi(as128), 0xaa);
		assert_int_equal(ak_u128_lo(as128), 0x2020202020202020ul);
	}
	assert_int_equal(ak_u128_word0(as128), 0xaa);
	assert_int_equal(ak_u128_word1(as128), 0x2020202020202020ul);

	/* a mismatch in either word fails and changes nothing */
	assert_false(ak_cmpxchg_double(&s.w0, &s.w1, 0xaaul, 0x1ul, 0, 0));
	assert_false(ak_cmpxchg_double_local(&s.w0, &s.w1, 0xabul,
					     0x2020202020202020ul, 0, 0));
	assert_int_equal(s.w0, 0xaa);
	assert_int_equal(s.w1, 0x2020202020202020ul);

	/* replace w1 only, through the _local form */
	assert_true(ak_cmpxchg_double_local(&s.w0, &s.w1, 0xaaul,
					    0x2020202020202020ul, 0xaaul,
					    0xbbul));
	assert_int_equal(s.w0, 0xaa);
	assert_int_equal(s.w1, 0xbb);
	memcpy(&as128, &s, sizeof(as128));
	assert_int_equal(little ? ak_u128_hi(as128) : ak_u128_lo(as128), 0xbb);
}

/* Native where the arch has it and the CPU does; otherwise the emulation. */
static void test_have_cmpxchg128(void **state)
{
	(void)state;
#if AK_HAVE_ARCH_CMPXCHG128
# if defined(__x86_64__)
	assert_int_equal(ak_have_cmpxchg128(), ak_cpu_has(AK_CPU_CX16));
# elif defined(__aarch64__)
	assert_true(ak_have_cmpxchg128());
# elif defined(__powerpc64__)
	assert_int_equal(ak_have_cmpxchg128(), ak_cpu_has(AK_CPU_ISA207));
# endif
#else
	assert_false(ak_have_cmpxchg128());
#endif
	print_message("# native cmpxchg128: %s\n",
		      ak_have_cmpxchg128() ? "yes" : "no (lock-based emulation)");
}

static ak_u128 forked_word;
static int hammer_stop, hammer_running;

static void *hammer(void *arg)
{
	(void)arg;
	__atomic_store_n(&hammer_running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&hammer_stop, __ATOMIC_RELAXED)) {
		ak_u128 o = forked_word;

		ak_cmpxchg128_lockemu(&forked_word, o, o + 1);
	}
	return NULL;
}

/* waitpid for up to ten seconds, then SIGKILL: -1 if it had to */
static int wait_or_kill(pid_t pid)
{
	struct timespec ms = { 0, 1000000 };
	int status, i;

	for (i = 0; i < 10000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
		nanosleep(&ms, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * fork() while another thread runs the lock-emulated cmpxchg128 without a
 * pause: the child's own on the same word must finish.  A lock inherited
 * held would spin with every signal blocked, past any alarm(), so the
 * parent kills a child that has not exited in time.
 */
static void test_lockemu_fork(void **state)
{
	unsigned long i, n = ak_test_iters(200);
	pthread_t t;

	(void)state;
	__atomic_store_n(&hammer_stop, 0, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&t, NULL, hammer, NULL), 0);
	/* forking before it runs would fork qemu-user's clone_lock held */
	while (!__atomic_load_n(&hammer_running, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; i < n; i++) {
		pid_t pid = fork();
		int rc;

		if (pid == 0) {
			ak_u128 o = forked_word;

			_exit(ak_cmpxchg128_lockemu(&forked_word, o, o + 1) == o &&
			      forked_word == o + 1 ? 0 : 1);
		}
		assert_true(pid > 0);
		rc = wait_or_kill(pid);
		if (rc)
			fail_msg("fork %lu of %lu: the child %s", i + 1, n,
				 rc < 0 ? "never finished its cmpxchg128 (killed)"
					: "saw a wrong value");
	}
	__atomic_store_n(&hammer_stop, 1, __ATOMIC_RELAXED);
	assert_int_equal(pthread_join(t, NULL), 0);
}

int main(void)
{
	static const struct CMUnitTest api[] = {
		AK_TEST(test_api),
		AK_TEST(test_cmpxchg_double),
		AK_TEST(test_have_cmpxchg128),
		AK_TEST(test_lockemu_fork),
	};

	return ak_run_with_variants("cmpxchg128", api, AK_ARRAY_SIZE(api),
				    test_variant, is_128);
}
