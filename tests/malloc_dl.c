// SPDX-License-Identifier: MIT
/*
 * A library that test_malloc dlopens: its allocations are the
 * interposer's too, freed on either side of the dlopen boundary.
 */
#include <stdlib.h>
#include <string.h>

char *akmdl_make(const char *s);
void akmdl_drop(void *p);

/* "s:s", built with strdup and realloc. */
char *akmdl_make(const char *s)
{
	size_t n = strlen(s);
	char *p = strdup(s), *q;

	if (!p)
		return NULL;
	q = realloc(p, 2 * n + 2);
	if (!q) {
		free(p);
		return NULL;
	}
	q[n] = ':';
	memcpy(q + n + 1, s, n + 1);
	return q;
}

void akmdl_drop(void *p)
{
	free(p);
}
