#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole-program benchmarks' synthetic workloads, natively and under
# the cross rig (AK_TEST_RUNNER holds the qemu command line): churn
# refuses bad arguments; each workload, as scripts/run-macro --quick runs
# it (its --commands), prints tests/fixtures/macro-quick.out's line for
# its program, at its thread count and at another (their output is a
# function of their arguments alone, the same for any thread count and
# on every arch); and more CPUs than the programs take threads plan them
# at the programs' cap.  run-macro's options and a --quick run under
# every allocator are tests/python/test_runmacro.py's (host Python: the
# native make check).  TAP on stdout.
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
"$macro" --quick --commands --builddir . \
	--workloads churn,prodcons,falseshare,sizemix,remotefree,mixloop-1t,mixloop-2t \
	>"$out/plan" 2>&1 ||
	not_ok "run-macro --quick --commands: $(head -c 300 "$out/plan")"
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
"$macro" --quick --commands --builddir . --jobs $((cap + 44)) \
	--workloads churn,remotefree,mixloop-2t >"$out/plan-cap" 2>&1
rc=$?
got=$(sed -n 's/.* -t \([0-9]*\) .*/\1/p' "$out/plan-cap" | tr '\n' ' ')
if [ "$rc" -eq 0 ] && [ -n "$cap" ] && [ "$got" = "$cap $cap 2 " ]; then
	ok "run-macro --jobs $((cap + 44)): the synthetic workloads at $cap threads, the programs' cap"
else
	not_ok "run-macro --jobs $((cap + 44)): exit $rc, threads '$got' (cap '$cap'): $(head -c 300 "$out/plan-cap")"
fi

finish
