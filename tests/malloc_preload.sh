# SPDX-License-Identifier: MIT
# For the drivers that run a program under libatomkit-malloc.so
# (tests/test_malloc.sh, tests/test_malloc_stress.sh): sourced after
# tests/tap.sh, not run.  Sets run (the cross rig's qemu command line,
# AK_TEST_RUNNER, or empty) and lib, and defines preload and summary.
run="${AK_TEST_RUNNER:-}"
lib=$(pwd)/malloc/.libs/libatomkit-malloc.so

# preload_guard PROGRAM: skip the rest (and finish) where the library is
# not built, or in a sanitizer build (PROGRAM --asan says 1)
preload_guard() {
	if [ ! -f "$lib" ]; then
		skip "libatomkit-malloc.so" "$lib not built"
		finish
	fi
	# shellcheck disable=SC2086
	if [ "$($run "$1" --asan)" = 1 ]; then
		skip "libatomkit-malloc.so" "a sanitizer build: ASan and a preloaded malloc do not mix (doc/malloc.md)"
		finish
	fi
}

# preload "VAR=VALUE ..." PROGRAM [ARGS]: PROGRAM with the library and
# VARs.  Under the cross rig the environment reaches the program through
# qemu's -E, so that the host's loader never sees the target's library.
preload() {
	e=$1
	shift
	if [ -n "$run" ]; then
		qe=
		for v in "LD_PRELOAD=$lib" $e; do
			qe="$qe -E $v"
		done
		# shellcheck disable=SC2086
		$run $qe "$@"
	else
		# shellcheck disable=SC2086
		env LD_PRELOAD="$lib" $e "$@"
	fi
}

# stuck FILE RC: for a run the rig's timeout killed (124, 137), the
# test it was in, from the last one cmocka started
stuck() {
	case $2 in
	124|137) printf ' (killed in %s)' \
		"$(sed -n 's/^\[ RUN *\] //p' "$1" | tail -n 1)" ;;
	esac
}

# summary NAME FILE RC: one TAP line for a run of a cmocka suite, its
# output in FILE and its stderr in FILE.err
summary() {
	p=$(grep -c '^ok' "$2")
	s=$(grep -c '^ok.*# SKIP' "$2")
	f=$(grep -c '^not ok' "$2")
	if [ "$3" -eq 0 ] && [ "$f" -eq 0 ] && [ "$p" -gt 0 ]; then
		ok "$1: $((p - s)) passed, $s skipped"
	else
		# cmocka's own lines on stderr, less the ones of tests
		# that passed: what failed and where
		not_ok "$1: exit $3$(stuck "$2" "$3"), $f failed: $(grep -E '^not ok|^#' "$2" | head -8 | tr '\n' ' ') $(grep -vE '^\[ *(RUN|OK|PASSED|=+) *\]' "$2.err" | head -n 6 | tr '\n' ' ')"
	fi
}
