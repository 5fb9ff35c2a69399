#!/bin/sh
# SPDX-License-Identifier: MIT
# libatomkit-malloc.so (doc/malloc.md) preloaded into tests/test_malloc,
# the malloc family's contract, in every design and every per-CPU mode
# this machine has; once more with the rseq areas atomkit's own (glibc's
# registration turned off); and once on glibc's malloc, to show that the
# tests hold on a known allocator.  Then the library's own checks: a bad
# design or mode is one line on stderr and exit 2; a slab layer refusing
# to map (AK_SLAB_FAIL_MAPS) gives NULL and ENOMEM, then recovers; a
# report (AK_SLAB_DEBUG=1, a double free) is one whole line on a stderr
# that another thread fills.
#
# Under the cross rig AK_TEST_RUNNER holds the qemu command line
# (tests/malloc_preload.sh).  TAP on stdout.
set -u

srcdir=${AK_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$srcdir/tests/tap.sh"
. "$srcdir/tests/malloc_preload.sh"
prog=./tests/test_malloc
designs="slub-tid slub-local rseq-list array sheaf locked"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ ! -x "$prog" ]; then
	echo "1..1"
	echo "ok 1 - malloc # SKIP tests/test_malloc not built"
	exit 0
fi

# The contract on glibc's malloc: the tests themselves are sound.  (In a
# sanitizer build, on ASan's: it must return NULL, as malloc does, for
# the bad and impossible requests, rather than stop the program; and the
# fork test's children hold what their parent's other threads had, which
# LeakSanitizer would call leaks.)
# shellcheck disable=SC2086
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:detect_leaks=0 \
	$run "$prog" >"$out/glibc" 2>"$out/glibc.err"
summary "glibc's malloc" "$out/glibc" $?

preload_guard "$prog"

# shellcheck disable=SC2086
$run "$prog" --modes >"$out/modes" 2>&1 || not_ok "test_malloc --modes: $(cat "$out/modes")"
for d in $designs; do
	while read -r m why; do
		if [ "$why" != yes ]; then
			skip "$d in $m" "$why"
			continue
		fi
		preload "AK_MALLOC_DESIGN=$d AK_PERCPU_MODE=$m" "$prog" \
			>"$out/run" 2>"$out/run.err"
		summary "$d in $m" "$out/run" $?
	done <"$out/modes"
done

# rseq areas registered by atomkit itself, not glibc
if grep -q '^rseq yes' "$out/modes"; then
	preload "GLIBC_TUNABLES=glibc.pthread.rseq=0 AK_MALLOC_DESIGN=sheaf AK_PERCPU_MODE=rseq" \
		"$prog" >"$out/run" 2>"$out/run.err"
	summary "sheaf in rseq, the areas atomkit's (glibc.pthread.rseq=0)" "$out/run" $?
else
	skip "rseq areas atomkit's" "rseq unavailable here"
fi

# A bad setting: one line naming it, exit 2, nothing run.
for bad in AK_MALLOC_DESIGN=nosuch AK_KMALLOC_FASTPATH=nosuch \
	   AK_PERCPU_MODE=nosuch; do
	preload "$bad" "$prog" --modes >"$out/bad" 2>"$out/bad.err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$out/bad.err")" -eq 1 ] &&
	   grep -q "^atomkit-malloc: $bad: unknown" "$out/bad.err" &&
	   [ ! -s "$out/bad" ]; then
		ok "$bad: exit 2, $(cat "$out/bad.err")"
	else
		not_ok "$bad: exit $rc, stdout $(wc -c <"$out/bad") bytes, stderr: $(head -c 300 "$out/bad.err")"
	fi
done

# The same for a knob that is not a number of objects from 0 to 1 << 24.
for bad in AK_SLAB_CPU_PARTIAL=many AK_SLAB_CPU_PARTIAL=-1 \
	   AK_SLAB_CPU_PARTIAL=16777217; do
	preload "AK_MALLOC_DESIGN=slub-tid $bad" "$prog" --modes \
		>"$out/bad" 2>"$out/bad.err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$out/bad.err")" -eq 1 ] &&
	   grep -q "^atomkit-malloc: $bad: not a number" "$out/bad.err" &&
	   [ ! -s "$out/bad" ]; then
		ok "$bad: exit 2, $(cat "$out/bad.err")"
	else
		not_ok "$bad: exit $rc, stdout $(wc -c <"$out/bad") bytes, stderr: $(head -c 300 "$out/bad.err")"
	fi
done

# The slab layer refusing maps: NULL, ENOMEM, then allocating again.
for d in $designs; do
	preload "AK_MALLOC_DESIGN=$d AK_SLAB_FAIL_MAPS=40" "$prog" --fill-maps \
		>"$out/fill" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$d, AK_SLAB_FAIL_MAPS=40: $(cat "$out/fill")"
	else
		not_ok "$d, AK_SLAB_FAIL_MAPS=40: exit $rc: $(head -c 300 "$out/fill")"
	fi
done

# A report is one whole line, however busy stderr is.
preload "AK_MALLOC_DESIGN=sheaf AK_SLAB_DEBUG=1" "$prog" --double-free \
	>"$out/df" 2>"$out/df.err"
rc=$?
if [ "$rc" -eq 0 ] &&
   grep -Eq '^atomkit slab malloc-[0-9]+: free (0x)?[0-9a-f]+: double free$' "$out/df.err"; then
	ok "a double free's report: one whole line among $(wc -l <"$out/df.err") on stderr"
else
	not_ok "a double free's report: exit $rc, $(grep -v '^chatter' "$out/df.err" | head -c 300)"
fi
finish
