// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
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

int ak_test_main(const char *group, const struct CMUnitTest *tests, size_t n)
{
	size_t i;
	int failed = 0;

	/* cmocka's own "[ RUN ]" lines stay in the stream as non-TAP text. */
	cmocka_set_message_output(CM_OUTPUT_STDOUT);
	printf("1..%zu\n", n);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		int rc;

		skipped = 0;
		skip_reason[0] = 0;
		rc = _cmocka_run_group_tests(tests[i].name, &tests[i], 1,
					     NULL, NULL);
		fflush(stdout);
		if (rc) {
			printf("not ok %zu - %s: %s\n", i + 1, group,
			       tests[i].name);
			failed++;
		} else if (skipped) {
			printf("ok %zu - %s: %s # SKIP %s\n", i + 1, group,
			       tests[i].name, skip_reason);
		} else {
			printf("ok %zu - %s: %s\n", i + 1, group,
			       tests[i].name);
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

unsigned long ak_test_iters(unsigned long dflt)
{
	const char *s = getenv("AK_TEST_SCALE");
	unsigned long pct = s ? strtoul(s, NULL, 10) : 100;

	if (!pct)
		pct = 100;
	return dflt * pct / 100 ? dflt * pct / 100 : 1;
}
