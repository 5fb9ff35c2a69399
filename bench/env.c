// SPDX-License-Identifier: MIT
/*
 * The run context: everything a reader needs to trust or discount the
 * numbers (doc/benchmarks.md, "Run context"): the machine, its topology,
 * whether it is a guest or an emulator, frequency governor and boost, the
 * counter and its frequency, the per-CPU mode, the CPU features that pick
 * implementations, and how atomkit was built.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <atomkit/config.h>
#include <atomkit/cpu.h>
#include <atomkit/percpu.h>

#include "akb-build.h"
#include "bench.h"
#include "counter.h"
#include "topo.h"

/* First line of a file, without its newline; NULL if unreadable. */
static const char *read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	if (!fgets(buf, (int)size, f)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

#if !defined(__x86_64__) && !defined(__i386__)
/* Whether /proc/cpuinfo has a line starting with key. */
static int cpuinfo_has(const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, key, strlen(key));
	fclose(f);
	return found;
}
#endif

static int quick;

void akb_set_quick(void)
{
	quick = 1;
}

int akb_quick(void)
{
	return quick;
}

/*
 * qemu-user passes the host's /proc/cpuinfo through: an arm64 or ppc64
 * binary that reads an x86 "vendor_id" line is being emulated.  The cross
 * rig also says so with AK_EMULATED=1.
 */
int akb_emulated(const char **why)
{
	const char *e = getenv("AK_EMULATED"), *dummy;

	if (!why)
		why = &dummy;

	if (e && *e && strcmp(e, "0")) {
		*why = "AK_EMULATED is set";
		return 1;
	}
#if !defined(__x86_64__) && !defined(__i386__)
	if (cpuinfo_has("vendor_id")) {
		*why = "/proc/cpuinfo is an x86 host's (qemu-user)";
		return 1;
	}
#endif
	*why = "native";
	return 0;
}

static void hypervisor(char *buf, size_t size)
{
	char line[128];

#if defined(__x86_64__)
	unsigned int a, b, c, d;

	__asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
				     : "a"(1), "c"(0));
	if (c & (1u << 31)) {
		unsigned int v[3];
		char name[13];

		__asm__ __volatile__("cpuid"
				     : "=a"(a), "=b"(v[0]), "=c"(v[1]),
				       "=d"(v[2])
				     : "a"(0x40000000), "c"(0));
		memcpy(name, v, 12);
		name[12] = 0;
		snprintf(buf, size, "yes (cpuid: %s)", name);
		return;
	}
#endif
	if (read_line("/sys/hypervisor/type", line, sizeof(line))) {
		snprintf(buf, size, "yes (%s)", line);
		return;
	}
	if (read_line("/proc/device-tree/hypervisor/compatible", line,
		      sizeof(line))) {
		snprintf(buf, size, "yes (%s)", line);
		return;
	}
	snprintf(buf, size, "none detected");
}

static void boost(char *buf, size_t size)
{
	char line[64];

	if (read_line("/sys/devices/system/cpu/cpufreq/boost", line,
		      sizeof(line)))
		snprintf(buf, size, "%s", !strcmp(line, "1") ? "on" : "off");
	else if (read_line("/sys/devices/system/cpu/intel_pstate/no_turbo",
			   line, sizeof(line)))
		snprintf(buf, size, "%s", !strcmp(line, "1") ? "off" : "on");
	else
		snprintf(buf, size, "unknown (not readable)");
}

static const char *feature(enum ak_cpu_feature f, int arch)
{
	if (!arch)
		return "n/a";
	return ak_cpu_has(f) ? "yes" : "no";
}

void akb_env_context(void (*add)(const char *key, const char *value))
{
	const struct akb_counter_info *ci = akb_counter_info();
	char buf[512], line[256];
	const char *why;
	struct utsname u;
	int x86 = 0, arm = 0, ppc = 0;

#if defined(AK_ARCH_X86_64)
	x86 = 1;
#elif defined(AK_ARCH_ARM64)
	arm = 1;
#elif defined(AK_ARCH_PPC64)
	ppc = 1;
#endif
	add("ak_version", AK_VERSION);
	add("ak_git_rev", AKB_GIT_REV);
	add("ak_arch", AK_ARCH_NAME);
	add("ak_cpu_model", akb_cpu_model());
	snprintf(buf, sizeof(buf), "%d", akb_nr_cores());
	add("ak_cores", buf);
	snprintf(buf, sizeof(buf), "%d", akb_nr_pus());
	add("ak_pus", buf);
	add("ak_topology", akb_topo_summary());
	add("ak_topology_source", akb_topo_source());
	{
		char *p = buf;
		size_t left = sizeof(buf);
		int c, w;

		for (c = 0; c < AKB_PLACE_NR && left > 1; c++) {
			const int *cpus;
			enum akb_skip absent;
			int n = akb_place_cpus((enum akb_place)c, &cpus,
					       &absent);

			w = n ? snprintf(p, left, "%s%s: %d PUs", c ? "; " : "",
					 akb_place_name((enum akb_place)c), n)
			      : snprintf(p, left, "%s%s: absent (%s)",
					 c ? "; " : "",
					 akb_place_name((enum akb_place)c),
					 akb_skip_text(absent));
			if (w < 0 || (size_t)w >= left)
				break;
			p += w, left -= (size_t)w;
		}
		add("ak_placements", buf);
	}
	if (!uname(&u)) {
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release,
			 u.machine);
		add("ak_kernel", buf);
	}
	hypervisor(buf, sizeof(buf));
	add("ak_hypervisor", buf);
	{
		int emu = akb_emulated(&why);

		snprintf(buf, sizeof(buf), "%s (%s)", emu ? "yes" : "no", why);
	}
	add("ak_emulated", buf);
	add("ak_governor",
	    read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
		      line, sizeof(line)) ?:
		    "unknown (no cpufreq in /sys)");
	boost(buf, sizeof(buf));
	add("ak_boost", buf);
	add("ak_smt",
	    read_line("/sys/devices/system/cpu/smt/active", line,
		      sizeof(line)) ?
		    (!strcmp(line, "1") ? "active" : "inactive") :
		    "unknown");
	add("ak_pmu", ci->papi);
	add("ak_counter", ci->key);
	add("ak_counter_unit", ci->unit);
	snprintf(buf, sizeof(buf), "%.0f", ci->hz);
	add("ak_counter_hz", buf);
	add("ak_counter_hz_source", ci->hz_source);
	snprintf(buf, sizeof(buf), "%.2f", ci->read_cost);
	add("ak_counter_read_cost", buf);
	snprintf(buf, sizeof(buf), "%s (owner of rseq areas: %s)",
		 ak_percpu_mode_name(ak_percpu_mode()), ak_rseq_owner());
	add("ak_percpu_mode", buf);
	{
		char *p = buf;
		size_t left = sizeof(buf);
		int m, w;

		for (m = 0; m < AK_PERCPU_NR_MODES && left > 1; m++) {
			int ok = ak_percpu_mode_available(
				(enum ak_percpu_mode)m, &why);

			w = snprintf(p, left, "%s%s: %s", m ? "; " : "",
				     ak_percpu_mode_name((enum ak_percpu_mode)m),
				     ok ? "available" : why);
			if (w < 0 || (size_t)w >= left)
				break;
			p += w, left -= (size_t)w;
		}
		add("ak_percpu_modes", buf);
	}
	add("ak_cx16", feature(AK_CPU_CX16, x86));
	add("ak_lse", feature(AK_CPU_LSE, arm));
	add("ak_isa207", feature(AK_CPU_ISA207, ppc));
	add("ak_cpu_disable", getenv("AK_CPU_DISABLE") ?: "");
	add("ak_compiler", __VERSION__);
	add("ak_cflags", AKB_CFLAGS);
	add("ak_configure", AKB_CONFIGURE_ARGS);
	add("ak_gbench_version", AKB_BENCHMARK_VERSION);
}
