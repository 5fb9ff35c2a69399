"""The one output path: Markdown, or with --format=text plain text within
80 columns (tables aligned, in parts when too wide, long cells as notes)."""
import os
import re
import sys
import textwrap

COLS = 80
NOTE_MIN = 6            # "(9999)"
PART_CELL = 24          # a column's most width when splitting in parts
ESC = r"\\`*_\[\]<>|#"


class Out:
    """stdout; in text mode prose is kept to the end of its line, then
    written without its Markdown and wrapped."""
    text = False

    def __init__(self):
        self.line = ""

    def w(self, s):
        if not self.text:
            return sys.stdout.write(s)
        *done, self.line = (self.line + s).split("\n")
        for ln in done:
            ln = re.sub(rf"^#+ ?|\\([{ESC}])|`|\*\*", r"\1", ln)
            # later lines under the text, past a list item's "- "
            sys.stdout.write(wrap(ln, re.match(" *(- )?", ln).end()))

    def close(self):
        if self.line:
            self.w("\n")


OUT = Out()
w = OUT.w


def _catalogue(path=os.path.join(os.path.dirname(__file__), "text.txt")):
    """The prose of the output, text.txt: "[key]" then its lines, joined
    by spaces ("\\n" a line break); "[key raw]", lines kept as they are."""
    d, key, raw = {}, None, False
    with open(path, encoding="utf-8") as f:
        for ln in f:
            if ln.startswith("[") and ln.rstrip().endswith("]"):
                key, _, raw = ln.strip()[1:-1].partition(" ")
                d[key] = ""
            elif raw:
                d[key] += ln
            elif key and ln.strip():
                x, ln = d[key], ln.strip()
                d[key] = x + ("\n" if ln == "\\n" else
                              (" " if x and x[-1] != "\n" else "") + ln)
    return d


TEXT = _catalogue()


def T(key, **kw):
    """The text of key, its {name}s filled in from kw."""
    return TEXT[key].format(**kw) if kw else TEXT[key]


def md(kind, s):
    """Text from the files made inert in Markdown: kind 't' text, 'c'
    code, 's' a skip reason ("skipped: why").  Plain in text mode."""
    s = re.sub("[\n\r\t]", " ", s or "")
    pre = "skipped: " if kind == "s" and not s.startswith(
        ("skipped", "failed: ")) else ""
    if OUT.text:
        return pre + (s.replace("`", "") if kind == "t" else s)
    if kind == "c":
        s = s.replace("`", "'").replace("|", "\\|")
        return f"`{s}`" if s else ""
    return pre + re.sub(f"([{ESC}])", r"\\\1", s)


def B():
    """Bold in Markdown, nothing in text."""
    return "" if OUT.text else "**"


class _Wrapper(textwrap.TextWrapper):
    def _handle_long_word(self, chunks, line, used, width):
        """A word longer than a line (a path) breaks after a '/'."""
        room = max(1, width - used)
        end = chunks[-1].rfind("/", 0, room - 1) + 1 or room
        line.append(chunks[-1][:end])
        chunks[-1] = chunks[-1][end:]


def wrap(s, indent):
    """s on lines of at most COLS, later lines indented by indent."""
    return _Wrapper(COLS, subsequent_indent=" " * indent,
                    break_on_hyphens=False).fill(s) + "\n"


def _word(s):
    return max(map(len, (s or "").split(" ")))


class Table:
    """Cells row by row, the first row the header; notes numbered under
    it (skip reasons, and in text the cells too long for the line)."""

    def __init__(self, align, header):
        self.align, self.ncol, self.c = align, len(header), list(header)
        self.notes, self.keep_notes = [], False

    def add(self, *cells):
        self.c += cells

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)
        return self.notes.index(text) + 1

    def skip(self, b):
        """"–" where there is no such benchmark, "n/a (k)" if skipped."""
        self.add("–" if not b else f"n/a ({self.note(b.skip)})")

    def print(self):
        nc = self.ncol
        rows = [self.c[i:i + nc] for i in range(0, len(self.c), nc)]
        right = [self.align[min(j, len(self.align) - 1)] == "r"
                 for j in range(nc)]
        if not OUT.text:
            ln = ["|" + "".join(" |" if x is None else f" {x} |" for x in r)
                  for r in rows]
            ln.insert(1, "|" + "".join("--:|" if r else "---|" for r in right))
            sys.stdout.write("\n".join(ln) + "\n")
        else:
            sys.stdout.flush()
            rows[-1] += [None] * (nc - len(rows[-1]))
            parts = [self._part(rows, c, right) for c in self._parts(rows)]
            sys.stdout.write("\n".join(parts))
        if not self.keep_notes:
            self.print_notes()

    def print_notes(self):
        for i, n in enumerate(self.notes):
            if OUT.text:
                sys.stdout.write("\n" * (not i) + wrap(f"({i + 1}) {n}", 4))
            else:
                w(f"{'  ' if i else ''}\n({i + 1}) {md('t', n)}")
        if self.notes and not OUT.text:
            w("\n")
        self.c, self.notes = [], []

    @staticmethod
    def _parts(rows):
        """The columns of each part: the first, then as many as fit."""
        cw = [min(PART_CELL, max([_word(rows[0][j])] +
                                 [len(r[j] or "") for r in rows[1:]]))
              for j in range(len(rows[0]))]
        parts = [[0]]
        for j in range(1, len(cw)):
            if len(parts[-1]) > 1 and sum(
                    cw[k] + 2 for k in parts[-1] + [j]) - 2 > COLS:
                parts.append([0])
            parts[-1].append(j)
        return parts

    def _part(self, rows, cols, right):
        """The part's lines at gap 2, or 1 if 2 sends cells of the first
        column to the notes."""
        body = [[r[j] or "" for r in rows[1:]] for j in cols]
        head = [rows[0][j] or "" for j in cols]
        wd, gap = _fit(head, body, 2), 2
        if wd[0] < max(map(len, body[0]), default=0) or sum(wd) > COLS - 2 * (
                len(wd) - 1):
            wd, gap = _fit(head, body, 1), 1
        head = [textwrap.wrap(h, max(x, 1)) for h, x in zip(head, wd)]
        lines = [[h[i] if i < len(h) else "" for h in head]
                 for i in range(max(map(len, head)))]
        lines += [["-" * max(x, 1) for x in wd]] * bool(lines)
        for ln in zip(*body):
            ln = [f"({self.note(x)})" if len(x) > n else x
                  for x, n in zip(ln, wd)]
            lines.append([x.rjust(n) if right[j] else x
                          for j, x, n in zip(cols, ln, wd)])
        return "".join((" " * gap).join(x.ljust(n) for x, n in zip(ln, wd))
                       .rstrip() + "\n" for ln in lines)


def _fit(head, body, gap):
    """Column widths within COLS: while too wide, the column whose next
    narrower width (a header wrapped, a cell's length) sends the fewest
    cells to the notes narrows to it (the first column's cells only if no
    other can)."""
    cell = [max(map(len, b), default=0) for b in body]
    least = [max(min(NOTE_MIN, c), min(_word(h), PART_CELL))
             for h, c in zip(head, cell)]
    wd = [max(len(h), c) for h, c in zip(head, cell)]
    while sum(wd) + gap * (len(wd) - 1) > COLS:
        best = None
        for k in range(len(wd)):
            n = max([x for x in [least[k], len(head[k]), *map(len, body[k])]
                     if least[k] <= x < wd[k]], default=0)
            moved = sum(len(x) > n for x in body[k])
            moved = COLS * COLS if moved and not k else moved
            if n and (not best or moved < best[0]):
                best = moved, k, n
        if not best:
            break
        wd[best[1]] = best[2]
    return wd


def goal_row(t, what, figs, ratio, goal, at_most, why, expect=None):
    """A target's row: the figures, the ratio, the goal, and met or the
    gap; "n/a" naming the missing input where why is set."""
    from .setload import num, pct
    t.add(md("t", what), md("t", "–" if why else figs),
          "–" if why else num(ratio) + "x",
          f"{'<=' if at_most else '>='} {goal:g}x")
    if why:
        t.add(f"n/a: {md('t', why)}")
    elif ratio <= goal if at_most else ratio >= goal:
        t.add("met")
    else:
        gap = ratio / goal - 1 if at_most else 1 - ratio / goal
        t.add(f"not met: {pct(gap)}"
              f" {'over' if at_most else 'under'}{expect or ''}")
