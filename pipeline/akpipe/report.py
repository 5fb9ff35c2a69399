"""atomkit-report's command line, `tables` and `check` (doc/report.md)."""
import os
import sys

from . import tables, select, compare, plot, macro
from .setload import load_set, exit_status, problem, PROBLEMS
from .table import OUT, T


class Usage(Exception):
    pass


def cmd_tables(paths):
    sets = [s for s in map(load_set, paths) if s.usable]
    for k, s in enumerate(sets):
        OUT.w("\n" if k else "")
        tables.render(s)
    return exit_status(len(sets))


def cmd_check(paths):
    usable = 0
    for s in map(load_set, paths):
        usable += s.usable
        n = s.problems
        OUT.w(f"{s.path}: rejected: {s.why_short()}\n" if not s.usable else
              f"{s.path}: {'problems' if n else 'ok'} ({len(s.suites)} "
              f"suites, {len(s.bench)} benchmarks" + (
                  f"; {n} problem{'s' * (n > 1)}, reported above" if n
                  else "") + macro.check_line(s) +
              "; missing: " * bool(s.missing) + " ".join(s.missing) +
              "; emulated: figures mean nothing" * s.emulated + ")\n")
    return exit_status(usable)


# subcommand: (function, its operands: how many, or None for one or more)
CMDS = dict(tables=(cmd_tables, None), select=(select.cmd_select, None),
            compare=(compare.cmd_compare, 2), index=(select.cmd_index, 1),
            plot=(plot.cmd_plot, None), check=(cmd_check, None))
NEED = dict(index="needs one folder (e.g. results/)",
            compare="needs two sets, A and B")


def run(argv):
    cmd, args, out, it = None, [], None, iter(argv)
    for a in it:
        if a == "--" and cmd:
            args += it
        elif a in ("--help", "-h") or a == "help" and not cmd:
            sys.stdout.write(T("usage"))
            return 0
        elif a.startswith("--format="):
            if a[9:] not in ("markdown", "md", "text"):
                raise Usage(f"unknown format '{a[9:]}' (markdown or text)")
            OUT.text = a[9:] == "text"
        elif cmd == "plot" and a in ("-o", "--output"):
            out = next(it, None)
            if out is None:
                raise Usage(f"{a} needs a folder")
        elif cmd == "plot" and a.startswith("--output="):
            out = a[9:]
        elif a.startswith("-") and len(a) > 1:
            raise Usage(f"unknown option '{a}'")
        elif cmd:
            args.append(a)
        elif a in CMDS:
            cmd = a
        else:
            raise Usage(f"unknown subcommand '{a}'")
    if not cmd:
        sys.stderr.write(T("usage"))
        return 2
    fn, n = CMDS[cmd]
    if not args or n and len(args) != n:
        raise Usage(f"{cmd}: {NEED.get(cmd, 'needs at least one set')}")
    if cmd == "plot" and not out:
        raise Usage("plot: needs -o OUTDIR")
    return fn(args, out) if out else fn(*args) if n else fn(args)


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
