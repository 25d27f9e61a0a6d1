#!/usr/bin/env bash
# import_versions.sh: `penumbra import` of PostgreSQL 15, 16 and 17 WAL, the version taken
# from the page magic (CTest import_versions, label cli; issue 30). tests/walgen.c builds each
# segment: the same records under XLOG_PAGE_MAGIC D110, D113 or D116, and a record of a type
# only some versions have. Asserts:
#   1. for each version, --stats and --out read it; import prints `postgres: V (WAL page magic
#      M)`, the scenario says `postgres: V`, and it runs;
#   2. 17's record types are named as its pg_waldump names them (XLOG/CHECKPOINT_REDO,
#      Heap2/PRUNE_VACUUM_SCAN) and converted; 15's and 16's Heap2 info 20 is VACUUM;
#   3. a record of a type the WAL's version does not have (XLOG info E0 under 15 or 16) is
#      listed by --stats as pg_waldump lists it (XLOG/UNKNOWN (e0)) and refused by --out,
#      exit 2, with its segment, offset, LSN and the reason;
#   4. a segment of another version's magic (14's D10D) is refused, exit 2, naming it.
# Only the magic and the record types are PostgreSQL 16's and 17's here: the facts come
# from their source (docs/cli.md, import); Debian's postgresql-15 is the only server run.
# Usage: import_versions.sh PENUMBRA_BINARY WALGEN_BINARY
set -euo pipefail

if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY WALGEN_BINARY" >&2
	exit 2
fi
pn=$1 gen=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/pn_impver.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
	echo "FAIL: $*" >&2
	failed=1
}
declare -A magic=([15]=D110 [16]=D113 [17]=D116)

# wal V CASE: builds $work/V-CASE, prints the case record's LSN
wal() {
	mkdir -p "$work/$1-$2"
	"$gen" "$work/$1-$2" "$2" "$1"
}
# run_rc OUT ERR COMMAND...: the exit status, never stopping the script
run_rc() {
	local out=$1 err=$2
	shift 2
	if "$@" >"$out" 2>"$err"; then echo 0; else echo $?; fi
}

# 1. every version reads and converts
for v in 15 16 17; do
	d=$work/$v-ok
	wal "$v" ok >/dev/null || { fail "walgen ok $v"; continue; }
	rc=$(run_rc "$d.stats" "$d.err" "$pn" import "$d" --stats)
	[[ $rc == 0 ]] && grep -q '^Heap/INSERT ' "$d.stats" || fail "$v: --stats exit $rc: $(cat "$d.err")"
	rc=$(run_rc "$d.out" "$d.err" "$pn" import "$d" --out "$d/s.yaml")
	[[ $rc == 0 ]] || fail "$v: --out exit $rc: $(cat "$d.err")"
	grep -q "^postgres: $v (WAL page magic ${magic[$v]})$" "$d.out" ||
		fail "$v: import does not print 'postgres: $v (WAL page magic ${magic[$v]})': $(head -1 "$d.out")"
	grep -q "^postgres: $v$" "$d/s.yaml" 2>/dev/null || fail "$v: the scenario does not say 'postgres: $v'"
	rc=$(run_rc /dev/null "$d.err" "$pn" run "$d/s.yaml")
	[[ $rc == 0 ]] || fail "$v: run of the imported scenario exit $rc: $(cat "$d.err")"
done

# 2. 17's types by name; 15's and 16's Heap2 info 20
for c in checkpoint-redo prune-vacuum-scan; do
	d=$work/17-$c
	wal 17 "$c" >/dev/null || { fail "walgen $c 17"; continue; }
	rc=$(run_rc "$d.stats" "$d.err" "$pn" import "$d" --stats)
	name=$([[ $c == checkpoint-redo ]] && echo XLOG/CHECKPOINT_REDO || echo Heap2/PRUNE_VACUUM_SCAN)
	[[ $rc == 0 ]] && grep -q "^$name " "$d.stats" || fail "17 $c: --stats exit $rc, no row $name"
	rc=$(run_rc /dev/null "$d.err" "$pn" import "$d" --out "$d/s.yaml")
	[[ $rc == 0 ]] || fail "17 $c: --out exit $rc: $(cat "$d.err")"
done
for v in 15 16; do
	d=$work/$v-prune-vacuum-scan
	wal "$v" prune-vacuum-scan >/dev/null || { fail "walgen prune $v"; continue; }
	"$pn" import "$d" --stats 2>/dev/null | grep -q '^Heap2/VACUUM ' || fail "$v: Heap2 info 20 is not VACUUM"
done

# 3. a type the version does not have
for v in 15 16; do
	d=$work/$v-checkpoint-redo
	lsn=$(wal "$v" checkpoint-redo) || { fail "walgen redo $v"; continue; }
	"$pn" import "$d" --stats 2>/dev/null | grep -q '^XLOG/UNKNOWN (e0) ' ||
		fail "$v: --stats does not list XLOG/UNKNOWN (e0)"
	rc=$(run_rc /dev/null "$d.err" "$pn" import "$d" --out "$d/s.yaml")
	want="000000010000000000000001, offset [0-9]*: record at $lsn: XLOG record type E0, which PostgreSQL $v does not have"
	[[ $rc == 2 ]] && grep -q "$want" "$d.err" && [[ ! -e $d/s.yaml ]] ||
		fail "$v: XLOG info E0: --out exit $rc, '$(cat "$d.err")', expected 2 and '$want'"
done

# 4. PostgreSQL 14's magic
d=$work/14
wal 15 ok >/dev/null && mkdir -p "$d" && cp "$work/15-ok/000000010000000000000001" "$d/"
printf '\x0d\xd1' | dd of="$d/000000010000000000000001" bs=1 conv=notrunc status=none
rc=$(run_rc /dev/null "$d.err" "$pn" import "$d" --stats)
[[ $rc == 2 ]] && grep -q "000000010000000000000001: not a PostgreSQL 15, 16 or 17 WAL segment (magic D10D" "$d.err" ||
	fail "14's magic: exit $rc, $(cat "$d.err")"

exit "$failed"
