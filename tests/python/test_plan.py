"""run-bench --plan on synthetic topologies from 1 to 4096 PUs (hwloc's
HWLOC_SYNTHETIC, or an XML file from lstopo): listing only, nothing runs.
The instance counts are checked against the sweep atomkit-bench plans
(its counts for one and two thread points, taken from the program), the
thread caps against akb_max_threads(), the estimate against the goal."""
import os
import re
import shutil
import subprocess

import pytest

from runhelp import RUNNER, TOP, need_bench, bench, script

TOPOS = {1: "pack:1 core:1 pu:1", 2: "pack:1 l3:1 core:2 pu:1",
         16: "pack:1 l3:2 l2:4 core:1 pu:2",
         128: "pack:2 numa:1 l3:4 l2:8 core:1 pu:2",
         512: "pack:2 numa:2 l3:4 l2:8 core:2 pu:2",
         4096: "pack:4 numa:4 l3:8 l2:16 core:1 pu:2"}
GOAL_MINUTES = 25
# atomkit-bench's own plan under the cross rig's qemu is
# tests/test_bench_plan.sh's; the estimate is arch-neutral Python
native = pytest.mark.skipif(bool(RUNNER), reason="under AK_TEST_RUNNER")


def cap(pus):
    return min(max(16 * pus, 64), 8192)


def sweep(pus, mode):
    """The thread points a mode runs: atomkit-bench's default sweep, cut
    for `make bench` past 256 threads to 1 .. 128 and the PUs."""
    top, t, pts = min(pus, cap(pus)), 1, []
    while t < top:
        pts, t = pts + [t], t * 2
    pts += [top] + ([min(2 * top, cap(pus))] if top < cap(pus) else [])
    if mode == "default" and pts[-1] > 256:
        pts = [t for t in pts if t <= 128] + [top]
    return pts


def plan(*args, env=None):
    p = script("run-bench", "--plan", *args, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    lines = lines[[ln.startswith("run-bench: plan for")
                   for ln in lines].index(True):]	# after any notes
    rows = {}
    for ln in lines[2:-1]:
        m = re.match(r"(\S+(?: \S+)?)\s+(\d+)\s+(\d+)\s+([\d.]+)  ", ln)
        assert m, ln
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)),
                            float(m.group(4)))
    total = float(lines[-1].split()[2])
    return lines[0], rows, total


def sweep_counts(prefix, env):
    """A sweep suite's instances: fixed, and per thread point."""
    n = [len([x for x in bench(f"--threads={t}", "--benchmark_list_tests=true",
                               env=env).split() if x.startswith(prefix)])
         for t in ("1", "1,2")]
    return 2 * n[0] - n[1], n[1] - n[0]


@need_bench
@native
@pytest.mark.parametrize("pus", sorted(TOPOS))
def test_plan_default(pus):
    env = {"HWLOC_SYNTHETIC": TOPOS[pus]}
    head, rows, total = plan(env=env)
    assert f": {pus} PUs, at most {cap(pus)} threads a run" in head
    pts = sweep(pus, "default")
    fixed, per = sweep_counts("contention/", env)
    assert rows["contention"][0] == fixed + per * len(pts)
    assert rows["contention"][1] == pts[-1]
    for name, (n, threads, minutes) in rows.items():
        assert 1 <= threads <= cap(pus), name
        assert n > 0 and minutes >= 0, name
    assert "slab" in rows and "macro compile" in rows
    assert abs(sum(r[2] for r in rows.values()) - total) <= 0.05 * len(rows)
    assert 0 < total <= GOAL_MINUTES


@need_bench
@native
@pytest.mark.parametrize("pus", [1, 128, 4096])
def test_plan_full_and_quick(pus):
    env = {"HWLOC_SYNTHETIC": TOPOS[pus]}
    _, full, total_full = plan("--full", env=env)
    assert full["contention"][1] == sweep(pus, "full")[-1]
    _, default, total = plan(env=env)
    assert total_full > total
    assert full["slab"][0] >= default["slab"][0]
    _, quick, total_quick = plan("--quick", env=env)
    assert not any(n.startswith("macro") for n in quick)
    assert total_quick < total


@need_bench
@native
@pytest.mark.skipif(not shutil.which("lstopo-no-graphics"),
                    reason="no lstopo-no-graphics (hwloc-nox)")
def test_plan_topology_xml(tmp_path):
    xml = tmp_path / "768.xml"
    subprocess.run(["lstopo-no-graphics", "--input",
                    "pack:2 numa:4 l3:6 core:8 pu:2", "--of", "xml",
                    str(xml)], check=True)
    head, rows, total = plan("--topology", str(xml))
    assert f"hwloc XML {xml}: 768 PUs" in head
    assert rows["contention"][1] == 768
    assert total <= GOAL_MINUTES
    p = script("run-bench", "--plan", "--topology", str(tmp_path / "none"))
    assert p.returncode == 2 and "no such file" in p.stderr


def test_commands_without_program(tmp_path):
    """What the system rig reads before it builds: a line per suite of
    bench/bench.h, its name and its atomkit-bench options."""
    p = script("run-bench", "--quick", "--commands", "--bench",
               str(tmp_path / "none"))
    assert p.returncode == 0, p.stderr
    with open(os.path.join(TOP, "bench", "bench.h")) as f:
        want = re.findall(r'^\s*S\(([a-z0-9_]+), *"([^"]*)"', f.read(), re.M)
    got = [ln.split(" ", 1) for ln in p.stdout.splitlines()]
    assert [g[0] for g in got] == [w[0] for w in want]
    for (name, prefix), (_, args) in zip(want, got):
        assert "--benchmark_repetitions=1" in args and "--quick" in args
        assert name == "slab" or f"--benchmark_filter=^{prefix}" in args
