"""What atomkit-bench says it has (suites, benchmarks, placement classes,
machine) and what the machine around it has (system mallocs, revision)."""
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


class RunError(Exception):
    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.status = status


class Interrupted(Exception):
    pass


def options(argv, flags, values, usage):
    """flags: option -> (key, value); values: option -> key of the next
    argument; "--" ends them (the rest is "extra")."""
    o, it = {"extra": []}, iter(argv)
    for a in it:
        if a in flags:
            o.update([flags[a]])
        elif a in values:
            o[values[a]] = next(it, None)
            if o[values[a]] is None:
                raise RunError(f"{a} needs a value (try --help)", 2)
        elif a == "--":
            o["extra"] = list(it)
        elif a in ("-h", "--help"):
            print(usage.rstrip())
            sys.exit(0)
        else:
            raise RunError(f"unknown option '{a}' (try --help)", 2)
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
        self.env, self.memo = dict(os.environ, **(env or {})), {}

    def cmd(self, *args):
        return self.runner + [self.path, *args]

    def built(self):
        return os.access(self.path, os.X_OK)

    def ask(self, *args):
        if args not in self.memo:
            self.memo[args] = capture(self.cmd(*args), self.env)
        if self.memo[args] is None:
            raise RunError(f"{self.path} {' '.join(args)} failed")
        return self.memo[args]

    def suites(self):
        try:
            return json.loads(self.ask("--list-suites"))
        except ValueError:
            raise RunError(f"{self.path} --list-suites: not JSON")

    def tests(self, args):
        return self.ask(*args, "--benchmark_list_tests=true").split()

    def placements(self):
        """arch, cpu model, PUs, the absent classes."""
        info = {"absent": [], "pus": None}
        for line in self.ask("--list-placements").splitlines():
            key, _, val = line.partition(": ")
            if key in ("arch", "cpu model"):
                info[key] = val
            m = re.search(r"(\d+) PU\(s\)|^(\d+) CPU\(s\) in the affinity",
                          line)
            if m and info["pus"] is None:
                info["pus"] = int(m.group(1) or m.group(2))
            if line.split()[1:2] == ["absent:"]:
                info["absent"].append(line.split()[0])
        return info

    def describe(self):
        p = subprocess.run(self.cmd("--describe"), capture_output=True,
                           text=True, env=self.env, errors="replace")
        try:
            if p.returncode == 0:
                return json.loads(p.stdout)
        except ValueError:
            pass
        raise RunError(f"{p.stderr.strip()}\n{self.path} --describe failed")


@functools.lru_cache(maxsize=None)
def malloc_path(soname):
    """The library's path in the loader's cache, or None."""
    for ldconfig in ("ldconfig", "/sbin/ldconfig"):
        out = capture([ldconfig, "-p"])
        if out is not None:
            return next((ln.split()[-1] for ln in out.splitlines()
                         if ln.split()[:1] == [soname]), None)
    return None


def sanitized(prog):
    """ASan's runtime must come first: no other malloc preloads into it."""
    return "libasan" in (capture(["ldd", prog]) or "")


def rev(top):
    """The tree's short revision, -dirty when tracked files differ."""
    r = (capture(["git", "rev-parse", "--short", "HEAD"], cwd=top) or
         "norev").strip()
    return r + "-dirty" if capture(["git", "status", "--porcelain",
                                    "--untracked-files=no"], cwd=top) else r


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next((m.group(2) for m in map(re.compile(
                r"(model name|cpu|Model)\s*: (.*)").match, f) if m), "")
    except OSError:
        return ""


def machine_name(bench):
    """CPU model and size, lower-case, no spaces, stable across runs."""
    model, pus = "", os.cpu_count() or 0
    if bench.built():
        try:
            info = bench.placements()
            model, pus = info.get("cpu model", ""), info["pus"] or pus
        except RunError:
            pass
    name = f"{model or cpu_model() or 'unknown'}-{pus}pu".lower()
    name = re.sub(r"[^a-z0-9.]+", "-", re.sub(r"\([^)]*\)", "", name))
    return name.strip("-")


def machine_doc(bench, top, machine, out, mode, suites):
    """machine.json: atomkit-bench's --describe where it is built, else
    what this side can say, plus the set's own fields."""
    u = os.uname()
    doc = bench.describe() if bench.built() else {
        "ak_schema": "1", "ak_git_rev": rev(top), "ak_arch": u.machine,
        "ak_cpu_model": re.sub(r'[\\"]', "", cpu_model()),
        "ak_pus": str(os.cpu_count() or ""),
        "ak_kernel": f"{u.sysname} {u.release} {u.machine}"}
    doc.update(ak_machine=machine, ak_set=os.path.basename(out),
               ak_run_mode=mode, ak_run_started=now(),
               ak_suites=" ".join(suites))
    return doc


def set_dir(top, bench, machine):
    """results/<arch>/<machine>/<date>-<rev>"""
    try:
        arch = bench.placements().get("arch") or os.uname().machine
    except RunError:
        arch = os.uname().machine
    return os.path.join(top, "results", arch, machine,
                        f"{now('%Y%m%d-%H%M%S')}-{rev(top)}")


def trap(on=True):
    """Turn the signals that end a run into Interrupted, or back."""
    def raise_it(signum, frame):
        raise Interrupted()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, raise_it if on else signal.SIG_DFL)


def render(con, out, report):
    """The set's tables, selection report and plots (atomkit-report)."""
    if not os.access(report, os.X_OK):
        return con.say(f"no tables: {report} not built")
    for what in ("tables", "select"):
        with open(f"{out}/{what}.md.tmp", "w") as f:
            ok = subprocess.run([report, what, out], stdout=f).returncode
        if ok == 0:
            os.replace(f"{out}/{what}.md.tmp", f"{out}/{what}.md")
        else:
            os.unlink(f"{out}/{what}.md.tmp")
            con.say(f"atomkit-report {what} failed on {out}", err=True)
    if subprocess.run([report, "plot", out, "-o", f"{out}/plots"],
                      stdout=subprocess.DEVNULL).returncode:
        con.say(f"atomkit-report plot failed on {out}", err=True)
