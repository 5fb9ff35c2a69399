#!/bin/sh
# SPDX-License-Identifier: MIT
# `make bench-quick` end to end: scripts/run-bench writes a result set in
# which every suite has its JSON and console table, the JSON is whole and
# names the unit, and no benchmark failed for any reason but a documented
# skip: "skipped: " and one of the reasons `atomkit-bench --list-skips`
# prints (a class or feature this machine lacks, rseq under qemu), with
# or without ": detail" after it.  Figures are not looked at.  TAP on
# stdout; under the cross rig AK_TEST_RUNNER holds the qemu command line.
set -u

bench=./bench/atomkit-bench
run="${AK_TEST_RUNNER:-}"
srcdir=${AK_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
n=0
failed=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

if [ ! -x "$bench" ]; then
	echo "1..1"
	echo "ok 1 - bench-quick # SKIP not built (configure found no libbenchmark-dev)"
	exit 0
fi

# The skips the harness documents; any other error is a failure.
$run "$bench" --list-skips >"$out/skips" 2>"$out/skips.err"
rc=$?
if [ "$rc" -eq 0 ] && [ -s "$out/skips" ]; then
	ok "--list-skips: $(wc -l <"$out/skips") documented reasons"
else
	not_ok "--list-skips: exit $rc, none listed: $(head -c 300 "$out/skips.err")"
fi

"$srcdir/scripts/run-bench" --quick --bench "$bench" --machine test \
	--out "$out/set" >"$out/log" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "run-bench --quick: exit 0"
else
	not_ok "run-bench --quick: exit $rc: $(tail -c 400 "$out/log")"
fi

for s in harness uncontended percpu casfail contention cacheline xcheck slab; do
	j=$out/set/$s.json t=$out/set/$s.txt
	if [ ! -s "$j" ] || [ ! -s "$t" ]; then
		not_ok "suite $s: no JSON or table in the set"
		continue
	fi
	# whole JSON: it closes, and names the counter's unit
	if tail -n 2 "$j" | grep -q '^}' && grep -q '"ak_counter_unit"' "$j"; then
		ok "suite $s: JSON complete, unit named"
	else
		not_ok "suite $s: JSON truncated or without its unit"
	fi
	# every benchmark entry carries its identity (doc/benchmarks.md):
	# ak_suite after each run_name, the suite's own name in it
	runs=$(grep -c '"run_name": ' "$j")
	ids=$(grep -c '"ak_suite": "[a-z]*"' "$j")
	if [ "$runs" -gt 0 ] && [ "$ids" -eq "$runs" ]; then
		ok "suite $s: identity fields in all $runs entries"
	else
		not_ok "suite $s: $ids entries with ak_suite of $runs"
	fi
	bad=$("$srcdir/scripts/skip-check" "$out/skips" "$j" | head -n 3)
	if [ -z "$bad" ]; then
		ok "suite $s: no benchmark failed"
	else
		not_ok "suite $s: not a documented skip: $bad"
	fi
done
if ls "$out/set" | grep -q '\.tmp$'; then
	not_ok "temporary files left in the set: $(ls "$out/set")"
else
	ok "no temporary files left in the set"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
