"""What a long run shows: a line per suite as it ends, and a progress
line (suite k of N, benchmark i of M, elapsed, time left from the plan's
estimate) rewritten in place on a terminal, or printed now and then as a
plain line elsewhere (a log, a pipe)."""
import collections
import shutil
import sys
import time

from .plan import clock

PLAIN_EVERY = 30.0	# seconds between plain progress lines


class Console:
    def __init__(self, who, total_est, stream=None):
        self.who, self.out = who, stream or sys.stdout
        self.tty, self.start = self.out.isatty(), time.monotonic()
        self.total, self.done, self.cur, self.shown = total_est, 0.0, None, ""

    def _put(self, text, clear=False):
        """text over the progress line, if a terminal shows one."""
        self.out.write("\r\033[K" + text if clear or self.shown else text)
        self.out.flush()
        self.shown = ""

    def say(self, msg, err=False):
        self._put("")
        print(f"{self.who}: {msg}", file=sys.stderr if err else self.out,
              flush=True)
        self._show()

    def begin(self, k, n, name, count, est, what="benchmark"):
        """Suite k of n starts: count instances, est seconds planned."""
        now = time.monotonic()
        self.cur = dict(k=k, n=n, name=name, count=count, est=est, i=0,
                        what=what, start=now, last=now)
        self._show(force=True)

    def step(self, i):
        if self.cur and i != self.cur["i"]:
            self.cur["i"] = min(i, self.cur["count"])
            self._show()

    def times(self):
        """Elapsed, and the plan's estimate of the rest, scaled by how the
        work done so far compares with its estimate."""
        c, elapsed = self.cur, time.monotonic() - self.start
        done = self.done + (c["est"] * c["i"] / max(c["count"], 1) if c
                            else 0.0)
        left = max(self.total - done, 0.0)
        left = left * elapsed / done if done >= 30 else left
        return f"{clock(elapsed)} elapsed, about {clock(left)} left"

    def _show(self, force=False):
        """The progress line: in place on a terminal; elsewhere a plain
        line every PLAIN_EVERY seconds, and as a long suite starts."""
        c = self.cur
        if not c:
            return
        line = (f"suite {c['k']} of {c['n']} ({c['name']}): {c['what']} "
                f"{c['i']} of {c['count']}, {self.times()}")
        if self.tty:
            line = line[:max(shutil.get_terminal_size().columns - 1, 20)]
            if line != self.shown:
                self._put(line, clear=True)
                self.shown = line
        elif time.monotonic() - c["last"] >= PLAIN_EVERY or (
                force and c["est"] >= PLAIN_EVERY):
            c["last"] = time.monotonic()
            self._put(f"{self.who}: {line}\n")

    def end(self, summary, notes=()):
        """The suite's line, then one line a note (skips, failures)."""
        c, self.cur = self.cur, None
        self.done += c["est"]
        self._put(f"{self.who}: suite {c['k']} of {c['n']} {c['name']}: "
                  f"{summary} in {clock(time.monotonic() - c['start'])}; "
                  f"{self.times()}\n" +
                  "".join(f"{self.who}:     {n}\n" for n in notes))


def gbench_notes(doc):
    """A Google Benchmark JSON's errors, one line a reason with its
    count: documented skips ("skipped: TEXT[: DETAIL]", bench/skips.h)
    by TEXT, anything else as a failure with its instances' names."""
    skips, fails = collections.Counter(), collections.defaultdict(list)
    for name, msg in dict.fromkeys(
            (b.get("run_name", b.get("name")), b["error_message"])
            for b in doc.get("benchmarks", []) if b.get("error_occurred")):
        if msg.startswith("skipped: "):
            skips[msg[9:].split(": ")[0]] += 1
        else:
            fails[msg].append(name)
    return [f"{n} skipped: {why}" for why, n in skips.most_common()] + [
        f"{len(n)} FAILED: {m} ({', '.join(n[:2])}"
        f"{f' and {len(n) - 2} more' if len(n) > 2 else ''})"
        for m, n in fails.items()]
