"""Each file kind of a set (machine.json, a suite's JSON, macro.json):
one schema, checked when read and before it is written."""
import json
import os
import re
import tempfile

MACHINE_SCHEMA = "1"            # machine.json's ak_schema
MACRO_SCHEMAS = ("1", "2")      # macro.json's ak_macro_schema, oldest first


class SetError(Exception):
    """A file that cannot be used: its message names what is wrong."""


def jtype(v):
    for t, name in ((dict, "an object"), (list, "an array"),
                    (str, "a string"), (bool, "a boolean"),
                    ((int, float), "a number"), (type(None), "null")):
        if isinstance(v, t):
            return name
    return "something else"


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _pairs(pairs):
    d = dict(pairs)
    if len(d) < len(pairs):
        k = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise ValueError(f"duplicate object key '{k}'")
    return d


# Google Benchmark writes an undefined value (the cv of a counter whose
# mean is 0) as a bare NaN, which is not JSON: read as null, no problem.
_BARE = re.compile(r'"(?:\\.|[^"\\])*"|-?(?:Infinity|NaN|nan)')


def loads(text):
    return json.loads(text, object_pairs_hook=_pairs,
                      parse_constant=lambda c: None)


def load_json(path):
    """The document in path; SetError saying why not (no path in it)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise SetError(f"cannot read: {e.strerror}") from None
    try:
        return loads(text)
    except ValueError as e:
        first = e
    try:
        return loads(_BARE.sub(lambda m: m.group(0) if m.group(0)[0] == '"'
                               else "null", text))
    except ValueError:
        pass
    line, col, msg = (getattr(first, a, None) for a in ("lineno", "colno",
                                                         "msg"))
    if line is None:
        raise SetError(f"not valid JSON: {first}") from None
    end = first.pos >= len(text.rstrip())
    raise SetError(f"not valid JSON at line {line}, column {col}: {msg}"
                   + (" (truncated?)" if end else "")) from None


def check_machine(doc):
    """(problems, rejection or None) of machine.json; drops non-strings."""
    if not isinstance(doc, dict):
        return [], f"expected an object, found {jtype(doc)}"
    probs = []
    for k in [k for k, v in doc.items() if not isinstance(v, str)]:
        probs.append(f"{k}: expected a string, found {jtype(doc.pop(k))}")
    if "ak_schema" not in doc:
        return probs, ("no ak_schema: not a set this atomkit-report can read"
                       f" (it reads version {MACHINE_SCHEMA})")
    if doc["ak_schema"] != MACHINE_SCHEMA:
        return probs, (f"schema version {doc['ak_schema']} is unknown (this "
                       f"atomkit-report reads version {MACHINE_SCHEMA})")
    return probs, None


# The fields of a benchmark row: Google Benchmark's strings and the
# identity fields atomkit-bench writes (doc/benchmarks.md).
STR_FIELDS = set("""name run_name run_type aggregate_name aggregate_unit
time_unit label error_message ak_suite ak_arch ak_op ak_variant ak_ordering
ak_insn ak_metric ak_outcome ak_state ak_placement ak_mode ak_workload
ak_design ak_cpu_partial""".split())
INT_FIELDS = {"ak_width", "ak_size", "ak_bulk"}


def check_row(row, where):
    """(problems, keep); a field of a wrong type is dropped."""
    if not isinstance(row, dict):
        return [f"{where}: expected an object, found {jtype(row)}"], False
    probs = []
    had_name, had_time = "name" in row, "real_time" in row
    for k, v in list(row.items()):
        want = None
        if k in STR_FIELDS:
            want = None if isinstance(v, str) else "a string"
        elif k in INT_FIELDS:
            want = None if is_int(v) else "an integer"
        elif k.startswith("ak_"):
            probs.append(f"{where}.{k}: not a field atomkit-bench writes: "
                         "ignored")
            del row[k]
        elif k == "error_occurred":
            want = None if isinstance(v, bool) else "a boolean"
        elif not is_num(v) and v is not None:
            want = "a number"
        if want:
            probs.append(f"{where}.{k}: expected {want}, found {jtype(v)}")
            del row[k]
    for k in ("real_time", "cpu_time"):
        v = row.get(k, 0)
        if row.get("run_type", "iteration") == "iteration" and \
                row.get("error_occurred") is not True and (
                    v is None or is_num(v) and v < 0):
            probs.append(f"{where}.{k}: " + (
                "NaN or null: not a time" if v is None else
                f"{v:g} is negative: times are never below 0") +
                ": the field is dropped")
            del row[k]
    if not had_name:
        probs.append(f"{where}: no name: row left out")
    if "name" not in row:
        return probs, False
    if not isinstance(row.get("ak_suite"), str):
        probs.append(f"{where}: no ak_suite: row left out (written before "
                     "atomkit-bench labelled its results? "
                     "scripts/label-results adds the fields)")
        return probs, False
    if not had_time and row.get("error_occurred") is not True \
            and "aggregate_name" not in row:
        probs.append(f"{where}.real_time: missing")
    return probs, True


def check_suite(doc, counter=""):
    """(problems, rows kept) of a suite's Google Benchmark JSON."""
    if not isinstance(doc, dict):
        return [f"expected an object at the top, found {jtype(doc)}"], None
    probs, ctx = [], doc.get("context")
    if ctx is None and "context" not in doc:
        probs.append("context: missing")
    elif not isinstance(ctx, dict):
        probs.append(f"context: expected an object, found {jtype(ctx)}")
    elif "ak_counter" in ctx:
        v = ctx["ak_counter"]
        if not isinstance(v, str):
            probs.append(f"context.ak_counter: expected a string, found "
                         f"{jtype(v)}")
        elif counter and v != counter:
            probs.append(f'context.ak_counter is "{v}" but machine.json '
                         f'says "{counter}": this file\'s counters are not '
                         "in the set's unit")
    if "benchmarks" not in doc:
        return probs + ["benchmarks: missing"], []
    arr = doc["benchmarks"]
    if not isinstance(arr, list):
        return probs + [f"benchmarks: expected an array, found "
                        f"{jtype(arr)}"], []
    rows = []
    for i, row in enumerate(arr):
        p, keep = check_row(row, f"benchmarks[{i}]")
        probs += p
        if keep:
            rows.append((i, row))
    return probs, rows


# macro.json's members: type letters s n i b o a, "?" null allowed,
# a trailing "-" the member may be absent.
M_TOP = dict(ak_macro_schema="s", ak_set="s", ak_run_mode="s",
             ak_run_started="s", ak_run_finished="s", ak_git_rev="s",
             ak_runs="i", ak_jobs="i", ak_threads="i", ak_timeout_s="n",
             ak_baseline="s", ak_failures="i", allocators="a", workloads="a")
M_ALLOC = dict(name="s", kind="s", library="s?", preload="s?", env="o",
               status="s", reason="s-", variant_of="s-")
M_WORK = dict(name="s", kind="s", description="s", inputs="s", status="s",
              reason="s-", command="s-", env="o-", versions="s-", tree="o-",
              baseline_output="s-", results="a-")
RAN_ONLY = ("command", "env", "versions", "baseline_output", "results")
M_RESULT = dict(allocator="s", runs="a")
M_RUN = dict(run="i", elapsed_s="n", user_s="n", system_s="n",
             max_rss_kb="n", minor_faults="n", major_faults="n",
             voluntary_switches="n", involuntary_switches="n",
             exit_status="i?", signal="i?", timed_out="b",
             output_sha256="s", output_bytes="n",
             output_matches_baseline="b", ok="b", note="s-",
             malloc_counters="o-")
M_COUNTERS = {k: "i" for k in """processes refills slabs_made slabs_released
large_allocs heap_hits heap_misses maps unmaps madvise_calls fallback_allocs
deferred_frees mapped_bytes_max mapped_bytes_sum dirty_bytes_max
dirty_bytes_sum purged_bytes_max purged_bytes_sum meta_bytes_max
meta_bytes_sum""".split()}
_TYPES = dict(s=("a string", lambda v: isinstance(v, str)),
              n=("a number", is_num), i=("an integer", is_int),
              b=("a boolean", lambda v: isinstance(v, bool)),
              o=("an object", lambda v: isinstance(v, dict)),
              a=("an array", lambda v: isinstance(v, list)))


def check_obj(o, members, where):
    """The first thing wrong with object o against its members, or None."""
    dot = "." if where else ""
    if not isinstance(o, dict):
        return (f"{where}: expected an object, found {jtype(o)}" if where
                else f"expected an object at the top, found {jtype(o)}")
    for key, t in members.items():
        want, ok = _TYPES[t[0]]
        if key not in o:
            if "-" in t:
                continue
            return f"{where}{dot}{key}: missing"
        v = o[key]
        if not (ok(v) or (v is None and "?" in t)):
            return (f"{where}{dot}{key}: expected {want}"
                    f"{' or null' if '?' in t else ''}, found {jtype(v)}")
        if is_num(v) and v < 0:
            return (f"{where}{dot}{key}: {v:g} is negative: times and "
                    "counts are never below 0")
    return None


def macro_version(m):
    v = m.get("ak_macro_schema")
    return MACRO_SCHEMAS.index(v) + 1 if v in MACRO_SCHEMAS else 0


def _entry(o, what, key, val):
    return next((e for e in o.get(what) or [] if isinstance(e, dict)
                 and e.get(key) == val), None)


def _status(o, where):
    if o.get("status") not in ("ran", "skipped"):
        return f'{where}.status: "{o.get("status", "")}" is neither ran ' \
            'nor skipped'
    if o["status"] == "skipped" and "reason" not in o:
        return f"{where}.reason: missing (it was skipped)"
    return None


def _counters(m, a, run, where):
    c, design = run.get("malloc_counters"), a.get("kind") == "design"
    if c is None and design and macro_version(m) >= 2:
        return (f"{where}.malloc_counters: missing (a run of a design, "
                f"ak_macro_schema {MACRO_SCHEMAS[-1]})")
    if c is None:
        return None
    if not design:
        return (f"{where}.malloc_counters: {a['name']} is not a design: "
                "only libatomkit-malloc.so has counters")
    w = f"{where}.malloc_counters"
    e = check_obj(c, M_COUNTERS, w)
    if not e and run.get("ok") is True and not c.get("processes"):
        e = (f"{w}.processes: 0 in a run that is ok (a design's run where "
             "no process reported fails)")
    return e


def _workload(m, wl, where, failed):
    e = check_obj(wl, M_WORK, where) or _status(wl, where)
    if e or wl["status"] != "ran":
        return e
    for k in RAN_ONLY:
        if k not in wl:
            return f"{where}.{k}: missing (the workload ran)"
    for j, res in enumerate(wl["results"]):
        w = f"{where}.results[{j}]"
        e = check_obj(res, M_RESULT, w)
        if e:
            return e
        a = _entry(m, "allocators", "name", res["allocator"])
        if not a or a.get("status") != "ran":
            return (f'{w}.allocator: "{res["allocator"]}" is not an '
                    "allocator that ran (allocators)")
        for k, run in enumerate(res["runs"]):
            wr = f"{w}.runs[{k}]"
            e = check_obj(run, M_RUN, wr)
            if not e and not 1 <= run["run"] <= m["ak_runs"]:
                e = (f"{wr}.run: {run['run']} is not one of the "
                     f"{m['ak_runs']} runs (ak_runs)")
            e = e or _counters(m, a, run, wr)
            if e:
                return e
            failed[0] += run["ok"] is not True
    return None


def check_macro(m):
    """The first thing wrong with macro.json m, or None."""
    e = check_obj(m, M_TOP, "")
    if e:
        return e
    if not macro_version(m):
        return (f"ak_macro_schema: version {m['ak_macro_schema']} is unknown"
                f" (this atomkit-report reads versions "
                f"{' and '.join(MACRO_SCHEMAS)})")
    for i, a in enumerate(m["allocators"]):
        w = f"allocators[{i}]"
        e = check_obj(a, M_ALLOC, w) or _status(a, w)
        if not e and _entry(m, "allocators", "name", a["name"]) is not a:
            e = f'{w}.name: "{a["name"]}" is listed twice'
        v = a.get("variant_of") if not e else None
        if v is not None and (a["kind"] != "design" or (_entry(
                m, "allocators", "name", v) or {}).get("kind") != "design"):
            e = (f'{w}.variant_of: "{v}" is not a design of this file, or '
                 f'{a["name"]} is not one')
        if e:
            return e
    failed = [0]
    for i, wl in enumerate(m["workloads"]):
        e = _workload(m, wl, f"workloads[{i}]", failed)
        if e:
            return e
    if failed[0] != m["ak_failures"]:
        return (f"ak_failures: {m['ak_failures']}, but {failed[0]} runs "
                "are not ok")
    return None


def write_json(path, doc, kind):
    """Validates doc as kind, then writes it whole (temp + rename)."""
    doc = json.loads(json.dumps(doc))
    if kind not in ("machine", "suite", "macro"):
        raise ValueError(f"unknown file kind {kind!r}")
    probs, why = (check_machine(doc) if kind == "machine" else
                  (check_suite(doc)[0], None) if kind == "suite" else
                  ([], check_macro(doc)))
    probs = probs + [why] if why else probs
    if probs:
        raise SetError(f"{path}: {probs[0]}")
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
