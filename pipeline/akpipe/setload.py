"""A result set read and checked (doc/report.md, "Input"), its figures,
the noise rule and number formats; problems go to stderr, one a line."""
import dataclasses
import math
import os
import re
import statistics
import sys

from . import schema

NAN = math.nan
PROBLEMS = [0]          # problems reported in this run: the exit status
KNOWN_SUITES = ["harness", "uncontended", "percpu", "casfail", "contention",
                "cacheline", "xcheck", "slab", "slab-tcmalloc",
                "slab-jemalloc", "slab-mimalloc"]


def note(msg):
    """A line on stderr that is not a problem with the input."""
    sys.stdout.flush()
    print(f"atomkit-report: {msg}", file=sys.stderr, flush=True)


def problem(msg):
    note(msg)
    PROBLEMS[0] += 1


def exit_status(usable):
    return 3 if not usable else 1 if PROBLEMS[0] else 0


@dataclasses.dataclass
class Fig:
    """A figure: median (or the one run), cv, min - max over the runs."""
    v: float = NAN
    reps: int = 0
    cv: float = NAN
    min: float = NAN
    max: float = NAN
    n: int = 0

    def scaled(self, k):
        return dataclasses.replace(self, v=self.v * k, min=self.min * k,
                                   max=self.max * k)


_SCALE = {None: 1, "ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def row_num(row, field, scale=True):
    v = row.get(field)
    if not schema.is_num(v):
        return NAN
    if scale and field in ("real_time", "cpu_time"):
        return v * _SCALE.get(row.get("time_unit"), NAN)
    return float(v)


class Bench:
    """Every row Google Benchmark wrote for one run_name; its identity
    fields (ak_*) are strings or integers once the schema checked them."""

    def __init__(self, name, row, suite):
        self.name, self.id, self.suite = name, row, suite
        self.label, self.skip, self.threads, self.reps = "", None, 0, 0
        self.median, self.cv, self.iter = {}, {}, []
        self.ids = {k[3:]: str(v) for k, v in row.items()
                    if k.startswith("ak_")}

    def f(self, key):
        """A string identity field ("op"), "" if absent."""
        v = self.id.get("ak_" + key)
        return v if isinstance(v, str) else ""

    def n(self, key):
        v = self.id.get("ak_" + key)
        return v if schema.is_int(v) else -1

    def vals(self, field):
        """The field's value in each run that has it."""
        return [x for x in (row_num(r, field) for r in self.iter)
                if not math.isnan(x)]

    def fig(self, field):
        f, vals = Fig(reps=self.reps), self.vals(field)
        if self.skip:
            return f
        if vals:
            f.min, f.max, f.n = min(vals), max(vals), len(vals)
        f.v = row_num(self.median, field)
        f.cv = row_num(self.cv, field, False)
        if math.isnan(f.v) and vals:
            f.v = statistics.median(vals)
        mean = sum(vals) / len(vals) if vals else 0
        if math.isnan(f.cv) and len(vals) > 1 and mean != 0:
            var = sum((x - mean) ** 2 for x in vals) / (len(vals) - 1)
            f.cv = math.sqrt(var) / abs(mean)
        return f


def fig(b, field):
    return b.fig(field) if b else Fig()


class Set:
    def __init__(self, path):
        self.path = path.rstrip("/") or "/"
        self.machine, self.schema, self.usable, self.why = {}, None, True, ""
        self.problems, self.emulated, self.pus, self.reps = 0, False, 0, 0
        self.counter, self.unit = "", "ns"
        self.suites, self.missing, self.bench, self.index = [], [], [], {}
        self.macro, self.macro_damaged, self._q = None, False, {}

    def msg(self, text, reject=False):
        problem(text)
        self.problems += 1
        self.why = text if reject or not self.why else self.why
        self.usable = self.usable and not reject

    def mach(self, key):
        return self.machine.get(key, "")

    def machine_name(self):
        return self.mach("ak_machine") or path_comp(self.path, 1) or self.path

    def set_name(self):
        return self.mach("ak_set") or path_comp(self.path, 0)

    def why_short(self):
        return re.sub("^" + re.escape(self.path) + "(: |/)", "", self.why)

    def each(self, spec):
        """Benchmarks matching "suite=slab size=64|128 arch!=ref"."""
        if spec not in self._q:
            sp = [(k.rstrip("!"), k.endswith("!"), v.split("|")) for k, _, v
                  in (p.partition("=") for p in spec.split())]
            self._q[spec] = [b for b in self.bench if all(
                (b.ids.get(k, "") in vals) != neg for k, neg, vals in sp)]
        return self._q[spec]

    def find(self, spec):
        return next(iter(self.each(spec)), None)

    def slab(self, wl, design, size):
        return self.find(f"suite=slab workload={wl} design={design} "
                         f"size={size}")

    def unit_fig(self, b, prefix=""):
        return fig(b, prefix + self.counter) if self.counter and b else Fig()

    def best(self, wl, arg, v, prefix="", mallocs=False):
        """(design, figure) lowest in the unit at slab wl, arg = v."""
        who, best = None, Fig()
        for b in self.each(f"suite=slab workload={wl} {arg}={v}"):
            f = self.unit_fig(b, prefix)
            if b.f("design").startswith("malloc-") == mallocs and \
                    not math.isnan(f.v) and (who is None or f.v < best.v):
                who, best = b.f("design"), f
        return who, best

    def runs(self):
        if self.reps > 1:
            return f"median of {self.reps} runs"
        return f"1 run each ({self.mach('ak_run_mode') or 'quick'} mode)"


def path_comp(path, up):
    parts = path.split("/")
    return parts[-1 - up] if up < len(parts) else ""


def prim_id(b):
    v = b.f("variant")
    return f"{b.f('arch')}/{b.f('op')}{'/' if v else ''}{v}"


def _load_machine(s):
    path = f"{s.path}/machine.json"
    if not os.path.isfile(path):
        return s.msg(f"{s.path}: no machine.json: not a result set "
                     "(scripts/run-bench writes one)", True)
    try:
        doc = schema.load_json(path)
    except schema.SetError as e:
        return s.msg(f"{path}: {e}", True)
    probs, why = schema.check_machine(doc)
    for p in probs + [why] * bool(why):
        s.msg(f"{path}: {p}", p is why)
    if isinstance(doc, dict):
        s.schema = doc.get("ak_schema")
    if not s.usable:
        return
    s.machine, s.counter = doc, doc.get("ak_counter", "")
    if not s.counter:
        return s.msg(f"{path}: no ak_counter: figures in ns only")
    s.emulated = s.mach("ak_emulated").startswith("yes")
    s.pus = int(re.match(r"\d*", s.mach("ak_pus").lstrip()).group(0) or 0)
    unit = re.split(r"\(| at ", s.mach("ak_counter_unit"))[0].rstrip(" ")
    s.unit = (unit or s.counter)[:63]


def _load_suite(s, stem):
    path = f"{s.path}/{stem}.json"
    try:
        probs, rows = schema.check_suite(schema.load_json(path), s.counter)
    except schema.SetError as e:
        probs, rows = [str(e)], None
    if rows is None:
        return s.msg(f"{path}: {probs[0]}")
    s.suites.append(stem)
    for p in probs:
        s.msg(f"{path}: {p}")
    for row in rows:
        run = row.get("run_name", row["name"])
        b = s.index.setdefault(run, Bench(run, row, stem))
        if b.suite != stem:
            s.msg(f"{path}: {run} is also in {b.suite}.json: kept that one")
            continue
        if b.id is row:
            s.bench.append(b)
        b.label = b.label or row.get("label", "")
        b.threads = b.threads or int(row.get("threads") or 0)
        b.reps = max(b.reps, int(row.get("repetitions") or 0))
        s.reps = max(s.reps, b.reps)
        if row.get("error_occurred") is True:
            b.skip = row.get("error_message") or "skipped (no reason given)"
        elif row.get("aggregate_name") in ("median", "cv"):
            setattr(b, row["aggregate_name"], row)
        elif row.get("run_type", "iteration") == "iteration":
            b.iter.append(row)


def load_set(path):
    s = Set(path)
    try:
        stems = [n[:-5] for n in os.listdir(s.path) if n.endswith(".json")
                 and len(n) > 5 and n not in ("machine.json", "macro.json")]
    except OSError as e:
        s.msg(f"{s.path}: " + ("not a directory: a result set is a folder "
                               "(results/<arch>/<machine>/<date>-<rev>/)"
                               if isinstance(e, NotADirectoryError) else
                               e.strerror), True)
        return s
    _load_machine(s)
    if not s.usable:
        return s
    rank = {n: i for i, n in enumerate(KNOWN_SUITES)}
    for stem in sorted(stems, key=lambda n: (rank.get(n, len(rank)), n)):
        _load_suite(s, stem)
    macro = f"{s.path}/macro.json"
    if os.path.exists(macro):
        try:
            s.macro = schema.load_json(macro)
            e = schema.check_macro(s.macro)
        except schema.SetError as x:
            e = str(x)
        if e:
            s.msg(f"{macro}: {e}: the whole programs are left out")
            s.macro, s.macro_damaged = None, True
    have = stems + (["macro"] if os.path.exists(macro) else [])
    s.missing = [t for t in dict.fromkeys(s.mach("ak_suites").split())
                 if t not in have]
    if not stems and not s.macro:
        s.msg(f"{s.path}: empty: no suite results", True)
    elif not s.bench and not s.macro:
        s.msg(f"{s.path}: no benchmark could be read from any suite file",
              True)
    return s


def div(a, b):
    """a / b as C computes it: inf or NaN, never an exception."""
    if b == 0:
        return NAN if a == 0 or math.isnan(a) else math.copysign(
            math.inf, a) * math.copysign(1, b)
    return a / b


def noise(a, b):
    """The noise rule (doc/report.md): noise, distinct or unjudged.  Two
    figures are noise where their ranges overlap, or where they differ by
    less than twice the larger cv."""
    ra, rb = a.n > 1, b.n > 1
    ca, cb = (not math.isnan(f.cv) and f.reps > 1 for f in (a, b))
    if not (ra or rb or ca or cb):
        return "unjudged"
    alo, ahi = (a.min, a.max) if ra else (a.v, a.v)
    blo, bhi = (b.min, b.max) if rb else (b.v, b.v)
    cv = max(a.cv if ca else 0, b.cv if cb else 0)
    lo = min(abs(a.v), abs(b.v))
    if (ra or rb) and alo <= bhi and blo <= ahi or (ca or cb) and lo > 0 \
            and abs(a.v - b.v) / lo < 2 * cv:
        return "noise"
    return "distinct"


def num(v):
    """Three significant digits, no decimals from 100 up."""
    if math.isnan(v):
        return "–"
    return "%.0f" % v if abs(v) >= 99.95 or v == 0 else \
        ("%#.3g" % v).rstrip(".")


def count(v):
    """A whole number in full."""
    return "%.0f" % v if v % 1 == 0 and abs(v) < 1e15 else num(v)


def pct(frac):
    p = frac * 100
    return "–" if math.isnan(p) else ("%.0f%%" if abs(p) >= 9.95 else
                                      "%.1f%%" if abs(p) >= 0.995 else
                                      "%.2f%%") % p


def spread(f):
    """min - max over the runs, and the cv where there were repetitions."""
    cv = f", cv {pct(f.cv)}" if not math.isnan(f.cv) and f.reps > 1 else ""
    return (f"{num(f.min)} - {num(f.max)}{cv}" if f.n > 1 else cv[2:] or (
        "–" if math.isnan(f.v) else "1 run"))


def rng(f):
    return f" ({num(f.min)} - {num(f.max)})" if f.n >= 2 else ""
