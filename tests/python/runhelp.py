"""What the run side's tests share: the trees, the scripts, the program.
Tests run in the build tree (automake's cwd), the sources at AK_SRCDIR."""
import os
import subprocess

import pytest

TOP = os.environ.get("AK_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.abspath(os.path.join("bench", "atomkit-bench"))
RUNNER = os.environ.get("AK_TEST_RUNNER", "")
need_bench = pytest.mark.skipif(not os.access(BENCH, os.X_OK),
                                reason="atomkit-bench not built")


def script(name, *args, env=None, **kw):
    """scripts/NAME ARGS in the build tree: the CompletedProcess."""
    return subprocess.run([os.path.join(TOP, "scripts", name), *args],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **(env or {})), **kw)


def bench(*args, env=None):
    """atomkit-bench's stdout (under the cross rig's runner)."""
    return subprocess.run(RUNNER.split() + [BENCH, *args], check=True,
                          capture_output=True, text=True,
                          env=dict(os.environ, **(env or {}))).stdout
