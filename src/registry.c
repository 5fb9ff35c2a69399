// SPDX-License-Identifier: MIT
/*
 * The variant registry, expanded from the AK_ARCH_VARIANTS and
 * AK_GENERIC_VARIANTS lists that each arch header keeps beside the code it
 * describes.  Taking the address of each static inline function makes the
 * out-of-line copy that benchmarks and tests call through.
 */
#include <stdio.h>
#include <string.h>
#include <atomkit/registry.h>

static bool ak_always(void)
{
	return true;
}

static __attribute__((unused)) bool ak_need_cx16(void)
{
	return ak_cpu_has(AK_CPU_CX16);
}

static __attribute__((unused)) bool ak_need_lse(void)
{
	return ak_cpu_has(AK_CPU_LSE);
}

static __attribute__((unused)) bool ak_need_isa207(void)
{
	return ak_cpu_has(AK_CPU_ISA207);
}

#define AK_ENTRY(arch_, prim_, width_, name_, order_, smp_, insn_, fn_,	\
		 usable_)						\
	{								\
		.arch = arch_,						\
		.prim = #prim_,						\
		.kind = ak_prim_##prim_,				\
		.width = width_,					\
		.name = #name_,						\
		.order = #order_,					\
		.insn = insn_,						\
		.smp_safe = smp_,					\
		.usable = usable_,					\
		.fn.prim_##width_ = fn_,				\
	},
#define AK_ARCH_ENTRY(...)	AK_ENTRY(AK_ARCH_NAME, __VA_ARGS__)
#define AK_GENERIC_ENTRY(...)	AK_ENTRY("generic", __VA_ARGS__)

static const struct ak_variant variants[] = {
#ifdef AK_ARCH_VARIANTS
	AK_ARCH_VARIANTS(AK_ARCH_ENTRY)
#endif
	AK_GENERIC_VARIANTS(AK_GENERIC_ENTRY)
};

const struct ak_variant *ak_variants(size_t *count)
{
	*count = sizeof(variants) / sizeof(variants[0]);
	return variants;
}

char *ak_variant_fullname(const struct ak_variant *v, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s%u/%s", v->arch, v->prim, v->width,
		 v->name);
	return buf;
}

const struct ak_variant *ak_variant_find(const char *fullname)
{
	char buf[128];
	size_t i, n;
	const struct ak_variant *v = ak_variants(&n);

	for (i = 0; i < n; i++)
		if (!strcmp(ak_variant_fullname(&v[i], buf, sizeof(buf)),
			    fullname))
			return &v[i];
	return NULL;
}
