// SPDX-License-Identifier: MIT
/*
 * Misuse is refused: ak_u128 carries its alignment in the type, and in
 * debug builds every 128-bit op asserts it, with a message, before the CPU
 * can fault (x86 #GP) or tear the update.  Each check runs in a child
 * process so the abort can be observed.
 */
#include <stddef.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
#include <atomkit/percpu.h>
#include "variants.h"

static void test_type_alignment(void **state)
{
	struct {
		char c;
		ak_u128 v;
	} s;

	(void)state;
	assert_int_equal(_Alignof(ak_u128), 16);
	assert_int_equal(offsetof(__typeof__(s), v), 16);
	assert_true(AK_IS_ALIGNED16(&s.v));
}

static union {
	ak_u128 v[3];
	unsigned char bytes[48];
} buf;

/* 8 bytes past a 16-byte boundary: aligned for a word, not for a pair */
static ak_u128 *misaligned(void)
{
	return (ak_u128 *)(void *)(buf.bytes + 8);
}

/*
 * Run fn in a child with stderr on a pipe; return the child's wait status
 * and what it printed.
 */
static int in_child(void (*fn)(const void *), const void *arg, char *out,
		    size_t size)
{
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		signal(SIGABRT, SIG_DFL);
		fn(arg);
		_exit(0);	/* not reached when the check fires */
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, size - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void expect_bug(void (*fn)(const void *), const void *arg,
		       const char *what)
{
	char out[1024];
	int status;

	if (!AK_DEBUG)
		ak_skip("debug checks compiled out (NDEBUG)");
	status = in_child(fn, arg, out, sizeof(out));
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	if (!strstr(out, "atomkit: BUG at") || !strstr(out, what))
		fail_msg("expected a BUG report naming '%s', got: %s", what,
			 out);
}

static void call_cmpxchg128(const void *arg)
{
	(void)arg;
	ak_cmpxchg128(misaligned(), 0, 1);
}

static void call_cmpxchg128_local(const void *arg)
{
	(void)arg;
	ak_cmpxchg128_local(misaligned(), 0, 1);
}

static void call_try_cmpxchg128(const void *arg)
{
	ak_u128 o = 0;

	(void)arg;
	ak_try_cmpxchg128(misaligned(), &o, 1);
}

static void call_try_cmpxchg128_local(const void *arg)
{
	ak_u128 o = 0;

	(void)arg;
	ak_try_cmpxchg128_local(misaligned(), &o, 1);
}

static void call_cmpxchg_double_misaligned(const void *arg)
{
	unsigned long *w = (unsigned long *)(void *)misaligned();

	(void)arg;
	ak_cmpxchg_double(&w[0], &w[1], 0, 0, 1, 1);
}

static void call_cmpxchg_double_not_adjacent(const void *arg)
{
	unsigned long *w = (unsigned long *)(void *)buf.v;

	(void)arg;
	ak_cmpxchg_double(&w[0], &w[2], 0, 0, 1, 1);
}

static void test_cmpxchg128_misaligned(void **s)
{
	(void)s;
	expect_bug(call_cmpxchg128, NULL, "AK_IS_ALIGNED16");
}

static void test_cmpxchg128_local_misaligned(void **s)
{
	(void)s;
	expect_bug(call_cmpxchg128_local, NULL, "AK_IS_ALIGNED16");
}

static void test_try_cmpxchg128_misaligned(void **s)
{
	(void)s;
	expect_bug(call_try_cmpxchg128, NULL, "AK_IS_ALIGNED16");
}

static void test_try_cmpxchg128_local_misaligned(void **s)
{
	(void)s;
	expect_bug(call_try_cmpxchg128_local, NULL, "AK_IS_ALIGNED16");
}

static void test_cmpxchg_double_misaligned(void **s)
{
	(void)s;
	expect_bug(call_cmpxchg_double_misaligned, NULL, "AK_IS_ALIGNED16");
}

static void test_cmpxchg_double_not_adjacent(void **s)
{
	(void)s;
	expect_bug(call_cmpxchg_double_not_adjacent, NULL, "__p1 + 1");
}

/*
 * The 128-bit rseq section takes its copies' base and stride from the
 * caller (the this_cpu op's come from ak_percpu_alloc(), aligned): the
 * check of both runs before the section, so no rseq area is needed, and
 * a build without sections reaches it too.
 */
static void call_rseq_cmpxchg128(const void *arg)
{
	static struct ak_rseq_abi area;
	void *base = arg ? (void *)misaligned() : (void *)&buf.v[0];
	size_t stride = arg ? 64 : 24;
	ak_u128 seen;

	(void)ak_rseq_cmpxchg128(&area, &area.cpu_id, &base, &stride, 0, 1,
				 &seen);
}

static void test_rseq_cmpxchg128_misaligned(void **s)
{
	(void)s;
	expect_bug(call_rseq_cmpxchg128, "base", "AK_IS_ALIGNED16(*base)");
	expect_bug(call_rseq_cmpxchg128, NULL, "AK_IS_ALIGNED16(*stride)");
}

/* The named variants check too, not only the API in front of them. */
static void call_variant(const void *arg)
{
	const struct ak_variant *v = arg;
	ak_u128 o = 0;

	if (v->kind == ak_prim_cmpxchg)
		v->fn.cmpxchg128(misaligned(), 0, 1);
	else
		v->fn.try_cmpxchg128(misaligned(), &o, 1);
}

static void test_variant(void **state)
{
	const struct ak_variant *v = *state;

	SKIP_UNUSABLE(v);
	expect_bug(call_variant, v, "AK_IS_ALIGNED16");
}

static bool is_128(const struct ak_variant *v)
{
	return v->width == 128;
}

int main(void)
{
	static const struct CMUnitTest api[] = {
		AK_TEST(test_type_alignment),
		AK_TEST(test_cmpxchg128_misaligned),
		AK_TEST(test_cmpxchg128_local_misaligned),
		AK_TEST(test_try_cmpxchg128_misaligned),
		AK_TEST(test_try_cmpxchg128_local_misaligned),
		AK_TEST(test_cmpxchg_double_misaligned),
		AK_TEST(test_cmpxchg_double_not_adjacent),
		AK_TEST(test_rseq_cmpxchg128_misaligned),
	};

	return ak_run_with_variants("misuse", api, AK_ARRAY_SIZE(api),
				    test_variant, is_128);
}
