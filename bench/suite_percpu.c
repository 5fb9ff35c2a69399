// SPDX-License-Identifier: MIT
/*
 * The this_cpu_* operations in every per-CPU mode, one thread: what an
 * rseq critical section costs against the atomic fallback (an SMP-safe
 * operation on the slot of sched_getcpu()) and the per-thread slots.  A
 * mode this machine cannot run is reported as skipped with the reason.
 * The mode is switched per benchmark, which ak_percpu_set_mode() allows
 * while no per-CPU memory is allocated; each body allocates its own.
 *
 * Besides the ops one by one, the pairs each slab design's fastpath runs
 * for one alloc and one free, in the shape of slab/pair (one pop, then
 * one push of what it popped, per iteration), so that a design's pair
 * can be set beside the primitives under it (doc/benchmarks.md,
 * "Fastpath primitives"):
 *
 *   list_pop_push, array_push_pop   the this_cpu list and array ops
 *   array_ptr_pop_push              the array_ptr ops (rseq modes only)
 *   tid_pop_push                    slub-tid: {freelist, tid} snapshot,
 *                                   this_cpu_try_cmpxchg128
 *   local_pop_push                  slub-local: the same snapshot on the
 *                                   slot pinned first, committed as its
 *                                   mode does (rseq: this_cpu_try_
 *                                   cmpxchg128; atomic: cmpxchg128 on the
 *                                   slot; thread: cmpxchg128_local)
 *   *_section                       the rseq sections alone, called as a
 *                                   design's own entry points call them
 *                                   (no mode switch, no registration
 *                                   check): rseq-list, array, sheaf;
 *                                   list_pop_push_owned_section is
 *                                   rseq-list's, whose push checks the
 *                                   slot's slab (its owner word)
 *
 * And beside every this_cpu op, <op>_section: the same work done by the
 * op's rseq section(s) alone, as a hand-written port would run them (the
 * thread's rseq area and the mode's id field taken once, before the
 * loop; the section reads the id and computes the copy itself; no mode
 * to test, no registration to check), so that each set shows what the
 * API costs over its section (doc/benchmarks.md, "The API over its
 * sections").  read has no section: its row is the load of the copy the
 * mode's id field names.
 */
#include <stdio.h>
#include <stdlib.h>

#include <atomkit/percpu.h>

#include "akbench.h"
#include "bench.h"

enum op {
	OP_READ, OP_WRITE, OP_ADD, OP_ADD_RETURN, OP_XCHG, OP_CMPXCHG,
	OP_TRY_CMPXCHG, OP_CMPXCHG128, OP_LIST, OP_ARRAY, OP_ARRAY_PTR,
	OP_TID_PAIR, OP_LOCAL_PAIR, OP_LIST_SECTION, OP_ARRAY_SECTION,
	OP_ARRAY_PTR_SECTION,
	/* each API op's own section(s), bare: the op's raw cost */
	OP_READ_RAW, OP_WRITE_RAW, OP_ADD_RAW, OP_ADD_RETURN_RAW,
	OP_XCHG_RAW, OP_CMPXCHG_RAW, OP_TRY_CMPXCHG_RAW, OP_CMPXCHG128_RAW,
	OP_ARRAY_RAW,
	/* rseq-list's pair: the pop, then the push that checks the owner */
	OP_LIST_OWNED_SECTION, OP_NR
};

static const char *const op_names[OP_NR] = {
	"read", "write", "add", "add_return", "xchg", "cmpxchg",
	"try_cmpxchg", "cmpxchg128", "list_pop_push", "array_push_pop",
	"array_ptr_pop_push", "tid_pop_push", "local_pop_push",
	"list_pop_push_section", "array_pop_push_section",
	"array_ptr_pop_push_section",
	"read_section", "write_section", "add_section", "add_return_section",
	"xchg_section", "cmpxchg_section", "try_cmpxchg_section",
	"cmpxchg128_section", "array_push_pop_section",
	"list_pop_push_owned_section",
};

/* The ops that exist in the rseq modes only. */
static bool rseq_only(enum op op)
{
	return op >= OP_ARRAY_PTR && op != OP_TID_PAIR && op != OP_LOCAL_PAIR;
}

struct pc_bench {
	enum op op;
	enum ak_percpu_mode mode;
};

static struct pc_bench table[OP_NR * AK_PERCPU_NR_MODES];

#define LOOP(body)							\
	while (akb_batch(s, &n))					\
		for (i = 0; i < n; i++) {				\
			body;						\
		}

/*
 * slub-tid's and slub-local's per-CPU freelist: {freelist, tid} as one
 * 16-byte pair, tids unique per slot (tid = slot mod step), and one node
 * per slot on it to pop and push back.
 */
struct tid_cpu {
	union {
		ak_u128 pair;
		struct {
			void *freelist;
			unsigned long tid;
		};
	};
} __attribute__((aligned(64)));

struct tid_list {
	struct tid_cpu *pcp;
	void **nodes;
	unsigned long step;
};

static bool tid_list_init(struct tid_list *t)
{
	unsigned int cpu, n = ak_nr_cpus();

	t->pcp = ak_percpu_alloc(sizeof(struct tid_cpu), 64);
	t->nodes = calloc(n, sizeof(void *));
	if (!t->pcp || !t->nodes) {
		ak_percpu_free(t->pcp);
		free(t->nodes);
		return false;
	}
	for (t->step = 1; t->step < n; t->step <<= 1)
		;
	ak_for_each_cpu(cpu) {
		struct tid_cpu *c = ak_per_cpu_ptr(t->pcp, cpu);

		c->freelist = &t->nodes[cpu];	/* its link: NULL */
		c->tid = cpu;
	}
	return true;
}

static void tid_list_fini(struct tid_list *t)
{
	ak_percpu_free(t->pcp);
	free(t->nodes);
}

/* {head, tid} -> {nhead, tid + step}: the commit of slub-tid (local
 * false) or slub-local (local true) in mode m, as slab/slub.c runs it. */
static inline bool tid_commit(struct tid_list *t, bool local,
			      enum ak_percpu_mode m, struct tid_cpu *c,
			      void *head, unsigned long tid, void *nhead)
{
	ak_u128 o = ak_u128_from_words((uintptr_t)head, tid);
	ak_u128 nw = ak_u128_from_words((uintptr_t)nhead, tid + t->step);

	if (local && m == AK_PERCPU_THREAD)
		return ak_try_cmpxchg128_local(&c->pair, &o, nw);
	if (local && m == AK_PERCPU_ATOMIC)
		return ak_try_cmpxchg128(&c->pair, &o, nw);
	return ak_this_cpu_try_cmpxchg128(&t->pcp->pair, &o, nw);
}

/* The slot's {freelist, tid}, tid read first, as slab/slub.c reads it. */
static inline struct tid_cpu *tid_snap(struct tid_list *t,
				       unsigned long *tid, void **head)
{
	struct tid_cpu *c = ak_this_cpu_ptr(t->pcp);

	*tid = __atomic_load_n(&c->tid, __ATOMIC_RELAXED);
	akb_clobber();
	*head = __atomic_load_n(&c->freelist, __ATOMIC_RELAXED);
	return c;
}

static inline void *tid_pop(struct tid_list *t, bool local,
			    enum ak_percpu_mode m)
{
	struct tid_cpu *c;
	unsigned long tid;
	void *fp;

	for (;;) {
		c = tid_snap(t, &tid, &fp);
		if (!fp)
			return NULL;
		if (tid_commit(t, local, m, c, fp, tid,
			       *(void *volatile *)fp))
			return fp;
	}
}

static inline void tid_push(struct tid_list *t, bool local,
			    enum ak_percpu_mode m, void *fp)
{
	struct tid_cpu *c;
	unsigned long tid;
	void *head;

	do {
		c = tid_snap(t, &tid, &head);
		*(void *volatile *)fp = head;
	} while (!tid_commit(t, local, m, c, head, tid, fp));
}

static void run_tid_pair(struct akb_state *s, bool local,
			 enum ak_percpu_mode m)
{
	struct tid_list t;
	uint64_t n, i;

	if (!tid_list_init(&t)) {
		akb_fail(s, "out of per-CPU memory");
		return;
	}
	LOOP(void *o = tid_pop(&t, local, m); if (o) tid_push(&t, local, m, o));
	tid_list_fini(&t);
}

/*
 * The array_ptr layout (sheaf's main): each slot points to an array of
 * its own, which holds one object to pop and push back.
 */
#define AP_LIMIT	16

struct ap_array {
	unsigned long count;
	void *slots[AP_LIMIT];
};

static void **ap_init(struct ap_array **arrays)
{
	unsigned int cpu;
	void **pcp = ak_percpu_alloc(sizeof(void *), 64);
	static int obj;

	*arrays = calloc(ak_nr_cpus(), sizeof(**arrays));
	if (!pcp || !*arrays) {
		ak_percpu_free(pcp);
		free(*arrays);
		return NULL;
	}
	ak_for_each_cpu(cpu) {
		(*arrays)[cpu].count = 1;
		(*arrays)[cpu].slots[0] = &obj;
		*ak_per_cpu_ptr(pcp, cpu) = &(*arrays)[cpu];
	}
	return pcp;
}

/*
 * The sections as the designs' rseq entry points run them: the thread's
 * rseq area and the mode's id field taken once (kept in registers), the
 * base and stride read from memory by the section; an abort is counted
 * and the op run again.
 */
struct sect {
	struct ak_rseq_abi *rs;
	const uint32_t *idp;
	void *base;
	size_t stride;
};

static void sect_init(struct sect *x, void *pcp, enum ak_percpu_mode m)
{
	(void)ak_this_cpu_ptr((char *)pcp);	/* registers the thread */
	x->rs = ak_rseq_area();
	x->idp = ak_rseq_id_field(x->rs, m);
	x->base = pcp;
	x->stride = ak_percpu_stride(pcp);
}

#define SECT(call)							\
	({								\
		int __rc;						\
		while ((__rc = (call)) < 0)				\
			ak_rseq_count_abort();				\
		__rc;							\
	})

/*
 * This CPU's copy as the mode's id field names it now (a hint, as
 * ak_this_cpu_ptr() is): for read, which has no section, and for the
 * value a cmpxchg section then compares.
 */
static inline uint64_t *sect_copy(const struct sect *x,
				  const uint32_t *idp)
{
	return (uint64_t *)((char *)x->base + (size_t)__atomic_load_n(
		idp, __ATOMIC_RELAXED) * x->stride);
}

/* this_cpu_xchg's work: the value read, swapped for nv by cmpxchg. */
static inline uint64_t sect_xchg(struct sect *x, struct ak_rseq_abi *rs,
				 const uint32_t *idp, uint64_t nv)
{
	uint64_t o, seen;

	do
		o = *(volatile uint64_t *)sect_copy(x, idp);
	while (SECT(ak_rseq_cmpxchg64(rs, idp, &x->base, &x->stride, o, nv,
				      &seen)));
	return o;
}

/*
 * The word ops' sections: write, add, and cmpxchg on the value read
 * first.
 */
static void run_word_sections(struct akb_state *s, enum op op,
			      enum ak_percpu_mode m)
{
	uint64_t n, i, v = 0, o;
	ak_u128 *q, w, seen;
	const uint32_t *idp;
	struct ak_rseq_abi *rs;
	struct sect x;
	uint64_t *p;

	if (op == OP_CMPXCHG128_RAW) {
		q = ak_percpu_alloc(sizeof(*q), 16);
		if (!q) {
			akb_fail(s, "out of per-CPU memory");
			return;
		}
		sect_init(&x, q, m);
		rs = x.rs;
		idp = x.idp;
		/* the section alone, as the op runs it: q is aligned */
		LOOP(w = *(volatile ak_u128 *)(void *)sect_copy(&x, idp);
		     SECT(__ak_rseq_cmpxchg128(rs, idp, &x.base, &x.stride,
					       w, w + 1, &seen)));
		ak_percpu_free(q);
		return;
	}
	p = ak_percpu_alloc(sizeof(*p), 8);
	if (!p) {
		akb_fail(s, "out of per-CPU memory");
		return;
	}
	sect_init(&x, p, m);
	rs = x.rs;
	idp = x.idp;
	switch (op) {
	case OP_READ_RAW:
		LOOP(v += *(volatile uint64_t *)sect_copy(&x, idp); akb_keep(v));
		break;
	case OP_ADD_RAW:
		LOOP(SECT(ak_rseq_add64(rs, idp, &x.base, &x.stride, 1,
					&o)));
		break;
	case OP_ADD_RETURN_RAW:
		LOOP(SECT(ak_rseq_add64(rs, idp, &x.base, &x.stride,
					(v & 1) + 1, &o));
		     v = o + (v & 1) + 1);
		break;
	case OP_WRITE_RAW:
		LOOP(SECT(ak_rseq_write64(rs, idp, &x.base, &x.stride, i)));
		break;
	case OP_XCHG_RAW:
		LOOP(v = sect_xchg(&x, rs, idp, v + 1));
		break;
	case OP_CMPXCHG_RAW:
	case OP_TRY_CMPXCHG_RAW:
		LOOP(v = *(volatile uint64_t *)sect_copy(&x, idp);
		     SECT(ak_rseq_cmpxchg64(rs, idp, &x.base, &x.stride, v,
					    v + 1, &o));
		     v = o);
		break;
	default:
		break;
	}
	ak_percpu_free(p);
}

/* an object's slab, as rseq-list's slab_mask gives it (any power of two) */
#define OWNER_MASK	(~(uintptr_t)4095)

static void run_sections(struct akb_state *s, enum op op,
			 enum ak_percpu_mode m)
{
	struct ak_percpu_list *l;
	struct ak_percpu_array *a;
	struct ap_array *arrays;
	static void *node[2];	/* readable while on a list */
	static int obj;
	const uint32_t *idp;
	struct ak_rseq_abi *rs;
	struct sect x;
	uint64_t n, i;
	unsigned int cpu;
	void **pp, *o;

	switch (op) {
	case OP_LIST_SECTION:
		l = ak_percpu_alloc(sizeof(*l), 16);
		if (!l)
			break;
		ak_this_cpu_list_push(l, &node[0]);
		sect_init(&x, l, m);
		rs = x.rs;
		idp = x.idp;
		LOOP(if (!SECT(ak_rseq_list_pop(rs, idp, &x.base,
						&x.stride, &o)))
			SECT(ak_rseq_list_push(rs, idp, &x.base,
					       &x.stride, o)));
		ak_percpu_free(l);
		return;
	case OP_LIST_OWNED_SECTION:
		/* rseq-list's copy: the list, then its slab at +16 */
		l = ak_percpu_alloc(sizeof(*l) + 16, 16);
		if (!l)
			break;
		ak_for_each_cpu(cpu)
			((uintptr_t *)ak_per_cpu_ptr(l, cpu))[2] =
				(uintptr_t)&node[0] & OWNER_MASK;
		ak_this_cpu_list_push(l, &node[0]);
		sect_init(&x, l, m);
		rs = x.rs;
		idp = x.idp;
		LOOP(if (!SECT(ak_rseq_list_pop(rs, idp, &x.base,
						&x.stride, &o)))
			SECT(ak_rseq_list_push_owned(rs, idp, &x.base,
				&x.stride, (uintptr_t)o & OWNER_MASK, o)));
		ak_percpu_free(l);
		return;
	case OP_ARRAY_SECTION:
		a = ak_percpu_alloc(ak_percpu_array_size(AP_LIMIT), 64);
		if (!a)
			break;
		ak_this_cpu_array_push(a, AP_LIMIT, &obj);
		sect_init(&x, a, m);
		rs = x.rs;
		idp = x.idp;
		LOOP(if (!SECT(ak_rseq_array_pop(rs, idp, &x.base,
						 &x.stride, &o)))
			SECT(ak_rseq_array_push(rs, idp, &x.base,
						&x.stride, AP_LIMIT, o)));
		ak_percpu_free(a);
		return;
	case OP_ARRAY_PTR_SECTION:
		pp = ap_init(&arrays);
		if (!pp)
			break;
		sect_init(&x, pp, m);
		rs = x.rs;
		idp = x.idp;
		LOOP(if (!SECT(ak_rseq_array_ptr_pop(rs, idp, &x.base,
						     &x.stride, &o)))
			SECT(ak_rseq_array_ptr_push(rs, idp, &x.base,
						    &x.stride, AP_LIMIT, o)));
		ak_percpu_free(pp);
		free(arrays);
		return;
	case OP_ARRAY_RAW:
		a = ak_percpu_alloc(ak_percpu_array_size(AP_LIMIT), 64);
		if (!a)
			break;
		sect_init(&x, a, m);
		rs = x.rs;
		idp = x.idp;
		LOOP(if (!SECT(ak_rseq_array_push(rs, idp, &x.base,
						  &x.stride, AP_LIMIT, &obj)))
			SECT(ak_rseq_array_pop(rs, idp, &x.base,
					       &x.stride, &o)));
		ak_percpu_free(a);
		return;
	default:
		run_word_sections(s, op, m);
		return;
	}
	akb_fail(s, "out of per-CPU memory");
}

static void run_op(struct akb_state *s, enum op op, enum ak_percpu_mode m)
{
	uint64_t n, i, v = 0;

	switch (op) {
	case OP_READ: {
		uint64_t *p = ak_percpu_alloc(sizeof(*p), 8);

		LOOP(v += ak_this_cpu_read(p); akb_keep(v));
		ak_percpu_free(p);
		break;
	}
	case OP_WRITE: {
		uint64_t *p = ak_percpu_alloc(sizeof(*p), 8);

		LOOP(ak_this_cpu_write(p, i));
		ak_percpu_free(p);
		break;
	}
	case OP_ADD: {
		uint64_t *p = ak_percpu_alloc(sizeof(*p), 8);

		LOOP(ak_this_cpu_add(p, 1));
		ak_percpu_free(p);
		break;
	}
	case OP_ADD_RETURN: {
		uint64_t *p = ak_percpu_alloc(sizeof(*p), 8);

		LOOP(v = ak_this_cpu_add_return(p, (v & 1) + 1));
		ak_percpu_free(p);
		break;
	}
	case OP_XCHG: {
		uint64_t *p = ak_percpu_alloc(sizeof(*p), 8);

		LOOP(v = ak_this_cpu_xchg(p, v + 1));
		ak_percpu_free(p);
		break;
	}
	case OP_CMPXCHG: {
		uint64_t *p = ak_percpu_alloc(sizeof(*p), 8);

		/* the slot's value, so the CAS succeeds unless we migrated */
		LOOP(v = ak_this_cpu_read(p);
		     v = ak_this_cpu_cmpxchg(p, v, v + 1));
		ak_percpu_free(p);
		break;
	}
	case OP_TRY_CMPXCHG: {
		uint64_t *p = ak_percpu_alloc(sizeof(*p), 8);

		LOOP(v = ak_this_cpu_read(p);
		     ak_this_cpu_try_cmpxchg(p, &v, v + 1));
		ak_percpu_free(p);
		break;
	}
	case OP_CMPXCHG128: {
		ak_u128 *p = ak_percpu_alloc(sizeof(*p), 16), w;

		LOOP(w = ak_this_cpu_read(p);
		     w = ak_this_cpu_cmpxchg128(p, w, w + 1));
		ak_percpu_free(p);
		break;
	}
	case OP_LIST: {
		struct ak_percpu_list *l = ak_percpu_alloc(sizeof(*l), 16);
		static void *node[2];	/* readable while on a list */

		ak_this_cpu_list_push(l, &node[0]);
		LOOP(void *o = ak_this_cpu_list_pop(l);
		     if (o) ak_this_cpu_list_push(l, o));
		ak_percpu_free(l);
		break;
	}
	case OP_ARRAY: {
		struct ak_percpu_array *a =
			ak_percpu_alloc(ak_percpu_array_size(16), 64);
		static int obj;

		LOOP(if (!ak_this_cpu_array_push(a, 16, &obj))
			ak_this_cpu_array_pop(a));
		ak_percpu_free(a);
		break;
	}
	case OP_ARRAY_PTR: {
		struct ap_array *arrays;
		void **pp = ap_init(&arrays), *o;

		if (!pp) {
			akb_fail(s, "out of per-CPU memory");
			break;
		}
		LOOP(if ((o = ak_this_cpu_array_ptr_pop(pp)))
			ak_this_cpu_array_ptr_push(pp, AP_LIMIT, o));
		ak_percpu_free(pp);
		free(arrays);
		break;
	}
	case OP_TID_PAIR:
	case OP_LOCAL_PAIR:
		run_tid_pair(s, op == OP_LOCAL_PAIR, m);
		break;
	default:
		run_sections(s, op, m);	/* the bare sections */
		break;
	}
}

static void bm_percpu(struct akb_state *s)
{
	const struct pc_bench *b = akb_arg(s);
	unsigned long a0 = ak_rseq_aborts();
	char label[96];

	if (ak_percpu_set_mode(b->mode)) {
		akb_fail(s, "could not switch the per-CPU mode");
		return;
	}
	run_op(s, b->op, b->mode);
	snprintf(label, sizeof(label), "mode %s, %lu rseq aborts",
		 ak_percpu_mode_name(b->mode), ak_rseq_aborts() - a0);
	akb_label(s, label);
}

/*
 * The order the rows run in: each op right before its bare section(s),
 * so that the two are timed seconds apart, not minutes.  On a shared
 * host the speed of the machine itself drifts over minutes (whole
 * phases of a run slower by 1.5-2x), and an op and its section timed in
 * different phases gave ratios from 0.46x to 2.1x where, side by side,
 * both ran at the same cost.
 */
static const enum op run_order[OP_NR] = {
	OP_READ, OP_READ_RAW, OP_WRITE, OP_WRITE_RAW, OP_ADD, OP_ADD_RAW,
	OP_ADD_RETURN, OP_ADD_RETURN_RAW, OP_XCHG, OP_XCHG_RAW,
	OP_CMPXCHG, OP_CMPXCHG_RAW, OP_TRY_CMPXCHG, OP_TRY_CMPXCHG_RAW,
	OP_CMPXCHG128, OP_CMPXCHG128_RAW, OP_LIST, OP_LIST_SECTION,
	OP_LIST_OWNED_SECTION, OP_ARRAY, OP_ARRAY_RAW, OP_ARRAY_SECTION,
	OP_ARRAY_PTR, OP_ARRAY_PTR_SECTION, OP_TID_PAIR, OP_LOCAL_PAIR,
};

void akb_suite_percpu(void)
{
	unsigned long long seen = 0;
	struct pc_bench *b = table;
	int k, m;

	for (k = 0; k < OP_NR; k++) {
		enum op op = run_order[k];

		seen |= 1ULL << op;
		for (m = 0; m < AK_PERCPU_NR_MODES; m++, b++) {
			const char *why = NULL;
			struct akb_def *d;

			b->op = op;
			b->mode = (enum ak_percpu_mode)m;
			d = akb_new("percpu", bm_percpu, b, 0);
			akb_part(d, "op", op_names[op]);
			akb_part(d, "mode", ak_percpu_mode_name(b->mode));
			if (!ak_percpu_mode_available(b->mode, &why))
				akb_skip_always(d, AKB_SKIP_PERCPU_MODE, why);
			else if (rseq_only(b->op) &&
				 !ak_percpu_mode_is_rseq(b->mode))
				akb_skip_always(d, AKB_SKIP_RSEQ_ONLY, NULL);
		}
	}
	/* an op left out of run_order would never run: stop at once */
	if (seen != (1ULL << OP_NR) - 1) {
		fprintf(stderr, "atomkit-bench: percpu: run_order lists "
			"%d of the %d ops\n", __builtin_popcountll(seen), OP_NR);
		abort();
	}
}
