#!/usr/bin/env bash
# realdisk_space.sh: bench and crashtest refuse a scenario whose files would not fit the
# free space of --path's file system, before creating them (disk/disk.c room_for_files;
# CTest label disk).
#
# Usage: realdisk_space.sh PENUMBRA_BINARY
#
# The scenario's checkpoint.max_wal_size is 1 EiB (1048576TiB): its WAL ring exceeds any
# disk. Each command must exit 2 with the needed and the free bytes on stderr, and leave no file over
# 1 MiB. The file size limit (ulimit -f) keeps a binary without the check from writing a
# giant file: its zero-fill fails at 16 MiB instead of filling the disk. Exits 0 when both
# were refused so, 1 otherwise.
set -u

if [[ $# -ne 1 ]]; then
	echo "usage: $0 PENUMBRA_BINARY" >&2
	exit 2
fi
bin=$1
work=$(mktemp -d "${TMPDIR:-/var/tmp}/pn_space.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
cat >"$work/big.yaml" <<'YAML'
name: big
storage: {pages: 64, buffers: 8}
checkpoint: {max_wal_size: 1048576TiB}
workload: {kind: random, transactions: 100}
YAML

for cmd in "bench --duration 1s" "crashtest --runs 1"; do
	dir="$work/dir-${cmd%% *}"
	# shellcheck disable=SC2086 # cmd is a command and its options
	(ulimit -f 16384; exec timeout 60 "$bin" $cmd "$work/big.yaml" --path "$dir") \
		>"$work/out" 2>"$work/err"
	rc=$?
	big=$(find "$dir" -type f -size +1M 2>/dev/null | head -1)
	if [[ $rc -ne 2 ]] || ! grep -q "need [0-9]* bytes .*file system has [0-9]* bytes" "$work/err" ||
		[[ -n $big ]]; then
		echo "FAIL $cmd: exit $rc (expected 2), large file '${big}', stderr: $(head -c 400 "$work/err")"
		failed=1
	else
		echo "ok   $cmd: $(head -1 "$work/err" | cut -c1-160)"
	fi
done
exit $failed
