#!/usr/bin/env bash
# waldump_kinds.sh: every record kind we write, read back by the real pg_waldump 15 (CTest
# waldump_kinds, label postgres; issue 30).
#
# Usage: waldump_kinds.sh PENUMBRA_BINARY SOURCE_DIR
#
# The kinds are the rows of src/format/rmgrlist.h, read from the file, so a kind added there
# without a scenario here fails. A few small scenarios (a script of every op, pgbench, tpcc,
# btree_dedup, vacuum) run under `compare --modes fpw,nofpw --wal-dir`, and for each mode:
#   1. pg_waldump --stats=record reads the files to their zeroed end ("invalid record length
#      ... wanted 24, got 0"), and its rows (type, count, record bytes, image bytes) are the
#      rows of our --json per-kind table under the names PostgreSQL 15 gives them, plus the
#      format's XLOG/CHECKPOINT_SHUTDOWN: a record with a wrong rmid or info shows up under
#      another name (Btree/DEDUP written as 0xD0 is Btree/REUSE_PAGE);
#   2. every record of a kind whose main data pg_waldump decodes has the description
#      PostgreSQL 15's layout gives (a pattern per type below), e.g. DEDUP's nintervals, a
#      split's level/firstrightoff/newitemoff/postingoff, a checkpoint's fpw flag; and the
#      script's FREEZE_PAGE and DEDUP have PostgreSQL 15's sizes, with and without an image;
#   3. every kind of rmgrlist.h but the excepted one was seen in some scenario, with a
#      nonzero count.
# Excepted: XLOG2/HINT_DELTA, Umbra l4's record under resource manager 22 (which PostgreSQL 15
# does not have), written only in umbra modes, whose slot-shift headers pg_waldump cannot read
# (docs/cli.md --wal-dir). CLOG/SET is a record PostgreSQL does not have (it does not log
# commit-status bits): it sits on an info value PostgreSQL 15's CLOG leaves free, so
# pg_waldump names it CLOG/UNKNOWN (info) rather than taking it for one of its own.
# PostgreSQL not found is a failure, not a skip: CI installs it (scripts/deps.sh).
set -euo pipefail

if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY SOURCE_DIR" >&2
	exit 2
fi
pn=$1 src=$2
pgbin=${PN_PGBIN:-/usr/lib/postgresql/15/bin}
waldump=$pgbin/pg_waldump
if [[ ! -x $waldump ]]; then
	echo "waldump_kinds.sh: $waldump not found: install postgresql-15 (scripts/deps.sh)" >&2
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/pn_kinds.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
	echo "FAIL: $*" >&2
	failed=1
}

# The kinds: "SYMBOL NAME INFO" per row of rmgrlist.h.
mapfile -t kinds < <(sed -nE \
	's/^PN_RECORD\(([A-Z0-9_]+), "([^"]+)", PN_RM_[A-Z0-9]+, (0x[0-9A-Fa-f]+),.*/\1 \2 \3/p' \
	"$src/src/format/rmgrlist.h")
if ((${#kinds[@]} < 20)); then
	fail "read ${#kinds[@]} kinds from rmgrlist.h"
	exit 1
fi
excepted=XLOG2_HINT_DELTA
ours_only=CLOG_SET # no PostgreSQL record: pg_waldump's UNKNOWN (info)

# pg_waldump's name of the kind NAME (our "Rmgr/TYPE") with symbol SYM and info INFO.
pg_name() {
	local sym=$1 name=$2 info=$3
	if [[ " $ours_only " == *" $sym "* ]]; then
		printf '%s/UNKNOWN (%x)\n' "${name%%/*}" "$((info))"
	else
		echo "$name"
	fi
}
declare -A pgname_of # our name -> pg_waldump's
for k in "${kinds[@]}"; do
	read -r sym name info <<<"$k"
	pgname_of[$name]=$(pg_name "$sym" "$name" "$info")
done

# What pg_waldump's description of each type must match (PostgreSQL 15's *desc.c wording
# over our main data); a type not listed needs only its name.
declare -A desc_of=(
	[Heap/INSERT]='^INSERT off [1-9][0-9]* flags 0x00'
	[Heap/INSERT+INIT]='^INSERT\+INIT off [1-9][0-9]* flags 0x00'
	[Heap/UPDATE]='^UPDATE off [1-9][0-9]* xmax [1-9][0-9]* flags 0x00 ; new off [1-9][0-9]* xmax 0'
	[Heap/UPDATE+INIT]='^UPDATE\+INIT off [1-9][0-9]* xmax [1-9][0-9]* flags 0x00 ; new off [1-9][0-9]* xmax 0'
	[Heap/HOT_UPDATE]='^HOT_UPDATE off [1-9][0-9]* xmax [1-9][0-9]* flags 0x[0-9A-F]{2} ; new off [1-9][0-9]* xmax 0'
	[Heap/LOCK]='^LOCK off [1-9][0-9]*: xid [1-9][0-9]*: flags 0x01 '
	[Heap/DELETE]='^DELETE off [1-9][0-9]* flags 0x00'
	[Heap2/PRUNE]='^PRUNE latestRemovedXid [1-9][0-9]* nredirected [0-9]+ ndead [0-9]+'
	[Heap2/FREEZE_PAGE]='^FREEZE_PAGE cutoff xid [1-9][0-9]* ntuples [1-9][0-9]*'
	[Heap2/VISIBLE]='^VISIBLE cutoff xid [0-9]+ flags 0x0[1-3]'
	[Btree/INSERT_LEAF]='^INSERT_LEAF off [1-9][0-9]*'
	[Btree/SPLIT_L]='^SPLIT_L level 0, firstrightoff [1-9][0-9]*, newitemoff [1-9][0-9]*, postingoff 0'
	[Btree/SPLIT_R]='^SPLIT_R level 0, firstrightoff [1-9][0-9]*, newitemoff [1-9][0-9]*, postingoff 0'
	[Btree/DEDUP]='^DEDUP nintervals [1-9][0-9]*'
	[Storage/TRUNCATE]='^TRUNCATE base/5/16384 to [0-9]+ blocks flags 7$'
	[Transaction/COMMIT]='^COMMIT 2000-01-01 '
	[Transaction/ABORT]='^ABORT 2000-01-01 '
	# with full_page_writes off PostgreSQL 15 still writes it, without the image (XLogSaveBufferForHint)
	[XLOG/FPI_FOR_HINT]='^FPI_FOR_HINT , blkref #0: rel 1663/5/16384 (fork main )?blk [0-9]+( FPW)?$'
)

# The scenarios, small enough for CI: 8 KiB pages (pg_waldump's BLCKSZ), 1 MiB segments.
scenario() { # NAME, the rest of the YAML on stdin
	{
		echo "name: kinds-$1"
		cat
	} >"$work/$1.yaml"
}
scenario script <<'EOF'
storage: {pages: 8, buffers: 4, wal_segment_size: 1MiB}
protocol: {mode: fpw, checksums: true}
checkpoint: {interval: 0s, max_wal_size: 0}
workload:
  kind: script
  script:
    - {op: update, page: 5}
    - {op: commit}
    - {op: hint, page: 2}
    - {op: vacuum, page: 3}
    - {op: dedup, page: 4}
    - {op: commit}
    - {op: update, page: 6}
    - {op: abort}
    - {op: checkpoint}
    - {op: slru_set, xid: 7}
    - {op: truncate, page: 4}
    - {op: update, page: 6}
    - {op: commit}
EOF
scenario pgbench <<'EOF'
storage: {pages: 2100, buffers: 256, wal_segment_size: 1MiB}
protocol: {mode: fpw}
checkpoint: {interval: 0s, every_transactions: 100, max_wal_size: 0}
workload: {kind: pgbench, scale: 1, clients: 4, transactions: 300}
EOF
scenario tpcc <<'EOF'
storage: {pages: 40000, buffers: 1024, wal_segment_size: 1MiB}
protocol: {mode: fpw}
checkpoint: {interval: 0s, every_transactions: 50, max_wal_size: 0}
workload: {kind: tpcc, warehouses: 1, clients: 4, transactions: 100}
EOF
scenario btree <<'EOF'
storage: {wal_segment_size: 1MiB}
protocol: {mode: fpw, checksums: true}
checkpoint: {interval: 0s, every_transactions: 5, max_wal_size: 0}
workload: {kind: btree_dedup, inserts: 4000, distinct_keys: 50, transactions: 20}
EOF
scenario vacuum <<'EOF'
storage: {buffers: 16, wal_segment_size: 1MiB}
protocol: {mode: fpw, checksums: true}
checkpoint: {interval: 0s, max_wal_size: 0}
workload: {kind: vacuum, rows: 1500}
EOF

# The rows of a --stats=record table: "TYPE|count|record bytes|image bytes", sorted.
pg_rows() {
	sed -nE 's/^([A-Za-z0-9]+\/[^ ]+( \([0-9a-f]+\))?) +([0-9]+) \([ 0-9.]+\) +([0-9]+) \([ 0-9.]+\) +([0-9]+) .*/\1|\3|\4|\5/p' |
		sort
}

declare -A seen # kind (our name) -> scenarios/modes where pg_waldump showed it
for s in script pgbench tpcc btree vacuum; do
	out=$work/out-$s
	if ! "$pn" compare "$work/$s.yaml" --modes fpw,nofpw --wal-dir "$out" \
		--json "$work/$s.json" >"$work/$s.out" 2>&1; then
		fail "$s: compare --wal-dir: $(tail -3 "$work/$s.out")"
		continue
	fi
	for m in fpw nofpw; do
		# ours, under pg_waldump's names, plus the format's shutdown checkpoint
		jq -r --arg m "$m" '.results[] | select(.mode == $m) | .records | to_entries[]
			| select(.value.count > 0)
			| "\(.key)|\(.value.count)|\(.value.record_bytes)|\(.value.fpi_bytes)"' \
			"$work/$s.json" >"$work/ours.raw"
		: >"$work/ours.rows"
		shutdown=0
		while IFS='|' read -r name count rec fpi; do
			if [[ $name == XLOG/CHECKPOINT_SHUTDOWN ]]; then
				shutdown=$count
				continue
			fi
			echo "${pgname_of[$name]:-$name}|$count|$rec|$fpi" >>"$work/ours.rows"
		done <"$work/ours.raw"
		echo "XLOG/CHECKPOINT_SHUTDOWN|$((shutdown + 1))|$((114 * (shutdown + 1)))|0" \
			>>"$work/ours.rows"
		sort -o "$work/ours.rows" "$work/ours.rows"
		{ "$waldump" -p "$out/$m" --start 0/100000 --stats=record 2>"$work/pg.err" ||
			true; } | pg_rows >"$work/pg.rows"
		grep -q 'invalid record length at .*: wanted 24, got 0' "$work/pg.err" ||
			fail "$s $m: pg_waldump did not read to the zeroed end: $(cat "$work/pg.err")"
		if ! cmp -s "$work/ours.rows" "$work/pg.rows"; then
			fail "$s $m: pg_waldump's rows (>) are not ours (<) under PostgreSQL 15's names"
			diff "$work/ours.rows" "$work/pg.rows" >&2 || true
		fi
		while IFS='|' read -r name count _; do
			[[ $count -gt 0 ]] && seen[$name]+=" $s/$m"
		done <"$work/pg.rows"

		# 2. descriptions, record by record
		"$waldump" -p "$out/$m" --start 0/100000 >"$work/pg.dump" 2>/dev/null || true
		for name in "${!desc_of[@]}"; do
			rmgr=${name%%/*}
			bad=$(awk -v rmgr="$rmgr" -v type="${name#*/}" '
				$2 == rmgr { d = $0; sub(/.*, desc: /, "", d)
					t = d; sub(/ .*/, "", t); if (t == type) print d }' "$work/pg.dump" |
				grep -Ev -- "${desc_of[$name]}" | head -1 || true)
			[[ -z $bad ]] ||
				fail "$s $m: a $name record pg_waldump describes as '$bad'"
		done
		# PostgreSQL 15's sizes of the records whose main data or block data it lays out
		# differently from 16 (the script's FREEZE_PAGE; the vacuum workload's is 16's):
		# FREEZE_PAGE 24 + 20 + 2 + 6 + 12 per tuple, or 24 + 25 + 2 + 6 with an image (the
		# tuples are block data, left out with it); DEDUP 24 + 20 + 2 + 2 + 4 per interval
		if [[ $s == script ]]; then
			bad=$(awk '/desc: (FREEZE_PAGE|DEDUP) / {
				rec = $0; sub(/.*len \(rec\/tot\): */, "", rec); sub(/\/.*/, "", rec)
				img = / FPW/ ? 1 : 0; n = $0; want = 0
				if ($0 ~ /FREEZE_PAGE/) {
					sub(/.*ntuples /, "", n); n += 0; want = img ? 57 : 52 + 12 * n
				} else {
					sub(/.*nintervals /, "", n); n += 0; want = img ? 53 : 48 + 4 * n
				}
				if (rec + 0 != want) print rec " B where PostgreSQL 15 writes " want ": " $0 }' \
				"$work/pg.dump" | head -1)
			[[ -z $bad ]] || fail "$s $m: $bad"
		fi
		fpw_flag=true
		[[ $m == nofpw ]] && fpw_flag=false
		if grep 'desc: CHECKPOINT_ONLINE ' "$work/pg.dump" | grep -vq "; fpw $fpw_flag;"; then
			fail "$s $m: a CHECKPOINT_ONLINE record without 'fpw $fpw_flag'"
		fi
	done
done

# 3. every kind of the table, seen
for k in "${kinds[@]}"; do
	read -r sym name info <<<"$k"
	[[ " $excepted " == *" $sym "* ]] && continue
	pgn=${pgname_of[$name]}
	if [[ -z ${seen[$pgn]:-} ]]; then
		fail "kind $sym ($name, info $info): no scenario here wrote one that pg_waldump read as $pgn"
	else
		echo "ok   $sym: pg_waldump reads $pgn in${seen[$pgn]}"
	fi
done
exit "$failed"
