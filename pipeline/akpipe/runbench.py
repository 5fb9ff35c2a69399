"""Run the benchmark suites and write a result set:

  results/<arch>/<machine>/<date>-<rev>/machine.json   the machine, build
                                                       and run described
                                        <suite>.json   Google Benchmark JSON
                                        <suite>.txt    its console output
                                        macro.json     the whole programs
                                        macro.txt      (scripts/run-macro)
                                        tables.md, select.md, plots/
                                            rendered by atomkit-report

Usage: scripts/run-bench [--full] [--quick] [--out DIR] [--machine NAME]
                         [--bench PROGRAM] [--suites LIST] [--plan]
                         [--topology FILE.xml] [--commands]
                         [-- atomkit-bench options]

  (default)  every suite, 5 repetitions, 0.1 s each; then the whole
             programs' short subset (run-macro --short) (`make bench`)
  --full     10 repetitions, 0.5 s each, every placement class, and the
             whole programs in full (`make bench-full`)
  --quick    1 repetition, 0.001 s each: correctness only (the cross
             rig); no whole programs (tests/test_macro_quick.sh has them)
  --machine  the <machine> folder; default: derived from the CPU model and
             PU count, stable across runs (AK_MACHINE overrides it too)
  --suites   only these suites, comma-separated, in that order (those of
             `atomkit-bench --list-suites`, and macro); slab brings the
             preloaded mallocs' rows, macro the whole programs, which are
             left out unless named
  --plan     run nothing: per suite its instances, most threads and
             estimated minutes, the whole programs too, and the total
  --topology FILE.xml
             the plan for the machine that FILE describes (`lstopo --of
             xml` there; hwloc's HWLOC_XMLFILE), not this one
  --commands run nothing: one line per suite, its name and the
             atomkit-bench options it runs with (the system rig's guests
             run them without this script; no preloaded mallocs there)

The console shows a line per suite (its skips counted per reason) and a
progress line with the time left; Google Benchmark's own output goes to
the suite's .txt.  Each suite's files are written under a temporary name
and renamed when the suite finishes, so an interrupted run (Ctrl-C, kill)
leaves only complete files; it says so and keeps what finished.
"""
import os
import re
import subprocess
import sys

from . import plan, registry, runmacro, schema
from .console import Console, gbench_notes
from .registry import RunError

WHO = "run-bench"
# The rows printed at the end: suite, the median rows' pattern (its
# group names the row), what they are.
HEADLINES = (
    ("slab", r"^slab/seq/([^/]+)/size:64/.*_median$",
     "kmalloc(64) then kfree, one thread, per pair"),
    ("uncontended", r"^prim/[^/]+/(cmpxchg64/[^/]+)/lat_median$",
     "cmpxchg64 latency, one thread"),
)


def parse(argv):
    o = dict(mode="default", out=None, machine=os.environ.get("AK_MACHINE"),
             bench=os.environ.get("AK_BENCH", "./bench/atomkit-bench"),
             only=None, plan=False, commands=False, topology=None)
    o.update(registry.options(argv, {
        "--full": ("mode", "full"), "--quick": ("mode", "quick"),
        "--plan": ("plan", True), "--commands": ("commands", True)},
        {"--out": "out", "--machine": "machine", "--bench": "bench",
         "--suites": "only", "--topology": "topology"}, __doc__))
    return o


def choose(o, bench, top):
    """The suites to run (name, prefix), in order, and run-macro's size;
    bench/bench.h's where atomkit-bench is not built (the system rig asks
    before it builds)."""
    if bench.built():
        known = bench.suites()["suites"]
    else:
        with open(os.path.join(top, "bench", "bench.h")) as f:
            known = [{"name": n, "prefix": p} for n, p in re.findall(
                r'^\s*S\(([a-z0-9_]+), *"([^"]*)"', f.read(), re.M)]
    if not known:
        raise RunError(f"no suites found in {top}/bench/bench.h")
    names = [s["name"] for s in known]
    macro = None if bench.runner else {"default": "short",
                                       "full": "full"}.get(o["mode"])
    if o["only"] is not None:
        want = o["only"].split(",")
        for s in want:
            if s not in names + ["macro"]:
                raise RunError(f"--suites: unknown suite '{s}' (known: "
                               f"{' '.join(names)} macro)", 2)
        macro = macro if "macro" in want else None
        known = [next(k for k in known if k["name"] == s)
                 for s in want if s != "macro"]
    return [(s["name"], s["prefix"]) for s in known], macro


def preloads(suites, bench, con):
    """slab-<malloc> for each system malloc installed: the slab suite's
    malloc rows in a process of its own, no two sharing a heap."""
    if "slab" not in [s[0] for s in suites] or bench.runner:
        return []
    if registry.sanitized(bench.path):
        con.say(f"{bench.path} is built with AddressSanitizer: the system "
                "allocators are not preloaded")
        return []
    for name, soname in registry.SYSTEM_MALLOCS:
        if not registry.malloc_path(soname):
            con.say(f"{name} not installed ({soname}): its rows are left "
                    "out (scripts/setup-deps installs it)")
    return [(f"slab-{name}", "slab/", {"LD_PRELOAD": lib})
            for name, soname in registry.SYSTEM_MALLOCS
            for lib in [registry.malloc_path(soname)] if lib]


def suite_args(o, name, prefix, threads=()):
    return plan.flags(o["mode"]) + list(threads) + [
        f"--benchmark_filter={plan.suite_filter(name, prefix, o['mode'])}"]


def work(o, bench, suites, macro, top):
    """The plan: the machine's PUs and thread cap, the --threads of the
    sweeps, per suite (name, env, args, instances, seconds), and the whole
    programs' rows; one listing serves every suite (Google Benchmark's
    filter searches the names as re.search does)."""
    info = bench.suites()
    threads = plan.threads_option(o["mode"], info["pus"], info["max_threads"])
    absent = bench.placements()["absent"]
    listed = bench.tests(plan.flags(o["mode"]) + threads + o["extra"])
    rows = [(name, env, args + o["extra"], names,
             plan.seconds(names, o["mode"], absent))
            for name, prefix, env in suites
            for args in [suite_args(o, name, prefix, threads)]
            for names in [[n for n in listed
                           if re.search(args[-1].split("=", 1)[1], n)]]]
    macro = runmacro.plan_rows(macro, info["pus"], top) if macro else []
    return info, threads, rows, macro


def show_plan(o, info, threads, rows, macro):
    rows = [(name, len(names), plan.max_threads(names), s,
             "LD_PRELOAD=" + os.path.basename(env["LD_PRELOAD"]) if env
             else names[0].split("/")[0] + "/..." if names else "")
            for name, env, args, names, s in rows] + macro
    where = f"the hwloc XML {o['topology']}" if o["topology"] else \
        "this machine"
    print(plan.table(f"{WHO}: plan for {where}: {info['pus']} PUs, at most "
                     f"{info['max_threads']} threads a run; {o['mode']}: "
                     f"{' '.join(plan.flags(o['mode']) + threads)}",
                     rows, sum(r[3] for r in rows)))


def run_suite(con, bench, out, name, env, args, names):
    """One suite into OUT/<name>.json and .txt: (why it is left out, or
    None; its notes).  Google Benchmark's console goes to the .txt, its
    instances counted as they pass for the progress line."""
    tmp_j, tmp_t = f"{out}/{name}.json.tmp", f"{out}/{name}.txt.tmp"
    order = {n: i + 1 for i, n in enumerate(names)}
    cmd = bench.cmd(*args, f"--benchmark_out={tmp_j}",
                    "--benchmark_out_format=json")
    tail = []
    try:
        with open(tmp_t, "w") as txt, subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                env=dict(bench.env, **env), text=True,
                errors="replace") as p:
            try:
                for line in p.stdout:
                    txt.write(line)
                    tail = (tail + [line])[-15:]
                    con.step(order.get(line.split(" ", 1)[0], 0) or
                             con.cur["i"])
                rc = p.wait()
            finally:
                p.terminate()
        if rc != 0:
            con.say("".join(tail).rstrip(), err=True)
            raise RunError(f"suite {name} failed (exit {rc})")
        try:
            doc = schema.load_json(tmp_j)
            schema.check_suite(doc)
        except schema.SetError:
            return "no benchmarks on this machine", []
        if name.startswith("slab-") and f"malloc-{name[5:]}" not in str(
                [b.get("name") for b in doc["benchmarks"]]):
            return (f"LD_PRELOAD of {env['LD_PRELOAD']} did not replace "
                    "malloc; its rows are left out"), []
        os.replace(tmp_j, f"{out}/{name}.json")
        os.replace(tmp_t, f"{out}/{name}.txt")
        return None, gbench_notes(doc)
    finally:	# an interrupted or failed suite leaves no partial file
        for f in (tmp_j, tmp_t):
            if os.path.exists(f):
                os.unlink(f)


def headlines(out):
    """A few rows of the set, medians in its counter's unit."""
    lines = []
    for suite, pattern, what in HEADLINES:
        try:
            doc = schema.load_json(f"{out}/{suite}.json")
        except schema.SetError:
            continue
        key = doc.get("context", {}).get("ak_counter", "real_time")
        rows = [(m.group(1), b.get(key, b.get("real_time")))
                for b in doc.get("benchmarks", [])
                if not b.get("error_occurred")
                for m in [re.match(pattern, b["name"])] if m]
        if rows:
            lines.append(f"{what} ({key}, median):")
            lines += [f"  {n:<32} {v:10.2f}" for n, v in rows[:10]]
    return lines


def run(o):
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    env = {"HWLOC_XMLFILE": os.path.abspath(o["topology"])} \
        if o["topology"] else {}
    if o["topology"] and not os.path.isfile(o["topology"]):
        raise RunError(f"--topology {o['topology']}: no such file", 2)
    bench = registry.Bench(o["bench"], os.environ.get("AK_TEST_RUNNER", ""),
                           env)
    if not bench.built() and (not o["commands"] or o["topology"]):
        raise RunError(f"{o['bench']} not built: configure found no Google "
                       "Benchmark (install libbenchmark-dev, or run "
                       "scripts/setup-deps) and rerun configure")
    suites, macro = choose(o, bench, top)
    if o["commands"]:
        for name, prefix in suites:
            print(name, " ".join(suite_args(o, name, prefix)))
        return 0
    con = Console(WHO, 0)
    suites = [(s, p, {}) for s, p in suites]
    suites += preloads(suites, bench, con)
    info, threads, rows, mrows = work(o, bench, suites, macro, top)
    if o["plan"]:
        show_plan(o, info, threads, rows, mrows)
        return 0
    machine = o["machine"] or registry.machine_name(bench)
    if not machine or "/" in machine or machine.startswith("."):
        raise RunError(f"bad machine name '{machine}'", 2)
    out = o["out"] or registry.set_dir(top, bench, machine)
    os.makedirs(out, exist_ok=True)
    con.total = sum(r[4] for r in rows) + sum(r[3] for r in mrows)
    n = len(rows) + bool(macro)
    con.say(f"writing {out} ({o['mode']}): {n} suites, about "
            f"{plan.clock(con.total)} by the plan")
    current, done, macro_rc = "machine", [], 0
    registry.trap()
    try:
        schema.write_json(f"{out}/machine.json", registry.machine_doc(
            bench, top, machine, out, o["mode"],
            [r[0] for r in rows] + (["macro"] if macro else [])), "machine")
        for k, (name, env, args, names, est) in enumerate(rows, 1):
            current = name
            con.begin(k, n, name, len(names), est)
            why, notes = run_suite(con, bench, out, name, env, args, names)
            con.end(why or f"{len(names)} benchmark"
                    f"{'s' if len(names) != 1 else ''}", notes)
            if not why:
                done.append(name)
        if macro:
            current = "macro"
            con.begin(n, n, "macro", sum(r[1] for r in mrows),
                      sum(r[3] for r in mrows), "run")
            macro_rc = runmacro.main(
                [f"--{macro}", "--out", out, "--no-render", "--builddir",
                 os.path.dirname(os.path.dirname(bench.path)) or "."],
                con)
            kept = os.path.isfile(f"{out}/macro.json")
            done += ["macro"] if kept else []
            con.end("every run ok" if not macro_rc else "some runs failed, "
                    "marked in macro.json" if kept else
                    f"failed (exit {macro_rc})")
    except (registry.Interrupted, KeyboardInterrupt):
        con.say(f"interrupted during suite '{current}'; kept the finished "
                f"suites in {out}: {' '.join(sorted(os.listdir(out)))}",
                err=True)
        return 130
    finally:
        registry.trap(False)
    con.say("done: " + " ".join(done))
    registry.render(con, out, os.environ.get("AK_REPORT",
                                             "./report/atomkit-report"))
    print("".join(f"{line}\n" for line in headlines(out)), end="")
    con.say(f"result set in {out}")
    return 1 if macro_rc else 0


def main(argv=None):
    try:
        return run(parse(sys.argv[1:] if argv is None else argv))
    except (RunError, OSError, schema.SetError) as e:
        print(f"{WHO}: {e}", file=sys.stderr)
        return e.status if isinstance(e, RunError) else 1
