// SPDX-License-Identifier: MIT
/*
 * The target of atomkit-rseq-check (doc/testing.md, "The rseq abort
 * injector"): one case per rseq section of the per-CPU API, and the slab
 * designs' rseq fastpaths through each of their entry points (the inline
 * ones compiled here, as they run by default and in a build for one
 * design, AK_SLAB_DESIGN; the library's ak_kmem_cache_alloc/free; and the
 * designs' own entries behind __ak_kmem_cache_alloc/free), alloc, free
 * and bulk.  Each case does one operation between ak_rseq_check_begin()
 * and _end(), and checks that it took effect exactly once: counters
 * moved by exactly the amount, lists and arrays hold exactly the objects
 * they should, in order, and the cache's audit counts exactly the
 * objects held.  Its regions are the per-CPU memory the operation
 * commits to, which the tracer compares at each abort.
 *
 * It pins itself to the CPU it starts on, so that every run finds the
 * same per-CPU copy.  Without an rseq mode it exits 77 (a skip).
 *
 * The per-CPU cases are compiled once more with the mode fixed at build
 * time (AK_PERCPU_MODE, the wrappers rseq_check_target_fixed_*.c), and
 * the copy whose mode is the run's runs after the others, its cases
 * named percpu-fixed/...: the fixed mode's inline ops, aborted at each
 * instruction of their sections too.  And once more in the run's mode
 * (rseq_check_target_slow.c), named percpu-slow/..., with the thread's
 * op area word unset, so that every op runs its section as its
 * out-of-line path does: the copies in the NAME_slow functions, which a
 * thread's first op runs, or every op of a loop that read that word
 * before the thread registered; and so once more in the build that fixes
 * the run's mode (rseq_check_target_fixed_*_slow.c, percpu-fixed-slow/),
 * whose NAME_slow functions are its own.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <atomkit/percpu.h>
#include <atomkit/rseq-check.h>
#include <atomkit/slab.h>

/* the library's out-of-line entries (rseq_check_call.c) */
void *rc_call_alloc(struct ak_kmem_cache *s);
void rc_call_free(struct ak_kmem_cache *s, void *p);

#ifndef CASE_PREFIX
# define CASE_PREFIX	"percpu/"
#endif

#define NODES		8
#define LIMIT		12
#define BULK		8	/* more than the _n cases' arrays hold */
#define SLAB_BULK	3
#define SLAB_BIG	40	/* more than a sheaf holds */

/* A case whose first region is every copy of pcp. */
static struct ak_rseq_check_case *kase(const char *name, const void *pcp)
{
	static struct ak_rseq_check_case c;

	memset(&c, 0, sizeof(c));
	c.name = name;
	if (pcp) {
		c.regions[0].p = pcp;
		c.regions[0].len = ak_percpu_stride(pcp) * ak_nr_cpus();
	}
	return &c;
}

/*
 * An array's regions: its header (count, and lock for a struct
 * ak_percpu_array), and the slots below the count.  The slots above it
 * are the array's scratch: a push fills one before its commit, which an
 * abort may leave, unseen.
 */
static void array_regions(struct ak_rseq_check_case *c, int first,
			  const unsigned long *count, size_t header,
			  void *const *slots)
{
	c->regions[first].p = count;
	c->regions[first].len = header;
	c->regions[first + 1].p = slots;
	c->regions[first + 1].len = *count * sizeof(*slots);
}

/* ---- counters ---- */

static void counters(void)
{
	uint64_t *c64 = ak_percpu_alloc(sizeof(*c64), 8), s, o, r;
	uint32_t *c32 = ak_percpu_alloc(sizeof(*c32), 4), s32, o32, r32;
	ak_u128 *c128 = ak_percpu_alloc(sizeof(*c128), 16), o128, n128, r128;
	struct ak_rseq_check_case *c;

	if (!c64 || !c32 || !c128) {
		perror("ak_percpu_alloc");
		exit(1);
	}
	/* a value this copy does not hold: a write that took is seen */
	c = kase(CASE_PREFIX "write64", c64);
	while (ak_rseq_check_begin(c)) {
		s = ak_percpu_sum_u64(c64);
		o = ak_this_cpu_read(c64);
		ak_this_cpu_write(c64, o + 0x100000001ull);
		ak_rseq_check_end(c, ak_this_cpu_read(c64) ==
				  o + 0x100000001ull &&
				  ak_percpu_sum_u64(c64) == s + 0x100000001ull,
				  "%llu (sum %llu), then %llu (sum %llu)",
				  (unsigned long long)o, (unsigned long long)s,
				  (unsigned long long)ak_this_cpu_read(c64),
				  (unsigned long long)ak_percpu_sum_u64(c64));
	}
	c = kase(CASE_PREFIX "write32", c32);
	while (ak_rseq_check_begin(c)) {
		s32 = ak_percpu_sum_u32(c32);
		o32 = ak_this_cpu_read(c32);
		ak_this_cpu_write(c32, o32 + 9);
		ak_rseq_check_end(c, ak_this_cpu_read(c32) == o32 + 9 &&
				  ak_percpu_sum_u32(c32) == s32 + 9,
				  "%u (sum %u), then %u (sum %u)", o32, s32,
				  ak_this_cpu_read(c32),
				  ak_percpu_sum_u32(c32));
	}
	c = kase(CASE_PREFIX "add64", c64);
	while (ak_rseq_check_begin(c)) {
		s = ak_percpu_sum_u64(c64);
		ak_this_cpu_add(c64, 3);
		ak_rseq_check_end(c, ak_percpu_sum_u64(c64) == s + 3,
				  "sum %llu, then %llu", (unsigned long long)s,
				  (unsigned long long)ak_percpu_sum_u64(c64));
	}
	c = kase(CASE_PREFIX "add32", c32);
	while (ak_rseq_check_begin(c)) {
		s32 = ak_percpu_sum_u32(c32);
		ak_this_cpu_add(c32, 5);
		ak_rseq_check_end(c, ak_percpu_sum_u32(c32) == s32 + 5,
				  "sum %u, then %u", s32,
				  ak_percpu_sum_u32(c32));
	}
	c = kase(CASE_PREFIX "cmpxchg64", c64);
	while (ak_rseq_check_begin(c)) {
		o = ak_this_cpu_read(c64);
		r = ak_this_cpu_cmpxchg(c64, o, o + 7);
		ak_rseq_check_end(c, r == o && ak_this_cpu_read(c64) == o + 7,
				  "%llu: returned %llu, left %llu",
				  (unsigned long long)o, (unsigned long long)r,
				  (unsigned long long)ak_this_cpu_read(c64));
	}
	c = kase(CASE_PREFIX "cmpxchg32", c32);
	while (ak_rseq_check_begin(c)) {
		o32 = ak_this_cpu_read(c32);
		r32 = ak_this_cpu_cmpxchg(c32, o32, o32 + 7);
		ak_rseq_check_end(c, r32 == o32 &&
				  ak_this_cpu_read(c32) == o32 + 7,
				  "%u: returned %u, left %u", o32, r32,
				  ak_this_cpu_read(c32));
	}
	c = kase(CASE_PREFIX "cmpxchg128", c128);
	while (ak_rseq_check_begin(c)) {
		o128 = *ak_this_cpu_ptr(c128);
		n128 = ak_u128_from_words(ak_u128_word0(o128) + 1,
					  ak_u128_word1(o128) + 2);
		r128 = ak_this_cpu_cmpxchg128(c128, o128, n128);
		ak_rseq_check_end(c, r128 == o128 &&
				  *ak_this_cpu_ptr(c128) == n128,
				  "word0 %llu, word1 %llu, then %llu, %llu",
				  (unsigned long long)ak_u128_word0(o128),
				  (unsigned long long)ak_u128_word1(o128),
				  (unsigned long long)
				  ak_u128_word0(*ak_this_cpu_ptr(c128)),
				  (unsigned long long)
				  ak_u128_word1(*ak_this_cpu_ptr(c128)));
	}
}

/* ---- the list ---- */

struct node {
	struct node *next;
	int id;
};

static struct node nodes[NODES];

/* This CPU's list as ids, newest first: "3 2 1"; false if it has a loop. */
static bool list_ids(struct ak_percpu_list *l, char *buf, size_t len)
{
	struct node *n = ak_this_cpu_ptr(l)->head;
	size_t at = 0;
	int i;

	buf[0] = 0;
	for (i = 0; n && i <= NODES; i++, n = n->next)
		at += snprintf(buf + at, len - at, "%s%d", at ? " " : "",
			       n->id);
	return !n;
}

static void list(void)
{
	struct ak_percpu_list *l = ak_percpu_alloc(sizeof(*l), 16);
	struct ak_rseq_check_case *c;
	char before[64], after[64], want[96];
	struct node *n;
	int i;

	if (!l) {
		perror("ak_percpu_alloc");
		exit(1);
	}
	for (i = 0; i < NODES; i++)
		nodes[i].id = i;
	for (i = 0; i < 4; i++)
		ak_this_cpu_list_push(l, &nodes[i]);
	c = kase(CASE_PREFIX "list_pop", l);
	while (ak_rseq_check_begin(c)) {
		list_ids(l, before, sizeof(before));
		n = ak_this_cpu_list_pop(l);
		list_ids(l, after, sizeof(after));
		/* the head went, the rest stayed */
		ak_rseq_check_end(c, n == &nodes[3] &&
				  !strcmp(after, strchr(before, ' ') + 1),
				  "list %s, popped %d, left %s", before,
				  n ? n->id : -1, after);
		ak_this_cpu_list_push(l, &nodes[3]);
	}
	c = kase(CASE_PREFIX "list_push", l);
	while (ak_rseq_check_begin(c)) {
		list_ids(l, before, sizeof(before));
		ak_this_cpu_list_push(l, &nodes[5]);
		list_ids(l, after, sizeof(after));
		snprintf(want, sizeof(want), "5 %s", before);
		ak_rseq_check_end(c, !strcmp(after, want),
				  "list %s, pushed 5, left %s", before, after);
		ak_this_cpu_list_pop(l);
	}
}

/* ---- the arrays ---- */

struct parray {
	unsigned long count;
	void *slots[LIMIT];
};

static char objs[LIMIT * 2];	/* the objects: their addresses */

/* This copy's objects as indices into objs: "0 1 2". */
static void slots_of(unsigned long count, void *const *slots, char *buf,
		     size_t len)
{
	size_t at = 0;
	unsigned long i;

	buf[0] = 0;
	for (i = 0; i < count && i < LIMIT; i++)
		at += snprintf(buf + at, len - at, "%s%d", at ? " " : "",
			       (int)((char *)slots[i] - objs));
}

static void array(void)
{
	struct ak_percpu_array *a =
		ak_percpu_alloc(ak_percpu_array_size(LIMIT), 64);
	struct ak_percpu_array *mine;
	struct ak_rseq_check_case *c;
	char before[64], after[64], want[96];
	void *o;
	int i;

	if (!a) {
		perror("ak_percpu_alloc");
		exit(1);
	}
	mine = ak_this_cpu_ptr(a);
	for (i = 0; i < 4; i++)
		ak_this_cpu_array_push(a, LIMIT, &objs[i]);
	c = kase(CASE_PREFIX "array_pop", NULL);
	array_regions(c, 0, &mine->count, 16, mine->slots);
	while (ak_rseq_check_begin(c)) {
		slots_of(mine->count, mine->slots, before, sizeof(before));
		o = ak_this_cpu_array_pop(a);
		slots_of(mine->count, mine->slots, after, sizeof(after));
		ak_rseq_check_end(c, o == &objs[3] &&
				  !strcmp(after, "0 1 2"),
				  "array %s, popped %d, left %s", before,
				  o ? (int)((char *)o - objs) : -1, after);
		ak_this_cpu_array_push(a, LIMIT, &objs[3]);
	}
	c = kase(CASE_PREFIX "array_push", NULL);
	array_regions(c, 0, &mine->count, 16, mine->slots);
	while (ak_rseq_check_begin(c)) {
		slots_of(mine->count, mine->slots, before, sizeof(before));
		i = ak_this_cpu_array_push(a, LIMIT, &objs[9]);
		slots_of(mine->count, mine->slots, after, sizeof(after));
		snprintf(want, sizeof(want), "%s 9", before);
		ak_rseq_check_end(c, !i && !strcmp(after, want),
				  "array %s, pushed 9 (%d), left %s", before,
				  i, after);
		ak_this_cpu_array_pop(a);
	}
}

static void array_ptr(void)
{
	void **slot = ak_percpu_alloc(sizeof(void *), 8);
	static struct parray pa;
	struct ak_rseq_check_case *c;
	char before[64], after[64], want[96];
	void *o, *buf[BULK];
	unsigned long k;
	int i;

	if (!slot) {
		perror("ak_percpu_alloc");
		exit(1);
	}
	*ak_this_cpu_ptr(slot) = &pa;
	for (i = 0; i < 6; i++)
		pa.slots[pa.count++] = &objs[i];
	/* the slot copies, and the array this CPU's slot points to */
#define PA_CASE(name)							\
	c = kase(name, slot);						\
	array_regions(c, 1, &pa.count, sizeof(pa.count), pa.slots)

	PA_CASE(CASE_PREFIX "array_ptr_pop");
	while (ak_rseq_check_begin(c)) {
		slots_of(pa.count, pa.slots, before, sizeof(before));
		o = ak_this_cpu_array_ptr_pop((void *const *)slot);
		slots_of(pa.count, pa.slots, after, sizeof(after));
		ak_rseq_check_end(c, o == &objs[5] &&
				  !strcmp(after, "0 1 2 3 4"),
				  "array %s, popped %d, left %s", before,
				  o ? (int)((char *)o - objs) : -1, after);
		ak_this_cpu_array_ptr_push((void *const *)slot, LIMIT,
					   &objs[5]);
	}
	PA_CASE(CASE_PREFIX "array_ptr_push");
	while (ak_rseq_check_begin(c)) {
		slots_of(pa.count, pa.slots, before, sizeof(before));
		i = ak_this_cpu_array_ptr_push((void *const *)slot, LIMIT,
					       &objs[9]);
		slots_of(pa.count, pa.slots, after, sizeof(after));
		snprintf(want, sizeof(want), "%s 9", before);
		ak_rseq_check_end(c, !i && !strcmp(after, want),
				  "array %s, pushed 9 (%d), left %s", before,
				  i, after);
		ak_this_cpu_array_ptr_pop((void *const *)slot);
	}
	/*
	 * More asked than there is: the clamp, and an odd count moved, so
	 * that every instruction runs (ppc64 branches around the clamp,
	 * x86-64 around the odd first word's copy).
	 */
	pa.count = 5;
	PA_CASE(CASE_PREFIX "array_ptr_pop_n");
	while (ak_rseq_check_begin(c)) {
		slots_of(pa.count, pa.slots, before, sizeof(before));
		memset(buf, 0, sizeof(buf));
		k = ak_this_cpu_array_ptr_pop_n((void *const *)slot, buf,
						BULK);
		slots_of(pa.count, pa.slots, after, sizeof(after));
		slots_of(k, buf, want, sizeof(want));
		ak_rseq_check_end(c, k == 5 && !strcmp(after, "") &&
				  !strcmp(want, "0 1 2 3 4"),
				  "array %s, popped %lu: %s, left %s", before,
				  k, want, after);
		ak_this_cpu_array_ptr_push_n((void *const *)slot, LIMIT,
					     buf, k);
	}
	for (i = 5; i < 7; i++)
		pa.slots[pa.count++] = &objs[i];
	PA_CASE(CASE_PREFIX "array_ptr_push_n");
	for (i = 0; i < BULK; i++)
		buf[i] = &objs[13 + i];
	while (ak_rseq_check_begin(c)) {
		slots_of(pa.count, pa.slots, before, sizeof(before));
		k = ak_this_cpu_array_ptr_push_n((void *const *)slot, LIMIT,
						 buf, BULK);
		slots_of(pa.count, pa.slots, after, sizeof(after));
		snprintf(want, sizeof(want), "%s 13 14 15 16 17", before);
		ak_rseq_check_end(c, k == 5 && !strcmp(after, want),
				  "array %s, pushed %lu, left %s", before, k,
				  after);
		pa.count -= k;
	}
#undef PA_CASE
}

#ifdef FIXED_CASES
/* This build's per-CPU cases, in the mode it fixes (or the run's). */
void FIXED_CASES(void);

void FIXED_CASES(void)
{
	counters();
	list();
	array();
	array_ptr();
}
#else
void rc_fixed_rseq(void);
void rc_fixed_rseq_mm_cid(void);
void rc_slow(void);
void rc_fixed_rseq_slow(void);
void rc_fixed_rseq_mm_cid_slow(void);

/* ---- the slab designs' fastpaths ---- */

/* fixed: the calls of a build for the cache's one design (AK_SLAB_DESIGN) */
enum entry { INLINE, FIXED, CALL, DESIGN };
static const char *const entry_name[] = {
	"inline", "fixed", "call", "design"
};

/*
 * Out of line, so that no fixed call shares its code with the inline
 * one beside it (the compiler merges identical tails): each case's
 * sections are its own.
 */
static __attribute__((noinline)) void *
fixed_alloc(struct ak_kmem_cache *s, enum ak_slab_fastpath d)
{
	if (d == AK_SLAB_ARRAY)
		return __ak_kmem_cache_alloc_kind(s, 0, __AK_SLAB_INLINE_ARRAY);
	if (d == AK_SLAB_SHEAF)
		return __ak_kmem_cache_alloc_kind(s, 0, __AK_SLAB_INLINE_SHEAF);
	return __ak_kmem_cache_alloc_kind(s, 0, __AK_SLAB_INLINE_LIST);
}

static __attribute__((noinline)) void
fixed_free(struct ak_kmem_cache *s, void *p, enum ak_slab_fastpath d)
{
	if (d == AK_SLAB_ARRAY)
		__ak_kmem_cache_free_kind(s, p, __AK_SLAB_INLINE_ARRAY);
	else if (d == AK_SLAB_SHEAF)
		__ak_kmem_cache_free_kind(s, p, __AK_SLAB_INLINE_SHEAF);
	else
		__ak_kmem_cache_free_kind(s, p, __AK_SLAB_INLINE_LIST);
}

static void *do_alloc(struct ak_kmem_cache *s, enum entry e,
		      enum ak_slab_fastpath d)
{
	switch (e) {
	case INLINE: return ak_kmem_cache_alloc(s, 0);
	case FIXED: return fixed_alloc(s, d);
	case CALL: return rc_call_alloc(s);
	default: return __ak_kmem_cache_alloc(s, 0);
	}
}

static void do_free(struct ak_kmem_cache *s, void *p, enum entry e,
		    enum ak_slab_fastpath d)
{
	switch (e) {
	case INLINE: ak_kmem_cache_free(s, p); break;
	case FIXED: fixed_free(s, p, d); break;
	case CALL: rc_call_free(s, p); break;
	default: __ak_kmem_cache_free(s, p); break;
	}
}

/*
 * A slab case's region: this CPU's copy of the design's per-CPU
 * structure; of the array design's, the count and lock (its slots above
 * the count are scratch, and which are below it the audit checks).
 */
static struct ak_rseq_check_case *
slab_case(const char *name, enum ak_slab_fastpath d,
	  const struct ak_kmem_cache_fast *f)
{
	struct ak_rseq_check_case *c = kase(name, NULL);

	c->regions[0].p = (char *)f->cpu +
		f->cpu_stride * ak_percpu_this_slot(ak_percpu_mode());
	c->regions[0].len = d == AK_SLAB_ARRAY ? 16 : f->cpu_stride;
	return c;
}

static void slab(enum ak_slab_fastpath d)
{
	struct ak_kmem_cache *s = ak_kmem_cache_create("rseq-check", 64, 0,
						       0, d);
	const struct ak_kmem_cache_fast *f;
	struct ak_rseq_check_case *c;
	void *held[16], *p, *bulk[SLAB_BIG];
	char name[64];
	long before, after;
	enum entry e;
	int i, n, want;

	if (!s) {
		perror("ak_kmem_cache_create");
		exit(1);
	}
	f = (const struct ak_kmem_cache_fast *)(const void *)s;
	/* warm: a slab, and objects at the per-CPU level */
	for (i = 0; i < 16; i++)
		held[i] = ak_kmem_cache_alloc(s, 0);
	for (i = 0; i < 12; i++)
		ak_kmem_cache_free(s, held[i]);
	for (e = INLINE; e <= DESIGN; e++) {
		if (e == FIXED && d != AK_SLAB_ARRAY && d != AK_SLAB_SHEAF &&
		    d != AK_SLAB_RSEQ_LIST)
			continue;	/* no inline fastpath to fix */
		snprintf(name, sizeof(name), "slab/%s/alloc/%s",
			 ak_slab_fastpath_name(d), entry_name[e]);
		c = slab_case(name, d, f);
		while (ak_rseq_check_begin(c)) {
			before = ak_kmem_cache_audit(s);
			p = do_alloc(s, e, d);
			after = ak_kmem_cache_audit(s);
			ak_rseq_check_end(c, p && after == before + 1,
					  "%ld objects held, then %ld (got %p)",
					  before, after, p);
			do_free(s, p, e, d);
		}
		snprintf(name, sizeof(name), "slab/%s/free/%s",
			 ak_slab_fastpath_name(d), entry_name[e]);
		c = slab_case(name, d, f);
		p = do_alloc(s, e, d);
		while (ak_rseq_check_begin(c)) {
			before = ak_kmem_cache_audit(s);
			do_free(s, p, e, d);
			after = ak_kmem_cache_audit(s);
			ak_rseq_check_end(c, after == before - 1,
					  "%ld objects held, then %ld", before,
					  after);
			p = do_alloc(s, e, d);
		}
		do_free(s, p, e, d);
	}
	/*
	 * Bulk: 3 objects, an odd count the per-CPU level has; or, as the
	 * second variant, more than a sheaf holds, which clamps.
	 */
	snprintf(name, sizeof(name), "slab/%s/alloc_bulk",
		 ak_slab_fastpath_name(d));
	c = slab_case(name, d, f);
	while (ak_rseq_check_begin(c)) {
		want = ak_rseq_check_variant(c) & 1 ? SLAB_BIG : SLAB_BULK;
		before = ak_kmem_cache_audit(s);
		n = ak_kmem_cache_alloc_bulk(s, 0, want, bulk);
		after = ak_kmem_cache_audit(s);
		ak_rseq_check_end(c, n == want && after == before + want,
				  "%ld objects held, then %ld (%d of %d"
				  " allocated)", before, after, n, want);
		ak_kmem_cache_free_bulk(s, n, bulk);
	}
	snprintf(name, sizeof(name), "slab/%s/free_bulk",
		 ak_slab_fastpath_name(d));
	c = slab_case(name, d, f);
	/* held throughout; a run frees the first n, made again after it */
	n = ak_kmem_cache_alloc_bulk(s, 0, SLAB_BIG, bulk);
	if (n != SLAB_BIG) {
		perror("ak_kmem_cache_alloc_bulk");
		exit(1);
	}
	while (ak_rseq_check_begin(c)) {
		want = ak_rseq_check_variant(c) & 1 ? SLAB_BIG : SLAB_BULK;
		before = ak_kmem_cache_audit(s);
		ak_kmem_cache_free_bulk(s, want, bulk);
		after = ak_kmem_cache_audit(s);
		ak_rseq_check_end(c, after == before - want,
				  "%ld objects held, then %ld (%d freed)",
				  before, after, want);
		if (ak_kmem_cache_alloc_bulk(s, 0, want, bulk) != want) {
			perror("ak_kmem_cache_alloc_bulk");
			exit(1);
		}
	}
	ak_kmem_cache_free_bulk(s, SLAB_BIG, bulk);
	for (i = 12; i < 16; i++)
		ak_kmem_cache_free(s, held[i]);
	if (ak_kmem_cache_destroy(s)) {
		perror("ak_kmem_cache_destroy");
		exit(1);
	}
}

int main(void)
{
	enum ak_percpu_mode m = ak_percpu_mode();
	cpu_set_t one;
	int cpu = sched_getcpu(), d;

	if (!ak_percpu_mode_is_rseq(m)) {
		printf("rseq_check_target: per-CPU mode %s is not an rseq"
		       " mode: nothing to check\n", ak_percpu_mode_name(m));
		return 77;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		perror("sched_setaffinity");	/* the cases still hold */
	counters();
	list();
	array();
	array_ptr();
	if (m == AK_PERCPU_RSEQ)
		rc_fixed_rseq();
	else
		rc_fixed_rseq_mm_cid();
	/*
	 * The out-of-line paths: the op area word as before the thread's
	 * registration (its rseq area, which those paths use, stays), then
	 * back, for the slab cases' inline fastpaths.
	 */
	__ak_rseq_op_area = AK_RSEQ_OP_NONE;
	rc_slow();
	if (m == AK_PERCPU_RSEQ)
		rc_fixed_rseq_slow();
	else
		rc_fixed_rseq_mm_cid_slow();
	__ak_rseq_op_area = (uintptr_t)ak_rseq_area();
	for (d = 0; d < AK_SLAB_NR_FASTPATHS; d++)
		if (d != AK_SLAB_LOCKED)
			slab(d);
	return ak_rseq_check_exit();
}
#endif
