"""`tables`: each set's header, then its tables (doc/report.md)."""
import math

from . import macro
from .setload import (NAN, Fig, fig, num, pct, count, spread, rng, prim_id,
                      div, row_num)
from .table import Table, w, md, B, T, goal_row

MALLOCS = ["malloc-glibc", "malloc-tcmalloc", "malloc-jemalloc",
           "malloc-mimalloc"]
SIZES = ("4096", "16384")       # the large seq sizes, against the mallocs
# The per-CPU pair each design's fastpath runs in the rseq modes, and in
# the others (doc/benchmarks.md, "Fastpath primitives"); of rows a|b, the
# first the set has (b: sets made before a).
FASTPATHS = {"array": ("array_pop_push_section", "array_push_pop"),
             "sheaf": ("array_ptr_pop_push_section", None),
             "rseq-list": ("list_pop_push_owned_section|"
                           "list_pop_push_section", "list_pop_push"),
             "slub-tid": ("tid_pop_push", "tid_pop_push"),
             "slub-local": ("local_pop_push", "local_pop_push")}
# this_cpu ops in the suite's order; any other with a bare-section row
# (<op>_section) is shown after them
PERCPU_OPS = ("read", "write", "add", "add_return", "xchg", "cmpxchg",
              "try_cmpxchg", "cmpxchg128", "list_pop_push", "array_push_pop",
              "array_ptr_pop_push")
RSEQ_MODES, API_GOAL = ("rseq", "rseq-mm_cid"), 1.05
FIXED = ", built for it alone"     # a slab/pair_fixed row's design


class Grid:
    """Benchmarks by row and column, both in order of first appearance."""

    def __init__(self, bs=(), row=None, col=None):
        self.rows, self.cols, self.cell = [], [], {}
        for b in bs:
            self.add(row(b), col(b), b)

    def add(self, r, c, b):
        self.rows += [r] * (r not in self.rows)
        self.cols += [c] * (c not in self.cols)
        self.cell.setdefault((r, c), b)

    def get(self, r, c):
        return self.cell.get((r, c))


def uniq(xs):
    return list(dict.fromkeys(xs))


def nan(x):
    return math.isnan(x)


def head(s, what, unit=None, cells=None, sprd=None, cite=None):
    """The title; under it, where cells is given, what the cells hold."""
    w(f"\n### {md('t', what)}: {md('t', s.machine_name())}\n\n")
    if not cells:
        return
    if not unit and s.counter:
        unit = (f"{md('t', s.mach('ak_counter_unit') or s.counter)} "
                f"({md('c', s.counter)})")
    w(f"Unit: {unit or 'ns'}. Cells: {cells}, {s.runs()}. Spread: "
      f"{sprd if s.reps > 1 else 'none (1 run)'}."
      f"{' The shape of ' + T(cite) + '.' if cite else ''}\n\n")


def none(msg):
    w(f"\n{T(msg)}\n")


def start(s, rows, key, *title):
    """The title (head's arguments) where there are rows, else the line
    saying why there is no table (text key no.<key>)."""
    if rows:
        head(s, *title)
    else:
        none("no." + key)
    return bool(rows)


def cell(t, b, text):
    """text where b ran, else "–" or "n/a (k)" (Table.skip)."""
    t.add(text) if b and not b.skip else t.skip(b)


def fig_cell(t, s, b, kind, arg=""):
    """A matrix table's cell: what it shows of benchmark b."""
    if not b or b.skip:
        return t.skip(b)
    u = s.unit_fig(b, arg)
    if kind == "unit":
        t.add(num(u.v) + rng(u))
    elif kind == "ops":
        t.add(f"{num(b.fig('ops').v / 1e6)} ({num(b.fig('cv').v)})")
    elif kind == "af":
        t.add(f"{num(s.unit_fig(b, 'alloc_').v)} / "
              f"{num(s.unit_fig(b, 'free_').v)}")
    elif kind == "af_ns":
        t.add(f"{num(b.fig('alloc_ns').v)} / {num(b.fig('free_ns').v)}")
    elif kind == "field":
        t.add(num(b.fig(arg).v))
    elif kind == "pair":
        t.add(f"{num(u.v)}{rng(u)} / {num(b.fig('real_time').v)} ns")
    else:
        timer_cell(t, s, b)


def grid_tab(s, g, first, kind, cell, arg="", cols=None):
    """A row per row of g, a column per column, fig_cell's cells."""
    cols = g.cols if cols is None else cols
    t = Table("lr", [first] + [md("t", c) for c in cols])
    for r in g.rows if cols else []:
        t.add(md(kind, r) if kind else r)
        for c in cols:
            fig_cell(t, s, g.get(r, c), cell, arg)
    return t


def header(s, level):
    m = s.mach
    w(f"{'#' * level} {md('t', s.machine_name())}: {md('t', s.set_name())}"
      "\n\n")
    if s.emulated:
        w(f"**emulated: correctness only, figures mean nothing** "
          f"({md('t', m('ak_emulated'))})\n\n")
    miss = "".join(" " + md("t", x) for x in s.missing)
    t = Table("ll", [None, None])
    for k, v in (
            ("machine", s.machine_name()), ("arch", m("ak_arch")),
            ("CPU", f"{m('ak_cpu_model')} ({m('ak_cores')} cores, "
             f"{m('ak_pus')} PUs)"), ("topology", m("ak_topology")),
            ("kernel", m("ak_kernel")), ("hypervisor", m("ak_hypervisor")),
            ("emulated", m("ak_emulated")),
            ("frequency", f"governor {m('ak_governor')}; boost "
             f"{m('ak_boost')}; SMT {m('ak_smt')}"),
            ("compiler", f"{m('ak_compiler')}; CFLAGS {m('ak_cflags')}; "
             f"configure {m('ak_configure')}"),
            ("counter", f"{m('ak_counter_unit')} "
             f"({s.counter or 'none: ns only'})"),
            ("per-CPU mode", m("ak_percpu_mode")),
            ("CPU features", f"cx16 {m('ak_cx16')}; lse {m('ak_lse')}; "
             f"isa207 {m('ak_isa207')}"),
            ("run", f"{m('ak_run_mode') or 'unknown'} ({s.runs()}), "
             f"started {m('ak_run_started')}"),
            ("date-rev", f"{s.set_name()} (rev {m('ak_git_rev')})"),
            ("folder", s.path)):
        t.add(k, md("t", v) if v else "–")
    t.add("suites", ", ".join(md("t", x) for x in s.suites) + (
        f"; {B()}missing:{miss}{B()} (interrupted run, or allocator not "
        "installed)" if s.missing else ""))
    if s.problems:
        t.add("problems", f"{s.problems} reported on stderr; the first: "
              f"{md('t', s.why_short())}")
    t.print()


def prim_grid(s, suite, col):
    return Grid(s.each(f"suite={suite}"), prim_id, lambda b: b.f(col))


def t_prim(s):
    g = prim_grid(s, "prim", "metric")
    if not start(s, g.rows, "prim", T("prim"), None, T("prim.cells"),
                 T("spread.runs")):
        return
    t = Table("lllrrlrrl", ["primitive", "instruction", "ordering"] + [
        f"{m} {x}" for m in ("lat", "tput") for x in (
            f"({s.unit})", "(ns)", "spread")])
    for r in g.rows:
        bs = lat, tput = g.get(r, "lat"), g.get(r, "tput")
        idb = lat if lat and lat.f("insn") else tput
        t.add(md("c", r))
        if all(not b or b.skip for b in bs):
            t.add(md("s", (lat or tput).skip), None, *["–"] * 6)
            continue
        t.add(md("c", idb and idb.f("insn")),
              md("t", idb and idb.f("ordering")))
        for b in bs:
            if not b or b.skip:
                t.skip(b)
                t.add("–", "–")
                continue
            u, f = s.unit_fig(b), b.fig("real_time")
            t.add(num(u.v), num(f.v), spread(f if nan(u.v) else u))
    t.print()


def t_percpu(s):
    g = Grid(s.each("suite=percpu"), lambda b: b.f("op"),
             lambda b: b.f("mode"))
    if start(s, g.rows, "percpu", T("percpu"), None, "per operation",
             T("spread.after")):
        grid_tab(s, g, f"op ({s.unit})", "c", "unit").print()


def t_cas(s):
    g = prim_grid(s, "cas", "outcome")
    if not start(s, g.rows, "cas", T("cas"), None, "per operation",
                 T("spread.runs")):
        return
    u = s.unit
    t = Table("llrrrrrll", ["primitive", "instruction", f"success ({u})",
                            f"failure ({u})", "failure / success",
                            "success (ns)", "failure (ns)",
                            "success spread", "failure spread"])
    for r in g.rows:
        ok, ko = g.get(r, "success"), g.get(r, "failure")
        us, uf = s.unit_fig(ok), s.unit_fig(ko)
        t.add(md("c", r), md("c", (ok or ko).f("insn")))
        cell(t, ok, num(us.v))
        cell(t, ko, num(uf.v))
        t.add(num(div(uf.v, us.v)), num(fig(ok, "real_time").v),
              num(fig(ko, "real_time").v), spread(us), spread(uf))
    t.print()


def t_contention(s):
    places = uniq(b.f("placement") for b in
                  s.each("suite=contention placement!="))
    if not places:
        return none("no.contention")
    for p in places:
        g = Grid(s.each(f"suite=contention placement={p}"), prim_id,
                 lambda b: f"{b.threads} thr")
        g.cols.sort(key=lambda c: float(c.split()[0]))
        head(s, T("contention", p=p))
        w(T("contention.caption", runs=s.runs()) + "\n\n")
        grid_tab(s, g, "primitive", "c", "ops").print()


def t_cacheline(s):
    g, ref = Grid(), Grid()
    for b in s.each("suite=cacheline"):
        pl = b.f("placement")
        if pl:
            g.add(f"{b.f('state')}/{b.f('op')}", f"placement: {pl}", b)
        else:
            ref.add(b.f("state"), b.f("op"), b)
    if not start(s, g.rows or ref.rows, "cacheline", T("cacheline"), None,
                 T("timer" if has_timer(s) else "timer.raw"),
                 T("spread.after")):
        return
    why = {}
    for (_, c), b in g.cell.items():
        why.setdefault(c, []).append(b.skip)
    live = [c for c in g.cols if not all(why[c])]
    t = grid_tab(s, g, f"state/op ({s.unit})", "c", "timer", cols=live)
    t.keep_notes = True
    if live:
        t.print()
    elif g.rows:
        w(T("cacheline.skipped") + "\n")
    nd = [f"{md('t', c[11:])} ({md('t', why[c][0])})" for c in g.cols
          if c not in live]
    if nd:
        w("\nPlacement classes not on this machine: " + "; ".join(nd)
          + ".\n")
    t.print_notes()
    if ref.rows:
        w(f"\n{T('cacheline.ref', unit=s.unit)}\n\n")
        grid_tab(s, ref, "level", None, "timer").print()


def t_harness(s):
    bs = list(s.each("suite=harness|xcheck"))
    if not bs:
        return
    head(s, T("harness"), None, "per iteration", T("spread.runs"))
    t = Table("lrrll", ["benchmark", s.unit, "ns", "spread", "what"])
    for b in bs:
        u, f = s.unit_fig(b), b.fig
        t.add(md("c", b.name))
        if b.skip:
            t.skip(b)
            t.add("–", "–", None)
        elif b.f("suite") == "xcheck":
            t.add("–", "–", "–", "ratio nolock/lock "
                  f"{num(f('ratio_suite').v)} (suite) vs "
                  f"{num(f('ratio_asm').v)} (asm); {md('t', b.label)}")
        else:
            t.add(num(u.v), num(f("real_time").v), spread(u),
                  md("t", b.label))
    t.print()


# ---- slab ----

def pick_place(s, wl):
    """The placement a workload's table shows: spread, else the first."""
    ps = [b.f("placement") for b in s.each(f"suite=slab workload={wl}")]
    return "spread" if "spread" in ps else ps[0] if ps else ""


def impl_rank(i):
    if not i.startswith("malloc-"):
        return 0
    return MALLOCS.index(i) + 1 if i in MALLOCS else len(MALLOCS) + 1


def slab_grid(s, wl, row, threads=0, size=0, g=None):
    """A row per value of field row, a column per impl (designs first)."""
    g = g or Grid()
    for b in s.each(f"suite=slab workload={wl} "
                    f"placement={pick_place(s, wl)}"):
        t = max(b.threads, 1)
        if threads in (0, t) and (size <= 0 or b.n("size") == size):
            g.add(str(t if row == "threads" else b.n(row)), b.f("design"),
                  b)
    g.rows.sort(key=float)
    g.cols.sort(key=impl_rank)
    return g


def warm(s, cells):
    hot = any(b.f("workload") == "seq_cold" or
              not nan(b.fig("new_slabs").v)
              for b in s.each("suite=slab"))
    return T("warm" if hot else "warm.unknown") + ", " + cells


def t_slab_seq(s):
    g = slab_grid(s, "seq", "size")
    if not start(s, g.rows, "seq", T("seq"), None, warm(s, "per object"),
                 T("spread.after"), "seq.cite"):
        return
    t = Table("lr", [s.unit] + [md("t", c) for c in g.cols])
    for r in g.rows:
        for ph in ("alloc", "free"):
            t.add(f"{ph}({r})")
            for c in g.cols:
                fig_cell(t, s, g.get(r, c), "unit", ph + "_")
    t.print()
    head(s, T("seq.ns"), "ns", warm(s, '"alloc / free" per object'),
         "see the slab/seq table above", "seq.ns.cite")
    grid_tab(s, g, "size (B)", None, "af_ns").print()


def t_slab_conc(s):
    alls = slab_grid(s, "conc", "threads")
    if not alls.rows:
        none("no.conc")
    else:
        fits = [int(x) for x in alls.rows if s.pus <= 0 or int(x) <= s.pus]
        t = max(fits, default=0) or int(alls.rows[0])
        g, pl = slab_grid(s, "conc", "size", t), pick_place(s, "conc")
        head(s, T("conc", t=t, pus=s.pus, pl=pl and ", placement " + pl),
             None, warm(s, '"alloc / free" per object per thread'),
             "not shown (see compare)", "conc.cite")
        grid_tab(s, g, "size (B)", None, "af").print()
        size = 64 if "64" in g.rows else int(g.rows[0]) if g.rows else -1
        tp = slab_grid(s, "conc", "threads", 0, size)
        head(s, T("conc.tput", size=size), T("conc.tput.unit"),
             warm(s, "per thread count"), "not shown")
        grid_tab(s, tp, "threads", None, "field", "Mobj_s").print()
    g = slab_grid(s, "remote", "size")
    if start(s, g.rows, "remote", T("remote", t=max(
            [b.threads for b in g.cell.values()], default=0)), None,
            warm(s, '"alloc / free" per object per thread'),
            "not shown (see compare)"):
        grid_tab(s, g, "size (B)", None, "af").print()


def t_slab_bulk(s, wl="bulk", col=lambda b: b.f("design"), key="bulk"):
    """Bulk calls against single ones per bulk size, a column per col;
    the per-CPU partial variant also says where the objects came from."""
    gb, gf, bulk = Grid(), Grid(), wl == "bulk"
    for g, x in ((gb, wl), (gf, wl + "_fallback")):
        pl = pick_place(s, x if bulk else wl)
        for b in s.each(f"suite=slab workload={x} placement={pl}"):
            g.add(str(b.n("bulk")), col(b), b)
    gb.cols, gb.rows = uniq(gb.cols + gf.cols), uniq(gb.rows + gf.rows)
    gb.rows.sort(key=float)
    if bulk:
        gb.cols.sort(key=impl_rank)
    if not start(s, gb.rows, key, T(key), "ns", warm(s, T(
            "bulk.cells") if bulk else '"bulk / single calls" ns per '
            "object"), "not shown (see compare)", "bulk.cite" * bulk):
        return
    t = Table("lr", ["bulk N"] + [md("t", c) for c in gb.cols])
    for r in gb.rows:
        t.add(r)
        for c in gb.cols:
            x = [("n/a" + f" ({t.note(b.skip)})" * bulk) if b and b.skip
                 else num(fig(b, "real_time").v)
                 for b in (gb.get(r, c), gf.get(r, c))]
            fc = fig(gb.get(r, c), "from_cpu")
            t.add(" / ".join(x) + ("" if nan(fc.v) or not bulk else
                                   f" ({pct(fc.v)})"))
    t.print()
    if not bulk:
        head(s, T(key + ".from"), "share of the objects of the bulk calls",
             T(key + ".from.cells"), "none (counts)")
        t = Table("lr", ["bulk N"] + [md("t", c) for c in gb.cols])
        for r in gb.rows:
            t.add(r, *(" / ".join(pct(fig(gb.get(r, c), k).v) for k in (
                "from_cpu", "from_cpu_partial", "from_node", "from_new"))
                for c in gb.cols))
        t.print()


def t_slab_cpu_partial(s):
    t_slab_bulk(s, "bulk_cpu_partial", lambda b: (
        f"{b.f('design')}, cpu_partial {b.f('cpu_partial')}"), "cpu_partial")


def t_slab_beside(s):
    g = slab_grid(s, "pair", "size", 0, 64)
    slab_grid(s, "seq", "size", 0, 64, g)
    if not start(s, g.rows, "beside", T("beside"), None, warm(
            s, T("beside.cells")), "min - max of the pair figure"):
        return
    gp = s.unit_fig(s.slab("pair", "malloc-glibc", 64))
    gs = s.unit_fig(s.slab("seq", "malloc-glibc", 64))
    u = s.unit
    t = Table("lrrlrrrr", ["impl", f"pair ({u})", "pair (ns)", "pair spread",
                           "pair / glibc", f"seq alloc+free ({u})",
                           "seq (ns)", "seq / glibc"])
    for c in g.cols:
        p, q = s.slab("pair", c, 64), s.slab("seq", c, 64)
        pu, qu = s.unit_fig(p), s.unit_fig(q)
        t.add(md("t", c), "skipped" if p and p.skip else num(pu.v),
              num(fig(p, "real_time").v), spread(pu), num(div(pu.v, gp.v)),
              "skipped" if q and q.skip else num(qu.v),
              num(fig(q, "real_time").v), num(div(qu.v, gs.v)))
    t.print()


def t_pair(s):
    g = slab_grid(s, "pair", "size")
    if start(s, g.rows, "pair", T("pair"), None, warm(s, "per pair, then ns"),
             "(min - max) of the unit figure", "pair.cite"):
        grid_tab(s, g, "size (B)", None, "pair").print()


def render(s):
    header(s, 2)
    for table in (t_prim, t_percpu, percpu_decomp, t_cas, t_contention,
                  t_cacheline, t_harness):
        table(s)
    if not s.find("suite=slab"):
        none("no.slab")
    else:
        for table in (t_slab_seq, seq_gap, cold, t_pair, decomp, t_slab_conc,
                      t_slab_bulk, t_slab_cpu_partial, t_slab_beside,
                      targets):
            table(s)
    macro.tables(s, head)


# ---- cache lines less the timer ----

def has_timer(s):
    return any(not nan(b.fig("timer_ticks").v)
               for b in s.each("suite=cacheline"))


def timer_cell(t, s, b):
    """The raw figure less timer_ticks; the min - max of each run's."""
    raw, tim = s.unit_fig(b), b.fig("timer_ticks")
    if nan(tim.v):
        n = f" ({t.note(T('timer.none'))})" if has_timer(s) else ""
        return t.add(num(raw.v) + rng(raw) + n)
    c = Fig(raw.v - tim.v, raw.reps)
    xs = [x for x in (row_num(r, s.counter) - row_num(r, "timer_ticks")
                      for r in b.iter) if not nan(x)]
    if xs:
        c.min, c.max, c.n = min(xs), max(xs), len(xs)
    st = b.fig("timer_steady")
    note = ("timer.unsteady" if st.v < 1 or (st.n > 0 and st.min < 1) else
            "timer.below" if c.v < 0 else None)
    t.add(num(c.v) + rng(c) + (f" ({t.note(T(note))})" if note else ""))


# ---- seq at the large sizes against the best system allocator ----

def impls_of(s, wl, sizes, designs=True, mallocs=False):
    return uniq(b.f("design") for z in sizes for b in s.each(
        f"suite=slab workload={wl} size={z}") if (
            mallocs if b.f("design").startswith("malloc-") else designs))


def why_none(s, b, prefix, what):
    """(figure of b in the unit, why there is none or None)."""
    f = s.unit_fig(b, prefix)
    return f, None if not nan(f.v) else (
        f"no {what} in this set" if not b else f"{what} {b.skip}" if b.skip
        else f"{what} has no {prefix}{s.counter or '(no counter)'} figure")


def fig_or_why(t, s, b, what):
    f, why = why_none(s, b, "", what)
    t.add(num(f.v) + rng(f) if not why else "–" if not b
          else f"n/a ({t.note(why)})")
    return f


def gap_reason(s, design, size, phase, d, who, best):
    """Why a design's seq figure may be over 2x the best malloc's."""
    b, c = s.slab("seq", design, size), s.slab("seq_cold", design, size)
    ns = fig(b, "new_slabs")
    r = (f"{design} {phase[:-1]}({size}) {num(d.v)} over {who}'s "
         f"{num(best.v)}: " + (
             T("gap.nonew") if nan(ns.v) else f"it mapped "
             f"{count(ns.v)} slabs while timed (new_slabs): not a steady "
             "state" if ns.v > 0 else "it mapped no slab while timed "
             "(new_slabs 0)"))
    cold, sl = s.unit_fig(c, phase), fig(c, "slabs")
    if not nan(cold.v):
        r += (f"; its cold start (slab/seq_cold) is {num(cold.v)}" + (
            "" if nan(sl.v) else f" with {count(sl.v)} slabs mapped "
            "per run") + f", so warm is {pct(div(d.v, cold.v))} of cold" + (
                ": no cheaper than a cold start" if d.v >= cold.v else
                ": close to a cold start" if d.v >= cold.v / 2 else
                ": the gap is not the first touch"))
    pw, pm = s.best("pair", "size", size, "", True)
    pd = s.unit_fig(s.slab("pair", design, size))
    if not nan(pd.v) and pw:
        r += (f"; its alloc+free pair at {size} B is {num(pd.v)}, "
              f"{num(div(pd.v, pm.v))}x {pw}'s {num(pm.v)}")
    return r + (f"; its fastest run is {num(div(d.min, best.max))}x the "
                "best's slowest" if d.n > 1 and best.n > 1 else
                "; 1 run each: the noise cannot be judged")


def seq_gap(s):
    designs = impls_of(s, "seq", SIZES)
    if not start(s, designs and s.best("seq", "size", 4096, "alloc_",
                                       True)[0], "gap", T("gap"), None,
                 warm(s, T("gap.cells")), "see the slab/seq table"):
        return
    t = Table("llr", [f"slab/seq ({s.unit})", "best system allocator"] +
              [f"{md('t', d)} / best" for d in designs])
    over = n = 0
    for size in SIZES:
        for ph in ("alloc_", "free_"):
            who, best = s.best("seq", "size", size, ph, True)
            t.add(f"{ph[:-1]}({size})", f"{md('t', who)} {num(best.v)}"
                  if who else "–")
            for d in designs if who else []:
                b = s.slab("seq", d, size)
                f = s.unit_fig(b, ph)
                if nan(f.v):
                    t.skip(b if b and b.skip else None)
                    continue
                n, x = n + 1, f"{num(div(f.v, best.v))}x"
                if f.v > 2 * best.v:
                    over += 1
                    why = gap_reason(s, d, size, ph, f, who, best)
                    x += f" ({t.note(why)})"
                t.add(x)
            t.add(*["–"] * len(designs) * (not who))
    t.print()
    if n:
        w("\n" + T("gap.over" if over else "gap.within", over=over, n=n)
          + "\n")


def cold(s):
    sizes = sorted(uniq(str(b.n("size")) for b in
                        s.each("suite=slab workload=seq_cold")), key=float)
    if not start(s, sizes, "cold", T("cold"), None, T("cold.cells"),
                 "not shown (see compare)"):
        return
    impls = impls_of(s, "seq_cold", sizes, True, True)
    t = Table("lr", ["size (B)"] + [md("t", i) for i in impls])
    for z in sizes:
        t.add(z)
        for i in impls:
            b = s.slab("seq_cold", i, z)
            a, sl = s.unit_fig(b, "alloc_"), fig(b, "slabs")
            if nan(a.v):
                t.skip(b if b and b.skip else None)
            else:
                t.add(f"{num(a.v)} / {num(s.unit_fig(b, 'free_').v)}" + (
                    "" if nan(sl.v) else f" ({count(sl.v)} slabs)"))
    t.print()


# ---- what a design costs beyond its fastpath primitive ----

def mode_of(b):
    """"array on rseq (...)": the per-CPU mode its benchmark ran in."""
    i = b.label.find(" on ") if b else -1
    return (b.label[i + 4:].split(" ")[0].split("(")[0] or None) \
        if i >= 0 else None


def fastpath_of(s, design, mode):
    """(what, its benchmark) under design's fastpath; (why not, False)."""
    if design == "locked":
        return ("prim/ref/mutex_pop_push/lat",
                s.find("suite=prim arch=ref op=mutex_pop_push metric=lat"))
    f = FASTPATHS.get(design)
    if not f or not mode:
        return (T("decomp.nomode") if f else "no fastpath primitive is "
                f"known for {design}"), False
    rseq = mode.startswith("rseq")
    b = rseq and s.slab("sections", design, 64)   # beside the pairs
    if b:
        return b.name, b
    if not rseq and not f[1]:
        return T("decomp.sheaf", mode=mode, design=design), False
    ops = (f[0] if rseq else f[1]).split("|")
    op = next((o for o in ops if s.find(f"suite=percpu op={o} mode={mode}")),
              ops[-1])
    return f"percpu/{op}/{mode}", s.find(f"suite=percpu op={op} mode={mode}")


def decomp(s):
    impls = impls_of(s, "pair", [64], True, True)
    if not impls:
        return none("no.decomp")
    head(s, T("decomp"), None, warm(s, T("decomp.cells")),
         T("spread.after"))
    u = s.unit
    t = Table("lllrrrr", ["impl", "mode", "primitive pair", f"primitive "
                          f"({u})", f"slab pair ({u})", "slab - primitive",
                          "slab / primitive"])
    fixed = impls_of(s, "pair_fixed", [64])
    for wl, i in ((wl, i) for i in impls for wl in ("pair", "pair_fixed")
                  if wl == "pair" or i in fixed):
        b, fp = s.slab(wl, i, 64), Fig()
        t.add(md("t", i + FIXED * (wl == "pair_fixed")))
        if i.startswith("malloc-"):
            t.add("–", "–", "–")
        else:
            mode = mode_of(b)
            what, p = fastpath_of(s, i, mode)
            t.add(md("t", mode or "–"))
            if p is False:
                t.add(f"n/a ({t.note(what)})", "–")
            else:
                t.add(md("c", what))
                fp = fig_or_why(t, s, p, what)
        fb = fig_or_why(t, s, b, b.name)
        if nan(fp.v) or nan(fb.v):
            t.add("–", "–")
            continue
        below = "decomp.within" if not nan(fb.max) and not \
            nan(fp.min) and fb.max >= fp.min else "decomp.beyond"
        t.add(num(fb.v - fp.v), num(div(fb.v, fp.v)) + (
            "" if fb.v >= fp.v else f" ({t.note(T(below))})"))
    t.print()


# ---- what each per-CPU op costs beyond its rseq section ----

def op_sections(s):
    """(op, mode, row, section's row, their figures) in rseq modes."""
    ops = [b.f("op") for b in s.each("suite=percpu")]
    ops = [o for o in PERCPU_OPS if o in ops] + [
        o for o in uniq(ops) if o not in PERCPU_OPS and o + "_section" in ops]
    for op in ops:
        for mode in RSEQ_MODES:
            a = s.find(f"suite=percpu op={op} mode={mode}")
            r = s.find(f"suite=percpu op={op}_section mode={mode}")
            if a:
                yield op, mode, a, r, s.unit_fig(a), s.unit_fig(r)


def has_sections(s):
    return bool(s.find("suite=percpu op=add_section") or
                s.find("suite=percpu op=array_push_pop_section"))


def percpu_decomp(s):
    if not s.find("suite=percpu"):
        return
    if not has_sections(s):
        return none("no.opdecomp")
    head(s, T("opdecomp"), None, T("opdecomp.cells"), T("spread.after"))
    u = s.unit
    t = Table("llrrrrl", ["op", "mode", f"this_cpu op ({u})",
                          f"section ({u})", "op - section", "op / section",
                          "goal: at most 1.05x"])
    for op, mode, a, r, fa, fr in op_sections(s):
        t.add(md("c", op), md("t", mode))
        fa = fig_or_why(t, s, a, f"percpu/{op}/{mode}")
        if r:
            fr = fig_or_why(t, s, r, f"percpu/{op}_section/{mode}")
        else:
            t.add(f"n/a ({t.note(T('opdecomp.nosection'))})")
        if not r or nan(fa.v) or nan(fr.v):
            t.add("–", "–", "–")
            continue
        x = div(fa.v, fr.v)
        t.add(num(fa.v - fr.v), f"{num(x)}x", "met" if x <= API_GOAL else
              f"not met: {pct(x / API_GOAL - 1)} over")
    t.print()


# ---- the targets ----

# The best design over a reference: (what, the best of (workload, field,
# value, figure prefix), the reference (workload, impl or the best's own,
# size, what), goal, why none when no design has the figure).
RATIOS = (
    ("best pair 64 B / glibc's", ("pair", "size", 64, ""),
     ("pair", "malloc-glibc", 64, "malloc-glibc"), 0.4,
     "no design's slab/pair at 64 B in this set"),
    ("best pair 64 B / tcmalloc's", ("pair", "size", 64, ""),
     ("pair", "malloc-tcmalloc", 64, "malloc-tcmalloc"), 0.7,
     "no design's slab/pair at 64 B in this set"),
    ("best seq free(64) / mimalloc's", ("seq", "size", 64, "free_"),
     ("seq", "malloc-mimalloc", 64, "malloc-mimalloc's slab/seq at 64 B"),
     1, "no design's slab/seq free figure at 64 B in this set"),
    ("best bulk-16 / its pair 256 B", ("bulk", "bulk", 16, ""),
     ("pair", None, 256, "its slab/pair at 256 B"), 0.5,
     "no design's slab/bulk of 16 in this set"))


def figs2(who, a, b):
    return f"{who + ' ' if who else ''}{num(a)} / {num(b)}"


def conc_fig(s, impl, size, threads):
    """Mobj_s of slab/conc at size and threads, placement spread first."""
    bs = [b for b in s.each(f"suite=slab workload=conc design={impl} "
                            f"size={size}") if b.threads == threads]
    return fig(next((b for b in bs[::-1] if b.f("placement") == "spread"),
                    bs[0] if bs else None), "Mobj_s")


def targets(s):
    head(s, T("targets"))
    sizes = [b.n("size") for b in s.each("suite=slab workload=conc")]
    size = 64 if 64 in sizes else sizes[0] if sizes else -1
    w(T("targets.caption", unit=s.unit, warm=warm(
        s, "reported, never asserted"), size=size, emu=" " + T(
            "emulated.ratios") if s.emulated else "") + "\n\n")
    t = Table("llrll", ["target", "figures", "ratio", "goal", "verdict"])
    worst, figs = NAN, ""
    for op, mode, a, r, fa, fr in op_sections(s):
        x = div(fa.v, fr.v)
        if not nan(x) and not x <= worst:
            worst, figs = x, figs2(f"{op} {mode}", fa.v, fr.v)
    goal_row(t, "every this_cpu op, rseq modes / its section (worst)", figs,
             worst, API_GOAL, True, None if not nan(worst) else T(
                 "targets.noop" if has_sections(s) else "targets.predates"))
    runs = []           # (design, its pair, the sections, their name)
    for wl in ("pair", "pair_fixed"):
        for i in impls_of(s, wl, [64]):
            b = s.slab(wl, i, 64)
            what, pb = fastpath_of(s, i, mode_of(b))
            f, p = s.unit_fig(b), s.unit_fig(pb or None)
            if pb is not False and "section" in what and not nan(
                    f.v) and not nan(p.v):
                runs.append((i + FIXED * (wl == "pair_fixed"), f.v, p.v,
                             what))
    who, a, p, what = min(runs, key=lambda r: r[1], default=[None] * 4)
    goal_row(t, "best pair 64 B / the sections it runs",
             f"{figs2(who, a, p)} ({what})" if who else "",
             div(a, p) if who else NAN, 1.10, True,
             None if who else T("targets.nosections"))
    for what, (wl, arg, v, pre), (rwl, ref, z, rwhat), g, none in RATIOS:
        who, d = s.best(wl, arg, v, pre)
        r, why = why_none(s, s.slab(rwl, ref or who, z), pre, rwhat)
        goal_row(t, what, figs2(who, d.v, r.v), div(d.v, r.v), g, True,
                 why if who else none)
    if size < 0:
        goal_row(t, "every design, 2 thr / 1 thr", "", NAN, 1.8, False,
                 "no slab/conc rows in this set")
    for d in impls_of(s, "conc", [size]):
        m1, m2 = conc_fig(s, d, size, 1), conc_fig(s, d, size, 2)
        goal_row(t, f"{d}, 2 thr / 1 thr", figs2(None, m2.v, m1.v),
                 div(m2.v, m1.v), 1.8, False, "no slab/conc figure at 1 and "
                 "2 threads" if nan(m1.v) or nan(m2.v) else
                 None, " (expected: one lock)" if d == "locked" else None)
    t.print()
