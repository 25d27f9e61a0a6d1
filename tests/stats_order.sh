#!/usr/bin/env bash
# compare --stats prints its rows in pg_waldump --stats=record's order (by resource manager
# id, then by the record's info bits), so that a diff against PostgreSQL's lines up (issue 36).
# The reference order is the one `penumbra import --stats` prints for the WAL the same run
# writes with --wal-dir (the reader walks rmgr ids and info values in order, as pg_waldump).
# usage: tests/stats_order.sh PENUMBRA SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

names() { awk '/^Type /{on=1; next} on && /^----/{next} on && /^ /{on=0} on && NF{print $1}'; }

for sc in scenarios/bench/ci-tpcc.yaml scenarios/bench/ci-pgbench.yaml; do
	"$bin" compare "$src/$sc" --modes fpw --stats --wal-dir "$work/w" >"$work/compare.txt"
	"$bin" import "$work"/w/fpw/* --stats >"$work/import.txt" 2>/dev/null
	names <"$work/compare.txt" >"$work/compare.names"
	names <"$work/import.txt" | grep -Fx -f "$work/compare.names" >"$work/import.names"
	if [ "$(wc -l <"$work/compare.names")" -lt 4 ]; then
		echo "FAIL: $sc: compare --stats printed $(wc -l <"$work/compare.names") rows" >&2
		exit 1
	fi
	if ! diff -u "$work/import.names" "$work/compare.names" >&2; then
		echo "FAIL: $sc: compare --stats rows are not in pg_waldump's order (- import, + compare)" >&2
		exit 1
	fi
	rm -rf "$work/w"
	echo "ok: $sc: $(wc -l <"$work/compare.names") rows in pg_waldump's order"
done
