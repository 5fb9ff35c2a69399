// SPDX-License-Identifier: MIT
/*
 * atomkit-bench: every suite in one program.  Our own flags are taken out
 * of argv here; everything that starts with --benchmark_ goes on to
 * Google Benchmark untouched, so its filters, repetitions, formats and
 * output files work as they do for any Google Benchmark binary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomkit/config.h>

#include "bench.h"
#include "counter.h"
#include "topo.h"

#define AKB_MAX_SWEEP 64

static const char usage[] =
	"usage: atomkit-bench [OPTION]... [--benchmark_...]...\n"
	"\n"
	"  --counter=auto|papi|tsc|arch|ns\n"
	"        the counter every figure is also given in (default auto:\n"
	"        PAPI_TOT_CYC where the PMU allows it, else the arch's own\n"
	"        counter: TSC, cntvct_el0 or the timebase; tsc means the\n"
	"        arch's counter on every arch)\n"
	"  --placement=CLASS[,CLASS]...|all\n"
	"        where the threads of multi-thread benchmarks run: smt, core,\n"
	"        llc, package, numa, spread (default: all for the cache-line\n"
	"        suite, spread for the thread sweeps)\n"
	"  --threads=N[,N]...\n"
	"        thread counts of the thread sweeps (default 1, 2, 4 ... up\n"
	"        to the PUs, then twice the PUs; at most 16 per PU, at least\n"
	"        64 and at most 8192 in all)\n"
	"  --list-placements   print the placement classes found and exit\n"
	"  --list-suites[=SUITE[,SUITE]...]\n"
	"                      print the suites (all, or those named) as JSON\n"
	"                      and exit: each one's name, the prefix of its\n"
	"                      benchmark names, what it needs, the most\n"
	"                      threads it runs with here, what it measures\n"
	"  --list-skips        print the documented reasons a benchmark may\n"
	"                      be skipped for, one a line, and exit: a run\n"
	"                      says \"skipped: REASON\" or \"skipped: REASON:\n"
	"                      DETAIL\"; any other error is a failure\n"
	"                      (\"failed: WHAT\")\n"
	"  --describe          print the machine and build description (the\n"
	"                      run context) as one JSON object and exit\n"
	"  --quick             a correctness run (bench-quick, the cross rig):\n"
	"                      the slab suite's untimed warm-up rounds shrink\n"
	"                      to a few objects, so its figures are not warm\n"
	"  --help              this text, then Google Benchmark's flags\n"
	"\n"
	"Google Benchmark's own flags work as usual: --benchmark_filter=REGEX,\n"
	"--benchmark_repetitions=N (default here 3, so that every benchmark\n"
	"reports its spread), --benchmark_min_time=SECONDS,\n"
	"--benchmark_format=console|json|csv, --benchmark_out=FILE,\n"
	"--benchmark_out_format=json.\n";

int akb_max_threads(void)
{
	long max = 16L * akb_nr_pus();

	if (max < 64)
		max = 64;
	return max > AKB_THREADS_LIMIT ? AKB_THREADS_LIMIT : (int)max;
}

static int parse_threads(const char *list, int *out, int *n, char *err,
			 size_t errlen)
{
	int max = akb_max_threads();
	const char *p = list;

	*n = 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || (*end && *end != ',')) {
			snprintf(err, errlen,
				 "--threads=%s: not a list of numbers", list);
			return -1;
		}
		if (v < 1 || v > max) {
			snprintf(err, errlen,
				 "--threads=%s: %ld is not a usable thread count (1 to %d here: 16 x %d PUs, at least 64, at most %d)",
				 list, v, max, akb_nr_pus(), AKB_THREADS_LIMIT);
			return -1;
		}
		if (*n == AKB_MAX_SWEEP) {
			snprintf(err, errlen, "--threads: at most %d counts",
				 AKB_MAX_SWEEP);
			return -1;
		}
		out[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
	}
	if (!*n) {
		snprintf(err, errlen, "--threads: no thread count given");
		return -1;
	}
	return 0;
}

/*
 * 1, 2, 4 .. below the PUs, the PUs, twice the PUs (oversubscribed), and
 * none past akb_max_threads(): what is not run is not planned.
 */
static void default_sweep(int *out, int *n)
{
	int pus = akb_nr_pus(), max = akb_max_threads(), t;

	if (pus > max)
		pus = max;
	*n = 0;
	for (t = 1; t < pus && *n < AKB_MAX_SWEEP - 2; t *= 2)
		out[(*n)++] = t;
	out[(*n)++] = pus;
	if (pus < max)
		out[(*n)++] = 2 * pus <= max ? 2 * pus : max;
}

static void list_placements(void)
{
	int c, i;

#if defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	printf("arch: %sle\n", AK_ARCH_NAME);
#else
	printf("arch: %s\n", AK_ARCH_NAME);
#endif
	printf("cpu model: %s\n", akb_cpu_model());
	printf("topology (%s): %s\n", akb_topo_source(), akb_topo_summary());
	for (c = 0; c < AKB_PLACE_NR; c++) {
		const int *cpus;
		enum akb_skip why;
		int n = akb_place_cpus((enum akb_place)c, &cpus, &why);

		printf("%-8s", akb_place_name((enum akb_place)c));
		if (!n) {
			printf(" absent: %s\n", akb_skip_text(why));
			continue;
		}
		printf(" CPUs");
		for (i = 0; i < n; i++)
			printf("%s%d", i ? "," : " ", cpus[i]);
		printf("\n");
	}
}

/* s as a JSON string, quoted and escaped. */
static void json_puts(const char *s)
{
	const unsigned char *c;

	putchar('"');
	for (c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if (*c < 0x20)
			printf("\\u%04x", *c);
		else
			putchar(*c);
	}
	putchar('"');
}

/* One "key": "value" member of --describe's object, JSON-escaped. */
static void describe_member(const char *key, const char *value)
{
	static int members;

	printf("%s\n  \"%s\": ", members++ ? "," : "{", key);
	json_puts(value);
}

static const struct {
	const char *name, *prefix, *needs, *title;
} suites[] = {
#define AKB_SUITE_INFO(s, prefix, needs, title) { #s, prefix, needs, title },
	AKB_SUITES(AKB_SUITE_INFO)
#undef AKB_SUITE_INFO
};
#define NR_SUITES ((int)(sizeof(suites) / sizeof(suites[0])))

/*
 * "harness,slab" into a mask of (1 << index) of suites[]; every suite if
 * list is NULL; -1 and err if a name is unknown.
 */
static int suites_parse(const char *list, unsigned long *mask, char *err,
			size_t errlen)
{
	const char *p = list;
	int k;

	*mask = 0;
	if (!list) {
		*mask = (1ul << NR_SUITES) - 1;
		return 0;
	}
	while (*p) {
		size_t l = strcspn(p, ",");

		for (k = 0; k < NR_SUITES; k++)
			if (strlen(suites[k].name) == l &&
			    !strncmp(p, suites[k].name, l))
				break;
		if (k == NR_SUITES) {
			int w = snprintf(err, errlen,
					 "--list-suites: unknown suite '%.*s' (known:",
					 (int)l, p);

			for (k = 0; k < NR_SUITES && w > 0 &&
				    (size_t)w < errlen; k++)
				w += snprintf(err + w, errlen - (size_t)w,
					      " %s", suites[k].name);
			if (w > 0 && (size_t)w < errlen)
				snprintf(err + w, errlen - (size_t)w, ")");
			return -1;
		}
		*mask |= 1ul << k;
		p += l;
		if (*p)
			p++;
	}
	if (!*mask) {
		snprintf(err, errlen, "--list-suites=: no suite given");
		return -1;
	}
	return 0;
}

/*
 * The suites as one JSON object, one suite a line, for the scripts that
 * run them: what each needs, and how many threads its largest run has on
 * this machine (after registration, so from the plan itself).
 */
static void list_suites(unsigned long mask)
{
	int k, first = 1;

	printf("{\n  \"pus\": %d,\n  \"max_threads\": %d,\n  \"suites\": [",
	       akb_nr_pus(), akb_max_threads());
	for (k = 0; k < NR_SUITES; k++) {
		const char *n = suites[k].needs;

		if (!(mask & (1ul << k)))
			continue;
		printf("%s\n    { \"name\": ", first ? "" : ",");
		first = 0;
		json_puts(suites[k].name);
		printf(", \"prefix\": ");
		json_puts(suites[k].prefix);
		printf(", \"needs\": [");
		while (*n) {
			size_t l = strcspn(n, ",");

			printf("%s\"%.*s\"", n == suites[k].needs ? "" : ", ",
			       (int)l, n);
			n += l;
			if (*n)
				n++;
		}
		printf("], \"threads\": %d, \"title\": ",
		       akb_planned_threads(suites[k].prefix));
		json_puts(suites[k].title);
		printf(" }");
	}
	printf("\n  ]\n}\n");
}

static const char *opt_value(const char *arg, const char *name)
{
	size_t l = strlen(name);

	if (strncmp(arg, name, l))
		return NULL;
	if (arg[l] == '=')
		return arg + l + 1;
	return NULL;
}

/* Everything but the argument vector for Google Benchmark, which main owns. */
static int bench_main(int argc, char **argv, char **gargv)
{
	const char *counter = "auto", *placement = NULL, *threads = NULL;
	const char *suite_list = NULL;
	unsigned long suite_mask = 0;
	char err[512];
	int gargc = 0, i, sweep[AKB_MAX_SWEEP], nsweep, list = 0, reps = 0;
	int describe = 0, list_skips = 0, list_suites_asked = 0;
	unsigned int mask;

	gargv[gargc++] = argv[0];
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if ((v = opt_value(a, "--counter"))) {
			counter = v;
		} else if ((v = opt_value(a, "--placement"))) {
			placement = v;
		} else if ((v = opt_value(a, "--threads"))) {
			threads = v;
		} else if (!strcmp(a, "--list-placements")) {
			list = 1;
		} else if (!strcmp(a, "--list-suites")) {
			list_suites_asked = 1;
		} else if ((v = opt_value(a, "--list-suites"))) {
			list_suites_asked = 1;
			suite_list = v;
		} else if (!strcmp(a, "--list-skips")) {
			list_skips = 1;
		} else if (!strcmp(a, "--describe")) {
			describe = 1;
		} else if (!strcmp(a, "--quick")) {
			akb_set_quick();
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			gargv[gargc++] = (char *)"--help";
		} else if (!strncmp(a, "--benchmark_", 12) ||
			   !strncmp(a, "--v=", 4)) {
			if (!strncmp(a, "--benchmark_repetitions", 23))
				reps = 1;
			gargv[gargc++] = argv[i];
		} else {
			fprintf(stderr,
				"atomkit-bench: unknown option '%s' (try --help)\n",
				a);
			return 2;
		}
	}
	if (list_skips) {
		akb_list_skips(stdout);
		return 0;
	}
	if (!strcmp(counter, "") || !strcmp(counter, "=")) {
		fprintf(stderr, "atomkit-bench: --counter needs a value\n");
		return 2;
	}
	if (list_suites_asked &&
	    suites_parse(suite_list, &suite_mask, err, sizeof(err))) {
		fprintf(stderr, "atomkit-bench: %s\n", err);
		return 2;
	}
	if (akb_topo_init(err, sizeof(err))) {
		fprintf(stderr, "atomkit-bench: %s\n", err);
		return 1;
	}
	if (list) {
		list_placements();
		return 0;
	}
	if (placement) {
		if (akb_place_parse(placement, &mask, err, sizeof(err))) {
			fprintf(stderr, "atomkit-bench: %s\n", err);
			return 2;
		}
		akb_set_placements(mask);
	}
	if (threads) {
		if (parse_threads(threads, sweep, &nsweep, err, sizeof(err))) {
			fprintf(stderr, "atomkit-bench: %s\n", err);
			return 2;
		}
	} else {
		default_sweep(sweep, &nsweep);
	}
	akb_set_sweep(sweep, nsweep);
	if (akb_counter_select(counter, err, sizeof(err))) {
		fprintf(stderr, "atomkit-bench: %s\n", err);
		return 2;
	}
	if (describe) {
		/* the schema of a result set's machine.json (scripts/run-bench) */
		describe_member("ak_schema", "1");
		akb_env_context(describe_member);
		printf("\n}\n");
		return 0;
	}
	if (!reps)
		gargv[gargc++] = (char *)"--benchmark_repetitions=3";

#define AKB_SUITE_CALL(s, prefix, needs, title) akb_suite_##s();
	AKB_SUITES(AKB_SUITE_CALL)
#undef AKB_SUITE_CALL
	if (list_suites_asked) {
		list_suites(suite_mask);
		return 0;
	}
	akb_register_all();
	akb_env_context(akb_add_context);
	fprintf(stderr, "atomkit-bench: counter: %s, one read %.1f ticks; %s\n",
		akb_counter_info()->unit, akb_counter_info()->read_cost,
		akb_counter_info()->papi);
	return akb_gbench_run(&gargc, gargv);
}

int main(int argc, char **argv)
{
	static const char cold[] = "--slab-cold-child=";
	char **gargv;
	int rc;

	/* before anything else uses the heap (bench/suite_slab.c) */
	if (argc == 2 && !strncmp(argv[1], cold, sizeof(cold) - 1))
		return akb_slab_cold_child(argv[1] + sizeof(cold) - 1);
	gargv = calloc((size_t)argc + 2, sizeof(char *));
	if (!gargv) {
		fprintf(stderr, "atomkit-bench: out of memory\n");
		return 1;
	}
	rc = bench_main(argc, argv, gargv);
	free(gargv);
	return rc;
}
