"""atomkit-report's command line and `check` (doc/report.md)."""
import os
import sys

from . import tables, select, compare, plot, macro
from .setload import load_set, exit_status, problem, PROBLEMS
from .table import OUT, T


class Usage(Exception):
    pass


def cmd_tables(paths):
    usable = 0
    for p in paths:
        s = load_set(p)
        if s.usable:
            OUT.w("\n" if usable else "")
            usable += 1
            tables.render(s)
    return exit_status(usable)


def cmd_check(paths):
    usable = 0
    for p in paths:
        s = load_set(p)
        if not s.usable:
            OUT.w(f"{s.path}: rejected: {s.why_short()}\n")
            continue
        usable += 1
        r = (f"{s.path}: {'problems' if s.problems else 'ok'} "
             f"({len(s.suites)} suites, {len(s.bench)} benchmarks")
        if s.problems:
            r += (f"; {s.problems} problem{'s' if s.problems > 1 else ''}, "
                  "reported above")
        r += macro.check_line(s)
        if s.missing:
            r += "; missing: " + " ".join(s.missing)
        if s.emulated:
            r += "; emulated: figures mean nothing"
        OUT.w(r + ")\n")
    return exit_status(usable)


CMDS = dict(tables=(cmd_tables, 0), select=(select.cmd_select, 0),
            compare=(compare.cmd_compare, 2), index=(select.cmd_index, 1),
            plot=(None, 0), check=(cmd_check, 0))
NEED = dict(compare="compare: needs two sets, A and B",
            index="index: needs one folder (e.g. results/)")


def fmt(a):
    f = a[len("--format="):]
    if f not in ("markdown", "md", "text"):
        raise Usage(f"unknown format '{f}' (markdown or text)")
    OUT.text = f == "text"


def run(argv):
    while argv and argv[0].startswith("--format="):
        fmt(argv.pop(0))
    if not argv:
        sys.stderr.write(T("usage"))
        return 2
    if argv[0] in ("--help", "-h", "help"):
        sys.stdout.write(T("usage"))
        return 0
    cmd = argv[0]
    if cmd.startswith("-"):
        raise Usage(f"unknown option '{cmd}'")
    if cmd not in CMDS:
        raise Usage(f"unknown subcommand '{cmd}'")
    args, out, i = [], None, 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            args += argv[i + 1:]
            break
        if a in ("--help", "-h"):
            sys.stdout.write(T("usage"))
            return 0
        if cmd == "plot" and a in ("-o", "--output"):
            if i + 1 >= len(argv):
                raise Usage(f"{a} needs a folder")
            i += 1
            out = argv[i]
        elif a.startswith("--format="):
            fmt(a)
        elif cmd == "plot" and a.startswith("--output="):
            out = a[len("--output="):]
        elif a.startswith("-") and len(a) > 1:
            raise Usage(f"unknown option '{a}'")
        else:
            args.append(a)
        i += 1
    fn, n = CMDS[cmd]
    if n and len(args) != n:
        raise Usage(NEED[cmd])
    if not args:
        raise Usage(f"{cmd}: needs at least one set")
    if cmd == "plot":
        if not out:
            raise Usage(f"{cmd}: needs -o OUTDIR")
        return plot.cmd_plot(args, out)
    return fn(*args) if n else fn(args)


def main(argv=None):
    OUT.__init__()
    OUT.text, PROBLEMS[0] = False, 0
    try:
        status = run(list(sys.argv[1:] if argv is None else argv))
        OUT.close()
        sys.stdout.flush()
        return status
    except Usage as e:
        sys.stderr.write(f"atomkit-report: {e} (try atomkit-report "
                         "--help)\n")
        return 2
    except BrokenPipeError:
        return 3
    except KeyboardInterrupt:
        return 130
    except OSError as e:
        problem(f"cannot write the output: {e.strerror}")
        return 3
    except Exception as e:      # a bug: one line, never a traceback
        if os.environ.get("AK_REPORT_DEBUG"):
            raise
        sys.stderr.write(f"atomkit-report: internal error: "
                         f"{type(e).__name__}: {e}\n")
        return 1
