"""`compare A B`: each benchmark side by side, B/A, flagged only where
scipy's Mann-Whitney U test and our noise rule agree."""
import math

from .setload import load_set, exit_status, problem, note, num, pct, \
    spread, noise, div
from .table import Table, w, md, T, OUT

ALPHA = 0.05            # Google Benchmark's tools/compare.py
NO_SCIPY = []           # said once
# verdict: (the words in the table, the flag in text, the summary's words)
VERDICT = dict(faster=("faster", "faster", "faster"),
               slower=("slower", "slower", "slower"),
               noise=("noise", "", ""),
               faster1=("faster? (1 run: noise not judged)", "faster?", ""),
               slower1=("slower? (1 run: noise not judged)", "slower?", ""),
               same1=("same (1 run)", "", ""),
               differs=("differs", "differs",
                        "ratios (no better direction) differ"),
               skipped=("skipped", "", "skipped in A or B"),
               nofig=("no figure", "", "without a figure"))
SECT = ("suite", "arch", "workload", "placement")
ROWK = ("op", "variant", "ordering", "metric", "outcome", "state", "design",
        "mode", "cpu_partial", "size", "bulk")
HEAD = (("machine", "ak_machine"), ("arch", "ak_arch"),
        ("CPU", "ak_cpu_model"), ("kernel", "ak_kernel"),
        ("compiler", "ak_compiler"), ("rev", "ak_git_rev"),
        ("counter", "ak_counter_unit"), ("run mode", "ak_run_mode"),
        ("figures", None), ("emulated", "ak_emulated"))


def primary(sa, sb, a, b, ns):
    """(figure of A, of B, their runs, unit, better direction: -1 lower,
    1 higher, 0 none)."""
    fld, k, unit, d = dict(contention=("ops", 1e-6, "Mops/s", 1),
                           xcheck=("ratio_suite", 1, "ratio", 0)).get(
        a.f("suite"), (sa.counter, 1, sa.unit, -1))
    fa, fb = a.fig(fld).scaled(k), b.fig(fld).scaled(k)
    if d < 0 and (ns or math.isnan(fa.v) or math.isnan(fb.v)):
        fld, unit = "real_time", "ns"
        fa, fb = a.fig(fld), b.fig(fld)
    return fa, fb, a.vals(fld), b.vals(fld), unit, d


def utest(xa, xb):
    """The U test's p-value; None where the runs are too few for it ever
    to reach ALPHA (2 / C(na + nb, na): 4 runs on each side)."""
    if 2 / math.comb(len(xa) + len(xb), len(xa)) >= ALPHA:
        return None
    try:
        from scipy.stats import mannwhitneyu
    except ImportError:
        if not NO_SCIPY:
            NO_SCIPY.append(note("scipy not installed (python3-scipy): "
                                 "compare judges by the noise rule alone"))
        return None
    return mannwhitneyu(xa, xb, alternative="two-sided").pvalue


def judge(a, b, fa, fb, p, d):
    """The verdict: flagged only where the noise rule finds the two
    distinct and the U test, where it could run, agrees."""
    if a.skip or b.skip:
        return "skipped"
    if math.isnan(fa.v) or math.isnan(fb.v) or fa.v == 0:
        return "nofig"
    v, better = noise(fa, fb), (fb.v - fa.v) * d > 0
    if v == "noise" or (v == "distinct" and p is not None and p >= ALPHA):
        return "noise"
    one = "" if v == "distinct" else "1"
    return ("same1" if one and fb.v == fa.v else "differs" if not d else
            ("faster" if better else "slower") + one)


def ident(b, keys):
    return " ".join(f"{k}:{b.n(k)}" if b.n(k) >= 0 else b.f(k)
                    for k in keys if b.n(k) >= 0 or b.f(k))


def text_rows(rows):
    """In text, a table per section of benchmarks, short row labels."""
    w(T("compare.intro") + "\n\n")
    sects = {}
    for r in rows:
        sects.setdefault(f"{ident(r[0], SECT)}, {r[4]}", []).append(r)
    for key, rs in sects.items():
        w(f"### {key}\n\n")
        t = Table("lrrrl", ["", "before", "after", "delta", ""])
        for a, b, fa, fb, unit, v, p in rs:
            lab = " ".join(filter(None, [ident(a, ROWK), a.threads > 1 and
                                         f"threads:{a.threads}"]))
            t.add(lab or a.name.partition("/")[2] or a.name)
            for x, f in ((a, fa), (b, fb)):
                t.add(f"({t.note(md('s', x.skip))})" if x.skip else num(f.v))
            t.add("–" if v in ("skipped", "nofig") else
                  "+" * (fb.v >= fa.v) + pct(div(fb.v, fa.v) - 1),
                  VERDICT[v][1])
        t.print()
        w("\n")


def cmd_compare(pa, pb):
    a, b = load_set(pa), load_set(pb)
    if a.schema and b.schema and a.schema != b.schema:
        problem(f"compare: {a.path} has schema {a.schema}, {b.path} has "
                f"schema {b.schema}: not comparable")
        return 3
    if not a.usable or not b.usable:
        problem("compare: nothing compared: "
                f"{a.path if not a.usable else b.path} was rejected")
        return 3
    ns = (not a.counter or a.counter != b.counter
          or a.machine_name() != b.machine_name())
    rows, c = [], dict.fromkeys(VERDICT, 0)
    for x in a.bench:
        y = b.index.get(x.name)
        if y:
            fa, fb, xa, xb, unit, d = primary(a, b, x, y, ns)
            p = utest(xa, xb) if not (x.skip or y.skip) else None
            v = judge(x, y, fa, fb, p, d)
            c[v] += 1
            rows.append((x, y, fa, fb, unit, v, p))
    w("# Compare\n\n")
    t = Table("lll", [None, "A", "B"])
    t.add("set", md("t", a.path), md("t", b.path))
    for k, key in HEAD:
        t.add(k, *(md("t", s.mach(key)) if key else s.runs() for s in (a, b)))
    t.print()
    w("\n")
    for cond, key in ((a.machine_name() != b.machine_name(), "machines"),
                      (ns, "ns")):
        w(T("compare." + key) + "\n\n" if cond else "")
    if a.emulated or b.emulated:
        w("**emulated: correctness only, figures mean nothing.**\n\n")
    w(f"Of {len(rows)} benchmarks in both: {c['faster']} faster and "
      f"{c['slower']} slower beyond the noise, {c['noise']} within the "
      "noise")
    if c["faster1"] + c["slower1"] + c["same1"]:
        w(f"; {c['faster1']} faster, {c['slower1']} slower and {c['same1']} "
          "the same on single runs, where the noise cannot be judged")
    w("".join(f"; {c[k]} {VERDICT[k][2]}" for k in ("differs", "skipped",
                                                     "nofig") if c[k]))
    w(f". Only in A: {sum(x.name not in b.index for x in a.bench)}; only in"
      f" B: {sum(y.name not in a.index for y in b.bench)}.\n\n")
    w(T("compare.figures", alpha=f"{ALPHA:g}", n=sum(
        r[6] is not None for r in rows), of=len(rows)) + "\n\n")
    if OUT.text:
        text_rows(rows)
        return exit_status(2)
    t = Table("llrrrlll", ["benchmark", "unit", "A", "B", "B/A", "A spread",
                           "B spread", "verdict"])
    for x, y, fa, fb, unit, v, p in rows:
        t.add(md("c", x.name), unit)
        if v == "skipped":
            t.add(md("s", x.skip) if x.skip else num(fa.v),
                  md("s", y.skip) if y.skip else num(fb.v), "–", None, None,
                  "skipped")
        else:
            t.add(num(fa.v), num(fb.v), num(div(fb.v, fa.v)), spread(fa),
                  spread(fb), VERDICT[v][0] + (
                      f" (U test p {p:.2f})" if p is not None and v == "noise"
                      and noise(fa, fb) == "distinct" else ""))
    t.print()
    return exit_status(2)
