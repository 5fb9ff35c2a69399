// SPDX-License-Identifier: MIT
/*
 * Placement classes from the topology (bench/topo.h).  hwloc gives no
 * PU-to-PU distances, only the tree; a class is therefore named by the
 * nearest common ancestor of its first two PUs (core, a shared cache below
 * the last level, the last-level cache, the package, the machine across
 * NUMA nodes), which is what the SOSP'13 and PACT'15 studies vary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomkit/config.h>
#include "topo.h"

#ifdef AKB_HAVE_HWLOC
#include <hwloc.h>
#endif

#define AKB_MAX_CPUS 4096

static const char *const place_names[AKB_PLACE_NR] = {
	[AKB_PLACE_SMT] = "smt",
	[AKB_PLACE_CORE] = "core",
	[AKB_PLACE_LLC] = "llc",
	[AKB_PLACE_PACKAGE] = "package",
	[AKB_PLACE_NUMA] = "numa",
	[AKB_PLACE_SPREAD] = "spread",
};

static struct {
	int *cpus;
	int n;
	enum akb_skip why;	/* n == 0: why the class is absent */
} place[AKB_PLACE_NR];
static int nomem;		/* a class's CPU list could not be had */

static int nr_pus, nr_cores;
static char summary[512];
static char source[64];
static char model[256];
#ifdef AKB_HAVE_HWLOC
static int have_topo = 1;	/* 0: hwloc failed, use sched_setaffinity */
#endif

const char *akb_place_name(enum akb_place p)
{
	return p < AKB_PLACE_NR ? place_names[p] : "?";
}

int akb_place_parse(const char *list, unsigned int *mask, char *err,
		    size_t errlen)
{
	char buf[256], *tok, *save = NULL;
	int p;

	*mask = 0;
	if (!strcmp(list, "all")) {
		*mask = (1u << AKB_PLACE_NR) - 1;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (p = 0; p < AKB_PLACE_NR; p++)
			if (!strcmp(tok, place_names[p]))
				break;
		if (p == AKB_PLACE_NR) {
			snprintf(err, errlen,
				 "--placement: unknown class '%s' (one or more of: smt, core, llc, package, numa, spread, or all)",
				 tok);
			return -1;
		}
		*mask |= 1u << p;
	}
	if (!*mask) {
		snprintf(err, errlen, "--placement: no class given");
		return -1;
	}
	return 0;
}

/* The class's CPUs, if there are enough; else it stays absent (why). */
static void set_place(enum akb_place p, const int *cpus, int n)
{
	if (n < (p == AKB_PLACE_SPREAD ? 1 : 2))
		return;
	place[p].cpus = malloc(sizeof(int) * (size_t)n);
	if (!place[p].cpus) {
		nomem = 1;
		return;
	}
	memcpy(place[p].cpus, cpus, sizeof(int) * (size_t)n);
	place[p].n = n;
}

static void cpuinfo_model(void)
{
	static const char *const keys[] = { "model name", "cpu\t", "cpu model",
					    "Model" };
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	size_t k;

	snprintf(model, sizeof(model), "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			char *c;

			if (strncmp(line, keys[k], strlen(keys[k])))
				continue;
			c = strchr(line, ':');
			if (!c)
				continue;
			for (c++; *c == ' ' || *c == '\t'; c++)
				;
			c[strcspn(c, "\n")] = 0;
			snprintf(model, sizeof(model), "%s", c);
			fclose(f);
			return;
		}
	}
	fclose(f);
}

#ifdef AKB_HAVE_HWLOC
static hwloc_topology_t topo;
static hwloc_obj_type_t core_type = HWLOC_OBJ_CORE;

static const hwloc_obj_type_t cache_types[] = {
	HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
	HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
};
#define NR_CACHE_LEVELS ((int)(sizeof(cache_types) / sizeof(cache_types[0])))

static int ncores_in(hwloc_const_cpuset_t set)
{
	return hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, core_type);
}

static int first_pu(hwloc_obj_t core)
{
	hwloc_obj_t pu = hwloc_get_next_obj_inside_cpuset_by_type(
		topo, core->cpuset, HWLOC_OBJ_PU, NULL);

	return pu ? (int)pu->os_index : -1;
}

/*
 * The first PU of each core inside the groups, one core from each group
 * in turn, so that consecutive PUs sit in different groups.
 */
static int interleave(hwloc_const_cpuset_t *groups, int ngroups, int *out)
{
	int r, g, n = 0, more = 1;

	for (r = 0; more; r++) {
		more = 0;
		for (g = 0; g < ngroups; g++) {
			hwloc_obj_t c = hwloc_get_obj_inside_cpuset_by_type(
				topo, groups[g], core_type, (unsigned)r);

			if (!c)
				continue;
			more = 1;
			if (n < AKB_MAX_CPUS)
				out[n++] = first_pu(c);
		}
	}
	return n;
}

/* Groups: the objects of a type inside set (or set itself if none). */
static int groups_of(hwloc_const_cpuset_t set, hwloc_obj_type_t type,
		     hwloc_const_cpuset_t *g, int max)
{
	hwloc_obj_t o = NULL;
	int n = 0;

	while ((o = hwloc_get_next_obj_inside_cpuset_by_type(topo, set, type,
							     o)) && n < max)
		g[n++] = o->cpuset;
	if (!n)
		g[n++] = set;
	return n;
}

static void classes_hwloc(void)
{
	static int buf[AKB_MAX_CPUS];
	hwloc_const_cpuset_t groups[AKB_MAX_CPUS];
	hwloc_obj_type_t below = core_type;	/* what an LLC holds */
	hwloc_obj_t o;
	int i, l, n, llc = -1;
	unsigned int k;

	/*
	 * below: the deepest level under the LLC whose caches hold whole
	 * cores.  A level with more caches than there are cores is per
	 * thread (qemu gives each x86 thread its own L2) and groups no core.
	 */
	for (l = 0; l < NR_CACHE_LEVELS; l++) {
		int nb = hwloc_get_nbobjs_by_type(topo, cache_types[l]);

		if (nb <= 0)
			continue;
		if (llc >= 0 &&
		    hwloc_get_nbobjs_by_type(topo, cache_types[llc]) <=
		    hwloc_get_nbobjs_by_type(topo, core_type))
			below = cache_types[llc];
		llc = l;
	}

	/* smt: every PU of the first core that has more than one */
	place[AKB_PLACE_SMT].why = AKB_SKIP_NO_SMT;
	for (k = 0; (o = hwloc_get_obj_by_type(topo, core_type, k)); k++) {
		hwloc_obj_t pu = NULL;

		n = 0;
		while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(
				topo, o->cpuset, HWLOC_OBJ_PU, pu)))
			buf[n++] = (int)pu->os_index;
		if (n >= 2) {
			set_place(AKB_PLACE_SMT, buf, n);
			break;
		}
	}

	/* core: cores sharing a cache below the last level */
	place[AKB_PLACE_CORE].why = AKB_SKIP_NO_MID_CACHE;
	for (l = 0; l < llc && !place[AKB_PLACE_CORE].n; l++)
		for (k = 0; (o = hwloc_get_obj_by_type(topo, cache_types[l],
						       k)); k++)
			if (ncores_in(o->cpuset) >= 2) {
				n = groups_of(o->cpuset, core_type, groups,
					      AKB_MAX_CPUS);
				n = interleave(groups, n, buf);
				set_place(AKB_PLACE_CORE, buf, n);
				break;
			}

	/* llc: cores sharing the last-level cache but no cache below it */
	place[AKB_PLACE_LLC].why = llc < 0 ? AKB_SKIP_NO_CACHES :
					     AKB_SKIP_NO_LLC_PAIR;
	for (k = 0; llc >= 0 &&
		    (o = hwloc_get_obj_by_type(topo, cache_types[llc], k));
	     k++) {
		if (ncores_in(o->cpuset) < 2)
			continue;
		/* the next cache level below it that holds cores, else cores */
		n = groups_of(o->cpuset, below, groups, AKB_MAX_CPUS);
		if (n < 2)
			continue;
		n = interleave(groups, n, buf);
		set_place(AKB_PLACE_LLC, buf, n);
		break;
	}

	/* package: one package, cores under different last-level caches */
	place[AKB_PLACE_PACKAGE].why = llc < 0 ? AKB_SKIP_NO_CACHES :
						 AKB_SKIP_ONE_LLC;
	for (k = 0; llc >= 0 &&
		    (o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, k));
	     k++) {
		n = groups_of(o->cpuset, cache_types[llc], groups,
			      AKB_MAX_CPUS);
		if (n < 2)
			continue;
		n = interleave(groups, n, buf);
		set_place(AKB_PLACE_PACKAGE, buf, n);
		break;
	}

	/* numa: cores on different NUMA nodes */
	place[AKB_PLACE_NUMA].why = AKB_SKIP_ONE_NUMA;
	n = 0;
	for (k = 0; (o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, k)) &&
		    n < AKB_MAX_CPUS; k++)
		if (!hwloc_bitmap_iszero(o->cpuset))
			groups[n++] = o->cpuset;
	if (n >= 2) {
		n = interleave(groups, n, buf);
		set_place(AKB_PLACE_NUMA, buf, n);
	}

	/* spread: distinct cores across packages first, then siblings */
	o = hwloc_get_root_obj(topo);
	n = groups_of(o->cpuset, HWLOC_OBJ_PACKAGE, groups, AKB_MAX_CPUS);
	n = interleave(groups, n, buf);
	{
		hwloc_obj_t pu = NULL;

		while ((pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU,
							pu)) &&
		       n < AKB_MAX_CPUS) {
			for (i = 0; i < n; i++)
				if (buf[i] == (int)pu->os_index)
					break;
			if (i == n)
				buf[n++] = (int)pu->os_index;
		}
	}
	set_place(AKB_PLACE_SPREAD, buf, n);
}

static void summary_hwloc(void)
{
	char *p = summary;
	size_t left = sizeof(summary);
	int l, w;

	w = snprintf(p, left, "%d package(s), %d NUMA node(s)",
		     hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE),
		     hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
	p += w, left -= (size_t)w;
	for (l = 0; l < NR_CACHE_LEVELS && left > 1; l++) {
		int nb = hwloc_get_nbobjs_by_type(topo, cache_types[l]);
		hwloc_obj_t c = hwloc_get_obj_by_type(topo, cache_types[l], 0);

		if (nb <= 0 || !c)
			continue;
		w = snprintf(p, left, ", L%d %d x %llu KiB", l + 1, nb,
			     (unsigned long long)c->attr->cache.size / 1024);
		p += w, left -= (size_t)w;
	}
	if (left > 1)
		snprintf(p, left, ", %d core(s), %d PU(s), SMT %s", nr_cores,
			 nr_pus, nr_pus > nr_cores ? "yes" : "no");
}

static int init_hwloc(char *err, size_t errlen)
{
	const char *m;

	if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
		snprintf(err, errlen, "hwloc could not load the topology: %s",
			 strerror(errno));
		return -1;
	}
	if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) <= 0)
		core_type = HWLOC_OBJ_PU;	/* e.g. Power7 shows no cores */
	nr_pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	nr_cores = hwloc_get_nbobjs_by_type(topo, core_type);
	snprintf(source, sizeof(source), "hwloc %s", HWLOC_VERSION);
	classes_hwloc();
	if (!place[AKB_PLACE_SPREAD].n) {
		snprintf(err, errlen, "hwloc found no PUs");
		return -1;
	}
	summary_hwloc();
	m = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "CPUModel");
	if (!m) {
		hwloc_obj_t pk = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE,
						       0);
		m = pk ? hwloc_obj_get_info_by_name(pk, "CPUModel") : NULL;
	}
	if (m)
		snprintf(model, sizeof(model), "%s", m);
	else
		cpuinfo_model();
	return 0;
}
#endif /* AKB_HAVE_HWLOC */

/* Only spread, from the affinity mask; every other class absent (why). */
static int init_affinity(enum akb_skip why, char *err, size_t errlen)
{
	static int buf[AKB_MAX_CPUS];
	cpu_set_t set;
	int c, n = 0, p;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		snprintf(err, errlen, "sched_getaffinity: %s", strerror(errno));
		return -1;
	}
	for (c = 0; c < CPU_SETSIZE && n < AKB_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			buf[n++] = c;
	if (!n) {
		snprintf(err, errlen, "no CPUs in the affinity mask");
		return -1;
	}
	nr_pus = nr_cores = n;
	for (p = 0; p < AKB_PLACE_NR; p++) {
		free(place[p].cpus);	/* what hwloc found before it failed */
		place[p].cpus = NULL;
		place[p].n = 0;
		place[p].why = why;
	}
	set_place(AKB_PLACE_SPREAD, buf, n);
	snprintf(source, sizeof(source), "sched_getaffinity (hwloc %s)",
		 why == AKB_SKIP_NO_HWLOC ? "not built in" : "failed");
	snprintf(summary, sizeof(summary),
		 "%d CPU(s) in the affinity mask; caches and SMT unknown", n);
	cpuinfo_model();
	return 0;
}

static int init(char *err, size_t errlen)
{
#ifdef AKB_HAVE_HWLOC
	if (!init_hwloc(err, errlen))
		return 0;
	fprintf(stderr, "atomkit-bench: %s; placement from the affinity mask only\n",
		err);
	have_topo = 0;
	return init_affinity(AKB_SKIP_HWLOC_FAILED, err, errlen);
#else
	return init_affinity(AKB_SKIP_NO_HWLOC, err, errlen);
#endif
}

int akb_topo_init(char *err, size_t errlen)
{
	static int done;

	if (done)
		return 0;
	done = 1;
	if (init(err, errlen))
		return -1;
	if (nomem) {
		snprintf(err, errlen, "out of memory for the placement classes");
		return -1;
	}
	return 0;
}

int akb_place_cpus(enum akb_place p, const int **cpus, enum akb_skip *why)
{
	*cpus = place[p].cpus;
	*why = place[p].why;
	return place[p].n;
}

int akb_nr_pus(void)
{
	return nr_pus;
}

int akb_nr_cores(void)
{
	return nr_cores;
}

const char *akb_topo_summary(void)
{
	return summary;
}

const char *akb_topo_source(void)
{
	return source;
}

const char *akb_cpu_model(void)
{
	return model;
}

int akb_pin_self(int cpu, char *err, size_t errlen)
{
	int now;

#ifdef AKB_HAVE_HWLOC
	hwloc_bitmap_t set;

	if (!have_topo)
		goto affinity;
	set = hwloc_bitmap_alloc();
	hwloc_bitmap_only(set, (unsigned)cpu);
	if (hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD)) {
		snprintf(err, errlen, "hwloc_set_cpubind to CPU %d: %s", cpu,
			 strerror(errno));
		hwloc_bitmap_free(set);
		return -1;
	}
	hwloc_bitmap_free(set);
	goto check;
affinity:
#endif
	{
		cpu_set_t cs;

		CPU_ZERO(&cs);
		CPU_SET(cpu, &cs);
		if (sched_setaffinity(0, sizeof(cs), &cs)) {
			snprintf(err, errlen, "sched_setaffinity to CPU %d: %s",
				 cpu, strerror(errno));
			return -1;
		}
	}
#ifdef AKB_HAVE_HWLOC
check:
#endif
	now = sched_getcpu();
	if (now != cpu) {
		snprintf(err, errlen,
			 "pinned to CPU %d but sched_getcpu() says %d", cpu,
			 now);
		return -1;
	}
	return 0;
}
