#!/bin/sh
# SPDX-License-Identifier: MIT
# The redis macro workload (doc/benchmarks.md, "Whole programs"):
#
#   REDIS_SERVER=... REDIS_BENCHMARK=... REDIS_CLI=... AK_LIBC=... \
#       redis-work.sh DIR KEYS
#   redis-work.sh --bound     (where redis-server's malloc binds)
#
# starts redis-server on a Unix socket in DIR (no TCP port, no
# persistence, threaded I/O, lazy freeing), loads it with redis-benchmark
# and asks it for its dataset's state with redis-cli, then empties it and
# shuts it down.  Only the server runs on the allocator under test: it
# gets this script's LD_PRELOAD and AK_MALLOC_STATS, the clients neither.
# Debian links redis-server with libjemalloc, whose malloc would serve
# it when nothing is preloaded; so with no LD_PRELOAD (the glibc
# baseline) libc itself is preloaded (AK_LIBC), which puts glibc's malloc
# ahead of jemalloc's.  --bound prints, for each of malloc, calloc,
# realloc and free, the file redis-server's call binds to under the same
# settings: scripts/run-macro checks it before the runs.
#
# Every phase draws its keys at random (redis-benchmark's -r), and every
# phase that leaves state behind, or deletes it, draws 40 times as many
# keys as its key space of K holds, so that each key is drawn (a key
# missed: less than K e^-40, 1e-14 at the largest); the lists are pushed
# to hundreds of elements and trimmed to 20.
# The state printed is therefore fixed by KEYS alone, under any allocator,
# interleaving or seed: the key count, DEBUG DIGEST, a list's length.
set -eu

client() { "$REDIS_CLI" -s "$sock" "$@"; }

# the settings of the server's run, from this script's environment
preload=${LD_PRELOAD:-${AK_LIBC:-}}
stats=${AK_MALLOC_STATS:-}
unset LD_PRELOAD AK_MALLOC_STATS

if [ "${1:-}" = --bound ]; then
	LD_PRELOAD=$preload LD_BIND_NOW=1 LD_DEBUG=bindings \
		"$REDIS_SERVER" --version 2>&1 >/dev/null |
		sed -n "s/.*binding file [^ ]*redis-[a-z-]* \[0\] to \([^ ]*\) \[0\]: normal symbol \`\(malloc\|calloc\|realloc\|free\)'.*/\2 \1/p" |
		sort -u
	exit 0
fi

[ $# -eq 2 ] || { echo "usage: redis-work.sh DIR KEYS" >&2; exit 2; }
dir=$1 k=$2
case $k in
''|*[!0-9]*|0*) echo "redis-work.sh: KEYS '$k': expected a number" >&2; exit 2 ;;
esac
[ -n "$preload" ] || {
	echo "redis-work.sh: no LD_PRELOAD and no AK_LIBC: redis-server would run on the jemalloc it links" >&2
	exit 2
}
mkdir -p "$dir"
sock=$dir/redis.sock
rm -f "$sock"

spid=
stop() {
	if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
		kill -9 "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null || :
	fi
	spid=
}
fail() {
	echo "redis-work.sh: $*" >&2
	tail -n 5 "$dir/server.log" >&2 2>/dev/null || :
	exit 1
}
trap stop EXIT
trap 'stop; exit 130' INT TERM HUP

LD_PRELOAD=$preload AK_MALLOC_STATS=$stats "$REDIS_SERVER" \
	--port 0 --unixsocket "$sock" --unixsocketperm 700 \
	--save '' --appendonly no --dir "$dir" --logfile "$dir/server.log" \
	--io-threads 2 --io-threads-do-reads yes \
	--lazyfree-lazy-user-del yes --lazyfree-lazy-user-flush yes \
	--lazyfree-lazy-server-del yes --hash-max-listpack-entries 32 \
	--enable-debug-command local &
spid=$!

# its socket answers, within 10 s
i=0
until [ -S "$sock" ] && [ "$(client ping 2>/dev/null)" = PONG ]; do
	kill -0 "$spid" 2>/dev/null || fail "redis-server exited at start"
	i=$((i + 1))
	[ "$i" -le 200 ] || fail "redis-server's socket did not answer in 10 s"
	sleep 0.05
done

# load N KEYSPACE COMMAND...: N requests over 50 clients, pipelined
load() {
	_n=$1 _r=$2
	shift 2
	"$REDIS_BENCHMARK" -s "$sock" -q -c 50 -P 16 -n "$_n" -r "$_r" "$@" \
		>/dev/null || fail "redis-benchmark $*: failed"
}
# val N: N bytes of value
val() { head -c "$1" /dev/zero | tr '\0' v; }

# strings of four sizes: every key set about 40 times, each overwrite a
# free and an allocation
for d in 16 200 1500 9000; do
	load $((40 * k)) "$k" set "s$d:__rand_int__" "$(val $d)"
done
v=$(val 40)
load $((4 * k)) "$k" mset m:__rand_int__ "$v" m:__rand_int__ "$v" \
	m:__rand_int__ "$v" m:__rand_int__ "$v" m:__rand_int__ "$v" \
	m:__rand_int__ "$v" m:__rand_int__ "$v" m:__rand_int__ "$v" \
	m:__rand_int__ "$v" m:__rand_int__ "$v"
load "$k" "$k" get "s1500:__rand_int__"

# 64 lists of l elements on average, read, popped from (a quarter), and
# trimmed to 20 each: a list shorter than 20 before the trim is over 8
# standard deviations away
l=$((k / 8 + 200))
load $((64 * l)) 64 rpush "l:__rand_int__" "$(val 100)"
load $((4 * k + 256)) 64 lrange "l:__rand_int__" 0 99
load $((16 * l)) 64 lpop "l:__rand_int__"
load 2560 64 ltrim "l:__rand_int__" 0 19

# 100 sets and 100 hashes of some 70 members each (tables: past the lazy
# free's threshold of 64), read, then deleted: the lazy-free thread
# frees them
load $((4 * k + 13000)) 100 sadd "set:__rand_int__" "e:__rand_int__"
load $((k + 500)) 100 smembers "set:__rand_int__"
load $((4 * k + 13000)) 100 hset "h:__rand_int__" "f:__rand_int__" "$(val 32)"
load $((k + 500)) 100 hgetall "h:__rand_int__"
load 4000 100 del "set:__rand_int__"
load 4000 100 del "h:__rand_int__"

# the state: fixed by KEYS alone
echo "keys $(client dbsize)"
echo "digest $(client debug digest)"
echo "list $(client llen l:000000000000)"
echo "string $(client strlen s9000:000000000000)"

# everything freed by the lazy-free thread, then a clean shutdown
client flushall >/dev/null
i=0
until [ "$(client info memory | tr -d '\r' |
	sed -n 's/^lazyfree_pending_objects://p')" = 0 ]; do
	i=$((i + 1))
	[ "$i" -le 1000 ] || fail "the lazy-free thread did not finish in 10 s"
	sleep 0.01
done
client shutdown nosave >/dev/null 2>&1 || :
rc=0
wait "$spid" || rc=$?
spid=
[ "$rc" -eq 0 ] || fail "redis-server exited with status $rc"
