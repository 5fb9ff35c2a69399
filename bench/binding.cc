// SPDX-License-Identifier: MIT
/*
 * The C binding to Google Benchmark (bench/akbench.h).  Each C benchmark
 * becomes one registered benchmark per placement class and argument; the
 * C body runs its own loop and crosses into C++ once per batch through
 * akb_batch(), which wraps State::KeepRunningBatch().  The chosen counter
 * is read at the edges of each batch, so the per-iteration figure in the
 * counter's unit covers the body only; Google Benchmark's own times cover
 * the body plus one KeepRunningBatch() per batch.
 */
#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <memory>
#include <sched.h>
#include <sstream>
#include <string>
#include <vector>

#include "akbench.h"
#include "bench.h"
#include "counter.h"
#include "topo.h"

struct akb_def {
	std::string name;	/* the suite and each akb_part(), by '/' */
	akb_fn fn;
	const void *arg;
	unsigned int flags;
	std::vector<int64_t> args;
	std::string arg_name;
	int threads;
	uint64_t batch;
	std::string skip;
	std::string fields;	/* akb_field()s, as JSON members */
};

struct akb_state {
	benchmark::State *st;
	const akb_def *d;
	int place;
	int cpu;
	uint64_t batch;
	uint64_t t_last;
	uint64_t ticks;
	bool started;
};

/* Owned here, so that they go with the program's static destructors. */
static std::vector<std::unique_ptr<akb_def>> defs;
/* --placement: every class for AKB_PLACED, spread for AKB_SWEEP */
static unsigned int place_mask = (1u << AKB_PLACE_NR) - 1;
static bool place_given;
static std::vector<int> sweep;
/*
 * The identity fields of each registered run, by what Google Benchmark
 * reports as the run's function name and arguments: built from the parts
 * at registration, so that nothing is read back out of a name.
 */
static std::map<std::string, std::string> run_fields;

static std::string json_str(const char *s)
{
	std::string o("\"");
	char hex[8];

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			o += '\\';
			o += (char)c;
		} else if (c < 0x20) {
			snprintf(hex, sizeof(hex), "\\u%04x", c);
			o += hex;
		} else {
			o += (char)c;
		}
	}
	return o + '"';
}

static std::string member(const char *key, const std::string &json)
{
	return std::string("      \"ak_") + key + "\": " + json + ",\n";
}

extern "C" {

void akb_set_placements(unsigned int mask)
{
	place_mask = mask;
	place_given = true;
}

void akb_set_sweep(const int *threads, int n)
{
	sweep.assign(threads, threads + n);
}

struct akb_def *akb_new(const char *suite, akb_fn fn, const void *arg,
			unsigned int flags)
{
	akb_def *d = new akb_def();

	d->name = suite;
	d->fn = fn;
	d->arg = arg;
	d->flags = flags;
	d->threads = 1;
	d->batch = 1000;
	defs.emplace_back(d);
	akb_field(d, "suite", suite);
	return d;
}

void akb_field(struct akb_def *d, const char *key, const char *value)
{
	d->fields += member(key, json_str(value));
}

void akb_part(struct akb_def *d, const char *key, const char *value)
{
	d->name += '/';
	d->name += value;
	if (key)
		akb_field(d, key, value);
}

void akb_field_num(struct akb_def *d, const char *key, long value)
{
	d->fields += member(key, std::to_string(value));
}

void akb_add_arg(struct akb_def *d, int64_t v)
{
	d->args.push_back(v);
}

void akb_arg_name(struct akb_def *d, const char *name)
{
	d->arg_name = name;
}

void akb_set_threads(struct akb_def *d, int threads)
{
	d->threads = threads;
}

void akb_set_batch(struct akb_def *d, uint64_t batch)
{
	d->batch = batch ? batch : 1;
}

void akb_skip_always(struct akb_def *d, enum akb_skip why,
		     const char *detail)
{
	char m[512];

	akb_skip_message(m, sizeof(m), why, detail);
	d->skip = m;
}

const void *akb_arg(const struct akb_state *s)
{
	return s->d->arg;
}

int64_t akb_range(const struct akb_state *s)
{
	return s->d->args.empty() ? 0 : s->st->range(0);
}

int akb_thread_index(const struct akb_state *s)
{
	return s->st->thread_index();
}

int akb_threads(const struct akb_state *s)
{
	return s->st->threads();
}

int akb_cpu(const struct akb_state *s)
{
	return s->cpu;
}

bool akb_batch(struct akb_state *s, uint64_t *n)
{
	uint64_t now;
	bool more;

	if (s->started) {
		now = akb_ticks();
		s->ticks += now - s->t_last;
	}
	s->started = true;
	more = s->st->KeepRunningBatch((benchmark::IterationCount)s->batch);
	*n = s->batch;
	if (more)
		s->t_last = akb_ticks();
	return more;
}

void akb_set_ticks(struct akb_state *s, uint64_t ticks)
{
	double hz = akb_counter_info()->hz;

	s->st->SetIterationTime((double)ticks / hz);
	s->ticks += ticks;
	s->t_last = akb_ticks();
}

void akb_counter(struct akb_state *s, const char *name, double v)
{
	s->st->counters[name] = benchmark::Counter(v);
}

void akb_counter_avg(struct akb_state *s, const char *name, double v)
{
	s->st->counters[name] =
		benchmark::Counter(v, benchmark::Counter::kAvgIterations);
}

void akb_counter_rate(struct akb_state *s, const char *name, double v)
{
	s->st->counters[name] =
		benchmark::Counter(v, benchmark::Counter::kIsRate);
}

void akb_label(struct akb_state *s, const char *label)
{
	s->st->SetLabel(label);
}

void akb_skip(struct akb_state *s, enum akb_skip why, const char *detail)
{
	char m[512];

	akb_skip_message(m, sizeof(m), why, detail);
	s->st->SkipWithError(m);
}

void akb_fail(struct akb_state *s, const char *what)
{
	char m[512];

	akb_fail_message(m, sizeof(m), what);
	s->st->SkipWithError(m);
}

} /* extern "C" */

/*
 * One barrier for the threads of the running benchmark: Google Benchmark
 * runs one benchmark at a time, and a generation count lets it be reused
 * without a reset.  Oversubscribed runs yield while they wait.
 */
static unsigned int bar_count, bar_gen;

extern "C" void akb_thread_barrier(struct akb_state *s)
{
	unsigned int n = (unsigned int)s->st->threads();
	unsigned int gen = __atomic_load_n(&bar_gen, __ATOMIC_ACQUIRE);
	unsigned int spins = 0;

	if (__atomic_add_fetch(&bar_count, 1, __ATOMIC_ACQ_REL) == n) {
		__atomic_store_n(&bar_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&bar_gen, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&bar_gen, __ATOMIC_ACQUIRE) == gen)
		if (++spins > 256)
			sched_yield();
}

static void run_one(benchmark::State &st, const akb_def *d, int place)
{
	akb_state s = {};
	struct akb_affinity *saved = NULL;
	std::string lost;
	char err[256];

	s.st = &st;
	s.d = d;
	s.place = place;
	s.cpu = -1;
	s.batch = d->batch;
	if (!d->skip.empty()) {
		st.SkipWithError(d->skip.c_str());	/* akb_skip_always() */
		return;
	}
	if (place >= 0) {
		const int *cpus;
		enum akb_skip why;
		int n = akb_place_cpus((enum akb_place)place, &cpus, &why);

		if (!n) {
			akb_skip(&s, why, NULL);
			return;
		}
		/*
		 * Thread 0 is the program's main thread, whose mask the
		 * threads of later runs inherit: it is put back after the
		 * run.  One that could not be kept still runs, as the other
		 * threads wait for it at barriers, and fails at the end.
		 */
		if (st.thread_index() == 0 &&
		    !(saved = akb_affinity_save(err, sizeof(err))))
			lost = std::string("could not save the thread's CPU "
					   "mask: ") + err;
		s.cpu = cpus[st.thread_index() % n];
		if (akb_pin_self(s.cpu, err, sizeof(err))) {
			std::string m("could not pin the thread: ");

			m += err;
			akb_fail(&s, m.c_str());
			goto out;
		}
		if (st.thread_index() == 0) {
			std::string l = std::string(akb_place_name(
				(enum akb_place)place)) + " cpus";
			int t, shown = st.threads() < n ? st.threads() : n;

			for (t = 0; t < shown && t < 8; t++)
				l += (t ? "," : " ") + std::to_string(cpus[t]);
			if (shown > 8)
				l += ",...";
			st.SetLabel(l);
		}
	}
	d->fn(&s);
	if (s.ticks)
		st.counters[akb_counter_info()->key] = benchmark::Counter(
			(double)s.ticks, benchmark::Counter::kAvgIterations);
out:
	if (saved && akb_affinity_restore(saved, err, sizeof(err)))
		lost = std::string("could not restore the thread's CPU "
				   "mask: ") + err;
	if (!lost.empty())
		akb_fail(&s, lost.c_str());
}

static void apply_threads(benchmark::internal::Benchmark *b, const akb_def *d)
{
	if (d->flags & AKB_SWEEP) {
		for (int t : sweep)
			b->Threads(t);
	} else if (d->threads > 1) {
		b->Threads(d->threads);
	}
}

extern "C" void akb_register_all(void)
{
	for (auto &owned : defs) {
		akb_def *d = owned.get();
		bool placed = d->flags & (AKB_PLACED | AKB_SWEEP);

		for (int p = 0; p < AKB_PLACE_NR; p++) {
			std::string name = d->name;
			int place = p;

			if (placed) {
				unsigned int m = place_mask;

				if ((d->flags & AKB_SWEEP) && !place_given)
					m = 1u << AKB_PLACE_SPREAD;
				if (!(m & (1u << p)))
					continue;
				name += std::string("/placement:") +
					akb_place_name((enum akb_place)p);
			} else {
				/* single-thread: on the first CPU of spread */
				if (p != AKB_PLACE_SPREAD)
					continue;
			}
			std::string f = d->fields;

			if (placed)
				f += member("placement", json_str(
					akb_place_name((enum akb_place)p)));
			if (d->args.empty())
				run_fields[name + '\n'] = f;
			/* Google Benchmark's args: "<ArgName>:<v>", or "<v>" */
			for (int64_t a : d->args)
				run_fields[name + '\n' + (d->arg_name.empty() ?
					"" : d->arg_name + ":") +
					std::to_string(a)] = d->arg_name.empty() ?
					f : f + member(d->arg_name.c_str(),
						       std::to_string(a));
			auto *b = benchmark::RegisterBenchmark(
				name.c_str(),
				[d, place](benchmark::State &st) {
					run_one(st, d, place);
				});
			for (int64_t a : d->args)
				b->Arg(a);
			if (!d->arg_name.empty())
				b->ArgName(d->arg_name);
			if (d->flags & AKB_MANUAL_TIME)
				b->UseManualTime();
			else if (d->threads > 1 || (d->flags & AKB_SWEEP))
				b->UseRealTime();
			apply_threads(b, d);
		}
	}
}

extern "C" int akb_planned_threads(const char *prefix)
{
	size_t l = strlen(prefix);
	int most = 0;

	for (auto &owned : defs) {
		const akb_def *d = owned.get();

		if (d->name.compare(0, l, prefix))
			continue;
		if (d->flags & AKB_SWEEP) {
			for (int t : sweep)
				most = t > most ? t : most;
		} else {
			most = d->threads > most ? d->threads : most;
		}
	}
	return most;
}

extern "C" void akb_add_context(const char *key, const char *value)
{
	benchmark::AddCustomContext(key, value);
}

/*
 * Google Benchmark's JSON with the identity fields of each run after its
 * run_name.  Its JSONReporter writes a run's members itself (privately),
 * so each run is rendered by it into a buffer and the fields are added
 * there: the rest of the file stays exactly what Google Benchmark writes,
 * and its own tools read it as before (extra members are ignored).
 */
class akb_json : public benchmark::JSONReporter {
public:
	void ReportRuns(const std::vector<Run> &runs) override
	{
		std::ostream &out = GetOutputStream();

		for (const Run &r : runs) {
			std::ostringstream buf;
			std::string t;
			size_t at;

			SetOutputStream(&buf);
			JSONReporter::ReportRuns(std::vector<Run>(1, r));
			SetOutputStream(&out);
			t = buf.str();
			at = t.find("\"run_name\": ");
			if (at != std::string::npos)
				at = t.find('\n', at);
			auto f = run_fields.find(r.run_name.function_name +
						 '\n' + r.run_name.args);
			if (at != std::string::npos && f != run_fields.end())
				t.insert(at + 1, f->second);
			out << t;
		}
	}
};

/* The value of --NAME=VALUE among Google Benchmark's flags, or NULL. */
static const char *gb_flag(int argc, char **argv, const char *name)
{
	size_t l = strlen(name);
	const char *v = NULL;

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], name, l) && argv[i][l] == '=')
			v = argv[i] + l + 1;	/* the last one wins */
	return v;
}

extern "C" int akb_gbench_run(int *argc, char **argv)
{
	const char *fmt = gb_flag(*argc, argv, "--benchmark_format");
	const char *out = gb_flag(*argc, argv, "--benchmark_out");
	const char *ofmt = gb_flag(*argc, argv, "--benchmark_out_format");
	akb_json display, file;

	benchmark::Initialize(argc, argv);
	if (benchmark::ReportUnrecognizedArguments(*argc, argv))
		return 2;
	benchmark::RunSpecifiedBenchmarks(
		fmt && !strcmp(fmt, "json") ? &display : nullptr,
		out && *out && (!ofmt || !strcmp(ofmt, "json")) ? &file :
		nullptr);
	benchmark::Shutdown();
	return 0;
}
