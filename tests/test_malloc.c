// SPDX-License-Identifier: MIT
/*
 * The malloc family's contract, as libatomkit-malloc.so must keep it
 * when preloaded: tests/test_malloc.sh runs this program under the
 * library in every design and per-CPU mode (AK_MALLOC_DESIGN,
 * AK_PERCPU_MODE), and once on glibc's malloc, to show that the tests
 * hold on a known allocator.  Under the library it checks first that
 * malloc and free really resolved to it, in the design and mode asked.
 *
 * Options, for the driver's own checks: --modes prints each per-CPU mode
 * with "yes" or why not; --asan says whether this is a sanitizer build;
 * --fill-maps allocates until the slab layer refuses (AK_SLAB_FAIL_MAPS),
 * then frees and allocates again; --double-free frees one object twice
 * while another thread writes to stderr (AK_SLAB_DEBUG=1 reports it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <atomkit/malloc.h>
#include <atomkit/slab.h>
#include "ak_test.h"
#include "malloc_test.h"

/* A deadlocked child is killed, and fails, rather than hang the suite. */
#define CHILD_ALARM	120

/* Past what the compiler can see, so that it lets us ask for them. */
static volatile size_t half_max = SIZE_MAX / 2;

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed);
}

/* The first index where p differs from fill(seed), or n. */
static size_t check(const unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 31 + seed))
			return i;
	return n;
}

static void t_resolves(void **state)
{
	struct ak_malloc_info in;

	(void)state;
	ak_malloc_check_resolves(&in);
	/* the library's hidden copy of atomkit is not this program's */
	assert_null(dlsym(RTLD_DEFAULT, "__ak_kmalloc_fork"));
}

/* Every memalign form at every power of two from 1 to 1 MiB. */
static void t_memalign(void **state)
{
	static const size_t sizes[] = { 0, 1, 24, 100, 4000, 16384, 20000,
					70000 };
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), a, k;
	unsigned int sh, form;

	(void)state;
	for (sh = 0; sh <= 20; sh++) {
		a = (size_t)1 << sh;
		for (k = 0; k < AK_ARRAY_SIZE(sizes); k++) {
			size_t n = sizes[k] ? sizes[k] : a + 1;

			for (form = 0; form < 3; form++) {
				void *p = NULL;

				if (form == 0) {
					if (a < sizeof(void *))
						continue;
					assert_int_equal(posix_memalign(&p, a, n), 0);
				} else if (form == 1) {
					/* C11 asks for a multiple (ASan holds to it) */
					p = aligned_alloc(a, (n + a - 1) & ~(a - 1));
				} else {
					p = memalign(a, n);
				}
				assert_non_null(p);
				assert_int_equal((uintptr_t)p & (a - 1), 0);
				assert_true(malloc_usable_size(p) >= n);
				fill(p, n, sh);
				assert_int_equal(check(p, n, sh), n);
				free(p);
			}
		}
	}
	/* bad alignments */
	{
		void *p = (void *)1;

		assert_int_equal(posix_memalign(&p, 24, 10), EINVAL);
		assert_int_equal(posix_memalign(&p, 4, 10), EINVAL);
		assert_ptr_equal(p, (void *)1);
	}
	/* valloc, pvalloc: page-aligned, pvalloc rounded up to pages */
	for (k = 0; k < AK_ARRAY_SIZE(sizes); k++) {
		void *v = valloc(sizes[k] + 1), *w = pvalloc(sizes[k] + 1);

		assert_non_null(v);
		assert_non_null(w);
		assert_int_equal((uintptr_t)v & (pg - 1), 0);
		assert_int_equal((uintptr_t)w & (pg - 1), 0);
		assert_true(malloc_usable_size(v) >= sizes[k] + 1);
		assert_true(malloc_usable_size(w) >=
			    ((sizes[k] + 1 + pg - 1) & ~(pg - 1)));
		memset(v, 1, sizes[k] + 1);
		memset(w, 2, sizes[k] + 1);
		free(v);
		free(w);
	}
}

/* Usable size at least the size asked, all of it writable, and malloc's
 * own alignment (16 on every arch we build for). */
static void t_usable(void **state)
{
	void *p[64];
	size_t n;
	unsigned int i = 0, j;

	(void)state;
	for (n = 0; n <= 70000; n = n < 300 ? n + 1 : n * 5 / 4) {
		p[i] = malloc(n);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] & 15, 0);
		assert_true(malloc_usable_size(p[i]) >= n);
		memset(p[i], 0x5a, malloc_usable_size(p[i]));
		if (++i == AK_ARRAY_SIZE(p)) {
			for (j = 0; j < i; j++)
				free(p[j]);
			i = 0;
		}
	}
	for (j = 0; j < i; j++)
		free(p[j]);
	assert_int_equal(malloc_usable_size(NULL), 0);
}

/* realloc keeps the contents as it grows and shrinks across 16 KiB. */
static void t_realloc(void **state)
{
	static const size_t steps[] = { 10, 100, 1000, 16384, 16385, 100000,
					3u << 20, 20000, 16384, 16383, 100,
					10, 1 };
	unsigned char *p = NULL;
	size_t prev = 0, k, keep;

	(void)state;
	for (k = 0; k < AK_ARRAY_SIZE(steps); k++) {
		unsigned char *q = realloc(p, steps[k]);

		assert_non_null(q);
		keep = prev < steps[k] ? prev : steps[k];
		assert_int_equal(check(q, keep, 7), keep);
		fill(q, steps[k], 7);
		p = q;
		prev = steps[k];
	}
	/* realloc(p, 0) frees and returns NULL, as glibc's */
	assert_null(realloc(p, 0));
	errno = 0;
	assert_null(reallocarray(NULL, half_max, 3));
	assert_int_equal(errno, ENOMEM);
	p = reallocarray(NULL, 100, 3);
	assert_non_null(p);
	memset(p, 1, 300);
	free(p);
}

/* calloc zeroes memory that was written before, and refuses overflow. */
static void t_calloc(void **state)
{
	static const size_t sizes[] = { 1, 16, 100, 4096, 16384, 16385,
					100000, 1u << 20 };
	size_t k, i;

	(void)state;
	for (k = 0; k < AK_ARRAY_SIZE(sizes); k++) {
		unsigned char *p, *q;
		size_t n = sizes[k];

		/* dirty an object of the size, free it, then calloc one */
		for (i = 0; i < 4; i++) {
			p = malloc(n);
			assert_non_null(p);
			memset(p, 0xa5, n);
			free(p);
			q = calloc(1, n);
			assert_non_null(q);
			while (n && q[--n] == 0)
				;
			assert_int_equal(q[n], 0);
			n = sizes[k];
			free(q);
		}
	}
	errno = 0;
	assert_null(calloc(half_max, 3));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(calloc(3, half_max));
	assert_int_equal(errno, ENOMEM);
}

/* malloc(0) is a unique pointer; free(NULL) does nothing. */
static void t_malloc0(void **state)
{
	void *a = malloc(0), *b = malloc(0), *c = calloc(0, 5);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_ptr_not_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_ptr_not_equal(b, c);
	free(a);
	free(b);
	free(c);
	free(NULL);
}

/* ---- threads ---- */

static volatile int stop;
static unsigned int running;	/* busy threads that have begun */

/* Keeps a working set of objects of many sizes, checking each before
 * freeing it; returns (as a pointer) the number of bad objects. */
static void *busy(void *arg)
{
	void *slot[32] = { 0 };
	size_t len[32] = { 0 };
	unsigned int seed = (unsigned int)(uintptr_t)arg, sd[32], i = 0;
	uintptr_t bad = 0;

	__atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned int k = i++ % 32;

		/* busy, yet leaving the forking thread some CPU */
		if (i % 16 == 0)
			sched_yield();

		if (slot[k]) {
			if (check(slot[k], len[k], sd[k]) != len[k])
				bad++;
			free(slot[k]);
		}
		seed = seed * 1103515245u + 12345u;
		len[k] = (seed >> 8) % (i % 64 ? 600 : 40000);
		slot[k] = malloc(len[k]);
		if (!slot[k]) {
			bad++;
			continue;
		}
		sd[k] = seed;
		fill(slot[k], len[k], sd[k]);
	}
	for (i = 0; i < 32; i++) {
		if (slot[i] && check(slot[i], len[i], sd[i]) != len[i])
			bad++;
		free(slot[i]);
	}
	return (void *)bad;
}

/* A short-lived thread: allocates, frees some, hands one back. */
static void *brief(void *arg)
{
	unsigned int i, n = (unsigned int)(uintptr_t)arg;
	void *keep = NULL;

	for (i = 0; i < 20; i++) {
		char *p = malloc(16 + (i * 97 + n) % 3000);

		if (!p)
			return NULL;
		p[0] = (char)i;
		if (i == 7)
			keep = p;
		else
			free(p);
	}
	strcpy(keep, "brief");
	return keep;
}

/*
 * n busy threads, returning once every one of them runs: a fork must
 * find them allocating, not still being born.  Under qemu-user that is
 * also what keeps the child alive: a thread that has not yet run holds,
 * for a moment, a lock of qemu's own (its clone_lock, which qemu's fork
 * does not take), and a child forked in that moment hangs in its first
 * pthread_create, with every signal blocked.
 */
static void start_busy(pthread_t *t, unsigned int n)
{
	unsigned int i;

	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&running, 0, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, busy,
						(void *)(uintptr_t)(i + 1)), 0);
	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) < n)
		sched_yield();
}

static void stop_busy(pthread_t *t, unsigned int n)
{
	unsigned int i;
	void *bad;

	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_int_equal((uintptr_t)bad, 0);
	}
}

/* Thousands of threads created and joined while others allocate. */
static void t_threads(void **state)
{
	unsigned long total = ak_test_iters(2000), done = 0;
	pthread_t bg[4], t[32];
	unsigned int i, n;

	(void)state;
	start_busy(bg, 4);
	while (done < total) {
		n = total - done < 32 ? (unsigned int)(total - done) : 32;
		for (i = 0; i < n; i++)
			assert_int_equal(pthread_create(&t[i], NULL, brief,
					(void *)(uintptr_t)(done + i)), 0);
		for (i = 0; i < n; i++) {
			void *r;

			assert_int_equal(pthread_join(t[i], &r), 0);
			assert_non_null(r);
			assert_string_equal(r, "brief");
			free(r);	/* a free of another (dead) thread's object */
		}
		done += n;
	}
	stop_busy(bg, 4);
}

/* In a child: allocate in every size range, from a thread too. */
static int child_allocates(void)
{
	pthread_t t;
	void *r;
	size_t n;

	for (n = 1; n < (4u << 20); n = n * 3 + 1) {
		unsigned char *p = malloc(n);

		if (!p)
			return 1;
		fill(p, n, 3);
		if (check(p, n, 3) != n)
			return 2;
		free(p);
	}
	if (pthread_create(&t, NULL, brief, NULL) || pthread_join(t, &r) ||
	    !r)
		return 3;
	free(r);
	return 0;
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* fork from 8 busy threads: every child allocates and exits cleanly. */
static void t_fork(void **state)
{
	unsigned long i, n = ak_test_iters(20);
	pthread_t bg[8];

	(void)state;
	if (ASAN_BUILD)
		ak_skip("ASan's allocator: a child forked from busy threads can hang in it");
	start_busy(bg, 8);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			alarm(CHILD_ALARM);
			exit(child_allocates());
		}
		assert_true(pid > 0);
		assert_int_equal(wait_child(pid), 0);
	}
	stop_busy(bg, 8);
}

/* A dlopen'd library's allocations, freed on either side. */
static void t_dlopen(void **state)
{
	const char *path = getenv("AK_TEST_DLLIB");
	char *(*make)(const char *);
	void (*drop)(void *);
	void *h;
	char *s, *mine;

	(void)state;
	if (!path)
		path = "./tests/.libs/libakmdl.so";
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("dlopen %s: %s", path, dlerror());
	*(void **)&make = dlsym(h, "akmdl_make");
	*(void **)&drop = dlsym(h, "akmdl_drop");
	assert_non_null(make);
	assert_non_null(drop);
	s = make("dlopen");
	assert_non_null(s);
	assert_string_equal(s, "dlopen:dlopen");
	free(s);
	mine = malloc(5000);
	assert_non_null(mine);
	drop(mine);
	assert_int_equal(dlclose(h), 0);
}

static int atexit_fd = -1;

static void at_exit_allocates(void)
{
	char *p = malloc(300), *q = calloc(10, 4000), *r;

	if (!p || !q)
		_exit(5);
	r = realloc(p, 100000);
	if (!r)
		_exit(6);
	free(q);
	free(r);
	if (write(atexit_fd, "x", 1) != 1)
		_exit(7);
}

/* atexit handlers that allocate, at a clean exit. */
static void t_atexit(void **state)
{
	int fds[2];
	pid_t pid;
	char c = 0;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		alarm(CHILD_ALARM);
		close(fds[0]);
		atexit_fd = fds[1];
		atexit(at_exit_allocates);
		free(malloc(10));
		exit(0);
	}
	assert_true(pid > 0);
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	close(fds[0]);
	assert_int_equal(wait_child(pid), 0);
}

/*
 * Allocate n-byte objects, each linked to the last through its first
 * word, until malloc fails; returns the chain, the count in *count, and
 * errno at the failure in *err.
 */
static void *exhaust(size_t n, unsigned long max, unsigned long *count,
		     int *err)
{
	void *head = NULL, *p;

	*count = 0;
	*err = 0;
	while (*count < max) {
		errno = 0;
		p = malloc(n);
		if (!p) {
			*err = errno;
			break;
		}
		*(void **)p = head;
		head = p;
		++*count;
	}
	return head;
}

static void release_chain(void *p)
{
	while (p) {
		void *next = *(void **)p;

		free(p);
		p = next;
	}
}

/*
 * Stay on the CPU we are on: objects freed into one CPU's cache are not
 * another CPU's to hand out, so after a migration a full recount could
 * fall short by what the first CPU's cache holds, by design.
 */
static void pin(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* What the child of t_rlimit checks; an exit code saying what failed. */
static int rlimit_child(void)
{
	unsigned long big, small, again;
	int err;
	void *b, *s, *x;

	/* 1 MiB runs until the limit, then small objects until it too */
	b = exhaust(1u << 20, 100000, &big, &err);
	if (big == 100000)
		return 10;		/* the limit was not enforced */
	if (err != ENOMEM)
		return 11;
	s = exhaust(64, 1ul << 26, &small, &err);
	if (small == 1ul << 26 || err != ENOMEM)
		return 12;
	release_chain(b);
	release_chain(s);
	/* allocates again once it has freed: large, then small */
	x = exhaust(1u << 20, big / 2, &again, &err);
	if (again != big / 2)
		return 13;
	release_chain(x);
	x = exhaust(64, small / 2, &again, &err);
	if (again != small / 2)
		return 14;
	release_chain(x);
	return 0;
}

/* Memory running out under RLIMIT_AS: NULL with ENOMEM, then recovery. */
static void t_rlimit(void **state)
{
	pid_t pid;
	int rc;

	(void)state;
	if (getenv("AK_EMULATED"))
		ak_skip("qemu-user does not enforce RLIMIT_AS");
	if (ASAN_BUILD)
		ak_skip("ASan's allocator: its quarantine and shadow decide when it runs out");
	pid = fork();
	if (pid == 0) {
		struct rlimit rl;
		FILE *f = fopen("/proc/self/statm", "r");
		unsigned long pages = 0;

		alarm(CHILD_ALARM);
		pin();
		if (!f || fscanf(f, "%lu", &pages) != 1)
			_exit(20);
		fclose(f);
		rl.rlim_cur = rl.rlim_max = pages * (size_t)sysconf(_SC_PAGESIZE) +
					    (256u << 20);
		if (setrlimit(RLIMIT_AS, &rl))
			_exit(21);
		_exit(rlimit_child());
	}
	assert_true(pid > 0);
	rc = wait_child(pid);
	if (rc)
		fail_msg("rlimit child: exit %d (10: not enforced, 11: no ENOMEM, 12: small not refused, 13/14: no recovery; 10xx: signal)",
			 rc);
}

/* ak_malloc_info()'s large_allocs, or -1 */
static long large_allocs(void)
{
	int (*info)(struct ak_malloc_info *);
	struct ak_malloc_info in;

	*(void **)&info = dlsym(RTLD_DEFAULT, "ak_malloc_info");
	return info && !info(&in) ? (long)in.large_allocs : -1;
}

/* One object of the large path, where the compiler cannot elide it. */
static void large(void)
{
	void *(*volatile make)(size_t) = malloc;
	void (*volatile release)(void *) = free;

	release(make(300 << 10));
}

/*
 * AK_MALLOC_STATS (doc/malloc.md, "Counters"): a child of fork counts
 * from the fork, and appends one line of its own at exit; a child that
 * leaves by _exit writes none.
 */
static void t_stats(void **state)
{
	char path[] = "/tmp/ak-malloc-stats.XXXXXX", line[2048], want[64];
	static const char *const keys[] = {
		"\"pid\": ", "\"design\": ", "\"mode\": ", "\"refills\": ",
		"\"slabs_made\": ", "\"slabs_released\": ",
		"\"large_allocs\": 3,", "\"heap_hits\": ", "\"heap_misses\": ",
		"\"maps\": ", "\"unmaps\": ", "\"madvise_calls\": ",
		"\"mapped_bytes\": ", "\"dirty_bytes\": ",
		"\"purged_bytes\": ", "\"meta_bytes\": ",
		"\"fallback_allocs\": ", "\"deferred_frees\": ",
	};
	pid_t pid, quiet;
	size_t k;
	FILE *f;
	int fd, i;

	(void)state;
	if (!preloaded_design())
		ak_skip("run on glibc's malloc (no AK_MALLOC_DESIGN)");
	for (i = 0; i < 8; i++)
		large();
	assert_true(large_allocs() >= 8);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	pid = fork();
	if (pid == 0) {
		alarm(CHILD_ALARM);
		if (large_allocs() != 0)
			_exit(10);
		setenv("AK_MALLOC_STATS", path, 1);
		for (i = 0; i < 3; i++)
			large();
		exit(large_allocs() == 3 ? 0 : 11);
	}
	assert_true(pid > 0);
	quiet = fork();
	if (quiet == 0) {
		setenv("AK_MALLOC_STATS", path, 1);
		large();
		_exit(0);
	}
	assert_true(quiet > 0);
	assert_int_equal(wait_child(pid), 0);
	assert_int_equal(wait_child(quiet), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	i = fgetc(f);
	fclose(f);
	unlink(path);
	assert_int_equal(i, EOF);
	assert_true(line[0] == '{' && strstr(line, "}\n"));
	for (k = 0; k < AK_ARRAY_SIZE(keys); k++)
		if (!strstr(line, keys[k]))
			fail_msg("no %s in %s", keys[k], line);
	snprintf(want, sizeof(want), "\"pid\": %ld,", (long)pid);
	assert_non_null(strstr(line, want));
	snprintf(want, sizeof(want), "\"design\": \"%s\",",
		 preloaded_design());
	assert_non_null(strstr(line, want));
}

static const struct CMUnitTest tests[] = {
	AK_TEST(t_resolves),
	AK_TEST(t_memalign),
	AK_TEST(t_usable),
	AK_TEST(t_realloc),
	AK_TEST(t_calloc),
	AK_TEST(t_malloc0),
	AK_TEST(t_threads),
	AK_TEST(t_fork),
	AK_TEST(t_dlopen),
	AK_TEST(t_atexit),
	AK_TEST(t_stats),
	AK_TEST(t_rlimit),
};

/* --fill-maps: the slab layer refuses maps (AK_SLAB_FAIL_MAPS). */
static int fill_maps(void)
{
	unsigned long n, again;
	int err;
	void *c, *x;

	pin();
	c = exhaust(64, 1ul << 24, &n, &err);

	if (n == 1ul << 24 || err != ENOMEM) {
		printf("fill-maps: %lu objects, errno %d\n", n, err);
		return 1;
	}
	release_chain(c);
	x = exhaust(64, n, &again, &err);
	release_chain(x);
	printf("fill-maps: refused after %lu objects, %lu again\n", n, again);
	return again == n ? 0 : 1;
}

static void *chatter(void *arg)
{
	static const char line[] = "chatter chatter chatter chatter chatter\n";

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		if (write(2, line, sizeof(line) - 1) < 0)
			break;
	return NULL;
}

/* --double-free: a report while another thread fills stderr. */
static int double_free(void)
{
	void (*volatile release)(void *) = free;
	pthread_t t;
	void *p = malloc(40);

	if (!p || pthread_create(&t, NULL, chatter, NULL))
		return 1;
	usleep(1000);
	release(p);
	release(p);
	usleep(1000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	int m;

	if (argc > 1 && !strcmp(argv[1], "--modes")) {
		for (m = 0; m < AK_PERCPU_NR_MODES; m++) {
			const char *why = NULL;

			printf("%s %s\n", ak_percpu_mode_name(m),
			       ak_percpu_mode_available(m, &why) ? "yes" : why);
		}
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--asan")) {
		printf("%d\n", ASAN_BUILD);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--fill-maps"))
		return fill_maps();
	if (argc > 1 && !strcmp(argv[1], "--double-free"))
		return double_free();
	return ak_test_main(preloaded_design() ? "malloc" : "malloc[glibc]",
			    tests, AK_ARRAY_SIZE(tests));
}
