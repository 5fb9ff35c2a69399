// SPDX-License-Identifier: MIT
/*
 * remotefree: a server's remote frees, in rounds.  Objects of mixed sizes
 * live in a table of R regions of L slots each; in every round each
 * region is worked by one thread, a different one from the round before,
 * so that most of what a thread frees was allocated by another thread
 * (the shape of the Larson benchmark: a server whose requests are served
 * by whichever thread is free, each freeing what earlier requests left).
 *
 * The N operations are numbered and dealt out to (round, region) pairs in
 * contiguous ranges, ROUNDS rounds of REGIONS regions; region g of round
 * r is worked by thread (g + r) mod T, and a barrier ends every round.
 * Operation i picks a slot of its region from i; the object there, if
 * any, is checked and freed; then, three times in four, object i (32 to
 * 1023 bytes, uniform) is made and put there, else the slot is left
 * empty.  At the end every region's survivors are checked and freed, by
 * another thread again.
 *
 * Prints the objects made, their bytes and the sum of every object's
 * pattern, each checked once: the same for any allocator, thread count
 * and interleaving, since what happens in a region depends on the
 * operations' numbers alone.
 */
#define _GNU_SOURCE
#include "macro.h"

#define REGIONS		64
#define ROUNDS		32
#define MIN_SIZE	32
#define MAX_SIZE	1024

struct thread {
	unsigned id;
	uint64_t made;		/* objects made */
	struct tally tally;
};

static struct macro_opts opt;
static uint64_t slots;		/* per region */
static struct mobj **table;	/* REGIONS * slots */
static pthread_barrier_t round_end;

static uint64_t obj_size(uint64_t id)
{
	return MIN_SIZE + rnd(opt.seed, id, SALT_SIZE) % (MAX_SIZE - MIN_SIZE);
}

/* Check and free what a slot holds; its pattern's sum. */
static uint64_t release(struct mobj **slot)
{
	struct mobj *o = *slot;
	uint64_t sum;

	if (!o)
		return 0;
	sum = mobj_check(opt.name, o, o->id, obj_size(o->id), opt.seed);
	free(o);
	*slot = NULL;
	return sum;
}

/* The operations of region g in round r. */
static void work_region(struct thread *t, unsigned r, unsigned g)
{
	uint64_t seg = (uint64_t)r * REGIONS + g, total = ROUNDS * REGIONS;
	uint64_t from = opt.n * seg / total, to = opt.n * (seg + 1) / total;
	struct mobj **region = table + (uint64_t)g * slots, **slot;
	uint64_t id, size;

	for (id = from; id < to; id++) {
		slot = &region[rnd(opt.seed, id, SALT_SLOT) % slots];
		t->tally.sum += release(slot);
		if (!(rnd(opt.seed, id, SALT_FATE) & 3))
			continue;
		size = obj_size(id);
		*slot = mobj_alloc(opt.name, size);
		mobj_fill(*slot, id, size, opt.seed);
		t->made++;
		t->tally.bytes += size;
	}
}

static void *work(void *arg)
{
	/* counted here, written back once: no false sharing between them */
	struct thread *out = arg, my = *out, *t = &my;
	unsigned r, g;
	uint64_t i;

	for (r = 0; r < ROUNDS; r++) {
		for (g = 0; g < REGIONS; g++)
			if ((g + r) % opt.threads == t->id)
				work_region(t, r, g);
		pthread_barrier_wait(&round_end);
	}
	/* the survivors, freed by the thread the next round would have had */
	for (g = 0; g < REGIONS; g++)
		if ((g + ROUNDS) % opt.threads == t->id)
			for (i = 0; i < slots; i++)
				t->tally.sum += release(&table[g * slots + i]);
	*out = my;
	return NULL;
}

int main(int argc, char **argv)
{
	struct thread *t;
	uint64_t made = 0;
	unsigned i;
	int err;

	parse_opts(&opt, argc, argv, 'l', 1ull << 20, 1,
		   "-t THREADS -n OPERATIONS [-l SLOTS PER REGION (1000)] [-s SEED]");
	slots = opt.extra ? opt.extra : 1000;
	table = calloc(REGIONS * slots, sizeof(*table));
	t = calloc(opt.threads, sizeof(*t));
	if (!table || !t)
		die(opt.name, "%s", "out of memory");
	err = pthread_barrier_init(&round_end, NULL, opt.threads);
	if (err)
		die(opt.name, "pthread_barrier_init: %s", strerror(err));
	for (i = 0; i < opt.threads; i++)
		t[i].id = i;
	run_threads(opt.name, opt.threads, work, t, sizeof(*t));
	for (i = 0; i < opt.threads; i++)
		made += t[i].made;
	print_tally("remotefree", "objects", made, t, opt.threads, sizeof(*t),
		    offsetof(struct thread, tally));
	pthread_barrier_destroy(&round_end);
	free(t);
	free(table);
	return 0;
}
