#!/bin/sh
# SPDX-License-Identifier: MIT
# atomkit-bench's command line: bad input gets a clear message and exit
# status 2, a short real run writes Google Benchmark JSON with labelled
# units and the run context, absent placement classes skip with a reason,
# and under any topology (synthetic ones given to hwloc) every absent
# class's reason is one that --list-skips documents.  TAP on stdout.
# Under the cross rig AK_TEST_RUNNER holds the qemu command line the
# program runs under.
set -u

bench=./bench/atomkit-bench
run="${AK_TEST_RUNNER:-}"
n=0
failed=0
out=$(mktemp)
err=$(mktemp)
skips=$(mktemp)
trap 'rm -f "$out" "$err" "$skips"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

if [ ! -x "$bench" ]; then
	echo "1..1"
	echo "ok 1 - atomkit-bench # SKIP not built (configure found no libbenchmark-dev)"
	exit 0
fi

bench() { $run "$bench" "$@" >"$out" 2>"$err"; }

# refused NAME EXPECTED-MESSAGE ARGS...: exit 2, message on stderr
refused() {
	name=$1 msg=$2
	shift 2
	bench "$@"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -qF -- "$msg" "$err"; then
		ok "$name: exit 2, '$msg'"
	else
		not_ok "$name: exit $rc, stderr: $(head -c 300 "$err")"
	fi
}

short="--benchmark_min_time=0.001 --benchmark_repetitions=1"

refused "unknown option" "unknown option '--bogus'" --bogus
refused "unknown placement" "unknown class 'sideways'" --placement=llc,sideways
refused "empty placement" "no class given" --placement=,
refused "unknown counter" "unknown counter" --counter=sundial
refused "zero threads" "0 is not a usable thread count" --threads=0
refused "absurd threads" "100000 is not a usable thread count" --threads=1,100000
refused "threads not numbers" "not a list of numbers" --threads=two
refused "Google Benchmark's own bad flag" "unrecognized" --benchmark_bogus=1

# --counter=papi: refused where the PMU is missing, runs where it is there
bench --counter=papi --benchmark_filter='^harness/empty_loop$' $short
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'PAPI_TOT_CYC cannot be read here' "$err"; then
	ok "--counter=papi without a PMU: exit 2 with the reason"
elif [ "$rc" -eq 0 ] && grep -q 'cycles=' "$out"; then
	ok "--counter=papi with a PMU: cycles reported"
else
	not_ok "--counter=papi: exit $rc, $(head -c 300 "$err")"
fi

# a short run as JSON: units named, context present, cv computed
bench --counter=tsc --benchmark_filter='^(harness/empty_loop|prim/ref/load/lat)$' \
	--benchmark_min_time=0.001 --benchmark_repetitions=2 \
	--benchmark_format=json
rc=$?
if [ "$rc" -eq 0 ]; then ok "JSON run: exit 0"; else not_ok "JSON run: exit $rc: $(head -c 300 "$err")"; fi
for key in '"ak_counter_unit": "[^"]* ticks at [0-9.]* MHz' \
	'"ak_counter_read_cost"' '"ak_topology"' '"ak_placements"' \
	'"ak_emulated"' '"ak_percpu_mode"' '"ak_compiler"' '"ak_git_rev"' \
	'"ak_hypervisor"' '"aggregate_name": "cv"' \
	'"name": "harness/empty_loop"' \
	'"\(tsc\|cntvct\|tb\)_ticks": [0-9]'; do
	if grep -q "$key" "$out"; then ok "JSON has $key"; else not_ok "JSON lacks $key"; fi
done

# each entry's identity as fields of its own (doc/benchmarks.md), in
# every entry: the iterations and the aggregates
for key in '"ak_suite": "prim"' '"ak_arch": "ref"' '"ak_op": "load"' \
	'"ak_metric": "lat"' '"ak_suite": "harness"'; do
	if grep -q "$key" "$out"; then ok "JSON has $key"; else not_ok "JSON lacks $key"; fi
done
runs=$(grep -c '"run_name": ' "$out")
ids=$(grep -c '"ak_suite": ' "$out")
if [ "$runs" -gt 0 ] && [ "$ids" -eq "$runs" ]; then
	ok "JSON: ak_suite in all $runs benchmark entries"
else
	not_ok "JSON: ak_suite in $ids of $runs benchmark entries"
fi

# Google Benchmark's own comparison tool reads our JSON
compare=/usr/share/benchmark/compare.py
py=/usr/bin/python3	# Debian's, where python3-scipy installs
[ -x "$py" ] || py=python3
if [ -f "$compare" ] && "$py" -c 'import scipy' 2>/dev/null; then
	cp "$out" "$out.json"
	if "$py" "$compare" benchmarks "$out.json" "$out.json" >"$err" 2>&1 &&
		grep -q 'harness/empty_loop' "$err"; then
		ok "compare.py reads the JSON"
	else
		not_ok "compare.py: $(head -c 300 "$err")"
	fi
	rm -f "$out.json"
else
	skip "compare.py reads the JSON" "compare.py not installed (Debian: libbenchmark-tools python3-scipy)"
fi

# the same with PAPI forced off and ns: still runs, unit labelled
bench --counter=ns --benchmark_filter='^harness/empty_loop$' $short
if [ $? -eq 0 ] && grep -q 'clock_ns=' "$out" &&
	grep -q 'counter: ns (clock_gettime' "$err"; then
	ok "--counter=ns: runs, unit named"
else
	not_ok "--counter=ns: $(head -c 300 "$err")"
fi

# the slab suite: per-object alloc and free figures, the design's mode and
# primitive in the label, the bulk share, and malloc named; the cold rows
# under a workload of their own, malloc's in a fresh process
bench --benchmark_filter='^slab/(seq/slub-tid/size:64|seq_cold/(array|malloc-[a-z]*)/size:64|bulk/sheaf/bulk:16|pair/malloc-[a-z]*/size:64)(/|$)' \
	$short --benchmark_format=json
rc=$?
if [ "$rc" -eq 0 ]; then ok "slab run: exit 0"; else not_ok "slab run: exit $rc: $(head -c 300 "$err")"; fi
for key in '"name": "slab/seq/slub-tid/size:64/manual_time"' \
	'"alloc_ns": [0-9]' '"free_ns": [0-9]' \
	'"label": "slub-tid on [a-z_-]* (' '"from_cpu": [0-9]' \
	'"name": "slab/pair/malloc-[a-z]*/size:64"' \
	'"name": "slab/seq_cold/array/size:64/manual_time"' \
	'"name": "slab/seq_cold/malloc-[a-z]*/size:64/manual_time"' \
	'"ak_workload": "seq_cold"' '"slabs": [1-9]'; do
	if grep -q "$key" "$out"; then ok "slab JSON has $key"; else not_ok "slab JSON lacks $key"; fi
done
# warm rows time the steady state: the untimed round mapped every slab
if awk '/"name": "slab\/seq\/slub-tid\/size:64\/manual_time"/ { on = 1 }
	on && /"new_slabs": / { v = $2; sub(/,$/, "", v); exit !(v + 0 == 0) }
	END { if (!on) exit 1 }' "$out"; then
	ok "slab/seq warm: no slab mapped while timed"
else
	not_ok "slab/seq warm: new_slabs is not 0: $(grep '"new_slabs"' "$out" | head -n 2)"
fi
# the cold malloc row's fresh process: bad requests are refused
bench --slab-cold-child=0,10,arch
if [ $? -eq 2 ] && grep -q 'bad cold run' "$err"; then
	ok "--slab-cold-child refuses a bad request"
else
	not_ok "--slab-cold-child=0,10,arch: $(head -c 300 "$err")"
fi
bench --slab-cold-child=64,100,arch
if [ $? -eq 0 ] && grep -q '^[0-9]* [0-9]* malloc-[a-z]*$' "$out"; then
	ok "--slab-cold-child runs one cold run"
else
	not_ok "--slab-cold-child=64,100,arch: $(head -c 300 "$out") $(head -c 300 "$err")"
fi

# the cache-line suite: the raw figure and, beside it, the timer correction
bench --benchmark_filter='^cacheline/L1/load(/|$)' $short --benchmark_format=json
if [ $? -eq 0 ] && grep -q '"timer_ticks": [0-9]' "$out" &&
	grep -q '"timer_iqr": [0-9]' "$out" &&
	grep -q '"timer_steady": [01]' "$out" &&
	grep -q '"\(tsc_ticks\|cntvct_ticks\|tb_ticks\|cycles\|clock_ns\)": [0-9]' "$out"; then
	ok "cacheline JSON: raw figure, timer_ticks, timer_iqr, timer_steady"
else
	not_ok "cacheline JSON: $(grep -o '"[a-z_]*": [0-9.e+-]*' "$out" | head -n 12 | tr '\n' ' ') $(head -c 300 "$err")"
fi

# allocation failure (AK_SLAB_FAIL_MAPS: the slab cache maps one slab,
# then no more) ends a run as failed, also where threads wait for each
# other at barriers (remote free): no hang, no leak reported at destroy
AK_SLAB_FAIL_MAPS=1 timeout 300 $run "$bench" \
	--benchmark_filter='^slab/(remote/array/size:4096|conc/array/placement:spread/size:4096/manual_time/threads:2|seq/rseq-list/size:4096)(/|$)' \
	$short >"$out" 2>"$err"
rc=$?
runs=$(grep -c '^slab/' "$out")
failed_runs=$(grep -c "^slab/.*failed: an allocation returned NULL" "$out")
if [ "$rc" -eq 0 ] && [ "$runs" -eq 3 ] && [ "$failed_runs" -eq 3 ] &&
	! grep -q 'objects left in the cache' "$out"; then
	ok "slab runs out of memory: 3 of 3 failed, 'an allocation returned NULL'"
else
	not_ok "slab runs out of memory: exit $rc, $failed_runs of $runs failed: $(head -c 300 "$out") $(head -c 300 "$err")"
fi

# the list of classes, and a class the machine lacks skips with a reason
bench --list-placements
if [ $? -eq 0 ] && grep -q '^spread *CPUs' "$out"; then
	ok "--list-placements lists spread"
else
	not_ok "--list-placements: $(head -c 300 "$out")"
fi
absent=$(sed -n 's/^\([a-z]*\) *absent: .*/\1/p' "$out" | head -n 1)
if [ -z "$absent" ]; then
	skip "absent placement class skips" "every class exists here"
else
	why=$(sed -n "s/^$absent *absent: //p" "$out")
	bench --placement="$absent" --benchmark_filter="/placement:$absent" $short
	if grep -q 'Failed to match any benchmarks' "$out" "$err"; then
		skip "--placement=$absent skips" "no multi-thread suite is built yet"
	elif grep -qF "skipped: $why" "$out"; then
		ok "--placement=$absent: runs skipped with '$why'"
	else
		not_ok "--placement=$absent: $(head -c 300 "$out") $(head -c 300 "$err")"
	fi
fi

# the documented skips: a closed set, one a line, in the format
# bench/skips.h gives ("skipped: TEXT[: DETAIL]": no ": " inside a text)
bench --list-skips
rc=$?
cp "$out" "$skips"
if [ "$rc" -eq 0 ] && [ -s "$skips" ] &&
	[ "$(sort -u "$skips" | wc -l)" -eq "$(wc -l <"$skips")" ] &&
	! grep -q ': \|["\\]\|^$' "$skips"; then
	ok "--list-skips: $(wc -l <"$skips") reasons, distinct, none with ': '"
else
	not_ok "--list-skips: exit $rc: $(head -c 300 "$skips") $(head -c 300 "$err")"
fi
bench --help
if grep -q -- '--list-skips' "$out"; then
	ok "--help names --list-skips"
else
	not_ok "--help does not name --list-skips"
fi

# Every topology: given a synthetic one (HWLOC_SYNTHETIC, which reaches
# the program under qemu-user too), --list-placements takes it, finds the
# classes it has, and names each absent class's reason from --list-skips.
# synthetic TOPOLOGY PUS CLASSES...
synthetic() {
	topo=$1 pus=$2
	shift 2
	HWLOC_SYNTHETIC=$topo $run "$bench" --list-placements >"$out" 2>"$err"
	rc=$?
	have=$(sed -n 's/^\([a-z]*\) *CPUs .*/\1/p' "$out" | tr '\n' ' ')
	bad=$(sed -n 's/^[a-z]* *absent: //p' "$out" | grep -vxF -f "$skips")
	if [ "$rc" -ne 0 ]; then
		not_ok "topology '$topo': exit $rc: $(head -c 300 "$err")"
	elif ! grep -q "^topology (hwloc .* $pus PU(s)," "$out"; then
		not_ok "topology '$topo' not taken: $(grep '^topology' "$out")"
	elif [ -n "$bad" ]; then
		not_ok "topology '$topo': reason not in --list-skips: $bad"
	elif [ "$have" != "$* " ]; then
		not_ok "topology '$topo': classes '$have', want '$* '"
	else
		ok "topology '$topo': classes $*; every absent one's reason documented"
	fi
}

bench --list-placements
if ! grep -q '^topology (hwloc ' "$out"; then
	skip "synthetic topologies" "hwloc not built in (libhwloc-dev)"
else
	synthetic "pack:1 l3:1 core:2 pu:1" 2 llc spread	# Intel VM
	synthetic "pack:1 core:2 pu:1" 2 spread		# no cache shown
	synthetic "pack:1 l3:2 l2:1 l1d:1 core:1 pu:1" 2 \
		package spread				# AMD VM
	synthetic "pack:1 l3:1 l2:4 core:1 pu:2" 8 smt llc spread
	synthetic "pack:2 l3:1 core:2 pu:2" 8 smt llc spread
	# qemu's x86 TCG guest: an L2 per thread, below the core
	synthetic "pack:2 l3:1 core:2 l2:2 l1d:1 pu:1" 8 smt llc spread
	synthetic "pack:1 l3:2 l2:2 core:2 pu:1" 8 core llc package spread
	synthetic "numa:2 pack:1 l3:1 core:2 pu:1" 4 llc numa spread
	synthetic "pu:2" 2 spread			# no cores (Power7)
fi

echo "1..$n"
[ "$failed" -eq 0 ]
