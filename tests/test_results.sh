#!/bin/sh
# SPDX-License-Identifier: MIT
# Result sets and atomkit-report: the fixture set (tests/fixtures/
# set.tar.xz: a short real run of scripts/run-bench, stored; see
# tests/fixtures/README.md) renders with the expected
# table structure; a truncated file, a file with wrong types, an empty
# set and a set of another schema version each give the documented
# message and exit status (doc/report.md); and a run-bench killed
# mid-suite leaves no partial file and a set the reader accepts.  TAP on
# stdout; under the cross rig AK_TEST_RUNNER holds the qemu command line.
set -u

report=./report/atomkit-report
bench=./bench/atomkit-bench
srcdir=${AK_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
n=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fixture=$tmp/fixture/set
mkdir "$tmp/fixture" &&
	tar -xJf "$srcdir/tests/fixtures/set.tar.xz" -C "$tmp/fixture"

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

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

# Every Markdown table in FILE: each row has as many cells as its header.
tables_well_formed() {
	awk '
	/^\|/ {
		c = gsub(/\|/, "|") - gsub(/\\\|/, "")
		if (!intable) { cols = c; intable = 1; next }
		if (c != cols) { bad++; print "row " NR ": " c " cells, header " cols > "/dev/stderr" }
		next
	}
	{ intable = 0 }
	END { exit bad > 0 }' "$1"
}

if [ ! -x "$report" ]; then
	skip "atomkit-report" "not built (configure found no jansson: libjansson-dev)"
elif [ ! -f "$fixture/machine.json" ]; then
	not_ok "fixture set missing: $fixture"
else
	"$report" tables "$fixture" >"$tmp/tables.md" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ]; then
		ok "tables of the fixture: exit 0, nothing on stderr"
	else
		not_ok "tables of the fixture: exit $rc: $(head -c 300 "$tmp/err")"
	fi
	for h in '### Primitives, uncontended' '### Per-CPU operations' \
		'### CAS that succeeds against CAS that fails' \
		'### Slab, seed table 1' '### Slab, seed table 2' \
		'### Slab, seed table 3' '### Slab, seed table 4' \
		'### Slab beside the system allocators' \
		'### Targets of the slab issue'; do
		if grep -qF "$h" "$tmp/tables.md"; then
			ok "tables: has '$h'"
		else
			not_ok "tables: no '$h'"
		fi
	done
	for row in '| alloc(64) |' '| free(64) |' '| `add` |' \
		'| slub-tid | slub-local | rseq-list | array | sheaf | locked |' \
		'Unit: '; do
		if grep -qF -- "$row" "$tmp/tables.md"; then
			ok "tables: has '$row'"
		else
			not_ok "tables: no '$row'"
		fi
	done
	if tables_well_formed "$tmp/tables.md" 2>"$tmp/err"; then
		ok "tables: every row has its header's cells"
	else
		not_ok "tables: ragged rows: $(head -c 300 "$tmp/err")"
	fi
	"$report" select "$fixture" >"$tmp/select.md" 2>"$tmp/err"
	if [ $? -eq 0 ] && grep -q 'freelist' "$tmp/select.md" &&
		grep -q 'counter add' "$tmp/select.md"; then
		ok "select of the fixture ranks the allocator operations"
	else
		not_ok "select: $(head -c 300 "$tmp/err")"
	fi
	expect "check of the fixture" 0 "" "$report" check "$fixture"

	# broken copies
	cp -r "$fixture" "$tmp/trunc"
	head -c 2000 "$fixture/slab.json" >"$tmp/trunc/slab.json"
	expect "truncated file" 1 "slab.json: not valid JSON at line" \
		"$report" tables "$tmp/trunc"
	grep -q '### Per-CPU operations' "$tmp/out" &&
		ok "truncated file: the rest still rendered" ||
		not_ok "truncated file: nothing else rendered"
	cp -r "$fixture" "$tmp/types"
	sed -i '0,/"real_time": [0-9]/s//"real_time": "fast", "x": 1/' \
		"$tmp/types/percpu.json"
	expect "wrong type" 1 "percpu.json: benchmarks[0].real_time: expected a number, found a string" \
		"$report" check "$tmp/types"
	# a malformed identity field: said, the row's field dropped, exit 1
	cp -r "$fixture" "$tmp/label"
	sed -i '0,/"ak_size": [0-9]*/s//"ak_size": "big"/' \
		"$tmp/label/slab.json"
	expect "malformed label field" 1 "slab.json: benchmarks[0].ak_size: expected an integer, found a string" \
		"$report" check "$tmp/label"
	# a set without the fields (before scripts/label-results): said
	cp -r "$fixture" "$tmp/unlabelled"
	sed -i '/"ak_suite": /d' "$tmp/unlabelled/percpu.json"
	expect "unlabelled suite" 1 "percpu.json: benchmarks[0]: no ak_suite: row left out" \
		"$report" check "$tmp/unlabelled"
	# --format=text: the same table, aligned, without Markdown
	"$report" --format=text compare "$fixture" "$fixture" >"$tmp/text" \
		2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q '^|\|`\|\*\*\|^#' "$tmp/text" &&
	    grep -q '^benchmark  *unit  *A$' "$tmp/text" &&
	    grep -q '^benchmark  *B  *B/A$' "$tmp/text" &&
	    grep -q '^harness/empty_loop  ' "$tmp/text"; then
		ok "compare --format=text: aligned columns, no Markdown"
	else
		not_ok "compare --format=text: exit $rc: $(head -c 300 "$tmp/text")"
	fi
	# text tables fit a mail: every line within 80 columns ("–" is one),
	# no Markdown table rows, no escapes; long cells become notes
	"$report" --format=text tables "$fixture" >"$tmp/text.tables" \
		2>"$tmp/err"
	rc=$?
	for f in text text.tables; do
		long=$(sed 's/–/-/g' "$tmp/$f" | awk 'length($0) > 80' | head -n 2)
		if [ $rc -eq 0 ] && [ -z "$long" ] &&
		    ! grep -q '|\|\\' "$tmp/$f"; then
			ok "--format=text ($f): within 80 columns, no | or escapes"
		else
			not_ok "--format=text ($f): exit $rc, too long or escaped: $long"
		fi
	done
	# the fixture's topology is too long for the header's table: a note;
	# the primitive table is too wide for one: in parts
	if grep -q '^topology  *(1)$' "$tmp/text.tables" &&
	    grep -q '^(1) 1 package(s)' "$tmp/text.tables" &&
	    [ "$(grep -c '^primitive ' "$tmp/text.tables")" -ge 2 ]; then
		ok "--format=text tables: long cells as notes, wide tables in parts"
	else
		not_ok "--format=text tables: no notes or parts: $(head -c 300 "$tmp/text.tables")"
	fi
	expect "unknown format" 2 "unknown format 'html'" \
		"$report" --format=html tables "$fixture"
	mkdir "$tmp/empty"
	cp "$fixture/machine.json" "$tmp/empty/"
	expect "empty set" 3 "empty: no suite results" \
		"$report" tables "$tmp/empty"
	mkdir "$tmp/none"
	expect "no machine.json" 3 "no machine.json: not a result set" \
		"$report" check "$tmp/none"
	cp -r "$fixture" "$tmp/schema2"
	sed -i 's/"ak_schema": "1"/"ak_schema": "2"/' "$tmp/schema2/machine.json"
	expect "unknown schema" 3 "machine.json: schema version 2 is unknown" \
		"$report" check "$tmp/schema2"
	expect "two schemas compared" 3 "has schema 1" \
		"$report" compare "$fixture" "$tmp/schema2"
	expect "usage" 2 "unknown subcommand" "$report" frobnicate
fi

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

echo "1..$n"
[ "$failed" -eq 0 ]
