"""atomkit-report (pipeline/akpipe, doc/report.md) over the committed
result sets and the fixture sets of tests/fixtures/ (short real runs,
never edited: the tests look at what is rendered from them, checked
against the files), and over damaged copies of them: each kind of bad
input is one line naming the file, a non-zero exit, never a traceback."""
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from conftest import TOP
from akpipe import report, schema

SETS = sorted(os.path.dirname(p) for p in glob.glob(
    os.path.join(TOP, "results", "**", "machine.json"), recursive=True))


def run(capsys, *args):
    """(exit status, stdout, stderr) of atomkit-report ARGS, in-process."""
    capsys.readouterr()
    rc = report.main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return rc, out, err


@pytest.fixture(scope="session")
def fx(tmp_path_factory):
    """The fixture sets, unpacked: set, honest, macro, fixed."""
    top = tmp_path_factory.mktemp("fixtures")
    out = {}
    for name in ("set", "honest", "macro", "fixed"):
        with tarfile.open(os.path.join(TOP, "tests", "fixtures",
                                       name + ".tar.xz")) as t:
            t.extractall(top / name)
        out[name] = str(top / name / "set")
    return out


@pytest.fixture
def copy(tmp_path):
    def f(src, name="copy"):
        return shutil.copytree(src, tmp_path / name)
    return f


def well_formed(md):
    """Every Markdown table row has as many cells as its header."""
    cols = None
    for ln in md.splitlines():
        if not ln.startswith("|"):
            cols = None
            continue
        c = ln.count("|") - ln.count("\\|")
        if cols is None:
            cols = c
        assert c == cols, ln


def section(md, head):
    """The lines from the heading starting with head to the next one."""
    m = re.search(r"^### " + re.escape(head) + r".*?(?=^### |\Z)", md,
                  re.M | re.S)
    assert m, head
    return m.group(0)


def rows(md):
    """The body rows of the Markdown tables in md, as lists of cells."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]]
            for ln in md.splitlines() if ln.startswith("| ")]


def num(v):
    """A figure as the report writes it: 3 significant digits."""
    if abs(v) >= 99.95 or v == 0:
        return "%.0f" % v
    return ("%#.3g" % v).rstrip(".")


def targets_ok(md, least):
    """Each target row says met exactly when its ratio is within the goal,
    else the gap; n/a without a ratio."""
    n = 0
    for r in rows(md):
        if r[0] == "target":
            continue
        n += 1
        if r[2] == "–":
            assert r[4].startswith("n/a: "), r
            continue
        ratio, goal = float(r[2][:-1]), float(r[3][3:-1])
        met = ratio <= goal if r[3].startswith("<") else ratio >= goal
        if r[4] == "met":
            assert met, r
        else:
            assert re.match(r"not met: [0-9.]+% (over|under)", r[4]), r
            assert not met or ratio == goal, r
    assert n >= least


def within_80(text):
    long = [ln for ln in text.splitlines() if len(ln) > 80]
    assert not long, long[:2]
    assert "|" not in text and "\\" not in text


# ---- every committed set ----

@pytest.mark.parametrize("path", SETS, ids=[os.path.relpath(
    p, os.path.join(TOP, "results")) for p in SETS])
def test_committed_set_renders(capsys, path):
    for cmd in ("tables", "select", "check"):
        rc, out, err = run(capsys, cmd, path)
        assert rc == 0 and not err, (cmd, err)
    well_formed(out)
    rc, out, err = run(capsys, "--format=text", "tables", path)
    assert rc == 0
    assert not [ln for ln in out.splitlines() if len(ln) > 80]


@pytest.mark.skipif(not SETS, reason="no results/ here (a tarball)")
def test_index_of_results(capsys):
    rc, out, err = run(capsys, "index", os.path.join(TOP, "results"))
    assert rc == 0 and not err
    well_formed(out)
    assert sum(ln.startswith("| ") for ln in out.splitlines()) == \
        len(SETS) + 1


# ---- the fixture set ----

def test_fixture_tables(capsys, fx):
    rc, out, err = run(capsys, "tables", fx["set"])
    assert rc == 0 and not err
    for h in ("### Primitives, uncontended", "### Per-CPU operations",
              "### CAS that succeeds against CAS that fails",
              "### Slab, 10000 allocations then 10000 frees, alloc(N)",
              "### Slab, alloc+free pairs by size",
              "### Slab, concurrent allocation",
              "### Slab, bulk allocation",
              "### Slab beside the system allocators",
              "### Slab targets", "| alloc(64) |", "| free(64) |",
              "| `add` |", "Unit: ",
              "| slub-tid | slub-local | rseq-list | array | sheaf | "
              "locked |",
              "No table of what each per-CPU op costs beyond its rseq "
              "section: this set predates the bare-section rows",
              "The shape of the 2007 SLUB cmpxchg\\_local thread's"):
        assert h in out, h
    assert not re.search(r"seed table|issue \d", out, re.I)
    well_formed(out)


def test_fixture_select_and_check(capsys, fx):
    rc, out, err = run(capsys, "select", fx["set"])
    assert rc == 0 and "freelist" in out and "counter add" in out
    rc, out, err = run(capsys, "check", fx["set"])
    assert rc == 0 and re.match(r".*: ok \(11 suites, \d+ benchmarks\)$",
                                out.strip())


@pytest.mark.parametrize("name,file,edit,msg", [
    ("truncated", "slab.json", lambda t: t[:2000],
     "slab.json: not valid JSON at line"),
    ("not JSON", "percpu.json", lambda t: "<html>" + t,
     "percpu.json: not valid JSON at line 1, column 1"),
    ("wrong type", "percpu.json", lambda t: re.sub(
        r'"real_time": [0-9]', '"real_time": "fast", "x": 1', t, 1),
     "percpu.json: benchmarks[0].real_time: expected a number, found a "
     "string"),
    ("negative time", "percpu.json", lambda t: re.sub(
        r'"real_time": ([0-9])', r'"real_time": -\1', t, 1),
     "percpu.json: benchmarks[0].real_time: -"),
    ("NaN time", "percpu.json", lambda t: re.sub(
        r'"real_time": [0-9.e+-]+', '"real_time": NaN', t, 1),
     "percpu.json: benchmarks[0].real_time: NaN or null: not a time"),
    ("malformed label", "slab.json", lambda t: re.sub(
        r'"ak_size": [0-9]+', '"ak_size": "big"', t, 1),
     "slab.json: benchmarks[0].ak_size: expected an integer, found a "
     "string"),
    ("unlabelled", "percpu.json", lambda t: re.sub(
        r'\s*"ak_suite": "[^"]*",', "", t),
     "percpu.json: benchmarks[0]: no ak_suite: row left out"),
    ("no name", "percpu.json", lambda t: re.sub(
        r'"name": "[^"]*",', "", t, 1),
     "percpu.json: benchmarks[0]: no name: row left out"),
    ("missing benchmarks", "casfail.json", lambda t: json.dumps(
        {"context": {}}), "casfail.json: benchmarks: missing"),
    ("an array at the top", "casfail.json", lambda t: "[]",
     "casfail.json: expected an object at the top, found an array"),
    ("duplicate key", "casfail.json", lambda t: t.replace(
        '"context": {', '"context": {"x": 1, "x": 2, ', 1),
     "casfail.json: not valid JSON"),
])
def test_damaged_suite(capsys, fx, copy, name, file, edit, msg):
    d = copy(fx["set"])
    p = d / file
    p.write_text(edit(p.read_text()))
    rc, out, err = run(capsys, "tables", d)
    assert rc == 1 and msg in err, err
    assert "### Primitives, uncontended" in out
    rc, out, err = run(capsys, "check", d)
    assert rc == 1 and ": problems (" in out


@pytest.mark.parametrize("args,rc,msg", [
    (["--format=html", "tables", "SET"], 2, "unknown format 'html'"),
    (["frobnicate"], 2, "unknown subcommand"),
    (["tables", "--bogus", "SET"], 2, "unknown option '--bogus'"),
    (["compare", "SET"], 2, "needs two sets"),
    (["index"], 2, "needs one folder"),
    (["plot", "SET"], 2, "needs -o OUTDIR"),
    ([], 2, "usage:"),
])
def test_usage(capsys, fx, args, rc, msg):
    got, out, err = run(capsys, *[fx["set"] if a == "SET" else a
                                  for a in args])
    assert got == rc and msg in err


def test_help(capsys):
    rc, out, err = run(capsys, "--help")
    assert rc == 0 and "Exit status:" in out


def test_rejected_sets(capsys, fx, tmp_path, copy):
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, out, err = run(capsys, "tables", empty)
    assert rc == 3 and err.count("\n") == 1
    assert "no machine.json: not a result set" in err
    rc, out, err = run(capsys, "index", empty)
    assert rc == 3 and "no result sets" in err
    rc, out, err = run(capsys, "check", tmp_path / "nosuch")
    assert rc == 3 and "No such file or directory" in err
    only = tmp_path / "only"
    only.mkdir()
    shutil.copy(os.path.join(fx["set"], "machine.json"), only)
    rc, out, err = run(capsys, "tables", only)
    assert rc == 3 and "empty: no suite results" in err
    s2 = copy(fx["set"], "schema2")
    m = s2 / "machine.json"
    m.write_text(m.read_text().replace('"ak_schema": "1"',
                                       '"ak_schema": "2"'))
    rc, out, err = run(capsys, "check", s2)
    assert rc == 3 and "machine.json: schema version 2 is unknown" in err
    rc, out, err = run(capsys, "compare", fx["set"], s2)
    assert rc == 3 and "has schema 1" in err and not out
    m.write_text("{")
    rc, out, err = run(capsys, "tables", s2)
    assert rc == 3 and "machine.json: not valid JSON" in err
    assert "(truncated?)" in err


def test_launcher_never_a_traceback(tmp_path):
    """The installed command: an unreadable set is one line, and so is a
    bug (an internal error), never a traceback."""
    exe = os.environ.get("AK_REPORT", "./report/atomkit-report")
    if not os.access(exe, os.X_OK):
        exe = None
    cmd = [exe] if exe else [sys.executable, "-c", "import sys; "
                             f"sys.path.insert(0, {TOP + '/pipeline'!r}); "
                             "from akpipe.report import main; "
                             "sys.exit(main())"]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "machine.json").write_text("\0\1\2")
    env = dict(os.environ)
    env.pop("AK_REPORT_DEBUG", None)
    p = subprocess.run(cmd + ["tables", str(bad)], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 3 and p.stderr.count("\n") == 1, p.stderr
    assert "Traceback" not in p.stderr


# ---- compare ----

def fake_set(path, runs, machine="fixture"):
    """A set of one suite: name -> list of tsc_ticks, one per run."""
    os.makedirs(path)
    schema.write_json(os.path.join(path, "machine.json"), dict(
        ak_schema="1", ak_machine=machine, ak_counter="tsc_ticks",
        ak_counter_unit="TSC ticks", ak_suites="harness"), "machine")
    bench = []
    for name, xs in runs.items():
        base = dict(name=name, run_name=name, ak_suite="harness",
                    ak_op=name, repetitions=len(xs), time_unit="ns")
        bench += [dict(base, run_type="iteration", real_time=x,
                       tsc_ticks=x) for x in xs]
    schema.write_json(os.path.join(path, "harness.json"),
                      dict(context={}, benchmarks=bench), "suite")
    return path


def test_compare_flags(capsys, tmp_path):
    """Flagged only where the noise rule and the U test agree: beyond
    the noise with 5 runs each, U test agrees; one outlier that widens
    the ranges apart is noise; too few runs for the U test, the rule
    alone; skipped in one set, never flagged."""
    a = fake_set(str(tmp_path / "a"), dict(
        up=[10, 10.1, 10.2, 10.1, 10.0], down=[20, 20.2, 20.1, 20, 20.3],
        flat=[5, 5.1, 5.0, 5.05, 5.1], few=[7, 7.1], cvonly=[
            3, 3.1, 3.05, 3.0, 3.1]))
    b = fake_set(str(tmp_path / "b"), dict(
        up=[12, 12.1, 12.2, 12.1, 12.0], down=[15, 15.2, 15.1, 15, 15.3],
        flat=[5.02, 5.08, 5.01, 5.04, 5.06], few=[9, 9.1], cvonly=[
            3.2, 3.3, 3.25, 3.2, 3.3]))
    rc, out, err = run(capsys, "compare", a, b)
    assert rc == 0, err
    v = {r[0].strip("`"): r[-1] for r in rows(out) if r[0].startswith("`")}
    assert v["up"] == "slower" and v["down"] == "faster"
    assert v["flat"] == "noise" and v["few"] == "slower"
    assert "The U test ran on 4 of 5 benchmarks" in out
    rc, out, err = run(capsys, "--format=text", "compare", b, a)
    t = {ln.split()[0]: ln.split()[-1] for ln in out.splitlines()
         if ln.split() and ln.split()[0] in ("up", "down", "few")}
    assert t == dict(up="faster", down="slower", few="faster")
    within_80(out)


def test_compare_text_fixture(capsys, fx):
    rc, out, err = run(capsys, "--format=text", "compare", fx["set"],
                       fx["set"])
    assert rc == 0
    for p in (r"^ *before  *after  *delta$", r"^harness, TSC ticks$",
              r"^slab seq, TSC ticks$", r"^contention x86_64 spread, Mops/s$",
              r"^empty_loop  ", r"^rseq-list size:64  "):
        assert re.search(p, out, re.M), p
    assert not re.search(r"^\||`|\*\*|^#", out, re.M)

    def pair_row(x, y):
        out = run(capsys, "--format=text", "compare", x, y)[1]
        sect = out[out.index("\nslab pair, "):]
        return next(ln for ln in sect.splitlines()
                    if ln.startswith("rseq-list size:64 "))
    assert re.search(r" -[0-9.]+%  faster$", pair_row(fx["set"],
                                                       fx["honest"]))
    assert re.search(r" \+[0-9.]+%  slower$", pair_row(fx["honest"],
                                                        fx["set"]))
    within_80(run(capsys, "--format=text", "compare", fx["set"],
                  fx["honest"])[1])


def test_text_tables(capsys, fx):
    rc, out, err = run(capsys, "--format=text", "tables", fx["set"])
    assert rc == 0
    within_80(out)
    assert re.search(r"^topology  *\(1\)$", out, re.M)
    assert re.search(r"^\(1\) 1 package\(s\)", out, re.M)
    assert len(re.findall(r"^primitive ", out, re.M)) >= 2
    assert not re.search(r"^#|\*\*|`", out, re.M)


# ---- the honest fixture: warm and cold, fastpaths, targets, macro ----

def test_honest_tables(capsys, fx):
    rc, out, err = run(capsys, "tables", fx["honest"])
    assert rc == 0 and not err
    well_formed(out)
    for h in ("### Slab seq at 4096 and 16384 B against the best system "
              "allocator", "### Slab, cold start",
              "### What each design costs beyond its fastpath primitive",
              "### What each per-CPU op costs beyond its rseq section",
              "### Slab targets", "**corrected**: the raw figure less timer",
              "### Whole program: compile (compile)",
              "### Whole program: churn (synthetic)",
              "Workloads left out: sizemix (", "| failed runs |",
              "The shape of the 2009 kernel-build check"):
        assert h in out, h
    for m in re.finditer(r"^### Slab.*?\n\n(.*?)\n", out, re.M):
        assert ("**cold start**" in m.group(1) if "cold start" in
                m.group(0) else "warm steady state" in m.group(1) or
                not m.group(1).startswith("Unit")), m.group(0)
    cold = section(out, "Slab, cold start")
    for z in ("64", "4096", "16384"):
        assert re.search(rf"^\| {z} \|.* slabs\)", cold, re.M)
    gap = section(out, "Slab seq at 4096")
    notes = re.findall(r"\| ([0-9.]+)x \((\d+)\)", gap)
    for r in rows(gap)[1:]:
        for c in r[2:]:
            m = re.match(r"([0-9.]+)x( \(\d+\))?$", c)
            if m:
                assert float(m.group(1)) >= 2 if m.group(2) else \
                    float(m.group(1)) <= 2, c
    assert not notes or "new\\_slabs" in gap
    dec = section(out, "What each design costs beyond its fastpath")
    assert "`percpu/array_pop_push_section/rseq`" in dec
    assert "`prim/ref/mutex_pop_push/lat`" in dec
    opd = section(out, "What each per-CPU op costs beyond its rseq section")
    n = 0
    for r in rows(opd)[1:]:
        if r[5] != "–":
            n += 1
            x = float(r[5][:-1])
            assert r[6] == "met" or r[6].endswith("% over") if x == 1.05 \
                else \
                r[6] == "met" if x < 1.05 else r[6].endswith("% over"), r
    assert n >= 20
    targets_ok(section(out, "Slab targets"), 9)


def test_fixed_design_pairs(capsys, fx):
    """A design's pairs built for it alone (slab/pair_fixed) sit under its
    library pairs in the decomposition, against the same sections (its
    slab/sections row, timed beside them), and count for the best pair:
    the lowest of all, with its name."""
    rc, out, err = run(capsys, "tables", fx["fixed"])
    assert rc == 0, err
    dec = rows(section(out, "What each design costs beyond its fastpath"))
    names = [r[0] for r in dec[1:]]
    pairs = {}
    for d in ("rseq-list", "array", "sheaf"):
        i = names.index(d)
        assert names[i + 1] == d + ", built for it alone", names
        assert dec[i + 1][2] == dec[i + 2][2] == \
            f"`slab/sections/{d}/size:64`"
        pairs.update((names[k], float(dec[k + 1][4].split()[0]))
                     for k in (i, i + 1))
    best = min(pairs, key=pairs.get)
    t = [r for r in rows(section(out, "Slab targets"))
         if r[0].startswith("best pair 64 B / the sections")][0]
    assert t[1].startswith(f"{best} {num(pairs[best])} / "), (t, pairs)


def test_honest_figures(capsys, fx):
    """Cells that are the files' figures: the L1 load less its timer, and
    glibc's compile elapsed the mean of its runs."""
    out = run(capsys, "tables", fx["honest"])[1]
    doc = json.load(open(os.path.join(fx["honest"], "cacheline.json")))
    med = {r["run_name"]: r for r in doc["benchmarks"]
           if r.get("aggregate_name") == "median"}
    l1 = next(r for n, r in med.items() if re.match(r"cacheline/L1/load",
                                                    n))
    want = num(l1["tsc_ticks"] - l1["timer_ticks"])
    assert re.search(rf"^\| L1 \| {re.escape(want)}[ |]", out, re.M), want
    m = json.load(open(os.path.join(fx["honest"], "macro.json")))
    wl = next(w for w in m["workloads"] if w["name"] == "compile")
    runs = next(r for r in wl["results"] if r["allocator"] == "glibc")
    xs = [r["elapsed_s"] for r in runs["runs"] if r["ok"]]
    got = next(r for r in rows(section(out, "Whole program: compile"))
               if r[0] == "glibc")[3]
    assert got.split(" (")[0] == num(sum(xs) / len(xs))
    git = section(out, "Whole program: git")
    assert all(re.search(r"\d+ of \d+ \(\d+\)", r[-1])
               for r in rows(git)[1:])


def test_honest_check_select_plot(capsys, fx, tmp_path):
    rc, out, err = run(capsys, "check", fx["honest"])
    assert rc == 0 and "whole programs: " in out and "missing" not in out
    rc, out, err = run(capsys, "select", fx["honest"], fx["set"])
    assert rc == 0 and "### Fastpath against whole programs" in out
    assert "| fastpath against whole programs |" in out
    rc, out, err = run(capsys, "plot", fx["honest"], "-o", tmp_path / "p")
    assert rc == 0, err
    m = json.load(open(os.path.join(fx["honest"], "macro.json")))
    ran = [w["name"] for w in m["workloads"] if w["status"] == "ran" and
           any(r["ok"] for res in w["results"] if res["allocator"] ==
               m["ak_baseline"] for r in res["runs"])]
    svgs = glob.glob(str(tmp_path / "p" / "macro-*.svg"))
    assert len(svgs) == len(ran) and len(glob.glob(
        str(tmp_path / "p" / "macro-*.dat"))) == len(ran)
    assert all(open(f).read().lstrip().startswith("<?xml") for f in svgs)
    assert out.count("![") == len(glob.glob(str(tmp_path / "p" / "*.svg")))
    rc, out, err = run(capsys, "--format=text", "tables", fx["honest"])
    assert not [ln for ln in out.splitlines() if len(ln) > 80]


def test_macro_alone_is_a_set(capsys, fx, tmp_path):
    d = tmp_path / "alone"
    d.mkdir()
    for f in ("machine.json", "macro.json"):
        shutil.copy(os.path.join(fx["honest"], f), d)
    rc, out, err = run(capsys, "check", d)
    assert rc == 0 and "whole programs: " in out
    # no primitive to rank, and no "1 run each" for 5 runs of each program
    rc, out, err = run(capsys, "select", d)
    assert rc == 0 and not err
    assert "Whole programs only: no primitive measured" in out
    assert "No candidate measured" not in out and "1 run" not in out
    rc, out, err = run(capsys, "index", tmp_path)
    assert rc == 0 and "whole programs only" in out and "1 run" not in out


def damage(capsys, copy, fx, src, edit, msg):
    """The honest fixture with src's macro.json edited: one line naming
    the file, the place and msg; exit 1; the whole programs left out."""
    d = copy(fx["honest"], "bad")
    p = d / "macro.json"
    p.write_text(edit(open(os.path.join(src, "macro.json")).read()))
    rc, out, err = run(capsys, "check", d)
    assert rc == 1 and err.startswith(f"atomkit-report: {p}: ") and \
        msg in err, err
    assert err.count("\n") == 1
    assert err.rstrip().endswith(": the whole programs are left out")
    return d


def sub1(pat, rep):
    return lambda t: re.sub(pat, rep, t, 1)


@pytest.mark.parametrize("edit,msg", [
    (sub1(r'"elapsed_s": [0-9.]+', '"elapsed_s": -0.5'),
     "workloads[0].results[0].runs[0].elapsed_s: -0.5 is negative"),
    (sub1(r'"user_s": [0-9.]+', '"user_s": "slow"'),
     "user_s: expected a number, found a string"),
    (sub1(r'"status": "ran"', '"status": "x"'),
     '.status: "x" is neither ran nor skipped'),
    (sub1(r'"ak_macro_schema": "[0-9]"', '"ak_macro_schema": "3"'),
     "ak_macro_schema: version 3 is unknown"),
    (sub1(r'"ak_failures": [0-9]+', '"ak_failures": 99'),
     "ak_failures: 99, but"),
    (sub1(r'"run": [0-9]+', '"run": 7'), "is not one of the"),
    (sub1(r'"allocator": "[^"]*"', '"allocator": "nosuch"'),
     '"nosuch" is not an allocator that ran (allocators)'),
    (lambda t: t[:len(t) // 2], "not valid JSON at line"),
    (lambda t: "[]", "expected an object at the top, found an array"),
])
def test_macro_damage(capsys, fx, copy, edit, msg):
    d = damage(capsys, copy, fx, fx["honest"], edit, msg)
    rc, out, err = run(capsys, "tables", d)
    assert rc == 1 and "macro.json is damaged" in out
    assert "### Per-CPU operations" in out


def test_macro_schema1(capsys, fx, copy):
    d = copy(fx["honest"], "s1")
    p = d / "macro.json"
    m = json.loads(p.read_text())
    m["ak_macro_schema"] = "1"
    for wl in m["workloads"]:
        for res in wl.get("results", []):
            for r in res["runs"]:
                r.pop("malloc_counters", None)
    p.write_text(json.dumps(m))
    rc, out, err = run(capsys, "tables", d)
    assert rc == 0, err
    assert "the set predates them (ak\\_macro\\_schema 1)" in out
    assert "| design | procs |" not in out
    mt = section(out, "Targets of the whole programs")
    targets_ok(mt, 20)
    assert re.search(r"^\| git: elapsed \| – \| – \| .* \| n/a: ", mt,
                     re.M)
    assert "Left out of the targets, for their failed runs: git: " in mt


def test_old_set(capsys):
    old = [p for p in SETS if "074650" in p]
    if not old:
        pytest.skip("no set from before the warm slab runs")
    out = run(capsys, "tables", old[0])[1]
    for s in ("not known to be warm", "No cold-start table",
              "not corrected: set predates the timer measurement"):
        assert s in out


# ---- the counters fixture: macro.json with malloc_counters ----

def test_counters(capsys, fx):
    rc, out, err = run(capsys, "tables", fx["macro"])
    assert rc == 0 and not err
    well_formed(out)
    nw = len(re.findall(r"^### Whole program: ", out, re.M))
    nc = out.count("| design | procs | refills | slabs made | slabs freed "
                   "| heap misses | madvise | mapped MiB | fallback |")
    assert nw >= 1 and nc == nw
    m = json.load(open(os.path.join(fx["macro"], "macro.json")))
    wl = next(w for w in m["workloads"] if w["name"] == "redis")
    res = {r["allocator"]: r["runs"] for r in wl["results"]}
    xs = [r["malloc_counters"]["refills"] for r in res["sheaf"] if r["ok"]]
    want = sum(xs) / len(xs)
    got = next(r for r in rows(section(out, "Whole program: redis"))
               if r[0] == "sheaf" and len(r) == 9)[2]
    assert got == ("%.0f" % want if want == int(want) else num(want))
    designs = [a["name"] for a in m["allocators"] if a["kind"] == "design"
               and a["status"] == "ran"]
    mean = {a: sum(r["elapsed_s"] for r in res[a]) / len(res[a])
            for a in designs if a in res and all(r["ok"] for r in res[a])}
    best = min(mean, key=mean.get)
    mt = section(out, "Targets of the whole programs")
    targets_ok(mt, 4 * nw)
    assert f"| redis: elapsed | {best} {num(mean[best])} / " in mt
    rc, out, err = run(capsys, "--format=text", "tables", fx["macro"])
    assert not [ln for ln in out.splitlines() if len(ln) > 80]
    assert re.search(r"^design  *procs  *refills  *slabs  *slabs  *heap  *"
                     r"madvise  *mapped MiB  *fallback$", out, re.M)


@pytest.mark.parametrize("edit,msg", [
    (sub1(r'"refills": [0-9]+', '"refills": -1'),
     "workloads[0].results[4].runs[0].malloc_counters.refills: -1 is "
     "negative"),
    (sub1(r'"processes": [0-9]+', '"processes": "many"'),
     "malloc_counters.processes: expected an integer, found a string"),
    (sub1(r'"malloc_counters": \{[^}]*\}, ', ""),
     "workloads[0].results[4].runs[0].malloc_counters: missing (a run of a "
     "design"),
    (sub1(r'"output_sha256"', '"malloc_counters": {}, "output_sha256"'),
     "workloads[0].results[0].runs[0].malloc_counters: glibc is not a "
     "design"),
    (sub1(r'"processes": [0-9]+', '"processes": 0'),
     "malloc_counters.processes: 0 in a run that is ok"),
    (sub1(r'"env": \{"AK_MALLOC_DESIGN": "slub-tid"\}',
          r'"variant_of": "glibc", \g<0>'),
     'allocators[4].variant_of: "glibc" is not a design of this file'),
])
def test_counter_damage(capsys, fx, copy, edit, msg):
    damage(capsys, copy, fx, fx["macro"], edit, msg)


# ---- the schema module: what it writes, it reads back ----

def test_write_json(tmp_path):
    p = str(tmp_path / "machine.json")
    schema.write_json(p, dict(ak_schema="1", ak_machine="m"), "machine")
    assert schema.load_json(p) == dict(ak_schema="1", ak_machine="m")
    with pytest.raises(schema.SetError, match="schema version 9"):
        schema.write_json(p, dict(ak_schema="9"), "machine")
    with pytest.raises(schema.SetError, match="ak_macro_schema: missing"):
        schema.write_json(str(tmp_path / "macro.json"), {}, "macro")
    assert os.listdir(tmp_path) == ["machine.json"]
    assert schema.load_json(p)["ak_schema"] == "1"
    (tmp_path / "nan.json").write_text('{"a": NaN, "b": -nan, "c": "NaN"}')
    assert schema.load_json(str(tmp_path / "nan.json")) == dict(
        a=None, b=None, c="NaN")
    assert math.isnan(float("nan"))


def test_variants(capsys, fx, copy):
    """A variant (slub-local relabelled as slub-tid with a knob) is shown
    beside its design on every workload, never in the targets."""
    d = copy(fx["macro"], "var")
    p = d / "macro.json"
    p.write_text(p.read_text().replace(
        '"env": {"AK_MALLOC_DESIGN": "slub-local"}', '"variant_of": '
        '"slub-tid", "env": {"AK_MALLOC_DESIGN": "slub-tid", '
        '"AK_SLAB_CPU_PARTIAL": "0"}'))
    rc, out, err = run(capsys, "tables", d)
    assert rc == 0, err
    nw = len(re.findall(r"^### Whole program: ", out, re.M))
    vt = section(out, "Each design beside its variants")
    assert len([r for r in rows(vt) if r[1:3] == [
        "slub-tid", "`AK_SLAB_CPU_PARTIAL=0`"]]) == nw
    assert "slub-local" not in section(out, "Targets of the whole programs")
    rc, out, err = run(capsys, "select", d)
    assert "slub-local" not in section(out, "Fastpath against whole")
