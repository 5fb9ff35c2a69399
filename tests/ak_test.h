/* SPDX-License-Identifier: MIT */
/*
 * Test glue: cmocka does the assertions and isolation; ak_test_main() runs
 * each test as its own group and reports it as one TAP line, because
 * cmocka's own TAP mode writes skips as "not ok", which TAP harnesses
 * (automake's tap-driver among them) count as failures.
 */
#ifndef AK_TEST_H
#define AK_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <atomkit/percpu.h>

/* 1 in a build with AddressSanitizer (--enable-sanitizers), else 0 */
#if defined(__SANITIZE_ADDRESS__)
# define ASAN_BUILD 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define ASAN_BUILD 1
# endif
#endif
#ifndef ASAN_BUILD
# define ASAN_BUILD 0
#endif

#define AK_TEST(fn)		cmocka_unit_test(fn)
#define AK_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Skip the running test, with a reason that the TAP line carries. */
#define ak_skip(...)					\
	do {						\
		ak_test_set_skip(__VA_ARGS__);		\
		skip();					\
	} while (0)

void ak_test_set_skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * Run tests[0..n) and print a TAP line for each, numbered or not (a
 * caller that runs several groups in child processes prints the plan at
 * the end); returns how many failed.
 */
int ak_test_run(const char *group, const struct CMUnitTest *tests, size_t n,
		bool numbered);

/*
 * Run tests[0..n) in a child process, after setup(arg) there (non-zero:
 * the group fails, errno says why), passing its TAP lines through and
 * adding them to *ntests; a child that dies counts as a failure.  With
 * skip_why, every test is reported skipped with that reason instead.
 * Returns how many failed.
 */
int ak_test_run_child(const char *group, const struct CMUnitTest *tests,
		      size_t n, const char *skip_why,
		      int (*setup)(void *arg), void *arg,
		      unsigned int *ntests);

/*
 * The reason to report a group in per-CPU mode m as skipped, or NULL to
 * run it.  AK_TEST_MODES=name,name... runs only the modes it names (the
 * system rig runs the slab suite in the rseq modes alone: qemu-user and
 * the native run cover the rest).  With AK_TEST_REQUIRE_RSEQ=1 in the environment (the system
 * rig, on real kernels) an rseq mode is never skipped: a mode that cannot
 * be had then fails its group's set-up, with the reason on stdout.
 */
const char *ak_test_mode_skip(enum ak_percpu_mode m);

/* Whether AK_TEST_REQUIRE_RSEQ=1 asks that the rseq modes really run. */
bool ak_test_require_rseq(void);

/* Run tests[0..n), print TAP, return 0 if none failed. */
int ak_test_main(const char *group, const struct CMUnitTest *tests, size_t n);

/*
 * Iteration counts: the issue-sized defaults, scaled by AK_TEST_SCALE (a
 * percentage). CI runs the README's `make check` at 100 and scales down
 * only the runs that repeat it (generic-only, distcheck, qemu-user):
 * .ci/run and doc/testing.md, "Time".
 */
unsigned long ak_test_iters(unsigned long dflt);

#endif /* AK_TEST_H */
