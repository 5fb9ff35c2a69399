/* SPDX-License-Identifier: MIT */
/*
 * What the synthetic macro workloads share (doc/benchmarks.md, "Whole
 * programs"): a seeded mixer for sizes and contents, the options, object
 * patterns that the freeing side checks, a mailbox that many threads push
 * to and one drains, and starting threads.
 *
 * An object's size and contents are a function of the seed and its number
 * alone, never of the thread that made it or of when, and each object is
 * checked exactly once, so the totals a workload prints are the same under
 * every allocator, thread count and interleaving: the runner compares them
 * with glibc's, and the quick test with a fixture on every arch.  Words
 * are written and read as 64-bit values (never as bytes), so the totals do
 * not depend on byte order either.
 *
 * These programs call malloc and free and nothing of atomkit: the
 * allocator under test is whatever the process was started with
 * (LD_PRELOAD).
 */
#ifndef AK_MACRO_H
#define AK_MACRO_H

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* More would only oversubscribe; the mailboxes are a fixed array. */
#define MACRO_MAX_THREADS 256

/* splitmix64's finaliser: a bijection, so distinct numbers never collide */
static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Independent streams for one object: its size, its fate, its content. */
enum { SALT_SIZE = 1, SALT_FATE, SALT_SLOT, SALT_TAG, SALT_PEER };

static inline uint64_t rnd(uint64_t seed, uint64_t id, unsigned salt)
{
	return mix64(mix64(seed + salt) ^ id);
}

/*
 * A size from a heavy-tailed distribution, for the draw @r: class k
 * (0 to @max_class) with probability 2^-(k+1), the last class taking the
 * rest, then uniform in [32 << k, 64 << k): P(size >= s) falls as 1/s.
 */
static inline uint64_t tail_size(uint64_t r, unsigned max_class)
{
	unsigned k = 0;

	while (k < max_class && !(r & (1ull << k)))
		k++;
	return (32ull << k) + (r >> 16) % (32ull << k);
}

struct macro_opts {
	const char *name;	/* the program, for messages */
	unsigned threads;	/* -t */
	uint64_t n;		/* -n: objects or operations in all */
	uint64_t seed;		/* -s */
	uint64_t extra;		/* the workload's own option, if any */
};

static inline void die(const char *name, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", name);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

/* A whole decimal number in [1, max]; anything else is refused. */
static inline uint64_t parse_num(const char *name, char opt, const char *s,
				 uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < 1 || v > max) {
		fprintf(stderr, "%s: -%c '%s': expected a number from 1 to %"
			PRIu64 "\n", name, opt, s, max);
		exit(2);
	}
	return v;
}

/*
 * -t THREADS -n COUNT [-s SEED] [-X VALUE], where X is the workload's own
 * letter (0 for none); every one but -s and -X is required.
 */
static inline void parse_opts(struct macro_opts *o, int argc, char **argv,
			      char extra, uint64_t extra_max,
			      unsigned min_threads, const char *usage)
{
	int i;

	o->name = argv[0];
	o->threads = 0;
	o->n = 0;
	o->seed = 1;
	o->extra = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("usage: %s %s\n", o->name, usage);
			exit(0);
		}
		if (a[0] != '-' || !a[1] || a[2] ||
		    !(a[1] == 't' || a[1] == 'n' || a[1] == 's' ||
		      (extra && a[1] == extra))) {
			fprintf(stderr, "%s: unknown argument '%s'\nusage: %s %s\n",
				o->name, a, o->name, usage);
			exit(2);
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", o->name, a);
			exit(2);
		}
		if (a[1] == 't')
			o->threads = (unsigned)parse_num(o->name, 't', argv[++i],
							 MACRO_MAX_THREADS);
		else if (a[1] == 'n')
			o->n = parse_num(o->name, 'n', argv[++i], 1ull << 40);
		else if (a[1] == 's')
			o->seed = parse_num(o->name, 's', argv[++i],
					    UINT64_MAX);
		else
			o->extra = parse_num(o->name, extra, argv[++i],
					     extra_max);
	}
	if (!o->threads || !o->n) {
		fprintf(stderr, "%s: -t and -n are required\nusage: %s %s\n",
			o->name, o->name, usage);
		exit(2);
	}
	if (o->threads < min_threads) {
		fprintf(stderr, "%s: -t %u: needs at least %u threads\n",
			o->name, o->threads, min_threads);
		exit(2);
	}
}

/*
 * A checked object: this header, then one pattern word in each 64 bytes
 * after it and one in its last 8 bytes, so that every cache line (and
 * page) of it is written when it is made and read when it is freed.
 */
struct mobj {
	uint64_t id;
	uint64_t size;
	struct mobj *next;	/* the mailbox's link */
	uint64_t first;		/* the first pattern word */
};
#define MOBJ_MIN ((uint64_t)sizeof(struct mobj))

static inline uint64_t mobj_word(uint64_t tag, uint64_t off)
{
	return mix64(tag + off);
}

/*
 * The offset of the last word, or 0 where it would overlap the last
 * pattern word (the first at offset 24, then every 64 bytes).
 */
static inline uint64_t mobj_last(uint64_t size)
{
	uint64_t first = offsetof(struct mobj, first);
	uint64_t top = first + (size - first - 8) / 64 * 64;

	return size - 8 >= top + 8 ? size - 8 : 0;
}

static inline void *mobj_alloc(const char *name, uint64_t size)
{
	void *p = malloc(size);

	if (!p) {
		fprintf(stderr, "%s: malloc(%" PRIu64 ") failed\n", name,
			size);
		exit(1);
	}
	return p;
}

static inline void mobj_fill(struct mobj *o, uint64_t id, uint64_t size,
			     uint64_t seed)
{
	unsigned char *p = (unsigned char *)o;
	uint64_t tag = rnd(seed, id, SALT_TAG), off, w;

	o->id = id;
	o->size = size;
	o->next = NULL;
	for (off = offsetof(struct mobj, first); off + 8 <= size; off += 64) {
		w = mobj_word(tag, off);
		memcpy(p + off, &w, 8);
	}
	if ((off = mobj_last(size))) {
		w = mobj_word(tag, off);
		memcpy(p + off, &w, 8);
	}
}

/*
 * Check the words of object @id (of @size bytes) that lie below @limit,
 * and return their sum; a word that differs ends the program, naming it.
 */
static inline uint64_t mobj_word_check(const char *name, const struct mobj *o,
				       uint64_t tag, uint64_t off)
{
	uint64_t w;

	memcpy(&w, (const unsigned char *)o + off, 8);
	if (w != mobj_word(tag, off)) {
		fprintf(stderr, "%s: object %" PRIu64 " of %" PRIu64
			" bytes at %p: word at offset %" PRIu64 " is %016"
			PRIx64 ", not %016" PRIx64 ": overwritten\n", name,
			o->id, o->size, (const void *)o, off, w,
			mobj_word(tag, off));
		exit(1);
	}
	return w;
}

static inline uint64_t mobj_check_upto(const char *name, const struct mobj *o,
				       uint64_t id, uint64_t size,
				       uint64_t seed, uint64_t limit)
{
	uint64_t tag = rnd(seed, id, SALT_TAG), sum = 0, off;

	if (o->id != id || o->size != size) {
		fprintf(stderr, "%s: object %" PRIu64 " of %" PRIu64
			" bytes at %p: header says %" PRIu64 " of %" PRIu64
			": overwritten\n", name, id, size, (const void *)o,
			o->id, o->size);
		exit(1);
	}
	for (off = offsetof(struct mobj, first); off + 8 <= size &&
	     off + 8 <= limit; off += 64)
		sum += mobj_word_check(name, o, tag, off);
	if ((off = mobj_last(size)) && off + 8 <= limit)
		sum += mobj_word_check(name, o, tag, off);
	return sum;
}

static inline uint64_t mobj_check(const char *name, const struct mobj *o,
				  uint64_t id, uint64_t size, uint64_t seed)
{
	return mobj_check_upto(name, o, id, size, seed, size);
}

/*
 * A mailbox: any thread pushes a chain of objects with one CAS, its owner
 * takes everything at once with one exchange.  The owner never looks at
 * a single entry while others push, so there is no ABA to guard against.
 * One to a cache line, so that neighbouring mailboxes do not false-share.
 */
struct mailbox {
	_Alignas(64) _Atomic(struct mobj *) head;
};

static inline void mbox_push(struct mailbox *m, struct mobj *first,
			     struct mobj *last)
{
	struct mobj *old = atomic_load_explicit(&m->head, memory_order_relaxed);

	do
		last->next = old;
	while (!atomic_compare_exchange_weak_explicit(
		&m->head, &old, first, memory_order_release,
		memory_order_relaxed));
}

static inline struct mobj *mbox_take(struct mailbox *m)
{
	if (!atomic_load_explicit(&m->head, memory_order_relaxed))
		return NULL;
	return atomic_exchange_explicit(&m->head, NULL, memory_order_acquire);
}

/* What a thread adds up, written once when it ends (no false sharing). */
struct tally {
	uint64_t sum;		/* of every word it checked */
	uint64_t bytes;		/* that it allocated */
};

/*
 * Print "<workload>: <what> COUNT bytes B checksum X", B and X summed over
 * the tallies of @n threads, each @off bytes into one of @n structures of
 * @size bytes at @threads.
 */
static inline void print_tally(const char *workload, const char *what,
			       uint64_t count, const void *threads, unsigned n,
			       size_t size, size_t off)
{
	uint64_t sum = 0, bytes = 0;
	const struct tally *t;
	unsigned i;

	for (i = 0; i < n; i++) {
		t = (const void *)((const char *)threads + i * size + off);
		sum += t->sum;
		bytes += t->bytes;
	}
	printf("%s: %s %" PRIu64 " bytes %" PRIu64 " checksum %016" PRIx64
	       "\n", workload, what, count, bytes, sum);
}

/* Run fn(arg + i * size) on @n threads and wait for all of them. */
static inline void run_threads(const char *name, unsigned n,
			       void *(*fn)(void *), void *arg, size_t size)
{
	pthread_t tid[MACRO_MAX_THREADS];
	unsigned i;
	int err;

	for (i = 0; i < n; i++) {
		err = pthread_create(&tid[i], NULL, fn, (char *)arg + i * size);
		if (err)
			die(name, "pthread_create: %s", strerror(err));
	}
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
}

/* A thread's share of o->n numbered operations, and what it adds up. */
struct op_range {
	uint64_t from, to;	/* its operations */
	struct tally tally;
};

/*
 * Split o->n operations into o->threads contiguous ranges, run fn on each
 * (an op_range) and print "<workload>: objects N bytes B checksum X".
 */
static inline void run_ranges(const struct macro_opts *o,
			      const char *workload, void *(*fn)(void *))
{
	struct op_range *t = calloc(o->threads, sizeof(*t));
	unsigned i;

	if (!t)
		die(o->name, "%s", "out of memory");
	for (i = 0; i < o->threads; i++) {
		t[i].from = o->n * i / o->threads;
		t[i].to = o->n * (i + 1) / o->threads;
	}
	run_threads(o->name, o->threads, fn, t, sizeof(*t));
	print_tally(workload, "objects", o->n, t, o->threads, sizeof(*t),
		    offsetof(struct op_range, tally));
	free(t);
}

/*
 * Check and free what @n slots still hold, and the table: the sum of the
 * words checked.  size_of gives an object's size from its number.
 */
static inline uint64_t slots_drain(const char *name, struct mobj **slot,
				   uint64_t n, uint64_t seed,
				   uint64_t (*size_of)(uint64_t id))
{
	uint64_t i, sum = 0;

	for (i = 0; i < n; i++) {
		if (slot[i]) {
			sum += mobj_check(name, slot[i], slot[i]->id,
					  size_of(slot[i]->id), seed);
			free(slot[i]);
		}
	}
	free(slot);
	return sum;
}

#endif /* AK_MACRO_H */
