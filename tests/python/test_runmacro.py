"""The whole programs: the synthetic workloads' output (the fixture's, at
two thread counts, under the cross rig's runner too), the threads capped
where the programs cap them, run-macro's refused options, and a --quick
run under every allocator this machine has: every run exits 0 with
glibc's output, a design's runs carry the library's counters and no
other's do.  Figures are not looked at."""
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from runhelp import RUNNER, TOP, script

sys.path.insert(0, os.path.join(TOP, "pipeline"))
from akpipe import registry, runmacro  # noqa: E402

BIN = os.path.abspath(os.path.join("bench", "macro"))
need_macro = pytest.mark.skipif(not os.access(f"{BIN}/churn", os.X_OK),
                                reason="bench/macro not built")
native = pytest.mark.skipif(bool(RUNNER), reason="under AK_TEST_RUNNER: "
                            "Debian's programs and the preloaded "
                            "allocators are the host's")
SYNTHETIC = "churn,prodcons,falseshare,sizemix,remotefree,mixloop-1t,mixloop-2t"


def cap():
    with open(os.path.join(TOP, "bench", "macro", "macro.h")) as f:
        return int(re.search(r"#define MACRO_MAX_THREADS (\d+)",
                             f.read()).group(1))


def commands(*args):
    p = script("run-macro", "--quick", "--commands", "--builddir", ".",
               *args)
    assert p.returncode == 0, p.stderr
    return [ln.split(" ", 2) for ln in p.stdout.splitlines()]


@need_macro
def test_churn_refuses_bad_arguments():
    for args in ("-t 1 -n 10", "-t 2", "-t 2 -n 0", "-t 2 -n 10 -x 1",
                 "-t 2 -n 1x", "-t 999 -n 10", "-t 2 -n 10 -s"):
        p = subprocess.run(RUNNER.split() + [f"{BIN}/churn", *args.split()],
                           capture_output=True, text=True)
        assert p.returncode == 2 and p.stderr, args


@need_macro
@pytest.mark.parametrize("threads", [None, "3"])
def test_synthetic_output(threads):
    with open(os.path.join(TOP, "tests", "fixtures", "macro-quick.out")) as f:
        want = dict(ln.split(": ", 1) for ln in f.read().splitlines())
    for name, kind, cmd in commands("--workloads", SYNTHETIC):
        argv = shlex.split(cmd)
        assert kind == "synthetic"
        if threads:
            argv[argv.index("-t") + 1] = threads
        p = subprocess.run(RUNNER.split() + argv, capture_output=True,
                           text=True, timeout=300)
        prog = os.path.basename(argv[0])
        assert p.returncode == 0, p.stderr
        assert p.stdout == f"{prog}: {want[prog]}\n", name


def test_threads_capped():
    got = [shlex.split(c)[2] for _, _, c in commands(
        "--jobs", str(cap() + 44), "--workloads", "churn,remotefree,"
        "mixloop-2t")]
    assert got == [str(cap()), str(cap()), "2"]


def test_refused_options(tmp_path):
    for args in ("--bogus", "--workloads nope", "--allocators glibc,nope",
                 "--runs 0", "--runs x", "--jobs", "--timeout -1",
                 "--machine .x"):
        p = script("run-macro", *args.split(), "--out",
                   str(tmp_path / "never"))
        assert p.returncode == 2, args
        assert p.stderr.startswith("run-macro: "), args
        assert not (tmp_path / "never").exists(), args


@need_macro
@native
def test_quick_run(tmp_path):
    out = tmp_path / "set"
    p = script("run-macro", "--quick", "--builddir", ".", "--machine",
               "test", "--out", str(out))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "ERROR" not in p.stdout
    assert sorted(f for f in os.listdir(out) if ".tmp" in f) == []
    with open(out / "macro.json") as f:
        doc = json.load(f)
    assert (out / "macro.txt").stat().st_size > 0
    ran = [a["name"] for a in doc["allocators"] if a["status"] == "ran"]
    have = ["glibc"] + [m for m, so in registry.SYSTEM_MALLOCS
                        if registry.malloc_path(so)]
    if os.path.isfile(os.environ.get("AK_MALLOC_LIB", "malloc/.libs/"
                                     "libatomkit-malloc.so")):
        have += runmacro.DESIGNS
    if registry.sanitized(f"{BIN}/churn"):
        have = ["glibc"]
    assert ran == have
    for w in doc["workloads"]:
        if w["status"] == "skipped":
            assert w["kind"] != "synthetic", w
            assert "not installed" in w["reason"], w
            continue
        for r in w["results"]:
            design = r["allocator"] in runmacro.DESIGNS
            for run in r["runs"]:
                assert run["exit_status"] == 0 and not run["timed_out"]
                assert run["output_matches_baseline"] and run["ok"], run
                assert ("malloc_counters" in run) == design
                if design:
                    assert run["malloc_counters"]["processes"] > 0
