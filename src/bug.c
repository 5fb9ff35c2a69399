// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <atomkit/compiler.h>

void ak_bug(const char *file, int line, const char *what)
{
	fprintf(stderr, "atomkit: BUG at %s:%d: %s\n", file, line, what);
	abort();
}
