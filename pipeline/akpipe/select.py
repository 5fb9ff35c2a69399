"""`select`: per operation the candidates ranked, the winner against the
noise, and where the choice changes across sets; `index`: a row a set."""
import math
import os

from . import macro
from .setload import (load_set, exit_status, problem, num, pct, spread,
                      noise, path_comp, div)
from .table import Table, w, md, T, OUT

ARCH_PRIM = "suite=prim arch!=ref|generic metric=lat op="


def cands(spec, name):
    """The candidates of spec, each named by name(b)."""
    return lambda s: [(b, name(b)) for b in s.each(spec)]


def name_of(op):
    return lambda b: (f"{'generic ' if b.f('arch') == 'generic' else ''}"
                      f"{op or b.f('op')}/{b.f('variant')}" +
                      (f" [{b.f('ordering')}]" if b.f("ordering") else ""))


def local_order(s):
    """cmpxchg64's local ordering, or relaxed where the arch has none."""
    return ("local" if any(b.f("ordering").startswith("local") for b in
                           s.each(ARCH_PRIM + "cmpxchg64")) else "relaxed")


def c_local_full(s):
    """cmpxchg64 [local] (relaxed where the arch has none) and [full]."""
    return [(b, name_of("cmpxchg64")(b)) for b in s.each(
        ARCH_PRIM + "cmpxchg64") if b.skip or b.f("ordering").startswith(
            (local_order(s), "full"))]


# (operation, what is measured, the this_cpu op among them, others)
OPS = (("freelist pop+push (per-CPU op)", "op.freelist", "list_pop_push",
        None),
       ("freelist pop+push (in the allocator)", "op.designs", None,
        lambda s: [(s.slab("pair", d, 64), d) for d in (
            "slub-tid", "slub-local", "rseq-list")]),
       ("pair update of freelist+counter", "op.pair", "cmpxchg128",
        cands("suite=prim metric=lat arch!=ref op=cmpxchg128|"
              "try_cmpxchg128", name_of(None))),
       ("per-CPU counter add", "op.add", "add", cands(
           ARCH_PRIM + "fetch_add64", name_of("fetch_add64"))),
       ("local vs SMP-safe cmpxchg", "op.local", None, c_local_full),
       ("bulk refill", "op.bulk", None, cands(
           "suite=slab bulk=16 workload=bulk|bulk_fallback",
           lambda b: f"{b.f('design')} " + (
               "bulk" if b.f("workload") == "bulk" else "single calls"))),
       ("allocator fastpath", "op.fastpath", None, cands(
           "suite=slab workload=pair size=64", lambda b: b.f("design"))))


def rank(s, no, op):
    """The ranking of one operation; its verdict for the last table:
    (text, winner or None, within noise)."""
    name, what, pc, collect = op
    w(f"\n### {no}. {name}\n\n{T(what)}.\n\n")
    c = [(b, f"this_cpu {b.f('mode')}")
         for b in s.each(f"suite=percpu op={pc}")] if pc else []
    c = [(b, ch, s.unit_fig(b), b.fig("real_time"))
         for b, ch in c + (collect(s) if collect else []) if b]
    if not c:
        w("No candidate measured in this set.\n")
        return "no data", None, False
    # by the unit unless a candidate has a time but no figure in it
    k = 3 if not s.counter or any(not b.skip and math.isnan(u.v) and not
                                  math.isnan(t.v) for b, _, u, t in c) else 2
    # each candidate with whether it is out of the ranking (skipped, or
    # no figure to rank by), the ranked ones first, lowest first
    c = sorted(((b, ch, u, tm, bool(b.skip) or math.isnan((u, tm)[k - 2].v))
                for b, ch, u, tm in c), key=lambda x: (x[4], 0 if x[4] else
                                                       x[k].v))
    nr = sum(not x[4] for x in c)
    t = Table("rllrrl", ["rank", "candidate", "benchmark", s.unit, "ns",
                         "spread"])
    for i, (b, ch, u, tm, _) in enumerate(c):
        t.add(str(i + 1) if i < nr else "–", md("t", ch), md("c", b.name))
        t.add(*(md("s", b.skip), None, None) if b.skip else (
            num(u.v), num(tm.v), spread(u if k == 2 else tm)))
    t.print()
    w("\n")
    if not nr:
        w("No winner: every candidate was skipped.\n")
        return "all skipped", None, False
    first = c[0][1]
    if nr == 1:
        w(f"**{md('t', first)}**: the only candidate measured.\n")
        return f"{first} (only one measured)", first, False
    f1, f2, second = c[0][k], c[1][k], c[1][1]
    margin, v = pct(div(f2.v, f1.v) - 1), noise(f1, f2)
    if v == "noise":
        w(f"**{md('t', first)}** leads {md('t', second)} by {margin}, "
          "**within noise**: the two best differ by less than their "
          "spreads.\n")
        return f"{first} ~ {second} (within noise)", first, True
    w(f"**{md('t', first)}** wins by {margin} over {md('t', second)}" +
      (", beyond the spreads of both.\n" if v == "distinct" else
       " (1 run each: the noise cannot be judged).\n"))
    return (f"{first} (wins by {margin})" if v == "distinct" else
            f"{first} (by {margin}, 1 run: noise not judged)"), first, False


def select_set(s):
    w(f"\n## Selection: {md('t', s.machine_name())} "
      f"({md('t', s.mach('ak_arch'))}), {md('t', s.set_name())}\n\n")
    if s.emulated:
        w("**emulated: no ranking (correctness only)**\n")
        return [("emulated", None, False)] * len(OPS)
    if not s.bench:
        w("Whole programs only: no primitive measured to rank.\n")
        macro.select(s)
        return [("no data", None, False)] * len(OPS)
    w(T("select.figures", runs=s.runs(), unit=md(
        "t", s.mach("ak_counter_unit") or "ns"), noise=T("select.noise") if
        s.reps > 1 else "1 run each, so no spread to judge by") + "\n")
    vd = [rank(s, k + 1, op) for k, op in enumerate(OPS)]
    macro.select(s)
    return vd


def cmd_select(paths):
    w("# Primitive selection\n")
    sets = [s for s in map(load_set, paths) if s.usable]
    vds = [select_set(s) for s in sets]
    if len(sets) > 1:
        w(f"\n## Where the choice changes\n\n{T('select.changes')}\n\n")
        t = Table("l", ["operation"] + [
            f"{md('t', s.machine_name())} ({md('t', s.mach('ak_arch'))}), "
            f"{md('t', s.set_name())}" for s in sets] + ["choice changes"])
        for k, op in enumerate(OPS):
            v = [vd[k] for vd in vds]
            wins = [x for x in v if x[1]]
            differs = len({x[1] for x in wins}) > 1
            noisy = sum(x[2] for x in wins)
            t.add(op[0], *(md("t", x[0]) for x in v),
                  "–" if len(wins) < 2 else
                  f"yes (within noise on {noisy} of {len(wins)})"
                  if differs and noisy else "yes" if differs else "no")
        macro.select_row(t, sets)
        t.print()
    return exit_status(len(sets))


def walk(d):
    """The sets under d; hidden and linked folders are not entered."""
    found = []
    for top, dirs, _ in os.walk(d):
        rel = "" if top == d else os.path.relpath(top, d)
        if os.path.exists(f"{top}/machine.json") or rel.count("/") > 31:
            dirs.clear()
            found += [rel] * os.path.exists(f"{top}/machine.json")
        dirs[:] = [n for n in dirs if not n.startswith(".")
                   and not os.path.islink(f"{top}/{n}")]
    return sorted(found)


def set_cell(rel):
    href = "".join(f"%{ord(c):02X}" if c in " ()<>[]|%\"'" or ord(c) < 0x20
                   else c for c in rel)
    return rel if OUT.text else (f"[{md('t', path_comp(rel, 0))}]({href}/)"
                                 f" ([tables]({href}/tables.md))")


def fastest(s, op, order):
    """(figure, variant) of the fastest of an arch's op at an ordering."""
    return min(((f.v, b.f("variant")) for b in s.each(ARCH_PRIM + op)
                for f in [s.unit_fig(b)] if not b.skip and not math.isnan(
                    f.v) and b.f("ordering").startswith(order)),
               key=lambda x: x[0], default=(math.nan, None))


def who_of(who):
    return f" ({md('t', who)})" if who else ""


def index_row(t, s, rel):
    t.add(md("t", s.machine_name() if s.usable else path_comp(rel, 1)
             or "–"), md("t", s.mach("ak_arch") if s.usable else
                         path_comp(rel, 2) or "–"), set_cell(rel))
    if not s.usable:
        return t.add(*["–"] * 7, f"rejected: {md('t', s.why_short())}")
    loc, lv = "", fastest(s, "cmpxchg64", "local")
    if lv[1] is None and fastest(s, "cmpxchg64", "relaxed")[1] is not None:
        loc, lv = " (relaxed)", fastest(s, "cmpxchg64", "relaxed")
    c128 = fastest(s, "cmpxchg128", "full")
    t.add("yes" if s.emulated else "no", md("t", s.unit),
          f"{num(fastest(s, 'cmpxchg64', 'full')[0])} / {num(lv[0])}{loc}",
          num(c128[0]) + who_of(c128[1]),
          " / ".join(num(s.unit_fig(s.find(f"suite=percpu op=add mode={m}"))
                         .v) for m in ("rseq", "atomic", "thread")))
    for wl, arg, v in (("pair", "size", 64), ("bulk", "bulk", 16)):
        who, f = s.best(wl, arg, v)
        t.add(num(f.v) + who_of(who))
    p = s.problems
    notes = ("; emulated: figures mean nothing" * s.emulated +
             "; 1 run each" * (bool(s.bench) and s.reps <= 1) +
             "; whole programs only" * (not s.bench) + "; missing:" * bool(
                 s.missing) + "".join(" " + md("t", x) for x in s.missing) +
             (f"; {p} problem{'s' * (p > 1)}, the first: "
              f"{md('t', s.why_short())}" if p else ""))
    t.add(notes[2:] or None)


def cmd_index(d):
    d = d.rstrip("/") or "/"
    if not os.path.isdir(d):
        problem(f"{d}: not a folder")
        return 3
    found = walk(d)
    w(T("index", cmd=md("c", "atomkit-report index " + d)))
    if not found:
        w("No result sets here.\n")
        problem(f"{d}: no result sets (folders with machine.json) under it")
        return 3
    t = Table("lllllrrrrrl", [
        "machine", "arch", "set", "emulated", "unit",
        "cmpxchg64 full / local", "cmpxchg128 full",
        md("t", "this_cpu_add rseq / atomic / thread"),
        "slab pair 64 B (best design)", "bulk-16 per object (best design)",
        "notes"])
    sets = [load_set(f"{d}/{rel}" if rel else d) for rel in found]
    for rel, s in zip(found, sets):
        index_row(t, s, rel or ".")
    t.print()
    return exit_status(sum(s.usable for s in sets))
