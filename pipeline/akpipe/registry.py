"""What atomkit-bench says it has (suites, placement classes, the machine)
and what the machine around it has (system mallocs, revision); the run
side's errors, options and signals."""
import datetime
import functools
import json
import os
import re
import signal
import subprocess
import sys

# The system allocators measured beside ours, each preloaded into a
# process of its own: name, soname.
SYSTEM_MALLOCS = (("tcmalloc", "libtcmalloc_minimal.so.4"),
                  ("jemalloc", "libjemalloc.so.2"),
                  ("mimalloc", "libmimalloc.so.2"))
Interrupted = KeyboardInterrupt	# what a trapped signal raises


class RunError(Exception):
    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.status = status


def options(argv, flags, values, usage):
    """flags: option -> (key, value); values: option -> key of the next
    argument; "--" ends them (the rest is "extra")."""
    o, it = {"extra": []}, iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(usage.rstrip())
            sys.exit(0)
        elif a == "--":
            o["extra"] = list(it)
        elif a in flags:
            o.update([flags[a]])
        elif a in values and (v := next(it, None)) is not None:
            o[values[a]] = v
        else:
            raise RunError((f"{a} needs a value" if a in values else
                            f"unknown option '{a}'") + " (try --help)", 2)
    return o


def now(fmt="%Y-%m-%dT%H:%M:%SZ"):
    return datetime.datetime.now(datetime.timezone.utc).strftime(fmt)


def capture(cmd, env=None, cwd=None):
    """cmd's stdout, or None when it cannot start or exits non-zero."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           cwd=cwd, errors="replace")
    except OSError:
        return None
    return p.stdout if p.returncode == 0 else None


class Bench:
    """atomkit-bench, maybe under a runner (AK_TEST_RUNNER: qemu), maybe
    seeing another machine's topology (env: HWLOC_XMLFILE)."""

    def __init__(self, path, runner="", env=None):
        self.path, self.runner = path, runner.split()
        self.env = dict(os.environ, **(env or {}))

    def built(self):
        return os.access(self.path, os.X_OK)

    @functools.lru_cache(maxsize=None)
    def ask(self, *args):
        """What atomkit-bench ARGS prints: JSON (--list-suites,
        --describe) as its value, anything else as text."""
        out = capture(self.runner + [self.path, *args], self.env)
        if out is None:
            raise RunError(f"{self.path} {' '.join(args)} failed")
        try:
            return json.loads(out) if out.startswith("{") else out
        except ValueError:
            raise RunError(f"{self.path} {args[0]}: not JSON")


@functools.lru_cache(maxsize=None)
def malloc_path(soname):
    """The library's path in the loader's cache, or None."""
    out = capture(["ldconfig", "-p"]) or capture(["/sbin/ldconfig", "-p"])
    return next((ln.split()[-1] for ln in (out or "").splitlines()
                 if ln.split()[:1] == [soname]), None)


def sanitized(prog):
    """ASan's runtime must come first: no other malloc preloads into it."""
    return "libasan" in (capture(["ldd", prog]) or "")


def rev(top):
    """The tree's short revision, -dirty when tracked files differ."""
    r = (capture(["git", "rev-parse", "--short", "HEAD"], cwd=top) or
         "norev").strip()
    return r + "-dirty" if capture(["git", "status", "--porcelain",
                                    "--untracked-files=no"], cwd=top) else r


def about(bench):
    """arch, CPU model, PUs: atomkit-bench's, else what this side sees."""
    try:
        p = dict(re.findall(r"^(arch|cpu model): (.*)$",
                            bench.ask("--list-placements"), re.M))
        return p["arch"], p["cpu model"], bench.ask("--list-suites")["pus"]
    except (RunError, KeyError):
        model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((m[2] for m in map(re.compile(
                r"(model name|cpu|Model)\s*: (.*)").match, f) if m), "")
    except OSError:
        pass
    return os.uname().machine, model, os.cpu_count() or 0


def machine_name(bench):
    """CPU model and size, lower-case, no spaces, stable across runs."""
    _, model, pus = about(bench)
    name = f"{model or 'unknown'}-{pus}pu".lower()
    name = re.sub(r"[^a-z0-9.]+", "-", re.sub(r"\([^)]*\)", "", name))
    return name.strip("-")


def machine_doc(bench, top, machine, out, mode, suites):
    """machine.json: atomkit-bench's --describe where it is built, else
    what this side can say, plus the set's own fields."""
    u, (arch, model, pus) = os.uname(), about(bench)
    doc = bench.ask("--describe") if bench.built() else {
        "ak_schema": "1", "ak_git_rev": rev(top), "ak_arch": arch,
        "ak_cpu_model": model, "ak_pus": str(pus or ""),
        "ak_kernel": f"{u.sysname} {u.release} {u.machine}"}
    return dict(doc, ak_machine=machine, ak_set=os.path.basename(out),
                ak_run_mode=mode, ak_run_started=now(),
                ak_suites=" ".join(suites))


def set_dir(top, bench, machine):
    """results/<arch>/<machine>/<date>-<rev>"""
    return os.path.join(top, "results", about(bench)[0], machine,
                        f"{now('%Y%m%d-%H%M%S')}-{rev(top)}")


def trap(on=True):
    """SIGTERM and SIGHUP interrupt a run as Ctrl-C does, or (off) all
    three end the process again."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler if on else
                      signal.SIG_DFL)


def render(con, out, report):
    """The set's tables, selection report and plots (atomkit-report)."""
    if not os.access(report, os.X_OK):
        return con.say(f"no tables: {report} not built")
    for what, more in (("tables", []), ("select", []),
                       ("plot", ["-o", f"{out}/plots"])):
        p = subprocess.run([report, what, out, *more], stdout=subprocess.PIPE)
        if p.returncode:
            con.say(f"atomkit-report {what} failed on {out}", err=True)
        elif what != "plot":
            with open(f"{out}/{what}.md", "wb") as f:
                f.write(p.stdout)
