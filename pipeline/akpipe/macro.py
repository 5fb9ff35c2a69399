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


def ok_runs(wl, alloc):
    return [r for r in (result_of(wl, alloc) or {"runs": []})["runs"]
            if r["ok"] is True]


class MStat:
    """One allocator on one workload: the means of the runs that were ok."""

    def __init__(self, wl, alloc):
        runs = (result_of(wl, alloc) or {"runs": []})["runs"]
        good = ok_runs(wl, alloc)
        self.runs, self.failed = len(runs), len(runs) - len(good)
        self.note = next((r.get("note") or "not ok" for r in runs
                          if r["ok"] is not True), None)
        self.f = [Fig() for _ in FIELDS]
        for k, f in enumerate(self.f if good else []):
            x = [r[FIELDS[k]] / (1024 if k == RSS else 1) for r in good]
            f.v, f.min, f.max = sum(x) / len(x), min(x), max(x)
            f.n = f.reps = len(x)
        self.ok = bool(good)


def pick(m, wl, kind, but, k, highest, whole):
    """(name, MStat) of the allocator of kind with the lowest (highest)
    mean figure k on wl, among those with a run that was ok (whole: with
    no failed run); (None, None) if none."""
    sts = [(a["name"], MStat(wl, a["name"])) for a in ran(m, "allocators")
           if a["kind"] == kind and a["name"] != but and "variant_of" not in a]
    sts = [(a, st) for a, st in sts if st.ok and not (whole and st.failed)]
    order = max if highest else min
    return order(sts, key=lambda x: x[1].f[k].v) if sts else (None, None)


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
    env = "".join(f", {md('c', k + '=' + (v if isinstance(v, str) else ''))}"
                  for k, v in wl["env"].items())
    w(f"What runs: {md('t', wl['description'])}. Inputs: "
      f"{md('t', wl['inputs'])}. Command: {md('c', wl['command'])}{env}"
      f". Versions: {md('t', wl['versions'])}")
    tree = wl.get("tree")
    if tree is not None:
        src, obj = tree.get("source"), tree.get("objects")
        w(f". Tree: {md('t', src if isinstance(src, str) else '')}")
        if isinstance(tree.get("commit"), str):
            w(f" at {md('c', tree['commit'])} (" + T(
                "macro.fixed" if tree.get("fixed") is True else
                "macro.notfixed") + ")")
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
    """The means of malloc_counters over the ok runs, scaled; or None."""
    cs = [r["malloc_counters"] for r in ok_runs(wl, alloc)
          if r.get("malloc_counters") is not None]
    return [sum(sc * c[key] for c in cs) / len(cs)
            for key, _, sc in CFIELDS] if cs else None


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
    skipped = [u for u in m[what] if u.get("status") == "skipped"]
    parts = [", ".join(md("t", u["name"]) for u in skipped
                       if u["reason"] == r) + f" ({md('t', r)})"
             for r in dict.fromkeys(u["reason"] for u in skipped)]
    if parts:
        w(name + "; ".join(parts) + ".\n")


def workload_goals(t, m, wl):
    """The rows of TARGETS for wl: the best (or slowest per-CPU) design
    over the best system allocator (peak RSS: or 1.2 x the baseline's)."""
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
        who, d = pick(m, wl, "design", "locked" if per_cpu else None, k,
                      per_cpu, True)
        if not who:
            why = (f"no {'per-CPU ' * per_cpu}design ran it without a "
                   "failed run")
        elif not why and not ref > 0:
            why = "the reference's figure is 0"
        figs = None if why else f"{who} {num(d.f[k].v)} / " + (
            f"{num(ref)} {rname}" if rname[:1] == "(" else
            f"{rname} {num(ref)}")
        goal_row(t, f"{wl['name']}: {what}", figs,
                 NAN if why else div(d.f[k].v, ref), g, True, why)


def targets(s, m, head):
    if not ran(m, "workloads") or not designs_ran(m):
        return w(f"\n{T('macro.targets.none')}\n")
    head(s, T("macro.targets"))
    w(T("macro.targets.cells", b=md("t", m["ak_baseline"]), emu=" " + T(
        "emulated.ratios") if s.emulated else "") + "\n\n")
    t = Table("llrll", ["target", "figures", "ratio", "goal", "verdict"])
    parts = []
    for wl in ran(m, "workloads"):
        workload_goals(t, m, wl)
        bad = [f"{md('t', a['name'])} ({st.failed} of {st.runs})"
               for a in ran(m, "allocators")
               for st in [MStat(wl, a["name"])] if st.failed]
        if bad:
            parts.append(f"{md('t', wl['name'])}: " + ", ".join(bad))
    t.print()
    if parts:
        w(f"\n{T('macro.leftout')} " + "; ".join(parts) + ".\n")


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
    w("\n" + T("macro.run", mode=md("t", m["ak_run_mode"]), runs=m["ak_runs"],
               jobs=m["ak_jobs"], threads=m["ak_threads"],
               rev=md("t", m["ak_git_rev"]),
               start=md("t", m["ak_run_started"]),
               end=md("t", m["ak_run_finished"]), failures=m["ak_failures"])
      + "\n" + T("macro.cells", b=md("t", m["ak_baseline"])) + "\n")
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
        a, b = best.f[ELAPSED], MStat(wl, who).f[ELAPSED]
        if not b.n:
            w(f" ({md('t', who)}: no run that succeeded)")
            continue
        near = ", within the runs' min - max" if noise(a, b) == "noise" else ""
        w(f" ({md('t', who)} {num(b.v)} s, {pct(div(b.v, a.v) - 1)} slower"
          f"{near})")
    w(f". {B()}{md('t', who)} is also the fastest program on every "
      f"workload ({n}).{B()}\n" if not lost else
      f". {B()}The fastest fastpath is not the fastest program on {lost}"
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
            if fw:
                wins[fw] = wins.get(fw, 0) + 1
                differs |= seen.setdefault(wl["name"], fw) != fw
        t.add(md("t", f"pair: {who}; programs:" + ",".join(
            f" {k} {v}" for k, v in wins.items())))
    t.add("–" if with_ < 2 else "yes" if differs else "no")
