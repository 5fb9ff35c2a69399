// SPDX-License-Identifier: MIT
/*
 * macro-probe: print the file that malloc and free resolved to in this
 * process, one line each, after one allocation through them.
 *
 * The dynamic loader only warns when LD_PRELOAD names a library it cannot
 * load, and the program then runs on glibc's malloc: a whole column of a
 * benchmark would silently measure the wrong allocator.  The runner starts
 * this under each preload first and keeps the allocator only when both
 * lines name the preloaded library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int where(const char *what, void *fn)
{
	Dl_info info;

	if (!dladdr(fn, &info) || !info.dli_fname) {
		fprintf(stderr, "macro-probe: %s: dladdr found no object\n",
			what);
		return 1;
	}
	printf("%s %s\n", what, info.dli_fname);
	return 0;
}

int main(void)
{
	void *(*m)(size_t) = malloc;
	void (*f)(void *) = free;
	volatile char *p = malloc(100);

	if (!p) {
		fprintf(stderr, "macro-probe: malloc(100) failed\n");
		return 1;
	}
	p[99] = 1;
	free((void *)p);
	return where("malloc", *(void **)&m) | where("free", *(void **)&f);
}
