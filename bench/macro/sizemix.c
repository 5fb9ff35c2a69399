// SPDX-License-Identifier: MIT
/*
 * sizemix: sizes from a heavy-tailed distribution, from 32 bytes to
 * 2 MiB, in a live set that keeps changing.
 *
 * Each of T threads runs its share of N operations (a contiguous range of
 * numbers) over a table of L slots of its own.  Operation i makes object
 * i, of 32 << k bytes plus up to as much again, where class k is taken
 * with probability 2^-(k+1) (k = 0..15, the last taking the rest): the
 * probability of a size of at least s falls as 1/s, as with the sizes
 * real programs ask for, most of them small, a few huge, most bytes in
 * the tail.  It goes into a slot picked from i; the slot's previous
 * object is checked and freed, or, one time in eight, grown or shrunk in
 * place by realloc (the kept prefix checked) and refilled.  The largest
 * classes cross every allocator's size thresholds: size classes, large
 * objects, mmap.  All computed in integers, the same on every arch.
 *
 * Prints the objects, bytes and the sum of every object's pattern,
 * checked once: the same for any allocator, thread count and interleaving.
 */
#define _GNU_SOURCE
#include "macro.h"

#define MAX_CLASS 15

static struct macro_opts opt;
static uint64_t slots;

static uint64_t obj_size(uint64_t id)
{
	return tail_size(rnd(opt.seed, id, SALT_SIZE), MAX_CLASS);
}

static void *work(void *arg)
{
	struct op_range *t = arg;
	struct mobj **slot = calloc(slots, sizeof(*slot)), *o, *old;
	uint64_t id, size, old_size, sum = 0, bytes = 0, i;

	if (!slot)
		die(opt.name, "%s", "out of memory");
	for (id = t->from; id < t->to; id++) {
		size = obj_size(id);
		bytes += size;
		i = rnd(opt.seed, id, SALT_SLOT) % slots;
		old = slot[i];
		if (old && !(rnd(opt.seed, id, SALT_FATE) & 7)) {
			old_size = obj_size(old->id);
			sum += mobj_check(opt.name, old, old->id, old_size,
					  opt.seed);
			o = realloc(old, size);
			if (!o) {
				fprintf(stderr, "%s: realloc(%" PRIu64
					") failed\n", opt.name, size);
				exit(1);
			}
			mobj_check_upto(opt.name, o, o->id, old_size, opt.seed,
					size < old_size ? size : old_size);
		} else {
			if (old) {
				sum += mobj_check(opt.name, old, old->id,
						  obj_size(old->id), opt.seed);
				free(old);
			}
			o = mobj_alloc(opt.name, size);
		}
		mobj_fill(o, id, size, opt.seed);
		slot[i] = o;
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
	run_ranges(&opt, "sizemix", work);
	return 0;
}
