"""What a run of the suites does and how long it takes: each suite's
atomkit-bench options and the estimated time of its instances (listed by
atomkit-bench under the machine's topology or an hwloc XML file's);
doc/benchmarks.md, "The plan", says where the estimate comes from."""
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
                    r"bulk_cpu_partial_fallback|pair_mode|pair_fixed|sections)/",
                    rf"^slab/(seq|pair)/malloc-[^/]*/size:{_SEQ}|"
                    r"^slab/seq_cold/malloc-|"
                    rf"^slab/(conc|remote)/malloc-[^/]*/{_CONC}|"
                    r"^slab/bulk_fallback/malloc-"),
        "full": ("^slab/", "^slab/[^/]*/malloc-")}

# `make bench` on a machine whose thread sweep (bench/main.c: the powers
# of two below the PUs, the PUs, twice them, at most the cap) passes this
# runs its points up to half of it, then the PUs (doc/benchmarks.md).
DEFAULT_THREADS = 256
# An instance's repetitions take RATE x their min_time; each instance
# costs START more, and each thread of each of its runs THREAD.
RATE, START, THREAD = 1.5, 0.003, 50e-6


def flags(mode, pus=1, cap=1):
    """atomkit-bench's options in this mode, on a machine of pus PUs that
    caps a run's threads at cap."""
    reps, min_time, more = MODES[mode]
    out = [f"--benchmark_repetitions={reps}",
           f"--benchmark_min_time={min_time:g}", *more]
    top = min(pus, cap)
    if mode == "default" and min(2 * top, cap) > DEFAULT_THREADS:
        cut = [2 ** i for i in range(DEFAULT_THREADS.bit_length() - 1)]
        out.append("--threads=" + ",".join(map(str, cut + [top])))
    return out


def suite_filter(name, prefix, mode):
    if name == "slab" or name.startswith("slab-"):
        return SLAB["full" if mode == "full" else "default"][name != "slab"]
    return "^" + prefix


def threads(name):
    """The threads an instance runs with, from its name."""
    m = re.search(r"/threads:(\d+)$", name)
    return int(m[1]) if m else 1


def seconds(names, mode, absent=()):
    """The estimated time of these instances, absent classes skipped."""
    reps, min_time, _ = MODES[mode]
    total = 0.0	# summed in this order, so that the minutes shown stay put
    for n in names:
        total += START
        if not any(f"/placement:{c}/" in n + "/" for c in absent):
            total += (reps * min_time * RATE +
                      (reps + 2) * threads(n) * THREAD)
    return total


def clock(s):
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 \
        else f"{s // 60}:{s % 60:02d}"


def table(head, rows, total):
    """The plan as text: head, a row (name, instances, most threads,
    seconds, what) per suite, the total."""
    return "\n".join([head, f"{'suite':<16} {'instances':>9} {'threads':>8} "
                           f"{'minutes':>8}  what"] + [
        f"{name:<16} {n:>9} {most:>8} {s / 60:>8.1f}  {what}"
        for name, n, most, s, what in rows] + [
        f"{'total':<16} {sum(r[1] for r in rows):>9} {'':>8} "
        f"{total / 60:>8.1f}  estimated: {clock(total)}"])
