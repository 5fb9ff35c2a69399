"""What a run of the suites does and how long it takes: each suite's
atomkit-bench options, its instances (Google Benchmark's own listing,
under the machine's topology or an hwloc XML file's), its most threads
and its estimated minutes; the whole programs' estimate too."""
import re

# mode: repetitions, min_time (s), more atomkit-bench options
MODES = {"default": (5, 0.1, ()),
         "full": (10, 0.5, ("--placement=all",)),
         "quick": (1, 0.001, ("--quick",))}

# The slab suite at the sizes of the mailing-list tables it reproduces;
# --full runs every size; slab-<malloc> takes the malloc rows alone.  The
# cold rows (a fresh cache, or a fresh process, per run) run at all sizes.
_SEQ = r"(8|64|256|1024|4096|16384)(/|$)"
_CONC = r"(placement:[a-z]*/)?size:(64|256|1024|4096)(/|$)"
SLAB = {"default": (rf"^slab/(seq|pair)/[^/]*/size:{_SEQ}|^slab/seq_cold/|"
                    rf"^slab/(conc|remote)/[^/]*/{_CONC}|"
                    r"^slab/(bulk|bulk_fallback|bulk_cpu_partial|"
                    r"bulk_cpu_partial_fallback|pair_mode)/",
                    rf"^slab/(seq|pair)/malloc-[^/]*/size:{_SEQ}|"
                    r"^slab/seq_cold/malloc-|"
                    rf"^slab/(conc|remote)/malloc-[^/]*/{_CONC}|"
                    r"^slab/bulk_fallback/malloc-"),
        "full": ("^slab/", "^slab/[^/]*/malloc-")}

# `make bench` on a big machine: the thread sweeps' points between half
# this and the PUs, and twice the PUs, are left to `make bench-full`
# (doc/benchmarks.md, "Running").
DEFAULT_THREADS = 256

# The cost of one instance: each repetition runs about RATE x min_time
# (Google Benchmark's iteration search overshoots the time asked, and the
# repetitions after the first repeat its count): 115 uncontended
# instances of 5 x 0.1 s took 85 s in the set
# results/x86_64/intel-xeon-processor-2pu/20261203-140840-0c38cb6, and
# every suite there ran at 1.45 to 1.55 times its repetitions' time.
# START: a quick run's cost of an instance, absent classes' skips alike
# (bench-quick on a 2-PU x86-64 VM: about 3 ms); THREAD: starting and
# joining one thread, per run of an instance (repetitions + the search).
RATE, START, THREAD = 1.5, 0.003, 50e-6


def flags(mode):
    reps, min_time, more = MODES[mode]
    return [f"--benchmark_repetitions={reps}",
            f"--benchmark_min_time={min_time:g}", *more]


def sweep(pus, cap):
    """atomkit-bench's default thread sweep (bench/main.c)."""
    top = min(pus, cap)
    return [1 << i for i in range(max(top - 1, 0).bit_length())
            if 1 << i < top] + [top] + ([min(2 * top, cap)] if top < cap
                                        else [])


def threads_option(mode, pus, cap):
    """--threads for `make bench` on a machine whose sweep passes
    DEFAULT_THREADS: its points up to half that, then the PUs."""
    points = sweep(pus, cap)
    if mode != "default" or points[-1] <= DEFAULT_THREADS:
        return []
    kept = [t for t in points if t <= DEFAULT_THREADS // 2] + [min(pus, cap)]
    return ["--threads=" + ",".join(str(t) for t in kept)]


def suite_filter(name, prefix, mode):
    if name == "slab" or name.startswith("slab-"):
        return SLAB["full" if mode == "full" else "default"][name != "slab"]
    return "^" + prefix


def seconds(names, mode, absent=()):
    """The estimated time of these instances, absent classes skipped."""
    reps, min_time, _ = MODES[mode]
    # summed in the order of a loop, so that the minutes shown stay put
    return sum((x for n in names for x in (START, 0.0 if any(
        f"/placement:{c}/" in n + "/" for c in absent) else
        reps * min_time * RATE + (reps + 2) * int(
            (re.findall(r"/threads:(\d+)$", n) or [1])[0]) * THREAD)), 0.0)


def max_threads(names):
    return max([int(t) for t in
                re.findall(r"/threads:(\d+)$", "\n".join(names), re.M)] or
               [1])


def clock(s):
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 \
        else f"{s // 60}:{s % 60:02d}"


def table(head, rows, total):
    """The plan as text: head, a row per suite, the total."""
    return "\n".join([head, f"{'suite':<16} {'instances':>9} {'threads':>8} "
                           f"{'minutes':>8}  what"] + [
        f"{name:<16} {n:>9} {threads:>8} {s / 60:>8.1f}  {what}"
        for name, n, threads, s, what in rows] + [
        f"{'total':<16} {sum(r[1] for r in rows):>9} {'':>8} "
        f"{total / 60:>8.1f}  estimated: {clock(total)}"])
