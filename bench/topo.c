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
static int cpu_limit;		/* 1 + the highest OS CPU number */
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

/* The first PU below an object, from the tree (not a walk of every PU). */
static hwloc_obj_t first_pu_obj(hwloc_obj_t o)
{
	while (o->type != HWLOC_OBJ_PU && o->first_child)
		o = o->first_child;
	return o->type == HWLOC_OBJ_PU ? o : NULL;
}

/*
 * Whether o holds two cores or more: whether it reaches past the core of
 * its first PU.  Found from the tree in a few steps, where counting the
 * cores inside it walks them all, for every cache of thousands.
 */
static int two_cores_in(hwloc_obj_t o)
{
	hwloc_obj_t pu = first_pu_obj(o), core;

	if (!pu)
		return 0;
	core = core_type == HWLOC_OBJ_PU ? pu :
		hwloc_get_ancestor_obj_by_type(topo, core_type, pu);
	return core && !hwloc_bitmap_isincluded(o->cpuset, core->cpuset);
}

static int first_pu(hwloc_obj_t core)
{
	hwloc_obj_t pu = first_pu_obj(core);

	return pu ? (int)pu->os_index : -1;
}

/*
 * The first PU of each core inside the groups, one core from each group
 * in turn, so that consecutive PUs sit in different groups.  Each group
 * is walked on from where its last core was taken, not looked up from
 * the first core again every round, and is dropped from groups (set to
 * NULL) when it has no more.
 */
static int interleave(hwloc_const_cpuset_t *groups, int ngroups, int *out)
{
	hwloc_obj_t *at = calloc((size_t)ngroups, sizeof(*at));
	int g, n = 0, more = 1;

	if (!at) {
		nomem = 1;
		return 0;
	}
	while (more) {
		more = 0;
		for (g = 0; g < ngroups; g++) {
			if (!groups[g])
				continue;
			at[g] = hwloc_get_next_obj_inside_cpuset_by_type(
				topo, groups[g], core_type, at[g]);
			if (!at[g]) {
				groups[g] = NULL;
				continue;
			}
			more = 1;
			if (n < nr_pus)
				out[n++] = first_pu(at[g]);
		}
	}
	free(at);
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

/*
 * buf and groups have room for nr_pus entries each: no class has more
 * PUs, and no set of groups more members, than the machine has PUs.
 */
static void classes_hwloc(int *buf, hwloc_const_cpuset_t *groups)
{
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
				topo, o->cpuset, HWLOC_OBJ_PU, pu)) &&
		       n < nr_pus)
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
			if (two_cores_in(o)) {
				n = groups_of(o->cpuset, core_type, groups,
					      nr_pus);
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
		if (!two_cores_in(o))
			continue;
		/* the next cache level below it that holds cores, else cores */
		n = groups_of(o->cpuset, below, groups, nr_pus);
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
			      nr_pus);
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
		    n < nr_pus; k++)
		if (!hwloc_bitmap_iszero(o->cpuset))
			groups[n++] = o->cpuset;
	if (n >= 2) {
		n = interleave(groups, n, buf);
		set_place(AKB_PLACE_NUMA, buf, n);
	}

	/* spread: distinct cores across packages first, then siblings */
	o = hwloc_get_root_obj(topo);
	n = groups_of(o->cpuset, HWLOC_OBJ_PACKAGE, groups, nr_pus);
	n = interleave(groups, n, buf);
	{
		hwloc_bitmap_t taken = hwloc_bitmap_alloc();
		hwloc_obj_t pu = NULL;

		if (!taken) {
			nomem = 1;
			return;
		}
		for (i = 0; i < n; i++)
			hwloc_bitmap_set(taken, (unsigned)buf[i]);
		while ((pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU,
							pu)) &&
		       n < nr_pus)
			if (!hwloc_bitmap_isset(taken, pu->os_index))
				buf[n++] = (int)pu->os_index;
		hwloc_bitmap_free(taken);
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
	hwloc_const_cpuset_t *groups;
	const char *m;
	int *buf, last;

	if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
		snprintf(err, errlen, "hwloc could not load the topology: %s",
			 strerror(errno));
		return -1;
	}
	if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) <= 0)
		core_type = HWLOC_OBJ_PU;	/* e.g. Power7 shows no cores */
	nr_pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	nr_cores = hwloc_get_nbobjs_by_type(topo, core_type);
	if (nr_pus <= 0) {
		snprintf(err, errlen, "hwloc found no PUs");
		return -1;
	}
	last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo));
	cpu_limit = last >= nr_pus ? last + 1 : nr_pus;
	snprintf(source, sizeof(source), "hwloc %s", HWLOC_VERSION);
	buf = malloc(sizeof(*buf) * (size_t)nr_pus);
	groups = malloc(sizeof(*groups) * (size_t)nr_pus);
	if (buf && groups)
		classes_hwloc(buf, groups);
	else
		nomem = 1;
	free(buf);
	free(groups);
	if (!place[AKB_PLACE_SPREAD].n) {
		if (nomem)
			snprintf(err, errlen,
				 "out of memory for the placement classes of %d PUs",
				 nr_pus);
		else
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

/*
 * CPU masks in glibc's dynamically sized cpu_set_t: the kernel refuses a
 * buffer shorter than its nr_cpu_ids bits with EINVAL, and a fixed
 * cpu_set_t holds 1024, so the buffer grows until the kernel takes it.
 */
#define AKB_MASK_LIMIT (1 << 22)	/* CPUs: far past any kernel's */

struct akb_affinity {
	cpu_set_t *set;
	size_t size;
};

static cpu_set_t *affinity_get(size_t *size, char *err, size_t errlen)
{
	int ncpus = cpu_limit > CPU_SETSIZE ? cpu_limit : CPU_SETSIZE;

	for (;;) {
		cpu_set_t *set = CPU_ALLOC(ncpus);

		if (!set) {
			snprintf(err, errlen,
				 "out of memory for a mask of %d CPUs", ncpus);
			return NULL;
		}
		*size = CPU_ALLOC_SIZE(ncpus);
		if (!sched_getaffinity(0, *size, set))
			return set;
		CPU_FREE(set);
		if (errno != EINVAL || ncpus >= AKB_MASK_LIMIT) {
			snprintf(err, errlen,
				 "sched_getaffinity with a mask of %d CPUs: %s",
				 ncpus, strerror(errno));
			return NULL;
		}
		ncpus *= 2;
	}
}

struct akb_affinity *akb_affinity_save(char *err, size_t errlen)
{
	struct akb_affinity *a = malloc(sizeof(*a));

	if (!a) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->set = affinity_get(&a->size, err, errlen);
	if (!a->set) {
		free(a);
		return NULL;
	}
	return a;
}

int akb_affinity_restore(struct akb_affinity *a, char *err, size_t errlen)
{
	int rc = 0;

	if (sched_setaffinity(0, a->size, a->set)) {
		snprintf(err, errlen, "sched_setaffinity: %s",
			 strerror(errno));
		rc = -1;
	}
	CPU_FREE(a->set);
	free(a);
	return rc;
}

/* Only spread, from the affinity mask; every other class absent (why). */
static int init_affinity(enum akb_skip why, char *err, size_t errlen)
{
	cpu_set_t *set;
	size_t size;
	int *buf, c, n = 0, p, count;

	cpu_limit = 0;
	set = affinity_get(&size, err, errlen);
	if (!set)
		return -1;
	count = CPU_COUNT_S(size, set);
	buf = malloc(sizeof(*buf) * (size_t)(count ? count : 1));
	if (!buf) {
		CPU_FREE(set);
		snprintf(err, errlen, "out of memory for a list of %d CPUs",
			 count);
		return -1;
	}
	for (c = 0; c < (int)(size * 8) && n < count; c++)
		if (CPU_ISSET_S(c, size, set)) {
			buf[n++] = c;
			cpu_limit = c + 1;
		}
	CPU_FREE(set);
	if (!n) {
		free(buf);
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
	nomem = 0;
	set_place(AKB_PLACE_SPREAD, buf, n);
	free(buf);
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

int akb_cpu_limit(void)
{
	return cpu_limit;
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
	if (!set) {
		snprintf(err, errlen, "out of memory for a mask of CPU %d",
			 cpu);
		return -1;
	}
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
		/* sized for cpu: a cpu_set_t holds only CPUs 0 to 1023 */
		cpu_set_t *cs = CPU_ALLOC(cpu + 1);
		size_t size = CPU_ALLOC_SIZE(cpu + 1);

		if (!cs) {
			snprintf(err, errlen,
				 "out of memory for a mask of CPU %d", cpu);
			return -1;
		}
		CPU_ZERO_S(size, cs);
		CPU_SET_S(cpu, size, cs);
		if (sched_setaffinity(0, size, cs)) {
			snprintf(err, errlen, "sched_setaffinity to CPU %d: %s",
				 cpu, strerror(errno));
			CPU_FREE(cs);
			return -1;
		}
		CPU_FREE(cs);
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
