"""The whole programs: run-macro's refused options, and a --quick run
under every allocator this machine has: every run exits 0 with glibc's
output, a design's runs carry the library's counters and no other's do;
a workload is left out only for a program not installed.  Figures are
not looked at.  The synthetic workloads' output against the fixture, at
two thread counts and under the cross rig's qemu too, and their thread
cap are tests/test_macro_quick.sh's."""
import json
import os
import re
import shutil
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


def test_plan():
    """Every workload's runs and minutes; more CPUs than the programs
    take threads plan them at the cap (MACRO_MAX_THREADS)."""
    with open(os.path.join(TOP, "bench", "macro", "macro.h")) as f:
        cap = int(re.search(r"#define MACRO_MAX_THREADS (\d+)",
                            f.read()).group(1))
    p = script("run-macro", "--short", "--plan", "--jobs", str(cap + 44),
               "--builddir", ".")
    assert p.returncode == 0, p.stderr
    rows = [ln.split() for ln in p.stdout.splitlines()[2:-1]]
    assert [r[1] for r in rows] == runmacro.WORKLOADS
    for r in rows:
        threads = {"mixloop-1t": 1, "mixloop-2t": 2}.get(
            r[1], cap if runmacro.W[r[1]][0] == "synthetic" else 1)
        assert int(r[3]) == threads, r
        assert int(r[2]) % 3 == 0 and float(r[4]) > 0, r
    total = float(p.stdout.splitlines()[-1].split()[2])
    assert abs(sum(float(r[4]) for r in rows) - total) <= 0.05 * len(rows)


def test_variant_brings_its_design():
    """A variant named alone runs beside its design, after glibc; --full
    brings every variant, --short none."""
    o = runmacro.parse(["--quick", "--allocators",
                        "rseq-list:cpu_partial=0"], TOP)
    assert o["al"] == ["glibc", "rseq-list", "rseq-list:cpu_partial=0"]
    full = runmacro.parse(["--full"], TOP)["al"]
    assert all(v in full for v in runmacro.VARIANTS)
    short = runmacro.parse(["--short"], TOP)["al"]
    assert not any(v in short for v in runmacro.VARIANTS)


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


class _Say:
    def __init__(self):
        self.said = []

    def say(self, msg):
        self.said.append(msg)


def _copy_sources(top):
    """The compile's folders of TOP, without what a build configured in
    place left in them."""
    for d in ("src", "slab", "include", "arch"):
        shutil.copytree(os.path.join(TOP, d), top / d, symlinks=True,
                        ignore=shutil.ignore_patterns(
                            ".deps", ".libs", ".dirstamp", "*.o", "*.lo",
                            "*.la", "config.h"))


@pytest.mark.skipif(not registry.capture(["git", "--version"]),
                    reason="no git")
def test_compile_tree_outside_a_checkout(tmp_path):
    """The compile's sources come from git only where the tree is a
    checkout's top: a copy inside another repository's work tree (CI's
    build-ci/src, a tarball unpacked in a clone) compiles its own files,
    and a checkout without the fixed commit compiles its HEAD."""
    o = {"con": _Say(), "jobs": 1, "sz": runmacro.SIZES["quick"]}
    g = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C"]
    repo = tmp_path / "repo"
    _copy_sources(repo)
    for a in (["init", "-q"], ["add", "."], ["commit", "-qm", "t"]):
        assert registry.capture(g + [str(repo), *a]) is not None
    head = registry.capture(g + [str(repo), "rev-parse", "HEAD"]).strip()
    t = runmacro.make_tree(o, str(repo), str(tmp_path / "t1"))
    assert (t["source"], t["commit"], t["fixed"]) == ("git-archive", head,
                                                       False)
    trees = ["t1"]
    # a clone that has the fixed commit, and a copy inside its work tree
    clone = tmp_path / "clone"
    if registry.capture(["git", "clone", "-q", "--shared", "--no-checkout",
                         TOP, str(clone)]) is not None and \
            registry.capture(g + [str(clone), "cat-file", "-e",
                                  runmacro.FIXED_COMMIT]) is not None:
        t = runmacro.make_tree(o, str(clone), str(tmp_path / "t2"))
        assert (t["source"], t["commit"], t["fixed"]) == (
            "git-archive", runmacro.FIXED_COMMIT, True)
        _copy_sources(clone / "copy")
        trees.append("t2")
    else:
        _copy_sources(repo / "copy")
        clone = repo
    t = runmacro.make_tree(o, str(clone / "copy"), str(tmp_path / "t3"))
    assert (t["source"], t["commit"], t["fixed"]) == ("source-dir", None,
                                                       False)
    assert "no git checkout" in o["con"].said[-1]
    for tree in trees + ["t3"]:
        made = [f for f in os.listdir(tmp_path / tree / "src")
                if f.endswith(".c")]
        assert made and all(os.path.isfile(tmp_path / tree / "src" / f)
                            for f in made)
