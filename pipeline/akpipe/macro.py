"""The whole programs (macro.json): a table per workload, the designs'
counters, their targets, and their rows of `select`."""
from .schema import macro_version, is_int
from .setload import Fig, NAN, num, count, pct, rng, noise, div
from .table import Table, w, md, B, T, goal_row

FIELDS = ("user_s", "system_s", "elapsed_s", "max_rss_kb", "minor_faults")
USER, SYS, ELAPSED, RSS, MINOR = range(5)
# what the counter table shows of malloc_counters, and its scale
CFIELDS = (("processes", "procs", 1), ("refills", "refills", 1),
           ("slabs_made", "slabs made", 1),
           ("slabs_released", "slabs freed", 1),
           ("heap_misses", "heap misses", 1), ("madvise_calls", "madvise", 1),
           ("mapped_bytes_max", "mapped MiB", 1.0 / (1 << 20)),
           ("fallback_allocs", "fallback", 1))
# The targets of each workload, each over a system allocator: (what,
# figure, the slowest per-CPU design rather than the best, goal).
TARGETS = (("elapsed", ELAPSED, False, 1.0),
           ("per-CPU elapsed", ELAPSED, True, 1.1),
           ("peak RSS", RSS, False, 1.0), ("minor faults", MINOR, False, 1.2))
# The allocator benchmarks' shapes have elapsed goals of their own.
SHAPE_GOALS = {"remotefree": (1.1, 1.5), "mixloop-1t": (1.1, 1.5),
               "mixloop-2t": (1.1, 1.5)}


def ran(m, what):
    return [v for v in m[what] if v.get("status") == "ran"]


def result_of(wl, alloc):
    return next((r for r in wl["results"] if r["allocator"] == alloc), None)


class MStat:
    """One allocator on one workload: the means of the runs that were ok."""

    def __init__(self, wl, alloc):
        self.f = [Fig() for _ in FIELDS]
        self.runs = self.failed = 0
        self.note = None
        res = result_of(wl, alloc)
        vals = [[] for _ in FIELDS]
        for run in res["runs"] if res else []:
            self.runs += 1
            if run["ok"] is not True:
                self.failed += 1
                self.note = self.note or run.get("note") or "not ok"
                continue
            for k, x in enumerate(vals):
                x.append(run[FIELDS[k]] / (1024 if k == RSS else 1))
        for f, x in zip(self.f, vals):
            if x:
                f.v, f.min, f.max = sum(x) / len(x), min(x), max(x)
                f.n = f.reps = len(x)
        self.ok = self.f[ELAPSED].n > 0


def pick(m, wl, kind, but, k, highest, whole):
    """(name, MStat) of the allocator of kind with the lowest (highest)
    mean figure k on wl, among those with a run that was ok (whole: with
    no failed run); (None, None) if none."""
    who = out = None
    for a in ran(m, "allocators"):
        if a["kind"] != kind or a["name"] == but or "variant_of" in a:
            continue
        st = MStat(wl, a["name"])
        if not st.ok or (whole and st.failed):
            continue
        if not who or (st.f[k].v > out.f[k].v if highest
                       else st.f[k].v < out.f[k].v):
            who, out = a["name"], st
    return who, out


def designs_ran(m):
    return any(a["kind"] == "design" for a in ran(m, "allocators"))


def check_line(s):
    """`check`: the whole programs, inside the set's brackets."""
    r = "; whole programs: damaged" if s.macro_damaged else ""
    if s.macro:
        r += (f"; whole programs: {len(ran(s.macro, 'workloads'))} workloads"
              f", {len(ran(s.macro, 'allocators'))} allocators")
    return r


def describe(wl):
    w(f"What runs: {md('t', wl['description'])}. Inputs: "
      f"{md('t', wl['inputs'])}. Command: {md('c', wl['command'])}")
    for k, v in wl["env"].items():
        w(f", {md('c', k + '=' + (v if isinstance(v, str) else ''))}")
    w(f". Versions: {md('t', wl['versions'])}")
    tree = wl.get("tree")
    if tree is not None:
        src = tree.get("source")
        w(f". Tree: {md('t', src if isinstance(src, str) else '')}")
        if isinstance(tree.get("commit"), str):
            w(f" at {md('c', tree['commit'])} (" + T(
                "macro.fixed" if tree.get("fixed") is True else
                "macro.notfixed") + ")")
        obj = tree.get("objects")
        w(f", objects compiled per run: {obj if is_int(obj) else 0}")
    w(".\n\n")


def macro_table(s, m, wl, head):
    head(s, f"Whole program: {wl['name']} ({wl['kind']})")
    describe(wl)
    base = MStat(wl, m["ak_baseline"])
    t = Table("lrrrrrrl", ["allocator", "user s", "system s", "elapsed s",
                           "peak RSS (MiB)", "minor faults",
                           f"elapsed / {md('t', m['ak_baseline'])}",
                           "failed runs"])
    for a in ran(m, "allocators"):
        st = MStat(wl, a["name"])
        t.add(md("t", a["name"]), *(num(f.v) + rng(f) for f in st.f))
        t.add(num(div(st.f[ELAPSED].v, base.f[ELAPSED].v)) if st.ok else "–")
        t.add("no runs" if not result_of(wl, a["name"]) else
              f"{st.failed} of {st.runs} ({t.note(st.note)})" if st.failed
              else f"0 of {st.runs}")
    t.print()


def counters_of(wl, alloc):
    v, n = [0.0] * len(CFIELDS), 0
    for run in (result_of(wl, alloc) or {"runs": []})["runs"]:
        c = run.get("malloc_counters")
        if c is None or run["ok"] is not True:
            continue
        for k, (key, _, sc) in enumerate(CFIELDS):
            v[k] += sc * c[key]
        n += 1
    return [x / n for x in v] if n else None


def counter_table(m, wl):
    if macro_version(m) < 2 or not designs_ran(m):
        return
    t = Table("lr", ["design"] + [h for _, h, _ in CFIELDS])
    for a in ran(m, "allocators"):
        v = counters_of(wl, a["name"]) if a["kind"] == "design" else None
        if v:
            t.add(md("t", a["name"]), *(count(x) if sc == 1 else num(x)
                                        for x, (_, _, sc) in zip(v, CFIELDS)))
    if len(t.c) > t.ncol:
        w("\nThe counters of libatomkit-malloc.so, per run:\n\n")
        t.print()
    else:
        w(f"\n{T('macro.counters.none')}\n")


def left_out(m, what, name):
    why = dict.fromkeys(v["reason"] for v in m[what]
                        if v.get("status") == "skipped")
    parts = [", ".join(md("t", u["name"]) for u in m[what]
                       if u.get("status") == "skipped"
                       and u["reason"] == r) + f" ({md('t', r)})"
             for r in why]
    if parts:
        w(name + "; ".join(parts) + ".\n")


def goal(t, m, wl, what, k, worst, rname, ref, why, target):
    who, d = pick(m, wl, "design", "locked" if worst else None, k, worst,
                  True)
    if not who:
        why = ("no per-CPU design ran it without a failed run" if worst
               else "no design ran it without a failed run")
    elif not why and not ref > 0:
        why = "the reference's figure is 0"
    f = None
    if not why:
        x = num(d.f[k].v)
        f = (f"{who} {x} / {num(ref)} {rname}" if rname[:1] == "(" else
             f"{who} {x} / {rname} {num(ref)}")
    goal_row(t, f"{wl['name']}: {what}", f, NAN if why else div(d.f[k].v, ref),
             target, True, why)


def workload_goals(t, m, wl):
    base = m["ak_baseline"]
    for what, k, per_cpu, g in TARGETS:
        sys_, st = pick(m, wl, "system", None, k, False, True)
        why = None if sys_ else ("no system allocator ran it without a "
                                 "failed run")
        rname, ref = sys_ or "", st.f[k].v if sys_ else NAN
        if k == RSS and not why:
            gb = MStat(wl, base)
            if not gb.ok or gb.failed:
                why = f"{base} did not run it without a failed run"
            elif 1.2 * gb.f[RSS].v > ref:
                ref, rname = 1.2 * gb.f[RSS].v, f"(1.2 x {base})"
        if k == ELAPSED and wl["name"] in SHAPE_GOALS:
            g = SHAPE_GOALS[wl["name"]][per_cpu]
        goal(t, m, wl, what, k, per_cpu, rname, ref, why, g)


def goals_left_out(m):
    parts = []
    for wl in ran(m, "workloads"):
        bad = [f"{md('t', a['name'])} ({st.failed} of {st.runs})"
               for a in ran(m, "allocators")
               for st in [MStat(wl, a["name"])] if st.failed]
        if bad:
            parts.append(f"{md('t', wl['name'])}: " + ", ".join(bad))
    if parts:
        w(f"\n{T('macro.leftout')} " + "; ".join(parts) + ".\n")


def targets(s, m, head):
    if not ran(m, "workloads") or not designs_ran(m):
        return w(f"\n{T('macro.targets.none')}\n")
    head(s, T("macro.targets"))
    w(T("macro.targets.cells", b=md("t", m["ak_baseline"]), emu=" " + T(
        "emulated.ratios") if s.emulated else "") + "\n\n")
    t = Table("llrll", ["target", "figures", "ratio", "goal", "verdict"])
    for wl in ran(m, "workloads"):
        workload_goals(t, m, wl)
    t.print()
    goals_left_out(m)


def variants(s, m, head):
    """Each variant of a design (a knob changed) beside its design, per
    workload: what the knob buys in elapsed time and refills."""
    t = Table("lllrrrrr", ["workload", "design", "variant", "design s",
                           "variant s", "variant / design", "design refills",
                           "variant refills"])
    for wl in ran(m, "workloads"):
        for a in ran(m, "allocators"):
            d = a.get("variant_of")
            ds, vs = (MStat(wl, d), MStat(wl, a["name"])) if d else (0, 0)
            if not d or not ds.ok or not vs.ok:
                continue
            env = " ".join(f"{k}={v if isinstance(v, str) else ''}" for k, v
                           in a["env"].items() if k != "AK_MALLOC_DESIGN")
            dc, vc = counters_of(wl, d), counters_of(wl, a["name"])
            e, f = ds.f[ELAPSED], vs.f[ELAPSED]
            t.add(md("t", wl["name"]), md("t", d), md("c", env),
                  num(e.v) + rng(e), num(f.v) + rng(f), num(div(f.v, e.v)),
                  *((count(dc[1]), count(vc[1])) if dc and vc else
                    ("–", "–")))
    if len(t.c) > t.ncol:
        head(s, T("macro.variants"))
        w(T("macro.variants.cells") + "\n\n")
        t.print()


def tables(s, head):
    m = s.macro
    if not m:
        return w(f"\n{T('macro.damaged' if s.macro_damaged else 'macro.none')}"
                 "\n")
    b = md("t", m["ak_baseline"])
    w("\n" + T("macro.run", mode=md("t", m["ak_run_mode"]), runs=m["ak_runs"],
               jobs=m["ak_jobs"], threads=m["ak_threads"],
               rev=md("t", m["ak_git_rev"]),
               start=md("t", m["ak_run_started"]),
               end=md("t", m["ak_run_finished"]), failures=m["ak_failures"])
      + "\n" + T("macro.cells", b=b) + "\n")
    if macro_version(m) < 2:
        w(f"\n{T('macro.schema1')}\n")
    elif designs_ran(m):
        w(f"\n{T('macro.counters')}\n")
    for wl in ran(m, "workloads"):
        macro_table(s, m, wl, head)
        counter_table(m, wl)
    w("\n")
    left_out(m, "workloads", "Workloads left out: ")
    left_out(m, "allocators", "Allocators left out: ")
    targets(s, m, head)
    variants(s, m, head)


# ---- select: the fastest fastpath against the fastest program ----

def no_weighing(s, pair):
    if not s.macro:
        return ("its macro.json is damaged" if s.macro_damaged else
                "no whole programs in this set (no macro.json)")
    if not pair:
        return "no design's 64 B pair in this set"
    return None if designs_ran(s.macro) else "no design ran the whole programs"


def select(s):
    who, pair = s.best("pair", "size", 64)
    why = no_weighing(s, who)
    w("\n### Fastpath against whole programs\n\n")
    if why:
        return w("No weighing of the fastpath ranking against the whole "
                 f"programs: {md('t', why)}.\n")
    w(T("macro.select", b=B(), who=md("t", who), fig=num(pair.v),
        unit=md("t", s.unit)))
    n = lost = 0
    for i, wl in enumerate(ran(s.macro, "workloads")):
        fw, best = pick(s.macro, wl, "design", None, ELAPSED, False, False)
        w(f"{';' if i else ''} {md('t', wl['name'])} ")
        if not fw:
            w("none (no design ran it without failing)")
            continue
        n += 1
        w(f"{md('t', fw)} {num(best.f[ELAPSED].v)} s")
        if fw == who:
            continue
        lost += 1
        mine = MStat(wl, who)
        if not mine.ok:
            w(f" ({md('t', who)}: no run that succeeded)")
            continue
        a, b = best.f[ELAPSED], mine.f[ELAPSED]
        near = ", within the runs' min - max" if noise(a, b) == "noise" else ""
        w(f" ({md('t', who)} {num(b.v)} s, {pct(div(b.v, a.v) - 1)} slower"
          f"{near})")
    if not lost:
        w(f". {B()}{md('t', who)} is also the fastest program on every "
          f"workload ({n}).{B()}\n")
    else:
        w(f". {B()}The fastest fastpath is not the fastest program on {lost}"
          f" of {n} workloads.{B()}\n")


def select_row(t, sets):
    """Across sets: each set's fastest pair and how often each design was
    the fastest program; "yes" when a workload's fastest design differs."""
    seen, differs, with_ = {}, False, 0
    t.add("fastpath against whole programs")
    for s in sets:
        who = s.best("pair", "size", 64)[0]
        why = no_weighing(s, who)
        if s.emulated or why:
            t.add(md("t", "emulated" if s.emulated else why))
            continue
        with_ += 1
        wins = {}
        for wl in ran(s.macro, "workloads"):
            fw = pick(s.macro, wl, "design", None, ELAPSED, False, False)[0]
            if not fw:
                continue
            wins[fw] = wins.get(fw, 0) + 1
            if seen.setdefault(wl["name"], fw) != fw:
                differs = True
        t.add(md("t", f"pair: {who}; programs:" + ",".join(
            f" {k} {v}" for k, v in wins.items())))
    t.add("–" if with_ < 2 else "yes" if differs else "no")
