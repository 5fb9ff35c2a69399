/* SPDX-License-Identifier: MIT */
/*
 * What tests/test_malloc.c and tests/test_malloc_stress.c share: which
 * design the driver preloaded, and the check that malloc and free really
 * resolved to libatomkit-malloc.so in that design and mode.
 */
#ifndef AK_MALLOC_TEST_H
#define AK_MALLOC_TEST_H

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <atomkit/malloc.h>
#include "ak_test.h"

/* The design asked for (AK_MALLOC_DESIGN), or NULL: glibc's malloc. */
static inline const char *preloaded_design(void)
{
	const char *d = getenv("AK_MALLOC_DESIGN");

	return d && *d ? d : NULL;
}

/*
 * malloc and free come from the library, which says it runs the design
 * and the mode (AK_PERCPU_MODE, where set) asked; *in is what it says.
 * Skips the test on glibc's malloc.
 */
static inline void ak_malloc_check_resolves(struct ak_malloc_info *in)
{
	int (*info)(struct ak_malloc_info *);
	void *(*m)(size_t) = malloc;
	void (*f)(void *) = free;
	const char *mode = getenv("AK_PERCPU_MODE");
	Dl_info dm, df;

	if (!preloaded_design())
		ak_skip("run on glibc's malloc (no AK_MALLOC_DESIGN)");
	assert_true(dladdr(*(void **)&m, &dm) && dm.dli_fname);
	assert_true(dladdr(*(void **)&f, &df) && df.dli_fname);
	assert_non_null(strstr(dm.dli_fname, "libatomkit-malloc"));
	assert_non_null(strstr(df.dli_fname, "libatomkit-malloc"));
	*(void **)&info = dlsym(RTLD_DEFAULT, "ak_malloc_info");
	assert_non_null(info);
	assert_int_equal(info(in), 0);
	assert_string_equal(in->design, preloaded_design());
	if (mode && *mode)
		assert_string_equal(in->mode, mode);
}

#endif /* AK_MALLOC_TEST_H */
