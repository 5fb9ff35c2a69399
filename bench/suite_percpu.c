// SPDX-License-Identifier: MIT
/*
 * The this_cpu_* operations in every per-CPU mode, one thread: what an
 * rseq critical section costs against the atomic fallback (an SMP-safe
 * operation on the slot of sched_getcpu()) and the per-thread slots.  A
 * mode this machine cannot run is reported as skipped with the reason.
 * The mode is switched per benchmark, which ak_percpu_set_mode() allows
 * while no per-CPU memory is allocated; each body allocates its own.
 */
#include <stdio.h>
#include <stdlib.h>

#include <atomkit/percpu.h>

#include "akbench.h"
#include "bench.h"

enum op {
	OP_READ, OP_WRITE, OP_ADD, OP_ADD_RETURN, OP_XCHG, OP_CMPXCHG,
	OP_TRY_CMPXCHG, OP_CMPXCHG128, OP_LIST, OP_ARRAY, OP_NR
};

static const char *const op_names[OP_NR] = {
	"read", "write", "add", "add_return", "xchg", "cmpxchg",
	"try_cmpxchg", "cmpxchg128", "list_pop_push", "array_push_pop",
};

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

static void run_op(struct akb_state *s, enum op op)
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
		     w = ak_this_cpu_cmpxchg128(p, w, w + 1); akb_keep(v));
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
	default:
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
	run_op(s, b->op);
	snprintf(label, sizeof(label), "mode %s, %lu rseq aborts",
		 ak_percpu_mode_name(b->mode), ak_rseq_aborts() - a0);
	akb_label(s, label);
}

void akb_suite_percpu(void)
{
	char name[128];
	int op, m;
	struct pc_bench *b = table;

	for (op = 0; op < OP_NR; op++)
		for (m = 0; m < AK_PERCPU_NR_MODES; m++, b++) {
			const char *why = NULL;
			struct akb_def *d;

			b->op = (enum op)op;
			b->mode = (enum ak_percpu_mode)m;
			snprintf(name, sizeof(name), "percpu/%s/%s",
				 op_names[op],
				 ak_percpu_mode_name((enum ak_percpu_mode)m));
			d = akb_new(name, bm_percpu, b, 0);
			akb_field(d, "suite", "percpu");
			akb_field(d, "op", op_names[op]);
			akb_field(d, "mode", ak_percpu_mode_name(b->mode));
			if (!ak_percpu_mode_available(b->mode, &why))
				akb_skip_always(d, AKB_SKIP_PERCPU_MODE, why);
		}
}
