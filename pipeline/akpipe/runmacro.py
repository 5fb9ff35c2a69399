"""The whole-program benchmarks (doc/benchmarks.md, "Whole programs"): every
workload under every allocator, each run a process (group) of its own timed
by bench/macro/macro-run, its output checksummed and compared with glibc's;
a design's runs with the counters of libatomkit-malloc.so summed over its
processes (AK_MALLOC_STATS); all of it into macro.json, a console table into
macro.txt, in a result set.

Usage: scripts/run-macro [--full|--short|--quick] [--runs N] [--out DIR]
           [--machine NAME] [--builddir DIR] [--workloads LIST]
           [--allocators LIST] [--jobs N] [--timeout SECS] [--no-render]
           [--plan|--commands|--list]

  --full        (default) full inputs, 5 runs each (`make bench-macro`)
  --short       smaller inputs, 3 runs each (the end of `make bench`)
  --quick       tiny inputs, 1 run each: does every run finish, and agree
                with glibc? (no figures to keep)
  --runs N      N runs of each workload under each allocator
  --out DIR     write into this result set (made if missing, with a
                machine.json); default results/<arch>/<machine>/<date>-<rev>/
  --machine     the <machine> folder, as scripts/run-bench
  --builddir    the build tree (default .): bench/macro/'s programs, and
                malloc/.libs/libatomkit-malloc.so (AK_MALLOC_LIB overrides)
  --workloads   comma-separated, default all: WORKLOADS
  --allocators  comma-separated, default all: ALLOCATORS, and in --full the
                freelist designs' variants without per-CPU partial slabs
                (AK_SLAB_CPU_PARTIAL=0): VARIANTS (named, they run in any
                size, with their design); glibc, the baseline, always runs, and first
  --jobs N      make -j N for the compile, N threads (at least 2, at most
                the programs' cap) for the synthetic workloads; default: the
                CPUs this process may use
  --timeout S   a run still going after S seconds is killed and failed
  --no-render   leave the set's tables.md, select.md and plots/ to the
                caller (scripts/run-bench renders the whole set)
  --plan        run nothing: per workload its runs and estimated minutes
  --commands    run nothing: print each workload's kind and command line
  --list        run nothing: the workloads and allocators, and which of
                them this machine has

A workload whose program is not installed, or an allocator that is not, is
left out with a message and recorded as skipped; naming it makes that an
error (exit 2).  Runs are interleaved (each run of a workload goes through
every allocator before the next).  A run that fails, times out, prints other
than glibc's output, or (a design's) reports no counters is recorded as
such; the set is finished and the exit status is 1.  Natively only.
"""
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from . import plan, registry, schema
from .console import Console
from .registry import RunError

WHO = "run-macro"
WORKLOADS = ("compile sqlite python git redis perl churn prodcons falseshare "
             "sizemix remotefree mixloop-1t mixloop-2t").split()
DESIGNS = "slub-tid slub-local rseq-list array sheaf locked".split()
# DESIGN:KNOB=VALUE: the design with one knob of its environment changed,
# shown beside it and never counted in the targets
VARIANTS = [d + ":cpu_partial=0" for d in DESIGNS[:3]]
ALLOCATORS = ["glibc"] + [m for m, _ in registry.SYSTEM_MALLOCS] + DESIGNS
# The compile's tree: this project's library sources at a fixed commit,
# so that its figures compare across sets.
FIXED_COMMIT = "5d58f270a9e34c60e94934378651c1158c01435f"
COUNTS = ("refills slabs_made slabs_released large_allocs heap_hits "
          "heap_misses maps unmaps madvise_calls fallback_allocs "
          "deferred_frees").split()
BYTES = "mapped_bytes dirty_bytes purged_bytes meta_bytes".split()

# The inputs, so that a full run of each takes some seconds on 2 cores,
# --short about a second, --quick a blink.
_K = ("runs to cc_sets cc_files sql_n py_words py_rounds git_n redis_k "
      "pl_words pl_rounds churn_n prod_n fs_n fs_w mix_n mix_l rf_n rf_l "
      "loop_n loop_l").split()
SIZES = {s: dict(zip(_K, v)) for s, v in {
    "quick": (1, 120, "O0", 1, 1000, 4000, 1, 5, 50, 4000, 1, 20000, 20000,
              1000, 100, 20000, 200, 20000, 200, 20000, 200),
    "short": (3, 300, "O2", 4, 40000, 60000, 2, 60, 500, 60000, 2, 1000000,
              1000000, 50000, 1000, 1000000, 2000, 4000000, 1000, 6000000,
              1000),
    "full": (5, 1200, "O2 O2-stress Os-generic O2-g", "all", 120000, 400000,
             4, 500, 2000, 400000, 3, 8000000, 8000000, 400000, 1000,
             8000000, 20000, 40000000, 1000, 48000000, 1000)}.items()}
# Seconds a run takes, for the plan: --full's mean over the allocators in
# results/x86_64/amd-epyc-2pu/20261206-154616-3cdede3 (845 runs in 27.7
# minutes); --short's, glibc's runs on the same 2-vCPU VM (loaded); a
# --quick run, 130 runs in 49 s there.
RUN_S = dict(zip(WORKLOADS, zip(
    (4.2, 1.6, 1.2, 0.4, 2.5, 2.8, 0.7, 0.9, 0.9, 0.9, 3.0, 3.8, 2.5),
    (0.7, 0.7, 0.2, 0.3, 4.4, 0.4, 0.4, 0.2, 0.2, 0.2, 1.1, 1.0, 0.7))))

# name: kind, the programs it needs (name:Debian package), its command
# (sh words: the paths in quotes), its environment, description, inputs;
# all formatted with the size's numbers, jobs, threads, the programs' paths
W = {
    "compile": (
        "compile", "gcc:gcc make:make", "'{make}' -s -j{jobs}", "",
        "make -j{jobs} of a fixed C tree (this project's library sources) "
        "with gcc, every process (make, gcc, cc1, as) under the allocator: "
        "the seed's kernel build in our size",
        "sources: {cc_files} of the tree's src/*.c and slab/*.c; flag sets: "
        "{cc_sets}"),
    "sqlite": (
        "program", "sqlite3:sqlite3", "'{sqlite3}' -bail :memory:", "",
        "sqlite3 on an in-memory database: a generated script inserting "
        "{sql_n} sales and an eighth as many items, one statement each, in "
        "one transaction, three index builds, joins, grouping, an update, a "
        "delete, a table from a query", "macro-gen sql {sql_n}"),
    "python": (
        "program", "python3:python3-minimal",
        "'{python3}' -S -s '{m}/pywork.py' '{w}/words.txt' {py_rounds}",
        "PYTHONMALLOC=malloc PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1",
        "python3 with PYTHONMALLOC=malloc (every object through malloc): "
        "dicts, lists, tuples, class instances and strings built over a "
        "generated text and dropped, rounds: {py_rounds}",
        "macro-gen words {py_words}; bench/macro/pywork.py, rounds: "
        "{py_rounds}"),
    "git": (
        "program", "git:git cksum:coreutils",
        "/bin/sh '{m}/git-work.sh' '{w}/stream' '{w}/repo'", "GIT={git}",
        "git: fast-import of a generated history of {git_n} commits into a "
        "bare repository, repack -a -d -f, log -p --stat and blame",
        "macro-gen git {git_n}; bench/macro/git-work.sh"),
    "redis": (
        "program", "redis-server:redis-server redis-benchmark:redis-tools "
        "redis-cli:redis-tools",
        "/bin/sh '{m}/redis-work.sh' '{w}/server' {redis_k}",
        "REDIS_SERVER={redis-server} REDIS_BENCHMARK={redis-benchmark} "
        "REDIS_CLI={redis-cli} AK_LIBC={libc}",
        "redis-server on a Unix socket (no TCP port, no persistence, 2 I/O "
        "threads, lazy freeing in its background thread), alone under the "
        "allocator (glibc: libc preloaded ahead of the jemalloc Debian links "
        "it with), loaded by redis-benchmark (50 clients, pipelines of 16): "
        "strings of 16 to 9000 bytes over {redis_k} keys per size, each set "
        "about 40 times, MSET, GET, 64 lists pushed, read, popped and "
        "trimmed, sets and hashes made, read and deleted; its dataset's "
        "state read back, then flushed and shut down",
        "keys per size: {redis_k}; bench/macro/redis-work.sh"),
    "perl": (
        "program", "perl:perl-base",
        "'{perl}' '{m}/perlwork.pl' '{w}/words.txt' {pl_rounds}",
        "PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0",
        "perl (on the system malloc): word counts and successors in hashes "
        "of hashes, sorting, regex substitutions over every line, a record "
        "per line and an index of them, strings built, joined and split, "
        "all dropped each round, rounds: {pl_rounds}",
        "macro-gen words {pl_words}; bench/macro/perlwork.pl, rounds: "
        "{pl_rounds}"),
    "churn": (
        "synthetic", "", "'{exe}' -t {threads} -n {churn_n}", "",
        "server-style churn: {threads} threads make objects of 32 to 511 "
        "bytes, keep one in four in a table of their own (local free) and "
        "hand the rest to other threads, which check and free them (remote "
        "free)", "{churn_n} objects, {threads} threads"),
    "prodcons": (
        "synthetic", "", "'{exe}' -t {threads} -n {prod_n}", "",
        "producer/consumer: {half} threads only allocate messages of 32 "
        "bytes to 32 KiB, {rest} only check and free them, in batches of 32",
        "{prod_n} messages, {threads} threads"),
    "falseshare": (
        "synthetic", "", "'{exe}' -t {threads} -n {fs_n} -w {fs_w}", "",
        "false-sharing probe: objects of 8 to 64 bytes each written {fs_w} "
        "times by one thread, allocated by that thread (active) or dealt "
        "out by another thread back to back (passive)",
        "{fs_n} objects per phase, {fs_w} writes each, {threads} threads"),
    "sizemix": (
        "synthetic", "", "'{exe}' -t {threads} -n {mix_n} -l {mix_l}", "",
        "heavy-tailed size mix: P(size >= s) falls as 1/s from 32 bytes to "
        "2 MiB, in a live set of {mix_l} slots per thread, one replacement "
        "in eight by realloc",
        "{mix_n} operations, {mix_l} slots per thread, {threads} threads"),
    "remotefree": (
        "synthetic", "", "'{exe}' -t {threads} -n {rf_n} -l {rf_l}", "",
        "server-style remote frees in rounds (the Larson benchmark's "
        "shape): objects of 32 to 1023 bytes in 64 regions of {rf_l} slots; "
        "each round every region is worked by another of {threads} threads "
        "than the round before, which checks and frees the object in a slot "
        "picked at random (most made by another thread) and, three times in "
        "four, makes a new one there",
        "{rf_n} operations in 32 rounds, 64 regions of {rf_l} slots, "
        "{threads} threads"),
    "mixloop-1t": (
        "synthetic", "", "'{exe}' -t {lt} -n {loop_n} -l {loop_l}", "",
        "multi-size allocation loop on {lt} thread(s): each frees the object "
        "in a slot of its own working set of {loop_l}, picked at random, and "
        "makes one of 32 bytes to 4 KiB (half of them under 64 bytes, "
        "P(size >= s) falling as 1/s) in its place; nothing crosses threads",
        "{loop_n} operations, {loop_l} slots per thread, {lt} thread(s)"),
}
W["mixloop-2t"] = W["mixloop-1t"]


def lines(path):
    """path's lines, none where it is missing."""
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return f.read().splitlines()


def prog(name):
    """Debian's NAME (/usr/bin first, not a shim earlier in PATH)."""
    p = f"/usr/bin/{name}"
    return p if os.access(p, os.X_OK) else shutil.which(name) or ""


def err(msg):
    raise RunError(f"{msg} (try --help)", 2)


def number(name, v, most):
    if not (v.isdigit() and 1 <= int(v) <= most):
        err(f"{name} '{v}': expected a number from 1 to {most}")
    return int(v)


def pick(name, given, known):
    for w in given.split(","):
        if w not in known:
            err(f"{name}: unknown name '{w}' (known: {' '.join(known)})")
    return [k for k in known if k in given.split(",")]


def parse(argv, top):
    o = dict(size="full", out=None, machine=os.environ.get("AK_MACHINE"),
             builddir=".", workloads=None, allocators=None, jobs=None,
             runs=None, timeout=None, render=True, mode="run")
    flags = {f"--{k}": (key, k) for key, ks in (
        ("size", ("full", "short", "quick")),
        ("mode", ("plan", "commands", "list"))) for k in ks}
    flags["--no-render"] = ("render", False)
    o.update(registry.options(argv, flags, {f"--{k}": k for k in (
        "runs out machine builddir workloads allocators jobs timeout"
        ).split()}, __doc__.replace("WORKLOADS", " ".join(WORKLOADS))
        .replace("ALLOCATORS", " ".join(ALLOCATORS))
        .replace("VARIANTS", " ".join(VARIANTS))))
    s = o["sz"] = dict(SIZES[o["size"]])
    if o["runs"]:
        s["runs"] = number("--runs", o["runs"], 100)
    if o["timeout"]:
        s["to"] = number("--timeout", o["timeout"], 86400)
    o["jobs"] = number("--jobs", o["jobs"], 65536) if o["jobs"] else len(
        os.sched_getaffinity(0))
    with open(os.path.join(top, "bench", "macro", "macro.h")) as f:
        cap = re.search(r"^#define MACRO_MAX_THREADS (\d+)", f.read(), re.M)
    s["jobs"], s["threads"] = o["jobs"], min(max(o["jobs"], 2),
                                             int(cap.group(1)) if cap else 2)
    s["half"], s["rest"] = s["threads"] // 2, s["threads"] - s["threads"] // 2
    o["wl"] = pick("--workloads", o["workloads"], WORKLOADS) \
        if o["workloads"] else WORKLOADS
    known = ALLOCATORS + VARIANTS
    # a variant is shown beside its design: naming it brings the design
    o["al"] = pick("--allocators", ",".join(
        ["glibc"] + [n for a in o["allocators"].split(",")
                     for n in (a.split(":")[0], a)]), known) \
        if o["allocators"] else ALLOCATORS + (
            VARIANTS if o["size"] == "full" else [])
    if o["machine"] is not None and ("/" in o["machine"] or
                                     o["machine"].startswith(".")):
        err(f"bad machine name '{o['machine']}'")
    if not os.path.isdir(o["builddir"]):
        err(f"--builddir {o['builddir']}: no such directory")
    o["bin"] = os.path.join(os.path.abspath(o["builddir"]), "bench", "macro")
    return o


def q(s):
    """s quoted for sh, as the command lines in macro.json have it."""
    return "'" + s.replace("'", "'\\''") + "'"


def workload(o, top, w, wdir):
    """kind, needs, exe, description, inputs, argv, command, dir, stdin,
    env: a workload whose inputs are under wdir."""
    kind, needs, cmd, env, desc, inputs = W[w]
    exe = os.path.join(o["bin"], w.split("-")[0])
    paths = {p: prog(p) for p in ("make sqlite3 python3 git perl redis-server "
                                  "redis-benchmark redis-cli").split()}
    paths["libc"] = registry.malloc_path("libc.so.6") or ""
    s = dict(o["sz"], lt=w[-2:-1], **paths)
    q = {k: v.replace("'", "'\\''") for k, v in dict(
        paths, exe=exe, w=wdir, m=os.path.join(top, "bench", "macro")).items()}
    command = cmd.format(**dict(s, **q))
    return dict(kind=kind, needs=needs.split(), exe=exe,
                env=dict(e.split("=", 1) for e in env.format(**s).split()),
                description=desc.format(**s), inputs=inputs.format(**s),
                command=command, argv=shlex.split(command),
                dir=f"{wdir}/tree" if w == "compile" else wdir,
                stdin=f"{wdir}/script.sql" if w == "sqlite" else "/dev/null")


def missing(o, wl, w):
    why = [f"{n.split(':')[0]} not installed (Debian package "
           f"{n.split(':')[1]})" for n in wl["needs"]
           if not prog(n.split(":")[0])]
    if wl["kind"] == "synthetic" and not os.access(wl["exe"], os.X_OK):
        why.append(f"{wl['exe']} not built")
    if w == "redis" and not registry.malloc_path("libc.so.6"):
        why.append("libc.so.6 not in the loader cache (ldconfig -p)")
    return "; ".join(why)


def allocator(o, a):
    """kind, preload, env, design, why (this machine lacks it)."""
    design = a.split(":")[0]
    lib = os.environ.get("AK_MALLOC_LIB", os.path.join(
        o["builddir"], "malloc", ".libs", "libatomkit-malloc.so"))
    if design in DESIGNS:
        env = {"AK_MALLOC_DESIGN": design}
        if ":" in a:
            k, v = a.split(":")[1].split("=")
            env[f"AK_SLAB_{k.upper()}"] = v
        return dict(kind="design", preload=os.path.abspath(lib), env=env,
                    design=design, why="" if os.path.isfile(lib) else
                    f"{lib} not built (libatomkit-malloc.so; AK_MALLOC_LIB "
                    "names another)")
    so = dict(registry.SYSTEM_MALLOCS).get(a)
    path = registry.malloc_path(so) if so else None
    return dict(kind="system", preload=path, env={}, design=None, why=""
                if not so or path else f"not installed ({so}; "
                "scripts/setup-deps installs it)")


def plan_rows(size, pus, top, o=None):
    """The plan's rows: workload, runs, threads, seconds, what."""
    o = o or parse([f"--{size}", "--jobs", str(pus)], top)
    al = [a for a in o["al"] if not allocator(o, a)["why"]]
    n = o["sz"]["runs"] * len(al)
    return [(f"macro {w}", n, int(w[-2]) if w.startswith("mixloop") else
             o["sz"]["threads"] if W[w][0] == "synthetic" else 1,
             n * (RUN_S[w][o["size"] == "short"] if o["size"] != "quick"
                  else 0.4),
             f"{o['size']}: {len(al)} allocators")
            for w in o["wl"]]


def make_tree(top, o, t):
    """The compile's sources into t, its configurations and Makefile;
    returns the set's "tree" member."""
    git = ["git", "-C", top]
    fixed, commit = False, None
    if (registry.capture(git + ["rev-parse", "--show-toplevel"]) or
            "").strip() != os.path.realpath(top):
        o["con"].say(f"compile: {top} is no git checkout: compiling its "
                     "own files")
    elif registry.capture(git + ["cat-file", "-e", FIXED_COMMIT + "^{commit}"
                                 ]) is not None:
        fixed, commit = True, FIXED_COMMIT
    else:
        commit = (registry.capture(git + ["rev-parse", "--verify", "-q",
                                          "HEAD"]) or "").strip() or None
        o["con"].say(f"compile: commit {FIXED_COMMIT} is not in this clone "
                     f"(shallow?): compiling {commit or 'its own files'}")
    os.makedirs(t)
    src = (f"git -C {q(top)} archive --format=tar {commit} src slab include "
           "arch" if commit else f"cd {q(top)} && tar -cf - src/*.c slab "
           "include arch")
    subprocess.run(f"{src} | tar -C {q(t)} -xf -", shell=True, check=True)
    inc = f"{t}/include/atomkit"
    for f in ("config.h", "arch"):	# an in-tree build's own stays out
        if os.path.lexists(f"{inc}/{f}"):
            os.unlink(f"{inc}/{f}")
    os.symlink("../../arch", f"{inc}/arch")
    native = {"x86_64": "x86_64", "aarch64": "arm64", "aarch64_be": "arm64",
              "ppc64": "ppc64", "ppc64le": "ppc64"}.get(os.uname().machine,
                                                        "generic")
    with open(f"{inc}/config.h.in") as f:
        tmpl = f.read()
    for a in (native, "generic"):
        os.makedirs(f"{t}/cfg/{a}/atomkit", exist_ok=True)
        with open(f"{t}/cfg/{a}/atomkit/config.h", "w") as f:
            f.write(tmpl.replace("@AK_ARCH_MACRO@", "AK_ARCH_" + a.upper())
                    .replace("@AK_ARCH@", a)
                    .replace("@PACKAGE_VERSION@", "macro"))
    srcs = sorted(f"{d}/{n}" for d in ("src", "slab")
                  for n in os.listdir(f"{t}/{d}") if n.endswith(".c"))
    if o["sz"]["cc_files"] != "all":
        srcs = srcs[:o["sz"]["cc_files"]]
    flags = {"O0": "-O0 -Icfg/N", "O2": "-O2 -Icfg/N",
             "O2-stress": "-O2 -Icfg/N -DAK_SLAB_STRESS -DAK_RSEQ_STRESS",
             "Os-generic": "-Os -Icfg/generic",
             "O2-g": "-O2 -g -fdebug-prefix-map=$(CURDIR)=. -Icfg/N"}
    o["objs"] = objs = [f"obj/{c}/{s[:-2]}.o" for c in o["sz"]["cc_sets"]
                        .split() for s in srcs]
    with open(f"{t}/Makefile", "w") as f:
        f.write("\n".join([
            "# the compile workload (scripts/run-macro): every source under "
            "each flag set", f"CC = {prog('gcc')}",
            "BASE = -std=gnu11 -pthread -Wall -Wextra"] + [
            f"{x}: {s}\n\t$(CC) $(BASE) "
            f"{flags[x.split('/')[1]].replace('cfg/N', f'cfg/{native}')} "
            f"-Iinclude -c {s} -o $@" for x, s in zip(objs, srcs * len(
                o["sz"]["cc_sets"].split()))] + [
            "all: " + " ".join(objs), ".DEFAULT_GOAL := all"]) + "\n")
    return {"source": "git-archive" if commit else "source-dir",
            "commit": commit, "fixed": fixed, "fixed_commit": FIXED_COMMIT,
            "files": len(srcs), "flag_sets": o["sz"]["cc_sets"],
            "objects": len(objs), "jobs": o["jobs"]}


def prepare(o, top, w, wdir):
    """The workload's inputs under wdir (untimed): its "tree" member for
    the compile, or why they could not be made (a string)."""
    os.makedirs(wdir, exist_ok=True)
    s, gen = o["sz"], os.path.join(o["bin"], "macro-gen")
    if w == "compile":
        try:
            return make_tree(top, o, f"{wdir}/tree")
        except (OSError, subprocess.CalledProcessError):
            return "could not make the tree to compile"
    if w == "redis" and len(wdir) > 80:	# a socket's path: 107 bytes
        return (f"the work folder's path is too long for redis-server's "
                f"socket ({wdir}: TMPDIR names a shorter one)")
    kind, n, file = dict(sqlite=("sql", "sql_n", "script.sql"),
                         python=("words", "py_words", "words.txt"),
                         perl=("words", "pl_words", "words.txt"),
                         git=("git", "git_n", "stream")).get(w, [None] * 3)
    if kind:
        with open(f"{wdir}/{file}", "w") as f:
            if subprocess.run([gen, kind, str(s[n])], stdout=f).returncode:
                return f"macro-gen {kind} failed"


def versions(w):
    def v(name, *args):
        args = args or ("--version",)
        return ((registry.capture([prog(name), *args]) or "").strip()
                .splitlines() or [""])[0]
    if w == "sqlite":
        return "sqlite3 " + " ".join(v("sqlite3").split()[:2])
    r = v("redis-server").split() if w == "redis" else []
    return {"compile": f"{v('gcc')}; {v('make')}",
            "redis": f"{' '.join(r[:3] + r[4:5])}; {v('redis-benchmark')}",
            "python": subprocess.run([prog("python3"), "--version"],
                                     capture_output=True, text=True
                                     ).stdout.strip() if w == "python" else "",
            "git": v("git"), "perl": v("perl", "-e", 'print "perl $^V\\n"')
            }.get(w, "built with the project's compiler and flags")


def counters(path, design):
    """The AK_MALLOC_STATS lines of a run's processes summed (counts), and
    each byte field as its largest in one process and its sum; with the
    lines that are not the library's for this design."""
    def ours(line):
        try:
            v = json.loads(line)
            return v if v["design"] == design and isinstance(
                v["pid"], int) and all(isinstance(v[k], int)
                                       for k in COUNTS + BYTES) else None
        except (ValueError, KeyError, TypeError):
            return None
    with open(path, errors="replace") as f:
        lines = [ours(line) for line in f]
    procs = [v for v in lines if v is not None]
    bad, c = len(lines) - len(procs), {"processes": len(procs)}
    c.update((k, sum(p[k] for p in procs)) for k in COUNTS)
    for k in BYTES:
        c[f"{k}_max"] = max([p[k] for p in procs] or [0])
        c[f"{k}_sum"] = sum(p[k] for p in procs)
    return bad, c


def macro_run(o, a, out, err, timeout, *cmd, wl=None):
    """bench/macro/macro-run: (exit status, its metrics as a dict)."""
    args = [os.path.join(o["bin"], "macro-run"), "-o", out, "-e", err,
            "-t", str(timeout)]
    if wl:
        args += ["-C", wl["dir"], "-i", wl["stdin"]]
    args += [x for k, v in [*(wl or {}).get("env", {}).items(),
                            *a["env"].items()] for x in ("-v", f"{k}={v}")]
    args += ["-p", a["preload"]] if a["preload"] else []
    with open(f"{os.path.dirname(out)}/run.err", "w") as e, subprocess.Popen(
            args + a.get("more", []) + ["--", *cmd], stdout=subprocess.PIPE,
            stderr=e, text=True, env=o["env"]) as p:
        try:
            metrics, rc = p.communicate()[0], p.wait()
        finally:	# SIGTERM: macro-run kills the program's group first
            p.terminate()
    if rc >= 128:
        raise registry.Interrupted()
    try:
        return rc, json.loads("{" + metrics + "}")
    except ValueError:
        return rc, None


def probe(o, name, a, work):
    """Why the allocator cannot run here (a preload the loader dropped),
    else "", and the library its malloc resolved to."""
    rc, _ = macro_run(o, a, f"{work}/probe.out", f"{work}/probe.err", 60,
                      os.path.join(o["bin"], "macro-probe"))
    out = [ln.split() for ln in lines(f"{work}/probe.out")
           if len(ln.split()) > 1]
    lib = next((ln[1] for ln in out if ln[0] == "malloc"), "unknown")
    if rc:
        with open(f"{work}/probe.err", errors="replace") as f:
            tail = " ".join(f.read().splitlines()[-3:])
        return f"{o['bin']}/macro-probe failed under it: {tail}", lib
    got = sorted({ln[1] for ln in out})
    if a["preload"] and any(os.path.realpath(g) != os.path.realpath(
            a["preload"]) for g in got):
        return (f"LD_PRELOAD={a['preload']} did not replace malloc and free "
                f"(they resolved to {' '.join(got)})"), lib
    return "", lib


def serves(o, wl, a, name, top, work):
    """For redis (Debian links it with libjemalloc): why the allocator
    would not serve its server (malloc, calloc, realloc or free bound
    elsewhere), else ""."""
    want = os.path.realpath(a["preload"] or registry.malloc_path("libc.so.6")
                            or "")
    macro_run(o, dict(a, more=[]), f"{work}/bound", f"{work}/bound.err",
              60, "/bin/sh", f"{top}/bench/macro/redis-work.sh", "--bound",
              wl=dict(wl, dir=work, stdin="/dev/null"))
    got = dict(ln.split(" ", 1) for ln in lines(f"{work}/bound") if " " in ln)
    why = "redis-server's {} binds to {}, not to {}: its runs would not " \
        "measure {}"
    return next((why.format(f, got.get(f) or "nothing the loader said "
                            "(LD_DEBUG=bindings)", want, name)
                 for f in ("malloc", "calloc", "realloc", "free")
                 if not got.get(f) or os.path.realpath(got[f]) != want), "")


def table(rows, runs):
    """macro.txt: per workload the runs' means, elapsed against glibc's."""
    out, by = [], {}
    for r in rows:
        by.setdefault(r[0], {}).setdefault(r[1], []).append(r)
    for w, als in by.items():
        out += [f"\n{w} (mean of {runs})", "%-12s %10s %10s %10s %10s %12s "
                "%8s" % ("allocator", "user s", "system s", "elapsed s",
                         "max RSS MB", "minor flt", "vs glibc")]
        base = [r[2]["elapsed_s"] for r in als.get("glibc", [])]
        base = sum(base) / len(base) if base else 0
        for a, rs in als.items():
            def mean(k):
                return sum(r[2][k] for r in rs) / len(rs)
            bad = sum(not r[3] for r in rs)
            out.append("%-12s %10.3f %10.3f %10.3f %10.1f %12d %8s%s" % (
                a, mean("user_s"), mean("system_s"), mean("elapsed_s"),
                max(r[2]["max_rss_kb"] for r in rs) / 1024,
                int(mean("minor_faults")), "%.3f" % (mean("elapsed_s") /
                                                      base) if base > 0 else
                "-", f"  {bad} run(s) failed" if bad else ""))
    return "\n".join(out) + "\n"


def allocators(o, als, work, con):
    """Each allocator probed (the loader only warns when a preload fails,
    and the program then runs on glibc): macro.json's allocators, and
    those that run."""
    doc, ran = [], {}
    for a, al in als.items():
        lib = None
        if not al["why"]:
            al["why"], lib = probe(o, a, al, work)
        if al["why"] and a in (o["allocators"] or "").split(","):
            raise RunError(f"allocator {a}: {al['why']}", 2)
        if al["why"]:
            con.say(f"allocator {a}: {al['why']}: its runs are left out")
        else:
            ran[a] = al
        doc.append(dict(name=a, kind=al["kind"], library=lib,
                        preload=al["preload"], env=al["env"],
                        **({"variant_of": al["design"]} if ":" in a else {}),
                        **(dict(status="skipped", reason=al["why"])
                           if al["why"] else dict(status="ran"))))
    return doc, ran


def one_run(o, w, wl, a, al, work, bound, base_sha):
    """A run of workload w under allocator a: its members, and output."""
    wdir, s = wl["dir"], o["sz"]
    for d in ("obj", "repo", "server"):	# what the last run made
        shutil.rmtree(f"{wdir}/{d}", ignore_errors=True)
    for d in sorted({os.path.dirname(x) for x in o.get("objs", [])
                     if w == "compile"}):
        os.makedirs(f"{wdir}/{d}", exist_ok=True)
    st, out, err_ = f"{work}/stats", f"{work}/out.txt", f"{work}/err.txt"
    if os.path.exists(st):
        os.unlink(st)
    al["more"] = ["-v", f"AK_MALLOC_STATS={st}"] if al["kind"] == "design" \
        else []
    rc, m = macro_run(o, al, out, err_, s["to"], *wl["argv"], wl=wl)
    if m is None:
        with open(f"{work}/run.err", errors="replace") as f:
            raise RunError(f"{f.read().strip()}\nmacro-run failed (exit "
                           f"{rc}): stopped")
    if rc == 0 and w == "compile":	# the objects are its output
        with open(out, "a") as f:
            for x in sorted(o["objs"]):
                if os.path.exists(f"{wdir}/{x}"):
                    with open(f"{wdir}/{x}", "rb") as obj:
                        f.write(f"{hashlib.sha256(obj.read()).hexdigest()}"
                                f"  {x}\n")
    with open(out, "rb") as f:
        data = f.read()
    sha, note = hashlib.sha256(data).hexdigest(), ""
    doc = dict(m)
    if al["kind"] == "design":
        open(st, "a").close()
        bad, doc["malloc_counters"] = counters(st, al["design"])
        if bad:
            note = (f"AK_MALLOC_STATS: {bad} line(s) not the library's for "
                    f"{a}: the counters cannot be summed")
        elif not doc["malloc_counters"]["processes"]:
            note = ("no process wrote its counters (AK_MALLOC_STATS): the "
                    "preload did not serve the program")
    if rc:
        with open(err_, errors="replace") as f:
            tail = "\n".join(f.read().splitlines()[-2:])[:300]
        note = (f"timed out after {s['to']} s" if m.get("timed_out") else
                f"killed by signal {m.get('signal')}"
                if m.get("exit_status") is None else "")
        note = f"{note}: {tail}" if note and tail else note or tail or \
            f"exit status {m['exit_status']}"
    else:
        note = bound or note or ("" if base_sha in (None, sha) else
                                 "output differs from glibc's")
    doc.update(output_sha256=sha, output_bytes=len(data),
               output_matches_baseline=sha == (base_sha or sha), ok=not note)
    if note:
        doc["note"] = note
    return doc, data


def run(o, top, con):
    o["con"] = con
    if o["mode"] == "commands":
        for w in o["wl"]:
            wl = workload(o, top, w, f"$WORK/{w}")
            print(w, wl["kind"], wl["command"])
        return 0
    if o["mode"] == "plan":
        rows = plan_rows(o["size"], o["jobs"], top, o)
        print(plan.table(f"{WHO}: plan: {o['size']}, {o['sz']['runs']} "
                         "run(s) of each workload under each allocator "
                         f"installed, {o['sz']['threads']} threads",
                         rows, sum(r[3] for r in rows)))
        return 0
    if o["mode"] == "list":
        for w in WORKLOADS:
            print(f"workload {w}: "
                  f"{missing(o, workload(o, top, w, ''), w) or 'available'}")
        for a in ALLOCATORS + VARIANTS:
            print(f"allocator {a}: {allocator(o, a)['why'] or 'available'}")
        return 0
    if os.environ.get("AK_TEST_RUNNER"):
        err("natively only: the preloaded allocators and Debian's programs "
            "are this machine's, not AK_TEST_RUNNER's")
    for p in ("macro-run", "macro-probe", "macro-gen"):
        if not os.access(os.path.join(o["bin"], p), os.X_OK):
            raise RunError(f"{o['bin']}/{p} not built: run make in the build "
                           "tree (or name it with --builddir)")
    o["env"] = dict(os.environ, LC_ALL="C")	# the designs' default mode
    for k in ("AK_PERCPU_MODE", "AK_MALLOC_DESIGN"):
        o["env"].pop(k, None)
    als = {a: allocator(o, a) for a in o["al"]}
    if registry.sanitized(os.path.join(o["bin"], "churn")):
        if o["allocators"] and len(o["al"]) > 1:
            err(f"--allocators {o['al'][1]}: the synthetic workloads are "
                "built with AddressSanitizer, which no other malloc can be "
                "preloaded under")
        con.say("the synthetic workloads are built with AddressSanitizer: "
                "only glibc runs")
        als = {"glibc": als["glibc"]}
    work, out = tempfile.mkdtemp(prefix="ak-macro.", dir=os.environ.get(
        "TMPDIR", "/tmp")), ""
    try:
        adoc, ran = allocators(o, als, work, con)
        for w in (o["workloads"] or "").split(","):
            why = w and missing(o, workload(o, top, w, ""), w)
            if why:
                err(f"--workloads {w}: {why}")
        bench = registry.Bench(os.path.join(o["builddir"], "bench",
                                            "atomkit-bench"))
        machine = o["machine"] or registry.machine_name(bench)
        out = o["out"] or registry.set_dir(top, bench, machine)
        os.makedirs(out, exist_ok=True)
        if not os.path.isfile(f"{out}/machine.json"):
            schema.write_json(f"{out}/machine.json", registry.machine_doc(
                bench, top, machine, out, f"macro-{o['size']}", ["macro"]),
                "machine")
        started, s = registry.now(), o["sz"]
        con.say(f"writing {out}/macro.json ({o['size']}: {s['runs']} run(s) "
                f"of each workload under {' '.join(ran)})")
        total, failures, rows, wdocs = s["runs"] * len(ran) * len(o["wl"]), \
            0, [], []
        if o["alone"]:
            con.total = sum(r[3] for r in plan_rows(o["size"], o["jobs"],
                                                    top, o))
            con.begin(1, 1, "macro", total, con.total, "run")
        con.cur["count"] = total
        for w in o["wl"]:
            wl = workload(o, top, w, f"{work}/{w}")
            head = dict(name=w, kind=wl["kind"],
                        description=wl["description"], inputs=wl["inputs"])
            why = missing(o, wl, w)
            tree = None if why else prepare(o, top, w, f"{work}/{w}")
            why = why or (tree if isinstance(tree, str) else "")
            if why:
                con.say(f"workload {w}: {why}: left out")
                wdocs.append(dict(head, status="skipped", reason=why))
                con.cur["count"] -= s["runs"] * len(ran)
                continue
            head.update(command=wl["command"], env=wl["env"],
                        versions=versions(w), **({"tree": tree} if tree
                                                 else {}))
            con.say(f"workload {w}: {wl['inputs']}")
            bound = {a: serves(o, wl, al, a, top, work) if w == "redis"
                     else "" for a, al in ran.items()}
            for a in (a for a in ran if bound[a]):
                con.say(f"redis under {a}: {bound[a]}")
            base, baseline, res = None, "", {a: [] for a in ran}
            for r in range(1, s["runs"] + 1):
                for a, al in ran.items():
                    doc, data = one_run(o, w, wl, a, al, work, bound[a], base)
                    if a == "glibc" and base is None:
                        base = doc["output_sha256"]
                        baseline = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "",
                                          data[:4096].decode(errors="replace")
                                          ).rstrip("\n")
                    if not doc["ok"]:
                        failures += 1
                        con.say(f"{w} under {a}, run {r}: failed: "
                                f"{doc['note']}")
                    res[a].append(dict(run=r, **doc))
                    rows.append((w, a, doc, doc["ok"]))
                    con.step(con.cur["i"] + 1)
            wdocs.append(dict(head, status="ran", baseline_output=baseline,
                              results=[dict(allocator=a, runs=v)
                                       for a, v in res.items()]))
        schema.write_json(f"{out}/macro.json", dict(
            ak_macro_schema="2", ak_set=os.path.basename(out),
            ak_run_mode=o["size"], ak_run_started=started,
            ak_run_finished=registry.now(), ak_git_rev=registry.rev(top),
            ak_runs=s["runs"], ak_jobs=o["jobs"], ak_threads=s["threads"],
            ak_timeout_s=s["to"], ak_baseline="glibc", ak_failures=failures,
            allocators=adoc, workloads=wdocs), "macro")
        with open(f"{out}/macro.txt.tmp", "w") as f:
            f.write(table(rows, s["runs"]))
        os.replace(f"{out}/macro.txt.tmp", f"{out}/macro.txt")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for f in (f"{out}/macro.json.tmp", f"{out}/macro.txt.tmp"):
            if out and os.path.exists(f):
                os.unlink(f)
    return out, failures


def main(argv=None, con=None):
    """The command; con: run-bench's console, which then owns the signals
    and the set's rendering."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    alone = con is None
    con = con or Console(WHO, 0)
    try:
        o = parse(sys.argv[1:] if argv is None else argv, top)
        o["alone"] = alone
        if alone:
            registry.trap()
        got = run(o, top, con)
        if isinstance(got, int):
            return got
        out, failures = got
        if alone:
            con.end(f"{failures} run(s) failed" if failures else
                    "every run ok")
            with open(f"{out}/macro.txt") as f:
                print(f.read())
            if o["render"]:
                registry.render(con, out, os.environ.get("AK_REPORT", (
                    os.path.join(o["builddir"], "report", "atomkit-report"))))
        if failures:
            con.say(f"{failures} run(s) failed, or disagreed with glibc's "
                    f"output: marked in {out}/macro.json")
            return 1
        if alone:
            con.say(f"done: {out}/macro.json")
        return 0
    except (RunError, OSError, schema.SetError) as e:
        con.say(str(e), err=True)
        return e.status if isinstance(e, RunError) else 1
    except registry.Interrupted:
        if not alone:
            raise
        con.say("interrupted: no macro.json written", err=True)
        return 130
    finally:
        if alone:
            registry.trap(False)
