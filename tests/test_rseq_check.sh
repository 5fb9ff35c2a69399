#!/bin/sh
# SPDX-License-Identifier: MIT
# atomkit-rseq-check (doc/testing.md, "The rseq abort injector"), natively:
# every section that tests/rseq-check-target's cases enter is stopped at
# each instruction and aborted, in both rseq modes, with no wrong result,
# the copies in the ops' out-of-line paths (NAME_slow) included;
# the deliberately wrong section of tests/rseq-check-bad is caught and its
# store named; bad usage is refused.  qemu-user has neither rseq nor
# ptrace: under the cross rig's AK_TEST_RUNNER everything is skipped, and
# the system rig runs the same checks on real kernels of every arch.
. "${AK_SRCDIR:-.}/tests/tap.sh"

tool=src/atomkit-rseq-check
target=tests/rseq-check-target
bad=tests/rseq-check-bad
out=${TMPDIR:-/tmp}/ak-rseq-check.$$
trap 'rm -f "$out"' EXIT

if [ -n "${AK_TEST_RUNNER:-}" ]; then
	echo "1..0 # SKIP under $AK_TEST_RUNNER: no rseq and no ptrace"
	exit 0
fi
for p in $tool $target $bad; do
	[ -x "$p" ] || { not_ok "$p is not built"; finish; }
done
why=$($tool /bin/true 2>&1 | grep 'has no rseq sections')
if [ -n "$why" ]; then
	echo "1..0 # SKIP $why"
	exit 0
fi

# LeakSanitizer stops the world with ptrace of its own, which a traced
# program cannot: under ASan the traced runs go without it
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

# a library built with the per-CPU mode fixed (configure
# --with-percpu-mode) runs that mode only
fixed=$(sed -n 's/^#define __AK_CONFIG_PERCPU_MODE_\([a-z_]*\) 1$/\1/p' \
	include/atomkit/config.h 2>/dev/null | sed 's/^rseq_/rseq-/')

# counts_meet SUMMARY CONDITION: "yes" when the counts of the summary
# line ("90 entered: 902 instructions, 992 stops, 902 aborts, 0 wrong;
# 0 other aborts") meet the awk CONDITION on en, ins, st, ab, wr, ot
counts_meet() {
	echo "$1" | awk '{
		for (i = 1; i < NF; i++) {
			w = $(i + 1)
			if (w ~ /^instructions/) ins = $i
			if (w ~ /^stops/) st = $i
			if (w ~ /^aborts/ && ab == "") ab = $i
			if (w ~ /^entered/) en = $i
			if (w ~ /^wrong/) wr = $i
			if (w ~ /^other/) ot = $i
		}
		print ('"$2"') ? "yes" : "no" }'
}

# one run per rseq mode: exit 0, and every section's TAP line says that
# each instruction was stopped at and aborted
for m in rseq rseq-mm_cid; do
	if [ -n "$fixed" ] && [ "$fixed" != runtime ] && [ "$fixed" != "$m" ]; then
		skip "mode $m" "the per-CPU mode is fixed to $fixed at build time"
		continue
	fi
	$tool --tap --mode "$m" "$target" >"$out" 2>&1
	rc=$?
	if [ "$rc" -eq 77 ]; then
		skip "mode $m" "$(tail -n 1 "$out")"
		continue
	fi
	sections=$(grep -c '^ok [0-9]* - [a-z]*/' "$out")
	bad_lines=$(grep -c '^not ok' "$out")
	summary=$(sed -n 's/^# \([0-9]* section(s) found.*\)/\1/p' "$out")
	# instructions = aborts, stops = instructions + one per section
	counts_ok=$(counts_meet "$summary" \
		'ins > 0 && ab == ins && st == ins + en && wr == 0')
	if [ "$rc" -eq 0 ] && [ "$bad_lines" -eq 0 ] && [ "$sections" -ge 20 ] &&
	   [ "$counts_ok" = yes ]; then
		ok "mode $m: $summary; $sections sections' lines ok"
	else
		sed 's/^/# /' "$out" | tail -n 40
		not_ok "mode $m: exit $rc, $sections sections ok," \
			"$bad_lines not ok: $summary"
	fi
	# the percpu-slow/ cases ran every op through its out-of-line path,
	# and the percpu-fixed-slow/ ones through the fixed-mode build's:
	# each stepped a section inside a NAME_slow function (not entered
	# by any other case), with its aborts
	for k in percpu-slow percpu-fixed-slow; do
		missing=
		for c in write64 write32 add64 add32 cmpxchg64 cmpxchg32 \
			cmpxchg128 list_pop list_push array_pop array_push \
			array_ptr_pop array_ptr_push array_ptr_pop_n \
			array_ptr_push_n; do
			grep -q "^ok [0-9]* - $k/$c [^ ]*:__ak_this_cpu_[a-z0-9_]*_slow[.+]" \
				"$out" || missing="$missing $c"
		done
		slow_aborts=$(sed -n "s/^ok [0-9]* - $k\/[^ ]* [^ ]*:__ak_this_cpu_[a-z0-9_]*_slow[.+].* \([0-9]*\) aborts.*/\1/p" \
			"$out" | awk '{ n += $1 } END { print n + 0 }')
		if [ -z "$missing" ] && [ "$slow_aborts" -gt 0 ]; then
			ok "mode $m: $k/: every op's out-of-line copy of its" \
				"section stepped: $slow_aborts aborts in NAME_slow" \
				"functions"
		else
			not_ok "mode $m: $k/: out-of-line copies not" \
				"stepped:${missing:- none} ($slow_aborts aborts" \
				"in NAME_slow functions)"
		fi
	done
done

# every kind of section, and each design's fastpath, was entered (of
# array, sheaf and rseq-list also as a build for that design runs them)
mode_ok=rseq
grep -q '^ok' "$out" || mode_ok=
if [ -n "$mode_ok" ]; then
	# where the inline calls run sections of the program's own (not
	# under ASan, whose caches always call the library), the
	# fixed-design calls do too
	fixed=
	! grep -q '^ok [0-9]* - slab/array/alloc/inline rseq-check-target:' \
		"$out" ||
		for d in rseq-list array sheaf; do
			fixed="$fixed slab/$d/alloc/fixed slab/$d/free/fixed"
		done
	missing=
	for c in percpu/write64 percpu/write32 \
		percpu/add64 percpu/add32 percpu/cmpxchg64 percpu/cmpxchg32 \
		percpu/cmpxchg128 percpu/list_pop percpu/list_push \
		percpu/array_pop percpu/array_push percpu/array_ptr_pop \
		percpu/array_ptr_push percpu/array_ptr_pop_n \
		percpu/array_ptr_push_n slab/slub-tid/alloc/ \
		slab/slub-tid/free/ slab/slub-local/alloc/ \
		slab/slub-local/free/ slab/rseq-list/alloc/ \
		slab/rseq-list/free/ slab/array/alloc/ slab/array/free/ \
		slab/sheaf/alloc/ slab/sheaf/free/ slab/sheaf/alloc_bulk \
		slab/sheaf/free_bulk $fixed; do
		grep -q "^ok [0-9]* - $c" "$out" || missing="$missing $c"
	done
	if [ -z "$missing" ]; then
		ok "every section kind and slab fastpath was checked"
	else
		not_ok "cases that checked no section:$missing"
	fi
fi

# a real preemption before each stop (--preempt): every one aborted the
# section, and no run that the case's abort path took elsewhere (the
# library's out-of-line copies, whose commits the regions' baseline does
# not follow) is reported wrong; the jobs' own counts as without it
case $fixed in
''|runtime) pm=rseq ;;
rseq|rseq-mm_cid) pm=$fixed ;;
*) pm= ;;
esac
if [ -n "$pm" ]; then
	$tool --tap --preempt --mode "$pm" "$target" >"$out" 2>&1
	rc=$?
else
	echo "the per-CPU mode is fixed to $fixed" >"$out"
	rc=77
fi
summary=$(sed -n 's/^# \([0-9]* section(s) found.*\)/\1/p' "$out")
counts_ok=$(counts_meet "$summary" \
	'ins > 0 && ab == ins && st == ins + en && wr == 0 && ot >= ins')
if [ "$rc" -eq 77 ]; then
	skip "--preempt" "$(tail -n 1 "$out")"
elif [ "$rc" -eq 0 ] && [ "$counts_ok" = yes ]; then
	ok "mode $pm, a preemption before each stop: $summary"
else
	grep -v '^ok' "$out" | sed 's/^/# /' | tail -n 20
	not_ok "mode $pm, a preemption before each stop: exit $rc: $summary"
fi

# the wrong section: caught, and its store named
$tool "$bad" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 77 ]; then
	skip "the wrong section" "$(tail -n 1 "$out")"
else
	case $(uname -m) in
	x86_64) want='instruction 4 of 7 at rseq-check-bad:bad_inc+' ;;
	*) want='instruction [0-9]* of [0-9]* at rseq-check-bad:bad_inc+' ;;
	esac
	if [ "$rc" -eq 1 ] &&
	   grep -q "^FAILED: bad/events_then_value: $want.* stores before the commit" "$out" &&
	   grep -q 'left a visible effect' "$out" &&
	   grep -q 'wrong result after the retry' "$out"; then
		ok "the wrong section is caught: $(grep 'stores before' "$out" | cut -c1-160)"
	else
		sed 's/^/# /' "$out" | tail -n 20
		not_ok "the wrong section: exit $rc, store not named"
	fi
	# run alone, the same section looks right: the bug needs an abort
	if "$bad" >/dev/null 2>&1; then
		ok "the wrong section passes without the tracer"
	else
		not_ok "the wrong section failed even without the tracer"
	fi
fi

# bad usage
$tool >"$out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'no program to run' "$out"; then
	ok "no program: exit 2, says so"
else
	not_ok "no program: exit $rc: $(head -n 1 "$out")"
fi
$tool --mode atomic "$target" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'rseq and rseq-mm_cid only' "$out"; then
	ok "--mode atomic: exit 2, says why"
else
	not_ok "--mode atomic: exit $rc: $(head -n 1 "$out")"
fi
$tool --bogus "$target" >"$out" 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then
	ok "an unknown option: exit 2"
else
	not_ok "an unknown option: exit $rc"
fi
$tool ./no-such-program >"$out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'no-such-program' "$out"; then
	ok "a missing program: exit 1, named"
else
	not_ok "a missing program: exit $rc: $(head -n 1 "$out")"
fi
$tool --help | grep -q '^SYNOPSIS' && ok "--help: a manual page" ||
	not_ok "--help"
finish
