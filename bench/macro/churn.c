// SPDX-License-Identifier: MIT
/*
 * churn: server-style allocation, most objects freed by a thread other
 * than the one that made them.
 *
 * Each of T workers makes its share of N objects (numbers w, w + T, ...),
 * 32 to 511 bytes, as a server makes a buffer for each request.  One in
 * four it keeps in a table of its own, freeing the object it replaces
 * there (a local free, as for a connection's state); the others it hands,
 * 64 at a time, to another worker, which checks and frees them (a remote
 * free, as for a response sent by another thread).  A worker drains its
 * mailbox between batches, and waits for the others to drain theirs when
 * too many objects are on their way, so the memory in flight is bounded.
 *
 * Prints the objects, bytes, local and remote counts and the sum of every
 * object's pattern, checked as it is freed: the same for any allocator,
 * thread count and interleaving.
 */
#define _GNU_SOURCE
#include "macro.h"

#define BATCH 64
#define SLOTS 512
#define MAX_IN_FLIGHT (64 * 1024)

struct worker {
	unsigned id;
	uint64_t sum, bytes, local, remote;
	uint64_t freed;			/* local frees not yet counted down */
	struct mobj *slot[SLOTS];
	struct {
		struct mobj *first, *last;
		uint64_t n;
	} out[MACRO_MAX_THREADS];
};

static struct macro_opts opt;
static struct mailbox mbox[MACRO_MAX_THREADS];
static _Atomic uint64_t unfreed;	/* objects not yet freed */
static _Atomic uint64_t in_flight;	/* objects in mailboxes */

static uint64_t obj_size(uint64_t id)
{
	uint64_t r = rnd(opt.seed, id, SALT_SIZE);
	uint64_t base = 32ull << (r & 3);

	return base + (r >> 2) % base;
}

static void release(struct worker *w, struct mobj *o)
{
	w->sum += mobj_check(opt.name, o, o->id, obj_size(o->id), opt.seed);
	free(o);
}

/* Free what others sent; returns how many. */
static uint64_t drain(struct worker *w)
{
	struct mobj *o = mbox_take(&mbox[w->id]), *next;
	uint64_t n = 0;

	for (; o; o = next, n++) {
		next = o->next;
		release(w, o);
	}
	if (n) {
		atomic_fetch_sub(&in_flight, n);
		atomic_fetch_sub(&unfreed, n);
	}
	return n;
}

/* Send what was made for others; count down what was freed here. */
static void flush(struct worker *w)
{
	unsigned t;

	for (t = 0; t < opt.threads; t++) {
		if (!w->out[t].n)
			continue;
		/* counted before it can be freed, so never below zero */
		atomic_fetch_add(&in_flight, w->out[t].n);
		mbox_push(&mbox[t], w->out[t].first, w->out[t].last);
		w->out[t].first = w->out[t].last = NULL;
		w->out[t].n = 0;
	}
	if (w->freed) {
		atomic_fetch_sub(&unfreed, w->freed);
		w->freed = 0;
	}
}

static void make(struct worker *w, uint64_t id)
{
	uint64_t size = obj_size(id), fate = rnd(opt.seed, id, SALT_FATE);
	struct mobj *o = mobj_alloc(opt.name, size), **s;
	unsigned to;

	mobj_fill(o, id, size, opt.seed);
	w->bytes += size;
	if ((fate & 3) == 0) {
		s = &w->slot[(fate >> 2) % SLOTS];
		if (*s) {
			release(w, *s);
			w->freed++;
		}
		*s = o;
		w->local++;
		return;
	}
	to = (w->id + 1 + (unsigned)((fate >> 2) % (opt.threads - 1))) %
	     opt.threads;
	if (w->out[to].last)
		w->out[to].last->next = o;
	else
		w->out[to].first = o;
	w->out[to].last = o;
	w->out[to].n++;
	w->remote++;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t id = w->id;
	unsigned i;

	while (id < opt.n) {
		for (i = 0; i < BATCH && id < opt.n; i++, id += opt.threads)
			make(w, id);
		flush(w);
		drain(w);
		while (atomic_load(&in_flight) > MAX_IN_FLIGHT)
			if (!drain(w))
				sched_yield();
	}
	for (i = 0; i < SLOTS; i++) {
		if (w->slot[i]) {
			release(w, w->slot[i]);
			w->freed++;
		}
	}
	flush(w);
	while (atomic_load(&unfreed))
		if (!drain(w))
			sched_yield();
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;
	uint64_t sum = 0, bytes = 0, local = 0, remote = 0;
	unsigned t;

	parse_opts(&opt, argc, argv, 0, 0, 2,
		   "-t THREADS (2 or more) -n OBJECTS [-s SEED]");
	w = calloc(opt.threads, sizeof(*w));
	if (!w)
		die(opt.name, "%s", "out of memory");
	for (t = 0; t < opt.threads; t++)
		w[t].id = t;
	atomic_store(&unfreed, opt.n);
	run_threads(opt.name, opt.threads, work, w, sizeof(*w));
	for (t = 0; t < opt.threads; t++) {
		sum += w[t].sum;
		bytes += w[t].bytes;
		local += w[t].local;
		remote += w[t].remote;
	}
	free(w);
	printf("churn: objects %" PRIu64 " bytes %" PRIu64 " local %" PRIu64
	       " remote %" PRIu64 " checksum %016" PRIx64 "\n", opt.n, bytes,
	       local, remote, sum);
	return 0;
}
