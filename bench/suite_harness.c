// SPDX-License-Identifier: MIT
/*
 * The harness measuring itself (doc/benchmarks.md, "Harness overhead"):
 * the empty batched loop, the same loop crossing into Google Benchmark on
 * every iteration (batch 1, what an unbatched C binding would pay), and
 * one read of the selected counter.  Every other figure should be read
 * against these.
 */
#include "akbench.h"
#include "bench.h"
#include "counter.h"

static void bm_empty(struct akb_state *s)
{
	uint64_t n, i;

	akb_label(s, "empty loop, batches of 1000: the harness overhead");
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++)
			akb_clobber();
}

static void bm_unbatched(struct akb_state *s)
{
	uint64_t n, i;

	akb_label(s, "empty loop, one KeepRunningBatch() per iteration");
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++)
			akb_clobber();
}

static void bm_counter_read(struct akb_state *s)
{
	uint64_t n, i, t = 0;

	akb_label(s, akb_counter_info()->unit);
	while (akb_batch(s, &n))
		for (i = 0; i < n; i++) {
			t += akb_ticks();
			akb_keep(t);
		}
}

static struct akb_def *harness_new(const char *op, akb_fn fn)
{
	struct akb_def *d = akb_new("harness", fn, NULL, 0);

	akb_part(d, "op", op);
	return d;
}

void akb_suite_harness(void)
{
	harness_new("empty_loop", bm_empty);
	akb_set_batch(harness_new("unbatched_loop", bm_unbatched), 1);
	harness_new("counter_read", bm_counter_read);
}
