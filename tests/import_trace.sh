#!/usr/bin/env bash
# import_trace.sh: the `import` workload's replay of hand-written traces (CTest import_trace,
# label cli; issue 30). The trace format is src/workload/wl_import.c's header. Asserts:
#   1. a transaction longer than the in-memory WAL ring (20,000 records, one commit) gets
#      the one checkpoint its trace asks for (K), no other: the ring is written out, not
#      checkpointed (backend.c, wal.c W5);
#   2. a block of kind u (REGBUF_NO_IMAGE: Heap2/VISIBLE's heap page when hints are not
#      logged) is never imaged, while kind n's first change after the checkpoint is;
#   3. a replayed block carries PostgreSQL's data size: a Heap2/VISIBLE without an image
#      (two blocks, no block data, 5 bytes of main data) is 59 bytes, as in PostgreSQL;
#   4. an XLOG/FPI_FOR_HINT image leaves out the hole PostgreSQL's image showed (pd_lower
#      40, pd_upper 8000: 232 bytes);
#   5. the F line (--from, after the records replayed from the checkpoint before it): the
#      run's WAL figures (bytes, records, images, the record table) are those of the
#      records after it alone; a second F line is refused as TRACE:LINE, exit 2.
# Usage: import_trace.sh PENUMBRA_BINARY
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 PENUMBRA_BINARY" >&2
	exit 2
fi
pn=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/pn_imptrace.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
	echo "FAIL: $*" >&2
	failed=1
}

# scenario NAME PAGES [CHECKSUMS]: NAME.yaml replaying NAME.trace in fpw
scenario() {
	cat >"$work/$1.yaml" <<EOF2
name: $1
storage: {pages: $2, page_size: 8192, buffers: $2, wal_segment_size: 1MiB}
protocol: {mode: fpw, checksums: ${3:-false}}
checkpoint: {interval: 0s, every_transactions: 0, max_wal_size: 0}
workload: {kind: import, clients: 1, transactions: 1, trace: $1.trace}
EOF2
}
# metric NAME KEY: that metric of `run NAME.yaml` in fpw
metric() {
	"$pn" run "$work/$1.yaml" --json - 2>/dev/null | jq ".results[0].$2"
}

# 1. a long transaction: 20,000 Heap/INSERTs on 64 pages after one K, then one commit
{
	printf 'penumbra-import-trace 1\npages 64\nK\n'
	for ((i = 0; i < 20000; i++)); do
		echo "R 10 0 3 1 $((i % 64)) n 60 0 0"
	done
	echo C
} >"$work/long.trace"
scenario long 64
got=$(metric long checkpoints)
[[ $got == 1 ]] || fail "a long transaction: $got checkpoints, the trace's 1"
got=$(metric long fpi_count)
[[ $got == 64 ]] || fail "a long transaction: $got images, one per page (64)"

# 2. Heap2/VISIBLE on 8 pages: block 0 the VM page (n), block 1 the heap page (u)
{
	printf 'penumbra-import-trace 1\npages 9\nK\n'
	for ((i = 1; i < 9; i++)); do
		echo "R 9 64 5 2 0 n 0 0 0 $i u 0 0 0"
	done
	echo C
} >"$work/visible.trace"
scenario visible 9
got=$(metric visible fpi_count)
[[ $got == 1 ]] || fail "VISIBLE's no-image heap pages: $got images, the VM page's 1"

# 3. one VISIBLE more, on a page whose VM block is imaged already: 59 bytes more
{
	head -n -1 "$work/visible.trace" | sed "s/^pages 9$/pages 10/"
	echo "R 9 64 5 2 0 n 0 0 0 9 u 0 0 0"
	echo C
} >"$work/visible10.trace"
scenario visible10 10
a=$(metric visible wal_bytes) b=$(metric visible10 wal_bytes)
[[ $((b - a)) == 59 ]] || fail "a Heap2/VISIBLE without images: $((b - a)) B, PostgreSQL's 59"

# 4. a hint image with checksums
printf 'penumbra-import-trace 1\npages 4\nK\nR 0 160 0 1 2 h 0 40 8000\nC\n' >"$work/hint.trace"
scenario hint 4 true
got=$(metric hint fpi_bytes)
[[ $got == 232 ]] || fail "an FPI_FOR_HINT image: $got B, PostgreSQL's 232 (8192 - its hole)"

# 5. two Heap/INSERTs before F (pages 0, 1 imaged), then one on page 1 (imaged already) and
# one on page 2 (its first change: imaged) after it, then the commit
printf 'penumbra-import-trace 1\npages 4\nK\nR 10 0 3 1 0 n 60 0 0\nR 10 0 3 1 1 n 60 0 0\nF\nR 10 0 3 1 1 n 60 0 0\nR 10 0 3 1 2 n 60 0 0\nC\n' \
	>"$work/from.trace"
scenario from 4
got=$("$pn" run "$work/from.yaml" --json - 2>/dev/null |
	jq -c '.results[0] | [.wal_records, .fpi_count, .records["Imported/RECORD"].count,
		.records["XLOG/CHECKPOINT_ONLINE"].count]' || true)
[[ $got == '[3,1,2,0]' ]] ||
	fail "after F: [records, images, imported, checkpoint records] $got, expected [3,1,2,0]"
sed 's/^pages 4$/pages 2/; /^R .* 2 n/d' "$work/from.trace" >"$work/from1.trace"
scenario from1 4
a=$("$pn" run "$work/from.yaml" --json - 2>/dev/null | jq '.results[0].wal_bytes' || true)
b=$("$pn" run "$work/from1.yaml" --json - 2>/dev/null | jq '.results[0].wal_bytes' || true)
[[ $a =~ ^[0-9]+$ && $b =~ ^[0-9]+$ && $a -gt $b && $((b - 34)) -lt 200 ]] ||
	fail "after F: $b B for one imaged-already INSERT and a commit, $a B with an image more"
echo F >>"$work/from.trace"
if "$pn" run "$work/from.yaml" >/dev/null 2>"$work/err"; then rc=0; else rc=$?; fi
[[ $rc == 2 ]] && grep -q "from.trace:10: a second F line" "$work/err" ||
	fail "a second F line: exit $rc, $(cat "$work/err")"

exit "$failed"
