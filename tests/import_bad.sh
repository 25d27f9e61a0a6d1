#!/usr/bin/env bash
# import_bad.sh: `penumbra import` on WAL it must refuse, and the import workload on traces
# a user edited (CTest import_bad, label input).
#
# Usage: import_bad.sh PENUMBRA WALGEN CASES
#
# 1. Each case of CASES (tests/bad/import/cases: a record whose CRC is right but that does
#    not fit its page or its range, built by WALGEN): `import SEG --stats` and `import SEG
#    --out S.yaml` exit 2 (--stats 0 for a case only the conversion reads), the message
#    names the segment file, the offset and the LSN ("SEG, offset N: record at X/Y: ") and
#    says what was expected; no scenario is written.
# 2. One end-of-range rule: on a truncated segment (of `run --wal-dir`'s WAL, cut inside a
#    record) and on a record with a wrong CRC, --stats
#    and --out with --to past the end both exit 2 with the same stderr (the reason, the LSN,
#    "the WAL ends before --to"), no scenario written; without --to both exit 0.
# 3. The valid WAL (images compressed with pglz, lz4 and zstd among its records) converts,
#    and runs; each edited trace (a bad line or header line, a record that does not fit its page, a cut
#    line) is refused by run with exit 2 and "TRACE:LINE: ", never a signal.
# Prints one line per failure, then "N checks, M failed"; exits 1 when any failed.
set -u
(($# == 3)) || { echo "usage: $0 PENUMBRA WALGEN CASES" >&2; exit 2; }
pn=$1 gen=$2 cases=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checks=0 failed=0
seg_name=000000010000000000000001

fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
check() { checks=$((checks + 1)); }

# expect_import STATUS NAME ARGS...: penumbra import ARGS exits STATUS; its stderr is in
# $work/err, stdout in $work/out.
expect_import() {
	local want=$1 name=$2 status
	shift 2
	check
	timeout 60 "$pn" import "$@" >"$work/out" 2>"$work/err"
	status=$?
	[[ $status -eq $want ]] || fail "$name: import $* exited $status, expected $want: $(head -c 300 "$work/err")"
}

# 1. the cases
while read -r name paths expect; do
	[[ -z $name || $name == \#* ]] && continue
	dir=$work/$name
	mkdir -p "$dir"
	lsn=$("$gen" "$dir" "$name") || { fail "$name: walgen failed"; continue; }
	seg=$dir/$seg_name
	off=$((16#${lsn#*/} - 0x100000))
	where="$seg, offset $off: record at $lsn: "
	stats_status=2
	[[ $paths == out ]] && stats_status=0
	expect_import "$stats_status" "$name --stats" "$seg" --stats
	if [[ $stats_status -eq 2 ]]; then
		check
		grep -qF -- "penumbra import: $where" "$work/err" && grep -qF -- "$expect" "$work/err" ||
			fail "$name --stats: stderr lacks '$where' or '$expect': $(cat "$work/err")"
	fi
	for to in "" 0/1F0000; do
		expect_import 2 "$name --out${to:+ --to $to}" "$seg" --out "$dir/s.yaml" ${to:+--to "$to"}
		check
		grep -qF -- "penumbra import: $where" "$work/err" && grep -qF -- "$expect" "$work/err" ||
			fail "$name --out: stderr lacks '$where' or '$expect': $(cat "$work/err")"
		check
		[[ ! -e $dir/s.yaml && ! -e $dir/s.trace ]] || fail "$name --out: a scenario was written"
	done
done <"$cases"

# 2. one end-of-range rule
ok=$work/ok
mkdir -p "$ok"
"$gen" "$ok" ok >/dev/null || fail "walgen ok"
cut=$work/cut
crc=$work/crc
mkdir -p "$cut" "$crc"
# a real WAL of many pages (run --wal-dir), its first segment cut inside a record
cat >"$work/pgb.yaml" <<'EOF2'
name: pgb
storage: {pages: 2100, buffers: 64, wal_segment_size: 1MiB}
protocol: {mode: fpw}
checkpoint: {interval: 0s, every_transactions: 50, max_wal_size: 0}
workload: {kind: pgbench, scale: 1, clients: 2, transactions: 100}
EOF2
timeout 120 "$pn" run "$work/pgb.yaml" --wal-dir "$work/real" >/dev/null 2>&1 || fail "run --wal-dir"
head -c 20000 "$work/real/$seg_name" >"$cut/$seg_name"
cp "$ok/$seg_name" "$crc/$seg_name"
lsn=$("$gen" "$work" ok)
off=$((16#${lsn#*/} - 0x100000 + 30)) # a byte of the ok record's block data
printf '\xA5' | dd of="$crc/$seg_name" bs=1 seek="$off" conv=notrunc status=none
for d in "$cut" "$crc"; do
	what=${d##*/}
	expect_import 2 "$what --stats --to" "$d" --stats --to 0/1F0000
	mv "$work/err" "$work/err.stats"
	expect_import 2 "$what --out --to" "$d" --out "$d/s.yaml" --to 0/1F0000
	check
	cmp -s "$work/err" "$work/err.stats" ||
		fail "$what: --stats and --out say different things: $(cat "$work/err.stats") / $(cat "$work/err")"
	check
	grep -q '^penumbra import: end of WAL at 0/[0-9A-F]*: .' "$work/err" &&
		grep -q '^penumbra import: the WAL ends before --to 0/1F0000$' "$work/err" ||
		fail "$what --to: stderr lacks the end's LSN and reason: $(cat "$work/err")"
	check
	[[ ! -e $d/s.yaml && ! -e $d/s.trace ]] || fail "$what --out --to: a scenario was written"
	expect_import 0 "$what --stats" "$d" --stats
	expect_import 0 "$what --out" "$d" --out "$d/s.yaml"
done
check
grep -q 'incorrect resource manager data checksum in record at' "$work/err" ||
	fail "crc: the end is not the checksum: $(cat "$work/err")"
check
"$pn" import "$cut" --stats 2>&1 >/dev/null | grep -q "could not read from file \"$cut/$seg_name\", offset 16384: short read" ||
	fail "cut: the end is not the cut"

# 3. the valid WAL runs; edited traces are refused
expect_import 0 "ok --stats" "$ok" --stats
check
grep -q '^Heap/INSERT  *6 ' "$work/out" || fail "ok --stats: not 6 heap inserts: $(cat "$work/out")"
expect_import 0 "ok --out" "$ok" --out "$ok/s.yaml"
[[ -s $ok/s.trace ]] || { echo "FAIL: the valid WAL does not convert: $(cat "$work/err")"; exit 1; }
check
timeout 60 "$pn" run "$ok/s.yaml" >/dev/null 2>"$work/err" || fail "run of the ok import: $(cat "$work/err")"
trace=$ok/s.trace
n=$(grep -n '^R ' "$trace" | head -n 1 | cut -d: -f1)
edit() { # edit NAME LINE_NUMBER TEXT [YAML_SED]: a copy of the import with line N replaced
	local d=$work/edit-$1
	mkdir -p "$d"
	awk -v n="$2" -v text="$3" 'NR == n { print text; next } { print }' "$trace" >"$d/s.trace"
	sed "${4:-s/^//}" "$ok/s.yaml" >"$d/s.yaml"
}
edit bad-kind "$n" 'R 10 0 3 1 0 x 60 0 0'
edit upper-past-page "$n" 'R 10 0 3 1 0 n 60 24 9000'
edit lower-above-upper "$n" 'R 10 0 3 1 0 n 60 500 400'
edit lower-in-header "$n" 'R 10 0 3 1 0 n 60 8 400'
edit page-past-map "$n" 'R 10 0 3 1 99999 n 60 0 0'
edit same-page-twice "$n" 'R 10 0 3 2 0 n 60 0 0 0 n 60 0 0'
edit short-record "$n" 'R 10 0 3 1 0 n'
edit trailing-words "$n" 'R 10 0 3 0 and more'
edit unknown-line "$n" 'Z'
edit blank-line "$n" ''
edit small-pages "$n" 'R 10 0 3 1 0 n 60 24 8000' 's/page_size: 8192/page_size: 4096/'
for d in "$work"/edit-*; do
	check
	timeout 60 "$pn" run "$d/s.yaml" >/dev/null 2>"$work/err"
	status=$?
	first=$(head -n 1 "$work/err")
	[[ $status -eq 2 && $first == *"$d/s.trace:$n: "* ]] ||
		fail "${d##*/}: run exited $status, expected 2 with '$d/s.trace:$n: ': $first"
done
for hdr in 1:penumbra-import-trace-1 1:'penumbra-import-trace 2' 2:'pages' 2:'K'; do
	check
	d=$work/edit-header-${hdr%%:*}
	rm -rf "$d"
	mkdir -p "$d"
	awk -v n="${hdr%%:*}" -v text="${hdr#*:}" 'NR == n { print text; next } { print }' "$trace" >"$d/s.trace"
	cp "$ok/s.yaml" "$d/s.yaml"
	timeout 60 "$pn" run "$d/s.yaml" >/dev/null 2>"$work/err"
	status=$?
	[[ $status -eq 2 && $(head -n 1 "$work/err") == *"$d/s.trace:${hdr%%:*}: expected "* ]] ||
		fail "header line '${hdr#*:}': run exited $status, expected 2 with '$d/s.trace:${hdr%%:*}: expected': $(head -n 1 "$work/err")"
done
check # a trace cut inside its last line
d=$work/edit-cut
mkdir -p "$d"
head -c -6 "$trace" >"$d/s.trace"
last=$(($(wc -l <"$d/s.trace") + 1))
cp "$ok/s.yaml" "$d/s.yaml"
timeout 60 "$pn" run "$d/s.yaml" >/dev/null 2>"$work/err"
status=$?
tail -n 1 "$d/s.trace" | grep -q '^[KC]$' && fail "edit-cut: the cut left a whole line"
[[ $status -eq 2 && $(head -n 1 "$work/err") == *"$d/s.trace:$last: "* ]] ||
	fail "edit-cut: run exited $status, expected 2 with '$d/s.trace:$last: ': $(head -n 1 "$work/err")"

echo "$checks checks, $failed failed"
((failed == 0))
