#!/usr/bin/env bash
# fidelity_model.sh: the model against real PostgreSQL 15 (CTest label postgres; issue 30).
#
# Usage: fidelity_model.sh PENUMBRA_BINARY [TABLE_OUT]
#
# Runs small versions of the seed workloads on a throw-away PostgreSQL 15 cluster (as
# tests/postgres.sh does: the postgres user when run as root, a unix socket in its own
# folder, fsync off, autovacuum off, 1 MiB segments), measures the real WAL of each range
# with pg_waldump (--stats=record for bytes and records, the per-record listing for the
# full-page images), runs the matching model scenario (`compare --stats`, postgres: 15) and
# asserts WAL bytes, records and images within 10 % of PostgreSQL's (images: within 10 % or
# 20 images). Prints the table (workload, figure, real, model, gap %), also to TABLE_OUT.
#   vacuum     CREATE TABLE foo AS SELECT generate_series(1, 200000); CHECKPOINT; VACUUM foo
#              with checksums on and off, fpw on and off;
#   btree      CREATE TABLE t (k int); CREATE INDEX ON t (k); CHECKPOINT; 200 transactions of
#              1,000 rows with keys from 4,000 values, max_wal_size 16MB (WAL-volume checkpoints in the range), fpw
#              on and off;
#   pgbench    pgbench -i -s 1, CHECKPOINT, pgbench -c 1 -t 3000 (one client: no row-lock
#              waits, which the model does not have), fpw on and off.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY [TABLE_OUT]" >&2
	exit 2
fi
pn=$1
out=${2:-}
. "$(dirname "$0")/pg_lib.sh"
pg_lib_init fidelity_model.sh
data=$work/data
cleanup() {
	"${as_pg[@]}" "$pgbin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
sql() { pg "$pgbin/psql" -h "$work" -p 54331 -U postgres -Atq -c "$1" postgres; }
lsn() { sql "select pg_current_wal_insert_lsn()"; }

# start_cluster INITDB_ARGS...: a new cluster in $data
start_cluster() {
	"${as_pg[@]}" "$pgbin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$data"
	pg "$pgbin/initdb" -D "$data" -U postgres -A trust --wal-segsize=1 --no-sync "$@" >/dev/null
	pg "$pgbin/pg_ctl" -D "$data" -l "$work/log" -w -o "-k $work -p 54331 -c listen_addresses= \
-c fsync=off -c autovacuum=off -c checkpoint_timeout=1h -c wal_keep_size=4GB \
-c max_wal_size=16MB" start >/dev/null
}
fpw() { sql "alter system set full_page_writes = $1" && sql "select pg_reload_conf()" >/dev/null; }

# real NAME FROM TO: bytes, records and images of PostgreSQL's WAL FROM..TO into $work/NAME.real
real() {
	sql "select pg_switch_wal()" >/dev/null # the range's end written out
	local stats images
	stats=$("$pgbin/pg_waldump" -p "$data/pg_wal" --start "$2" --end "$3" --stats=record)
	images=$("$pgbin/pg_waldump" -p "$data/pg_wal" --start "$2" --end "$3" |
		awk '{ n += gsub(/ FPW/, "") } END { print n + 0 }')
	awk -v img="$images" '$1 == "Total" { print $7, $2, img }' <<<"$stats" >"$work/$1.real"
}

# model NAME MODE YAML: the model's bytes, records and images of mode MODE into $work/NAME.model
model() {
	printf '%s\n' "$3" >"$work/$1.yaml"
	"$pn" compare "$work/$1.yaml" --modes "$2" --stats >"$work/$1.out"
	awk '$1 == "Total" { total = $7; n = $2 } /^FPI count/ { img = $3 }
		END { print total, n, img }' "$work/$1.out" >"$work/$1.model"
}

failed=0
table=$work/table
printf '| workload | figure | PostgreSQL 15 | model | gap |\n| --- | --- | --- | --- | --- |\n' >"$table"
# compare NAME: one row per figure; a gap over 10 % (images: and over 20) fails
compare() {
	local r m
	read -r -a r <"$work/$1.real"
	read -r -a m <"$work/$1.model"
	local names=("WAL bytes" "records" "full-page images")
	for i in 0 1 2; do
		local gap="" diff=$((m[i] - r[i]))
		if ((r[i] > 0)); then
			gap=$(awk -v a="${m[i]}" -v b="${r[i]}" 'BEGIN { printf "%+.1f %%", 100 * (a - b) / b }')
		fi
		printf '| %s | %s | %s | %s | %s |\n' "$1" "${names[i]}" "${r[i]}" "${m[i]}" "${gap:-—}" >>"$table"
		local abs=${diff#-}
		if ((abs * 10 > r[i])) && { ((i < 2)) || ((abs > 20)); }; then
			echo "FAIL: $1: ${names[i]}: PostgreSQL ${r[i]}, model ${m[i]}" >&2
			failed=1
		fi
	done
}

vacuum_yaml() { # MODE CHECKSUMS
	printf 'name: fid-vacuum\nstorage: {buffers: 32}\nprotocol: {mode: %s, checksums: %s}\n' "$1" "$2"
	printf 'checkpoint: {interval: 0s, max_wal_size: 1GiB}\nworkload: {kind: vacuum, rows: 200000}\n'
}
vacuum_real() { # NAME
	sql "drop table if exists foo" 2>/dev/null
	sql "create table foo as select generate_series(1, 200000)"
	sql "checkpoint"
	local a b
	a=$(lsn)
	sql "vacuum foo"
	b=$(lsn)
	real "$1" "$a" "$b"
}

start_cluster -k
vacuum_real vacuum-checksums-fpw
model vacuum-checksums-fpw fpw "$(vacuum_yaml fpw true)"
compare vacuum-checksums-fpw
fpw off
vacuum_real vacuum-checksums-nofpw
model vacuum-checksums-nofpw nofpw "$(vacuum_yaml nofpw true)"
compare vacuum-checksums-nofpw
fpw on

btree_yaml() { # MODE
	printf 'name: fid-btree\nseed: 4\nstorage: {buffers: 2048, wal_segment_size: 1MiB}\n'
	printf 'protocol: {mode: %s, checksums: true}\ncheckpoint: {interval: 0s, max_wal_size: 16MiB}\n' "$1"
	printf 'workload: {kind: btree_dedup, inserts: 200000, distinct_keys: 4000, transactions: 200}\n'
}
btree_real() { # NAME
	sql "drop table if exists t" 2>/dev/null
	sql "create table t (k int)"
	sql "create index on t (k)"
	sql "checkpoint"
	local a b
	a=$(lsn)
	sql "do \$\$ begin for i in 1..200 loop insert into t select (random() * 3999)::int from generate_series(1, 1000); commit; end loop; end \$\$"
	b=$(lsn)
	real "$1" "$a" "$b"
}
btree_real btree-fpw
model btree-fpw fpw "$(btree_yaml fpw)"
compare btree-fpw
fpw off
btree_real btree-nofpw
model btree-nofpw nofpw "$(btree_yaml nofpw)"
compare btree-nofpw
fpw on

pgbench_yaml() { # MODE
	printf 'name: fid-pgbench\nstorage: {pages: 2100, buffers: 16384, wal_segment_size: 1MiB}\n'
	printf 'protocol: {mode: %s, checksums: true}\ncheckpoint: {interval: 0s, max_wal_size: 16MiB}\n' "$1"
	printf 'workload: {kind: pgbench, scale: 1, clients: 1, transactions: 3000}\n'
}
pgbench_real() { # NAME
	pg "$pgbin/pgbench" -h "$work" -p 54331 -U postgres -i -s 1 -q postgres >/dev/null 2>&1
	sql "checkpoint"
	local a b
	a=$(lsn)
	pg "$pgbin/pgbench" -h "$work" -p 54331 -U postgres -c 1 -t 3000 postgres >/dev/null 2>&1
	b=$(lsn)
	real "$1" "$a" "$b"
}
pgbench_real pgbench-fpw
model pgbench-fpw fpw "$(pgbench_yaml fpw)"
compare pgbench-fpw
fpw off
pgbench_real pgbench-nofpw
model pgbench-nofpw nofpw "$(pgbench_yaml nofpw)"
compare pgbench-nofpw

start_cluster
vacuum_real vacuum-nochecksums-fpw
model vacuum-nochecksums-fpw fpw "$(vacuum_yaml fpw false)"
compare vacuum-nochecksums-fpw
fpw off
vacuum_real vacuum-nochecksums-nofpw
model vacuum-nochecksums-nofpw nofpw "$(vacuum_yaml nofpw false)"
compare vacuum-nochecksums-nofpw

cat "$table"
[[ -z $out ]] || cp "$table" "$out"
exit "$failed"
