// SPDX-License-Identifier: MIT
/*
 * The slab layer: caches, slabs carved from mmap'd runs of pages, the
 * per-node partial lists under a lock, the lock-free remote free onto a
 * slab's own freelist (cmpxchg128 of {freelist, counters}), freezing a
 * slab for a per-CPU owner and thawing it; and the cache's lifecycle,
 * statistics, mode report and audit.  doc/slab.md describes it all.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include "internal.h"

#ifdef AK_SLAB_STRESS
#include <sched.h>

void slab_stress_window(void)
{
	static __thread unsigned int n;
	unsigned int i;

	if (++n % 8 == 0) {
		sched_yield();
		return;
	}
	for (i = 0; i < 64; i++)
		ak_barrier();
}
#endif

/* ---- reports ---- */

static void (*report_fn)(const char *msg, void *arg);
static void *report_arg;

void ak_slab_set_report(void (*fn)(const char *msg, void *arg), void *arg)
{
	report_arg = arg;
	__atomic_store_n(&report_fn, fn, __ATOMIC_RELEASE);
}

void slab_report(struct ak_kmem_cache *s, const char *fmt, ...)
{
	void (*fn)(const char *, void *) =
		__atomic_load_n(&report_fn, __ATOMIC_ACQUIRE);
	char msg[512];
	int n;
	va_list ap;

	n = snprintf(msg, sizeof(msg), "atomkit slab %s: ", s ? s->name : "-");
	if (n < 0)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	if (fn)
		fn(msg, report_arg);
	else
		fprintf(stderr, "%s\n", msg);
}

/* ---- names ---- */

/* The designs, one file each: the only place that picks one. */
static const struct slab_design *const designs[AK_SLAB_NR_FASTPATHS] = {
	[AK_SLAB_SLUB_TID] = &slab_slub_tid,
	[AK_SLAB_SLUB_LOCAL] = &slab_slub_local,
	[AK_SLAB_RSEQ_LIST] = &slab_rseq_list,
	[AK_SLAB_ARRAY] = &slab_array,
	[AK_SLAB_SHEAF] = &slab_sheaf,
	[AK_SLAB_LOCKED] = &slab_locked,
};

const char *ak_slab_fastpath_name(enum ak_slab_fastpath fp)
{
	return (unsigned int)fp < AK_SLAB_NR_FASTPATHS ? designs[fp]->name :
							NULL;
}

int ak_slab_fastpath_parse(const char *name)
{
	int i;

	for (i = 0; i < AK_SLAB_NR_FASTPATHS; i++)
		if (!strcmp(name, designs[i]->name))
			return i;
	return -1;
}

static const char *const stat_names[AK_SLAB_NR_STATS] = {
	[AK_SLAB_ALLOC_FAST] = "alloc_fast",
	[AK_SLAB_FREE_FAST] = "free_fast",
	[AK_SLAB_ALLOC_SLOW] = "alloc_slow",
	[AK_SLAB_FREE_SLOW] = "free_slow",
	[AK_SLAB_FREE_REMOTE] = "free_remote",
	[AK_SLAB_ALLOC_OWN_SLAB] = "alloc_own_slab",
	[AK_SLAB_ALLOC_PARTIAL] = "alloc_partial",
	[AK_SLAB_ALLOC_NEW_SLAB] = "alloc_new_slab",
	[AK_SLAB_DEACTIVATE] = "deactivate",
	[AK_SLAB_ADD_PARTIAL] = "add_partial",
	[AK_SLAB_FAST_RETRY] = "fast_retry",
	[AK_SLAB_SLAB_RETRY] = "slab_retry",
	[AK_SLAB_REFILL] = "refill",
	[AK_SLAB_REFILL_OBJS] = "refill_objs",
	[AK_SLAB_FLUSH] = "flush",
	[AK_SLAB_FLUSH_OBJS] = "flush_objs",
	[AK_SLAB_PCPU_BUSY] = "pcpu_busy",
	[AK_SLAB_SHEAF_SWAP] = "sheaf_swap",
	[AK_SLAB_BARN_GET_FULL] = "barn_get_full",
	[AK_SLAB_BARN_PUT_FULL] = "barn_put_full",
	[AK_SLAB_BARN_GET_EMPTY] = "barn_get_empty",
	[AK_SLAB_BARN_PUT_EMPTY] = "barn_put_empty",
	[AK_SLAB_BARN_STEAL] = "barn_steal",
	[AK_SLAB_SHEAF_NEW] = "sheaf_new",
	[AK_SLAB_SHEAF_DROP] = "sheaf_drop",
	[AK_SLAB_BULK_ALLOC] = "bulk_alloc",
	[AK_SLAB_BULK_ALLOC_OBJS] = "bulk_alloc_objs",
	[AK_SLAB_BULK_ALLOC_CPU] = "bulk_alloc_cpu",
	[AK_SLAB_BULK_ALLOC_PARTIAL] = "bulk_alloc_partial",
	[AK_SLAB_BULK_ALLOC_NEW] = "bulk_alloc_new",
	[AK_SLAB_BULK_ALLOC_CPU_PARTIAL] = "bulk_alloc_cpu_partial",
	[AK_SLAB_BULK_ALLOC_FAIL] = "bulk_alloc_fail",
	[AK_SLAB_BULK_FREE] = "bulk_free",
	[AK_SLAB_BULK_FREE_OBJS] = "bulk_free_objs",
	[AK_SLAB_BULK_FREE_CPU] = "bulk_free_cpu",
	[AK_SLAB_BULK_FREE_SLAB] = "bulk_free_slab",
	[AK_SLAB_OOM] = "oom",
	[AK_SLAB_CPU_PARTIAL_ALLOC] = "cpu_partial_alloc",
	[AK_SLAB_CPU_PARTIAL_FREE] = "cpu_partial_free",
	[AK_SLAB_CPU_PARTIAL_NODE] = "cpu_partial_node",
	[AK_SLAB_CPU_PARTIAL_DRAIN] = "cpu_partial_drain",
	[AK_SLAB_DEBUG_DOUBLE_FREE] = "debug_double_free",
	[AK_SLAB_DEBUG_BAD_FREE] = "debug_bad_free",
	[AK_SLAB_DEBUG_REDZONE] = "debug_redzone",
	[AK_SLAB_DEBUG_POISON] = "debug_poison",
};

const char *ak_slab_stat_name(enum ak_slab_stat i)
{
	return (unsigned int)i < AK_SLAB_NR_STATS ? stat_names[i] : NULL;
}

/* ---- NUMA nodes: which node the calling CPU is on ---- */

static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static unsigned int topo_nr_nodes = 1, topo_nr_cpus;
static unsigned char *topo_cpu_node;

static void topo_parse(FILE *f, unsigned int node)
{
	unsigned int a, b, i;
	int c;

	while (fscanf(f, "%u", &a) == 1) {
		b = a;
		c = fgetc(f);
		if (c == '-' && fscanf(f, "%u", &b) == 1)
			c = fgetc(f);
		for (i = a; i <= b && i < topo_nr_cpus; i++)
			topo_cpu_node[i] = (unsigned char)node;
		if (c != ',')
			break;
	}
}

static void topo_init(void)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int node;
	char path[96];
	FILE *f;

	topo_nr_cpus = ak_nr_cpus();
	if (conf > 0 && (unsigned long)conf > topo_nr_cpus)
		topo_nr_cpus = (unsigned int)conf;
	topo_cpu_node = ak_page_meta_calloc(topo_nr_cpus, 1);
	if (!topo_cpu_node)
		return;
	for (node = 0; node < 64; node++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%u/cpulist", node);
		f = fopen(path, "r");
		if (!f)
			continue;
		topo_parse(f, node);
		fclose(f);
		if (node + 1 > topo_nr_nodes)
			topo_nr_nodes = node + 1;
	}
}

unsigned int slab_node_of_cpu(struct ak_kmem_cache *s, unsigned int cpu)
{
	unsigned int n;

	if (s->nr_nodes == 1 || !topo_cpu_node || cpu >= topo_nr_cpus)
		return 0;
	n = topo_cpu_node[cpu];
	return n < s->nr_nodes ? n : 0;
}

unsigned int slab_this_node(struct ak_kmem_cache *s)
{
	int cpu;

	if (s->nr_nodes == 1)
		return 0;
	cpu = sched_getcpu();
	return cpu < 0 ? 0 : slab_node_of_cpu(s, (unsigned int)cpu);
}

/* ---- the registry: slab base -> slab, for validation and kfree ---- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *reg_tab;		/* 0 empty, 1 deleted */
static size_t reg_size, reg_used;	/* used counts deleted ones too */

static size_t reg_hash(uintptr_t base)
{
	uint64_t h = (uint64_t)base >> 12;

	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20);
}

static bool reg_grow(void)
{
	size_t nsize = reg_size ? reg_size * 2 : 1024, i, j;
	uintptr_t *nt = ak_page_meta_calloc(nsize, sizeof(*nt));

	if (!nt)
		return false;
	for (i = 0; i < reg_size; i++) {
		if (reg_tab[i] <= 1)
			continue;
		for (j = reg_hash(reg_tab[i]) & (nsize - 1); nt[j];
		     j = (j + 1) & (nsize - 1))
			;
		nt[j] = reg_tab[i];
	}
	ak_page_meta_free(reg_tab);
	reg_tab = nt;
	reg_size = nsize;
	reg_used = 0;
	for (i = 0; i < nsize; i++)
		reg_used += nt[i] != 0;
	return true;
}

static bool reg_add(uintptr_t base)
{
	size_t j;

	pthread_mutex_lock(&reg_lock);
	if ((reg_used + 1) * 2 > reg_size && !reg_grow()) {
		pthread_mutex_unlock(&reg_lock);
		return false;
	}
	for (j = reg_hash(base) & (reg_size - 1); reg_tab[j] > 1;
	     j = (j + 1) & (reg_size - 1))
		;
	if (!reg_tab[j])
		reg_used++;
	reg_tab[j] = base;
	pthread_mutex_unlock(&reg_lock);
	return true;
}

void slab_registry_del(struct ak_slab *sl)
{
	uintptr_t base = (uintptr_t)sl;
	size_t j;

	pthread_mutex_lock(&reg_lock);
	for (j = reg_size ? reg_hash(base) & (reg_size - 1) : 0;
	     reg_size && reg_tab[j]; j = (j + 1) & (reg_size - 1))
		if (reg_tab[j] == base) {
			reg_tab[j] = 1;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
}

static bool reg_has(uintptr_t base)
{
	bool found = false;
	size_t j;

	pthread_mutex_lock(&reg_lock);
	for (j = reg_size ? reg_hash(base) & (reg_size - 1) : 0;
	     reg_size && reg_tab[j]; j = (j + 1) & (reg_size - 1))
		if (reg_tab[j] == base) {
			found = true;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	return found;
}

struct ak_slab *slab_registry_find(struct ak_kmem_cache *s, const void *p)
{
	uintptr_t mask = s ? s->fast.slab_mask :
			 ~(uintptr_t)(AK_SLAB_DEFAULT_SIZE - 1);
	struct ak_slab *sl = (struct ak_slab *)((uintptr_t)p & mask);

	if (!p || !reg_has((uintptr_t)sl))
		return NULL;
	if (s && sl->cache != s)
		return NULL;
	return sl;
}

/* ---- slabs ---- */

/*
 * Fault injection, as the kernel's failslab: AK_SLAB_FAIL_MAPS=N in the
 * environment lets the process hold N slabs (all caches together: each
 * slab given back to a page heap is one more it may map) and refuses
 * every one beyond, as an mmap refused for want of memory would be.  For
 * testing what callers do when allocation fails, and that they recover.
 */
static long fail_maps_left = -1;	/* -1: off */
static pthread_once_t fail_maps_once = PTHREAD_ONCE_INIT;

static void fail_maps_init(void)
{
	const char *env = getenv("AK_SLAB_FAIL_MAPS");
	char *end;
	long n;

	if (!env || !*env)
		return;
	n = strtol(env, &end, 10);
	if (!*end && n >= 0)
		fail_maps_left = n;
}

static bool slab_map_refused(void)
{
	long left;

	pthread_once(&fail_maps_once, fail_maps_init);
	left = __atomic_load_n(&fail_maps_left, __ATOMIC_RELAXED);
	while (left > 0)
		if (__atomic_compare_exchange_n(&fail_maps_left, &left,
						left - 1, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return false;
	return left == 0;
}

/*
 * Whether the page source takes empty slabs back for reuse (a heap's
 * AK_PAGE_REUSE): read as each cache is made, once the source is fixed
 * (its first metadata block is the cache's), so it never changes after.
 */
static bool pages;

static void *slab_map(size_t size)
{
	char *base;

	if (slab_map_refused())
		return NULL;
	base = ak_page_map(size);
	/* ASan's shadow outlives munmap: a slab of an old cache may lie here */
	if (base)
		slab_asan_unpoison(base, size);
	return base;
}

static void slab_unmap(void *base, size_t size)
{
	/* leave no poisoned shadow behind for the next mapping */
	slab_asan_unpoison(base, size);
	ak_page_unmap(base, size);
}

/*
 * The slow paths' one shared count, striped by thread so that refills
 * on different CPUs do not bounce one line.
 */
static struct {
	unsigned long n;
} __attribute__((aligned(CACHELINE))) refills[16];

static __thread char refill_stripe;

static void slab_count_refill(void)
{
	unsigned int i = (unsigned int)((uintptr_t)&refill_stripe >> 12) % 16;

	__atomic_fetch_add(&refills[i].n, 1, __ATOMIC_RELAXED);
}

size_t slab_refill_count(void)
{
	size_t t = 0;
	unsigned int i;

	for (i = 0; i < 16; i++)
		t += __atomic_load_n(&refills[i].n, __ATOMIC_RELAXED);
	return t;
}

/*
 * A new slab, every object on c (fp space, in address order); fc is left
 * for the caller to set before anyone else can see the slab's objects.
 */
static struct ak_slab *slab_new(struct ak_kmem_cache *s, unsigned int node,
				struct chain *c)
{
	struct ak_slab *sl;
	char *base, *obj, *prev = NULL;
	unsigned int i;

	base = slab_map(s->slab_size);
	if (!base) {
		slab_stat(s, AK_SLAB_OOM, 1);
		errno = ENOMEM;
		return NULL;
	}
	if (!reg_add((uintptr_t)base)) {
		slab_unmap(base, s->slab_size);
		slab_stat(s, AK_SLAB_OOM, 1);
		errno = ENOMEM;
		return NULL;
	}
	sl = (struct ak_slab *)base;
	/* a page heap's slab may be memory used before */
	memset(sl, 0, sizeof(*sl));
	sl->cache = s;
	sl->magic = SLAB_MAGIC;
	sl->first = base + s->first_off;
	sl->objects = s->objects;
	sl->node = node;
	sl->list_id = 0;
	c->head = NULL;
	for (i = 0; i < s->objects; i++) {
		obj = sl->first + (size_t)i * s->stride + s->obj_off;
		if (s->flags & AK_SLAB_DEBUG)
			slab_debug_init_object(s, obj);
		else
			slab_asan_free(s, obj);
		fp_set(obj_to_fp(s, obj), NULL);
		if (prev)
			fp_set(prev, obj_to_fp(s, obj));
		else
			c->head = obj_to_fp(s, obj);
		prev = obj_to_fp(s, obj);
	}
	c->tail = prev;
	c->n = s->objects;
	/* what no object covers: the gap after the header, the tail */
	slab_asan_poison(base + SLAB_HDR_SIZE, s->first_off - SLAB_HDR_SIZE);
	slab_asan_poison(sl->first + (size_t)s->objects * s->stride,
			 s->slab_size - s->first_off -
			 (size_t)s->objects * s->stride);
	pthread_mutex_lock(&s->slabs_lock);
	sl->all_next = s->all_slabs;
	if (sl->all_next)
		sl->all_next->all_prev = sl;
	s->all_slabs = sl;
	s->nr_slabs++;
	pthread_mutex_unlock(&s->slabs_lock);
	slab_stat(s, AK_SLAB_ALLOC_NEW_SLAB, 1);
	return sl;
}

static void slab_set_fc(struct ak_slab *sl, void *fl, uint64_t counters)
{
	__atomic_store_n(&sl->fc.freelist, fl, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->fc.counters, counters, __ATOMIC_RELEASE);
}

/* Under l->lock, l being slab_list_of(s, sl). */
static void add_partial(struct ak_kmem_cache *s, struct slab_list *l,
			struct ak_slab *sl)
{
	sl->prev = NULL;
	sl->next = l->partial;
	if (l->partial)
		l->partial->prev = sl;
	l->partial = sl;
	sl->on_partial = 1;
	l->nr_partial++;
	slab_stat(s, AK_SLAB_ADD_PARTIAL, 1);
}

static void del_partial(struct slab_list *l, struct ak_slab *sl)
{
	if (sl->prev)
		sl->prev->next = sl->next;
	else
		l->partial = sl->next;
	if (sl->next)
		sl->next->prev = sl->prev;
	sl->next = sl->prev = NULL;
	sl->on_partial = 0;
	l->nr_partial--;
}

/*
 * Under l->lock (slab_list_of(s, sl)): take sl off the list if it is
 * empty, nobody owns it, and the list keeps enough others.  Every object
 * of an empty slab is free and a listed slab's objects leave it only
 * under this lock, so once off the list nobody can reach it.
 */
static bool slab_take_empty(struct ak_kmem_cache *s, struct slab_list *l,
			    struct ak_slab *sl)
{
	union slab_fc f;

	if (!pages || !sl->on_partial || l->nr_partial <= s->min_partial)
		return false;
	f = slab_fc_read(sl);
	if (CNT_OWNER(f.counters) || CNT_INUSE(f.counters))
		return false;
	del_partial(l, sl);
	return true;
}

/* An empty slab that slab_take_empty() took, back to the page heap. */
static void slab_release(struct ak_kmem_cache *s, struct slab_list *l,
			 struct ak_slab *sl)
{
	pthread_mutex_lock(&s->slabs_lock);
	if (sl->all_prev)
		sl->all_prev->all_next = sl->all_next;
	else
		s->all_slabs = sl->all_next;
	if (sl->all_next)
		sl->all_next->all_prev = sl->all_prev;
	s->nr_slabs--;
	pthread_mutex_unlock(&s->slabs_lock);
	__atomic_fetch_sub(&l->nr_slabs, 1, __ATOMIC_RELAXED);
	slab_registry_del(sl);
	sl->magic = 0;
	slab_unmap(sl, s->slab_size);
	if (__atomic_load_n(&fail_maps_left, __ATOMIC_RELAXED) >= 0)
		__atomic_fetch_add(&fail_maps_left, 1, __ATOMIC_RELAXED);
}

/*
 * n objects of sl, linked head..tail, back onto the slab's freelist with
 * one cmpxchg128 of {freelist, counters}.  A slab nobody owns that was
 * full (freelist NULL) goes onto its partial list (slab_list_of()): that
 * case takes the list's lock before the cmpxchg, so that a slab is never
 * put on the list twice nor after someone froze it.  With per-CPU
 * partial slabs it goes instead onto this slot's partial list, without
 * the lock: the cmpxchg that ended its being full is the only one that
 * sees it full and nobody's, so no one else can put it anywhere, and no
 * one can take from it while it is on no list.
 */
void slab_free_chain(struct ak_kmem_cache *s, struct ak_slab *sl, void *head,
		     void *tail, unsigned long n)
{
	struct slab_list *l = slab_list_of(s, sl);
	bool cpu_partial = READ_ONCE(s->cpu_partial) != 0;
	union slab_fc old, new_;
	bool locked = false, need, empty;

	for (;;) {
		old = slab_fc_read(sl);
		need = !CNT_OWNER(old.counters) && !old.freelist;
		if (need && !locked && !cpu_partial) {
			slab_lock(&l->lock);
			locked = true;
			continue;
		}
		fp_set(tail, old.freelist);
		new_.freelist = head;
		new_.counters = old.counters - n;	/* inuse -= n */
		if (slab_fc_cmpxchg(sl, old, new_))
			break;
		slab_stat(s, AK_SLAB_SLAB_RETRY, 1);
	}
	if (need && cpu_partial) {
		/* as the kernel's: even if this free emptied it */
		slab_stat(s, AK_SLAB_FREE_REMOTE, n);
		s->ops->put_partial(s, sl);
		return;
	}
	if (need)
		add_partial(s, l, sl);
	empty = false;
	if (pages && !new_.counters) {	/* inuse 0, owner none */
		if (!locked) {
			slab_lock(&l->lock);
			locked = true;
		}
		empty = slab_take_empty(s, l, sl);
	}
	if (locked)
		slab_unlock(&l->lock);
	slab_stat(s, AK_SLAB_FREE_REMOTE, n);
	if (empty)
		slab_release(s, l, sl);
}

/*
 * Link fps[0..n) into one NULL-terminated chain per slab, in windows of
 * 64, and hand each chain to fn: one cmpxchg128 (or one splice) per slab
 * rather than one per object.
 */
void slab_group_chains(struct ak_kmem_cache *s, void **fps, size_t n,
		       void (*fn)(struct ak_kmem_cache *s, struct ak_slab *sl,
				  struct chain *c, void *arg),
		       void *arg)
{
	size_t base, i, j;

	for (base = 0; base < n; base += 64) {
		size_t m = n - base < 64 ? n - base : 64;
		uint64_t done = 0;

		for (i = 0; i < m; i++) {
			struct ak_slab *sl;
			struct chain c;

			if (done & (1ull << i))
				continue;
			sl = fp_slab(s, fps[base + i]);
			c.head = c.tail = fps[base + i];
			c.n = 1;
			for (j = i + 1; j < m; j++) {
				if ((done & (1ull << j)) ||
				    fp_slab(s, fps[base + j]) != sl)
					continue;
				done |= 1ull << j;
				fp_set(c.tail, fps[base + j]);
				c.tail = fps[base + j];
				c.n++;
			}
			fp_set(c.tail, NULL);
			fn(s, sl, &c, arg);
		}
	}
}

static void free_one_chain(struct ak_kmem_cache *s, struct ak_slab *sl,
			   struct chain *c, void *arg)
{
	(void)arg;
	slab_free_chain(s, sl, c->head, c->tail, c->n);
}

/* fps[0..n) back to their slabs: one cmpxchg128 per slab. */
void slab_free_fps(struct ak_kmem_cache *s, void **fps, size_t n)
{
	slab_group_chains(s, fps, n, free_one_chain, NULL);
}

void slab_free_chain_any(struct ak_kmem_cache *s, void *head)
{
	void *buf[64];
	size_t k = 0;

	while (head) {
		buf[k++] = head;
		head = fp_next(head);
		if (k == 64) {
			slab_free_fps(s, buf, k);
			k = 0;
		}
	}
	slab_free_fps(s, buf, k);
}

/*
 * Under n->lock: slabs off n while the free objects taken, avail so far,
 * are at most more / 2; linked through cpu_next.
 */
static unsigned int take_more(struct ak_kmem_cache *s, struct slab_list *n,
			      unsigned int more, unsigned long avail,
			      struct ak_slab **extra)
{
	struct ak_slab *sl, **link = extra;
	unsigned int k = 0;

	while (avail <= more / 2 && (sl = n->partial)) {
		del_partial(n, sl);
		avail += sl->objects -
			 CNT_INUSE(slab_fc_read(sl).counters);
		__atomic_store_n(link, sl, __ATOMIC_RELAXED);
		link = &sl->cpu_next;
		k++;
	}
	__atomic_store_n(link, NULL, __ATOMIC_RELAXED);
	slab_stat(s, AK_SLAB_CPU_PARTIAL_NODE, k);
	return k;
}

struct ak_slab *slab_get_frozen(struct ak_kmem_cache *s, unsigned long owner,
				struct chain *c, bool *fresh, unsigned int more,
				struct ak_slab **extra)
{
	unsigned int nid = slab_this_node(s);
	struct slab_list *n = &s->nodes[nid].list;
	union slab_fc old, new_;
	struct ak_slab *sl;

	*extra = NULL;
	slab_count_refill();
	if (READ_ONCE(n->partial)) {
		slab_lock(&n->lock);
		while ((sl = n->partial)) {
			del_partial(n, sl);
			new_.freelist = NULL;
			new_.counters = CNT_MAKE(sl->objects, owner);
			for (;;) {
				old = slab_fc_read(sl);
				if (slab_fc_cmpxchg(sl, old, new_))
					break;
				slab_stat(s, AK_SLAB_SLAB_RETRY, 1);
			}
			if (!old.freelist)	/* cannot happen: partial has frees */
				continue;
			if (more)
				take_more(s, n, more, sl->objects -
					  CNT_INUSE(old.counters), extra);
			slab_unlock(&n->lock);
			c->head = old.freelist;
			c->tail = NULL;
			c->n = sl->objects - CNT_INUSE(old.counters);
			slab_stat(s, AK_SLAB_ALLOC_PARTIAL, 1);
			*fresh = false;
			return sl;
		}
		slab_unlock(&n->lock);
	}
	sl = slab_new(s, nid, c);
	if (!sl)
		return NULL;
	__atomic_fetch_add(&n->nr_slabs, 1, __ATOMIC_RELAXED);
	slab_set_fc(sl, NULL, CNT_MAKE(sl->objects, owner));
	*fresh = true;
	return sl;
}

bool slab_take_frozen(struct ak_kmem_cache *s, struct ak_slab *sl,
		      unsigned long owner, struct chain *c)
{
	union slab_fc old, new_;

	new_.freelist = NULL;
	new_.counters = CNT_MAKE(sl->objects, owner);
	for (;;) {
		old = slab_fc_read(sl);
		if (CNT_OWNER(old.counters) != owner || !old.freelist)
			return false;
		if (slab_fc_cmpxchg(sl, old, new_))
			break;
		slab_stat(s, AK_SLAB_SLAB_RETRY, 1);
	}
	c->head = old.freelist;
	c->tail = NULL;
	c->n = sl->objects - CNT_INUSE(old.counters);
	slab_stat(s, AK_SLAB_ALLOC_OWN_SLAB, 1);
	return true;
}

void slab_unfreeze(struct ak_kmem_cache *s, struct ak_slab *sl,
		   unsigned long owner)
{
	struct slab_list *n = slab_list_of(s, sl);
	union slab_fc old, new_;
	bool locked = false, empty = false;

	for (;;) {
		old = slab_fc_read(sl);
		if (CNT_OWNER(old.counters) != owner)
			break;
		if (old.freelist && !locked) {
			slab_lock(&n->lock);
			locked = true;
			continue;
		}
		new_.freelist = old.freelist;
		new_.counters = CNT_MAKE(CNT_INUSE(old.counters), 0);
		if (slab_fc_cmpxchg(sl, old, new_)) {
			/* a full slab stays off the lists until a free */
			if (old.freelist) {
				add_partial(s, n, sl);
				empty = slab_take_empty(s, n, sl);
			}
			slab_stat(s, AK_SLAB_DEACTIVATE, 1);
			break;
		}
		slab_stat(s, AK_SLAB_SLAB_RETRY, 1);
	}
	if (locked)
		slab_unlock(&n->lock);
	if (empty)
		slab_release(s, n, sl);
}

bool slab_freeze(struct ak_kmem_cache *s, struct ak_slab *sl,
		 unsigned long owner, struct chain *c)
{
	union slab_fc old, new_;

	new_.freelist = NULL;
	new_.counters = CNT_MAKE(sl->objects, owner);
	for (;;) {
		old = slab_fc_read(sl);
		if (!old.freelist)	/* cannot happen: it was made partial */
			return false;
		if (slab_fc_cmpxchg(sl, old, new_))
			break;
		slab_stat(s, AK_SLAB_SLAB_RETRY, 1);
	}
	c->head = old.freelist;
	c->tail = NULL;
	c->n = sl->objects - CNT_INUSE(old.counters);
	return true;
}

/*
 * The slabs are nobody's and on no list: no one else can put them on one
 * or take objects from them, and remote frees only push.  A slab that
 * empties meanwhile stays (slab_take_empty() finds it on no list) until
 * here, where the lock of the list it joins is held.
 */
void slab_unfreeze_partials(struct ak_kmem_cache *s, struct ak_slab *list)
{
	struct ak_slab *sl, *discard = NULL;
	struct slab_list *l = NULL, *nl;

	while ((sl = list)) {
		list = __atomic_load_n(&sl->cpu_next, __ATOMIC_RELAXED);
		nl = slab_list_of(s, sl);
		if (nl != l) {
			if (l)
				slab_unlock(&l->lock);
			l = nl;
			slab_lock(&l->lock);
		}
		add_partial(s, l, sl);
		if (slab_take_empty(s, l, sl)) {
			__atomic_store_n(&sl->cpu_next, discard,
					 __ATOMIC_RELAXED);
			discard = sl;
		}
	}
	if (l)
		slab_unlock(&l->lock);
	while ((sl = discard)) {
		discard = sl->cpu_next;
		slab_release(s, slab_list_of(s, sl), sl);
	}
}

/*
 * The kernel's set_cpu_partial(): fewer objects kept for larger ones
 * (the kernel's s->size is our stride).
 */
unsigned int slab_default_cpu_partial(struct ak_kmem_cache *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (s->stride >= page)
		return 6;
	if (s->stride >= 1024)
		return 24;
	if (s->stride >= 256)
		return 52;
	return 120;
}

/*
 * Since 5.16 the kernel turns cpu_partial into slabs, assuming those on
 * the list half free (slub_set_cpu_partial()).  A slab here holds several
 * times the kernel's objects of the same size (the kernel's small-object
 * slabs are a page or two) and goes on the list with one free object, so
 * that would keep a single slab for most sizes.  So the list is bounded
 * as from 3.x to 5.15, by the free objects its slabs had when put there.
 */
int ak_kmem_cache_set_cpu_partial(struct ak_kmem_cache *s,
				  unsigned int objects)
{
	if (objects > (1u << 24) || (objects && !s->ops->put_partial)) {
		errno = EINVAL;
		return -1;
	}
	WRITE_ONCE(s->cpu_partial, objects);
	return 0;
}

/*
 * Up to want objects from the slabs of partial list l, in one hold of its
 * lock.  Objects leave a listed slab only under this lock; remote frees
 * only push.  So an unchanged head means the walked objects are still
 * the slab's.
 */
static size_t take_partial(struct ak_kmem_cache *s, struct slab_list *l,
			   size_t want, void **fps)
{
	union slab_fc old, new_;
	struct ak_slab *sl;
	size_t got = 0, k;
	void *p;

	if (!READ_ONCE(l->partial))
		return 0;
	slab_lock(&l->lock);
	while (got < want && (sl = l->partial)) {
		for (;;) {
			old = slab_fc_read(sl);
			for (k = 0, p = old.freelist; p && got + k < want;
			     k++, p = fp_next(p))
				fps[got + k] = p;
			new_.freelist = p;
			new_.counters = old.counters + k;
			if (slab_fc_cmpxchg(sl, old, new_))
				break;
			slab_stat(s, AK_SLAB_SLAB_RETRY, 1);
		}
		got += k;
		if (!p)
			del_partial(l, sl);
		slab_stat(s, AK_SLAB_ALLOC_PARTIAL, 1);
	}
	slab_unlock(&l->lock);
	return got;
}

/* Up to want objects from new slabs made for list own (id: its slot + 1). */
static size_t take_new(struct ak_kmem_cache *s, unsigned int nid,
		       struct slab_list *own, unsigned int id, size_t want,
		       void **fps)
{
	struct ak_slab *sl;
	struct chain c;
	size_t got = 0, k;
	void *p;

	while (got < want) {
		sl = slab_new(s, nid, &c);
		if (!sl)
			break;
		sl->list_id = id;
		__atomic_fetch_add(&own->nr_slabs, 1, __ATOMIC_RELAXED);
		for (k = 0, p = c.head; p && got < want; k++, p = fp_next(p))
			fps[got++] = p;
		slab_set_fc(sl, p, CNT_MAKE(k, 0));
		if (p) {
			slab_lock(&own->lock);
			add_partial(s, own, sl);
			slab_unlock(&own->lock);
		}
	}
	return got;
}

static struct slab_list *own_list(struct ak_kmem_cache *s, unsigned int nid,
				  unsigned int *slot)
{
	*slot = 0;
	if (!s->home_lists)
		return &s->nodes[nid].list;
	*slot = ak_percpu_this_slot(s->mode) % s->nr_home;
	return &s->home_lists[*slot];
}

bool slab_owns_slabs(struct ak_kmem_cache *s)
{
	unsigned int slot;

	return __atomic_load_n(&own_list(s, 0, &slot)->nr_slabs,
			       __ATOMIC_RELAXED);
}

/*
 * Caches with a partial list per slot (array, sheaf, locked) draw from
 * this slot's first: slabs this slot made, whose objects come back to
 * them, so their lines are in this CPU's cache and no other CPU takes
 * the same lock.  Then from the other slots' lists (a slot's objects may
 * have been freed by another thread, or the thread moved), and only then
 * from new slabs; but a slot with no slab of its own yet makes one
 * first: drawing on another slot's slabs would tie it to them for good
 * (its frees go back there, and both slots take that list's lock on
 * every refill).  The others: their node's list, then new slabs.
 */
size_t slab_take_objects(struct ak_kmem_cache *s, size_t want, void **fps,
			 unsigned int from, size_t *from_new)
{
	unsigned int nid = slab_this_node(s), slot, i, id;
	struct slab_list *own = own_list(s, nid, &slot);
	size_t got = 0, fresh = 0, k;

	slab_count_refill();
	id = s->home_lists ? slot + 1 : 0;
	if (from & SLAB_FROM_OWN)
		got = take_partial(s, own, want, fps);
	if (s->home_lists && (from & SLAB_FROM_NEW) && got < want &&
	    !__atomic_load_n(&own->nr_slabs, __ATOMIC_RELAXED)) {
		fresh = take_new(s, nid, own, id, want - got, fps + got);
		got += fresh;
	}
	for (i = 1; s->home_lists && (from & SLAB_FROM_OTHERS) && got < want &&
		    i < s->nr_home; i++)
		got += take_partial(s, &s->home_lists[(slot + i) % s->nr_home],
				    want - got, fps + got);
	if ((from & SLAB_FROM_NEW) && got < want) {
		k = take_new(s, nid, own, id, want - got, fps + got);
		fresh += k;
		got += k;
	}
	*from_new = fresh;
	return got;
}

/* ---- caches ---- */

void slab_lock_slow(slab_lock_t *l)
{
	unsigned int spins = 0;

	do {
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED)) {
			if (++spins < SLAB_LOCK_SPINS) {
				ak_cpu_relax();
			} else {
				spins = 0;
				sched_yield();
			}
		}
	} while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE));
}

void slab_fork_registry(bool take)
{
	if (take)
		pthread_mutex_lock(&reg_lock);
	else
		pthread_mutex_unlock(&reg_lock);
}

/* The design's locks, then the partial lists', then the slab list's. */
void slab_fork_cache(struct ak_kmem_cache *s, bool take)
{
	unsigned int i;

	if (take) {
		if (s->ops->fork)
			s->ops->fork(s, true);
		for (i = 0; i < s->nr_home && s->home_lists; i++)
			slab_lock(&s->home_lists[i].lock);
		for (i = 0; i < s->nr_nodes; i++)
			slab_lock(&s->nodes[i].list.lock);
		pthread_mutex_lock(&s->slabs_lock);
		return;
	}
	pthread_mutex_unlock(&s->slabs_lock);
	for (i = s->nr_nodes; i-- > 0;)
		slab_unlock(&s->nodes[i].list.lock);
	for (i = s->nr_home; s->home_lists && i-- > 0;)
		slab_unlock(&s->home_lists[i].lock);
	if (s->ops->fork)
		s->ops->fork(s, false);
}

static bool is_pow2(size_t x)
{
	return x && !(x & (x - 1));
}

/* What the slab layer holds; the design's part is its fini's. */
static void cache_free(struct ak_kmem_cache *s)
{
	if (s->stats)
		ak_percpu_free(s->stats);
	ak_page_meta_free(s->nodes);
	ak_page_meta_free(s->home_lists);
	pthread_mutex_destroy(&s->slabs_lock);
	ak_page_meta_free(s);
}

struct ak_kmem_cache *
ak_kmem_cache_create_args(const char *name, size_t size, size_t align,
			  unsigned int flags, enum ak_slab_fastpath fastpath,
			  const struct ak_kmem_cache_args *args)
{
	static const struct ak_kmem_cache_args none;
	const char *env = getenv("AK_SLAB_DEBUG");
	struct ak_kmem_cache *s;
	size_t slab_size, stride, obj_off, fp_off, first, objects;
	void *mem;

	if (!args)
		args = &none;
	if (!size || size > (args->slab_size ? SLAB_MAX_OBJECT :
			     AK_KMALLOC_MAX_SIZE) ||
	    (align && (!is_pow2(align) || align > AK_SLAB_MAX_ALIGN)) ||
	    (flags & ~(AK_SLAB_DEBUG | AK_SLAB_STATS | AK_SLAB_HWCACHE_ALIGN)) ||
	    (unsigned int)fastpath >= AK_SLAB_NR_FASTPATHS) {
		errno = EINVAL;
		return NULL;
	}
	slab_size = args->slab_size ? args->slab_size : AK_SLAB_DEFAULT_SIZE;
	/*
	 * A slab is mapped on its own, aligned to its size: no smaller than
	 * a page (64 KiB on many arm64 and ppc64 kernels), as the kernel's.
	 */
	if (!is_pow2(slab_size) || slab_size < 4096 ||
	    slab_size > SLAB_MAX_SLAB_SIZE ||
	    slab_size < (size_t)sysconf(_SC_PAGESIZE)) {
		errno = EINVAL;
		return NULL;
	}
	if (env && *env && strcmp(env, "0"))
		flags |= AK_SLAB_DEBUG;
	if (align < 8)
		align = 8;
	if ((flags & AK_SLAB_HWCACHE_ALIGN) && align < CACHELINE)
		align = CACHELINE;

	/*
	 * Non-debug: [object, free pointer at offset 0].  Debug: [left red
	 * zone, state word][object][right red zone][free pointer].
	 */
	if (flags & AK_SLAB_DEBUG) {
		obj_off = align > 16 ? align : 16;
		fp_off = SLAB_ALIGN(size, 8) + 8;
		stride = SLAB_ALIGN(obj_off + fp_off + 8, align);
	} else {
		obj_off = 0;
		fp_off = 0;
		stride = SLAB_ALIGN(size < 8 ? 8 : size, align);
	}
	first = SLAB_ALIGN((size_t)SLAB_HDR_SIZE, align);
	if (first + stride > slab_size) {
		errno = EINVAL;
		return NULL;
	}
	objects = (slab_size - first) / stride;
	if (args->max_objects && objects > args->max_objects)
		objects = args->max_objects;

	mem = ak_page_meta_alloc(sizeof(*s), CACHELINE);
	if (!mem) {
		errno = ENOMEM;
		return NULL;
	}
	pages = ak_page_source()->flags & AK_PAGE_REUSE;
	s = mem;
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "cache");
	pthread_mutex_init(&s->slabs_lock, NULL);
	s->ops = designs[fastpath];
	s->fastpath = fastpath;
	s->flags = flags;
	s->object_size = (unsigned int)size;
	s->align = (unsigned int)align;
	s->stride = (unsigned int)stride;
	s->obj_off = (unsigned int)obj_off;
	s->fp_off = (unsigned int)fp_off;
	s->first_off = (unsigned int)first;
	s->slab_size = (unsigned int)slab_size;
	s->fast.slab_mask = ~(uintptr_t)(slab_size - 1);
	s->objects = (unsigned int)objects;
	/* about 512 KiB of empty slabs per list, at least one */
	s->min_partial = slab_size >= (512u << 10) ? 1 :
			 (unsigned int)((512u << 10) / slab_size);
	s->mode = ak_percpu_mode();

	pthread_once(&topo_once, topo_init);
	s->nr_nodes = topo_nr_nodes;
	mem = ak_page_meta_alloc(s->nr_nodes * sizeof(*s->nodes), CACHELINE);
	if (!mem)
		goto nomem;
	s->nodes = mem;
	memset(mem, 0, s->nr_nodes * sizeof(*s->nodes));
	s->stats = ak_percpu_alloc(AK_SLAB_NR_STATS * sizeof(uint64_t),
				   CACHELINE);
	if (!s->stats)
		goto nomem;
	if (s->ops->slot_lists) {
		s->nr_home = ak_nr_cpus();
		mem = ak_page_meta_alloc(s->nr_home * sizeof(*s->home_lists),
					 CACHELINE);
		if (!mem)
			goto nomem;
		s->home_lists = mem;
		memset(mem, 0, s->nr_home * sizeof(*s->home_lists));
	}
	if (s->ops->init(s, args))
		goto nomem;
	if (s->ops->put_partial && args->cpu_partial != AK_SLAB_CPU_PARTIAL_NONE &&
	    ak_kmem_cache_set_cpu_partial(s, args->cpu_partial ?
					  args->cpu_partial :
					  slab_default_cpu_partial(s))) {
		s->ops->fini(s);
		cache_free(s);
		errno = EINVAL;
		return NULL;
	}
	if (s->fast.cpu)
		s->fast.cpu_stride = ak_percpu_stride(s->fast.cpu);
	slab_entry_init(s);
	return s;
nomem:
	cache_free(s);
	errno = ENOMEM;
	return NULL;
}

struct ak_kmem_cache *ak_kmem_cache_create(const char *name, size_t size,
					   size_t align, unsigned int flags,
					   enum ak_slab_fastpath fastpath)
{
	return ak_kmem_cache_create_args(name, size, align, flags, fastpath,
					 NULL);
}

void ak_kmem_cache_shrink(struct ak_kmem_cache *s)
{
	struct ak_slab *sl, *next;
	union slab_fc f;

	s->ops->drain(s);
	/* no slab stays frozen */
	pthread_mutex_lock(&s->slabs_lock);
	sl = s->all_slabs;
	pthread_mutex_unlock(&s->slabs_lock);
	for (; sl; sl = next) {
		/* unfreezing an empty slab may give it back */
		next = sl->all_next;
		f = slab_fc_read(sl);
		if (CNT_OWNER(f.counters))
			slab_unfreeze(s, sl, CNT_OWNER(f.counters));
	}
}

int ak_kmem_cache_destroy(struct ak_kmem_cache *s)
{
	struct ak_slab *sl, *next;
	long live;

	if (!s)
		return 0;
	ak_kmem_cache_shrink(s);
	live = ak_kmem_cache_audit(s);
	if (live) {
		if (live > 0)
			slab_report(s, "destroy: %ld objects remaining; cache kept",
				    live);
		else
			slab_report(s, "destroy: cache inconsistent; cache kept");
		errno = EBUSY;
		return -1;
	}
	for (sl = s->all_slabs; sl; sl = next) {
		next = sl->all_next;
		slab_registry_del(sl);
		slab_unmap(sl, s->slab_size);
	}
	s->ops->fini(s);
	cache_free(s);
	return 0;
}

/* ---- statistics and report ---- */

void ak_kmem_cache_stats(struct ak_kmem_cache *s,
			 uint64_t out[AK_SLAB_NR_STATS])
{
	unsigned int cpu, i;

	memset(out, 0, AK_SLAB_NR_STATS * sizeof(uint64_t));
	ak_for_each_cpu(cpu) {
		uint64_t *c = ak_per_cpu_ptr(s->stats, cpu);

		for (i = 0; i < AK_SLAB_NR_STATS; i++)
			out[i] += __atomic_load_n(&c[i], __ATOMIC_RELAXED);
	}
	/*
	 * Not counted on the bulk path (one add fewer per call), and only
	 * where the per-CPU parts are (AK_SLAB_STATS).
	 */
	if (s->flags & AK_SLAB_STATS) {
		out[AK_SLAB_BULK_ALLOC_OBJS] = out[AK_SLAB_BULK_ALLOC_CPU] +
					       out[AK_SLAB_BULK_ALLOC_CPU_PARTIAL] +
					       out[AK_SLAB_BULK_ALLOC_PARTIAL] +
					       out[AK_SLAB_BULK_ALLOC_NEW];
		out[AK_SLAB_BULK_FREE_OBJS] = out[AK_SLAB_BULK_FREE_CPU] +
					      out[AK_SLAB_BULK_FREE_SLAB];
	}
}

void ak_kmem_cache_info(struct ak_kmem_cache *s,
			struct ak_kmem_cache_info *out)
{
	memset(out, 0, sizeof(*out));
	out->name = s->name;
	out->fastpath = (enum ak_slab_fastpath)s->fastpath;
	out->fastpath_name = ak_slab_fastpath_name(out->fastpath);
	out->mode = s->mode;
	out->mode_name = ak_percpu_mode_name(s->mode);
	out->how = s->ops->how(s, s->fast.kind != __AK_SLAB_CALL);
	out->flags = s->flags;
	out->object_size = s->object_size;
	out->align = s->align;
	out->stride = s->stride;
	out->slab_size = s->slab_size;
	out->objects_per_slab = s->objects;
	out->nr_nodes = s->nr_nodes;
	out->nr_slabs = __atomic_load_n(&s->nr_slabs, __ATOMIC_RELAXED);
	out->cpu_partial = READ_ONCE(s->cpu_partial);
}

int ak_kmem_cache_describe(struct ak_kmem_cache *s, char *buf, size_t len)
{
	struct ak_kmem_cache_info i;

	ak_kmem_cache_info(s, &i);
	return snprintf(buf, len,
			"%s: %s on %s (%s), size %zu align %zu stride %zu, %zu per %zu-byte slab%s%s",
			i.name, i.fastpath_name, i.mode_name, i.how,
			i.object_size, i.align, i.stride, i.objects_per_slab,
			i.slab_size, i.flags & AK_SLAB_DEBUG ? ", debug" : "",
			i.flags & AK_SLAB_STATS ? ", stats" : "");
}

void ak_kmem_cache_print_stats(struct ak_kmem_cache *s, FILE *f)
{
	uint64_t st[AK_SLAB_NR_STATS];
	char line[512];
	unsigned int i;

	ak_kmem_cache_describe(s, line, sizeof(line));
	fprintf(f, "%s\n", line);
	fprintf(f, "  slabs %lu\n", __atomic_load_n(&s->nr_slabs,
						     __ATOMIC_RELAXED));
	ak_kmem_cache_stats(s, st);
	for (i = 0; i < AK_SLAB_NR_STATS; i++)
		fprintf(f, "  %-20s %llu\n", stat_names[i],
			(unsigned long long)st[i]);
}

/* ---- audit ---- */

enum audit_place {
	AUDIT_NONE,
	AUDIT_NODE,		/* a shared partial list (per node or slot) */
	AUDIT_CPU_PARTIAL,	/* a slot's partial list */
};

struct audit {
	struct ak_slab **slabs;
	unsigned char **seen;
	unsigned char *place;
	size_t nr;
	long errors;
	struct ak_kmem_cache_places *out;
};

static int slab_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(struct ak_slab *const *)a;
	uintptr_t y = (uintptr_t)*(struct ak_slab *const *)b;

	return x < y ? -1 : x > y;
}

/* The index of slab key in a->slabs, or -1. */
static ptrdiff_t audit_find(struct audit *a, const struct ak_slab *key)
{
	size_t lo = 0, hi = a->nr, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (a->slabs[mid] == key)
			return (ptrdiff_t)mid;
		if ((uintptr_t)a->slabs[mid] < (uintptr_t)key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Mark fp free; false (and an error) if it is no object or seen before. */
static bool audit_mark(struct ak_kmem_cache *s, struct audit *a, void *fp,
		       const char *where)
{
	ptrdiff_t hit = audit_find(a, fp_slab(s, fp));
	char *obj = fp_to_obj(s, fp);
	size_t idx;
	ptrdiff_t off;

	if (hit < 0) {
		slab_report(s, "audit: %p on %s is in no slab of the cache",
			    obj, where);
		a->errors++;
		return false;
	}
	off = obj - a->slabs[hit]->first - s->obj_off;
	if (off < 0 || off % s->stride ||
	    (idx = (size_t)off / s->stride) >= a->slabs[hit]->objects) {
		slab_report(s, "audit: %p on %s is not an object start",
			    obj, where);
		a->errors++;
		return false;
	}
	if (a->seen[hit][idx]++) {
		slab_report(s, "audit: object %p free twice (again on %s)",
			    obj, where);
		a->errors++;
		return false;
	}
	return true;
}

static void audit_visit(struct ak_kmem_cache *s, void *fp, void *arg)
{
	struct audit *a = arg;

	if (audit_mark(s, a, fp, "a per-CPU structure or store"))
		a->out->cpu++;
}

/* sl is on a list of kind place: on no other, and a slab of the cache. */
static void audit_place(struct ak_kmem_cache *s, struct audit *a,
			struct ak_slab *sl, enum audit_place place)
{
	ptrdiff_t hit = audit_find(a, sl);

	if (hit < 0) {
		slab_report(s, "audit: %p on a partial list is no slab of the cache",
			    (void *)sl);
		a->errors++;
	} else if (a->place[hit]) {
		slab_report(s, "audit: slab %p on two partial lists",
			    (void *)sl);
		a->errors++;
	} else {
		a->place[hit] = (unsigned char)place;
	}
}

static void audit_visit_partial(struct ak_kmem_cache *s, struct ak_slab *sl,
				void *arg)
{
	struct audit *a = arg;

	audit_place(s, a, sl, AUDIT_CPU_PARTIAL);
	a->out->cpu_partial_slabs++;
}

static void audit_list(struct ak_kmem_cache *s, struct audit *a,
		       struct slab_list *l)
{
	unsigned long n = 0;
	struct ak_slab *sl;

	slab_lock(&l->lock);
	for (sl = l->partial; sl && n <= a->nr; sl = sl->next, n++)
		audit_place(s, a, sl, AUDIT_NODE);
	if (sl || n != l->nr_partial) {
		slab_report(s, "audit: a partial list counts %lu slabs, holds %s%lu",
			    l->nr_partial, sl ? "more than " : "", n);
		a->errors++;
	}
	slab_unlock(&l->lock);
	a->out->node_slabs += n;
}

/* Where a slab in state f may be, and where its free objects count. */
static void audit_slab(struct ak_kmem_cache *s, struct audit *a, size_t i,
		       union slab_fc f, unsigned long nfree)
{
	struct ak_slab *sl = a->slabs[i];
	const char *bad = NULL;

	if (CNT_OWNER(f.counters)) {
		if (a->place[i])
			bad = "frozen, yet on a partial list";
		a->out->cpu += nfree;
		a->out->cpu_slabs++;
	} else if (!f.freelist) {
		if (a->place[i])
			bad = "full, yet on a partial list";
	} else if (a->place[i] == AUDIT_NODE) {
		a->out->node += nfree;
	} else if (a->place[i] == AUDIT_CPU_PARTIAL) {
		a->out->cpu_partial += nfree;
	} else {
		bad = "partial, yet on no list (lost)";
	}
	if (bad) {
		slab_report(s, "audit: slab %p: %s", (void *)sl, bad);
		a->errors++;
	}
}

int ak_kmem_cache_audit_places(struct ak_kmem_cache *s,
			       struct ak_kmem_cache_places *out)
{
	struct audit a = { 0 };
	struct ak_slab *sl;
	size_t i, k;

	memset(out, 0, sizeof(*out));
	a.out = out;
	pthread_mutex_lock(&s->slabs_lock);
	a.nr = s->nr_slabs;
	a.slabs = ak_page_meta_calloc(a.nr + 1, sizeof(*a.slabs));
	a.seen = ak_page_meta_calloc(a.nr + 1, sizeof(*a.seen));
	a.place = ak_page_meta_calloc(a.nr + 1, 1);
	for (i = 0, sl = s->all_slabs; a.slabs && sl && i < a.nr;
	     sl = sl->all_next)
		a.slabs[i++] = sl;
	pthread_mutex_unlock(&s->slabs_lock);
	if (!a.slabs || !a.seen || !a.place) {
		ak_page_meta_free(a.slabs);
		ak_page_meta_free(a.seen);
		ak_page_meta_free(a.place);
		slab_report(s, "audit: out of memory");
		return -1;
	}
	qsort(a.slabs, a.nr, sizeof(*a.slabs), slab_cmp);
	for (i = 0; i < a.nr; i++) {
		a.seen[i] = ak_page_meta_calloc(a.slabs[i]->objects, 1);
		if (!a.seen[i])
			a.errors++;
	}
	if (a.errors)
		goto out;
	out->slabs = a.nr;
	for (i = 0; i < s->nr_nodes; i++)
		audit_list(s, &a, &s->nodes[i].list);
	for (i = 0; s->home_lists && i < s->nr_home; i++)
		audit_list(s, &a, &s->home_lists[i]);
	if (s->ops->visit_partial &&
	    !s->ops->visit_partial(s, audit_visit_partial, &a)) {
		slab_report(s, "audit: a CPU partial list's counts disagree with its slabs");
		a.errors++;
	}
	for (i = 0; i < a.nr; i++) {
		union slab_fc f = slab_fc_read(a.slabs[i]);
		unsigned long n = 0;
		void *fp;

		for (fp = f.freelist; fp && n <= a.slabs[i]->objects;
		     fp = fp_next(fp), n++)
			if (!audit_mark(s, &a, fp, "a slab freelist"))
				break;
		if (fp) {
			a.errors++;
			continue;
		}
		if (CNT_INUSE(f.counters) + n != a.slabs[i]->objects) {
			slab_report(s, "audit: slab %p: inuse %u + %lu free != %u objects",
				    (void *)a.slabs[i], CNT_INUSE(f.counters),
				    n, a.slabs[i]->objects);
			a.errors++;
		}
		audit_slab(s, &a, i, f, n);
	}
	s->ops->visit(s, audit_visit, &a);
	for (i = 0; i < a.nr; i++)
		for (k = 0; k < a.slabs[i]->objects; k++)
			out->allocated += !a.seen[i][k];
out:
	for (i = 0; i < a.nr; i++)
		ak_page_meta_free(a.seen[i]);
	ak_page_meta_free(a.seen);
	ak_page_meta_free(a.slabs);
	ak_page_meta_free(a.place);
	return a.errors ? -1 : 0;
}

long ak_kmem_cache_audit(struct ak_kmem_cache *s)
{
	struct ak_kmem_cache_places pl;

	if (ak_kmem_cache_audit_places(s, &pl))
		return -1;
	return (long)pl.allocated;
}
