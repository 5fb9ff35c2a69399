#!/bin/sh
# SPDX-License-Identifier: MIT
# What atomkit-bench plans on machines from 1 to 4096 PUs, given to hwloc
# as synthetic topologies (HWLOC_SYNTHETIC): listing only
# (--benchmark_list_tests, --list-suites), nothing runs, pins or spawns
# (checked with strace where it may trace).
# For each topology: exit 0, no "ERROR", every name under a suite of
# --list-suites, no thread count past the program's cap (16 per PU, at
# least 64, at most 8192) or a suite's own, the thread sweep exactly
# 1, 2, 4 .. PUs, 2 x PUs (within the cap), the remote runs one thread a
# PU, and each suite's instance count what the sweep's length makes it.
# The counts that do not depend on the topology are taken from the
# program itself (--threads=1 against --threads=1,2), so that nothing
# here is this machine's or this build's.  TAP on stdout.  Under the
# cross rig AK_TEST_RUNNER holds the qemu command line the program runs
# under; HWLOC_SYNTHETIC reaches it there too.
set -u

bench=./bench/atomkit-bench
run="${AK_TEST_RUNNER:-}"
n=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

if [ ! -x "$bench" ]; then
	echo "1..1"
	echo "ok 1 - atomkit-bench's plan # SKIP atomkit-bench not built (configure found no libbenchmark-dev)"
	exit 0
fi
$run "$bench" --list-placements >"$tmp/out" 2>"$tmp/err"
if ! grep -q '^topology (hwloc ' "$tmp/out"; then
	echo "1..1"
	echo "ok 1 - atomkit-bench's plan # SKIP hwloc not built in (libhwloc-dev): no synthetic topologies"
	exit 0
fi

# TOPOLOGY [ARGS...]: the plan under a topology, into $tmp/list and
# $tmp/suites; $tmp/err holds both stderrs; exit status of the worse
lists() {
	topo=$1
	shift
	HWLOC_SYNTHETIC=$topo $run "$bench" "$@" \
		--benchmark_list_tests=true >"$tmp/list" 2>"$tmp/err"
	rc=$?
	HWLOC_SYNTHETIC=$topo $run "$bench" "$@" --list-suites \
		>"$tmp/suites" 2>>"$tmp/err"
	rc2=$?
	[ "$rc" -ne 0 ] || rc=$rc2
	return "$rc"
}

# "name prefix threads" of each suite, one a line
suite_rows() {
	sed -n 's/^ *{ "name": "\([^"]*\)", "prefix": "\([^"]*\)".*"threads": \([0-9]*\),.*/\1 \2 \3/p' \
		"$tmp/suites"
}
# PREFIX: the listed instances under it
count() { awk -v p="$1" 'index($0, p) == 1 { c++ } END { print c + 0 }' "$tmp/list"; }
# PREFIX: its thread counts, one a line, ascending, distinct
threads_of() {
	awk -v p="$1" 'index($0, p) == 1' "$tmp/list" |
		sed -n 's|.*/threads:\([0-9]*\)$|\1|p' | sort -n -u
}
pus_of() {	# the product of a synthetic topology's arities
	echo "$1" | tr ' ' '\n' | awk -F: '{ p *= $2 } BEGIN { p = 1 } END { print p }'
}
cap_of() {	# the program's cap on one run's threads, for PUS
	c=$((16 * $1))
	[ "$c" -ge 64 ] || c=64
	[ "$c" -le 8192 ] || c=8192
	echo "$c"
}
sweep_of() {	# the default sweep for PUS under CAP, one a line
	p=$1 c=$2 t=1
	[ "$p" -le "$c" ] || p=$c
	while [ "$t" -lt "$p" ]; do
		echo "$t"
		t=$((t * 2))
	done
	echo "$p"
	if [ "$p" -lt "$c" ]; then
		t=$((2 * p))
		[ "$t" -le "$c" ] || t=$c
		echo "$t"
	fi
}

# --list-suites itself: JSON, and bad input refused
ref="pack:1 l3:1 core:2 pu:1"
HWLOC_SYNTHETIC=$ref $run "$bench" --list-suites >"$tmp/suites" 2>"$tmp/err"
rc=$?
py=/usr/bin/python3
[ -x "$py" ] || py=python3
rows=$(suite_rows | wc -l)
if [ "$rc" -ne 0 ] || [ "$rows" -lt 1 ]; then
	not_ok "--list-suites: exit $rc, $rows suites: $(head -c 300 "$tmp/err")"
elif "$py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert all(set(s) == {"name", "prefix", "needs", "threads", "title"}
           for s in d["suites"])
assert len(d["suites"]) == int(sys.argv[2])' "$tmp/suites" "$rows" 2>"$tmp/err"; then
	ok "--list-suites: JSON, $rows suites, each with name, prefix, needs, threads, title"
elif ! "$py" -c 'import json' 2>/dev/null; then
	ok "--list-suites: exit 0, $rows suites (no python3 here to read the JSON)"
else
	not_ok "--list-suites is not the JSON documented: $(tail -c 300 "$tmp/err")"
fi
first=$(suite_rows | sed -n '1s/ .*//p')
HWLOC_SYNTHETIC=$ref $run "$bench" --list-suites="$first" >"$tmp/one" 2>"$tmp/err"
if [ $? -eq 0 ] && [ "$(grep -c '"name": ' "$tmp/one")" -eq 1 ] &&
	grep -q "\"name\": \"$first\"" "$tmp/one"; then
	ok "--list-suites=$first: that suite alone"
else
	not_ok "--list-suites=$first: $(head -c 300 "$tmp/one") $(head -c 300 "$tmp/err")"
fi
for bad in "bogus" "$first,bogus" ""; do
	$run "$bench" --list-suites="$bad" >"$tmp/one" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ ! -s "$tmp/one" ] &&
		grep -q 'atomkit-bench: --list-suites.*\(unknown suite .bogus.\|no suite given\)' "$tmp/err"; then
		ok "--list-suites='$bad': exit 2, $(cat "$tmp/err")"
	else
		not_ok "--list-suites='$bad': exit $rc: $(head -c 300 "$tmp/err")"
	fi
done
$run "$bench" --help >"$tmp/one" 2>&1
if grep -q -- '--list-suites' "$tmp/one"; then
	ok "--help names --list-suites"
else
	not_ok "--help does not name --list-suites"
fi

# The counts that do not follow the topology: each suite's instances
# are fixed + per_point x the sweep's length; one point, then two.
if ! lists "$ref" --threads=1; then
	not_ok "listing under '$ref' --threads=1: $(head -c 300 "$tmp/err")"
fi
suite_rows >"$tmp/rows"
while read -r name prefix threads; do
	echo "$name $(count "$prefix")"
done <"$tmp/rows" >"$tmp/one_point"
if ! lists "$ref" --threads=1,2; then
	not_ok "listing under '$ref' --threads=1,2: $(head -c 300 "$tmp/err")"
fi
while read -r name prefix threads; do
	c1=$(sed -n "s/^$name //p" "$tmp/one_point")
	c2=$(count "$prefix")
	echo "$name $((2 * c1 - c2)) $((c2 - c1))"	# fixed, per point
done <"$tmp/rows" >"$tmp/base"
if awk '$2 < 0 || $3 < 0 || $2 + $3 == 0 { bad = 1 } END { exit bad }' "$tmp/base"; then
	ok "every suite lists instances; sweep suites: $(awk '$3 > 0 { printf "%s ", $1 }' "$tmp/base")"
else
	not_ok "instance counts per suite (name, fixed, per sweep point): $(tr '\n' ';' <"$tmp/base")"
fi

# plan TOPOLOGY: everything above, for one topology
plan() {
	topo=$1
	pus=$(pus_of "$topo")
	cap=$(cap_of "$pus")
	sweep_of "$pus" "$cap" >"$tmp/sweep"
	points=$(wc -l <"$tmp/sweep")
	top=$(tail -n 1 "$tmp/sweep")
	lists "$topo"
	rc=$?
	what="$pus PUs ('$topo')"
	if [ "$rc" -ne 0 ]; then
		not_ok "$what: exit $rc: $(head -c 300 "$tmp/err")"
		return
	fi
	if grep -q 'ERROR' "$tmp/list" "$tmp/err"; then
		not_ok "$what: ERROR in the output: $(grep -h 'ERROR' "$tmp/list" "$tmp/err" | head -n 3)"
		return
	fi
	if ! grep -q "^  \"pus\": $pus,\$" "$tmp/suites" ||
		! grep -q "^  \"max_threads\": $cap,\$" "$tmp/suites"; then
		not_ok "$what: not taken, or another cap than $cap: $(head -n 3 "$tmp/suites" | tr '\n' ' ')"
		return
	fi
	bad=
	listed=0
	suite_rows >"$tmp/rows_here"
	awk '{ print $1, $2 }' "$tmp/rows" >"$tmp/a"
	awk '{ print $1, $2 }' "$tmp/rows_here" >"$tmp/b"
	cmp -s "$tmp/a" "$tmp/b" || bad="$bad other suites than under '$ref';"
	while read -r name prefix threads; do
		c=$(count "$prefix")
		listed=$((listed + c))
		want=$(awk -v s="$name" -v k="$points" \
			'$1 == s { print $2 + $3 * k }' "$tmp/base")
		[ "$c" = "$want" ] ||
			bad="$bad $name: $c instances, want $want;"
		most=$(threads_of "$prefix" | tail -n 1)
		[ -z "$most" ] || [ "$most" -le "$threads" ] ||
			bad="$bad $name: threads:$most past its $threads;"
		[ "$threads" -le "$cap" ] ||
			bad="$bad $name: plans $threads threads, cap $cap;"
	done <"$tmp/rows_here"
	all=$(wc -l <"$tmp/list")
	[ "$listed" -eq "$all" ] ||
		bad="$bad $((all - listed)) of $all names under no suite's prefix;"
	# the contention suite is the thread sweep and nothing else
	if grep -q '^contention ' "$tmp/rows"; then
		threads_of contention/ >"$tmp/got"
		cmp -s "$tmp/got" "$tmp/sweep" ||
			bad="$bad contention sweeps $(tr '\n' ' ' <"$tmp/got")want $(tr '\n' ' ' <"$tmp/sweep");"
	fi
	# the remote frees: one thread a PU (two at least), within the cap
	remote=$pus
	[ "$remote" -ge 2 ] || remote=2
	[ "$remote" -le "$cap" ] || remote=$cap
	got=$(awk 'index($0, "slab/remote/") == 1' "$tmp/list" |
		sed -n 's|.*/threads:\([0-9]*\)$|\1|p' | sort -u | tr '\n' ' ')
	[ -z "$got" ] || [ "$got" = "$remote " ] ||
		bad="$bad slab/remote on $got threads, want $remote;"
	if [ -n "$bad" ]; then
		not_ok "$what:$bad"
	else
		ok "$what: $all instances, sweep to $top threads (cap $cap), each suite's count as planned"
	fi
}

# Listing runs nothing: no thread pinned, none started, no process
# (strace, natively, where it may trace; LeakSanitizer's check at exit
# starts a thread of its own and cannot run traced, so it is off here)
topo="pack:2 numa:2 l3:6 l2:16 core:1 pu:2"
calls=sched_setaffinity,clone,clone3,fork,vfork
if [ -z "$run" ] && command -v strace >/dev/null 2>&1 &&
	strace -f -o /dev/null true 2>/dev/null; then
	HWLOC_SYNTHETIC=$topo \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace=$calls \
		-o "$tmp/trace" "$bench" --benchmark_list_tests=true \
		>/dev/null 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] &&
		! grep -Eq '(sched_setaffinity|clone3?|v?fork)\(' "$tmp/trace"; then
		ok "listing under '$topo' pins no thread and starts none"
	else
		not_ok "listing under '$topo': exit $rc, $(grep -E '\(' "$tmp/trace" | head -n 3)"
	fi
else
	n=$((n + 1))
	echo "ok $n - listing pins and starts nothing # SKIP strace cannot trace here${run:+ (under $run)}"
fi

plan "pack:1 core:1 pu:1"				# 1
plan "pack:1 l3:1 core:2 pu:1"				# 2
plan "pack:1 l3:2 l2:4 core:1 pu:2"			# 16
plan "pack:2 numa:1 l3:4 l2:8 core:1 pu:2"		# 128
plan "pack:2 numa:2 l3:4 l2:8 core:2 pu:2"		# 512
plan "pack:2 numa:2 l3:6 l2:16 core:1 pu:2"		# 768
plan "pack:4 numa:4 l3:8 l2:16 core:1 pu:2"		# 4096

echo "1..$n"
[ "$failed" -eq 0 ]
