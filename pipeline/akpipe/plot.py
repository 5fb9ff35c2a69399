"""`plot SET... -o OUTDIR`: matplotlib SVGs, each beside its .dat."""
import math
import os
import re
import textwrap

from . import macro
from .setload import load_set, exit_status, problem, note, prim_id, fig
from .table import w, md


def safe(s):
    return re.sub(r"[^A-Za-z0-9._-]", "_", s)


def write_dat(out, name, head, rows):
    """The data of a plot: a header line, then a row per x."""
    with open(os.path.join(out, name + ".dat"), "w") as f:
        f.write("\t".join(head) + "\n")
        for x, ys in rows:
            f.write("\t".join([str(x)] + ["-" if y is None or math.isnan(y)
                                          else "%.6g" % y for y in ys]) + "\n")


def draw(out, name, title, kind, head, rows, xlabel="", ylabel="",
         style=None):
    """Bars (a cluster per row) or lines (x against each column)."""
    import matplotlib
    matplotlib.use("svg")
    # the same data draws the same file: no date, ids from a fixed salt
    matplotlib.rcParams["svg.hashsalt"] = "atomkit"
    import matplotlib.pyplot as plt
    write_dat(out, name, head, rows)
    figr, ax = plt.subplots(figsize=(11, 6.5))
    nan = lambda y: math.nan if y is None else y
    if kind == "bars":
        n = len(head) - 1
        for j in range(n):
            ax.bar([i + (j - (n - 1) / 2) * 0.8 / n for i in range(len(rows))],
                   [nan(ys[j]) for _, ys in rows], 0.8 / n, label=head[j + 1])
        ax.set_xticks(range(len(rows)), [str(x) for x, _ in rows],
                      rotation=-45 if len(rows) > 6 else 0, ha="left"
                      if len(rows) > 6 else "center")
        if style == "baseline":
            ax.axhline(1, color="black", linestyle="--", linewidth=1)
    else:
        for j, lab in enumerate(head[1:]):
            pts = [(x, ys[j]) for x, ys in rows if ys[j] is not None
                   and not math.isnan(ys[j])]
            st = (style or {}).get(lab, {})
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    label=lab, **st)
        ax.set_xscale("log", base=2)
        ax.set_xticks([x for x, _ in rows], [str(x) for x, _ in rows])
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
    if b.f("suite") != "prim" or b.f("metric") != "lat":
        return None
    if b.f("arch") == "ref":
        return b.f("op") if b.f("op") in ("spinlock", "mutex") else None
    if b.f("arch") == "generic" or b.n("width") == 32 or not b.f("variant"):
        return None
    return f"{b.f('op')}/{b.f('variant')}"


def plots(sets, out):
    keys = []
    for s in sets:
        for b in s.bench:
            k = None if b.skip else plotted_prim(b)
            if k and k not in keys:
                keys.append(k)
    if not keys:
        note("plot: no uncontended primitives in the sets: no "
             "primitives.svg")
    else:
        def ns(s, k):
            f = next((b.fig("real_time") for b in s.bench
                      if plotted_prim(b) == k and
                      not math.isnan(b.fig("real_time").v)), None)
            return f.v if f else None
        yield draw(out, "primitives", "Cost per primitive, uncontended "
                   "latency (median, ns)", "bars", ["primitive"] + [
                       f"{s.machine_name()} {s.set_name()}" for s in sets],
                   [(k, [ns(s, k) for s in sets]) for k in keys], "", "ns")
    tags = []
    for s in sets:
        tag = safe(f"{s.machine_name()}-{s.set_name()}")
        n, base = 1, tag
        while tag in tags:
            n += 1
            tag = f"{base}-{n}"
        tags.append(tag)
        name = f"{s.machine_name()} {s.set_name()}"
        for p in dict.fromkeys(b.f("placement") for b in
                               s.each("suite=contention placement!=")):
            for gen in ("!", ""):
                bs = [b for b in s.each(f"suite=contention placement={p} "
                                        f"arch{gen}=generic") if not b.skip]
                if not bs:
                    continue
                ks = list(dict.fromkeys(prim_id(b) for b in bs))
                thr = sorted({b.threads for b in bs})
                ops = {(b.threads, prim_id(b)): b.fig("ops").v / 1e6
                       for b in reversed(bs)}
                yield draw(out, f"contention-{tag}-{p}"
                           f"{'-generic' if gen == '' else ''}",
                           f"Contention on one line, {name}, placement {p}"
                           f"{', generic C11' if gen == '' else ''} (Mops/s,"
                           " all threads, median)", "lines", ["threads"] + ks,
                           [(t, [ops.get((t, k)) for k in ks]) for t in thr],
                           "threads", "Mops/s")
        bs = [b for b in s.each("suite=slab workload=bulk|bulk_fallback "
                                "bulk!=") if not b.skip]
        if bs:
            cols = list(dict.fromkeys(
                f"{b.f('design')} " + ("bulk" if b.f("workload") == "bulk"
                                       else "single calls") for b in bs))
            sizes = sorted({b.n("bulk") for b in bs})

            def t(c, z):
                d, _, k = c.partition(" ")
                wl = "bulk" if k == "bulk" else "bulk_fallback"
                return fig(s.find(f"suite=slab workload={wl} design={d} "
                                  f"bulk={z}"), "real_time").v
            colours = list(dict.fromkeys(c.split()[0] for c in cols))
            style = {c: dict(color=f"C{colours.index(c.split()[0]) % 10}",
                             linestyle="--" if "single" in c else "-")
                     for c in cols}
            yield draw(out, f"bulk-{tag}", "Bulk alloc+free of 256-byte "
                       f"objects, {name} (ns per object, median; dashed: "
                       "single calls)", "lines", ["bulk"] + cols,
                       [(z, [t(c, z) for c in cols]) for z in sizes],
                       "objects per call (N)", "ns per object", style)
        m = s.macro
        for wl in macro.ran(m, "workloads") if m else []:
            base = macro.MStat(wl, m["ak_baseline"])
            if not base.ok:
                continue
            rows = []
            for a in macro.ran(m, "allocators"):
                st = macro.MStat(wl, a["name"])
                rows.append((safe(a["name"]), [
                    st.f[k].v / base.f[k].v if st.ok and base.f[k].v else
                    None for k in (macro.ELAPSED, macro.RSS)]))
            bl = m["ak_baseline"]
            yield draw(out, f"macro-{tag}-{safe(wl['name'])}",
                       f"{wl['name']}, {name}: elapsed and peak RSS / {bl} "
                       "(means; lower is better)", "bars",
                       ["allocator", f"elapsed / {bl}", f"peak RSS / {bl}"],
                       rows, "", f"relative to {bl}", "baseline")


def cmd_plot(paths, out):
    sets = [s for s in map(load_set, paths) if s.usable]
    status = exit_status(len(sets))
    if not sets:
        return status
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        problem(f"{out}: cannot create the folder: {e.strerror}")
        return 3
    try:
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
