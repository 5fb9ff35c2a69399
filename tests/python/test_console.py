"""What a run shows: the progress line (in place on a terminal, plain
lines elsewhere), a line per suite, skips counted once per reason and
never Google Benchmark's "ERROR OCCURRED" lines, which stay in the
suite's .txt with the rest of its output."""
import io
import json
import os
import pty
import re
import subprocess
import sys

from runhelp import BENCH, TOP, need_bench, script

sys.path.insert(0, os.path.join(TOP, "pipeline"))
from akpipe.console import Console, gbench_notes  # noqa: E402


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_in_place_on_a_terminal():
    out = Tty()
    c = Console("who", 100.0, out)
    c.begin(1, 2, "one", 10, 50.0)
    c.step(3)
    c.say("a message")
    c.end("10 benchmarks", ["4 skipped: why"])
    text = out.getvalue()
    assert "\r\033[Ksuite 1 of 2 (one): benchmark 3 of 10" in text
    assert "\r\033[Kwho: a message\n" in text
    assert re.search(r"\r\033\[Kwho: suite 1 of 2 one: 10 benchmarks in "
                     r"0:00; 0:00 elapsed, about \d+:\d\d left\n", text)
    assert text.endswith("who:     4 skipped: why\n")


def test_plain_lines_elsewhere():
    out = io.StringIO()
    c = Console("who", 100.0, out)
    c.begin(2, 2, "two", 4, 50.0)
    for i in range(1, 5):
        c.step(i)
    c.end("4 benchmarks")
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert lines[0].startswith("who: suite 2 of 2 (two): benchmark 0 of 4, ")
    assert "about 1:40 left" in lines[0]	# the plan's 100 s, none done
    assert len(lines) == 2 and re.fullmatch(
        r"who: suite 2 of 2 two: 4 benchmarks in 0:00; 0:00 elapsed, "
        r"about \d+:\d\d left", lines[1])


def test_skips_once_per_reason():
    def run(name, msg=None, rep=0):
        r = {"name": name, "run_name": name, "repetition_index": rep}
        return dict(r, error_occurred=True, error_message=msg) if msg else r
    doc = {"benchmarks": [
        run("a"), run("b", "skipped: no SMT siblings here"),
        run("b", "skipped: no SMT siblings here", 1),
        run("c", "skipped: no SMT siblings here"),
        run("d", "skipped: the library refuses this per-CPU mode here: "
            "rseq unavailable"),
        run("e", "failed: lost updates")]}
    assert gbench_notes(doc) == [
        "2 skipped: no SMT siblings here",
        "1 skipped: the library refuses this per-CPU mode here",
        "1 FAILED: failed: lost updates (e)"]


def quick(tmp_path, suites, tty=False):
    args = [os.path.join(TOP, "scripts", "run-bench"), "--quick", "--bench",
            BENCH, "--machine", "test", "--suites", suites, "--out",
            str(tmp_path / "set")]
    env = dict(os.environ, AK_REPORT=str(tmp_path / "none"))
    if not tty:
        p = subprocess.run(args, capture_output=True, text=True, env=env,
                           timeout=600)
        return p.returncode, p.stdout + p.stderr
    parent, child = pty.openpty()
    p = subprocess.Popen(args, stdout=child, stderr=child, env=env)
    os.close(child)
    text = b""
    while True:
        try:
            chunk = os.read(parent, 4096)
        except OSError:
            break
        if not chunk:
            break
        text += chunk
    os.close(parent)
    return p.wait(), text.decode(errors="replace")


@need_bench
def test_quick_run_console(tmp_path):
    rc, text = quick(tmp_path, "harness,percpu")
    assert rc == 0, text
    assert "ERROR OCCURRED" not in text
    assert re.search(r"^run-bench: suite 1 of 2 harness: \d+ benchmarks "
                     r"in 0:\d\d; 0:\d\d elapsed, about \d+:\d\d left$",
                     text, re.M)
    assert "\nrun-bench: suite 2 of 2 percpu: " in text
    assert f"result set in {tmp_path / 'set'}" in text
    with open(tmp_path / "set" / "percpu.json") as f:
        notes = gbench_notes(json.load(f))
    for note in notes:	# each reason once, with its count
        assert text.count(note) == 1, note
    txt = (tmp_path / "set" / "percpu.txt").read_text()
    assert "percpu/" in txt	# Google Benchmark's table is kept there
    assert ("ERROR OCCURRED" in txt) == any("skipped" in n for n in notes)


@need_bench
def test_quick_run_on_a_terminal(tmp_path):
    rc, text = quick(tmp_path, "harness", tty=True)
    assert rc == 0, text
    assert "\r\033[Ksuite 1 of 1 (harness): benchmark " in text
    assert "ERROR OCCURRED" not in text


def test_not_built(tmp_path):
    p = script("run-bench", "--quick", "--bench", str(tmp_path / "none"),
               "--out", str(tmp_path / "set"))
    assert p.returncode == 1 and "not built" in p.stderr
    assert not (tmp_path / "set").exists()
