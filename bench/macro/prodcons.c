// SPDX-License-Identifier: MIT
/*
 * prodcons: a group of producer threads that only allocate and a group of
 * consumer threads that only free.
 *
 * Of T threads, T / 2 produce and the rest consume.  Producers make the N
 * messages between them (numbers p, p + P, ...), 32 bytes to 32 KiB with
 * most of them small (P(size >= 32 << k) = 2^-k), and hand them 32 at a
 * time to a consumer picked by the batch's first message; consumers check
 * and free them.  Every free is remote, and the frees of one thread's
 * objects land on other threads, the case where a per-CPU cache fills on
 * one side and empties on the other, so that objects must travel back
 * through the allocator's shared levels.  Producers wait while too many
 * messages are on their way, so the memory in flight is bounded.
 *
 * Prints the messages, bytes and the sum of every message's pattern,
 * checked as it is freed: the same for any allocator, thread count and
 * interleaving.
 */
#define _GNU_SOURCE
#include "macro.h"

#define BATCH 32
#define MAX_IN_FLIGHT (32 * 1024)
#define MAX_CLASS 10

struct thread {
	unsigned id;		/* among the producers, or the consumers */
	int producer;
	struct tally tally;
};

static struct macro_opts opt;
static unsigned producers, consumers;
static struct mailbox mbox[MACRO_MAX_THREADS];
static _Atomic uint64_t unfreed;
static _Atomic uint64_t in_flight;

static uint64_t msg_size(uint64_t id)
{
	return tail_size(rnd(opt.seed, id, SALT_SIZE), MAX_CLASS);
}

static void *produce(void *arg)
{
	struct thread *t = arg;
	struct mobj *first, *last, *o;
	uint64_t id = t->id, size, bytes = 0;
	unsigned i, to;

	while (id < opt.n) {
		to = (unsigned)(rnd(opt.seed, id, SALT_PEER) % consumers);
		first = last = NULL;
		for (i = 0; i < BATCH && id < opt.n; i++, id += producers) {
			size = msg_size(id);
			o = mobj_alloc(opt.name, size);
			mobj_fill(o, id, size, opt.seed);
			bytes += size;
			if (last)
				last->next = o;
			else
				first = o;
			last = o;
		}
		atomic_fetch_add(&in_flight, i);
		mbox_push(&mbox[to], first, last);
		while (atomic_load(&in_flight) > MAX_IN_FLIGHT)
			sched_yield();
	}
	t->tally.bytes = bytes;
	return NULL;
}

static void *consume(void *arg)
{
	struct thread *t = arg;
	struct mobj *o, *next;
	uint64_t n, sum = 0;

	for (;;) {
		o = mbox_take(&mbox[t->id]);
		if (!o) {
			if (!atomic_load(&unfreed))
				break;
			sched_yield();
			continue;
		}
		for (n = 0; o; o = next, n++) {
			next = o->next;
			sum += mobj_check(opt.name, o, o->id,
					     msg_size(o->id), opt.seed);
			free(o);
		}
		atomic_fetch_sub(&in_flight, n);
		atomic_fetch_sub(&unfreed, n);
	}
	t->tally.sum = sum;
	return NULL;
}

static void *start(void *arg)
{
	struct thread *t = arg;

	return t->producer ? produce(t) : consume(t);
}

int main(int argc, char **argv)
{
	struct thread *t;
	unsigned i;

	parse_opts(&opt, argc, argv, 0, 0, 2,
		   "-t THREADS (2 or more) -n MESSAGES [-s SEED]");
	producers = opt.threads / 2;
	consumers = opt.threads - producers;
	t = calloc(opt.threads, sizeof(*t));
	if (!t)
		die(opt.name, "%s", "out of memory");
	for (i = 0; i < opt.threads; i++) {
		t[i].producer = i < producers;
		t[i].id = i < producers ? i : i - producers;
	}
	atomic_store(&unfreed, opt.n);
	run_threads(opt.name, opt.threads, start, t, sizeof(*t));
	print_tally("prodcons", "messages", opt.n, t, opt.threads, sizeof(*t),
		    offsetof(struct thread, tally));
	free(t);
	return 0;
}
