// SPDX-License-Identifier: MIT
/*
 * Counters for the benchmarks (bench/counter.h).  The arch counters are
 * read with the ordering each arch needs so that the read is not hoisted
 * into or sunk out of the timed code: lfence around rdtsc on x86-64 (the
 * AMD and Intel manuals' recipe; cpuid would exit to the hypervisor in
 * every guest), isb before cntvct_el0 on arm64, and mftb on ppc64, whose
 * timebase reads are ordered enough for loops of thousands of operations.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomkit/config.h>
#include "counter.h"

#ifdef AKB_HAVE_PAPI
#include <papi.h>
#endif

uint64_t akb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
uint64_t akb_arch_ticks(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence"
			     : "=a"(lo), "=d"(hi) :: "memory");
	return (uint64_t)hi << 32 | lo;
}

const char *akb_arch_counter_name(void)
{
	return "TSC";
}
#define AKB_ARCH_KEY	"tsc_ticks"
#define AKB_ARCH_HOW	"lfence;rdtsc;lfence"
#elif defined(__aarch64__)
uint64_t akb_arch_ticks(void)
{
	uint64_t v;

	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
}

const char *akb_arch_counter_name(void)
{
	return "cntvct_el0";
}
#define AKB_ARCH_KEY	"cntvct_ticks"
#define AKB_ARCH_HOW	"isb;mrs cntvct_el0"
#elif defined(__powerpc64__)
uint64_t akb_arch_ticks(void)
{
	uint64_t v;

	__asm__ __volatile__("mftb %0" : "=r"(v) :: "memory");
	return v;
}

const char *akb_arch_counter_name(void)
{
	return "timebase";
}
#define AKB_ARCH_KEY	"tb_ticks"
#define AKB_ARCH_HOW	"mftb"
#else
uint64_t akb_arch_ticks(void)
{
	return akb_now_ns();
}

const char *akb_arch_counter_name(void)
{
	return "ns";
}
#define AKB_ARCH_KEY	"clock_ns"
#define AKB_ARCH_HOW	"clock_gettime"
#define AKB_ARCH_IS_NS	1
#endif

/* Ticks per second over three 20 ms windows, the median of them. */
static double calibrate(uint64_t (*read)(void))
{
	double r[3], t;
	int i, j;

	for (i = 0; i < 3; i++) {
		struct timespec d = { 0, 20 * 1000 * 1000 };
		uint64_t n0 = akb_now_ns(), t0 = read();
		uint64_t n1, t1;

		if (read == akb_arch_ticks) {
			while (nanosleep(&d, &d) && errno == EINTR)
				;
		} else {
			/* core cycles count only while running: spin */
			while (akb_now_ns() - n0 < 20 * 1000 * 1000)
				;
		}
		t1 = read();
		n1 = akb_now_ns();
		r[i] = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
	}
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (r[j] < r[i]) {
				t = r[i];
				r[i] = r[j];
				r[j] = t;
			}
	return r[1];
}

#if defined(__powerpc64__)
/* "timebase : 512000000" in /proc/cpuinfo; absent under qemu-user. */
static double cpuinfo_timebase(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	double hz = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "timebase", 8)) {
			char *c = strchr(line, ':');

			if (c)
				hz = strtod(c + 1, NULL);
			break;
		}
	fclose(f);
	return hz;
}
#endif

double akb_arch_hz(const char **source)
{
	static double hz;
	static const char *src;

	if (hz > 0)
		goto out;
#if defined(AKB_ARCH_IS_NS)
	hz = 1e9;
	src = "ns by definition";
#elif defined(__aarch64__)
	{
		uint64_t f;

		__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
		hz = (double)f;
		src = "cntfrq_el0";
	}
#elif defined(__powerpc64__)
	hz = cpuinfo_timebase();
	src = "/proc/cpuinfo timebase";
#endif
	if (hz <= 0) {
		hz = calibrate(akb_arch_ticks);
		src = "calibrated against CLOCK_MONOTONIC";
	}
out:
	if (source)
		*source = src;
	return hz;
}

/* ---- PAPI ---- */

#ifdef AKB_HAVE_PAPI
static __thread int papi_set = -1;	/* PAPI_NULL is -1 */
static __thread bool papi_failed;

static unsigned long papi_thread_id(void)
{
	return (unsigned long)pthread_self();
}

/*
 * PAPI's error, and why its perf_event component is disabled if it is:
 * "Component containing event is disabled" alone does not tell a user
 * whether the kernel, the PMU model or the permissions are missing.
 */
static const char *papi_reason(int e)
{
	static char buf[PAPI_MAX_STR_LEN + PAPI_HUGE_STR_LEN];
	int c, n = PAPI_num_components();

	snprintf(buf, sizeof(buf), "%s", PAPI_strerror(e));
	for (c = 0; c < n; c++) {
		const PAPI_component_info_t *ci = PAPI_get_component_info(c);

		if (ci && ci->disabled && !strcmp(ci->name, "perf_event")) {
			snprintf(buf, sizeof(buf), "%s (perf_event: %s)",
				 PAPI_strerror(e), ci->disabled_reason);
			break;
		}
	}
	return buf;
}

/* Each thread counts its own cycles: one event set per thread. */
static int papi_thread_start(const char **why)
{
	int e;

	if (papi_set >= 0)
		return 0;
	if (papi_failed)
		return -1;
	papi_failed = true;
	e = PAPI_register_thread();
	if (e != PAPI_OK)
		goto fail;
	e = PAPI_create_eventset(&papi_set);
	if (e != PAPI_OK)
		goto fail;
	e = PAPI_add_named_event(papi_set, "PAPI_TOT_CYC");
	if (e != PAPI_OK)
		goto fail_set;
	e = PAPI_start(papi_set);
	if (e != PAPI_OK)
		goto fail_set;
	papi_failed = false;
	return 0;
fail_set:
	PAPI_cleanup_eventset(papi_set);
	PAPI_destroy_eventset(&papi_set);
	papi_set = -1;
fail:
	if (why)
		*why = papi_reason(e);
	return -1;
}

static uint64_t papi_ticks(void)
{
	long long v = 0;

	if (papi_set < 0 && papi_thread_start(NULL))
		return 0;
	PAPI_read(papi_set, &v);
	return (uint64_t)v;
}
#endif

bool akb_papi_probe(const char **why)
{
#ifdef AKB_HAVE_PAPI
	static int state = -1;
	static const char *reason;
	int e;

	if (state >= 0)
		goto out;
	state = 0;
	e = PAPI_library_init(PAPI_VER_CURRENT);
	if (e != PAPI_VER_CURRENT) {
		reason = e > 0 ? "PAPI library version mismatch"
			       : PAPI_strerror(e);
		goto out;
	}
	e = PAPI_thread_init(papi_thread_id);
	if (e != PAPI_OK) {
		reason = PAPI_strerror(e);
		goto out;
	}
	if (papi_thread_start(&reason))
		goto out;
	{
		/* Counting, not just present: two reads must differ. */
		uint64_t a = papi_ticks(), b;
		volatile int spin;

		for (spin = 0; spin < 100000; spin++)
			;
		b = papi_ticks();
		if (b <= a) {
			reason = "PAPI_TOT_CYC reads but does not count";
			goto out;
		}
	}
	state = 1;
out:
	if (why)
		*why = state ? NULL : reason;
	return state;
#else
	if (why)
		*why = "PAPI not built in (install libpapi-dev and reconfigure)";
	return false;
#endif
}

/* ---- the selected counter ---- */

static struct akb_counter_info info;
static uint64_t (*ticks_fn)(void) = akb_arch_ticks;

uint64_t akb_ticks(void)
{
	return ticks_fn();
}

static double measure_read_cost(void)
{
	double best = 1e30;
	int i, j;

	for (i = 0; i < 20; i++) {
		uint64_t t0 = ticks_fn(), t1;

		for (j = 0; j < 100; j++)
			t1 = ticks_fn();
		t1 = ticks_fn();
		if ((double)(t1 - t0) / 101 < best)
			best = (double)(t1 - t0) / 101;
	}
	return best;
}

int akb_counter_select(const char *want, char *err, size_t errlen)
{
	const char *why = NULL;
	bool papi_ok = akb_papi_probe(&why);

	snprintf(info.papi, sizeof(info.papi), "%s",
		 papi_ok ? "PAPI_TOT_CYC available" : why);
	if (!strcmp(want, "papi") || (!strcmp(want, "auto") && papi_ok)) {
		if (!papi_ok) {
			snprintf(err, errlen,
				 "--counter=papi: PAPI_TOT_CYC cannot be read here: %s (no PMU, or perf_event_paranoid too high, or a VM without a virtual PMU); use --counter=auto",
				 why);
			return -1;
		}
#ifdef AKB_HAVE_PAPI
		info.kind = AKB_COUNTER_PAPI;
		info.key = "cycles";
		ticks_fn = papi_ticks;
		/* for manual-time runs only: the core clock moves with DVFS */
		info.hz = calibrate(papi_ticks);
		info.hz_source = "core cycles per second, measured while spinning";
		snprintf(info.unit, sizeof(info.unit),
			 "cycles (PAPI_TOT_CYC; about %.0f MHz while measured)",
			 info.hz / 1e6);
#endif
	} else if (!strcmp(want, "auto") || !strcmp(want, "tsc") ||
		   !strcmp(want, "arch")) {
		info.kind = AKB_COUNTER_ARCH;
		info.key = AKB_ARCH_KEY;
		info.hz = akb_arch_hz(&info.hz_source);
		snprintf(info.unit, sizeof(info.unit),
			 "%s ticks at %.1f MHz (%s)", akb_arch_counter_name(),
			 info.hz / 1e6, AKB_ARCH_HOW);
		ticks_fn = akb_arch_ticks;
	} else if (!strcmp(want, "ns")) {
		info.kind = AKB_COUNTER_NS;
		info.key = "clock_ns";
		info.hz = 1e9;
		info.hz_source = "ns by definition";
		snprintf(info.unit, sizeof(info.unit),
			 "ns (clock_gettime CLOCK_MONOTONIC)");
		ticks_fn = akb_now_ns;
	} else {
		snprintf(err, errlen,
			 "--counter=%s: unknown counter (one of: auto, papi, tsc, arch, ns)",
			 want);
		return -1;
	}
	info.read_cost = measure_read_cost();
	return 0;
}

const struct akb_counter_info *akb_counter_info(void)
{
	return &info;
}

const char *akb_counter_kind_name(enum akb_counter_kind kind)
{
	switch (kind) {
	case AKB_COUNTER_PAPI:
		return "papi";
	case AKB_COUNTER_ARCH:
		return "arch";
	case AKB_COUNTER_NS:
		return "ns";
	}
	return "?";
}

int akb_counter_select_bare(const char *kind)
{
	if (!strcmp(kind, "arch")) {
		info.kind = AKB_COUNTER_ARCH;
		info.key = AKB_ARCH_KEY;
		ticks_fn = akb_arch_ticks;
	} else if (!strcmp(kind, "ns")) {
		info.kind = AKB_COUNTER_NS;
		info.key = "clock_ns";
		ticks_fn = akb_now_ns;
#ifdef AKB_HAVE_PAPI
	} else if (!strcmp(kind, "papi") && akb_papi_probe(NULL)) {
		info.kind = AKB_COUNTER_PAPI;
		info.key = "cycles";
		ticks_fn = papi_ticks;
#endif
	} else {
		return -1;
	}
	return 0;
}

/* ---- the timer's own cost in a timed region ---- */

#define TC_SAMPLES	1001	/* per round: odd, so the median is one */
#define TC_MAX_ROUNDS	30
#define TC_AGREE	3	/* steady rounds in a row that must agree */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A spread small enough to call a round steady: 5% of the median, or one
 * step of the counter if that is more.  Some counters step by more than
 * one (a virtualised TSC by tens of ticks, a timebase slower than the
 * core): the step is the smallest difference between two samples within
 * the round's interquartile range (so that no outlier sets it), at least
 * one tick.
 */
static double tc_tolerance(double median, double step)
{
	return median / 20 > step ? median / 20 : step;
}

/* The smallest positive difference in the sorted v[from..to]. */
static double tc_step(const uint64_t *v, int from, int to)
{
	uint64_t step = 0;
	int i;

	for (i = from + 1; i <= to; i++)
		if (v[i] != v[i - 1] && (!step || v[i] - v[i - 1] < step))
			step = v[i] - v[i - 1];
	return step ? (double)step : 1;
}

/*
 * Rounds of TC_SAMPLES empty regions.  A round is steady when its
 * interquartile range is within the tolerance of its median (an interrupt
 * or a migration moves single samples, which the quartiles ignore).  We
 * stop when TC_AGREE steady rounds in a row have medians within the
 * tolerance of the first of them, and take the lowest of their medians:
 * a low figure, so that a correction takes off no more than the timer
 * typically adds.  Without such a run of rounds, the lowest median
 * of any steady round is taken (of any round if none was steady), and
 * steady is false.
 */
void akb_timer_cost(uint64_t (*empty)(void *arg), void *arg,
		    struct akb_timer_cost *out)
{
	static __thread uint64_t v[TC_SAMPLES];
	double med, iqr, tol, step, low_steady = -1, low_steady_iqr = 0;
	double low_any = -1, low_any_iqr = 0, run_low = 0, run_iqr = 0;
	double run_first = 0, run_tol = 0;
	int r, i, run = 0;

	out->steady = false;
	for (r = 0; r < TC_MAX_ROUNDS; r++) {
		for (i = 0; i < TC_SAMPLES; i++)
			v[i] = empty(arg);
		qsort(v, TC_SAMPLES, sizeof(v[0]), cmp_u64);
		med = (double)v[TC_SAMPLES / 2];
		iqr = (double)(v[3 * TC_SAMPLES / 4] - v[TC_SAMPLES / 4]);
		step = tc_step(v, TC_SAMPLES / 4, 3 * TC_SAMPLES / 4);
		tol = tc_tolerance(med, step);
		if (low_any < 0 || med < low_any) {
			low_any = med;
			low_any_iqr = iqr;
		}
		if (iqr > tol) {
			run = 0;
			continue;
		}
		if (low_steady < 0 || med < low_steady) {
			low_steady = med;
			low_steady_iqr = iqr;
		}
		if (run && (med > run_first + run_tol ||
			    med < run_first - run_tol))
			run = 0;
		if (!run || med < run_low) {
			if (!run) {
				run_first = med;
				run_tol = tol;
			}
			run_low = med;
			run_iqr = iqr;
		}
		if (++run == TC_AGREE) {
			out->steady = true;
			break;
		}
	}
	out->rounds = r < TC_MAX_ROUNDS ? r + 1 : r;
	if (out->steady) {
		out->ticks = run_low;
		out->iqr = run_iqr;
	} else if (low_steady >= 0) {
		out->ticks = low_steady;
		out->iqr = low_steady_iqr;
	} else {
		out->ticks = low_any;
		out->iqr = low_any_iqr;
	}
}
