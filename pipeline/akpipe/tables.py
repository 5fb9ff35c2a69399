"""`tables`: each set's header, then its tables, one per suite and the
slab and whole-program tables (doc/report.md lists them); a table
without data is one line saying why, a skipped benchmark "n/a (k)" with
its reason as note k."""
import math

from . import macro
from .setload import NAN, Fig, fig, num, pct, count, spread, rng, prim_id, div
from .table import Table, w, md, B, goal_row

MALLOCS = ["malloc-glibc", "malloc-tcmalloc", "malloc-jemalloc",
           "malloc-mimalloc"]


class Grid:
    def __init__(self):
        self.rows, self.cols, self.cell = [], [], {}

    def add(self, r, c, b):
        for lst, x in ((self.rows, r), (self.cols, c)):
            if x not in lst:
                lst.append(x)
        self.cell.setdefault((r, c), b)

    def get(self, r, c):
        return self.cell.get((r, c))


def numsort(lst):
    lst.sort(key=float)


def title(s, what):
    w(f"\n### {md('t', what)}: {md('t', s.machine_name())}\n\n")


def caption(s, unit, cells, sprd, cite=None):
    if unit:
        w(f"Unit: {unit}")
    elif s.counter:
        w(f"Unit: {md('t', s.mach('ak_counter_unit') or s.counter)} "
          f"({md('c', s.counter)})")
    else:
        w("Unit: ns")
    w(f". Cells: {cells}, {s.runs()}. Spread: "
      f"{sprd if s.reps > 1 else 'none (1 run)'}."
      f"{' The shape of ' + cite + '.' if cite else ''}\n\n")


def head(s, what, unit=None, cells=None, sprd=None, cite=None):
    title(s, what)
    if cells:
        caption(s, unit, cells, sprd, cite)


def fig_cell(t, s, b, kind, arg=""):
    if not b or b.skip:
        return t.skip(b)
    if kind == "unit":
        u = s.unit_fig(b, arg)
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
        u = s.unit_fig(b)
        t.add(f"{num(u.v)}{rng(u)} / {num(b.fig('real_time').v)} ns")
    else:
        timer_cell(t, s, b)


def grid_fill(s, g, cols, first, kind, cell, arg=""):
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
    t = Table("ll", [None, None])
    for k, v in (
            ("machine", s.machine_name()), ("arch", m("ak_arch")),
            ("CPU", f"{m('ak_cpu_model')} ({m('ak_cores')} cores, "
             f"{m('ak_pus')} PUs)"),
            ("topology", m("ak_topology")), ("kernel", m("ak_kernel")),
            ("hypervisor", m("ak_hypervisor")),
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
    lst = ", ".join(md("t", x) for x in s.suites)
    if s.missing:
        lst += (f"; {B()}missing:" + "".join(" " + md("t", x)
                                             for x in s.missing)
                + f"{B()} (interrupted run, or allocator not installed)")
    t.add("suites", lst)
    if s.problems:
        t.add("problems", f"{s.problems} reported on stderr; the first: "
              f"{md('t', s.why_short())}")
    t.print()


def prim_cells(t, s, b):
    if not b or b.skip:
        t.skip(b)
        return t.add("–", "–")
    u, f = s.unit_fig(b), b.fig("real_time")
    t.add(num(u.v), num(f.v), spread(f if math.isnan(u.v) else u))


def prim_grid(s, suite, col):
    g = Grid()
    for b in s.each(f"suite={suite}"):
        g.add(prim_id(b), b.f(col), b)
    return g


def t_prim(s):
    g = prim_grid(s, "prim", "metric")
    if not g.rows:
        return w("\nNo primitive table: no uncontended suite (prim/...) in "
                 "this set.\n")
    title(s, "Primitives, uncontended")
    caption(s, None, "lat = a dependent chain, tput = independent "
            "operations on four lines, per operation",
            "min - max over the runs, and cv")
    u = s.unit
    t = Table("lllrrlrrl", ["primitive", "instruction", "ordering",
                            f"lat ({u})", "lat (ns)", "lat spread",
                            f"tput ({u})", "tput (ns)", "tput spread"])
    for r in g.rows:
        lat, tput = g.get(r, "lat"), g.get(r, "tput")
        idb = lat if lat and lat.f("insn") else tput
        t.add(md("c", r))
        if (not lat or lat.skip) and (not tput or tput.skip):
            t.add(md("s", (lat or tput).skip), None, *["–"] * 6)
            continue
        t.add(md("c", idb.f("insn") if idb else ""),
              md("t", idb.f("ordering") if idb else ""))
        prim_cells(t, s, lat)
        prim_cells(t, s, tput)
    t.print()


def t_percpu(s):
    g = Grid()
    for b in s.each("suite=percpu"):
        g.add(b.f("op"), b.f("mode"), b)
    if not g.rows:
        return w("\nNo per-CPU table: no percpu suite in this set.\n")
    title(s, "Per-CPU operations (this_cpu_*), by per-CPU mode")
    caption(s, None, "per operation", "(min - max) after each figure")
    grid_fill(s, g, g.cols, f"op ({s.unit})", "c", "unit").print()


def t_cas(s):
    g = prim_grid(s, "cas", "outcome")
    if not g.rows:
        return w("\nNo CAS table: no casfail suite (cas/...) in this set.\n")
    title(s, "CAS that succeeds against CAS that fails")
    caption(s, None, "per operation", "min - max over the runs, and cv")
    u = s.unit
    t = Table("llrrrrrll", ["primitive", "instruction", f"success ({u})",
                            f"failure ({u})", "failure / success",
                            "success (ns)", "failure (ns)",
                            "success spread", "failure spread"])
    for r in g.rows:
        ok, ko = g.get(r, "success"), g.get(r, "failure")
        us, uf = s.unit_fig(ok), s.unit_fig(ko)
        t.add(md("c", r), md("c", (ok or ko).f("insn")))
        for b, f in ((ok, us), (ko, uf)):
            t.skip(b) if b and b.skip else t.add(num(f.v))
        t.add(num(div(uf.v, us.v)), num(fig(ok, "real_time").v),
              num(fig(ko, "real_time").v), spread(us), spread(uf))
    t.print()


def t_contention(s):
    places = []
    for b in s.each("suite=contention placement!="):
        if b.f("placement") not in places:
            places.append(b.f("placement"))
    if not places:
        return w("\nNo contention table: no contention suite in this set.\n")
    for p in places:
        g = Grid()
        for b in s.each(f"suite=contention placement={p}"):
            g.add(prim_id(b), f"{b.threads} thr", b)
        g.cols.sort(key=lambda c: float(c.split()[0]))
        title(s, f"Contention on one line, placement {p}")
        w("Unit: Mops/s, all threads together (the ops counter / 1e6); in "
          "brackets the fairness: the cv of the per-thread operation counts"
          f" (0: even). Cells: {s.runs()}. Spread: run-to-run spread not "
          "shown (see compare).\n\n")
        grid_fill(s, g, g.cols, "primitive", "c", "ops").print()


def t_cacheline(s):
    g, ref, live = Grid(), Grid(), []
    for b in s.each("suite=cacheline"):
        pl = b.f("placement")
        if not pl:
            ref.add(b.f("state"), b.f("op"), b)
            continue
        col = f"placement: {pl}"
        g.add(f"{b.f('state')}/{b.f('op')}", col, b)
        if not b.skip and col not in live:
            live.append(col)
    if not g.rows and not ref.rows:
        return w("\nNo cache-line table: no cacheline suite in this set.\n")
    title(s, "Cache-line transfer: one operation on a line another CPU "
          "left in state M, E, S or I")
    caption(s, None, timer_caption(s), "(min - max) after each figure")
    t = grid_fill(s, g, live, f"state/op ({s.unit})", "c", "timer")
    t.keep_notes = True
    if live:
        t.print()
    elif g.rows:
        w("Every placement class was skipped on this machine.\n")
    nd = []
    for c in g.cols:
        if c in live:
            continue
        sk = next((b for (r, cc), b in g.cell.items() if cc == c
                   and b.skip), None)
        if sk:
            nd.append(f"{md('t', c[len('placement: '):])} "
                      f"({md('t', sk.skip)})")
    if nd:
        w("\nPlacement classes not on this machine: " + "; ".join(nd)
          + ".\n")
    t.print_notes()
    if ref.rows:
        w("\nReference, the line in the same CPU's cache (cacheline/L*), "
          f"{s.unit}:\n\n")
        grid_fill(s, ref, ref.cols, "level", None, "timer").print()


def t_harness(s):
    t = None
    for b in s.each("suite=harness|xcheck"):
        if not t:
            title(s, "Harness and cross-check")
            caption(s, None, "per iteration",
                    "min - max over the runs, and cv")
            t = Table("lrrll", ["benchmark", s.unit, "ns", "spread", "what"])
        t.add(md("c", b.name))
        if b.skip:
            t.skip(b)
            t.add("–", "–", None)
        elif b.f("suite") == "xcheck":
            t.add("–", "–", "–", "ratio nolock/lock "
                  f"{num(b.fig('ratio_suite').v)} (suite) vs "
                  f"{num(b.fig('ratio_asm').v)} (asm); {md('t', b.label)}")
        else:
            u = s.unit_fig(b)
            t.add(num(u.v), num(b.fig("real_time").v), spread(u),
                  md("t", b.label))
    if t:
        t.print()


# ---- slab ----

def pick_place(s, wl):
    first = None
    for b in s.each(f"suite=slab workload={wl}"):
        if b.f("placement") == "spread":
            return "spread"
        first = b.f("placement") if first is None else first
    return first or ""


def impl_rank(i):
    if not i.startswith("malloc-"):
        return 0
    return MALLOCS.index(i) + 1 if i in MALLOCS else len(MALLOCS) + 1


def slab_grid(s, wl, row, threads=0, size=0, g=None):
    g = g or Grid()
    for b in s.each(f"suite=slab workload={wl} "
                    f"placement={pick_place(s, wl)}"):
        t = b.threads if b.threads > 0 else 1
        if (threads > 0 and t != threads) or (size > 0 and
                                              b.n("size") != size):
            continue
        g.add(str(t if row == "threads" else b.n(row)), b.f("design"), b)
    numsort(g.rows)
    g.cols.sort(key=impl_rank)
    return g


def warm_set(s):
    return any(b.f("workload") == "seq_cold" or
               not math.isnan(b.fig("new_slabs").v)
               for b in s.each("suite=slab"))


def warm(s, cells):
    return ("warm steady state (first touch excluded)" if warm_set(s) else
            "not known to be warm (the set predates warm slab runs: the "
            "first touch of fresh slabs may be in them)") + ", " + cells


def t_slab_seq(s):
    g = slab_grid(s, "seq", "size")
    if not g.rows:
        return w("\nNo sequential slab tables: no slab/seq rows in this "
                 "set.\n")
    title(s, "Slab, 10000 allocations then 10000 frees, alloc(N) and "
          "free(N) per object (slab/seq)")
    caption(s, None, warm(s, "per object"), "(min - max) after each figure",
            "the 2007 SLUB cmpxchg\\_local thread's kmalloc(N) and kfree(N) "
            "table (cycles per operation, 10000 repetitions)")
    t = Table("lr", [s.unit] + [md("t", c) for c in g.cols])
    for r in g.rows:
        for ph in ("alloc", "free"):
            t.add(f"{ph}({r})")
            for c in g.cols:
                fig_cell(t, s, g.get(r, c), "unit", ph + "_")
    t.print()
    title(s, "Slab, 10000 allocations then 10000 frees, alloc / free per "
          "object in ns, by size (slab/seq)")
    caption(s, "ns", warm(s, '"alloc / free" per object'),
            "see the slab/seq table above", "the 2007 SLUB synthetic test's "
            "table (10000 kmallocs, then 10000 kfrees, by size)")
    grid_fill(s, g, g.cols, "size (B)", None, "af_ns").print()


def t_slab_pair(s):
    g = slab_grid(s, "pair", "size")
    if not g.rows:
        return w("\nNo pair table: no slab/pair rows in this set.\n")
    title(s, "Slab, alloc+free pairs by size (slab/pair)")
    caption(s, None, warm(s, "per pair, then ns"),
            "(min - max) of the unit figure", "the pairs columns of the "
            "2007 SLUB synthetic test's table")
    grid_fill(s, g, g.cols, "size (B)", None, "pair").print()


def t_slab_conc(s):
    alls = slab_grid(s, "conc", "threads")
    if not alls.rows:
        w("\nNo concurrent slab table: no slab/conc rows in this set.\n")
    else:
        fits = [int(x) for x in alls.rows if s.pus <= 0 or int(x) <= s.pus]
        t = max(fits, default=0) or int(alls.rows[0])
        g = slab_grid(s, "conc", "size", t)
        pl = pick_place(s, "conc")
        title(s, f"Slab, concurrent allocation: {t} threads (the most "
              f"that fit on the {s.pus} PUs)"
              f"{', placement ' if pl else ''}{pl}, slab/conc")
        caption(s, None, warm(s, '"alloc / free" per object per thread'),
                "not shown (see compare)", "the 2016 SLAB thread's table of "
                "N allocations then N frees on every CPU at once")
        grid_fill(s, g, g.cols, "size (B)", None, "af").print()
        size = 64 if "64" in g.rows else int(g.rows[0]) if g.rows else -1
        tp = slab_grid(s, "conc", "threads", 0, size)
        title(s, "Slab, concurrent throughput by threads, "
              f"{size}-byte objects (slab/conc)")
        caption(s, "millions of objects allocated and freed per second, "
                "summed over the threads (Mobj\\_s)",
                warm(s, "per thread count"), "not shown")
        grid_fill(s, tp, tp.cols, "threads", None, "field", "Mobj_s").print()
    g = slab_grid(s, "remote", "size")
    if not g.rows:
        return w("\nNo remote-free table: no slab/remote rows in this set.\n")
    t = max(b.threads for b in g.cell.values())
    title(s, f"Slab, remote free: each of {t} threads frees its neighbour's"
          " objects (slab/remote)")
    caption(s, None, warm(s, '"alloc / free" per object per thread'),
            "not shown (see compare)")
    grid_fill(s, g, g.cols, "size (B)", None, "af").print()


def t_slab_bulk(s):
    gb, gf = slab_grid(s, "bulk", "bulk"), slab_grid(s, "bulk_fallback",
                                                     "bulk")
    if not gb.rows and not gf.rows:
        return w("\nNo bulk slab table: no slab/bulk rows in this set.\n")
    for src, dst in ((gf.cols, gb.cols), (gf.rows, gb.rows)):
        dst += [x for x in src if x not in dst]
    gb.cols.sort(key=impl_rank)
    numsort(gb.rows)
    title(s, "Slab, bulk allocation: alloc_bulk + free_bulk of N 256-byte "
          "objects against single calls (slab/bulk, slab/bulk_fallback)")
    caption(s, "ns", warm(s, '"bulk / single calls" ns per object, and in '
                          "brackets from_cpu, the share of objects the "
                          "per-CPU level served"), "not shown (see compare)",
            "the 2015 SLUB bulk-allocation thread's table (256-byte "
            "objects, ns per object)")
    t = Table("lr", ["bulk N"] + [md("t", c) for c in gb.cols])
    for r in gb.rows:
        t.add(r)
        for c in gb.cols:
            b, f = gb.get(r, c), gf.get(r, c)
            fc = fig(b, "from_cpu")
            x = (f"n/a ({t.note(b.skip)})" if b and b.skip
                 else num(fig(b, "real_time").v))
            x += (f" / n/a ({t.note(f.skip)})" if f and f.skip
                  else f" / {num(fig(f, 'real_time').v)}")
            t.add(x + ("" if math.isnan(fc.v) else f" ({pct(fc.v)})"))
    t.print()


def t_slab_bulk_cpu_partial(s):
    pl, gb, gf = pick_place(s, "bulk_cpu_partial"), Grid(), Grid()
    for g, wl in ((gb, "bulk_cpu_partial"), (gf, "bulk_cpu_partial_"
                                             "fallback")):
        for b in s.each(f"suite=slab workload={wl} placement={pl}"):
            g.add(str(b.n("bulk")), f"{b.f('design')}, cpu_partial "
                  f"{b.f('cpu_partial')}", b)
    if not gb.rows and not gf.rows:
        return w("\nNo bulk table with per-CPU partial slabs: no "
                 "slab/bulk_cpu_partial rows in this set.\n")
    for src, dst in ((gf.cols, gb.cols), (gf.rows, gb.rows)):
        dst += [x for x in src if x not in dst]
    numsort(gb.rows)
    title(s, "Slab, bulk allocation without and with per-CPU partial slabs:"
          " alloc_bulk + free_bulk of N 256-byte objects, 32 per slab, "
          "against single calls (slab/bulk_cpu_partial, ..._fallback)")
    caption(s, "ns", warm(s, '"bulk / single calls" ns per object'),
            "not shown (see compare)")
    t = Table("lr", ["bulk N"] + [md("t", c) for c in gb.cols])
    for r in gb.rows:
        t.add(r)
        for c in gb.cols:
            x, f = gb.get(r, c), gf.get(r, c)
            t.add(("n/a" if x and x.skip else num(fig(x, "real_time").v))
                  + " / " + ("n/a" if f and f.skip else
                             num(fig(f, "real_time").v)))
    t.print()
    title(s, "Slab, where bulk allocation's objects came from, without and "
          "with per-CPU partial slabs (slab/bulk_cpu_partial)")
    caption(s, "share of the objects of the bulk calls",
            '"CPU slab / CPU partial / node partial / new slab", counted on'
            " an untimed twin cache with statistics after as many calls to "
            "warm it", "none (counts)")
    t = Table("lr", ["bulk N"] + [md("t", c) for c in gb.cols])
    for r in gb.rows:
        t.add(r)
        for c in gb.cols:
            x = gb.get(r, c)
            t.add(" / ".join(pct(fig(x, k).v) for k in (
                "from_cpu", "from_cpu_partial", "from_node", "from_new")))
    t.print()


def t_slab_beside(s):
    g = slab_grid(s, "pair", "size", 0, 64)
    slab_grid(s, "seq", "size", 0, 64, g)
    if not g.rows:
        return w("\nNo table beside the system allocators: no slab rows at 64"
                 " bytes in this set.\n")
    gp = s.unit_fig(s.slab("pair", "malloc-glibc", 64))
    gs = s.unit_fig(s.slab("seq", "malloc-glibc", 64))
    title(s, "Slab beside the system allocators, 64-byte objects")
    caption(s, None, warm(s, "slab/pair per alloc+free pair; slab/seq "
                          "alloc+free per object; ratios to malloc-glibc "
                          "(below 1: cheaper)"),
            "min - max of the pair figure")
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


def t_slab(s):
    if not s.find("suite=slab"):
        return w("\nNo slab tables (sequential, pairs, concurrent, bulk, "
                 "beside the system allocators, targets): no slab suite in "
                 "this set.\n")
    t_slab_seq(s)
    seq_gap(s)
    cold(s)
    t_slab_pair(s)
    decomp(s)
    t_slab_conc(s)
    t_slab_bulk(s)
    t_slab_bulk_cpu_partial(s)
    t_slab_beside(s)
    targets(s)


def render(s):
    header(s, 2)
    t_prim(s)
    t_percpu(s)
    percpu_decomp(s)
    t_cas(s)
    t_contention(s)
    t_cacheline(s)
    t_harness(s)
    t_slab(s)
    macro.tables(s, head)


# ---- cache lines less the timer ----

def has_timer(s):
    return any(not math.isnan(b.fig("timer_ticks").v)
               for b in s.each("suite=cacheline"))


def timer_caption(s):
    if not has_timer(s):
        return ("per operation, by placement class of the two CPUs; not "
                "corrected: set predates the timer measurement (timer\\_"
                "ticks), so each figure includes the counter reads and "
                "fence around the operation")
    return ("per operation, by placement class of the two CPUs, "
            "**corrected**: the raw figure less timer\\_ticks, the timed "
            "region's own cost (counter read, fence, read) measured in each"
            " run (the raw figure stays in the JSON); the min - max is that"
            " of each run's raw less its own correction; a note marks a "
            "correction whose rounds never agreed (timer\\_steady 0), and a"
            " figure below 0")


def timer_cell(t, s, b):
    raw, tim = s.unit_fig(b), b.fig("timer_ticks")
    if math.isnan(tim.v):
        n = (f" ({t.note('not corrected: this run has no timer_ticks')})"
             if has_timer(s) else "")
        return t.add(num(raw.v) + rng(raw) + n)
    c = Fig(raw.v - tim.v, raw.reps)
    xs = [r[s.counter] - r["timer_ticks"] for r in b.iter if s.counter
          and all(isinstance(r.get(k), (int, float)) and not
                  isinstance(r.get(k), bool)
                  for k in (s.counter, "timer_ticks"))]
    if xs:
        c.min, c.max, c.n = min(xs), max(xs), len(xs)
    st = b.fig("timer_steady")
    note = None
    if st.v < 1 or (st.n > 0 and st.min < 1):
        note = ("timer not steady (timer_steady 0): its rounds never agreed,"
                " so the correction is the lowest round seen")
    elif c.v < 0:
        note = ("below 0: the raw figure is under timer_ticks, so the "
                "operation is within the timer's own variation")
    t.add(num(c.v) + rng(c) + (f" ({t.note(note)})" if note else ""))


# ---- seq at the large sizes against the best system allocator ----

def impls_of(s, wl, size, designs, mallocs, lst=None):
    lst = [] if lst is None else lst
    for b in s.each(f"suite=slab workload={wl} size={size}"):
        d = b.f("design")
        if (mallocs if d.startswith("malloc-") else designs) \
                and d not in lst:
            lst.append(d)
    return lst


def why_none(s, b, prefix, what):
    """(figure, why there is none) of b in the unit."""
    f = s.unit_fig(b, prefix)
    if not math.isnan(f.v):
        return f, None
    if not b:
        return f, f"no {what} in this set"
    if b.skip:
        return f, f"{what} {b.skip}"
    return f, f"{what} has no {prefix}{s.counter or '(no counter)'} figure"


def none_cell(t, b):
    t.add(f"n/a ({t.note(b.skip)})" if b and b.skip else "–")


def fig_or_why(t, s, b, what):
    f, why = why_none(s, b, "", what)
    t.add(num(f.v) + rng(f) if not why else "–" if not b
          else f"n/a ({t.note(why)})")
    return f


def gap_reason(s, design, size, phase, d, who, best):
    b, c = s.slab("seq", design, size), s.slab("seq_cold", design, size)
    r = (f"{design} {'alloc' if phase[0] == 'a' else 'free'}({size}) "
         f"{num(d.v)} over {who}'s {num(best.v)}: ")
    ns = fig(b, "new_slabs")
    r += ("no new_slabs counter: the set predates warm slab runs, so this "
          "figure may hold the first touch of fresh slabs" if math.isnan(ns.v)
          else f"it mapped {count(ns.v)} slabs while timed (new_slabs): not "
          "a steady state" if ns.v > 0
          else "it mapped no slab while timed (new_slabs 0)")
    cold = s.unit_fig(c, phase)
    if not math.isnan(cold.v):
        r += f"; its cold start (slab/seq_cold) is {num(cold.v)}"
        sl = fig(c, "slabs")
        if not math.isnan(sl.v):
            r += f" with {count(sl.v)} slabs mapped per run"
        r += (f", so warm is {pct(div(d.v, cold.v))} of cold" +
              (": no cheaper than a cold start" if d.v >= cold.v else
               ": close to a cold start" if d.v >= cold.v / 2 else
               ": the gap is not the first touch"))
    pw, pm = s.best("pair", "size", size, "", True)
    pd = s.unit_fig(s.slab("pair", design, size))
    if not math.isnan(pd.v) and pw:
        r += (f"; its alloc+free pair at {size} B is {num(pd.v)}, "
              f"{num(div(pd.v, pm.v))}x {pw}'s {num(pm.v)}")
    if d.n > 1 and best.n > 1:
        return r + (f"; its fastest run is {num(d.min / best.max)}x the "
                    "best's slowest")
    return r + "; 1 run each: the noise cannot be judged"


def seq_gap(s):
    designs = impls_of(s, "seq", 4096, True, False)
    impls_of(s, "seq", 16384, True, False, designs)
    if not designs or not s.best("seq", "size", 4096, "alloc_", True)[0]:
        return w("\nNo comparison of the large seq sizes with the system "
                 "allocators: no slab/seq rows of both designs and mallocs "
                 "at 4096 bytes in this set.\n")
    head(s, "Slab seq at 4096 and 16384 B against the best system allocator"
         " (goal: within 2x)", None,
         warm(s, "per object: the lowest system allocator's figure of the "
              "row (the slab/seq table), then each design's over it; over "
              "2x, the note says what the set shows about it"),
         "see the slab/seq table")
    t = Table("llr", [f"slab/seq ({s.unit})", "best system allocator"] +
              [f"{md('t', d)} / best" for d in designs])
    over = n = 0
    for size in (4096, 16384):
        for ph in ("alloc_", "free_"):
            who, best = s.best("seq", "size", size, ph, True)
            t.add(f"{ph[:-1]}({size})")
            if not who:
                t.add(*["–"] * (len(designs) + 1))
                continue
            t.add(f"{md('t', who)} {num(best.v)}")
            for d in designs:
                b = s.slab("seq", d, size)
                f = s.unit_fig(b, ph)
                if math.isnan(f.v):
                    none_cell(t, b)
                    continue
                n += 1
                if f.v <= 2 * best.v:
                    t.add(f"{num(div(f.v, best.v))}x")
                    continue
                over += 1
                t.add(f"{num(div(f.v, best.v))}x ("
                      f"{t.note(gap_reason(s, d, size, ph, f, who, best))})")
    t.print()
    if over:
        w(f"\n{over} of {n} design figures are over 2x the best system "
          "allocator's; the notes give what the set shows about each.\n")
    elif n:
        w("\nEvery design is within 2x of the best system allocator at "
          f"these sizes ({n} figures).\n")


def cold(s):
    sizes = []
    for b in s.each("suite=slab workload=seq_cold"):
        if str(b.n("size")) not in sizes:
            sizes.append(str(b.n("size")))
    if not sizes:
        return w("\nNo cold-start table: no slab/seq_cold rows in this set "
                 "(it predates them).\n")
    numsort(sizes)
    impls = []
    for z in sizes:
        impls_of(s, "seq_cold", z, True, True, impls)
    head(s, "Slab, cold start: 10000 allocations, then 10000 frees, on a "
         "fresh cache or in a fresh process (slab/seq_cold)", None,
         "**cold start**, not a steady state: first touch, mmap and page "
         'faults included; "alloc / free" per object, and for a design the '
         "slabs each run mapped (the warm figures: the slab/seq table)",
         "not shown (see compare)")
    t = Table("lr", ["size (B)"] + [md("t", i) for i in impls])
    for z in sizes:
        t.add(z)
        for i in impls:
            b = s.slab("seq_cold", i, z)
            a = s.unit_fig(b, "alloc_")
            if math.isnan(a.v):
                none_cell(t, b)
                continue
            sl = fig(b, "slabs")
            t.add(f"{num(a.v)} / {num(s.unit_fig(b, 'free_').v)}" +
                  ("" if math.isnan(sl.v) else f" ({count(sl.v)} slabs)"))
    t.print()


# ---- what a design costs beyond its fastpath primitive ----

# The per-CPU pair each design's fastpath runs in the rseq modes, and in
# the others (doc/benchmarks.md, "Fastpath primitives").
FASTPATHS = {"array": ("array_pop_push_section", "array_push_pop"),
             "sheaf": ("array_ptr_pop_push_section", None),
             "rseq-list": ("list_pop_push_section", "list_pop_push"),
             "slub-tid": ("tid_pop_push", "tid_pop_push"),
             "slub-local": ("local_pop_push", "local_pop_push")}


def mode_of(b):
    """"array on rseq (...)": the per-CPU mode its benchmark ran in."""
    i = b.label.find(" on ") if b else -1
    if i < 0:
        return None
    m = b.label[i + 4:]
    for c in " (":
        m = m.split(c)[0]
    return m or None


def fastpath_of(s, design, mode):
    """(what, benchmark) under design's fastpath; (why not, False)."""
    if design == "locked":
        return ("prim/ref/mutex_pop_push/lat",
                s.find("suite=prim arch=ref op=mutex_pop_push metric=lat"))
    f = FASTPATHS.get(design)
    if not f:
        return f"no fastpath primitive is known for {design}", False
    if not mode:
        return ("its per-CPU mode is not in the label of its slab/pair "
                "row"), False
    rseq = mode.startswith("rseq")
    if not rseq and not f[1]:
        return (f"in {mode} mode {design} takes its main sheaf by this_cpu_"
                "xchg and puts it back by this_cpu_cmpxchg: no one pair row"
                " stands for it"), False
    op = f[0] if rseq else f[1]
    return f"percpu/{op}/{mode}", s.find(f"suite=percpu op={op} mode={mode}")


def below_floor(pair, prim):
    if not math.isnan(pair.max) and not math.isnan(prim.min) \
            and pair.max >= prim.min:
        return ("below its primitive, within their spreads: the pair and the"
                " primitive are separate benchmarks, each the median of its "
                "own runs")
    return ("below its primitive by more than either's spread: the pair and "
            "the primitive are separate benchmarks, and the set holds "
            "nothing that says why")


def decomp(s):
    impls = impls_of(s, "pair", 64, True, True)
    if not impls:
        return w("\nNo fastpath decomposition: no slab/pair rows at 64 bytes"
                 " in this set.\n")
    head(s, "What each design costs beyond its fastpath primitive, 64-byte "
         "objects", None,
         warm(s, "per pair: the per-CPU pop+push the design's fastpath runs"
              " (`percpu/<op>/<mode>` in the design's mode; locked: a "
              "mutex-guarded list) beside the design's alloc+free "
              "(`slab/pair/<impl>/size:64`); the difference is what the "
              "allocator adds around the primitive; the system allocators "
              "for scale"), "(min - max) after each figure")
    u = s.unit
    t = Table("lllrrrr", ["impl", "mode", "primitive pair", f"primitive "
                          f"({u})", f"slab pair ({u})", "slab - primitive",
                          "slab / primitive"])
    for i in impls:
        b = s.slab("pair", i, 64)
        t.add(md("t", i))
        if i.startswith("malloc-"):
            t.add("–", "–", "–")
            fig_or_why(t, s, b, b.name)
            t.add("–", "–")
            continue
        mode = mode_of(b)
        t.add(md("t", mode or "–"))
        what, p = fastpath_of(s, i, mode)
        fp = Fig()
        if p is False:
            t.add(f"n/a ({t.note(what)})", "–")
        else:
            t.add(md("c", what))
            fp = fig_or_why(t, s, p, what)
        fb = fig_or_why(t, s, b, b.name)
        if math.isnan(fp.v) or math.isnan(fb.v):
            t.add("–", "–")
            continue
        t.add(num(fb.v - fp.v), num(div(fb.v, fp.v)) if fb.v >= fp.v else
              f"{num(div(fb.v, fp.v))} ({t.note(below_floor(fb, fp))})")
    t.print()


# ---- what each per-CPU op costs beyond its rseq section ----

# Every this_cpu op of the percpu suite, from its rows: the bare
# section(s) of op in a mode are the row <op>_section of that mode.
PERCPU_OPS = ("read", "write", "add", "add_return", "xchg", "cmpxchg",
              "try_cmpxchg", "cmpxchg128", "list_pop_push", "array_push_pop",
              "array_ptr_pop_push")
RSEQ_MODES = ("rseq", "rseq-mm_cid")
PERCPU_API_GOAL = 1.05


def percpu_ops(s):
    """The this_cpu ops of the table: those of the suite's registry order
    that the set has, then any other op with a bare-section row."""
    ops = [b.f("op") for b in s.each("suite=percpu")]
    return [o for o in PERCPU_OPS if o in ops] + [
        o for o in dict.fromkeys(ops) if o not in PERCPU_OPS and
        o + "_section" in ops]


def has_sections(s):
    return bool(s.find("suite=percpu op=add_section") or
                s.find("suite=percpu op=array_push_pop_section"))


def op_section(s, op, mode):
    a = s.find(f"suite=percpu op={op} mode={mode}")
    r = s.find(f"suite=percpu op={op}_section mode={mode}")
    return a, r, s.unit_fig(a), s.unit_fig(r)


def percpu_decomp(s):
    if not s.find("suite=percpu"):
        return
    if not has_sections(s):
        return w("\nNo table of what each per-CPU op costs beyond its rseq "
                 "section: this set predates the bare-section rows "
                 "(`percpu/<op>_section/<mode>` beside every op).\n")
    head(s, "What each per-CPU op costs beyond its rseq section", None,
         "per operation, rseq modes: the this_cpu op (`percpu/<op>/<mode>`)"
         " beside the same work done by its bare rseq section(s) as a "
         "hand-written port runs them (`percpu/<op>_section/<mode>`: the "
         "thread's rseq area and id field taken once, no mode to test); the"
         " difference is what the API adds; goal: at most 1.05x",
         "(min - max) after each figure")
    u = s.unit
    t = Table("llrrrrl", ["op", "mode", f"this_cpu op ({u})",
                          f"section ({u})", "op - section", "op / section",
                          "goal: at most 1.05x"])
    for op in percpu_ops(s):
        for mode in RSEQ_MODES:
            if not s.find(f"suite=percpu op={op} mode={mode}"):
                continue
            a, r, fa, fr = op_section(s, op, mode)
            t.add(md("c", op), md("t", mode))
            fa = fig_or_why(t, s, a, f"percpu/{op}/{mode}")
            if not r:
                n = t.note("this set has no bare-section row for this op")
                t.add(f"n/a ({n})")
            else:
                fr = fig_or_why(t, s, r, f"percpu/{op}_section/{mode}")
            if not r or math.isnan(fa.v) or math.isnan(fr.v):
                t.add("–", "–", "–")
                continue
            x = div(fa.v, fr.v)
            t.add(num(fa.v - fr.v), f"{num(x)}x", "met" if x <=
                  PERCPU_API_GOAL else
                  f"not met: {pct(x / PERCPU_API_GOAL - 1)} over")
    t.print()


# ---- the targets ----

def figs2(who, a, b):
    return f"{who + ' ' if who else ''}{num(a)} / {num(b)}"


def conc_fig(s, impl, size, threads):
    any_ = None
    for b in s.each(f"suite=slab workload=conc design={impl} size={size}"):
        if b.threads == threads and (b.f("placement") == "spread"
                                     or not any_):
            any_ = b
    return fig(any_, "Mobj_s")


def conc_size(s):
    first = -1
    for b in s.each("suite=slab workload=conc"):
        if b.n("size") == 64:
            return 64
        first = b.n("size") if first < 0 else first
    return first


def pair_section_goal(t, s):
    who, wbest = None, ""
    for i in impls_of(s, "pair", 64, True, False):
        b = s.slab("pair", i, 64)
        what, pb = fastpath_of(s, i, mode_of(b))
        f, p = s.unit_fig(b), s.unit_fig(pb or None)
        if pb is False or "_section/" not in what or math.isnan(f.v) \
                or math.isnan(p.v):
            continue
        if not who or f.v < best.v:
            who, best, floor, wbest = i, f, p, what
    why = None if who else (
        "no design's slab/pair at 64 B with the rseq sections it runs "
        "(`percpu/*_section/<mode>`) in this set")
    goal_row(t, "best pair 64 B / the sections it runs",
             f"{figs2(who, best.v if who else NAN, floor.v if who else NAN)}"
             f" ({wbest})", div(best.v, floor.v) if who else NAN, 1.10, True,
             why)


def percpu_op_goal(t, s):
    worst, figs = NAN, ""
    for op in percpu_ops(s):
        for mode in RSEQ_MODES:
            a, r, fa, fr = op_section(s, op, mode)
            if math.isnan(fa.v) or math.isnan(fr.v) or (
                    not math.isnan(worst) and div(fa.v, fr.v) <= worst):
                continue
            worst, figs = div(fa.v, fr.v), figs2(f"{op} {mode}", fa.v, fr.v)
    why = None
    if math.isnan(worst):
        why = ("no this_cpu op with its section in an rseq mode"
               if has_sections(s) else "this set predates the bare-section "
               "rows (`percpu/<op>_section/<mode>`)")
    goal_row(t, "every this_cpu op, rseq modes / its section (worst)", figs,
             worst, PERCPU_API_GOAL, True, why)


def targets(s):
    head(s, "Slab targets: the best design's figures against their goals "
         "(reported, never asserted)")
    size = conc_size(s)
    w(f"Unit: {s.unit}; medians, {warm(s, 'reported, never asserted')}. "
      "Best: the design with the lowest figure. this\\_cpu op / its section:"
      " each this\\_cpu op in an rseq mode over its bare section(s) "
      "(`percpu/<op>_section/<mode>`), the worst shown; pair 64 B: "
      "slab/pair at 64 bytes; the sections it runs: the bare rseq sections "
      "of the design's fastpath in its mode (`percpu/*_section/<mode>`), "
      "the best pair among the designs whose fastpath is one (array, sheaf,"
      " rseq-list); glibc's, tcmalloc's: their pair at 64 bytes; seq "
      "free(64): the free figure of slab/seq at 64 bytes; bulk-16: "
      "slab/bulk of 16, per object, against the same design's pair of the "
      "bulk objects' 256 bytes; 2 thr / 1 thr: Mobj/s of slab/conc at "
      f"{size} bytes (locked is expected not to scale: one lock). Figures: "
      "the best design's / the reference's. Each target: met, or its gap to"
      " the goal; n/a names the input the set lacks."
      f"{' **Emulated: these ratios mean nothing.**' if s.emulated else ''}"
      "\n\n")
    t = Table("llrll", ["target", "figures", "ratio", "goal", "verdict"])
    percpu_op_goal(t, s)
    pair_section_goal(t, s)
    who, best = s.best("pair", "size", 64)
    for what, name, goal in (("best pair 64 B / glibc's", "malloc-glibc",
                              0.4), ("best pair 64 B / tcmalloc's",
                                     "malloc-tcmalloc", 0.7)):
        r, why = why_none(s, s.slab("pair", name, 64), "", name)
        why = why if who else "no design's slab/pair at 64 B in this set"
        goal_row(t, what, figs2(who, best.v, r.v), div(best.v, r.v), goal, True,
                 why)
    who, d = s.best("seq", "size", 64, "free_")
    m, why = why_none(s, s.slab("seq", "malloc-mimalloc", 64), "free_",
                      "malloc-mimalloc's slab/seq at 64 B")
    why = why if who else "no design's slab/seq free figure at 64 B in this set"
    goal_row(t, "best seq free(64) / mimalloc's", figs2(who, d.v, m.v),
             div(d.v, m.v), 1, True, why)
    who, bulk = s.best("bulk", "bulk", 16)
    pair, why = why_none(s, s.slab("pair", who, 256), "",
                         "its slab/pair at 256 B")
    why = why if who else "no design's slab/bulk of 16 in this set"
    goal_row(t, "best bulk-16 / its pair 256 B", figs2(who, bulk.v, pair.v),
             div(bulk.v, pair.v), 0.5, True, why)
    if size < 0:
        goal_row(t, "every design, 2 thr / 1 thr", "", NAN, 1.8, False,
                 "no slab/conc rows in this set")
    for d in impls_of(s, "conc", size, True, False):
        m1, m2 = conc_fig(s, d, size, 1), conc_fig(s, d, size, 2)
        why = ("no slab/conc figure at 1 and 2 threads" if math.isnan(m1.v)
               or math.isnan(m2.v) else None)
        goal_row(t, f"{d}, 2 thr / 1 thr", figs2(None, m2.v, m1.v),
                 div(m2.v, m1.v), 1.8, False, why,
                 " (expected: one lock)" if d == "locked" else None)
    t.print()
