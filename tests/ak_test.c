// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "ak_test.h"

static char skip_reason[256];
static int skipped;

void ak_test_set_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
	skipped = 1;
}

int ak_test_run(const char *group, const struct CMUnitTest *tests, size_t n,
		bool numbered)
{
	size_t i;
	int failed = 0;
	char num[24] = "";

	/* cmocka's own "[ RUN ]" lines stay in the stream as non-TAP text. */
	cmocka_set_message_output(CM_OUTPUT_STDOUT);
	for (i = 0; i < n; i++) {
		int rc;

		skipped = 0;
		skip_reason[0] = 0;
		fflush(stdout);
		rc = _cmocka_run_group_tests(tests[i].name, &tests[i], 1,
					     NULL, NULL);
		fflush(stdout);
		if (numbered)
			snprintf(num, sizeof(num), " %zu", i + 1);
		if (rc) {
			printf("not ok%s - %s: %s\n", num, group, tests[i].name);
			failed++;
		} else if (skipped) {
			printf("ok%s - %s: %s # SKIP %s\n", num, group,
			       tests[i].name, skip_reason);
		} else {
			printf("ok%s - %s: %s\n", num, group, tests[i].name);
		}
		fflush(stdout);
	}
	return failed;
}

int ak_test_main(const char *group, const struct CMUnitTest *tests, size_t n)
{
	printf("1..%zu\n", n);
	return ak_test_run(group, tests, n, true) ? 1 : 0;
}

unsigned long ak_test_iters(unsigned long dflt)
{
	const char *s = getenv("AK_TEST_SCALE");
	unsigned long pct = s ? strtoul(s, NULL, 10) : 100;

	if (!pct)
		pct = 100;
	return dflt * pct / 100 ? dflt * pct / 100 : 1;
}

bool ak_test_require_rseq(void)
{
	const char *s = getenv("AK_TEST_REQUIRE_RSEQ");

	return s && !strcmp(s, "1");
}

/* Whether AK_TEST_MODES (a comma-separated list of mode names) names m. */
static bool mode_selected(enum ak_percpu_mode m)
{
	const char *s = getenv("AK_TEST_MODES"), *name;
	size_t len;

	if (!s || !*s)
		return true;
	name = ak_percpu_mode_name(m);
	len = strlen(name);
	while (*s) {
		if (!strncmp(s, name, len) && (s[len] == ',' || !s[len]))
			return true;
		s = strchr(s, ',');
		if (!s)
			break;
		s++;
	}
	return false;
}

const char *ak_test_mode_skip(enum ak_percpu_mode m)
{
	static char buf[160];
	const char *why = NULL;

	if (!mode_selected(m)) {
		snprintf(buf, sizeof(buf), "mode not selected (AK_TEST_MODES=%s)",
			 getenv("AK_TEST_MODES"));
		return buf;
	}
	if (ak_percpu_mode_available(m, &why))
		return NULL;
	if (m <= AK_PERCPU_RSEQ_MM_CID && ak_test_require_rseq()) {
		printf("# mode %s required (AK_TEST_REQUIRE_RSEQ=1), but %s\n",
		       ak_percpu_mode_name(m), why ? why : "unavailable");
		return NULL;
	}
	return why ? why : "unavailable";
}

int ak_test_run_child(const char *group, const struct CMUnitTest *tests,
		      size_t n, const char *skip_why,
		      int (*setup)(void *arg), void *arg,
		      unsigned int *ntests)
{
	char line[1024];
	int fds[2], status, failed = 0;
	FILE *in;
	pid_t pid;
	size_t i;

	if (skip_why) {
		for (i = 0; i < n; i++)
			printf("ok - %s: %s # SKIP skipped: %s\n", group,
			       tests[i].name, skip_why);
		*ntests += (unsigned int)n;
		return 0;
	}
	fflush(stdout);
	if (pipe(fds) || (pid = fork()) < 0) {
		printf("not ok - %s: fork: %s\n", group, strerror(errno));
		++*ntests;
		return 1;
	}
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		if (setup && setup(arg)) {
			printf("not ok - %s: set-up: %s\n", group,
			       strerror(errno));
			exit(1);
		}
		exit(ak_test_run(group, tests, n, false) ? 1 : 0);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	while (fgets(line, sizeof(line), in)) {
		fputs(line, stdout);
		fflush(stdout);
		if (!strncmp(line, "ok ", 3) || !strncmp(line, "not ok ", 7))
			++*ntests;
		if (!strncmp(line, "not ok ", 7))
			failed++;
	}
	fclose(in);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || (WEXITSTATUS(status) && !failed)) {
		printf("not ok - %s: child died (status %#x)\n", group, status);
		++*ntests;
		failed++;
	}
	return failed;
}
