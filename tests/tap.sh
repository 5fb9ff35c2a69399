# SPDX-License-Identifier: MIT
# TAP for the shell tests: sourced (". tests/tap.sh"), not run.  Counts
# the results, and finish prints the plan and exits 1 if any failed.
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# skip WHAT REASON
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
finish() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit
}
