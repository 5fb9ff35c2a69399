"""A result set's file kinds (minimal stand-in: the report side's
schema.py, with the same names, replaces it)."""
import json
import os


class SetError(Exception):
    pass


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SetError(f"{path}: {e}")


def check_machine(doc):
    if not isinstance(doc, dict) or "ak_schema" not in doc:
        raise SetError("machine.json: no ak_schema")


def check_suite(doc):
    if not isinstance(doc, dict) or "benchmarks" not in doc:
        raise SetError("not Google Benchmark JSON: no benchmarks")


def check_macro(doc):
    for k in ("ak_macro_schema", "allocators", "workloads"):
        if k not in doc:
            raise SetError(f"macro.json: no {k}")


def write_json(path, doc, kind):
    """Validated, then written under a temporary name and renamed."""
    {"machine": check_machine, "suite": check_suite,
     "macro": check_macro}[kind](doc)
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(path + ".tmp", path)
