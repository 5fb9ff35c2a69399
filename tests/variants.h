/* SPDX-License-Identifier: MIT */
/*
 * Helpers for tests that iterate over the variant registry.
 */
#ifndef AK_TEST_VARIANTS_H
#define AK_TEST_VARIANTS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <atomkit/registry.h>
#include "ak_test.h"

static inline const char *vname(const struct ak_variant *v)
{
	static char buf[128];

	return ak_variant_fullname(v, buf, sizeof(buf));
}

/* Whether v is the primitive kind and width asked for. */
static inline bool vmatch(const struct ak_variant *v, enum ak_prim kind,
			  unsigned int width)
{
	return v->kind == kind && v->width == width;
}

/*
 * One cmocka test per selected variant, the variant as its state and its
 * full name as the test's name; returns the number made.  The caller
 * frees the array and the names.
 */
static inline size_t
ak_variant_tests(struct CMUnitTest **out, CMUnitTestFunction fn,
		 bool (*select)(const struct ak_variant *))
{
	size_t i, n, k = 0;
	const struct ak_variant *v = ak_variants(&n);
	struct CMUnitTest *t = calloc(n ? n : 1, sizeof(*t));

	assert_non_null(t);
	for (i = 0; i < n; i++) {
		char *name;

		if (!select(&v[i]))
			continue;
		name = strdup(vname(&v[i]));
		assert_non_null(name);
		t[k].name = name;
		t[k].test_func = fn;
		t[k].initial_state = (void *)&v[i];
		k++;
	}
	*out = t;
	return k;
}

/*
 * Run the fixed tests, then one test per variant that select() takes,
 * as one TAP stream.
 */
static inline int
ak_run_with_variants(const char *group, const struct CMUnitTest *fixed,
		     size_t nfixed, CMUnitTestFunction fn,
		     bool (*select)(const struct ak_variant *))
{
	struct CMUnitTest *t, *all;
	size_t i, n = ak_variant_tests(&t, fn, select);
	int rc;

	all = calloc(n + nfixed, sizeof(*all));
	assert_non_null(all);
	if (nfixed)
		memcpy(all, fixed, nfixed * sizeof(*fixed));
	memcpy(all + nfixed, t, n * sizeof(*t));
	rc = ak_test_main(group, all, n + nfixed);
	for (i = 0; i < n; i++)
		free((char *)t[i].name);
	free(t);
	free(all);
	return rc;
}

/*
 * One increment of *p through v's CAS loop: +1 for words; for 128 bits
 * the low half +1 and the high half +hi_step, so the two halves show
 * whether they always moved together.  fetch_add adds 1 directly.
 */
static inline void vinc(const struct ak_variant *v, void *p,
			uint64_t hi_step)
{
	switch (v->kind * 1000 + v->width) {
	case ak_prim_cmpxchg * 1000 + 32: {
		uint32_t *c = p, o = *(volatile uint32_t *)c, r;

		while ((r = v->fn.cmpxchg32(c, o, o + 1)) != o)
			o = r;
		break;
	}
	case ak_prim_cmpxchg * 1000 + 64: {
		uint64_t *c = p, o = *(volatile uint64_t *)c, r;

		while ((r = v->fn.cmpxchg64(c, o, o + 1)) != o)
			o = r;
		break;
	}
	case ak_prim_cmpxchg * 1000 + 128: {
		/* a torn first read only costs a retry */
		ak_u128 *c = p, o = *(volatile ak_u128 *)c, r;

		while ((r = v->fn.cmpxchg128(c, o,
				o + ak_u128_make(hi_step, 1))) != o)
			o = r;
		break;
	}
	case ak_prim_try_cmpxchg * 1000 + 32: {
		uint32_t *c = p, o = *(volatile uint32_t *)c;

		while (!v->fn.try_cmpxchg32(c, &o, o + 1))
			;
		break;
	}
	case ak_prim_try_cmpxchg * 1000 + 64: {
		uint64_t *c = p, o = *(volatile uint64_t *)c;

		while (!v->fn.try_cmpxchg64(c, &o, o + 1))
			;
		break;
	}
	case ak_prim_try_cmpxchg * 1000 + 128: {
		ak_u128 *c = p, o = *(volatile ak_u128 *)c;

		while (!v->fn.try_cmpxchg128(c, &o,
				o + ak_u128_make(hi_step, 1)))
			;
		break;
	}
	case ak_prim_fetch_add * 1000 + 32:
		v->fn.fetch_add32(p, 1);
		break;
	case ak_prim_fetch_add * 1000 + 64:
		v->fn.fetch_add64(p, 1);
		break;
	default:
		fail_msg("%s cannot count", vname(v));
	}
}

/* Skip the running test when this machine cannot run the variant. */
#define SKIP_UNUSABLE(v)						\
	do {								\
		if (!(v)->usable())					\
			ak_skip("%s: not supported by this CPU", vname(v)); \
	} while (0)

#endif /* AK_TEST_VARIANTS_H */
