// SPDX-License-Identifier: MIT
/*
 * mixloop: a tight allocation loop over many size classes, each thread on
 * its own.  Each of T threads runs its share of N operations (a
 * contiguous range of numbers) over a working set of L slots of its own;
 * operation i frees the object in the slot picked from i (checking it)
 * and makes object i in its place, of 32 bytes to 4 KiB: class k (32 << k
 * up to twice that, k = 0..6) with probability 2^-(k+1), the last taking
 * the rest, so that most objects are small but every class from the
 * smallest to a page is asked for all the time.  Nothing leaves the
 * thread that made it: what it measures is the allocator's own path, its
 * per-thread (or per-CPU) caches against a working set that does not fit
 * one slab per class.  Run with one thread and with two.
 *
 * Prints the objects, bytes and the sum of every object's pattern,
 * checked once: the same for any allocator, thread count and
 * interleaving.
 */
#define _GNU_SOURCE
#include "macro.h"

#define MAX_CLASS 6

static struct macro_opts opt;
static uint64_t slots;

static uint64_t obj_size(uint64_t id)
{
	return tail_size(rnd(opt.seed, id, SALT_SIZE), MAX_CLASS);
}

static void *work(void *arg)
{
	struct op_range *t = arg;
	struct mobj **slot = calloc(slots, sizeof(*slot)), *old;
	uint64_t id, size, sum = 0, bytes = 0, i;

	if (!slot)
		die(opt.name, "%s", "out of memory");
	for (id = t->from; id < t->to; id++) {
		i = rnd(opt.seed, id, SALT_SLOT) % slots;
		old = slot[i];
		if (old) {
			sum += mobj_check(opt.name, old, old->id,
					  obj_size(old->id), opt.seed);
			free(old);
		}
		size = obj_size(id);
		bytes += size;
		slot[i] = mobj_alloc(opt.name, size);
		mobj_fill(slot[i], id, size, opt.seed);
	}
	sum += slots_drain(opt.name, slot, slots, opt.seed, obj_size);
	t->tally.sum = sum;
	t->tally.bytes = bytes;
	return NULL;
}

int main(int argc, char **argv)
{
	parse_opts(&opt, argc, argv, 'l', 1ull << 24, 1,
		   "-t THREADS -n OPERATIONS [-l SLOTS (1000)] [-s SEED]");
	slots = opt.extra ? opt.extra : 1000;
	run_ranges(&opt, "mixloop", work);
	return 0;
}
