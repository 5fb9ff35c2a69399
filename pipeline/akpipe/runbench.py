"""Run the benchmark suites into a result set (doc/benchmarks.md,
"Running"): results/<arch>/<machine>/<date>-<rev>/ with machine.json, each
suite's JSON and Google Benchmark console (.txt), macro.json, and the
tables, selection report and plots that atomkit-report renders.

Usage: scripts/run-bench [--full|--quick] [--out DIR] [--machine NAME]
           [--bench PROGRAM] [--suites LIST] [--plan [--topology FILE.xml]]
           [--commands] [-- atomkit-bench options]

  (default)   every suite, 5 repetitions of 0.1 s, then the whole
              programs' short subset (`make bench`)
  --full      10 repetitions of 0.5 s, every placement class, the whole
              programs in full (`make bench-full`)
  --quick     1 repetition of 0.001 s: does everything run? no whole programs
  --machine   the <machine> folder (default, or AK_MACHINE: from the CPU
              model and PU count)
  --suites    only these, comma-separated, in that order; slab brings the
              preloaded mallocs' rows, macro the whole programs (left out
              unless named)
  --plan      run nothing: per suite its instances, most threads and
              estimated minutes; with --topology, for the machine that
              FILE.xml describes (`lstopo --of xml` there)
  --commands  run nothing: each suite's name and atomkit-bench options
              (the system rig's guests run them)
"""
import os
import re
import subprocess
import sys

from . import plan, registry, runmacro, schema
from .console import Console, gbench_notes
from .registry import RunError

WHO = "run-bench"
# The rows printed at the end: suite, the pattern of its median rows (the
# group names the row), what they are.
HEADLINES = (("slab", r"^slab/seq/([^/]+)/size:64/.*_median$",
              "kmalloc(64) then kfree, one thread, per pair"),
             ("uncontended", r"^prim/[^/]+/(cmpxchg64/[^/]+)/lat_median$",
              "cmpxchg64 latency, one thread"))


def choose(o, bench, top, con):
    """The suites (name, prefix, env) in order, slab-<malloc> for each
    system malloc installed (its rows in a process of its own), and
    run-macro's size; bench/bench.h's suites where atomkit-bench is not
    built (the system rig asks before it builds)."""
    if bench.built():
        known = {s["name"]: s["prefix"]
                 for s in bench.ask("--list-suites")["suites"]}
    else:
        with open(os.path.join(top, "bench", "bench.h")) as f:
            known = dict(re.findall(r'^\s*S\(([a-z0-9_]+), *"([^"]*)"',
                                    f.read(), re.M))
    want = [*known, "macro"] if o["only"] is None else o["only"].split(",")
    for s in want:
        if s not in known and s != "macro":
            raise RunError(f"--suites: unknown suite '{s}' (known: "
                           f"{' '.join(known)} macro)", 2)
    suites = [(s, known[s], {}) for s in want if s != "macro"]
    macro = "macro" in want and not bench.runner and {
        "default": "short", "full": "full"}.get(o["mode"])
    if o["commands"] or "slab" not in want or bench.runner:
        return suites, macro
    if registry.sanitized(bench.path):
        con.say(f"{bench.path} is built with AddressSanitizer: the system "
                "allocators are not preloaded")
        return suites, macro
    for name, soname in registry.SYSTEM_MALLOCS:
        if lib := registry.malloc_path(soname):
            suites.append((f"slab-{name}", "slab/", {"LD_PRELOAD": lib}))
        else:
            con.say(f"{name} not installed ({soname}): its rows are left "
                    "out (scripts/setup-deps installs it)")
    return suites, macro


def run_suite(con, bench, out, name, env, args, names):
    """One suite into OUT/<name>.json and .txt (Google Benchmark's console,
    its instances counted as they pass), and the suite's line."""
    tmp, lines = f"{out}/{name}.json.tmp", []
    order = {n: i for i, n in enumerate(names, 1)}
    cmd = bench.runner + [bench.path, *args, f"--benchmark_out={tmp}",
                          "--benchmark_out_format=json"]
    try:
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                              stderr=subprocess.STDOUT, errors="replace",
                              env=dict(bench.env, **env)) as p:
            try:
                for line in p.stdout:
                    lines.append(line)
                    con.step(order.get(line.split(" ", 1)[0], con.cur["i"]))
                rc = p.wait()
            finally:
                p.terminate()
        if rc != 0:
            con.say("".join(lines[-15:]).rstrip(), err=True)
            raise RunError(f"suite {name} failed (exit {rc})")
        try:
            doc = schema.load_json(tmp)
            schema.check_suite(doc)
        except schema.SetError:
            return con.end("no benchmarks on this machine")
        if name.startswith("slab-") and not any(
                f"malloc-{name[5:]}" in b["name"] for b in doc["benchmarks"]):
            return con.end(f"LD_PRELOAD of {env['LD_PRELOAD']} did not "
                           "replace malloc; its rows are left out")
        with open(f"{out}/{name}.txt", "w") as f:
            f.writelines(lines)
        os.replace(tmp, f"{out}/{name}.json")
        con.end(f"{len(names)} benchmark{'s' * (len(names) != 1)}",
                gbench_notes(doc))
    finally:	# an interrupted or failed suite leaves no partial file
        if os.path.exists(tmp):
            os.unlink(tmp)


def headlines(out):
    """A few rows of the set, medians in its counter's unit."""
    lines = []
    for suite, pattern, what in HEADLINES:
        try:
            doc = schema.load_json(f"{out}/{suite}.json")
        except schema.SetError:
            continue
        key = doc.get("context", {}).get("ak_counter", "real_time")
        rows = [f"  {m[1]:<32} {b.get(key, b.get('real_time')):10.2f}"
                for b in doc.get("benchmarks", [])
                if not b.get("error_occurred")
                for m in [re.match(pattern, b["name"])] if m]
        lines += [f"{what} ({key}, median):"] + rows[:10] if rows else []
    return lines


def work(o, bench, suites, macro, top):
    """The plan: a row (name, instances, most threads, seconds, what) and
    a job (env, instances, options) per suite, the whole programs' rows.
    One listing serves every suite: Google Benchmark's filter searches
    the names as re.search does."""
    info = bench.ask("--list-suites")
    flags = plan.flags(o["mode"], info["pus"], info["max_threads"])
    absent = re.findall(r"^(\S+) +absent:", bench.ask("--list-placements"),
                        re.M)
    listed = bench.ask(*flags, *o["extra"], "--benchmark_list_tests=true")
    rows = []
    for name, prefix, env in suites:
        pattern = plan.suite_filter(name, prefix, o["mode"])
        names = [n for n in listed.split() if re.search(pattern, n)]
        rows.append(((name, len(names),
                      max(map(plan.threads, names), default=1),
                      plan.seconds(names, o["mode"], absent),
                      f"LD_PRELOAD={os.path.basename(env['LD_PRELOAD'])}"
                      if env else prefix + "..."),
                     (env, names, flags + [f"--benchmark_filter={pattern}"] +
                      o["extra"])))
    return info, flags, rows, (runmacro.plan_rows(macro, info["pus"], top)
                               if macro else [])


def run(o, top):
    if o["topology"] and not os.path.isfile(o["topology"]):
        raise RunError(f"--topology {o['topology']}: no such file", 2)
    bench = registry.Bench(o["bench"], os.environ.get("AK_TEST_RUNNER", ""),
                           {"HWLOC_XMLFILE": os.path.abspath(o["topology"])}
                           if o["topology"] else {})
    if not bench.built() and (not o["commands"] or o["topology"]):
        raise RunError(f"{o['bench']} not built: configure found no Google "
                       "Benchmark (install libbenchmark-dev, or run "
                       "scripts/setup-deps) and rerun configure")
    con = Console(WHO, 0)
    suites, macro = choose(o, bench, top, con)
    if o["commands"]:
        for name, prefix, _ in suites:
            print(name, *plan.flags(o["mode"]), "--benchmark_filter=" +
                  plan.suite_filter(name, prefix, o["mode"]))
        return 0
    info, flags, rows, mrows = work(o, bench, suites, macro, top)
    con.total = sum(r[3] for r, _ in rows) + sum(r[3] for r in mrows)
    if o["plan"]:
        where = f"the hwloc XML {o['topology']}" if o["topology"] else \
            "this machine"
        print(plan.table(f"{WHO}: plan for {where}: {info['pus']} PUs, at "
                         f"most {info['max_threads']} threads a run; "
                         f"{o['mode']}: {' '.join(flags)}",
                         [r for r, _ in rows] + mrows, con.total))
        return 0
    machine = o["machine"] or registry.machine_name(bench)
    if not machine or "/" in machine or machine.startswith("."):
        raise RunError(f"bad machine name '{machine}'", 2)
    out = o["out"] or registry.set_dir(top, bench, machine)
    os.makedirs(out, exist_ok=True)
    names = [r[0] for r, _ in rows] + ["macro"] * bool(macro)
    con.say(f"writing {out} ({o['mode']}): {len(names)} suites, about "
            f"{plan.clock(con.total)} by the plan")
    macro_rc, current = 0, "machine"
    registry.trap()
    try:
        schema.write_json(f"{out}/machine.json", registry.machine_doc(
            bench, top, machine, out, o["mode"], names), "machine")
        for k, ((name, n, _, est, _), (env, instances, args)) in enumerate(
                rows, 1):
            con.begin(k, len(names), current := name, n, est)
            run_suite(con, bench, out, name, env, args, instances)
        if macro:
            con.begin(len(names), len(names), current := "macro",
                      sum(r[1] for r in mrows), sum(r[3] for r in mrows),
                      "run")
            macro_rc = runmacro.main(
                [f"--{macro}", "--out", out, "--no-render", "--builddir",
                 os.path.dirname(os.path.dirname(bench.path)) or "."], con)
            con.end("every run ok" if not macro_rc else "some runs failed, "
                    "marked in macro.json" if os.path.isfile(
                        f"{out}/macro.json") else f"failed (exit {macro_rc})")
    except registry.Interrupted:
        con.say(f"interrupted during suite '{current}'; kept the finished "
                f"suites in {out}: {' '.join(sorted(os.listdir(out)))}",
                err=True)
        return 130
    finally:
        registry.trap(False)
    con.say("done: " + " ".join(n for n in names
                                if os.path.isfile(f"{out}/{n}.json")))
    registry.render(con, out, os.environ.get("AK_REPORT",
                                             "./report/atomkit-report"))
    print("".join(f"{line}\n" for line in headlines(out)), end="")
    con.say(f"result set in {out}")
    return 1 if macro_rc else 0


def main(argv=None):
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    o = dict(mode="default", out=None, machine=os.environ.get("AK_MACHINE"),
             bench=os.environ.get("AK_BENCH", "./bench/atomkit-bench"),
             only=None, plan=False, commands=False, topology=None)
    try:
        o.update(registry.options(sys.argv[1:] if argv is None else argv, {
            "--full": ("mode", "full"), "--quick": ("mode", "quick"),
            "--plan": ("plan", True), "--commands": ("commands", True)},
            {"--out": "out", "--machine": "machine", "--bench": "bench",
             "--suites": "only", "--topology": "topology"}, __doc__))
        return run(o, top)
    except (RunError, OSError, schema.SetError) as e:
        print(f"{WHO}: {e}", file=sys.stderr)
        return e.status if isinstance(e, RunError) else 1
