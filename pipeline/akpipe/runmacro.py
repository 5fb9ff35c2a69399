"""scripts/run-macro: the whole-program benchmarks (doc/benchmarks.md,
"Whole programs"), every workload under every allocator, into a result
set's macro.json, with a console table in macro.txt.  Each run is a
process group of its own, timed by bench/macro/macro-run, its output
checksummed against glibc's; a design's runs carry libatomkit-malloc.so's
counters summed over their processes (AK_MALLOC_STATS).

Usage: scripts/run-macro [--full|--short|--quick] [--runs N] [--out DIR]
           [--machine NAME] [--builddir DIR] [--workloads LIST]
           [--allocators LIST] [--jobs N] [--timeout SECS] [--no-render]
           [--plan|--commands|--list]

  --full        (default) full inputs, 5 runs each (`make bench-macro`)
  --short       smaller inputs, 3 runs each (the end of `make bench`)
  --quick       tiny inputs, 1 run each: does every run finish and agree
                with glibc? (no figures to keep)
  --runs N      N runs of each workload under each allocator
  --out DIR     the result set (made, with a machine.json, if missing);
                default results/<arch>/<machine>/<date>-<rev>/
  --machine     the <machine> folder, as scripts/run-bench
  --builddir    the build tree (default .): bench/macro/'s programs and
                malloc/.libs/libatomkit-malloc.so (AK_MALLOC_LIB overrides)
  --workloads   comma-separated, default all: WORKLOADS
  --allocators  comma-separated, default all: ALLOCATORS; --full adds the
                designs without per-CPU partial slabs, VARIANTS (named,
                in any size, beside their design); glibc always runs, first
  --jobs N      make -j N, and N threads (2 to the programs' cap) for the
                synthetic workloads; default: the CPUs this process may use
  --timeout S   a run still going after S seconds is killed and failed
  --no-render   leave tables.md, select.md and plots/ to the caller
  --plan        run nothing: per workload its runs and estimated minutes
  --commands    run nothing: each workload's kind and command line
  --list        run nothing: which workloads and allocators are here

A workload or allocator this machine lacks is left out (an error, exit 2,
where named).  Each run of a workload goes through every allocator before
the next.  A run that fails, times out, prints other than glibc's output
or (a design's) reports no counters is marked so, and the exit status is
1.  Natively only.
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
        "with gcc, every process (make, gcc, cc1, as) under the allocator",
        "sources: {cc_files} of the tree's src/*.c and slab/*.c; flag sets: "
        "{cc_sets}"),
    "sqlite": (
        "program", "sqlite3:sqlite3", "'{sqlite3}' -bail :memory:", "",
        "sqlite3 on an in-memory database: a generated script inserting "
        "{sql_n} sales and an eighth as many items in one transaction, "
        "index builds, joins, grouping, an update, a delete",
        "macro-gen sql {sql_n}"),
    "python": (
        "program", "python3:python3-minimal",
        "'{python3}' -S -s '{m}/pywork.py' '{w}/words.txt' {py_rounds}",
        "PYTHONMALLOC=malloc PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1",
        "python3 with every object through malloc: dicts, lists, tuples, "
        "class instances and strings built over a generated text and "
        "dropped, rounds: {py_rounds}",
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
        "redis-server on a Unix socket (2 I/O threads, lazy freeing), alone "
        "under the allocator (glibc's run: libc preloaded ahead of jemalloc), "
        "loaded by redis-benchmark: strings of 16 to 9000 bytes, lists, sets "
        "and hashes made, read and deleted; its dataset's state read back",
        "keys per size: {redis_k}; bench/macro/redis-work.sh"),
    "perl": (
        "program", "perl:perl-base",
        "'{perl}' '{m}/perlwork.pl' '{w}/words.txt' {pl_rounds}",
        "PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0",
        "perl (on the system malloc): word counts in hashes of hashes, "
        "sorting, regex substitutions, a record per line and an index of "
        "them, all dropped each round, rounds: {pl_rounds}",
        "macro-gen words {pl_words}; bench/macro/perlwork.pl, rounds: "
        "{pl_rounds}"),
    "churn": (
        "synthetic", "", "'{exe}' -t {threads} -n {churn_n}", "",
        "server-style churn: {threads} threads make objects of 32 to 511 "
        "bytes, keep one in four (local free) and hand the rest to other "
        "threads to check and free (remote free)",
        "{churn_n} objects, {threads} threads"),
    "prodcons": (
        "synthetic", "", "'{exe}' -t {threads} -n {prod_n}", "",
        "producer/consumer: {half} threads only allocate messages of 32 "
        "bytes to 32 KiB, {rest} only check and free them, in batches of 32",
        "{prod_n} messages, {threads} threads"),
    "falseshare": (
        "synthetic", "", "'{exe}' -t {threads} -n {fs_n} -w {fs_w}", "",
        "false-sharing probe: objects of 8 to 64 bytes each written {fs_w} "
        "times by one thread, which allocated it (active) or got it from "
        "another thread (passive)",
        "{fs_n} objects per phase, {fs_w} writes each, {threads} threads"),
    "sizemix": (
        "synthetic", "", "'{exe}' -t {threads} -n {mix_n} -l {mix_l}", "",
        "heavy-tailed size mix, 32 bytes to 2 MiB, in a live set of {mix_l} "
        "slots per thread, one replacement in eight by realloc",
        "{mix_n} operations, {mix_l} slots per thread, {threads} threads"),
    "remotefree": (
        "synthetic", "", "'{exe}' -t {threads} -n {rf_n} -l {rf_l}", "",
        "remote frees in rounds (the Larson benchmark's shape): objects of "
        "32 to 1023 bytes in 64 regions of {rf_l} slots, each worked in "
        "turn by {threads} threads, which replace the object in a random slot",
        "{rf_n} operations in 32 rounds, 64 regions of {rf_l} slots, "
        "{threads} threads"),
    "mixloop-1t": (
        "synthetic", "", "'{exe}' -t {lt} -n {loop_n} -l {loop_l}", "",
        "multi-size allocation loop on {lt} thread(s): each replaces the "
        "object in a random one of its own {loop_l} slots by one of 32 bytes "
        "to 4 KiB; nothing crosses threads",
        "{loop_n} operations, {loop_l} slots per thread, {lt} thread(s)"),
}
W["mixloop-2t"] = W["mixloop-1t"]


def text(path):
    """path's text, "" where it is missing."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def prog(name):
    """Debian's NAME (/usr/bin first, not a shim earlier in PATH)."""
    p = f"/usr/bin/{name}"
    return p if os.access(p, os.X_OK) else shutil.which(name) or ""


def err(msg):
    raise RunError(f"{msg} (try --help)", 2)


def parse(argv, top):
    """The options, checked; "sz": the size's numbers, "wl" and "al": the
    workloads and allocators to run."""
    flags = {f"--{k}": (key, k) for key, ks in (
        ("size", "full short quick"), ("mode", "plan commands list"))
        for k in ks.split()}
    flags["--no-render"] = ("render", False)
    o = dict(size="full", machine=os.environ.get("AK_MACHINE"),
             builddir=".", render=True, mode="run")
    o.update(registry.options(argv, flags, {f"--{k}": k for k in (
        "runs out machine builddir workloads allocators jobs timeout"
        ).split()}, __doc__.replace("WORKLOADS", " ".join(WORKLOADS))
        .replace("ALLOCATORS", " ".join(ALLOCATORS))
        .replace("VARIANTS", " ".join(VARIANTS))))
    for k, most in (("runs", 100), ("timeout", 86400), ("jobs", 65536)):
        v = o.get(k)
        if v is not None and not (v.isdigit() and 1 <= int(v) <= most):
            err(f"--{k} '{v}': expected a number from 1 to {most}")
    names = {}
    for k, known in (("workloads", WORKLOADS),
                     ("allocators", ALLOCATORS + VARIANTS)):
        names[k] = (o.get(k) or ",".join(known)).split(",")
        for x in names[k]:
            if x not in known:
                err(f"--{k}: unknown name '{x}' (known: {' '.join(known)})")
    o["wl"] = [w for w in WORKLOADS if w in names["workloads"]]
    # a variant is shown beside its design, and only in --full unless named
    al = {"glibc", *names["allocators"]} | {
        a.split(":")[0] for a in names["allocators"]}
    o["al"] = [a for a in ALLOCATORS + VARIANTS if a in al and (
        ":" not in a or o.get("allocators") or o["size"] == "full")]
    s = o["sz"] = dict(SIZES[o["size"]])
    s["runs"], s["to"] = int(o.get("runs") or s["runs"]), int(
        o.get("timeout") or s["to"])
    o["jobs"] = int(o.get("jobs") or len(os.sched_getaffinity(0)))
    with open(os.path.join(top, "bench", "macro", "macro.h")) as f:
        cap = re.search(r"^#define MACRO_MAX_THREADS (\d+)", f.read(), re.M)
    s["jobs"], s["threads"] = o["jobs"], min(max(o["jobs"], 2),
                                             int(cap.group(1)) if cap else 2)
    s["half"], s["rest"] = s["threads"] // 2, s["threads"] - s["threads"] // 2
    if "/" in (o["machine"] or "") or (o["machine"] or "").startswith("."):
        err(f"bad machine name '{o['machine']}'")
    if not os.path.isdir(o["builddir"]):
        err(f"--builddir {o['builddir']}: no such directory")
    o["bin"] = os.path.join(os.path.abspath(o["builddir"]), "bench", "macro")
    return o


def workload(o, top, w, wdir):
    """Workload w, its inputs under wdir: kind, env, description, inputs,
    command (and as argv), dir, stdin, and why it cannot run here."""
    kind, needs, cmd, env, desc, inputs = W[w]
    paths = {p: prog(p) for p in ("make sqlite3 python3 git perl redis-server "
                                  "redis-benchmark redis-cli").split()}
    paths.update(libc=registry.malloc_path("libc.so.6") or "", w=wdir,
                 exe=os.path.join(o["bin"], w.split("-")[0]),
                 m=os.path.join(top, "bench", "macro"))
    s = dict(o["sz"], lt=w[-2:-1], **paths)
    command = cmd.format(**dict(s, **{k: v.replace("'", "'\\''")
                                      for k, v in paths.items()}))
    why = [f"{n} not installed (Debian package {p})"
           for n, p in (x.split(":") for x in needs.split()) if not prog(n)]
    if kind == "synthetic" and not os.access(paths["exe"], os.X_OK):
        why.append(f"{paths['exe']} not built")
    if w == "redis" and not paths["libc"]:
        why.append("libc.so.6 not in the loader cache (ldconfig -p)")
    return dict(kind=kind, why="; ".join(why),
                env=dict(e.split("=", 1) for e in env.format(**s).split()),
                description=desc.format(**s), inputs=inputs.format(**s),
                command=command, argv=shlex.split(command),
                dir=f"{wdir}/tree" if w == "compile" else wdir,
                stdin=f"{wdir}/script.sql" if w == "sqlite" else "/dev/null")


def allocator(o, a):
    """name, kind, preload, env, design, why (this machine lacks it)."""
    design, _, knob = a.partition(":")
    lib = os.environ.get("AK_MALLOC_LIB", os.path.join(
        o["builddir"], "malloc", ".libs", "libatomkit-malloc.so"))
    if design in DESIGNS:
        env = {"AK_MALLOC_DESIGN": design}
        if knob:
            k, v = knob.split("=")
            env[f"AK_SLAB_{k.upper()}"] = v
        return dict(name=a, kind="design", preload=os.path.abspath(lib),
                    env=env, design=design, why="" if os.path.isfile(lib) else
                    f"{lib} not built (libatomkit-malloc.so; AK_MALLOC_LIB "
                    "names another)")
    so = dict(registry.SYSTEM_MALLOCS).get(a)
    path = registry.malloc_path(so) if so else None
    return dict(name=a, kind="system", preload=path, env={}, design=None,
                why="" if not so or path else f"not installed ({so}; "
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


def make_tree(o, top, t):
    """The compile's sources into t, a config.h per arch, and a Makefile
    of every source under each flag set: macro.json's "tree"."""
    # git only at a checkout's own top: a copy of the sources inside
    # another repository's work tree (CI's build-ci/src) is no checkout
    git, commit = ["git", "-C", top], None
    if (registry.capture(git + ["rev-parse", "--show-toplevel"]) or
            "").strip() != os.path.realpath(top):
        o["con"].say(f"compile: {top} is no git checkout: compiling its "
                     "own files")
    elif registry.capture(git + ["cat-file", "-e", FIXED_COMMIT +
                                 "^{commit}"]) is not None:
        commit = FIXED_COMMIT
    else:
        commit = (registry.capture(git + ["rev-parse", "--verify", "-q",
                                          "HEAD"]) or "").strip() or None
        o["con"].say(f"compile: commit {FIXED_COMMIT} is not in this clone "
                     f"(shallow?): compiling {commit or 'its own files'}")
    os.makedirs(t)
    src = (f"git -C {shlex.quote(top)} archive --format=tar {commit} "
           "src slab include arch" if commit else
           f"cd {shlex.quote(top)} && tar -cf - src/*.c slab include arch")
    subprocess.run(f"{src} | tar -C {shlex.quote(t)} -xf -", shell=True,
                   check=True)
    inc = f"{t}/include/atomkit"
    for f in ("config.h", "arch"):	# an in-tree build's own stays out
        if os.path.lexists(f"{inc}/{f}"):
            os.unlink(f"{inc}/{f}")
    os.symlink("../../arch", f"{inc}/arch")
    n = {"x86_64": "x86_64", "aarch64": "arm64", "aarch64_be": "arm64",
         "ppc64": "ppc64", "ppc64le": "ppc64"}.get(os.uname().machine,
                                                   "generic")
    with open(f"{inc}/config.h.in") as f:
        tmpl = f.read()
    for a in (n, "generic"):	# configure's substitutions, by hand
        v = dict(AK_ARCH_MACRO="AK_ARCH_" + a.upper(), AK_ARCH=a,
                 PACKAGE_VERSION="macro", AK_PERCPU_MODE="runtime")
        os.makedirs(f"{t}/cfg/{a}/atomkit", exist_ok=True)
        with open(f"{t}/cfg/{a}/atomkit/config.h", "w") as f:
            f.write(re.sub(r"@(\w+)@", lambda m: v[m[1]], tmpl))
    s, sets = o["sz"], o["sz"]["cc_sets"].split()
    srcs = sorted(f"{d}/{x}" for d in ("src", "slab")
                  for x in os.listdir(f"{t}/{d}") if x.endswith(".c"))[
                      :None if s["cc_files"] == "all" else s["cc_files"]]
    flags = {"O0": f"-O0 -Icfg/{n}", "O2": f"-O2 -Icfg/{n}",
             "O2-stress": f"-O2 -Icfg/{n} -DAK_SLAB_STRESS -DAK_RSEQ_STRESS",
             "Os-generic": "-Os -Icfg/generic",
             "O2-g": f"-O2 -g -fdebug-prefix-map=$(CURDIR)=. -Icfg/{n}"}
    o["objs"] = objs = [f"obj/{c}/{x[:-2]}.o" for c in sets for x in srcs]
    with open(f"{t}/Makefile", "w") as f:
        f.write("\n".join([
            "# the compile workload (scripts/run-macro): every source under "
            "each flag set", f"CC = {prog('gcc')}",
            "BASE = -std=gnu11 -pthread -Wall -Wextra"] + [
            f"{x}: {c}\n\t$(CC) $(BASE) {flags[x.split('/')[1]]} -Iinclude "
            f"-c {c} -o $@" for x, c in zip(objs, srcs * len(sets))] + [
            "all: " + " ".join(objs), ".DEFAULT_GOAL := all"]) + "\n")
    return {"source": "git-archive" if commit else "source-dir",
            "commit": commit, "fixed": commit == FIXED_COMMIT,
            "fixed_commit": FIXED_COMMIT, "files": len(srcs),
            "flag_sets": s["cc_sets"], "objects": len(objs), "jobs": o["jobs"]}


def prepare(o, top, w, wdir):
    """The workload's inputs under wdir (untimed): the compile's "tree"
    member, or why they could not be made (a string)."""
    os.makedirs(wdir, exist_ok=True)
    if w == "compile":
        try:
            return make_tree(o, top, f"{wdir}/tree")
        except (OSError, subprocess.CalledProcessError):
            return "could not make the tree to compile"
    if w == "redis" and len(wdir) > 80:	# a socket's path: 107 bytes
        return (f"the work folder's path is too long for redis-server's "
                f"socket ({wdir}: TMPDIR names a shorter one)")
    gen = dict(sqlite="sql sql_n script.sql", git="git git_n stream",
               python="words py_words words.txt",
               perl="words pl_words words.txt").get(w)
    if gen:
        kind, n, file = gen.split()
        with open(f"{wdir}/{file}", "w") as f:
            if subprocess.run([f"{o['bin']}/macro-gen", kind,
                               str(o["sz"][n])], stdout=f).returncode:
                return f"macro-gen {kind} failed"


def versions():
    """The programs' versions, by workload, as macro.json has them."""
    def v(name, *args):
        out = registry.capture([prog(name), *(args or ["--version"])])
        return ((out or "").strip().splitlines() or [""])[0]
    r = v("redis-server").split()
    return dict(compile=f"{v('gcc')}; {v('make')}",
                sqlite="sqlite3 " + " ".join(v("sqlite3").split()[:2]),
                python=v("python3"), git=v("git"),
                redis=f"{' '.join(r[:3] + r[4:5])}; {v('redis-benchmark')}",
                perl=v("perl", "-e", 'print "perl $^V\\n"'))


def counters(path, design):
    """The AK_MALLOC_STATS lines of a run's processes summed (counts), and
    each byte field as its largest in one process and its sum; with the
    count of lines that are not the library's for this design."""
    procs, bad = [], 0
    for line in text(path).splitlines():
        try:
            v = json.loads(line)
            ok = v["design"] == design and all(
                isinstance(v[k], int) for k in ["pid", *COUNTS, *BYTES])
        except (ValueError, KeyError, TypeError):
            ok = False
        procs += [v] if ok else []
        bad += not ok
    c = {"processes": len(procs)}
    c.update((k, sum(p[k] for p in procs)) for k in COUNTS)
    for k in BYTES:
        c[f"{k}_max"] = max([p[k] for p in procs], default=0)
        c[f"{k}_sum"] = sum(p[k] for p in procs)
    return bad, c


def macro_run(o, a, stem, timeout, cmd, wl=None, more=()):
    """bench/macro/macro-run: cmd under allocator a, its output in
    stem.out and stem.err: (exit status, its metrics or None)."""
    wl = wl or {}
    args = [f"{o['bin']}/macro-run", "-o", f"{stem}.out", "-e",
            f"{stem}.err", "-t", str(timeout)]
    args += ["-C", wl["dir"], "-i", wl["stdin"]] if wl else []
    args += [x for k, v in [*wl.get("env", {}).items(), *a["env"].items()]
             for x in ("-v", f"{k}={v}")]
    args += ["-p", a["preload"]] if a["preload"] else []
    with open(f"{os.path.dirname(stem)}/macro-run.err", "w") as e, \
            subprocess.Popen([*args, *more, "--", *cmd], text=True,
                             stdout=subprocess.PIPE, stderr=e,
                             env=o["env"]) as p:
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


def binding(o, a, work, cmd, fns, want, wl=None):
    """The library malloc binds to under allocator a, as cmd says
    (macro-probe, or redis-work.sh --bound for redis-server), and why fns
    do not all bind to want ("" where they do, or want is None)."""
    rc, _ = macro_run(o, a, f"{work}/probe", 60, cmd, wl)
    got = dict(ln.split()[:2] for ln in text(f"{work}/probe.out")
               .splitlines() if len(ln.split()) > 1)
    bad = [f for f in fns if want and os.path.realpath(got.get(f, "")) !=
           os.path.realpath(want)]
    libs = " ".join(sorted({got.get(f, "nothing") for f in bad}))
    return got.get("malloc", "unknown"), (
        f"{cmd[-1]} failed under it: " + " ".join(text(
            f"{work}/probe.err").splitlines()[-3:]) if rc else
        f"{', '.join(bad)} bind to {libs}, not to {want}" if bad else "")


def allocators(o, als, work, con):
    """Each allocator probed (the loader only warns when a preload fails,
    and the program then runs on glibc): macro.json's allocators, and
    those that run."""
    doc, ran = [], {}
    for a, al in als.items():
        lib = None
        if not al["why"]:
            lib, al["why"] = binding(o, al, work, [f"{o['bin']}/macro-probe"],
                                     ("malloc", "free"), al["preload"])
        if al["why"] and a in (o.get("allocators") or "").split(","):
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


def table(wdocs, runs):
    """macro.txt: per workload the runs' means, elapsed against glibc's."""
    out = []
    for w in (w for w in wdocs if w.get("results")):
        out += [f"\n{w['name']} (mean of {runs})", "%-12s %10s %10s %10s "
                "%10s %12s %8s" % ("allocator", "user s", "system s",
                                   "elapsed s", "max RSS MB", "minor flt",
                                   "vs glibc")]
        base = 0	# glibc's, whose row comes first
        for r in w["results"]:
            m = {k: sum(x[k] for x in r["runs"]) / len(r["runs"]) for k in
                 ("user_s", "system_s", "elapsed_s", "minor_faults")}
            base = m["elapsed_s"] if r["allocator"] == "glibc" else base
            bad = sum(not x["ok"] for x in r["runs"])
            out.append("%-12s %10.3f %10.3f %10.3f %10.1f %12d %8s%s" % (
                r["allocator"], m["user_s"], m["system_s"], m["elapsed_s"],
                max(x["max_rss_kb"] for x in r["runs"]) / 1024,
                int(m["minor_faults"]), "%.3f" % (m["elapsed_s"] / base)
                if base > 0 else "-", f"  {bad} run(s) failed" if bad else ""))
    return "\n".join(out) + "\n"


def one_run(o, w, wl, al, work, bound, base):
    """A run of workload w under allocator al: its member, and output."""
    d, st = wl["dir"], f"{work}/stats"
    objs = o["objs"] if w == "compile" else []
    for x in ("obj", "repo", "server"):	# what the last run made
        shutil.rmtree(f"{d}/{x}", ignore_errors=True)
    for x in {os.path.dirname(x) for x in objs}:
        os.makedirs(f"{d}/{x}")
    if os.path.exists(st):
        os.unlink(st)
    design = al["kind"] == "design"
    rc, m = macro_run(o, al, f"{work}/run", o["sz"]["to"], wl["argv"], wl,
                      ["-v", f"AK_MALLOC_STATS={st}"] if design else [])
    if m is None:
        raise RunError(f"{text(f'{work}/macro-run.err').strip()}\nmacro-run "
                       f"failed (exit {rc}): stopped")
    with open(f"{work}/run.out", "ab+") as f:
        for x in sorted(objs) if rc == 0 else []:  # the compile's output
            if os.path.exists(f"{d}/{x}"):
                with open(f"{d}/{x}", "rb") as obj:
                    sha = hashlib.file_digest(obj, "sha256").hexdigest()
                f.write(f"{sha}  {x}\n".encode())
        f.seek(0)
        data = f.read()
    sha, note, doc = hashlib.sha256(data).hexdigest(), "", dict(m)
    if design:
        bad, doc["malloc_counters"] = counters(st, al["design"])
        if bad:
            note = (f"AK_MALLOC_STATS: {bad} line(s) not the library's for "
                    f"{al['name']}: the counters cannot be summed")
        elif not doc["malloc_counters"]["processes"]:
            note = ("no process wrote its counters (AK_MALLOC_STATS): the "
                    "preload did not serve the program")
    if rc:
        tail = "\n".join(text(f"{work}/run.err").splitlines()[-2:])[:300]
        why = (f"timed out after {o['sz']['to']} s" if m.get("timed_out")
               else f"killed by signal {m.get('signal')}"
               if m.get("exit_status") is None else "")
        note = (": ".join(filter(None, (why, tail))) or
                f"exit status {m['exit_status']}")
    else:
        note = bound or note or ("" if base in (None, sha) else
                                 "output differs from glibc's")
    doc.update(output_sha256=sha, output_bytes=len(data),
               output_matches_baseline=sha == (base or sha), ok=not note)
    return (dict(doc, note=note) if note else doc), data


def runs(o, top, w, work, ran, vers, con):
    """Workload w's runs, each through every allocator before the next:
    its macro.json member."""
    s, wl = o["sz"], workload(o, top, w, f"{work}/{w}")
    head = dict(name=w, kind=wl["kind"], description=wl["description"],
                inputs=wl["inputs"])
    tree = None if wl["why"] else prepare(o, top, w, f"{work}/{w}")
    why = wl["why"] or (tree if isinstance(tree, str) else "")
    if why:
        con.say(f"workload {w}: {why}: left out")
        con.cur["count"] -= s["runs"] * len(ran)
        return dict(head, status="skipped", reason=why)
    head.update(command=wl["command"], env=wl["env"], versions=vers.get(
        w, "built with the project's compiler and flags"),
        **({"tree": tree} if tree else {}))
    con.say(f"workload {w}: {wl['inputs']}")
    bound = {a: "" for a in ran}
    fns = ("malloc", "calloc", "realloc", "free")
    for a, al in ran.items() if w == "redis" else ():	# it links jemalloc
        why = binding(o, al, work, ["/bin/sh", f"{top}/bench/macro/"
                                    "redis-work.sh", "--bound"], fns,
                      al["preload"] or wl["env"]["AK_LIBC"],
                      dict(wl, dir=work, stdin="/dev/null"))[1]
        if why:
            bound[a] = f"redis-server's {why}: its runs would not measure {a}"
            con.say(f"redis under {a}: {bound[a]}")
    base, baseline, res = None, "", {a: [] for a in ran}
    for r in range(1, s["runs"] + 1):
        for a, al in ran.items():
            doc, data = one_run(o, w, wl, al, work, bound[a], base)
            if a == "glibc" and base is None:
                base = doc["output_sha256"]
                baseline = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "",
                                  data[:4096].decode(errors="replace")
                                  ).rstrip("\n")
            if not doc["ok"]:
                con.say(f"{w} under {a}, run {r}: failed: {doc['note']}")
            res[a].append(dict(run=r, **doc))
            con.step(con.cur["i"] + 1)
    return dict(head, status="ran", baseline_output=baseline,
                results=[dict(allocator=a, runs=v) for a, v in res.items()])


def run(o, top, con):
    """Every run into the set: (its folder, the runs that failed)."""
    if os.environ.get("AK_TEST_RUNNER"):
        err("natively only: the preloaded allocators and Debian's programs "
            "are this machine's, not AK_TEST_RUNNER's")
    for p in ("macro-run", "macro-probe", "macro-gen"):
        if not os.access(os.path.join(o["bin"], p), os.X_OK):
            raise RunError(f"{o['bin']}/{p} not built: run make in the build "
                           "tree (or name it with --builddir)")
    o["env"] = dict({k: v for k, v in os.environ.items() if k not in (
        "AK_PERCPU_MODE", "AK_MALLOC_DESIGN")}, LC_ALL="C")
    als = {a: allocator(o, a) for a in o["al"]}
    if registry.sanitized(os.path.join(o["bin"], "churn")):
        if o.get("allocators") and len(o["al"]) > 1:
            err(f"--allocators {o['al'][1]}: the synthetic workloads are "
                "built with AddressSanitizer, which no other malloc can be "
                "preloaded under")
        con.say("the synthetic workloads are built with AddressSanitizer: "
                "only glibc runs")
        als = {"glibc": als["glibc"]}
    work, out = tempfile.mkdtemp(prefix="ak-macro."), ""	# in TMPDIR
    try:
        adoc, ran = allocators(o, als, work, con)
        for w in o["wl"] if o.get("workloads") else []:
            why = workload(o, top, w, "")["why"]
            if why:
                err(f"--workloads {w}: {why}")
        bench = registry.Bench(os.path.join(o["builddir"], "bench",
                                            "atomkit-bench"))
        machine = o["machine"] or registry.machine_name(bench)
        out = o.get("out") or registry.set_dir(top, bench, machine)
        os.makedirs(out, exist_ok=True)
        if not os.path.isfile(f"{out}/machine.json"):
            schema.write_json(f"{out}/machine.json", registry.machine_doc(
                bench, top, machine, out, f"macro-{o['size']}", ["macro"]),
                "machine")
        started, s = registry.now(), o["sz"]
        con.say(f"writing {out}/macro.json ({o['size']}: {s['runs']} run(s) "
                f"of each workload under {' '.join(ran)})")
        total = s["runs"] * len(ran) * len(o["wl"])
        if o["alone"]:
            con.total = sum(r[3] for r in plan_rows(o["size"], o["jobs"],
                                                    top, o))
            con.begin(1, 1, "macro", total, con.total, "run")
        con.cur["count"] = total
        vers = versions()
        wdocs = [runs(o, top, w, work, ran, vers, con) for w in o["wl"]]
        failures = sum(not r["ok"] for w in wdocs
                       for x in w.get("results", []) for r in x["runs"])
        schema.write_json(f"{out}/macro.json", dict(
            ak_macro_schema=schema.MACRO_SCHEMAS[-1],
            ak_set=os.path.basename(out), ak_run_mode=o["size"],
            ak_run_started=started, ak_run_finished=registry.now(),
            ak_git_rev=registry.rev(top), ak_runs=s["runs"], ak_jobs=o["jobs"],
            ak_threads=s["threads"], ak_timeout_s=s["to"], ak_baseline="glibc",
            ak_failures=failures, allocators=adoc, workloads=wdocs), "macro")
        with open(f"{out}/macro.txt.tmp", "w") as f:
            f.write(table(wdocs, s["runs"]))
        os.replace(f"{out}/macro.txt.tmp", f"{out}/macro.txt")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if out and os.path.exists(f"{out}/macro.txt.tmp"):
            os.unlink(f"{out}/macro.txt.tmp")
    return out, failures


def show(o, top):
    """--commands, --plan or --list: what would run."""
    if o["mode"] == "commands":
        for w in o["wl"]:
            print(w, W[w][0], workload(o, top, w, f"$WORK/{w}")["command"])
    elif o["mode"] == "plan":
        rows = plan_rows(o["size"], o["jobs"], top, o)
        print(plan.table(f"{WHO}: plan: {o['size']}, {o['sz']['runs']} "
                         "run(s) of each workload under each allocator "
                         f"installed, {o['sz']['threads']} threads",
                         rows, sum(r[3] for r in rows)))
    else:
        for w in WORKLOADS:
            print(f"workload {w}: "
                  f"{workload(o, top, w, '')['why'] or 'available'}")
        for a in ALLOCATORS + VARIANTS:
            print(f"allocator {a}: {allocator(o, a)['why'] or 'available'}")
    return 0


def main(argv=None, con=None):
    """The command; con: run-bench's console, which then owns the signals
    and the set's rendering."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    alone = con is None
    con = con or Console(WHO, 0)
    try:
        o = parse(sys.argv[1:] if argv is None else argv, top)
        o.update(alone=alone, con=con)
        if alone:
            registry.trap()
        if o["mode"] != "run":
            return show(o, top)
        out, failures = run(o, top, con)
        if alone:
            con.end(f"{failures} run(s) failed" if failures else
                    "every run ok")
            print(text(f"{out}/macro.txt"))
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
