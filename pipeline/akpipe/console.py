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

    def _write(self, text):
        self.out.write(text)
        self.out.flush()

    def _clear(self):
        if self.tty and self.shown:
            self._write("\r\033[K")
        self.shown = ""

    def say(self, msg, err=False):
        self._clear()
        if err:
            self.out.flush()
            print(f"{self.who}: {msg}", file=sys.stderr, flush=True)
        else:
            self._write(f"{self.who}: {msg}\n")
        self._show()

    def begin(self, k, n, name, count, est, what="benchmark"):
        """Suite k of n starts: count instances, est seconds planned."""
        self.cur = dict(k=k, n=n, name=name, count=count, est=est, i=0,
                        what=what, start=time.monotonic(),
                        last=time.monotonic())
        self._show(force=True)

    def step(self, i):
        if self.cur and i != self.cur["i"]:
            self.cur["i"] = min(i, self.cur["count"])
            self._show()

    def left(self):
        """The plan's remaining estimate, scaled by how the work done so
        far compares with its estimate."""
        c = self.cur or {"est": 0, "i": 0, "count": 1}
        done_est = self.done + c["est"] * c["i"] / max(c["count"], 1)
        rest = max(self.total - done_est, 0.0)
        elapsed = time.monotonic() - self.start
        return rest * elapsed / done_est if done_est >= 30 else rest

    def times(self):
        return (f"{clock(time.monotonic() - self.start)} elapsed, "
                f"about {clock(self.left())} left")

    def progress(self):
        c = self.cur
        return (f"suite {c['k']} of {c['n']} ({c['name']}): {c['what']} "
                f"{c['i']} of {c['count']}, {self.times()}")

    def _show(self, force=False):
        if not self.cur:
            return
        now = time.monotonic()
        if self.tty:
            line = self.progress()[:max(
                shutil.get_terminal_size().columns - 1, 20)]
            if line != self.shown:
                self._write("\r\033[K" + line)
                self.shown = line
        elif now - self.cur["last"] >= PLAIN_EVERY or (
                force and self.cur["est"] >= PLAIN_EVERY):
            self.cur["last"] = now
            self._write(f"{self.who}: {self.progress()}\n")

    def end(self, summary, notes=()):
        """The suite's line, then one line a note (skips, failures)."""
        c, self.cur = self.cur, None
        self.done += c["est"]
        self._clear()
        took = clock(time.monotonic() - c["start"])
        self._write(f"{self.who}: suite {c['k']} of {c['n']} {c['name']}: "
                    f"{summary} in {took}; {self.times()}\n" +
                    "".join(f"{self.who}:     {n}\n" for n in notes))


def gbench_notes(doc):
    """A Google Benchmark JSON's errors, one line a reason with its
    count: documented skips ("skipped: TEXT[: DETAIL]", bench/skips.h)
    by TEXT, anything else as a failure with its instances' names."""
    skips, fails = collections.Counter(), collections.defaultdict(list)
    seen = set()
    for b in doc.get("benchmarks", []):
        msg, name = b.get("error_message"), b.get("run_name", b.get("name"))
        if not b.get("error_occurred") or (name, msg) in seen:
            continue
        seen.add((name, msg))
        if msg.startswith("skipped: "):
            skips[msg[9:].split(": ")[0]] += 1
        else:
            fails[msg].append(name)
    more = {m: f" and {len(n) - 2} more" if len(n) > 2 else ""
            for m, n in fails.items()}
    return [f"{n} skipped: {why}" for why, n in skips.most_common()] + [
        f"{len(n)} FAILED: {m} ({', '.join(n[:2])}{more[m]})"
        for m, n in fails.items()]
