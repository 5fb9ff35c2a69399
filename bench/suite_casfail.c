// SPDX-License-Identifier: MIT
/*
 * Suite 2: compare-and-swap that succeeds against one that fails, for
 * every 64- and 128-bit cmpxchg variant.  A failed CAS still takes the
 * line exclusive on most implementations (PACT'15: about the cost of a
 * successful one); LL/SC implementations may skip the store.  Both are
 * dependent chains, so the figures are latencies.
 */
#include <atomkit/registry.h>

#include "akbench.h"
#include "bench.h"

struct line64 { uint64_t v; } __attribute__((aligned(64)));
struct line128 { ak_u128 v; } __attribute__((aligned(64)));

/* x holds 1; every old value offered is 0, so every CAS fails. */
#define FAIL_BODY(T, line, call)					\
	do {								\
		static struct line x;					\
		T v = 0;						\
									\
		x.v = 1;						\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++)				\
				v = (T)(call(&x.v, v, (T)(v + 2)) - 1);	\
		if (x.v != 1)						\
			akb_fail(s, "a CAS meant to fail succeeded");	\
	} while (0)

#define SUCC_BODY(T, line, call)					\
	do {								\
		static struct line x;					\
		T v = 0;						\
									\
		x.v = 0;						\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++)				\
				v = (T)(call(&x.v, v, (T)(v + 1)) + 1);	\
		if (x.v != v)						\
			akb_fail(s, "a CAS meant to succeed failed");	\
	} while (0)

static void bm_fail64(struct akb_state *s)
{
	const struct ak_variant *var = akb_arg(s);
	uint64_t n, i;

	akb_label(s, var->insn);
	FAIL_BODY(uint64_t, line64, var->fn.cmpxchg64);
}

static void bm_succ64(struct akb_state *s)
{
	const struct ak_variant *var = akb_arg(s);
	uint64_t n, i;

	akb_label(s, var->insn);
	SUCC_BODY(uint64_t, line64, var->fn.cmpxchg64);
}

static void bm_fail128(struct akb_state *s)
{
	const struct ak_variant *var = akb_arg(s);
	uint64_t n, i;

	akb_label(s, var->insn);
	FAIL_BODY(ak_u128, line128, var->fn.cmpxchg128);
}

static void bm_succ128(struct akb_state *s)
{
	const struct ak_variant *var = akb_arg(s);
	uint64_t n, i;

	akb_label(s, var->insn);
	SUCC_BODY(ak_u128, line128, var->fn.cmpxchg128);
}

/*
 * Called through the registry's out-of-line copies: both outcomes pay the
 * same call, so the comparison between them stays fair.
 */
void akb_suite_casfail(void)
{
	size_t k, nv;
	const struct ak_variant *v = ak_variants(&nv);

	for (k = 0; k < nv; k++) {
		bool w64 = v[k].width == 64;

		if (v[k].kind != ak_prim_cmpxchg || (!w64 && v[k].width != 128))
			continue;
		akb_part(akb_variant_new("cas", w64 ? bm_succ64 : bm_succ128,
					 &v[k], 0), "outcome", "success");
		akb_part(akb_variant_new("cas", w64 ? bm_fail64 : bm_fail128,
					 &v[k], 0), "outcome", "failure");
	}
}
