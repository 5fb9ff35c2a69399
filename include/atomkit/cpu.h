/* SPDX-License-Identifier: MIT */
/*
 * Run-time CPU features that pick an implementation (doc/primitives.md,
 * "Run-time selection").
 */
#ifndef ATOMKIT_CPU_H
#define ATOMKIT_CPU_H

#include <atomkit/compiler.h>

enum ak_cpu_feature {
	AK_CPU_CX16,	/* x86-64 cmpxchg16b (CPUID.01H:ECX bit 13) */
	AK_CPU_LSE,	/* arm64 FEAT_LSE: cas/casp/ldadd/swp (HWCAP_ATOMICS) */
	AK_CPU_ISA207,	/* ppc64 ISA 2.07: lqarx/stqcx. (PPC_FEATURE2_ARCH_2_07) */
	AK_CPU_NR_FEATURES
};

#ifdef __cplusplus
extern "C" {
#endif

/* -1 until probed, then 0 or 1; written once by __ak_cpu_probe(). */
extern int __ak_cpu_features[AK_CPU_NR_FEATURES];
int __ak_cpu_probe(enum ak_cpu_feature f);

/* "cx16", "lse", "isa207". */
const char *ak_cpu_feature_name(enum ak_cpu_feature f);

/*
 * Whether the hardware of the running machine has the feature, as atomkit
 * uses it: AK_CPU_DISABLE="lse,cx16" in the environment (read once, at the
 * first query) hides features, so the fallback paths can be run and
 * measured on hardware that has the feature.
 */
static inline bool ak_cpu_has(enum ak_cpu_feature f)
{
	int v = __atomic_load_n(&__ak_cpu_features[f], __ATOMIC_RELAXED);

	if (ak_unlikely(v < 0))
		v = __ak_cpu_probe(f);
	return v;
}

#ifdef __cplusplus
}
#endif

#endif /* ATOMKIT_CPU_H */
