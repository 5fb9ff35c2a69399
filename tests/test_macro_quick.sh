#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole-program benchmarks' quick mode: every workload once, on tiny
# inputs (scripts/run-macro --quick), under glibc and under every other
# allocator this machine has (the system mallocs preloaded, our designs
# once libatomkit-malloc.so is built): every run must exit 0 and print
# what glibc's run printed, and every run of a design must carry the
# counters of the processes the library served (none of another
# allocator).  A workload whose program is not installed is skipped, with
# the reason; one skipped for anything else fails.
#
# The synthetic workloads print functions of their arguments alone, the
# same for any thread count and on every arch: their output must equal
# tests/fixtures/macro-quick.out (the line of the workload's program),
# with two thread counts.  Under the cross
# rig (AK_TEST_RUNNER holds the qemu command line) only they run, through
# the runner: Debian's programs and the preloaded allocators are the
# host's.  Figures are not looked at.  TAP on stdout.
set -u

run="${AK_TEST_RUNNER:-}"
srcdir=${AK_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
macro=$srcdir/scripts/run-macro
fixture=$srcdir/tests/fixtures/macro-quick.out
bin=./bench/macro
. "$srcdir/tests/tap.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ ! -x "$bin/churn" ]; then
	echo "1..1"
	echo "ok 1 - macro # SKIP bench/macro not built"
	exit 0
fi

# Bad arguments are refused with a message and exit 2, never run.
bad=
for args in "-t 1 -n 10" "-t 2" "-t 2 -n 0" "-t 2 -n 10 -x 1" \
	    "-t 2 -n 1x" "-t 999 -n 10" "-t 2 -n 10 -s"; do
	# shellcheck disable=SC2086
	$run "$bin/churn" $args >/dev/null 2>"$out/err"
	rc=$?
	if [ "$rc" -ne 2 ] || [ ! -s "$out/err" ]; then
		bad="$bad '$args' (exit $rc)"
	fi
done
if [ -z "$bad" ]; then
	ok "churn refuses bad arguments with a message and exit 2"
else
	not_ok "churn accepted or crashed on:$bad"
fi

# The synthetic workloads, as run-macro --quick runs them, and again with
# another thread count: the fixture's output both times.
"$macro" --quick --plan --builddir . \
	--workloads churn,prodcons,falseshare,sizemix,remotefree,mixloop-1t,mixloop-2t \
	>"$out/plan" 2>&1 ||
	not_ok "run-macro --quick --plan: $(head -c 300 "$out/plan")"
while read -r name kind cmd; do
	eval "set -- $cmd"
	want=$(grep -m 1 "^${1##*/}: " "$fixture")
	for t in plan 3; do
		eval "set -- $cmd"
		if [ "$t" = 3 ]; then
			# the same command with -t 3
			for a in "$@"; do
				shift
				if [ "${prev:-}" = -t ]; then a=3; fi
				prev=$a
				set -- "$@" "$a"
			done
			prev=
		fi
		$run "$@" >"$out/$name.out" 2>"$out/$name.err"
		rc=$?
		got=$(cat "$out/$name.out")
		if [ "$rc" -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
			ok "$name ($kind, threads: $t): exit 0, the fixture's output"
		else
			not_ok "$name ($kind, threads: $t): exit $rc, printed '$got', expected '$want': $(tail -c 300 "$out/$name.err")"
		fi
	done
done <"$out/plan"

# More CPUs than the programs take threads: the plan stays at their cap.
cap=$(sed -n 's/^#define MACRO_MAX_THREADS \([0-9][0-9]*\).*/\1/p' \
	"$srcdir/bench/macro/macro.h")
"$macro" --quick --plan --builddir . --jobs $((cap + 44)) \
	--workloads churn,remotefree,mixloop-2t >"$out/plan-cap" 2>&1
rc=$?
got=$(sed -n 's/.* -t \([0-9]*\) .*/\1/p' "$out/plan-cap" | tr '\n' ' ')
if [ "$rc" -eq 0 ] && [ -n "$cap" ] && [ "$got" = "$cap $cap 2 " ]; then
	ok "run-macro --jobs $((cap + 44)): the synthetic workloads at $cap threads, the programs' cap"
else
	not_ok "run-macro --jobs $((cap + 44)): exit $rc, threads '$got' (cap '$cap'): $(head -c 300 "$out/plan-cap")"
fi

if [ -n "$run" ]; then
	skip "run-macro --quick" "under AK_TEST_RUNNER: Debian's programs and the preloaded allocators are the host's, not the emulated arch's"
	finish
fi

# The runner's own input: refused with exit 2 and a message.
bad=
for args in "--bogus" "--workloads nope" "--allocators glibc,nope" \
	    "--runs 0" "--runs x" "--jobs" "--timeout -1"; do
	# shellcheck disable=SC2086
	"$macro" $args --out "$out/never" >/dev/null 2>"$out/err"
	rc=$?
	if [ "$rc" -ne 2 ] || [ ! -s "$out/err" ]; then
		bad="$bad '$args' (exit $rc)"
	fi
done
if [ -z "$bad" ] && [ ! -e "$out/never/macro.json" ]; then
	ok "run-macro refuses bad options with a message and exit 2"
else
	not_ok "run-macro accepted:$bad"
fi

"$macro" --quick --builddir . --machine test --out "$out/set" \
	>"$out/log" 2>&1
rc=$?
j=$out/set/macro.json
if [ "$rc" -eq 0 ] && [ -s "$j" ] && [ -s "$out/set/macro.txt" ]; then
	ok "run-macro --quick: exit 0, macro.json and macro.txt written"
else
	not_ok "run-macro --quick: exit $rc: $(tail -c 600 "$out/log")"
	finish
fi
if ls "$out/set" | grep -q '\.tmp$'; then
	not_ok "temporary files left in the set: $(ls "$out/set")"
fi

# Every allocator this machine has ran: none skipped for a preload that
# did not take.
ran=$(sed -n 's/^    {"name": "\([^"]*\)", "kind": "\(system\|design\)", .*"status": "ran".*/\1/p' "$j" | tr '\n' ' ')
. "$srcdir/scripts/bench-lib"
have=glibc
for a in $ak_system_mallocs; do
	[ -z "$(ak_malloc_path "${a#*:}")" ] || have="$have ${a%%:*}"
done
lib=${AK_MALLOC_LIB:-./malloc/.libs/libatomkit-malloc.so}
if [ -f "$lib" ]; then
	have="$have slub-tid slub-local rseq-list array sheaf locked"
fi
if ak_sanitized "$bin/churn"; then
	have=glibc
fi
missing=
for a in $have; do
	case " $ran" in *" $a "*) ;; *) missing="$missing $a" ;; esac
done
if [ -z "$missing" ]; then
	ok "allocators run: $ran"
else
	not_ok "allocators installed here but not run:$missing ($(grep '"status": "skipped"' "$j" | head -n 3))"
fi

# Each workload: every run of every allocator exited 0 and printed
# glibc's output; or the workload is skipped with the reason.
awk '
	/^    \{"name": / {
		match($0, /"name": "[^"]*"/)
		w = substr($0, RSTART + 9, RLENGTH - 10)
		order[++nw] = w
		if ($0 ~ /"status": "skipped"/) {
			match($0, /"reason": "[^"]*"/)
			skip[w] = substr($0, RSTART + 11, RLENGTH - 12)
		}
		next
	}
	/^      \{"allocator": / {
		match($0, /"allocator": "[^"]*"/)
		a = substr($0, RSTART + 14, RLENGTH - 15)
		allocs[w] = allocs[w] " " a
		next
	}
	/^        \{"run": / {
		runs[w]++
		if ($0 !~ /"exit_status": 0,/ || $0 !~ /"timed_out": false/ ||
		    $0 !~ /"output_matches_baseline": true/ ||
		    $0 !~ /"ok": true/)
			bad[w] = bad[w] " [" a "] " $0
	}
	END {
		for (i = 1; i <= nw; i++) {
			w = order[i]
			if (w in skip)
				print "skip\t" w "\t" skip[w]
			else if (!runs[w])
				print "bad\t" w "\tno runs recorded"
			else if (w in bad)
				print "bad\t" w "\t" substr(bad[w], 1, 600)
			else
				print "ok\t" w "\t" runs[w] " run(s):" allocs[w]
		}
	}' "$j" >"$out/verdicts"
for w in compile sqlite python git redis perl churn prodcons falseshare \
	 sizemix remotefree mixloop-1t mixloop-2t; do
	v=$(grep "	$w	" "$out/verdicts" || echo "bad	$w	not in macro.json")
	what=$(echo "$v" | cut -f 3-)
	case $v in
	ok*) ok "$w: $what, every one exit 0 with glibc's output" ;;
	skip*)
		case $w:$what in
		compile:*"not installed"*|sqlite:*"not installed"*|\
		python:*"not installed"*|git:*"not installed"*|\
		redis:*"not installed"*|perl:*"not installed"*)
			skip "$w" "$what" ;;
		*) not_ok "$w: skipped: $what" ;;
		esac ;;
	*) not_ok "$w: $what" ;;
	esac
done

# The counters: in every run of a design, from at least one process; in
# no run of another allocator.
awk '
	/^      \{"allocator": / {
		match($0, /"allocator": "[^"]*"/)
		a = substr($0, RSTART + 14, RLENGTH - 15)
		next
	}
	/^        \{"run": / {
		n++
		design = a ~ /^(slub-tid|slub-local|rseq-list|array|sheaf|locked)$/
		has = match($0, /"malloc_counters": \{"processes": [1-9][0-9]*, /) > 0
		if (design != has || (!design && $0 ~ /malloc_counters/))
			bad = bad " [" a "] " substr($0, 1, 200)
	}
	END { print n + 0; print bad }' "$j" >"$out/counters"
if [ "$(sed -n 1p "$out/counters")" -gt 0 ] &&
    [ -z "$(sed -n 2p "$out/counters")" ]; then
	ok "counters: in every design's run, from a process at least; in no other"
else
	not_ok "counters: $(sed -n 2p "$out/counters" | head -c 600)"
fi

# run-macro renders the set itself: a whole-program table and a plot for
# every workload that ran (where atomkit-report is built)
report=${AK_REPORT:-./report/atomkit-report}
if [ ! -x "$report" ]; then
	skip "the set rendered" "atomkit-report not built"
else
	unrendered=
	for w in $(sed -n 's/^ok	\([^	]*\)	.*/\1/p' "$out/verdicts"); do
		grep -q "^### Whole program: $w (" "$out/set/tables.md" 2>/dev/null &&
			ls "$out/set/plots/"macro-*-"$w".svg >/dev/null 2>&1 ||
			unrendered="$unrendered $w"
	done
	if [ -z "$unrendered" ] && grep -q '^### Fastpath against whole programs' "$out/set/select.md" 2>/dev/null; then
		ok "the set rendered: tables.md, select.md and a plot per workload run"
	else
		not_ok "the set rendered: missing for:$unrendered; set holds $(ls "$out/set" | tr '\n' ' ')"
	fi
fi

finish
