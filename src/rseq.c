// SPDX-License-Identifier: MIT
/*
 * rseq registration.  glibc 2.35 and later register every thread itself
 * and say where (__rseq_offset from the thread pointer) and how much
 * (__rseq_size, 0 when it did not, e.g. GLIBC_TUNABLES=
 * glibc.pthread.rseq=0); a thread may be registered only once, so then we
 * use glibc's area.  Otherwise each thread registers an area of ours at
 * its first per-CPU op and unregisters it at exit, before its TLS goes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <atomkit/percpu.h>

#ifndef __NR_rseq
# if defined(__x86_64__)
#  define __NR_rseq 334
# elif defined(__aarch64__)
#  define __NR_rseq 293
# elif defined(__powerpc64__)
#  define __NR_rseq 387
# endif
#endif
#define AK_RSEQ_FLAG_UNREGISTER	1
#ifndef AT_RSEQ_FEATURE_SIZE
# define AT_RSEQ_FEATURE_SIZE	27
#endif

/* Weak, so a static binary or an older glibc links too. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

__thread struct ak_rseq_abi *__ak_rseq_area
	__attribute__((tls_model("initial-exec")));
__thread uintptr_t __ak_rseq_op_area
	__attribute__((tls_model("initial-exec"))) = AK_RSEQ_OP_NONE;
static __thread struct ak_rseq_abi own_area
	__attribute__((tls_model("initial-exec"), unused)) = {
	.cpu_id = AK_RSEQ_CPU_ID_UNINITIALIZED,
};

/*
 * Abort counters: one per thread that ever had a section aborted, in
 * blocks that are never freed, so that a sum may read a counter while its
 * thread exits.  A thread claims a free counter at its first abort
 * (without a lock: that may be in a signal handler) and gives it back at
 * exit; whoever claims it next counts on from its value, so the sum over
 * all counters is every abort so far.  Only its holder writes a counter.
 */
#define CTRS_PER_BLOCK	63

struct abort_ctr {
	unsigned long n;
	unsigned long used;
};

struct ctr_block {
	struct ctr_block *next;
	unsigned long pad;
	struct abort_ctr c[CTRS_PER_BLOCK];
};

static struct ctr_block *ctr_blocks;
/* aborts of threads that could not have a counter (no memory) */
static unsigned long spare_aborts;
static pthread_key_t ctr_key;
static bool have_ctr_key;

__thread unsigned long *__ak_rseq_abort_ctr
	__attribute__((tls_model("initial-exec")));
/* the counter's value when this thread claimed it */
static __thread unsigned long ctr_base
	__attribute__((tls_model("initial-exec")));
static __thread unsigned long ctr_sink
	__attribute__((tls_model("initial-exec")));

static struct abort_ctr *claim_ctr(void)
{
	struct ctr_block *b, *head;
	unsigned long zero;
	int i;

	for (;;) {
		head = __atomic_load_n(&ctr_blocks, __ATOMIC_ACQUIRE);
		for (b = head; b; b = b->next)
			for (i = 0; i < CTRS_PER_BLOCK; i++) {
				zero = 0;
				if (!__atomic_load_n(&b->c[i].used,
						     __ATOMIC_RELAXED) &&
				    __atomic_compare_exchange_n(&b->c[i].used,
						&zero, 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
					return &b->c[i];
			}
		/* mmap, not malloc: this may run in a signal handler */
		b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			return NULL;
		b->c[0].used = 1;
		b->next = head;
		if (__atomic_compare_exchange_n(&ctr_blocks, &b->next, b,
						false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return &b->c[0];
		munmap(b, sizeof(*b));	/* another thread added one */
	}
}

/* At thread exit (its key's destructor): the counter for the next one. */
static void release_ctr(void *arg)
{
	struct abort_ctr *c = arg;

	__ak_rseq_abort_ctr = NULL;
	__atomic_store_n(&c->used, 0, __ATOMIC_RELEASE);
}

unsigned long *__ak_rseq_abort_ctr_init(void)
{
	struct abort_ctr *c = claim_ctr();

	if (!c) {
		/* counted here, and tried again at the next abort */
		__atomic_fetch_add(&spare_aborts, 1, __ATOMIC_RELAXED);
		ctr_sink = 0;
		return &ctr_sink;
	}
	ctr_base = __atomic_load_n(&c->n, __ATOMIC_RELAXED);
	__ak_rseq_abort_ctr = &c->n;
	if (have_ctr_key)
		pthread_setspecific(ctr_key, c);
	return &c->n;
}

unsigned long ak_rseq_aborts(void)
{
	unsigned long sum = __atomic_load_n(&spare_aborts, __ATOMIC_RELAXED);
	struct ctr_block *b;
	int i;

	for (b = __atomic_load_n(&ctr_blocks, __ATOMIC_ACQUIRE); b;
	     b = b->next)
		for (i = 0; i < CTRS_PER_BLOCK; i++)
			sum += __atomic_load_n(&b->c[i].n, __ATOMIC_RELAXED);
	return sum;
}

unsigned long ak_rseq_thread_aborts(void)
{
	unsigned long *c = __ak_rseq_abort_ctr;

	return c && c != &ctr_sink ?
		__atomic_load_n(c, __ATOMIC_RELAXED) - ctr_base : 0;
}

/* The thread pointer glibc's __rseq_offset is relative to. */
static __attribute__((unused)) char *thread_pointer(void)
{
#if defined(__powerpc64__)
	char *tp;

	/* r13; GCC 12 has no __builtin_thread_pointer() for ppc64 */
	__asm__("mr %0, 13" : "=r"(tp));
	return tp;
#else
	return __builtin_thread_pointer();
#endif
}

static bool glibc_owns(void)
{
	return &__rseq_size && __rseq_size > 0;
}

#if AK_HAVE_ARCH_RSEQ
static long sys_rseq(void *area, uint32_t len, int flags, uint32_t sig)
{
	return syscall(__NR_rseq, area, len, flags, sig);
}
#endif

/* -1 unknown, else 0 or an errno saying why rseq is unavailable. */
static int unavailable = -1;

/* 0 when rseq can be used in this process, else the reason as an errno. */
int __ak_rseq_unavailable(void)
{
	int v = __atomic_load_n(&unavailable, __ATOMIC_RELAXED);

	if (v >= 0)
		return v;
#if !AK_HAVE_ARCH_RSEQ
	v = ENOTSUP;		/* no critical sections for this arch */
#else
	if (glibc_owns()) {
		v = 0;
	} else if (sys_rseq(NULL, 0, 0, 0) == 0) {
		v = EINVAL;	/* cannot happen: a bad call must fail */
	} else {
		/* EINVAL means the call exists; ENOSYS (qemu-user) not */
		v = errno == EINVAL ? 0 : errno;
	}
#endif
	__atomic_store_n(&unavailable, v, __ATOMIC_RELAXED);
	return v;
}

bool __ak_rseq_have_mm_cid(void)
{
	/* mm_cid ends at byte 28 of the area (Linux 6.3+) */
	return getauxval(AT_RSEQ_FEATURE_SIZE) >= 28;
}

const char *ak_rseq_owner(void)
{
	if (__ak_rseq_unavailable())
		return "none";
	return glibc_owns() ? "glibc" : "atomkit";
}

#if AK_HAVE_ARCH_RSEQ
static pthread_key_t unregister_key;
static bool have_key;

static void unregister_thread(void *area)
{
	if (sys_rseq(area, sizeof(struct ak_rseq_abi),
		     AK_RSEQ_FLAG_UNREGISTER, AK_RSEQ_SIG))
		fprintf(stderr, "atomkit: rseq unregistration failed: %s\n",
			strerror(errno));
	__ak_rseq_op_area = AK_RSEQ_OP_NONE;
	__ak_rseq_area = NULL;
}

#endif

/*
 * When an rseq mode is chosen (src/percpu.c, under its lock): what a
 * thread's first op needs, made ready before any op can run in a signal
 * handler.
 */
void __ak_rseq_prepare(void)
{
	if (!have_ctr_key) {
		if (pthread_key_create(&ctr_key, release_ctr)) {
			fprintf(stderr, "atomkit: pthread_key_create failed\n");
			abort();
		}
		have_ctr_key = true;
	}
#if AK_HAVE_ARCH_RSEQ
	if (have_key || glibc_owns())
		return;
	if (pthread_key_create(&unregister_key, unregister_thread)) {
		fprintf(stderr, "atomkit: pthread_key_create failed\n");
		abort();
	}
	have_key = true;
#endif
}

/*
 * This thread's area registered (by glibc, or now by us), or NULL where
 * it cannot be: the malloc interposer (malloc/) then serves the thread
 * without the per-CPU layer instead of aborting.
 */
struct ak_rseq_abi *__ak_rseq_thread_try_init(void)
{
#if AK_HAVE_ARCH_RSEQ
	struct ak_rseq_abi *rs;
	int v = __ak_rseq_unavailable();

	if (v) {
		errno = v;
		return NULL;
	}
	if (glibc_owns()) {
		rs = (struct ak_rseq_abi *)(thread_pointer() +
					    __rseq_offset);
	} else {
		rs = &own_area;
		if (sys_rseq(rs, sizeof(*rs), 0, AK_RSEQ_SIG))
			return NULL;
		pthread_setspecific(unregister_key, rs);
	}
	if (rs->cpu_id >= AK_RSEQ_CPU_ID_REGISTRATION_FAILED) {
		errno = 0;	/* glibc's registration failed; no errno */
		return NULL;
	}
	__ak_rseq_area = rs;
	__ak_rseq_op_area = (uintptr_t)rs;
	return rs;
#else
	errno = ENOTSUP;
	return NULL;
#endif
}

struct ak_rseq_abi *__ak_rseq_thread_init(void)
{
	struct ak_rseq_abi *rs = __ak_rseq_thread_try_init();

	if (rs)
		return rs;
	/* The rseq modes are chosen only where registration works. */
	fprintf(stderr, "atomkit: rseq mode in use but this thread's rseq area cannot be registered: %s\n",
		errno ? strerror(errno) :
		"its cpu_id says the registration failed");
	abort();
}
