// SPDX-License-Identifier: MIT
/*
 * Run-time feature probes.  Each feature is probed once; the answer is
 * cached in __ak_cpu_features[] so the inline checks cost one load.
 */
#include <stdlib.h>
#include <string.h>
#include <atomkit/cmpxchg.h>

#if defined(__x86_64__)
# include <cpuid.h>
#elif defined(__aarch64__) || defined(__powerpc64__)
# include <sys/auxv.h>
#endif

int __ak_cpu_features[AK_CPU_NR_FEATURES] = { -1, -1, -1 };

static const char *const feature_names[AK_CPU_NR_FEATURES] = {
	[AK_CPU_CX16] = "cx16",
	[AK_CPU_LSE] = "lse",
	[AK_CPU_ISA207] = "isa207",
};

const char *ak_cpu_feature_name(enum ak_cpu_feature f)
{
	return (unsigned int)f < AK_CPU_NR_FEATURES ? feature_names[f] : "?";
}

static bool hw_has(enum ak_cpu_feature f)
{
	switch (f) {
#if defined(__x86_64__)
	case AK_CPU_CX16: {
		unsigned int a, b, c, d;

		return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
	}
#elif defined(__aarch64__)
	case AK_CPU_LSE:
		/* HWCAP_ATOMICS, <asm/hwcap.h>: bit 8 of AT_HWCAP. */
		return getauxval(AT_HWCAP) & (1UL << 8);
#elif defined(__powerpc64__)
	case AK_CPU_ISA207:
		/* PPC_FEATURE2_ARCH_2_07 in AT_HWCAP2. */
		return getauxval(AT_HWCAP2) & 0x80000000UL;
#endif
	default:
		return false;
	}
}

/* AK_CPU_DISABLE is a comma-separated list of feature names to hide. */
static bool disabled_by_env(enum ak_cpu_feature f)
{
	const char *env = getenv("AK_CPU_DISABLE");
	const char *name = ak_cpu_feature_name(f);
	size_t len = strlen(name);

	while (env && *env) {
		const char *end = strchr(env, ',');
		size_t n = end ? (size_t)(end - env) : strlen(env);

		if (n == len && !strncmp(env, name, n))
			return true;
		env = end ? end + 1 : NULL;
	}
	return false;
}

int __ak_cpu_probe(enum ak_cpu_feature f)
{
	int v = hw_has(f) && !disabled_by_env(f);
	int unknown = -1;

	/* First answer wins, so every caller sees one value forever. */
	__atomic_compare_exchange_n(&__ak_cpu_features[f], &unknown, v, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return __atomic_load_n(&__ak_cpu_features[f], __ATOMIC_RELAXED);
}

bool ak_have_cmpxchg128(void)
{
#if !AK_HAVE_ARCH_CMPXCHG128
	return false;
#elif defined(__x86_64__)
	return ak_x86_has_cx16();
#elif defined(__aarch64__)
	return true;	/* LL/SC ldxp/stxp is always there */
#elif defined(__powerpc64__)
	return ak_ppc_has_quadword();
#else
	return false;
#endif
}
