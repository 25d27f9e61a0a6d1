#!/usr/bin/env bash
# postgres.sh: penumbra against the real PostgreSQL 15 (CTest label postgres; issue 14).
#
# Usage: postgres.sh PENUMBRA_BINARY
#
# initdb's a throw-away cluster (1 MiB WAL segments, so records cross segments) in a
# temporary directory, as an unprivileged user (the postgres system user when run as root),
# runs `pgbench -i` and a short pgbench with a CHECKPOINT and a WAL switch inside, then a
# little pgbench under each of wal_compression lz4, pglz and zstd, and asserts:
#   1. `penumbra import --stats` prints exactly what real `pg_waldump --stats=record` prints,
#      on the pgbench range, on the compressed range, and on the whole WAL without --to
#      (both stop at the same zeroed tail, for the same reason);
#   2. on a copy of pg_wal with one byte of a record flipped, both stop at that record, for
#      the same reason (its CRC), with the same table;
#   3. import takes segment files as well as the directory;
#   4. `import --out` of the pgbench range gives a scenario that run replays in fpw with
#      full-page images within 10 % of PostgreSQL's count and bytes on the replayed range,
#      that compare runs in every mode and that check passes (a shorter range, every mode
#      that must pass; nofpw must show a torn page);
#   5. `compare --wal-dir` writes each mode's WAL as segment files that real pg_waldump reads
#      to the end: on a pgbench scenario of ours, pg_waldump's rows (type, count, record and
#      image bytes) are the rows `compare --stats` prints, plus the format's shutdown
#      checkpoint, in fpw, nofpw, doublewrite and pushdown; on the imported WAL it counts the
#      records our run wrote (plus that checkpoint), under PostgreSQL's own type names;
#      umbra's WAL stops it at the first record with a slot shift (our extension); `bench
#      --wal-dir` (1 s of real files per mode) likewise;
#   6. a script of ours that truncates the relation and regrows it writes a Storage/TRUNCATE
#      record that pg_waldump decodes as PostgreSQL 15's (its row and its description
#      "base/5/16384 to 4 blocks flags 7"), in fpw and nofpw.
# PostgreSQL not found is a failure, not a skip: CI installs it (scripts/deps.sh).
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 PENUMBRA_BINARY" >&2
	exit 2
fi
pn=$1
. "$(dirname "$0")/pg_lib.sh"
pg_lib_init postgres.sh
data=$work/data
cleanup() {
	"${as_pg[@]}" "$pgbin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

sql() { pg "$pgbin/psql" -h "$work" -p 54329 -U postgres -Atq -c "$1" postgres; }
bench() { pg "$pgbin/pgbench" -h "$work" -p 54329 -U postgres "$@" postgres >/dev/null 2>&1; }

pg "$pgbin/initdb" -D "$data" -U postgres -A trust --wal-segsize=1 --no-sync >/dev/null
pg "$pgbin/pg_ctl" -D "$data" -l "$work/log" -w -o "-k $work -p 54329 -c listen_addresses= \
-c fsync=off -c max_wal_size=64MB -c wal_keep_size=1GB" start >/dev/null
bench -i -s 1 -q
l1=$(sql "select pg_current_wal_lsn()")
bench -t 300 -c 2
sql "checkpoint"
sql "select pg_switch_wal()" >/dev/null
bench -t 300 -c 2
l2=$(sql "select pg_current_wal_lsn()")
for method in lz4 pglz zstd; do
	sql "alter system set wal_compression = $method"
	sql "select pg_reload_conf()" >/dev/null
	sql "checkpoint"
	bench -t 100
done
l3=$(sql "select pg_current_wal_lsn()")
pg "$pgbin/pg_ctl" -D "$data" -w stop >/dev/null
wal=$work/wal
cp -r "$data/pg_wal" "$wal" # readable by this user, whoever owns the cluster
rm -rf "$wal/archive_status"

failed=0
fail() {
	echo "FAIL: $*" >&2
	failed=1
}

# Compares stdout of pg_waldump ARGS... with import's; $1 names the case, $2 import's args.
same() {
	local name=$1 ours=$2
	shift 2
	"$pgbin/pg_waldump" "$@" >"$work/pg.out" 2>"$work/pg.err" || true
	# shellcheck disable=SC2086
	"$pn" import $ours >"$work/pn.out" 2>"$work/pn.err" || true
	if ! cmp -s "$work/pg.out" "$work/pn.out"; then
		fail "$name: import --stats differs from pg_waldump --stats=record"
		diff "$work/pg.out" "$work/pn.out" >&2 || true
		cat "$work/pn.err" >&2
	elif ! grep -q '^Total ' "$work/pn.out"; then
		fail "$name: no table"
	fi
}

# The reason both give for the end of the WAL: pg_waldump's "... at X/Y: WHY", ours "...: WHY".
same_reason() {
	local name=$1 theirs ours
	theirs=$(sed -n 's/^pg_waldump: error: error in WAL record at [0-9A-F/]*: //p' "$work/pg.err")
	ours=$(sed -n 's/^penumbra import: end of WAL at [0-9A-F/]*: //p' "$work/pn.err")
	if [[ -z $theirs || $theirs != "$ours" ]]; then
		fail "$name: pg_waldump ends with '$theirs', import with '$ours'"
	fi
}

same "pgbench range $l1..$l2" "$wal --from $l1 --to $l2 --stats" \
	-p "$wal" --start "$l1" --end "$l2" --stats=record
same "compressed range $l2..$l3" "$wal --from $l2 --to $l3 --stats" \
	-p "$wal" --start "$l2" --end "$l3" --stats=record
first=$(basename "$(find "$wal" -name '0*' | sort | head -1)")
start=$(printf '%X/%X' $((16#${first:8:8})) $((16#${first:16:8} << 20)))
same "whole WAL from $start" "$wal --stats" -p "$wal" --start "$start" --stats=record
same_reason "whole WAL"
mapfile -t files < <(find "$wal" -name '0*' | sort)
same "segment files" "${files[*]} --from $l1 --to $l2 --stats" \
	-p "$wal" --start "$l1" --end "$l2" --stats=record

# A flipped byte 40 bytes into a Heap record of the pgbench range: a CRC failure there.
lsn=$("$pgbin/pg_waldump" -p "$wal" --start "$l1" --end "$l2" -r Heap 2>/dev/null |
	awk '!found && $6+0 >= 80 { sub(",", "", $10); print $10; found = 1 }')
hi=$((16#${lsn%/*})) lo=$((16#${lsn#*/}))
lsn=$(printf '%X/%X' "$hi" "$lo")
seg=$(printf '%08X%08X%08X' 1 "$hi" $((lo >> 20)))
off=$(((lo & 0xFFFFF) + 40))
bad=$work/bad
cp -r "$wal" "$bad"
printf '\xA5' | dd of="$bad/$seg" bs=1 seek="$off" conv=notrunc status=none
same "flipped byte at $lsn+40" "$bad --from $l1 --stats" -p "$bad" --start "$l1" --stats=record
same_reason "flipped byte"
grep -q "incorrect resource manager data checksum in record at $lsn" "$work/pn.err" ||
	fail "flipped byte: import does not stop at $lsn on its checksum: $(cat "$work/pn.err")"

# 4. The pgbench range replayed.
out=$work/pgbench.yaml
"$pn" import "$wal" --from "$l1" --to "$l2" --out "$out" >"$work/import.out" 2>&1 ||
	fail "import --out: $(cat "$work/import.out")"
read -r pg_count pg_bytes < <(sed -n 's/^PostgreSQL[^:]*: .* fpi_count \([0-9]*\) .* fpi_bytes_uncompressed \([0-9]*\)$/\1 \2/p' "$work/import.out")
"$pn" run "$out" --json "$work/run.json" >/dev/null 2>&1 || fail "run of the import failed"
our_count=$(jq '.results[0].fpi_count' "$work/run.json")
our_bytes=$(jq '.results[0].fpi_bytes' "$work/run.json")
within() { # within OURS THEIRS: |ours - theirs| <= 10 % of theirs, theirs > 0
	(($2 > 0 && ($1 - $2) * 10 <= $2 && ($2 - $1) * 10 <= $2))
}
if ! within "${our_count:-0}" "${pg_count:-0}" || ! within "${our_bytes:-0}" "${pg_bytes:-0}"; then
	fail "fpw replay: $our_count images of $our_bytes B, PostgreSQL $pg_count of $pg_bytes B"
fi
"$pn" compare "$out" --modes fpw,nofpw,umbra,umbra-l3,umbra-l4,doublewrite,pushdown \
	>"$work/compare.out" 2>&1 || fail "compare of the import: $(tail -3 "$work/compare.out")"
# check on the records of the first 96 KiB after the WAL switch, on 8 buffers so that pages
# are written (seconds, not minutes)
# (from the CHECKPOINT's redo point inside the range: the replay starts there)
redo=$("$pgbin/pg_waldump" -p "$wal" --start "$l1" --end "$l2" -r XLOG 2>/dev/null |
	sed -n 's/.*CHECKPOINT_ONLINE redo \([0-9A-F/]*\);.*/\1/p' | head -1)
short=$(printf '%X/%X' $((16#${redo%/*})) $((((16#${redo#*/} >> 20) + 1 << 20) + 0x18000)))
"$pn" import "$wal" --from "$redo" --to "$short" --out "$work/short.yaml" >/dev/null 2>&1 ||
	fail "import --out of $redo..$short"
for m in fpw nofpw umbra umbra-l3 umbra-l4 doublewrite pushdown; do
	verdict=pass
	[[ $m == nofpw ]] && verdict=violation
	line="  mode: $m"
	[[ $m == umbra-* ]] && line=$(printf '  mode: umbra\n  policy: %s' "${m#umbra-}")
	{ awk -v line="$line" '$0 == "  mode: fpw" { print line; next }
		/^  buffers: / { print "  buffers: 8"; next } { print }' "$work/short.yaml"
	  echo 'crash: {points: {every: 10}, max_unsynced: 2, tear: halves, samples: 0}'
	  echo "expect: {verdict: $verdict}"; } >"$work/short-$m.yaml"
	"$pn" check "$work/short-$m.yaml" --quiet --traces "$work/traces" \
		>"$work/check.out" 2>&1 || fail "check $m of the import: $(tail -3 "$work/check.out")"
done

# 5. --wal-dir read by real pg_waldump.
rows() { # the rows of a --stats table: type, count, record bytes, image bytes (sorted)
	sed -E 's/\([ 0-9.]+\)//g' | awk '$1 ~ /\// && NF == 5 { print $1, $2, $3, $4 }' | sort
}
cat >"$work/pgb.yaml" <<'EOF2'
name: pgb
storage: {pages: 4000, buffers: 512, wal_segment_size: 1MiB}
protocol: {mode: fpw}
checkpoint: {interval: 0s, every_transactions: 1000, max_wal_size: 0}
workload: {kind: pgbench, scale: 1, clients: 4, transactions: 3000}
EOF2
modes=(fpw nofpw doublewrite pushdown)
"$pn" compare "$work/pgb.yaml" --modes "$(IFS=,; echo "${modes[*]}")" --stats \
	--wal-dir "$work/ours" >"$work/pgb.out" 2>&1 || fail "compare --wal-dir: $(tail -3 "$work/pgb.out")"
for m in "${modes[@]}"; do
	awk -v m="$m" '/^WAL records of mode / { on = ($5 == m ":") } on' "$work/pgb.out" | rows \
		>"$work/ours.rows"
	{ "$pgbin/pg_waldump" -p "$work/ours/$m" --start 0/100000 --stats=record \
		2>"$work/pg.err" || true; } | rows | grep -v '^XLOG/CHECKPOINT_SHUTDOWN 1 114 0$' \
		>"$work/pg.rows" || true
	if [[ ! -s $work/ours.rows ]] || ! cmp -s "$work/ours.rows" "$work/pg.rows"; then
		fail "--wal-dir $m: pg_waldump's rows are not ours"
		diff "$work/ours.rows" "$work/pg.rows" >&2 || true
	fi
	grep -q 'invalid record length at .*: wanted 24, got 0' "$work/pg.err" ||
		fail "--wal-dir $m: pg_waldump did not read to the zeroed end: $(cat "$work/pg.err")"
done
# The run counts --from .. --to alone while its WAL holds the whole replay (from the redo point
# before --from): imported again from that redo point, the two are the same records.
replayed=$(sed -n 's/^replayed \([0-9A-F]*\/[0-9A-F]*\) .*/\1/p' "$work/import.out")
"$pn" import "$wal" --from "$replayed" --to "$l2" --out "$work/whole.yaml" >/dev/null 2>&1 ||
	fail "import --out from the redo point $replayed"
"$pn" compare "$work/whole.yaml" --modes fpw,nofpw,doublewrite,pushdown,umbra \
	--wal-dir "$work/replay" --json "$work/replay.json" >/dev/null 2>&1 ||
	fail "compare --wal-dir of the import"
for m in fpw nofpw doublewrite pushdown umbra; do
	ours=$(jq ".results[] | select(.mode == \"$m\") | .wal_records" "$work/replay.json")
	theirs=$({ "$pgbin/pg_waldump" -p "$work/replay/$m" --start 0/100000 --stats=record \
		2>"$work/pg.err" || true; } | awk '$1 == "Total" { print $2 }')
	if [[ $m == umbra ]]; then
		grep -q 'out-of-order block_id' "$work/pg.err" && ((theirs < ours)) ||
			fail "--wal-dir umbra: pg_waldump read $theirs of $ours records: $(cat "$work/pg.err")"
	elif [[ -z $ours || $theirs != $((ours + 1)) ]]; then
		fail "--wal-dir $m of the import: pg_waldump counts $theirs records, the run $ours (+1)"
	fi
done
cat >"$work/bench.yaml" <<'EOF2'
name: b
storage: {pages: 256, buffers: 64, wal_segment_size: 1MiB}
protocol: {mode: fpw}
checkpoint: {interval: 100ms}
workload: {kind: random, clients: 2, transactions: 500}
EOF2
"$pn" bench "$work/bench.yaml" --path "$work/bench" --modes fpw,nofpw --duration 1s \
	--wal-dir "$work/benchwal" --json "$work/bench.json" >/dev/null 2>&1 || fail "bench --wal-dir"
for m in fpw nofpw; do
	ours=$(jq ".results[] | select(.mode == \"$m\") | .wal_records" "$work/bench.json")
	theirs=$({ "$pgbin/pg_waldump" -p "$work/benchwal/$m" --start 0/100000 --stats=record \
		2>/dev/null || true; } | awk '$1 == "Total" { print $2 }')
	[[ -n $ours && $theirs == $((ours + 1)) ]] ||
		fail "bench --wal-dir $m: pg_waldump counts $theirs records, bench $ours (+1)"
done

# 6. Storage/TRUNCATE read by real pg_waldump.
cat >"$work/trunc.yaml" <<'EOF2'
name: t
storage: {pages: 8, buffers: 4, wal_segment_size: 1MiB}
protocol: {mode: fpw}
checkpoint: {interval: 0s, max_wal_size: 0}
workload:
  kind: script
  script:
    - {op: update, page: 5}
    - {op: commit}
    - {op: truncate, page: 4}
    - {op: update, page: 6}
    - {op: commit}
EOF2
"$pn" compare "$work/trunc.yaml" --modes fpw,nofpw --stats --wal-dir "$work/trunc" \
	>"$work/trunc.out" 2>&1 || fail "compare --wal-dir of a truncation: $(tail -3 "$work/trunc.out")"
for m in fpw nofpw; do
	awk -v m="$m" '/^WAL records of mode / { on = ($5 == m ":") } on' "$work/trunc.out" | rows \
		>"$work/ours.rows"
	{ "$pgbin/pg_waldump" -p "$work/trunc/$m" --start 0/100000 --stats=record \
		2>"$work/pg.err" || true; } | rows | grep -v '^XLOG/CHECKPOINT_SHUTDOWN 1 114 0$' \
		>"$work/pg.rows" || true
	grep -q '^Storage/TRUNCATE 1 46 0$' "$work/ours.rows" ||
		fail "truncation $m: no Storage/TRUNCATE row of 46 B in ours: $(cat "$work/ours.rows")"
	cmp -s "$work/ours.rows" "$work/pg.rows" || {
		fail "truncation $m: pg_waldump's rows are not ours"
		diff "$work/ours.rows" "$work/pg.rows" >&2 || true
	}
	"$pgbin/pg_waldump" -p "$work/trunc/$m" --start 0/100000 -r Storage >"$work/pg.out" \
		2>/dev/null || true
	grep -q 'desc: TRUNCATE base/5/16384 to 4 blocks flags 7$' "$work/pg.out" ||
		fail "truncation $m: pg_waldump does not describe the record as PostgreSQL's"
done

if [[ $failed -eq 0 ]]; then
	echo "postgres: import --stats equals pg_waldump --stats=record ($l1 .. $l3);" \
		"fpw replay: $our_count images of $our_bytes B, PostgreSQL's $pg_count of $pg_bytes B"
fi
exit "$failed"
