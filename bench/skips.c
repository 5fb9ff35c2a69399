// SPDX-License-Identifier: MIT
/*
 * The messages of skipped and failed runs (bench/skips.h): one place
 * spells their format, and --list-skips prints the closed set of reasons.
 */
#include <stdio.h>

#include "skips.h"

void akb_skip_message(char *buf, size_t size, enum akb_skip why,
		      const char *detail)
{
	if (detail && *detail)
		snprintf(buf, size, "skipped: %s: %s", akb_skip_text(why),
			 detail);
	else
		snprintf(buf, size, "skipped: %s", akb_skip_text(why));
}

void akb_fail_message(char *buf, size_t size, const char *what)
{
	snprintf(buf, size, "failed: %s", what);
}

void akb_list_skips(FILE *f)
{
	int i;

	for (i = 0; i < AKB_SKIP_NR; i++)
		fprintf(f, "%s\n", akb_skip_text((enum akb_skip)i));
}
