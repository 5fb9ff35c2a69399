// SPDX-License-Identifier: MIT
/*
 * Per-CPU memory and the choice of mode.  Every variable has one copy per
 * slot (possible CPU, or thread in thread mode), each copy on cache lines
 * of its own; a header on its own line before copy 0 holds the stride, so
 * ak_per_cpu_ptr() is one multiply-add from a read-only line.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <atomkit/pages.h>
#define __AK_PERCPU_LIBRARY
#include <atomkit/percpu.h>

int __ak_rseq_unavailable(void);
bool __ak_rseq_have_mm_cid(void);

#define CACHELINE	64
#define THREAD_SLOTS_DEFAULT 256

int __ak_percpu_mode = -1;
uintptr_t __ak_percpu_op_off = AK_RSEQ_OP_NONE;
/* the mode this library was built with, fixed (configure --with-percpu-mode) */
#ifdef AK_PERCPU_MODE_FIXED
static const int lib_fixed = AK_PERCPU_MODE_FIXED;
#else
static const int lib_fixed = -1;
#endif
static unsigned int nr_slots;
static unsigned long nr_allocated;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const mode_names[AK_PERCPU_NR_MODES] = {
	[AK_PERCPU_RSEQ] = "rseq",
	[AK_PERCPU_RSEQ_MM_CID] = "rseq-mm_cid",
	[AK_PERCPU_ATOMIC] = "atomic",
	[AK_PERCPU_THREAD] = "thread",
};

const char *ak_percpu_mode_name(enum ak_percpu_mode m)
{
	return (unsigned int)m < AK_PERCPU_NR_MODES ? mode_names[m] : NULL;
}

int ak_percpu_mode_parse(const char *name)
{
	int m;

	for (m = 0; m < AK_PERCPU_NR_MODES; m++)
		if (!strcmp(name, mode_names[m]))
			return m;
	return -1;
}

static bool fixed_refuses(int fixed, enum ak_percpu_mode m, const char **why)
{
	static char buf[96];

	if (fixed < 0 || (int)m == fixed)
		return false;
	if (why) {
		snprintf(buf, sizeof(buf),
			 "the per-CPU mode is fixed to %s at build time",
			 ak_percpu_mode_name((enum ak_percpu_mode)fixed));
		*why = buf;
	}
	return true;
}

bool ak_percpu_mode_available(enum ak_percpu_mode m, const char **why)
{
	static char buf[96];
	int err;

	if ((unsigned int)m < AK_PERCPU_NR_MODES &&
	    fixed_refuses(lib_fixed, m, why))
		return false;
	switch (m) {
	case AK_PERCPU_RSEQ:
	case AK_PERCPU_RSEQ_MM_CID:
		err = __ak_rseq_unavailable();
		if (err) {
			if (why) {
				snprintf(buf, sizeof(buf),
					 "rseq unavailable (%s)",
					 err == ENOSYS ? "ENOSYS" :
					 err == ENOTSUP ? "no rseq code for this arch" :
					 strerror(err));
				*why = buf;
			}
			return false;
		}
#if defined(AK_ARCH_PPC64)
		/*
		 * The 128-bit section commits with stq, privileged before
		 * ISA 2.07: refuse the rseq modes rather than SIGILL in one.
		 */
		if (!ak_cpu_has(AK_CPU_ISA207)) {
			if (why)
				*why = "rseq sections need ISA 2.07 (POWER8) for their quadword commit";
			return false;
		}
#endif
		if (m == AK_PERCPU_RSEQ_MM_CID && !__ak_rseq_have_mm_cid()) {
			if (why)
				*why = "rseq mm_cid unavailable (kernel before 6.3)";
			return false;
		}
		return true;
	case AK_PERCPU_ATOMIC:
	case AK_PERCPU_THREAD:
		return true;
	default:
		if (why)
			*why = "no such mode";
		return false;
	}
}

/* Possible CPUs: the highest id in /sys/devices/system/cpu/possible + 1. */
static unsigned int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned int max = 0, a, b;
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	int c;

	if (f) {
		while (fscanf(f, "%u", &a) == 1) {
			b = a;
			c = fgetc(f);
			if (c == '-' && fscanf(f, "%u", &b) == 1)
				c = fgetc(f);
			if (b + 1 > max)
				max = b + 1;
			if (c != ',')
				break;
		}
		fclose(f);
	}
	if (conf > 0 && (unsigned long)conf > max)
		max = (unsigned int)conf;
	return max ? max : 1;
}

static unsigned int slots_for(enum ak_percpu_mode m)
{
	const char *env;

	if (m != AK_PERCPU_THREAD)
		return possible_cpus();
	env = getenv("AK_PERCPU_THREAD_SLOTS");
	if (env && atoi(env) > 0)
		return (unsigned int)atoi(env);
	return THREAD_SLOTS_DEFAULT;
}

static void slot_setup(void);
void __ak_rseq_prepare(void);

/*
 * Called with lock held.  Everything a thread's first op would otherwise
 * set up lazily is set up here, because that first op may run in a signal
 * handler that interrupted a thread holding a lock.
 */
static int choose(enum ak_percpu_mode m)
{
	nr_slots = slots_for(m);
	if (m == AK_PERCPU_THREAD)
		slot_setup();
	else if (m <= AK_PERCPU_RSEQ_MM_CID)
		__ak_rseq_prepare();
	/* the ops' one test: an offset in the rseq modes only */
	__atomic_store_n(&__ak_percpu_op_off, AK_HAVE_ARCH_RSEQ &&
			 m <= AK_PERCPU_RSEQ_MM_CID ?
			 (uintptr_t)__AK_RSEQ_ID_OFF(m) :
			 AK_RSEQ_OP_NONE, __ATOMIC_RELAXED);
	__atomic_store_n(&__ak_percpu_mode, m, __ATOMIC_RELEASE);
	return m;
}

int __ak_percpu_mode_init(void)
{
	const char *env = getenv("AK_PERCPU_MODE"), *why = NULL;
	int m = __atomic_load_n(&__ak_percpu_mode, __ATOMIC_ACQUIRE);

	/* an op whose load was merged with one before the choice */
	if (m >= 0)
		return m;
	pthread_mutex_lock(&lock);
	m = __ak_percpu_mode;
	if (m >= 0)
		goto out;
	if (lib_fixed >= 0) {
		/* unavailable here: no per-CPU memory (ak_percpu_alloc) */
		m = lib_fixed;
		if (env && *env && ak_percpu_mode_parse(env) != m) {
			fprintf(stderr, "atomkit: AK_PERCPU_MODE=%s: this atomkit is built with the per-CPU mode fixed to %s\n",
				env, ak_percpu_mode_name(m));
			exit(2);
		}
	} else if (env && *env) {
		m = ak_percpu_mode_parse(env);
		if (m < 0) {
			fprintf(stderr, "atomkit: AK_PERCPU_MODE=%s: unknown mode (rseq, rseq-mm_cid, atomic, thread)\n",
				env);
			exit(2);
		}
		if (!ak_percpu_mode_available(m, &why)) {
			fprintf(stderr, "atomkit: AK_PERCPU_MODE=%s: %s\n",
				env, why);
			exit(2);
		}
	} else {
		m = ak_percpu_mode_available(AK_PERCPU_RSEQ, NULL) ?
			AK_PERCPU_RSEQ : AK_PERCPU_ATOMIC;
	}
	m = choose(m);
out:
	pthread_mutex_unlock(&lock);
	return m;
}

int ak_percpu_set_mode(enum ak_percpu_mode m)
{
	int rc = 0;

	if ((unsigned int)m >= AK_PERCPU_NR_MODES) {
		errno = EINVAL;
		return -1;
	}
	if (!ak_percpu_mode_available(m, NULL)) {
		errno = ENOTSUP;
		return -1;
	}
	pthread_mutex_lock(&lock);
	if (__ak_percpu_mode != (int)m && nr_allocated) {
		errno = EBUSY;
		rc = -1;
	} else {
		choose(m);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/*
 * A program built with the mode fixed (AK_PERCPU_MODE) makes it the
 * library's before it asks for the number of copies or for memory: the
 * library may have been built with the mode chosen at run time.
 */
static int fix_mode(enum ak_percpu_mode fixed)
{
	if (__atomic_load_n(&__ak_percpu_mode, __ATOMIC_ACQUIRE) ==
	    (int)fixed)
		return 0;
	/* a library built fixed refuses another mode in the environment */
	if (lib_fixed >= 0)
		__ak_percpu_mode_init();
	return ak_percpu_set_mode(fixed);
}

bool __ak_percpu_fixed_available(enum ak_percpu_mode fixed,
				 enum ak_percpu_mode m, const char **why)
{
	if (fixed_refuses((int)fixed, m, why))
		return false;
	return ak_percpu_mode_available(m, why);
}

int __ak_percpu_fixed_set_mode(enum ak_percpu_mode fixed,
			       enum ak_percpu_mode m)
{
	if ((unsigned int)m < AK_PERCPU_NR_MODES && m != fixed) {
		errno = ENOTSUP;
		return -1;
	}
	return ak_percpu_set_mode(m);
}

void *__ak_percpu_fixed_alloc(enum ak_percpu_mode fixed, size_t size,
			      size_t align)
{
	if (fix_mode(fixed))
		return NULL;
	return ak_percpu_alloc(size, align);
}

unsigned int __ak_percpu_fixed_nr_cpus(enum ak_percpu_mode fixed)
{
	fix_mode(fixed);	/* where it fails, allocation fails too */
	return ak_nr_cpus();
}

unsigned int ak_nr_cpus(void)
{
	ak_percpu_mode();
	return nr_slots;
}

void *ak_percpu_alloc(size_t size, size_t align)
{
	struct __ak_percpu_hdr *hdr;
	size_t stride, total, off;
	unsigned int n = ak_nr_cpus();
	char *base;

	if (!size || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	if (lib_fixed >= 0 &&
	    !ak_percpu_mode_available((enum ak_percpu_mode)lib_fixed, NULL)) {
		errno = ENOTSUP;	/* no op could run on it */
		return NULL;
	}
	if (align < CACHELINE)
		align = CACHELINE;
	stride = (size + align - 1) & ~(align - 1);
	off = align > sizeof(*hdr) ? align : sizeof(*hdr);
	if (stride > (SIZE_MAX - 2 * off) / n) {
		errno = ENOMEM;
		return NULL;
	}
	/* room to align copy 0 and keep the header on its own line */
	total = off + (size_t)n * stride + align;
	base = mmap(NULL, total, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	hdr = (struct __ak_percpu_hdr *)
		((((uintptr_t)base + off + align - 1) & ~(uintptr_t)(align - 1)) -
		 sizeof(*hdr));
	hdr->stride = stride;
	hdr->copy0 = hdr + 1;
	hdr->size = total;
	hdr->base = base;
	hdr->nr = n;
	pthread_mutex_lock(&lock);
	nr_allocated++;
	pthread_mutex_unlock(&lock);
	/*
	 * The allocating thread registered now, so that a loop of ops right
	 * after this call finds its rseq area set on the first op's test and
	 * runs the sections inline (a failure is the first op's to report).
	 */
	if (ak_percpu_mode_is_rseq(ak_percpu_mode()) && !__ak_rseq_area) {
		int e = errno;

		(void)__ak_rseq_thread_try_init();
		errno = e;
	}
	return hdr + 1;
}

void ak_percpu_free(void *pcp)
{
	struct __ak_percpu_hdr *hdr;

	if (!pcp)
		return;
	hdr = (struct __ak_percpu_hdr *)pcp - 1;
	munmap(hdr->base, hdr->size);
	pthread_mutex_lock(&lock);
	nr_allocated--;
	pthread_mutex_unlock(&lock);
}

/* ---- thread mode: one slot per live thread ---- */

__thread int __ak_thread_slot __attribute__((tls_model("initial-exec"))) = -1;
static unsigned char *slot_used;
static unsigned int slot_count;
static pthread_key_t slot_key;

static void release_slot(void *arg)
{
	int s = (int)(intptr_t)arg - 1;

	__ak_thread_slot = -1;
	__atomic_store_n(&slot_used[s], 0, __ATOMIC_RELEASE);
}

/* Once, with lock held, when thread mode is chosen. */
static void slot_setup(void)
{
	if (slot_used)
		return;
	slot_used = ak_page_meta_calloc(nr_slots, 1);
	if (!slot_used || pthread_key_create(&slot_key, release_slot)) {
		fprintf(stderr, "atomkit: cannot set up per-thread slots\n");
		abort();
	}
	slot_count = nr_slots;
}

/*
 * A thread's first op in thread mode claims a free slot.  Lock-free, as it
 * may run in a signal handler; if a handler claimed one for this thread
 * while we were claiming, keep the handler's and give ours back.  -1 when
 * every slot is taken (the malloc interposer then does without).
 */
int __ak_thread_slot_try_init(void)
{
	unsigned int i;
	unsigned char zero;

	for (i = 0; i < slot_count; i++) {
		zero = 0;
		if (__atomic_load_n(&slot_used[i], __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&slot_used[i], &zero, 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
	}
	if (i == slot_count)
		return -1;
	if (__ak_thread_slot >= 0) {
		__atomic_store_n(&slot_used[i], 0, __ATOMIC_RELEASE);
		return __ak_thread_slot;
	}
	__ak_thread_slot = (int)i;
	pthread_setspecific(slot_key, (void *)(intptr_t)(i + 1));
	return (int)i;
}

int __ak_thread_slot_init(void)
{
	int s = __ak_thread_slot_try_init();

	if (s < 0) {
		fprintf(stderr, "atomkit: thread mode: more than %u threads use per-CPU data; set AK_PERCPU_THREAD_SLOTS\n",
			slot_count);
		abort();
	}
	return s;
}

bool ak_percpu_thread_try_init(void)
{
	enum ak_percpu_mode m = ak_percpu_mode();
	int e = errno;		/* a failed try is not the caller's error */
	bool ok;

	switch (m) {
	case AK_PERCPU_RSEQ:
	case AK_PERCPU_RSEQ_MM_CID:
		ok = __ak_rseq_area || __ak_rseq_thread_try_init();
		break;
	case AK_PERCPU_THREAD:
		ok = __ak_thread_slot >= 0 || __ak_thread_slot_try_init() >= 0;
		break;
	default:
		ok = true;
	}
	errno = e;
	return ok;
}

/* fork() in the malloc interposer: the mode's lock held across it. */
void ak_percpu_fork(bool take)
{
	if (take)
		pthread_mutex_lock(&lock);
	else
		pthread_mutex_unlock(&lock);
}
