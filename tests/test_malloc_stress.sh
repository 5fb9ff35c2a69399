#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/test_malloc_stress (issue 23) preloaded with libatomkit-malloc.so
# in every design and every per-CPU mode this machine has, and once on
# glibc's malloc as the control: eight threads of heavy-tailed sizes to
# 8 MiB, aligned ones, remote frees through an exchange, realloc across
# 16 KiB, every byte checked and every object counted; fork from the busy
# threads; RLIMIT_AS run out and recovered.  One TAP line a run, and its
# books as comments.  AK_TEST_SCALE scales the counts; under the cross rig
# AK_TEST_RUNNER holds the qemu command line (tests/malloc_preload.sh),
# and AK_EMULATED lets the test skip RLIMIT_AS where qemu-user does not
# enforce it.
set -u

srcdir=${AK_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$srcdir/tests/tap.sh"
. "$srcdir/tests/malloc_preload.sh"
prog=./tests/test_malloc_stress
designs="slub-tid slub-local rseq-list array sheaf locked"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# books FILE: the run's own accounts, as TAP comments
books() {
	grep -E '^# (stress|fork|[0-9]+ forks|RLIMIT_AS|corrupted|on lib)' "$1" |
		sed 's/^# /#   /'
}

if [ ! -x "$prog" ]; then
	echo "1..1"
	echo "ok 1 - malloc_stress # SKIP tests/test_malloc_stress not built"
	exit 0
fi

# The control: glibc's malloc (ASan's, in a sanitizer build, returning
# NULL where malloc must rather than stopping the program).
# shellcheck disable=SC2086
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:detect_leaks=0 \
	$run "$prog" >"$out/glibc" 2>"$out/glibc.err"
summary "glibc's malloc" "$out/glibc" $?
books "$out/glibc"

preload_guard "$prog"

# shellcheck disable=SC2086
$run "$prog" --modes >"$out/modes" 2>&1 || not_ok "test_malloc_stress --modes: $(cat "$out/modes")"
# The freelist designs once more with AK_SLAB_CPU_PARTIAL=0: no per-CPU
# partial slabs, the old path.
for d in $designs; do
	case $d in
	slub-*|rseq-list) knobs="default 0" ;;
	*) knobs=default ;;
	esac
	while read -r m why; do
		for k in $knobs; do
			name="$d in $m"
			e="AK_MALLOC_DESIGN=$d AK_PERCPU_MODE=$m"
			if [ "$k" != default ]; then
				name="$name, cpu_partial $k"
				e="$e AK_SLAB_CPU_PARTIAL=$k"
			fi
			if [ "$why" != yes ]; then
				skip "$name" "$why"
				continue
			fi
			preload "$e" "$prog" >"$out/run" 2>"$out/run.err"
			summary "$name" "$out/run" $?
			books "$out/run"
		done
	done <"$out/modes"
done
finish
