#!/bin/sh
# SPDX-License-Identifier: MIT
# The git macro workload (doc/benchmarks.md, "Whole programs"):
#
#   GIT=/usr/bin/git git-work.sh STREAM REPO
#
# imports a generated history (macro-gen git) into a new bare repository,
# repacks it from scratch (delta search over every object), then walks it:
# the whole log with patches and stats, and a blame of the most edited
# file.  Every git process, and this shell, runs under the allocator being
# measured.  Prints the head commit, the commit count and checksums of
# the walks: fixed by the stream (fixed author and dates), so the same
# under every allocator; the pack's own bytes, which depend on the delta
# search's threads, are not printed.
set -eu
stream=$1 repo=$2
GIT=${GIT:-git}

# no user or system configuration, no background gc
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=/nonexistent
git() { "$GIT" -c gc.auto=0 -c maintenance.auto=false "$@"; }

git init -q --bare "$repo"
cd "$repo"
git fast-import --quiet <"$stream"
git repack -q -a -d -f --window=50 --depth=50
echo "head $(git rev-parse refs/heads/main)"
echo "commits $(git rev-list --count refs/heads/main)"
echo "log $(git log -p --stat --format='%H %an %s' refs/heads/main | cksum)"
echo "blame $(git blame -s refs/heads/main -- src0/file00.c | cksum)"
