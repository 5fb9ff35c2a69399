// SPDX-License-Identifier: MIT
/*
 * Suite 1: the uncontended cost of every compiled variant of every
 * primitive, one thread, the line in L1.  Two figures per variant:
 *
 *   lat   a dependent chain: each operation's operands come from the
 *         previous one's result, so the figure is the operation's latency;
 *   tput  independent operations on four lines, so an implementation that
 *         overlaps them shows it (PACT'15 found that atomics do not).
 *
 * The bodies are expanded from each arch's AK_ARCH_VARIANTS list and the
 * generic AK_GENERIC_VARIANTS list, so the operation is inlined into the
 * loop as it would be in a caller; the registry supplies the usable()
 * check and the instruction shown in the label.  References beside them:
 * plain load and store, a plain read-modify-write, and updates under a
 * pthread spinlock and a pthread mutex.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <atomkit/registry.h>

#include "akbench.h"
#include "bench.h"

#define T32	uint32_t
#define T64	uint64_t
#define T128	ak_u128

struct line32 { uint32_t v; } __attribute__((aligned(64)));
struct line64 { uint64_t v; } __attribute__((aligned(64)));
struct line128 { ak_u128 v; } __attribute__((aligned(64)));

/* ---- latency: each operation depends on the one before ---- */

#define LAT_cmpxchg(W, fn)						\
	do {								\
		static struct line##W x;				\
		T##W v = 0;						\
									\
		x.v = 0;						\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++)				\
				v = (T##W)(fn(&x.v, v, (T##W)(v + 1)) + 1); \
	} while (0)

#define LAT_try_cmpxchg(W, fn)						\
	do {								\
		static struct line##W x;				\
		T##W v = 0;						\
									\
		x.v = 0;						\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++)				\
				v += fn(&x.v, &v, (T##W)(v + 1));	\
	} while (0)

#define LAT_xchg(W, fn)							\
	do {								\
		static struct line##W x;				\
		T##W v = 0;						\
									\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++)				\
				v = fn(&x.v, (T##W)(v + 1));		\
	} while (0)

#define LAT_fetch_add(W, fn)						\
	do {								\
		static struct line##W x;				\
		T##W v = 0;						\
									\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++)				\
				v = fn(&x.v, (T##W)((v & 1) + 1));	\
	} while (0)

/* ---- throughput: four lines, operands from the loop count only ---- */

#define TPUT_cmpxchg(W, fn)						\
	do {								\
		static struct line##W x[4];				\
		uint64_t k = 0;						\
									\
		memset(x, 0, sizeof(x));				\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++, k++)			\
				fn(&x[k & 3].v, (T##W)(k >> 2),		\
				   (T##W)((k >> 2) + 1));		\
	} while (0)

#define TPUT_try_cmpxchg(W, fn)						\
	do {								\
		static struct line##W x[4];				\
		uint64_t k = 0;						\
									\
		memset(x, 0, sizeof(x));				\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++, k++) {			\
				T##W o = (T##W)(k >> 2);		\
									\
				fn(&x[k & 3].v, &o, (T##W)(o + 1));	\
			}						\
	} while (0)

#define TPUT_xchg(W, fn)						\
	do {								\
		static struct line##W x[4];				\
		uint64_t k = 0;						\
									\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++, k++)			\
				fn(&x[k & 3].v, (T##W)k);		\
	} while (0)

#define TPUT_fetch_add(W, fn)						\
	do {								\
		static struct line##W x[4];				\
		uint64_t k = 0;						\
									\
		while (akb_batch(s, &n))				\
			for (i = 0; i < n; i++, k++)			\
				fn(&x[k & 3].v, 1);			\
	} while (0)

static void label(struct akb_state *s)
{
	const struct ak_variant *v = akb_arg(s);
	char buf[160];

	snprintf(buf, sizeof(buf), "%s [%s%s]", v->insn, v->order,
		 v->smp_safe ? "" : ", not SMP-safe");
	akb_label(s, buf);
}

#define BM(tag, prim, width, name, order, smp, insn, fn, usable)	\
	static void bm_##tag##_lat_##prim##width##_##name(struct akb_state *s) \
	{								\
		uint64_t n, i;						\
									\
		label(s);						\
		LAT_##prim(width, fn);					\
	}								\
	static void bm_##tag##_tput_##prim##width##_##name(struct akb_state *s) \
	{								\
		uint64_t n, i;						\
									\
		label(s);						\
		TPUT_##prim(width, fn);					\
	}
#define BM_ARCH(...)	BM(arch, __VA_ARGS__)
#define BM_GEN(...)	BM(gen, __VA_ARGS__)

#ifdef AK_ARCH_VARIANTS
AK_ARCH_VARIANTS(BM_ARCH)
#endif
AK_GENERIC_VARIANTS(BM_GEN)

struct entry {
	const char *arch;
	const char *id;		/* prim<width>/name */
	akb_fn lat, tput;
};

#define ENT(tag, arch_, prim, width, name, ...)				\
	{ arch_, #prim #width "/" #name,				\
	  bm_##tag##_lat_##prim##width##_##name,			\
	  bm_##tag##_tput_##prim##width##_##name },
#define ENT_ARCH(...)	ENT(arch, AK_ARCH_NAME, __VA_ARGS__)
#define ENT_GEN(...)	ENT(gen, "generic", __VA_ARGS__)

static const struct entry entries[] = {
#ifdef AK_ARCH_VARIANTS
	AK_ARCH_VARIANTS(ENT_ARCH)
#endif
	AK_GENERIC_VARIANTS(ENT_GEN)
};

/* ---- references ---- */

static void bm_ref_load(struct akb_state *s)
{
	static struct line64 x;
	uint64_t n, i, v = 0;

	akb_label(s, "plain load, dependent");
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++)
			v = *(volatile uint64_t *)(&x.v + (v & 0));
	akb_keep(v);
}

static void bm_ref_store(struct akb_state *s)
{
	static struct line64 x;
	uint64_t n, i;

	akb_label(s, "plain store");
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++)
			*(volatile uint64_t *)&x.v = i;
}

static void bm_ref_rmw(struct akb_state *s)
{
	static struct line64 x;
	uint64_t n, i;

	akb_label(s, "plain load+add+store, not atomic");
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++)
			(*(volatile uint64_t *)&x.v)++;
}

static void bm_ref_spinlock(struct akb_state *s)
{
	static pthread_spinlock_t lock;
	static struct line64 x;
	uint64_t n, i;

	akb_label(s, "pthread_spin_lock; x++; pthread_spin_unlock");
	pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++) {
			pthread_spin_lock(&lock);
			(*(volatile uint64_t *)&x.v)++;
			pthread_spin_unlock(&lock);
		}
	pthread_spin_destroy(&lock);
}

static void bm_ref_mutex(struct akb_state *s)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct line64 x;
	uint64_t n, i;

	akb_label(s, "pthread_mutex_lock; x++; pthread_mutex_unlock");
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++) {
			pthread_mutex_lock(&lock);
			(*(volatile uint64_t *)&x.v)++;
			pthread_mutex_unlock(&lock);
		}
}

/*
 * The locked slab design's alloc+free without the allocator around it:
 * one mutex hold to pop a list's head, one to push it back.
 */
static void bm_ref_mutex_pop_push(struct akb_state *s)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static void *node[2];	/* node[0] is the list's one node */
	static void *head;	/* in memory, as the design's list head */
	uint64_t n, i;
	void *p;

	head = &node[0];
	akb_label(s, "pthread_mutex_lock; pop; unlock; lock; push; unlock");
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++) {
			pthread_mutex_lock(&lock);
			p = head;
			head = *(void *volatile *)p;
			pthread_mutex_unlock(&lock);
			akb_keep(p);
			pthread_mutex_lock(&lock);
			*(void *volatile *)p = head;
			head = p;
			pthread_mutex_unlock(&lock);
		}
}

static void ref(const char *op, const char *metric, akb_fn fn,
		const char *insn)
{
	struct akb_def *d = akb_new("prim", fn, NULL, 0);

	akb_part(d, "arch", "ref");
	akb_part(d, "op", op);
	akb_part(d, "metric", metric);
	akb_field(d, "insn", insn);
}

/* A variant's benchmark (cas, contention share it), skipped if unusable. */
struct akb_def *akb_variant_new(const char *suite, akb_fn fn,
				const struct ak_variant *v, unsigned int flags)
{
	struct akb_def *d = akb_new(suite, fn, v, flags);
	char op[64], order[96];

	snprintf(op, sizeof(op), "%s%u", v->prim, v->width);
	snprintf(order, sizeof(order), "%s%s", v->order,
		 v->smp_safe ? "" : ", not SMP-safe");
	akb_part(d, "arch", v->arch);
	akb_part(d, "op", op);
	akb_field_num(d, "width", v->width);
	akb_part(d, "variant", v->name);
	akb_field(d, "ordering", order);
	akb_field(d, "insn", v->insn);
	if (!v->usable())
		akb_skip_always(d, AKB_SKIP_UNUSABLE, NULL);
	return d;
}

void akb_suite_uncontended(void)
{
	size_t k;
	char full[128];

	ref("load", "lat", bm_ref_load, "plain load, dependent");
	ref("store", "tput", bm_ref_store, "plain store");
	ref("plain_rmw", "lat", bm_ref_rmw, "plain load+add+store, not atomic");
	ref("spinlock", "lat", bm_ref_spinlock,
	    "pthread_spin_lock; x++; pthread_spin_unlock");
	ref("mutex", "lat", bm_ref_mutex,
	    "pthread_mutex_lock; x++; pthread_mutex_unlock");
	ref("mutex_pop_push", "lat", bm_ref_mutex_pop_push,
	    "pthread_mutex_lock; pop; unlock; lock; push; unlock");
	for (k = 0; k < sizeof(entries) / sizeof(entries[0]); k++) {
		const struct entry *e = &entries[k];
		const struct ak_variant *v;

		snprintf(full, sizeof(full), "%s/%s", e->arch, e->id);
		v = ak_variant_find(full);
		if (!v)
			continue;	/* every entry is in the registry */
		akb_part(akb_variant_new("prim", e->lat, v, 0), "metric",
			 "lat");
		akb_part(akb_variant_new("prim", e->tput, v, 0), "metric",
			 "tput");
	}
}
