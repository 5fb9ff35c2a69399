"""`plot SET... -o OUTDIR`: matplotlib SVGs, each beside its .dat."""
import math
import os
import re
import textwrap

from . import macro
from .setload import load_set, exit_status, problem, note, prim_id
from .table import w, md


def safe(s):
    return re.sub(r"[^A-Za-z0-9._-]", "_", s)


def draw(out, name, title, head, rows, xlabel, ylabel, style=None):
    """One plot and its data (a header line, then a row per x): bars, a
    cluster per row, where x is a string; else lines, x against each
    column, on a log-2 axis (style: per line, then a log y axis)."""
    import matplotlib
    matplotlib.use("svg")
    # the same data draws the same file: no date, ids from a fixed salt
    matplotlib.rcParams["svg.hashsalt"] = "atomkit"
    import matplotlib.pyplot as plt
    rows = [(x, [math.nan if y is None else y for y in ys]) for x, ys in rows]
    with open(os.path.join(out, name + ".dat"), "w") as f:
        f.write("\t".join(head) + "\n" + "".join("\t".join(
            [str(x)] + ["-" if math.isnan(y) else "%.6g" % y for y in ys])
            + "\n" for x, ys in rows))
    figr, ax = plt.subplots(figsize=(11, 6.5))
    n, xs = len(head) - 1, [x for x, _ in rows]
    for j, lab in enumerate(head[1:]):
        ys = [r[1][j] for r in rows]
        if isinstance(xs[0], str):
            ax.bar([i + (j - (n - 1) / 2) * 0.8 / n for i in range(len(xs))],
                   ys, 0.8 / n, label=lab)
        else:
            pts = [(x, y) for x, y in zip(xs, ys) if not math.isnan(y)]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    label=lab, **(style or {}).get(lab, {}))
    if isinstance(xs[0], str):
        many = len(rows) > 6
        ax.set_xticks(range(len(rows)), xs, rotation=-45 if many else 0,
                      ha="left" if many else "center")
        if style:
            ax.axhline(1, color="black", linestyle="--", linewidth=1)
    else:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(x) for x in xs])
        ax.minorticks_off()
        if style:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
    ax.set_title(textwrap.fill(title, 100), fontsize="medium")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1, 1))
    figr.tight_layout()
    figr.savefig(os.path.join(out, name + ".svg"), metadata={"Date": None})
    plt.close(figr)
    return name + ".svg", title


def plotted_prim(b):
    """The key of an uncontended primitive that primitives.svg shows."""
    if b.skip or b.f("suite") != "prim" or b.f("metric") != "lat":
        return None
    if b.f("arch") == "ref":
        return b.f("op") if b.f("op") in ("spinlock", "mutex") else None
    if b.f("arch") == "generic" or b.n("width") == 32 or not b.f("variant"):
        return None
    return f"{b.f('op')}/{b.f('variant')}"


def pivot(bs, x, col, val):
    """(columns, rows): x against each column, the first benchmark's val."""
    cols = list(dict.fromkeys(map(col, bs)))
    v = {(x(b), col(b)): val(b) for b in reversed(bs)}
    return cols, [(k, [v.get((k, c)) for c in cols])
                  for k in sorted({x(b) for b in bs})]


def set_plots(s, tag, out):
    """The plots of one set: contention, bulk, whole programs."""
    name = f"{s.machine_name()} {s.set_name()}"
    for p in dict.fromkeys(b.f("placement") for b in
                           s.each("suite=contention placement!=")):
        for gen in ("!", ""):
            ks, rows = pivot([b for b in s.each(
                f"suite=contention placement={p} arch{gen}=generic")
                if not b.skip], lambda b: b.threads, prim_id,
                lambda b: b.fig("ops").v / 1e6)
            g = ("", "") if gen else ("-generic", ", generic C11")
            yield rows and draw(
                out, f"contention-{tag}-{p}{g[0]}", "Contention on one line,"
                f" {name}, placement {p}{g[1]} (Mops/s, all threads, "
                "median)", ["threads"] + ks, rows, "threads", "Mops/s")
    cols, rows = pivot([b for b in s.each(
        "suite=slab workload=bulk|bulk_fallback bulk!=") if not b.skip],
        lambda b: b.n("bulk"), lambda b: f"{b.f('design')} " + (
            "bulk" if b.f("workload") == "bulk" else "single calls"),
        lambda b: b.fig("real_time").v)
    designs = list(dict.fromkeys(c.split()[0] for c in cols))
    yield rows and draw(
        out, f"bulk-{tag}", f"Bulk alloc+free of 256-byte objects, {name} "
        "(ns per object, median; dashed: single calls)", ["bulk"] + cols,
        rows, "objects per call (N)", "ns per object",
        {c: dict(color=f"C{designs.index(c.split()[0]) % 10}",
                 linestyle="--" if "single" in c else "-") for c in cols})
    m = s.macro
    for wl in macro.ran(m, "workloads") if m else []:
        bl, ks = m["ak_baseline"], (macro.ELAPSED, macro.RSS)
        base, sts = macro.MStat(wl, bl), [
            (a["name"], macro.MStat(wl, a["name"]))
            for a in macro.ran(m, "allocators")]
        yield base.ok and draw(
            out, f"macro-{tag}-{safe(wl['name'])}", f"{wl['name']}, {name}:"
            f" elapsed and peak RSS / {bl} (means; lower is better)",
            ["allocator", f"elapsed / {bl}", f"peak RSS / {bl}"],
            [(safe(a), [st.f[k].v / base.f[k].v if st.ok and base.f[k].v
                        else None for k in ks]) for a, st in sts],
            "", f"relative to {bl}", True)


def plots(sets, out):
    keys = list(dict.fromkeys(k for s in sets for k in map(
        plotted_prim, s.bench) if k))
    if not keys:
        note("plot: no uncontended primitives in the sets: no "
             "primitives.svg")
    else:
        def ns(s, k):
            return next((f.v for f in (b.fig("real_time") for b in s.bench
                                       if plotted_prim(b) == k)
                         if not math.isnan(f.v)), None)
        yield draw(out, "primitives", "Cost per primitive, uncontended "
                   "latency (median, ns)", ["primitive"] + [
                       f"{s.machine_name()} {s.set_name()}" for s in sets],
                   [(k, [ns(s, k) for s in sets]) for k in keys], "", "ns")
    tags = []
    for s in sets:
        base = safe(f"{s.machine_name()}-{s.set_name()}")
        tags.append(next(t for t in [base] + [f"{base}-{n}" for n in range(
            2, len(tags) + 3)] if t not in tags))
        yield from filter(None, set_plots(s, tags[-1], out))


def cmd_plot(paths, out):
    sets = [s for s in map(load_set, paths) if s.usable]
    status = exit_status(len(sets))
    if not sets:
        return status
    try:
        os.makedirs(out, exist_ok=True)
        done = list(plots(sets, out))
    except OSError as e:
        problem(f"{e.filename}: cannot write: {e.strerror}")
        return 3
    except ImportError:
        note("matplotlib not installed (python3-matplotlib): no plots "
             "(tables are unaffected)")
        return status
    if not done:
        note("plot: nothing to plot in these sets (no uncontended, "
             "contention, bulk or whole-program results)")
        return status
    w("# Plots\n\n")
    for svg, title in done:
        w(f"![{md('t', title)}]({svg})\n\n")
    return status
