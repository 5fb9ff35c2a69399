#!/bin/sh
# SPDX-License-Identifier: MIT
# Result sets and atomkit-report: the fixture set (tests/fixtures/
# set.tar.xz: a short real run of scripts/run-bench, stored; see
# tests/fixtures/README.md) renders with the expected
# table structure; a truncated file, a file with wrong types, an empty
# set and a set of another schema version each give the documented
# message and exit status (doc/report.md); the honest fixture
# (tests/fixtures/honest.tar.xz) renders issue 14's tables and the whole
# programs with figures that match its files, and each kind of damage to
# its macro.json is one line and exit status 1; the counters fixture
# (tests/fixtures/macro.tar.xz) renders the designs' counters beside each
# whole-program table and the targets of the whole programs, from
# figures that match its macro.json, and damage to the counters is
# reported as any other; and a run-bench killed mid-suite leaves no
# partial file and a set the reader accepts.  TAP on stdout; under the
# cross rig AK_TEST_RUNNER holds the qemu command line.
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
honest=$tmp/honest/set
mkdir "$tmp/honest" &&
	tar -xJf "$srcdir/tests/fixtures/honest.tar.xz" -C "$tmp/honest"
counters=$tmp/counters/set
mkdir "$tmp/counters" &&
	tar -xJf "$srcdir/tests/fixtures/macro.tar.xz" -C "$tmp/counters"

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
	# a set from before the bare-section rows says so, and renders
	for row in '| alloc(64) |' '| free(64) |' '| `add` |' \
		'| slub-tid | slub-local | rseq-list | array | sheaf | locked |' \
		'Unit: ' \
		'No table of what each per-CPU op costs beyond its rseq section: this set predates the bare-section rows'; do
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
	# --format=text compare: a section per suite and group, rows named
	# by their identity fields, before, after and the delta
	"$report" --format=text compare "$fixture" "$fixture" >"$tmp/text" \
		2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] && ! grep -q '^|\|`\|\*\*\|^#' "$tmp/text" &&
	    grep -q '^ *before  *after  *delta$' "$tmp/text" &&
	    grep -q '^harness, TSC ticks$' "$tmp/text" &&
	    grep -q '^slab seq, TSC ticks$' "$tmp/text" &&
	    grep -q '^contention x86_64 spread, Mops/s$' "$tmp/text" &&
	    grep -q '^empty_loop  ' "$tmp/text" &&
	    grep -q '^rseq-list size:64  ' "$tmp/text"; then
		ok "compare --format=text: sections, short row names, no Markdown"
	else
		not_ok "compare --format=text: exit $rc: $(head -c 300 "$tmp/text")"
	fi
	# a change beyond the noise has its sign and flag, both ways round
	# (fixture to honest fixture: the slab pair rseq-list 64 got faster)
	pair_row() {
		"$report" --format=text compare "$1" "$2" 2>/dev/null |
			awk '/^slab pair, / { on = 1 }
			     on && /^rseq-list size:64 / { print; exit }'
	}
	fwd=$(pair_row "$fixture" "$honest")
	back=$(pair_row "$honest" "$fixture")
	if echo "$fwd" | grep -q ' -[0-9.]*%  faster$' &&
	    echo "$back" | grep -q ' +[0-9.]*%  slower$'; then
		ok "compare --format=text: a known change's sign and flag"
	else
		not_ok "compare --format=text: rseq-list pair: '$fwd' / '$back'"
	fi
	# text tables fit a mail: every line within 80 columns ("–" is one),
	# no Markdown table rows, no escapes; long cells become notes
	"$report" --format=text compare "$fixture" "$honest" \
		>"$tmp/text.compare" 2>/dev/null
	"$report" --format=text tables "$fixture" >"$tmp/text.tables" \
		2>"$tmp/err"
	rc=$?
	for f in text text.compare text.tables; do
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

# The honest fixture (tests/fixtures/honest.tar.xz, a short real run: warm
# and cold slab rows, the fastpath pairs, cache lines with the timer's
# cost, and the macro.json of scripts/run-macro): issue 14's tables and
# the whole programs, figures checked against the files, and each kind
# of damage to macro.json.

# has WHAT FILE PATTERN...: each fixed string is in FILE
has() {
	what=$1 file=$2
	shift 2
	for p in "$@"; do
		if ! grep -qF -- "$p" "$file"; then
			not_ok "$what: no '$p'"
			return
		fi
	done
	ok "$what"
}

# the figure as atomkit-report writes it: 3 significant digits
num_awk='function num(v, s) {
	if (v >= 99.95 || v <= -99.95 || v == 0)
		return sprintf("%.0f", v)
	s = sprintf("%#.3g", v)
	sub(/\.$/, "", s)
	return s
}'

# clean NAME OUT CMD...: CMD exits 0 with nothing on stderr, output in OUT
clean() {
	name=$1 out=$2
	shift 2
	if "$@" >"$out" 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then
		ok "$name: exit 0, nothing on stderr"
	else
		not_ok "$name: $(head -c 300 "$tmp/err")"
	fi
}

# targets_ok FILE MIN: FILE's target rows (at least MIN) each say met
# exactly when the ratio is within the goal, else the gap; n/a without a
# ratio
targets_ok() {
	awk -F ' [|] ' -v min="$2" '
	/^\| / && !/^\| target / && !/^\|---/ {
		v = $5
		sub(/ \|$/, "", v)
		n++
		if ($3 == "–") {
			if (v !~ /^n\/a: /) { print "no ratio: " $0; bad++ }
			next
		}
		r = $3; sub(/x$/, "", r)
		g = $4; sub(/^[<>]= /, "", g); sub(/x$/, "", g)
		met = $4 ~ /^</ ? r + 0 <= g + 0 : r + 0 >= g + 0
		if (v == "met" ? !met : (v !~ /^not met: [0-9.]+% (over|under)/ || (met && r + 0 != g + 0))) {
			print "verdict: " $0; bad++
		}
	}
	END { if (n < min) print n " rows"; exit bad > 0 || n < min }' "$1"
}

# damage NAME MESSAGE SED: the honest fixture, with its macro.json (or
# $damaged, another one) edited by SED, is one line naming the file, the
# place and MESSAGE, exit 1, and the whole programs left out
damage() {
	dname=$1 msg=$2 edit=$3
	rm -rf "$tmp/bad"
	cp -r "$honest" "$tmp/bad"
	[ -z "${damaged:-}" ] || cp "$damaged" "$tmp/bad/macro.json"
	sed -i "$edit" "$tmp/bad/macro.json"
	expect "macro.json: $dname" 1 "$tmp/bad/macro.json: $msg" \
		"$report" check "$tmp/bad"
	if [ "$(grep -c . "$tmp/err")" -ne 1 ] ||
	    ! grep -q ': the whole programs are left out$' "$tmp/err"; then
		not_ok "macro.json: $dname: not one line: $(head -c 300 "$tmp/err")"
	fi
}

# fixture NAME FILE: whether atomkit-report is built (else a skip) and the
# fixture's FILE unpacked (else a failure)
fixture() {
	if [ ! -x "$report" ]; then
		skip "$1" "atomkit-report not built"
		return 1
	fi
	[ -f "$2" ] && return 0
	not_ok "$1 missing: $2"
	return 1
}

# the lines of FILE from the heading starting with $2 to the next heading
section() {
	awk -v h="### $2" 'index($0, h) == 1 { on = 1; print; next }
		/^### / { on = 0 } on' "$1"
}

if fixture "honest fixture" "$honest/macro.json"; then
	clean "tables of the honest fixture" "$tmp/h.md" \
		"$report" tables "$honest"
	has "tables: issue 14's tables and the whole programs" "$tmp/h.md" \
		'### Slab seq at 4096 and 16384 B against the best system allocator' \
		'### Slab, cold start' \
		'### What each design costs beyond its fastpath primitive' \
		'### What each per-CPU op costs beyond its rseq section' \
		'### Targets of the slab issue' '**corrected**: the raw figure less timer' \
		'### Whole program: compile (compile)' \
		'### Whole program: churn (synthetic)' \
		'Workloads left out: sizemix (' '| failed runs |'
	if tables_well_formed "$tmp/h.md" 2>"$tmp/err"; then
		ok "honest tables: every row has its header's cells"
	else
		not_ok "honest tables: ragged rows: $(head -c 300 "$tmp/err")"
	fi

	# every slab table says its figures are warm; the cold one, cold
	if awk '
	/^### / {
		if (want && !seen) { print "no caption: " h; bad++ }
		h = $0; seen = 0
		want = h ~ /^### (Slab|What each design|Targets)/
		n += want
		next
	}
	want && !seen && /^Unit: / {
		seen = 1
		if (h ~ /cold start/ ? $0 !~ /\*\*cold start\*\*/ : $0 !~ /warm steady state/) {
			print "not labelled: " h; bad++
		}
	}
	END { exit bad > 0 || n < 10 }' "$tmp/h.md" >"$tmp/err"; then
		ok "every slab table says warm steady state, the cold start says cold"
	else
		not_ok "slab captions: $(head -c 300 "$tmp/err")"
	fi

	# the cold start: each size, the slabs of a design's runs
	section "$tmp/h.md" "Slab, cold start" >"$tmp/cold"
	if grep -q '^| 64 | [0-9.]* / [0-9.]* ([0-9]* slabs) |' "$tmp/cold" &&
	    grep -q '^| 4096 |' "$tmp/cold" && grep -q '^| 16384 |' "$tmp/cold"; then
		ok "cold start: sizes 64, 4096, 16384 with the slabs mapped"
	else
		not_ok "cold start: $(head -c 400 "$tmp/cold")"
	fi

	# over 2x the best system allocator exactly where a note says why
	section "$tmp/h.md" "Slab seq at 4096" >"$tmp/gap"
	if awk -F ' [|] ' '
	/^\| (alloc|free)\(/ {
		for (i = 3; i <= NF; i++) {
			c = $i
			sub(/ \|$/, "", c)
			if (c !~ /^[0-9.]+x/)
				continue
			r = c
			sub(/x.*/, "", r)
			# the figure shown is rounded: 2.00x may be over
			if (c ~ /x \([0-9]+\)$/ ? r + 0 < 2 : r + 0 > 2) {
				print "cell " c; bad++
			}
			n++
		}
	}
	END { exit bad > 0 || n < 4 }' "$tmp/gap" >"$tmp/err" &&
	    { ! grep -q 'x ([0-9]*) |' "$tmp/gap" ||
	      grep -q 'new\\_slabs' "$tmp/gap"; }; then
		ok "seq at 4096/16384: a note exactly on the figures over 2x, with the counters"
	else
		not_ok "seq at 4096/16384: $(head -c 300 "$tmp/err")"
	fi

	# the decomposition names the primitive of each design's fastpath
	has "decomposition: each design beside its primitive pair" "$tmp/h.md" \
		'| slub-tid | rseq | `percpu/tid_pop_push/rseq` |' \
		'| slub-local | rseq | `percpu/local_pop_push/rseq` |' \
		'| rseq-list | rseq | `percpu/list_pop_push_section/rseq` |' \
		'| array | rseq | `percpu/array_pop_push_section/rseq` |' \
		'| sheaf | rseq | `percpu/array_ptr_pop_push_section/rseq` |' \
		'| locked | rseq | `prim/ref/mutex_pop_push/lat` |'

	# every this_cpu op of an rseq mode beside its bare section, the
	# ratio's verdict within the goal as the targets'
	section "$tmp/h.md" "What each per-CPU op costs beyond its rseq section" |
		awk -F ' [|] ' '/^\| `/ { print "| " $1 " | " $6 " | " $6 " | <= 1.05x | " $7 }' |
		sed 's/^| | `/| `/' >"$tmp/opdecomp"
	if targets_ok "$tmp/opdecomp" 20 >"$tmp/err" &&
	    grep -qF '| `add` | rseq | ' "$tmp/h.md" &&
	    grep -qF '| `array_push_pop` | rseq-mm\_cid | ' "$tmp/h.md"; then
		ok "per-CPU decomposition: each op beside its section, verdicts within 1.05x"
	else
		not_ok "per-CPU decomposition: $(head -c 300 "$tmp/err") $(head -c 300 "$tmp/opdecomp")"
	fi

	# each target: met exactly when its ratio is within the goal
	section "$tmp/h.md" "Targets of the slab issue" >"$tmp/targets"
	if targets_ok "$tmp/targets" 9 >"$tmp/err" &&
	    grep -qF '| every this\_cpu op, rseq modes / its section (worst) |' "$tmp/targets" &&
	    grep -qF '| best pair 64 B / the sections it runs |' "$tmp/targets" &&
	    ! grep -qF 'array\_push\_pop rseq |' "$tmp/targets" &&
	    grep -qF '| best seq free(64) / mimalloc'"'"'s |' "$tmp/targets"; then
		ok "targets: each met exactly within its goal, else the gap"
	else
		not_ok "targets: $(head -c 300 "$tmp/err") $(head -c 300 "$tmp/targets")"
	fi

	# cache lines: the L1 load is the median less its timer_ticks
	l1=$(awk "$num_awk"'
	/"name": "cacheline\/L1\/load\/manual_time_median"/ { on = 1 }
	on && /"tsc_ticks":/ { gsub(/[^0-9.eE+-]/, "", $2); raw = $2 }
	on && /"timer_ticks":/ { gsub(/[^0-9.eE+-]/, "", $2); tim = $2 }
	on && /^    }/ { on = 0 }
	END { print num(raw - tim) }' "$honest/cacheline.json")
	if grep -qF "| L1 | $l1 (" "$tmp/h.md"; then
		ok "cache lines: L1 load is raw - timer_ticks ($l1)"
	else
		not_ok "cache lines: no L1 load of $l1: $(grep '^| L1 ' "$tmp/h.md")"
	fi

	# the whole programs: glibc's compile is the mean of its runs
	m=$(awk "$num_awk"'
	/"kind": "(compile|program|synthetic)"/ { w = $0 ~ /"name": "compile"/ }
	/"allocator": / { a = $0 ~ /"allocator": "glibc"/ }
	w && a && /"run": / && /"ok": true/ {
		s = $0
		sub(/.*"elapsed_s": /, "", s)
		sub(/,.*/, "", s)
		sum += s
		n++
	}
	END { print n ? num(sum / n) : "none" }' "$honest/macro.json")
	e=$(section "$tmp/h.md" "Whole program: compile" |
		awk -F ' [|] ' '/^\| glibc / { print $4 }')
	case $e in
	"$m "*|"$m") ok "whole programs: glibc's compile elapsed is the mean of its runs ($m)" ;;
	*) not_ok "whole programs: glibc's compile elapsed '$e', the runs' mean $m" ;;
	esac
	# a workload whose runs all failed: every row says so, no figure
	section "$tmp/h.md" "Whole program: git" >"$tmp/git"
	if [ "$(grep -c '^| [a-z-]* | – | – | – | – | – | – | 2 of 2 ([0-9])' "$tmp/git")" -eq 10 ]; then
		ok "whole programs: failed runs counted, with their notes, out of the means"
	else
		not_ok "whole programs: git: $(head -c 400 "$tmp/git")"
	fi
	"$report" check "$honest" >"$tmp/out" 2>&1
	if grep -q 'ok (6 suites, [0-9]* benchmarks; whole programs: 7 workloads, 10 allocators)' "$tmp/out"; then
		ok "check: counts the whole programs, macro not missing"
	else
		not_ok "check: $(cat "$tmp/out")"
	fi

	"$report" select "$honest" "$honest" >"$tmp/hs.md" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] &&
	    grep -q '^The fastest 64 B alloc+free pair among the designs is \*\*[a-z-]*\*\*' "$tmp/hs.md" &&
	    grep -q '^| fastpath against whole programs | pair: [a-z-]*; programs: .* | no |$' "$tmp/hs.md"; then
		ok "select: the fastest pair against the fastest programs, per set and across sets"
	else
		not_ok "select: exit $rc: $(grep -A2 'Fastpath against' "$tmp/hs.md" | head -c 400)"
	fi

	AK_GNUPLOT= "$report" plot "$honest" -o "$tmp/hplots" >/dev/null 2>"$tmp/err"
	rc=$?
	bad=
	nd=0
	for f in "$tmp/hplots"/macro-*.dat; do
		[ -f "$f" ] || continue
		nd=$((nd + 1))
		head -n 1 "$f" | grep -q "^allocator	elapsed / glibc	peak RSS / glibc$" &&
			grep -q "^glibc	1	1$" "$f" || bad="$bad $f"
	done
	if [ $rc -eq 0 ] && [ "$nd" -ge 1 ] && [ -z "$bad" ] &&
	    grep -q 'macro-.*\.svg' "$tmp/hplots/plots.gp"; then
		ok "plot: a data file and plot per whole program, relative to glibc ($nd)"
	else
		not_ok "plot: exit $rc, $nd files, bad:$bad $(head -c 200 "$tmp/err")"
	fi

	"$report" --format=text tables "$honest" >"$tmp/h.txt" 2>"$tmp/err"
	rc=$?
	long=$(sed 's/–/-/g' "$tmp/h.txt" | awk 'length($0) > 80' | head -n 2)
	if [ $rc -eq 0 ] && [ -z "$long" ] && ! grep -q '|' "$tmp/h.txt"; then
		ok "--format=text: the new tables within 80 columns"
	else
		not_ok "--format=text: exit $rc, too long: $long"
	fi

	# a set of machine.json and macro.json alone (run-macro --out)
	mkdir "$tmp/macro-only"
	cp "$honest/macro.json" "$tmp/macro-only/"
	sed 's/"ak_suites": "[^"]*"/"ak_suites": "macro"/' \
		"$honest/machine.json" >"$tmp/macro-only/machine.json"
	"$report" check "$tmp/macro-only" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q '(0 suites, 0 benchmarks; whole programs: ' "$tmp/out" &&
	    ! grep -q missing "$tmp/out" &&
	    "$report" tables "$tmp/macro-only" | grep -q '^### Whole program: sqlite'; then
		ok "a set of the whole programs alone is a set"
	else
		not_ok "whole programs alone: exit $rc: $(cat "$tmp/out")"
	fi

	# damage: one line naming the file and the place, exit 1, the rest
	# of the set still rendered
	damage "negative time" 'workloads[0].results[0].runs[0].elapsed_s: -0.5 is negative' \
		'0,/"elapsed_s": [0-9.]*/s//"elapsed_s": -0.5/'
	damage "wrong type" 'workloads[0].results[0].runs[0].user_s: expected a number, found a string' \
		'0,/"user_s": [0-9.]*/s//"user_s": "fast"/'
	damage "member missing" 'workloads[0].results[0].runs[0].max_rss_kb: missing' \
		'0,/"max_rss_kb": [0-9]*, /s///'
	damage "unknown schema" 'ak_macro_schema: version 3 is unknown (this atomkit-report reads versions 1 and 2)' \
		's/"ak_macro_schema": "1"/"ak_macro_schema": "3"/'
	damage "failures miscounted" 'ak_failures: 999, but ' \
		's/"ak_failures": [0-9]*/"ak_failures": 999/'
	damage "unknown allocator" 'workloads[0].results[1].allocator: "nosuch" is not an allocator that ran' \
		'0,/"allocator": "tcmalloc"/s//"allocator": "nosuch"/'
	damage "run out of range" 'workloads[0].results[0].runs[1].run: 7 is not one of the' \
		'0,/"run": 2,/s//"run": 7,/'
	damage "status" 'allocators[0].status: "done" is neither ran nor skipped' \
		'0,/"status": "ran"/s//"status": "done"/'
	damage "not an object" 'expected an object at the top, found an array' \
		'1s/^{/[{/; $s/}$/}]/'
	head -c 3000 "$honest/macro.json" >"$tmp/bad/macro.json"
	expect "macro.json: truncated" 1 "$tmp/bad/macro.json: not valid JSON at line" \
		"$report" tables "$tmp/bad"
	if grep -q '^### Slab, seed table 1' "$tmp/out" &&
	    grep -q '^No whole-program tables: macro.json is damaged' "$tmp/out"; then
		ok "macro.json damaged: the rest of the set still rendered"
	else
		not_ok "macro.json damaged: $(head -c 300 "$tmp/out")"
	fi

	# schema 1: no counters, but the targets, without the failed runs
	section "$tmp/h.md" "Targets of the whole programs" >"$tmp/mt"
	if grep -q '^No counters of libatomkit-malloc.so beside the tables: the set predates them' "$tmp/h.md" &&
	    ! grep -q '^The counters of libatomkit-malloc.so' "$tmp/h.md" &&
	    targets_ok "$tmp/mt" 28 >"$tmp/err" &&
	    [ "$(grep -c '^| git: .* | n/a: ' "$tmp/mt")" -eq 4 ] &&
	    grep -q '^Left out of the targets, for their failed runs: git: glibc (2 of 2), tcmalloc (2 of 2)' "$tmp/mt"; then
		ok "schema 1: no counters; the targets, git n/a with its failed runs"
	else
		not_ok "schema 1: $(head -c 300 "$tmp/err") $(grep -i 'counters\|left out' "$tmp/h.md" | head -c 300)"
	fi

	# a set from before: not known to be warm, no cold start, raw lines
	has "an older set says what its figures are" "$tmp/tables.md" \
		'not known to be warm' 'No cold-start table' \
		'not corrected: set predates the timer measurement'
fi

# The counters fixture (tests/fixtures/macro.tar.xz, a --quick run of
# scripts/run-macro, two runs, ak_macro_schema 2): every workload's table
# has the designs' counters under it, figures that are the means of the
# file's, and the targets of the whole programs; damage to the counters
# is one line, as any other.
if fixture "counters fixture" "$counters/macro.json"; then
	clean "tables of the counters fixture" "$tmp/c.md" \
		"$report" tables "$counters"
	if tables_well_formed "$tmp/c.md" 2>"$tmp/err"; then
		ok "counters tables: every row has its header's cells"
	else
		not_ok "counters tables: ragged rows: $(head -c 300 "$tmp/err")"
	fi
	nw=$(grep -c '^### Whole program: ' "$tmp/c.md")
	nc=$(grep -c '^| design | procs | refills | slabs made | slabs freed | heap misses | madvise | mapped MiB | fallback |$' "$tmp/c.md")
	if [ "$nw" -ge 1 ] && [ "$nc" -eq "$nw" ]; then
		ok "counters: a table under each of the $nw whole-program tables"
	else
		not_ok "counters: $nc counter tables for $nw workloads"
	fi

	# sheaf's refills on redis: the mean of its runs' sums
	want=$(awk "$num_awk"'
	/"kind": "(compile|program|synthetic)"/ { w = $0 ~ /"name": "redis"/ }
	/"allocator": / { a = $0 ~ /"allocator": "sheaf"/ }
	w && a && /"ok": true/ {
		s = $0
		sub(/.*"malloc_counters": \{[^}]*"refills": /, "", s)
		sub(/,.*/, "", s)
		sum += s
		n++
	}
	END { if (!n) print "none"; else if (sum % n) print num(sum / n); else print sum / n }' "$counters/macro.json")
	got=$(section "$tmp/c.md" "Whole program: redis" |
		awk -F ' [|] ' '/^\| sheaf \| [0-9]/ && NF == 9 { print $3 }')
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		ok "counters: sheaf's refills on redis are the mean of its runs ($want)"
	else
		not_ok "counters: sheaf's refills on redis '$got', the runs' mean $want"
	fi

	# the targets: four a workload, each verdict within its goal; the
	# fastest design's elapsed on redis is the lowest mean of the file's
	section "$tmp/c.md" "Targets of the whole programs" >"$tmp/mt"
	best=$(awk "$num_awk"'
	/"kind": "(compile|program|synthetic)"/ { w = $0 ~ /"name": "redis"/ }
	/"allocator": / {
		match($0, /"allocator": "[^"]*"/)
		a = substr($0, RSTART + 14, RLENGTH - 15)
	}
	w && /"run": / && /"malloc_counters"/ {
		s = $0
		sub(/.*"elapsed_s": /, "", s)
		sub(/,.*/, "", s)
		sum[a] += s
		n[a]++
	}
	END {
		for (a in sum)
			if (!who || sum[a] / n[a] < sum[who] / n[who])
				who = a
		print who " " num(sum[who] / n[who])
	}' "$counters/macro.json")
	if targets_ok "$tmp/mt" $((4 * nw)) >"$tmp/err" &&
	    grep -q "^| redis: elapsed | $best / " "$tmp/mt"; then
		ok "whole-program targets: $nw x 4 rows within their goals; redis's fastest design $best"
	else
		not_ok "whole-program targets: $(head -c 300 "$tmp/err"), want '$best': $(grep '^| redis: elapsed' "$tmp/mt")"
	fi

	"$report" --format=text tables "$counters" >"$tmp/c.txt" 2>"$tmp/err"
	rc=$?
	long=$(sed 's/–/-/g' "$tmp/c.txt" | awk 'length($0) > 80' | head -n 2)
	if [ $rc -eq 0 ] && [ -z "$long" ] &&
	    grep -q '^design  *procs  *refills  *slabs  *slabs  *heap  *madvise  *mapped MiB  *fallback$' "$tmp/c.txt"; then
		ok "--format=text: the counters in one part of 80 columns"
	else
		not_ok "--format=text: exit $rc, too long: $long"
	fi

	damaged=$counters/macro.json
	damage "counters: negative" 'workloads[0].results[4].runs[0].malloc_counters.refills: -1 is negative' \
		'0,/"refills": [0-9]*/s//"refills": -1/'
	damage "counters: wrong type" 'workloads[0].results[4].runs[0].malloc_counters.processes: expected an integer, found a string' \
		'0,/"processes": [0-9]*/s//"processes": "many"/'
	damage "counters: a design without" 'workloads[0].results[4].runs[0].malloc_counters: missing (a run of a design' \
		'0,/"malloc_counters": {[^}]*}, /s///'
	damage "counters: a system allocator with" 'workloads[0].results[0].runs[0].malloc_counters: glibc is not a design' \
		'0,/"output_sha256"/s//"malloc_counters": {}, "output_sha256"/'
	damage "counters: none reported in a run that is ok" 'workloads[0].results[4].runs[0].malloc_counters.processes: 0 in a run that is ok' \
		'0,/"processes": [0-9]*/s//"processes": 0/'
	damage "variant of a system allocator" 'allocators[4].variant_of: "glibc" is not a design of this file' \
		'0,/"env": {"AK_MALLOC_DESIGN": "slub-tid"}/s//"variant_of": "glibc", &/'
	damaged=

	# a variant (slub-local relabelled as slub-tid with a knob) is shown
	# beside its design on every workload, never in the targets
	rm -rf "$tmp/var"
	cp -r "$counters" "$tmp/var"
	sed -i 's/"env": {"AK_MALLOC_DESIGN": "slub-local"}/"variant_of": "slub-tid", "env": {"AK_MALLOC_DESIGN": "slub-tid", "AK_SLAB_CPU_PARTIAL": "0"}/' \
		"$tmp/var/macro.json"
	"$report" tables "$tmp/var" >"$tmp/v.md" 2>"$tmp/err"
	rc=$?
	section "$tmp/v.md" "Each design beside its variants" >"$tmp/vt"
	section "$tmp/v.md" "Targets of the whole programs" >"$tmp/mt"
	rows=$(grep -c '^| [a-z0-9-]* | slub-tid | `AK_SLAB_CPU_PARTIAL=0` | [0-9.]' "$tmp/vt")
	if [ $rc -eq 0 ] && [ "$rows" -eq "$nw" ] && [ -s "$tmp/mt" ] &&
	    ! grep -q 'slub-local' "$tmp/mt"; then
		ok "variants: beside their design on all $nw workloads, not in the targets"
	else
		not_ok "variants: exit $rc, $rows of $nw rows, targets: $(grep -c slub-local "$tmp/mt") naming the variant"
	fi
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

echo "1..$n"
[ "$failed" -eq 0 ]
