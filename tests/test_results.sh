#!/bin/sh
# SPDX-License-Identifier: MIT
# Result sets as scripts/run-bench writes them: a run killed mid-suite
# leaves no partial file and a set atomkit-report accepts; --suites runs
# only the suites named.  (How atomkit-report renders sets, the committed
# ones and the fixtures of tests/fixtures/, is tests/python/test_report.py,
# run by tests/test_pipeline.sh.)  TAP on stdout.
set -u

report=./report/atomkit-report
bench=./bench/atomkit-bench
srcdir=${AK_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$srcdir/tests/tap.sh"

# expect NAME STATUS MESSAGE CMD...: CMD exits STATUS, MESSAGE on stderr
expect() {
	name=$1 want=$2 msg=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ] &&
		{ [ -z "$msg" ] || grep -qF -- "$msg" "$tmp/err"; }; then
		ok "$name: exit $want, '$msg'"
	else
		not_ok "$name: exit $rc (want $want), stderr: $(head -c 300 "$tmp/err")"
	fi
}

# An interrupted run: killed in the middle of a suite.
if [ ! -x "$bench" ]; then
	skip "interrupted run-bench" "atomkit-bench not built"
else
	"$srcdir/scripts/run-bench" --quick --bench "$bench" --machine test \
		--out "$tmp/int" -- --benchmark_min_time=0.02 \
		>"$tmp/int.log" 2>&1 &
	pid=$!
	i=0
	# the first suite done: the second is running
	while [ ! -f "$tmp/int/harness.json" ] && [ $i -lt 1200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	sleep 0.3
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	if [ "$rc" -eq 130 ] && grep -q 'interrupted during suite' "$tmp/int.log"; then
		ok "interrupted run-bench: exit 130, says so"
	else
		not_ok "interrupted run-bench: exit $rc: $(tail -c 300 "$tmp/int.log")"
	fi
	left=$(ls "$tmp/int" | grep '\.tmp' || true)
	if [ -z "$left" ] && [ -f "$tmp/int/machine.json" ] &&
		[ -f "$tmp/int/harness.json" ]; then
		ok "interrupted run-bench: no partial file, finished suites kept"
	else
		not_ok "interrupted run-bench: left $(ls "$tmp/int" | tr '\n' ' ')"
	fi
	if [ -x "$report" ]; then
		expect "the reader accepts the interrupted set" 0 "" \
			"$report" check "$tmp/int"
	else
		skip "the reader accepts the interrupted set" "atomkit-report not built"
	fi
fi

# --suites: only the named suites run; a name it does not know is refused.
if [ ! -x "$bench" ]; then
	skip "run-bench --suites" "atomkit-bench not built"
else
	"$srcdir/scripts/run-bench" --quick --bench "$bench" --machine test \
		--suites xcheck,harness --out "$tmp/only" >"$tmp/only.log" 2>&1
	rc=$?
	got=$(cd "$tmp/only" 2>/dev/null && ls *.json | tr '\n' ' ')
	if [ "$rc" -eq 0 ] && [ "$got" = "harness.json machine.json xcheck.json " ]; then
		ok "run-bench --suites xcheck,harness: those two suites only"
	else
		not_ok "run-bench --suites: exit $rc, wrote $got"
	fi
	"$srcdir/scripts/run-bench" --quick --bench "$bench" --machine test \
		--suites harness,bogus --out "$tmp/bogus" >"$tmp/bogus.log" 2>&1
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q "unknown suite 'bogus'" "$tmp/bogus.log" &&
		[ ! -e "$tmp/bogus" ]; then
		ok "run-bench --suites: an unknown suite is refused, nothing written"
	else
		not_ok "run-bench --suites bogus: exit $rc: $(tail -c 300 "$tmp/bogus.log")"
	fi
fi

finish
