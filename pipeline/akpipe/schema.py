"""Each file kind of a set (machine.json, a suite's JSON, macro.json):
one declarative spec, walked by one function when read and before it is
written.  A spec maps a member to a type code: s n i b o a (string,
number, integer, boolean, object, array), "?" null allowed, "-" the
member may be absent; "*" stands for the members not named."""
import functools
import json
import os
import re
import tempfile

MACHINE_SCHEMA = "1"            # machine.json's ak_schema
MACRO_SCHEMAS = ("1", "2")      # macro.json's ak_macro_schema, oldest first
TYPES = dict(s=("a string", str), n=("a number", (int, float)),
             i=("an integer", int), b=("a boolean", bool),
             o=("an object", dict), a=("an array", list))


def spec(text, default):
    """A spec from "member:code ...", a bare member of the default code."""
    return {k: c or default for k, _, c in (m.partition(":")
                                            for m in text.split())}


MACHINE = {"*": "s-"}
# A benchmark row: Google Benchmark's strings and the identity fields
# atomkit-bench writes (doc/benchmarks.md), and Google Benchmark's figures.
ROW = spec("""name run_name run_type aggregate_name aggregate_unit time_unit
label error_message ak_suite ak_arch ak_op ak_variant ak_ordering ak_insn
ak_metric ak_outcome ak_state ak_placement ak_mode ak_workload ak_design
ak_cpu_partial ak_width:i- ak_size:i- ak_bulk:i- error_occurred:b-
*:n?-""", "s-")
SUITE = dict(context="o", benchmarks="a")
M_TOP = spec("""ak_macro_schema ak_set ak_run_mode ak_run_started
ak_run_finished ak_git_rev ak_runs:i ak_jobs:i ak_threads:i ak_timeout_s:n
ak_baseline ak_failures:i allocators:a workloads:a""", "s")
M_ALLOC = spec("name kind library:s? preload:s? env:o status reason:s- "
               "variant_of:s-", "s")
M_WORK = spec("""name kind description inputs status reason:s- command:s-
env:o- versions:s- tree:o- baseline_output:s- results:a-""", "s")
RAN_ONLY = ("command", "env", "versions", "baseline_output", "results")
M_RESULT = dict(allocator="s", runs="a")
M_RUN = spec("""run:i elapsed_s user_s system_s max_rss_kb minor_faults
major_faults voluntary_switches involuntary_switches exit_status:i? signal:i?
timed_out:b output_sha256:s output_bytes output_matches_baseline:b ok:b
note:s- malloc_counters:o-""", "n")
M_COUNTERS = spec("""processes refills slabs_made slabs_released large_allocs
heap_hits heap_misses maps unmaps madvise_calls fallback_allocs deferred_frees
mapped_bytes_max mapped_bytes_sum dirty_bytes_max dirty_bytes_sum
purged_bytes_max purged_bytes_sum meta_bytes_max meta_bytes_sum""", "i")
# the arrays of objects inside macro.json, and the spec of each element
M_ARRAYS = dict(allocators=M_ALLOC, workloads=M_WORK, results=M_RESULT,
                runs=M_RUN)


class SetError(Exception):
    """A file that cannot be used: its message names what is wrong."""


def is_a(v, code):
    """v is of type code (JSON's true is no number)."""
    return isinstance(v, TYPES[code][1]) and not (
        code in "ni" and isinstance(v, bool))


is_num, is_int = (functools.partial(is_a, code=c) for c in "ni")


def jtype(v):
    """What a JSON value is, in words."""
    return next((name for c, (name, _) in TYPES.items() if is_a(v, c)),
                "null")


def walk(o, want, where="", drop=False):
    """Yields what is wrong with object o against spec, walking macro.json's
    arrays; drop: delete a member of the wrong type and go on."""
    if not isinstance(o, dict):
        yield (f"{where}: expected an object, found {jtype(o)}" if where
               else f"expected an object at the top, found {jtype(o)}")
        return
    pre = where + "." if where else ""
    for k in [k for k in want if k != "*"] + [
            k for k in o if k not in want and "*" in want]:
        t, v = want.get(k, want.get("*")), o.get(k)
        if k not in o:
            if "-" not in t:
                yield f"{pre}{k}: missing"
        elif not (is_a(v, t[0]) or v is None and "?" in t):
            if drop:
                del o[k]
            yield (f"{pre}{k}: expected {TYPES[t[0]][0]}"
                   f"{' or null' if '?' in t and not drop else ''}, "
                   f"found {jtype(v)}")
        elif not drop and is_num(v) and v < 0:
            yield (f"{pre}{k}: {v:g} is negative: times and counts are "
                   "never below 0")
        elif not drop and k in M_ARRAYS and t[0] == "a":
            for j, e in enumerate(v):
                yield from walk(e, M_ARRAYS[k], f"{pre}{k}[{j}]")


def _pairs(pairs):
    """An object, refusing a key given twice."""
    d = dict(pairs)
    if len(d) < len(pairs):
        k = next(k for k in d if [p[0] for p in pairs].count(k) > 1)
        raise ValueError(f"duplicate object key '{k}'")
    return d


# Google Benchmark writes an undefined value (the cv of a counter whose
# mean is 0) as a bare NaN, which is not JSON: read as null, no problem.
_BARE = re.compile(r'("(?:\\.|[^"\\])*")|-?(?:Infinity|NaN|nan)')


def load_json(path):
    """The document in path; SetError saying why not (no path in it)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = _BARE.sub(lambda m: m.group(1) or "null", f.read())
        return json.loads(text, object_pairs_hook=_pairs)
    except OSError as e:
        raise SetError(f"cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise SetError(f"not valid JSON at line {e.lineno}, column {e.colno}"
                       f": {e.msg}" + " (truncated?)" * (
                           e.pos >= len(text.rstrip()))) from None
    except ValueError as e:
        raise SetError(f"not valid JSON: {e}") from None


def check_machine(doc):
    """(problems, rejection or None) of machine.json; drops non-strings."""
    probs = list(walk(doc, MACHINE, drop=True))
    if not isinstance(doc, dict):
        return [], probs[0]
    v = doc.get("ak_schema")
    return probs, None if v == MACHINE_SCHEMA else (
        "no ak_schema: not a set this atomkit-report can read (it reads "
        f"version {MACHINE_SCHEMA})" if v is None else f"schema version {v} "
        f"is unknown (this atomkit-report reads version {MACHINE_SCHEMA})")


def check_row(row, where):
    """(problems, keep); a field of a wrong type is dropped."""
    had_time = isinstance(row, dict) and "real_time" in row
    probs = list(walk(row, ROW, where, drop=True))
    if not isinstance(row, dict):
        return probs, False
    typ = row.get("run_type", "iteration")
    for k in ("real_time", "cpu_time"):
        v = row.get(k, 0)
        if typ == "iteration" and row.get("error_occurred") is not True \
                and (v is None or v < 0):
            probs.append(f"{where}.{k}: " + (
                "NaN or null: not a time" if v is None else
                f"{v:g} is negative: times are never below 0") +
                ": the field is dropped")
            del row[k]
    why = ("no name" if "name" not in row else
           "no ak_suite" if "ak_suite" not in row else
           f'run_type: "{typ}" is neither iteration nor aggregate'
           if typ not in ("iteration", "aggregate") else
           "an aggregate without aggregate_name"
           if typ == "aggregate" and "aggregate_name" not in row else None)
    if why:
        probs.append(f"{where}: {why}: row left out" + (
            " (written before atomkit-bench labelled its results? "
            "scripts/label-results adds the fields)" if why == "no ak_suite"
            else ""))
    elif not had_time and "aggregate_name" not in row and \
            row.get("error_occurred") is not True:
        probs.append(f"{where}.real_time: missing")
    return probs, not why


def check_suite(doc, counter=""):
    """(problems, rows kept) of a suite's Google Benchmark JSON; rows None
    where nothing of it can be read."""
    probs = list(walk(doc, SUITE))
    if not isinstance(doc, dict):
        return probs, None
    ctx = doc.get("context")
    v = ctx.get("ak_counter", counter) if isinstance(ctx, dict) else counter
    if not isinstance(v, str):
        probs.append(f"context.ak_counter: expected a string, found "
                     f"{jtype(v)}")
    elif counter and v != counter:
        probs.append(f'context.ak_counter is "{v}" but machine.json says '
                     f'"{counter}": this file\'s counters are not in the '
                     "set's unit")
    rows = []
    for i, row in enumerate(doc.get("benchmarks") if isinstance(
            doc.get("benchmarks"), list) else []):
        p, keep = check_row(row, f"benchmarks[{i}]")
        probs += p
        rows += [row] * keep
    return probs, rows


def macro_version(m):
    v = m.get("ak_macro_schema")
    return MACRO_SCHEMAS.index(v) + 1 if v in MACRO_SCHEMAS else 0


def _rules(m):
    """Yields what is wrong across the members of a well-typed macro.json."""
    if not macro_version(m):
        yield (f"ak_macro_schema: version {m['ak_macro_schema']} is unknown"
               " (this atomkit-report reads versions "
               f"{' and '.join(MACRO_SCHEMAS)})")
    alloc = {}
    for arr, need in (("allocators", ()), ("workloads", RAN_ONLY)):
        for w, o in ((f"{arr}[{i}]", o) for i, o in enumerate(m[arr])):
            if o["status"] not in ("ran", "skipped"):
                yield f'{w}.status: "{o["status"]}" is neither ran nor ' \
                    "skipped"
            if o["status"] == "skipped" and "reason" not in o:
                yield f"{w}.reason: missing (it was skipped)"
            if not need and alloc.setdefault(o["name"], o) is not o:
                yield f'{w}.name: "{o["name"]}" is listed twice'
            for k in need if o["status"] == "ran" else ():
                if k not in o:
                    yield f"{w}.{k}: missing (the workload ran)"
    failed = 0
    for i, a in enumerate(m["allocators"]):
        v = a.get("variant_of")
        if v is not None and (a["kind"] != "design" or alloc.get(
                v, {}).get("kind") != "design"):
            yield (f'allocators[{i}].variant_of: "{v}" is not a design of '
                   f'this file, or {a["name"]} is not one')
    for i, wl in enumerate(m["workloads"]):
        for j, res in enumerate(wl.get("results", [])):
            w = f"workloads[{i}].results[{j}]"
            a = alloc.get(res["allocator"], {})
            if a.get("status") != "ran":
                yield (f'{w}.allocator: "{res["allocator"]}" is not an '
                       "allocator that ran (allocators)")
            for k, run in enumerate(res["runs"]):
                yield from _run(m, a, run, f"{w}.runs[{k}]")
                failed += run["ok"] is not True
    if failed != m["ak_failures"]:
        yield f"ak_failures: {m['ak_failures']}, but {failed} runs are not ok"


def _run(m, a, run, w):
    if not 1 <= run["run"] <= m["ak_runs"]:
        yield (f"{w}.run: {run['run']} is not one of the {m['ak_runs']} "
               "runs (ak_runs)")
    c, design, w = run.get("malloc_counters"), a.get("kind") == "design", \
        w + ".malloc_counters"
    if c is None and design and macro_version(m) >= 2:
        yield (f"{w}: missing (a run of a design, ak_macro_schema "
               f"{MACRO_SCHEMAS[-1]})")
    elif c is not None and not design:
        yield (f"{w}: {a['name']} is not a design: only libatomkit-malloc.so"
               " has counters")
    elif c is not None:
        yield from walk(c, M_COUNTERS, w)
        if run["ok"] is True and not c["processes"]:
            yield (f"{w}.processes: 0 in a run that is ok (a design's run "
                   "where no process reported fails)")


def check_macro(m):
    """The first thing wrong with macro.json m, or None."""
    return next(walk(m, M_TOP), None) or next(_rules(m), None)


def write_json(path, doc, kind):
    """Validates doc as kind, then writes it whole (temp + rename)."""
    doc = json.loads(json.dumps(doc))
    if kind == "machine":
        probs, why = check_machine(doc)
        probs = probs + [why]
    else:
        probs = check_suite(doc)[0] if kind == "suite" else [check_macro(doc)]
    if any(probs):
        raise SetError(f"{path}: {next(filter(None, probs))}")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path)
                               or ".")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
