// SPDX-License-Identifier: MIT
/*
 * atomkit-variants: list every compiled variant and whether this machine
 * can run it.
 */
#include <stdio.h>
#include <string.h>
#include <atomkit/registry.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: atomkit-variants [--usable] [--help]\n"
		   "  --usable  list only the variants this machine runs\n");
}

int main(int argc, char **argv)
{
	bool only_usable = false;
	size_t i, n;
	const struct ak_variant *v = ak_variants(&n);
	int f;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--usable")) {
			only_usable = true;
		} else if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "atomkit-variants: unknown option '%s'\n",
				argv[i]);
			usage(stderr);
			return 2;
		}
	}

	printf("# atomkit %s, arch %s; cpu features:", AK_VERSION,
	       AK_ARCH_NAME);
	for (f = 0; f < AK_CPU_NR_FEATURES; f++)
		printf(" %s=%d", ak_cpu_feature_name(f), ak_cpu_has(f));
	printf("; native cmpxchg128: %s\n",
	       ak_have_cmpxchg128() ? "yes" : "no (lock-based emulation)");
	printf("%-36s %-8s %-4s %-6s %s\n", "variant", "order", "smp",
	       "usable", "instruction");
	for (i = 0; i < n; i++) {
		char name[128];
		bool ok = v[i].usable();

		if (only_usable && !ok)
			continue;
		printf("%-36s %-8s %-4s %-6s %s\n",
		       ak_variant_fullname(&v[i], name, sizeof(name)),
		       v[i].order, v[i].smp_safe ? "yes" : "no",
		       ok ? "yes" : "no", v[i].insn);
	}
	return 0;
}
