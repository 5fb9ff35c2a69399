"""The one output path: Markdown, or with --format=text plain text within
80 columns (tables aligned, in parts when too wide, long cells as notes)."""
import os
import sys

COLS = 80
NOTE_REF_MIN = 6        # "(9999)"
GROUP_CELL = 24         # wider cells go to notes anyway
ESC = "\\`*_[]<>|#"


class Out:
    text = False

    def __init__(self):
        self.line, self.bol, self.hash, self.esc, self.star = [], True, \
            False, False, False

    def raw(self, s):
        sys.stdout.write(s)

    def w(self, s):
        """Prose, as Markdown: in text mode without the markup."""
        if not self.text:
            return sys.stdout.write(s)
        for c in s:
            if self.esc:
                self.esc = False
                if c not in ESC:
                    self._put("\\")
            elif self.bol and c == "#":
                self.hash = True
                continue
            elif self.hash and c == " ":
                self.hash = False
                continue
            elif c == "\\":
                self.esc = True
                continue
            elif c == "`":
                continue
            elif c == "*" and not self.star:
                self.star = True
                continue
            if self.star and c != "*":
                self._put("*")
            self.star = False
            self.bol, self.hash = c == "\n", False
            if c != "*" or self.bol:
                self._put(c)

    def _put(self, c):
        if c != "\n":
            return self.line.append(c)
        ln, self.line = "".join(self.line), []
        lead = len(ln) - len(ln.lstrip(" "))
        sys.stdout.write(wrap(ln, lead + 2 * (ln[lead:lead + 2] == "- ")))

    def close(self):
        if self.line:
            self._put("\n")


OUT = Out()
w = OUT.w


def _catalogue(path=os.path.join(os.path.dirname(__file__), "text.txt")):
    """The prose of the output, text.txt: "[key]" then its lines, joined
    by spaces; "[key raw]", lines kept as they are."""
    d, key, raw = {}, None, False
    with open(path, encoding="utf-8") as f:
        for ln in f:
            ln = ln.rstrip("\n") if raw and not ln.startswith("[") \
                else ln.strip()
            if ln.startswith("[") and ln.endswith("]"):
                key, _, raw = ln[1:-1].partition(" ")
                d[key] = ""
            elif raw:
                d[key] += ln + "\n"
            elif key and ln:
                x = d[key]
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
    s = s or ""
    mdown = not OUT.text
    pre = "skipped: " if kind == "s" and not (
        s.startswith("skipped") or s.startswith("failed: ")) else ""
    out = []
    for c in s:
        if c in "\n\r\t":
            out.append(" ")
        elif not mdown and kind == "t" and c == "`":
            continue
        elif mdown and kind == "c" and c == "`":
            out.append("'")
        elif mdown and (c == "|" if kind == "c" else c in ESC):
            out.append("\\" + c)
        else:
            out.append(c)
    body = "".join(out)
    if kind == "c" and mdown and s:
        body = f"`{body}`"
    return pre + body


def B():
    """Bold in Markdown, nothing in text."""
    return "" if OUT.text else "**"


def wrap(s, indent):
    """s on lines of at most COLS, broken at spaces, later lines
    indented; a word longer than a line is broken after a '/'."""
    col = len(s) - len(s.lstrip(" "))
    out, s, fresh = [s[:col]], s[col:], True
    while s:
        n = s.find(" ")
        n = len(s) if n < 0 else n
        if not fresh and col + 1 + n > COLS:
            out.append("\n" + " " * indent)
            col, fresh = indent, True
        if not fresh:
            out.append(" ")
            col += 1
        if col + n > COLS:
            k = max(0, min(len(s), COLS - col))
            while k > 1 and s[k - 1] != "/" and "/" in s[:k - 1]:
                k -= 1
            out.append(s[:k] + "\n" + " " * indent)
            col, fresh, s = indent, True, s[k:]
            continue
        col += n
        out.append(s[:n])
        fresh, s = False, s[n:].lstrip(" ")
    return "".join(out) + "\n"


def _ww(s):
    """The widest word of s."""
    return max((len(x) for x in (s or "").split(" ")), default=0)


class Table:
    """Cells row by row, the first row the header; notes numbered under
    it (skip reasons, and in text the cells too long for the line)."""

    def __init__(self, align, header=None):
        self.align, self.c, self.notes, self.keep_notes = align, [], [], \
            False
        self.ncol = len(align)
        if header is not None:
            self.ncol = len(header)
            self.c += header

    def al(self, j):
        return self.align[min(j, len(self.align) - 1)]

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
        if OUT.text:
            sys.stdout.flush()
            self._text()
        else:
            for i in range(0, len(self.c), self.ncol):
                r = self.c[i:i + self.ncol]
                OUT.raw("|" + "".join(" |" if x is None else f" {x} |"
                                      for x in r) + "\n")
                if not i:
                    OUT.raw("|" + "".join("--:|" if self.al(j) == "r"
                                          else "---|"
                                          for j in range(self.ncol)) + "\n")
        if not self.keep_notes:
            self.print_notes()

    def print_notes(self):
        for i, n in enumerate(self.notes):
            if OUT.text:
                OUT.raw(("\n" if not i else "") + wrap(f"({i + 1}) {n}", 4))
            else:
                w(f"{'  ' if i else ''}\n({i + 1}) {md('t', n)}")
        if self.notes and not OUT.text:
            w("\n")
        self.c, self.notes = [], []

    # ---- text ----
    def _body(self, j):
        return max((len(x or "") for x in self.c[self.ncol + j::self.ncol]),
                   default=0)

    def _fit(self, wd, gap, notes):
        nc, c = self.ncol, self.c
        cap = [self._body(j) for j in range(nc)]
        for j in range(nc):
            wd[j] = max(cap[j], len(c[j] or ""))
        total, first = gap * (nc - 1) + sum(wd), None
        for j in range(nc):
            if total <= COLS:
                break
            if wd[j] > cap[j] and wd[j] > _ww(c[j]):
                x = max(cap[j], _ww(c[j]))
                total -= wd[j] - x
                wd[j] = x
        while total > COLS:
            best = None
            j = 1
            while j <= nc and (best is None or j < nc):
                k = j % nc
                j += 1
                cw = max(_ww(c[k]), NOTE_REF_MIN)
                for x in c[nc + k::nc]:
                    if cw < len(x or "") < wd[k]:
                        cw = len(x or "")
                if cw >= wd[k]:
                    continue
                moved = sum(len(x or "") > cw for x in c[nc + k::nc])
                if best is None or moved < best[1]:
                    best = (k, moved, cw)
            if best is None:
                break
            k, _, cw = best
            if not k:
                first = cw
            total -= wd[k] - cw
            wd[k] = cap[k] = cw
        if not notes:
            return total <= COLS and first is None
        for i in range(nc, len(c)):
            if len(c[i] or "") > wd[i % nc]:
                c[i] = f"({self.note(c[i])})"
        return True

    def _part(self):
        nc, wd = self.ncol, [0] * self.ncol
        h = [x if x else None for x in self.c[:nc]]
        gap = 2 if self._fit(wd, 2, False) else 1
        self._fit(wd, gap, True)
        lines, rest = [], any(h)
        while rest:
            rest, ln = False, []
            for j in range(nc):
                n, hj = 0, h[j]
                while hj and n < len(hj):
                    e = n + (1 if n else 0)
                    sp = hj.find(" ", e)
                    e = len(hj) if sp < 0 else sp
                    if n and e > wd[j]:
                        break
                    n = e
                ln.append((hj or "")[:n] + " " * abs(wd[j] - n + gap))
                if hj:
                    h[j] = hj[n:].lstrip(" ") or None
                    rest |= h[j] is not None
            lines.append("".join(ln))
            if not rest:
                lines.append("".join("-" * min(wd[j] or 1, 80) + " " * gap
                                     for j in range(nc)))
        for i in range(nc, len(self.c), nc):
            ln = []
            for j in range(nc):
                if i + j >= len(self.c):
                    break
                x = self.c[i + j] or ""
                pad = " " * (wd[j] - len(x))
                ln.append((pad + x if self.al(j) == "r" else x + pad)
                          + " " * gap)
            lines.append("".join(ln))
        OUT.raw("".join(ln.rstrip(" ") + "\n" for ln in lines))

    def _cw(self, j):
        return min(max(self._body(j), _ww(self.c[j])), GROUP_CELL)

    def _text(self):
        nc, rows, frm = self.ncol, -(-len(self.c) // self.ncol), 1
        while True:
            s, to = self._cw(0), frm
            while to < nc:
                s += 2 + self._cw(to)
                if s > COLS and to > frm:
                    break
                to += 1
            if frm == 1 and to == nc:
                return self._part()
            p = Table("l")
            p.ncol, p.notes = 1 + to - frm, self.notes
            p.align = self.align[0] + "".join(self.al(frm + j)
                                              for j in range(to - frm))
            for i in range(rows):
                for j in [0] + list(range(frm, to)):
                    k = i * nc + j
                    p.c.append(self.c[k] if k < len(self.c) else None)
            if frm > 1:
                OUT.raw("\n")
            p._part()
            self.notes = p.notes
            if to >= nc:
                return
            frm = to


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
