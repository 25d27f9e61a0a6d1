#!/usr/bin/env bash
# fidelity_import.sh: the import replay against real PostgreSQL 15 (CTest fidelity_import,
# label postgres; issue 30).
#
# Usage: fidelity_import.sh PENUMBRA_BINARY [TABLE.md]
#
# Runs four throw-away clusters (1 MiB WAL segments; as the postgres user when run as root,
# each on a unix socket in its own folder): fpw on with checksums off, on (initdb -k), off
# with wal_log_hints, and fpw off. On each the same small workloads run, their ranges taken
# with pg_current_wal_insert_lsn():
#   pgbench   pgbench -t 300 with a CHECKPOINT inside (the range starts before it: the
#             replay starts at the checkpoint before --from, the run counts from --from);
#   insert    one transaction of 20,000 INSERTs after a CHECKPOINT;
#   vacuum    a VACUUM of a 20,000-row table after a CHECKPOINT (Heap2/VISIBLE's heap page
#             without an image unless hints are logged; XLOG/FPI_FOR_HINT with checksums);
#   spread    pgbench under max_wal_size 4MB: WAL-volume checkpoints, spread, the range
#             ending between one's redo point and its record (the fpw-on clusters);
#   short     a few pgbench transactions with no checkpoint in the range.
# For each it asserts:
#   1. `penumbra import --stats` prints exactly what `pg_waldump --stats=record` prints;
#   2. `import --out` then `run` in fpw: WAL bytes and full-page images within 2 % of
#      PostgreSQL's on the range --from .. --to alone (pg_waldump --stats=record's total of
#      that range, which import's "PostgreSQL on them" line must equal; the records
#      between the checkpoint's redo point before --from and --from are replayed, not
#      counted: the trace's F line); `import` prints the PostgreSQL version of the
#      WAL's page magic (15), and the scenario says it ('postgres: 15', its version profile); hint logging
#      comes from the WAL or, where no record shows it (the fpw cluster), from the
#      cluster's pg_control beside the WAL. fpw off: the prediction against the fpw-on, checksums-off
#      cluster's run of the same workload (the same span of records), its page holes
#      estimated (import says how many): the same images and bytes within 5 % on pgbench
#      and insert (user tables, whose pages the WAL shows from their creation); vacuum and
#      short are printed only: their images are mostly of catalog pages initdb wrote
#      without WAL, whose layout the records show little of.
# and prints the table (workload, real bytes/images, replay bytes/images, gap %), also into
# TABLE.md when given (docs/results.md's "Import replay against real PostgreSQL 15").
# PostgreSQL not found is a failure, not a skip: CI installs it (scripts/deps.sh).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY [TABLE.md]" >&2
	exit 2
fi
pn=$1
table_out=${2:-}
. "$(dirname "$0")/pg_lib.sh"
pg_lib_init fidelity_import.sh
cleanup() {
	for d in "$work"/*/data; do
		[[ ! -d $d ]] || "${as_pg[@]}" "$pgbin/pg_ctl" -D "$d" -m immediate -w stop \
			>/dev/null 2>&1 || true
	done
	[[ -n ${PN_KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT

# cluster NAME PORT INITDB_ARGS SERVER_ARGS: runs the workloads on a new cluster; leaves
# $work/NAME/wal (a copy of pg_wal) and $work/NAME/ranges (lines "workload from to")
cluster() {
	local port=$2 init=$3 opts=$4 dir=$work/$1
	local data=$dir/data sock=$dir/sock
	mkdir -p "$sock"
	[[ ${#as_pg[@]} -eq 0 ]] || chown -R postgres "$dir"
	sql() { pg "$pgbin/psql" -h "$sock" -p "$port" -U postgres -Atq -c "$1" postgres; }
	bench() {
		pg "$pgbin/pgbench" -h "$sock" -p "$port" -U postgres "$@" postgres >/dev/null 2>&1
	}
	lsn() { sql "select pg_current_wal_insert_lsn()"; }
	# shellcheck disable=SC2086
	pg "$pgbin/initdb" -D "$data" -U postgres -A trust --wal-segsize=1 --no-sync $init >/dev/null
	# shellcheck disable=SC2086
	pg "$pgbin/pg_ctl" -D "$data" -l "$dir/log" -w -o "-k $sock -p $port -c listen_addresses= \
-c fsync=off -c wal_keep_size=1GB -c checkpoint_timeout=1h $opts" start >/dev/null
	sql "alter system set max_wal_size = '1GB'"
	sql "select pg_reload_conf()" >/dev/null
	bench -i -s 1 -q
	sql "checkpoint"
	local a b
	a=$(lsn)
	bench -t 300 -c 1 --random-seed=1
	sql "checkpoint"
	bench -t 300 -c 1 --random-seed=1
	b=$(lsn)
	echo "pgbench $a $b" >>"$dir/ranges"
	sql "create table t (a int, b text)"
	sql "checkpoint"
	a=$(lsn)
	sql "checkpoint"
	sql "insert into t select g, repeat('x', 60) from generate_series(1, 20000) g"
	b=$(lsn)
	echo "insert $a $b" >>"$dir/ranges"
	a=$(lsn)
	sql "checkpoint"
	sql "vacuum t"
	b=$(lsn)
	echo "vacuum $a $b" >>"$dir/ranges"
	a=$(lsn)
	bench -t 20 -c 1 --random-seed=1
	b=$(lsn)
	echo "short $a $b" >>"$dir/ranges"
	if [[ $opts != *"full_page_writes=off"* ]]; then
		sql "alter system set max_wal_size = '4MB'"
		sql "alter system set checkpoint_completion_target = 0.9"
		sql "select pg_reload_conf()" >/dev/null
		a=$(lsn)
		bench -t 1500 -c 1 --random-seed=1
		b=$(lsn)
		echo "spread $a $b" >>"$dir/ranges"
	fi
	pg "$pgbin/pg_ctl" -D "$data" -w stop >/dev/null
	cp -r "$data/pg_wal" "$dir/wal"
	rm -rf "$dir/wal/archive_status"
	mkdir -p "$dir/global" # wal/../global/pg_control, as beside a cluster's pg_wal
	cp "$data/global/pg_control" "$dir/global/"
}

clusters=(fpw checksums hints nofpw)
cluster fpw 54331 "" "" &
cluster checksums 54332 "-k" "" &
cluster hints 54333 "" "-c wal_log_hints=on" &
cluster nofpw 54334 "" "-c full_page_writes=off" &
wait
for c in "${clusters[@]}"; do
	[[ -d $work/$c/wal ]] || { echo "FAIL: cluster $c: no WAL ($(tail -3 "$work/$c/log"))" >&2; exit 1; }
done

failed=0
fail() { # also from a subshell (replay's, under mapfile): the file tells the end
	echo "FAIL: $*" >&2
	failed=1
	touch "$work/failed"
}

# The spread range ends between a WAL-volume checkpoint's redo point and its record: the
# last checkpoint record of the range whose redo point lies before it, cut half-way.
spread_range() {
	local c=$1 a b rec redo
	read -r _ a b < <(grep '^spread ' "$work/$c/ranges")
	read -r rec redo < <("$pgbin/pg_waldump" -p "$work/$c/wal" -s "$a" -e "$b" -r XLOG 2>/dev/null |
		sed -n 's/.*lsn: \([0-9A-F/]*\),.*CHECKPOINT_ONLINE redo \([0-9A-F/]*\);.*/\1 \2/p' | tail -1)
	[[ -n $rec ]] || { fail "$c spread: no WAL-volume checkpoint in $a..$b"; return; }
	local r=$((16#${redo#*/} + (16#${redo%/*} << 32))) k=$((16#${rec#*/} + (16#${rec%/*} << 32)))
	local cut=$(((r + k) / 2))
	printf 'spread %s %X/%X\n' "$a" $((cut >> 32)) $((cut & 0xFFFFFFFF))
}
for c in fpw checksums hints; do
	line=$(spread_range "$c")
	sed -i '/^spread /d' "$work/$c/ranges"
	[[ -z $line ]] || echo "$line" >>"$work/$c/ranges"
done

# replay C W FROM TO: PostgreSQL's and the fpw replay's "bytes images" on W's range FROM ..
# TO (two lines): PostgreSQL's from pg_waldump (--stats=record's total, $work/pg.out, and
# its blocks shown with an image, FPW); fails the case when import or run fails, or when
# import's figures of the records the run counts are not those
replay() {
	local c=$1 w=$2 out=$work/$1-$2
	if ! "$pn" import "$work/$c/wal" --from "$3" --to "$4" --out "$out.yaml" >"$out.import" 2>&1; then
		fail "$c $w: import --out: $(tail -2 "$out.import")"
		return
	fi
	grep -q '^postgres: 15 ' "$out.import" || fail "$c $w: import names no PostgreSQL 15"
	grep -q '^postgres: 15$' "$out.yaml" || fail "$c $w: the scenario names no PostgreSQL 15"
	# no record of the fpw cluster shows hint logging: pg_control does
	[[ $c != fpw ]] || grep -q '^hint bits logged: no (.*/global/pg_control: data checksums off, wal_log_hints off)$' \
		"$out.import" || fail "$c $w: hint logging not taken from pg_control: $(grep '^hint' "$out.import")"
	local total images counted
	total=$(awk '$1 == "Total" { print $(NF - 1) }' "$work/pg.out")
	images=$("$pgbin/pg_waldump" -p "$work/$c/wal" --start "$3" --end "$4" 2>/dev/null |
		grep -o ' FPW' | wc -l || true)
	echo "${total:-0} $images"
	counted=$(sed -n 's/^PostgreSQL on them: wal_bytes \([0-9]*\) fpi_count \([0-9]*\) .*/\1 \2/p' \
		"$out.import")
	[[ $counted == "$total $images" ]] ||
		fail "$c $w: import counts '$counted' (bytes images) of PostgreSQL's, pg_waldump's range '$total $images'"
	if ! "$pn" run "$out.yaml" --json "$out.json" >/dev/null 2>&1; then
		fail "$c $w: run of the import failed"
		return
	fi
	jq -r '.results[0] | "\(.wal_bytes) \(.fpi_count)"' "$out.json"
}
gap() { # gap OURS THEIRS: percent, 2 decimals
	awk -v o="$1" -v t="$2" 'BEGIN { printf "%+.2f", t ? (o - t) * 100 / t : (o ? 100 : 0) }'
}
within2() { # |ours - theirs| <= 2 % of theirs
	(( ($1 - $2) * 50 <= $2 && ($2 - $1) * 50 <= $2 ))
}
within5() { # |ours - theirs| <= 5 % of theirs
	(( ($1 - $2) * 20 <= $2 && ($2 - $1) * 20 <= $2 ))
}

table=$work/table.md
{
	echo "| workload | cluster | PostgreSQL WAL bytes / images | replay fpw bytes / images | gap bytes / images |"
	echo "| --- | --- | --- | --- | --- |"
} >"$table"
declare -A real
for c in "${clusters[@]}"; do
	while read -r w a b; do
		# 1. the statistics
		"$pgbin/pg_waldump" -p "$work/$c/wal" --start "$a" --end "$b" --stats=record \
			>"$work/pg.out" 2>/dev/null || true
		"$pn" import "$work/$c/wal" --from "$a" --to "$b" --stats >"$work/pn.out" 2>/dev/null || true
		if ! cmp -s "$work/pg.out" "$work/pn.out" || ! grep -q '^Total ' "$work/pn.out"; then
			fail "$c $w: import --stats differs from pg_waldump --stats=record"
			diff "$work/pg.out" "$work/pn.out" >&2 || true
		fi
		# 2. the replay
		mapfile -t got < <(replay "$c" "$w" "$a" "$b")
		[[ ${#got[@]} -eq 2 ]] || { fail "$c $w: no figures of PostgreSQL's or the replay's"; continue; }
		read -r pgb pgi <<<"${got[0]}"
		read -r ob oi <<<"${got[1]}"
		if [[ $c == nofpw ]]; then # the prediction, against the fpw cluster's WAL
			read -r pgb pgi <<<"${real[fpw-$w]:-0 0}"
			label="nofpw (predicted fpw)"
		else
			real[$c-$w]="$pgb $pgi"
			label=$c
		fi
		if [[ $c != nofpw ]]; then
			within2 "$ob" "$pgb" && within2 "$oi" "$pgi" ||
				fail "$c $w: the replay's fpw row $ob B, $oi images; PostgreSQL's $pgb B, $pgi images"
		elif [[ $w == pgbench || $w == insert ]]; then # user tables: holes estimated
			within5 "$ob" "$pgb" && ((oi == pgi)) ||
				fail "$c $w: the fpw prediction $ob B, $oi images; PostgreSQL's $pgb B, $pgi images"
		fi
		echo "| $w | $label | $pgb / $pgi | $ob / $oi | $(gap "$ob" "$pgb") % / $(gap "$oi" "$pgi") % |" >>"$table"
	done <"$work/$c/ranges"
done
cat "$table"
[[ ! -e $work/failed ]] || failed=1
[[ -z $table_out ]] || cp "$table" "$table_out"
exit "$failed"
