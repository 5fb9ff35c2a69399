# SPDX-License-Identifier: MIT
# The python3 macro workload (doc/benchmarks.md, "Whole programs"):
# build and drop many small objects, as an interpreter running a text
# pipeline does.  Run as
#
#   PYTHONMALLOC=malloc python3 -S pywork.py WORDS-FILE ROUNDS
#
# where PYTHONMALLOC=malloc sends every object to malloc instead of
# Python's own small-object arenas, so that the allocator under test sees
# them.  Each round reads the words (macro-gen words), counts them and
# their pairs in dicts of lists, makes an object per distinct word and a
# tree of tuples over the lines, sorts, joins and splits strings, then
# drops it all.  Prints totals that depend on the input only: no hash(),
# no addresses, no floats.
import sys


class Word:
    def __init__(self, text, count, first):
        self.text = text
        self.count = count
        self.first = first
        self.follow = []


def one_round(lines, r):
    counts = {}
    pairs = {}
    first = {}
    prev = None
    pos = 0
    for line in lines:
        for w in line.split():
            counts[w] = counts.get(w, 0) + 1
            if w not in first:
                first[w] = pos
            if prev is not None:
                pairs.setdefault(prev, []).append(w)
            prev = w
            pos += 1
    words = [Word(w, n, first[w]) for w, n in counts.items()]
    for o in words:
        o.follow = sorted(set(pairs.get(o.text, ())))
    words.sort(key=lambda o: (-o.count, o.text))

    # a tree of tuples over the lines: (length, words, upper-cased)
    tree = [tuple((len(w), w, w.upper()) for w in line.split())
            for line in lines]
    letters = sum(t[0] for node in tree for t in node)

    # strings made, joined and split again
    text = ";".join("%s=%d/%d" % (o.text, o.count, len(o.follow))
                    for o in words)
    fields = [f.split("=") for f in text.split(";")]
    rejoined = sum(len(k) + len(v) for k, v in fields)

    top = [(o.text, o.count, len(o.follow)) for o in words[:5]]
    follow = sum(len(o.follow) for o in words)
    return (len(words), pos, letters, rejoined, follow,
            len(pairs), top if r == 0 else None)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: pywork.py WORDS-FILE ROUNDS\n")
        return 2
    with open(sys.argv[1], encoding="ascii") as f:
        lines = f.read().split("\n")
    rounds = int(sys.argv[2])
    total = 0
    for r in range(rounds):
        res = one_round(lines, r)
        if r == 0:
            print("distinct %d words %d letters %d rejoined %d"
                  " follow %d pairs %d" % res[:6])
            for t, n, k in res[6]:
                print("top %s %d %d" % (t, n, k))
        total += sum(res[:6])
    print("rounds %d total %d" % (rounds, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
