"""pytest for the Python pipeline (tests/python/): the package on the
path, and the TAP plugin tests/test_pipeline.sh turns on (AK_TAP_FD: the
file descriptor to write TAP to), so that automake's test driver counts
every test in test-suite.log."""
import os
import sys

TOP = os.environ.get("AK_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "pipeline"))

_tap = {"n": 0, "out": None}


def _line(text):
    _tap["out"].write(text + "\n")
    _tap["out"].flush()


def pytest_configure(config):
    fd = os.environ.get("AK_TAP_FD")
    if fd:
        _tap["out"] = os.fdopen(int(fd), "w")


def _result(ok, name, extra="", diag=""):
    _tap["n"] += 1
    _line(f"{'ok' if ok else 'not ok'} {_tap['n']} - {name}{extra}")
    lines = diag.splitlines()
    for ln in [x for x in lines if x.startswith("E ")][:20] + lines[-1:]:
        _line("# " + ln)


def pytest_collectreport(report):
    if _tap["out"] and report.failed:
        _result(False, f"collect {report.nodeid}", diag=str(report.longrepr))


def pytest_runtest_logreport(report):
    if not _tap["out"]:
        return
    name = report.nodeid.split("::", 1)[-1].replace("#", "_")
    if report.skipped and report.when in ("setup", "call"):
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) \
            else "skipped"
        _result(True, name, f" # SKIP {why}")
    elif report.failed:
        _result(False, f"{name} ({report.when})",
                diag=str(report.longrepr))
    elif report.when == "call":
        _result(True, name)


def pytest_sessionfinish(session, exitstatus):
    if _tap["out"]:
        _line(f"1..{_tap['n']}")
