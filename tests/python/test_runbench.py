"""run-bench's options and its result set: --suites, a refused name, an
interrupted run (no partial file, the finished suites kept)."""
import os
import signal
import subprocess
import time

from runhelp import BENCH, TOP, need_bench, script


def run(tmp_path, *args):
    return script("run-bench", "--quick", "--bench", BENCH, "--machine",
                  "test", "--out", str(tmp_path / "set"), *args,
                  env={"AK_REPORT": str(tmp_path / "none")})


def test_bad_options(tmp_path):
    for args in (["--bogus"], ["--out"], ["--machine", "a/b"]):
        p = script("run-bench", *args, "--bench", BENCH)
        assert p.returncode == 2 and p.stderr.startswith("run-bench: "), args


@need_bench
def test_suites_in_order_and_refused(tmp_path):
    p = run(tmp_path, "--suites", "xcheck,harness")
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(os.listdir(tmp_path / "set")) == [
        "harness.json", "harness.txt", "machine.json", "xcheck.json",
        "xcheck.txt"]
    assert p.stdout.index("suite 1 of 2 xcheck") < p.stdout.index(
        "suite 2 of 2 harness")
    p = script("run-bench", "--quick", "--bench", BENCH, "--suites",
               "harness,bogus", "--out", str(tmp_path / "bogus"))
    assert p.returncode == 2 and "unknown suite 'bogus'" in p.stderr
    assert not (tmp_path / "bogus").exists()


@need_bench
def test_interrupted(tmp_path):
    out = tmp_path / "set"
    p = subprocess.Popen([os.path.join(TOP, "scripts", "run-bench"),
                          "--quick", "--bench", BENCH, "--machine", "test",
                          "--out", str(out), "--", "--benchmark_min_time=0.02"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    for _ in range(1200):	# the first suite done: the second runs
        if (out / "harness.json").exists():
            break
        time.sleep(0.05)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    text = p.communicate(timeout=60)[0]
    assert p.returncode == 130 and "interrupted during suite" in text, text
    left = os.listdir(out)
    assert not [f for f in left if ".tmp" in f], left
    assert "machine.json" in left and "harness.json" in left
