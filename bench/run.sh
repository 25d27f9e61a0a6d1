#!/usr/bin/env bash
# run.sh: the simulator's speed and memory (issue 12): transactions per wall second and peak
# resident set of `penumbra run SCENARIO` for the current binary and a reference commit's,
# side by side from one run, with their ratios, and the sizes the memory should be near (the
# device's data image, the WAL recovery can need, the buffer pool). Not a test: timings are
# the machine's. Usage:
#   bench/run.sh [NEW_BINARY [REF_COMMIT [ROUNDS [SCENARIO]]]]
# NEW_BINARY defaults to build-release/penumbra (built first if absent); REF_COMMIT to
# PN_BENCH_REF or 854e4f4, built as Release in a temporary git worktree under a mktemp
# directory (removed at the end; set PN_BENCH_REF_BIN to reuse a binary already built).
# SCENARIO defaults to scenarios/results/pgbench-scale10.yaml. The binaries run in turn,
# ROUNDS times each (default 3), so that a shared machine weighs on both alike; the best
# round (least wall seconds) gives transactions/s, the largest "Maximum resident set size"
# of /usr/bin/time the memory. The two runs' metrics must agree (same transactions, WAL
# bytes and events); a line says so if not.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
new=${1:-$here/build-release/penumbra}
ref_commit=${2:-${PN_BENCH_REF:-854e4f4}}
rounds=${3:-3}
scenario=${4:-$here/scenarios/results/pgbench-scale10.yaml}
[[ -x /usr/bin/time ]] || {
	echo "$0: needs /usr/bin/time (Debian package time)" >&2
	exit 2
}
. "$here/bench/lib.sh"
pn_bench_tmp run
pn_bench_new_ref "$ref_commit"
echo "$(pn_bench_machine); new $(
	git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet HEAD || echo +)," \
	"ref $ref_commit; $(basename "$scenario"), best of $rounds"
TIMEFORMAT='%3R %3U %3S'
# one run: prints "wall_s user_s sys_s max_rss_kb transactions wal_bytes checkpoints events"
one() {
	local t
	t=$({ time /usr/bin/time -f '%M' -o "$tmp/rss" "$1" run "$scenario" \
		--json "$tmp/out.json" >"$tmp/out.txt" 2>&1; } 2>&1)
	local ev
	ev=$(awk '/^events simulated/ { print $3 }' "$tmp/out.txt")
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"][0]
print(*sys.argv[2:5], sys.argv[5], r["transactions"], r["wal_bytes"], r["checkpoints"], sys.argv[6])' \
		"$tmp/out.json" $t "$(tail -1 "$tmp/rss")" "${ev:-0}"
}
best_n=1e9 best_r=1e9 rss_n=0 rss_r=0
for ((k = 1; k <= rounds; k++)); do
	read -r wn un sn mn tn wbn cpn evn < <(one "$new")
	read -r wr ur sr mr tr wbr cpr evr < <(one "$ref")
	if awk -v a="$wn" -v b="$best_n" 'BEGIN { exit !(a < b) }'; then
		best_n=$wn cpu_n=$(awk -v u="$un" -v s="$sn" 'BEGIN { print u + s }')
	fi
	if awk -v a="$wr" -v b="$best_r" 'BEGIN { exit !(a < b) }'; then
		best_r=$wr cpu_r=$(awk -v u="$ur" -v s="$sr" 'BEGIN { print u + s }')
	fi
	((mn > rss_n)) && rss_n=$mn
	((mr > rss_r)) && rss_r=$mr
done
[[ "$tn $wbn $evn" == "$tr $wbr $evr" ]] ||
	echo "note: the runs differ: new $tn tx, $wbn WAL bytes, $evn events;" \
		"ref $tr tx, $wbr WAL bytes, $evr events"
printf '%-24s %14s %14s %8s\n' "" "$ref_commit" new ratio
awk -v tn="$tn" -v tr="$tr" -v wn="$best_n" -v wr="$best_r" -v cn="$cpu_n" -v cr="$cpu_r" \
	-v mn="$rss_n" -v mr="$rss_r" -v en="$evn" 'BEGIN {
	wn = wn < 0.001 ? 0.001 : wn; wr = wr < 0.001 ? 0.001 : wr
	printf "%-24s %14.3f %14.3f %7.2fx\n", "wall seconds", wr, wn, wr / wn
	printf "%-24s %14.3f %14.3f %7.2fx\n", "CPU seconds", cr, cn, cr / (cn < 0.001 ? 0.001 : cn)
	printf "%-24s %14.0f %14.0f %7.2fx\n", "transactions / wall s", tr / wr, tn / wn,
	       (tn / wn) / (tr / wr)
	printf "%-24s %14.0f %14.0f %7.2fx\n", "events / wall s", en / wr, en / wn, wr / wn
	printf "%-24s %14.0f %14.0f %7.2fx\n", "peak RSS (KiB)", mr, mn, mn / mr }'
# the floor: the data file image (pages + the two control pages), the WAL recovery can need
# (with no checkpoint after the start, all of it), the buffer pool's frames
field() { grep -o "$1: *[0-9]*" "$scenario" | head -1 | grep -o '[0-9]*$'; }
pages=$(field pages) buffers=$(field buffers)
awk -v p="${pages:-0}" -v b="${buffers:-0}" -v w="$wbn" -v c="$cpn" -v m="$rss_n" 'BEGIN {
	img = (p + 2) * 8; wal = w / 1024; pool = b * 8
	printf "device data image %.0f KiB (%d pages), WAL %.0f KiB (%d checkpoints: %s),\n",
	       img, p, wal, c, c == 0 ? "recovery needs all of it" : "recovery needs less"
	printf "buffer pool %.0f KiB (%d frames); sum %.0f KiB, new peak RSS %.2fx of it\n",
	       pool, b, img + wal + pool, m / (img + wal + pool) }'
