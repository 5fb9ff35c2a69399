// SPDX-License-Identifier: MIT
/*
 * falseshare: does the allocator put small objects of different threads
 * in one cache line?
 *
 * Two phases, each over N objects of 8 to 64 bytes, each object written W
 * times by one thread (a load and a store each time, which the compiler
 * must keep):
 *
 * - active: each of T threads allocates its objects one at a time,
 *   writes and frees each.  An allocator that serves threads from one
 *   shared pool hands neighbouring objects to different threads, and
 *   their writes fight over the line.
 * - passive: a dealer thread allocates a round of 16 objects per thread
 *   back to back and deals them out in turn (object j to thread j % T),
 *   so that neighbours belong to different threads; each thread writes
 *   its objects, frees them, then allocates as many of its own of the
 *   same size and writes those.  An allocator that hands a freed object
 *   back to the thread that freed it keeps the sharing going into the
 *   thread's own objects.
 *
 * The time is the figure; the output is the sum of every object's final
 * value, the same for any allocator and thread count.
 */
#define _GNU_SOURCE
#include "macro.h"

#define ROUND 16	/* objects per thread per passive round */

struct thread {
	unsigned id;
	uint64_t sum;	/* written once, at the end */
};

static struct macro_opts opt;
static uint64_t writes;
static pthread_barrier_t start_round, end_round;
static uint64_t rounds;
static void **dealt;			/* one passive round's objects */
static uint64_t dealt_n, dealt_first;	/* how many, and the first's number */
static size_t dealt_size;

static size_t small_size(uint64_t id)
{
	return (size_t)8 << (rnd(opt.seed, id, SALT_SIZE) & 3);
}

/* Write the object @writes times; return its final value. */
static uint64_t hammer(void *p, uint64_t id)
{
	volatile uint64_t *v = p;
	uint64_t i;

	*v = 0;
	for (i = 0; i < writes; i++)
		*v += id | 1;
	return *v;
}

static void *work(void *arg)
{
	struct thread *t = arg;
	uint64_t id, r, j, sum = 0;
	void *own[ROUND];
	unsigned k;

	for (id = t->id; id < opt.n; id += opt.threads) {
		void *p = mobj_alloc(opt.name, small_size(id));

		sum += hammer(p, id);
		free(p);
	}
	for (r = 0; r < rounds; r++) {
		pthread_barrier_wait(&start_round);
		k = 0;
		for (j = t->id; j < dealt_n; j += opt.threads) {
			sum += hammer(dealt[j], dealt_first + j);
			free(dealt[j]);
			own[k++] = mobj_alloc(opt.name, dealt_size);
		}
		for (j = t->id, k = 0; j < dealt_n; j += opt.threads) {
			sum += hammer(own[k], dealt_first + j + 1);
			free(own[k++]);
		}
		pthread_barrier_wait(&end_round);
	}
	t->sum = sum;
	return NULL;
}

static void *deal(void *arg)
{
	uint64_t r, j, per_round = (uint64_t)ROUND * opt.threads;

	(void)arg;
	for (r = 0; r < rounds; r++) {
		dealt_first = r * per_round;
		dealt_n = opt.n - dealt_first < per_round ?
				  opt.n - dealt_first : per_round;
		dealt_size = small_size(dealt_first);
		for (j = 0; j < dealt_n; j++)
			dealt[j] = mobj_alloc(opt.name, dealt_size);
		pthread_barrier_wait(&start_round);
		pthread_barrier_wait(&end_round);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct thread *t;
	pthread_t dealer;
	uint64_t sum = 0;
	unsigned i;
	int err;

	parse_opts(&opt, argc, argv, 'w', 1ull << 32,
		   1, "-t THREADS -n OBJECTS [-w WRITES (1000)] [-s SEED]");
	writes = opt.extra ? opt.extra : 1000;
	rounds = (opt.n + (uint64_t)ROUND * opt.threads - 1) /
		 ((uint64_t)ROUND * opt.threads);
	dealt = calloc((size_t)ROUND * opt.threads, sizeof(*dealt));
	t = calloc(opt.threads, sizeof(*t));
	if (!dealt || !t)
		die(opt.name, "%s", "out of memory");
	if (pthread_barrier_init(&start_round, NULL, opt.threads + 1) ||
	    pthread_barrier_init(&end_round, NULL, opt.threads + 1))
		die(opt.name, "%s", "pthread_barrier_init failed");
	for (i = 0; i < opt.threads; i++)
		t[i].id = i;
	err = pthread_create(&dealer, NULL, deal, NULL);
	if (err)
		die(opt.name, "pthread_create: %s", strerror(err));
	run_threads(opt.name, opt.threads, work, t, sizeof(*t));
	pthread_join(dealer, NULL);
	for (i = 0; i < opt.threads; i++)
		sum += t[i].sum;
	free(t);
	free(dealt);
	printf("falseshare: objects %" PRIu64 " writes %" PRIu64
	       " checksum %016" PRIx64 "\n", opt.n, writes, sum);
	return 0;
}
