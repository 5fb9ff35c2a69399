// SPDX-License-Identifier: MIT
/*
 * Semantics of every 32- and 64-bit variant in the registry and of the
 * type-generic API: the value returned on success and on failure, the
 * value left in memory, and that a narrow op leaves its neighbours alone.
 */
#include <string.h>
#include "variants.h"

#define CANARY32 0xa5c3e1f7u
#define CANARY64 0xa5c3e1f7d2b4968bull

/* The word under test sits between two canaries. */
struct w32 {
	uint32_t before, v, after;
};
struct w64 {
	uint64_t before, v, after;
};

#define CHECK_CANARIES(w, c)				\
	do {						\
		assert_int_equal((w)->before, c);	\
		assert_int_equal((w)->after, c);	\
	} while (0)

/*
 * Value pairs that catch the usual bugs: a sign-extended 32-bit compare
 * (high bit set), a compare that looks at only part of a 64-bit word
 * (operands equal in one half), and a plain mismatch.
 */
static const uint32_t vals32[][2] = {
	{ 0x80000001u, 0x7ffffffeu },
	{ 0xffffffffu, 0x00000000u },
	{ 0x00000001u, 0xfffffffeu },
};
static const uint64_t vals64[][2] = {
	{ 0x8000000000000001ull, 0x7ffffffffffffffeull },
	{ 0xffffffff00000000ull, 0x00000000ffffffffull },
	{ 0x0000000100000002ull, 0x0000000200000002ull },
	{ 0xffffffffffffffffull, 0x0000000000000000ull },
};

static void check_cmpxchg32(const struct ak_variant *v)
{
	size_t i;

	for (i = 0; i < AK_ARRAY_SIZE(vals32); i++) {
		uint32_t a = vals32[i][0], b = vals32[i][1];
		struct w32 w = { CANARY32, a, CANARY32 };

		/* success: returns the old value, stores the new one */
		assert_int_equal(v->fn.cmpxchg32(&w.v, a, b), a);
		assert_int_equal(w.v, b);
		CHECK_CANARIES(&w, CANARY32);
		/* failure: returns the current value, stores nothing */
		assert_int_equal(v->fn.cmpxchg32(&w.v, a, a ^ 0x5a5a5a5au), b);
		assert_int_equal(w.v, b);
		CHECK_CANARIES(&w, CANARY32);
	}
}

static void check_cmpxchg64(const struct ak_variant *v)
{
	size_t i;

	for (i = 0; i < AK_ARRAY_SIZE(vals64); i++) {
		uint64_t a = vals64[i][0], b = vals64[i][1];
		struct w64 w = { CANARY64, a, CANARY64 };

		assert_int_equal(v->fn.cmpxchg64(&w.v, a, b), a);
		assert_int_equal(w.v, b);
		CHECK_CANARIES(&w, CANARY64);
		assert_int_equal(v->fn.cmpxchg64(&w.v, a, ~a), b);
		assert_int_equal(w.v, b);
		CHECK_CANARIES(&w, CANARY64);
	}
}

static void check_try32(const struct ak_variant *v)
{
	size_t i;

	for (i = 0; i < AK_ARRAY_SIZE(vals32); i++) {
		uint32_t a = vals32[i][0], b = vals32[i][1], o = a;
		struct w32 w = { CANARY32, a, CANARY32 };

		/* success: true, *old untouched */
		assert_true(v->fn.try_cmpxchg32(&w.v, &o, b));
		assert_int_equal(o, a);
		assert_int_equal(w.v, b);
		/* failure: false, *old receives the value found */
		assert_false(v->fn.try_cmpxchg32(&w.v, &o, a));
		assert_int_equal(o, b);
		assert_int_equal(w.v, b);
		CHECK_CANARIES(&w, CANARY32);
	}
}

static void check_try64(const struct ak_variant *v)
{
	size_t i;

	for (i = 0; i < AK_ARRAY_SIZE(vals64); i++) {
		uint64_t a = vals64[i][0], b = vals64[i][1], o = a;
		struct w64 w = { CANARY64, a, CANARY64 };

		assert_true(v->fn.try_cmpxchg64(&w.v, &o, b));
		assert_int_equal(o, a);
		assert_int_equal(w.v, b);
		assert_false(v->fn.try_cmpxchg64(&w.v, &o, a));
		assert_int_equal(o, b);
		assert_int_equal(w.v, b);
		CHECK_CANARIES(&w, CANARY64);
	}
}

static void check_xchg32(const struct ak_variant *v)
{
	struct w32 w = { CANARY32, 0x80000001u, CANARY32 };

	assert_int_equal(v->fn.xchg32(&w.v, 0xfffffffeu), 0x80000001u);
	assert_int_equal(w.v, 0xfffffffeu);
	assert_int_equal(v->fn.xchg32(&w.v, 0), 0xfffffffeu);
	assert_int_equal(w.v, 0);
	CHECK_CANARIES(&w, CANARY32);
}

static void check_xchg64(const struct ak_variant *v)
{
	struct w64 w = { CANARY64, 0x8000000000000001ull, CANARY64 };

	assert_int_equal(v->fn.xchg64(&w.v, 0xffffffff00000000ull),
			 0x8000000000000001ull);
	assert_int_equal(w.v, 0xffffffff00000000ull);
	assert_int_equal(v->fn.xchg64(&w.v, 1), 0xffffffff00000000ull);
	assert_int_equal(w.v, 1);
	CHECK_CANARIES(&w, CANARY64);
}

static void check_fetch_add32(const struct ak_variant *v)
{
	struct w32 w = { CANARY32, 0xfffffffeu, CANARY32 };

	/* wraps within 32 bits: no carry into the neighbour */
	assert_int_equal(v->fn.fetch_add32(&w.v, 3), 0xfffffffeu);
	assert_int_equal(w.v, 1);
	assert_int_equal(v->fn.fetch_add32(&w.v, (uint32_t)-2), 1);
	assert_int_equal(w.v, 0xffffffffu);
	CHECK_CANARIES(&w, CANARY32);
}

static void check_fetch_add64(const struct ak_variant *v)
{
	struct w64 w = { CANARY64, 0x00000000ffffffffull, CANARY64 };

	/* carries from the low into the high half */
	assert_int_equal(v->fn.fetch_add64(&w.v, 1), 0x00000000ffffffffull);
	assert_int_equal(w.v, 0x0000000100000000ull);
	assert_int_equal(v->fn.fetch_add64(&w.v, (uint64_t)-1),
			 0x0000000100000000ull);
	assert_int_equal(w.v, 0x00000000ffffffffull);
	w.v = ~0ull;
	assert_int_equal(v->fn.fetch_add64(&w.v, 2), ~0ull);
	assert_int_equal(w.v, 1);
	CHECK_CANARIES(&w, CANARY64);
}

static void test_variant(void **state)
{
	const struct ak_variant *v = *state;

	SKIP_UNUSABLE(v);
	switch (v->kind) {
	case ak_prim_cmpxchg:
		(v->width == 32 ? check_cmpxchg32 : check_cmpxchg64)(v);
		break;
	case ak_prim_try_cmpxchg:
		(v->width == 32 ? check_try32 : check_try64)(v);
		break;
	case ak_prim_xchg:
		(v->width == 32 ? check_xchg32 : check_xchg64)(v);
		break;
	case ak_prim_fetch_add:
		(v->width == 32 ? check_fetch_add32 : check_fetch_add64)(v);
		break;
	default:
		fail_msg("unknown primitive kind %d", v->kind);
	}
}

static bool word_variant(const struct ak_variant *v)
{
	return v->width == 32 || v->width == 64;
}

/* ---- the type-generic API ---- */

struct node {
	struct node *next;
};

static void test_api_int_widths(void **state)
{
	int i = -1;
	unsigned int u = 7;
	long l = -2;
	uint64_t q = 0x0123456789abcdefull;
	int32_t neighbours[3] = { 11, -5, 13 };

	(void)state;
	assert_int_equal(ak_cmpxchg(&i, -1, 5), -1);
	assert_int_equal(i, 5);
	assert_int_equal(ak_cmpxchg_relaxed(&u, 7u, 8u), 7u);
	assert_int_equal(ak_cmpxchg_acquire(&u, 7u, 9u), 8u);
	assert_int_equal(u, 8u);
	assert_int_equal(ak_cmpxchg_release(&l, -2L, -3L), -2L);
	assert_int_equal(l, -3L);
	assert_int_equal(ak_cmpxchg_local(&q, 0x0123456789abcdefull, 1), 0x0123456789abcdefull);
	assert_int_equal(q, 1);

	/* a negative 32-bit value fails against its 64-bit sign extension */
	assert_int_equal(ak_cmpxchg(&neighbours[1], -5, -6), -5);
	assert_int_equal(ak_cmpxchg_local(&neighbours[1], -5, 0), -6);
	assert_int_equal(neighbours[0], 11);
	assert_int_equal(neighbours[1], -6);
	assert_int_equal(neighbours[2], 13);

	assert_int_equal(ak_xchg(&l, 42L), -3L);
	assert_int_equal(ak_xchg_local(&i, -9), 5);
	assert_int_equal(ak_fetch_add(&i, 10), -9);
	assert_int_equal(i, 1);
	assert_int_equal(ak_fetch_add_relaxed(&l, -50L), 42L);
	assert_int_equal(l, -8L);
	assert_int_equal(ak_fetch_add(&neighbours[1], 6), -6);
	assert_int_equal(neighbours[1], 0);
	assert_int_equal(neighbours[0], 11);
	assert_int_equal(neighbours[2], 13);
}

static void test_api_try(void **state)
{
	uint32_t x = 3, o = 3;
	int64_t y = -1, oy = 0;

	(void)state;
	assert_true(ak_try_cmpxchg(&x, &o, 4u));
	assert_int_equal(o, 3);
	assert_false(ak_try_cmpxchg_relaxed(&x, &o, 5u));
	assert_int_equal(o, 4);
	assert_true(ak_try_cmpxchg_acquire(&x, &o, 6u));
	assert_false(ak_try_cmpxchg_release(&x, &o, 7u));
	assert_int_equal(o, 6);
	assert_true(ak_try_cmpxchg_local(&x, &o, 8u));
	assert_int_equal(x, 8);

	assert_false(ak_try_cmpxchg(&y, &oy, 1));
	assert_int_equal(oy, -1);
	assert_true(ak_try_cmpxchg_local(&y, &oy, INT64_MIN));
	assert_int_equal(y, INT64_MIN);
}

static void test_api_pointers(void **state)
{
	struct node a = { NULL }, b = { &a };
	struct node *head = &b, *old = &a;

	(void)state;
	/* pop b: head b -> a */
	assert_ptr_equal(ak_cmpxchg(&head, &b, b.next), &b);
	assert_ptr_equal(head, &a);
	assert_ptr_equal(ak_cmpxchg(&head, &b, NULL), &a);
	assert_false(ak_try_cmpxchg(&head, &(struct node *){ &b }, NULL));
	assert_true(ak_try_cmpxchg_local(&head, &old, &b));
	assert_ptr_equal(ak_xchg(&head, NULL), &b);
	assert_null(head);
	assert_null(ak_xchg_local(&head, &a));
	assert_ptr_equal(head, &a);
}

int main(void)
{
	static const struct CMUnitTest api[] = {
		AK_TEST(test_api_int_widths),
		AK_TEST(test_api_try),
		AK_TEST(test_api_pointers),
	};

	return ak_run_with_variants("cmpxchg", api, AK_ARRAY_SIZE(api),
				    test_variant, word_variant);
}
