#!/usr/bin/env bash
# run.sh: the simulator's speed and memory (issue 12): transactions per wall second and peak
# resident set of `penumbra run SCENARIO` for the current binary and one or more reference
# commits', side by side from one run, with their ratios, and the sizes the memory should be
# near (the device's data image and the buffer pool; the WAL, which a single run does not
# keep (sim/device.h DV7), but recovery would need). Not a test:
# timings are the machine's. Usage:
#   bench/run.sh [NEW_BINARY [REF_COMMITS [ROUNDS [SCENARIO]]]]
# NEW_BINARY defaults to build-release/penumbra (built first if absent); REF_COMMITS, a
# comma-separated list, to PN_BENCH_REF or 854e4f4, each built as Release in a temporary git
# worktree under a mktemp directory (removed at the end; PN_BENCH_REF_BIN, a comma-separated
# list of binaries in the same order, reuses binaries already built). The ratios are the new
# binary's against each reference's. SCENARIO defaults to
# scenarios/results/pgbench-scale10.yaml. The binaries run in turn, ROUNDS times each
# (default 3), so that a shared machine weighs on all alike; the best round (least wall
# seconds) gives transactions/s, the largest "Maximum resident set size" of /usr/bin/time the
# memory. The runs' metrics must agree (same transactions, WAL bytes and events); a line says
# so if not.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
new=${1:-$here/build-release/penumbra}
refs=${2:-${PN_BENCH_REF:-854e4f4}}
rounds=${3:-3}
scenario=${4:-$here/scenarios/results/pgbench-scale10.yaml}
[[ -x /usr/bin/time ]] || {
	echo "$0: needs /usr/bin/time (Debian package time)" >&2
	exit 2
}
. "$here/bench/lib.sh"
pn_bench_tmp run
pn_bench_build_new || exit 2
IFS=, read -r -a names <<<"$refs"
IFS=, read -r -a given <<<"${PN_BENCH_REF_BIN:-}"
bins=()
cleanup() { # every reference worktree, then lib.sh's cleanup
	for ((i = 0; i < ${#names[@]}; i++)); do
		[[ -d $tmp/ref-src-$i ]] && git -C "$here" worktree remove --force "$tmp/ref-src-$i" \
			>/dev/null 2>&1
	done
	pn_bench_cleanup
}
trap cleanup EXIT
for ((i = 0; i < ${#names[@]}; i++)); do
	if [[ -n ${given[i]:-} ]]; then
		bins+=("${given[i]}")
		continue
	fi
	echo "building ${names[i]} (Release) in a temporary worktree..." >&2
	git -C "$here" worktree add --detach "$tmp/ref-src-$i" "${names[i]}" >/dev/null 2>&1 &&
		cmake -S "$tmp/ref-src-$i" -B "$tmp/ref-build-$i" -DCMAKE_BUILD_TYPE=Release \
			>/dev/null &&
		cmake --build "$tmp/ref-build-$i" -j2 --target penumbra >/dev/null || {
		echo "$0: cannot build ${names[i]}" >&2
		exit 2
	}
	bins+=("$tmp/ref-build-$i/penumbra")
done
names+=(new)
bins+=("$new")
echo "$(pn_bench_machine); new $(
	git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet HEAD || echo +)," \
	"refs $refs; $(basename "$scenario"), best of $rounds"
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
n=${#bins[@]}
declare -a best cpu rss metrics
for ((i = 0; i < n; i++)); do best[i]=1e9 cpu[i]=0 rss[i]=0; done
for ((k = 1; k <= rounds; k++)); do
	for ((i = 0; i < n; i++)); do
		read -r w u s m t wb cp ev < <(one "${bins[i]}")
		if awk -v a="$w" -v b="${best[i]}" 'BEGIN { exit !(a < b) }'; then
			best[i]=$w cpu[i]=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
		fi
		((m > rss[i])) && rss[i]=$m
		metrics[i]="$t $wb $ev"
		[[ ${names[i]} == new ]] && tn=$t wbn=$wb cpn=$cp
	done
done
for ((i = 0; i + 1 < n; i++)); do
	[[ ${metrics[i]} == "${metrics[n - 1]}" ]] ||
		echo "note: the runs differ (transactions, WAL bytes, events): new ${metrics[n - 1]};" \
			"${names[i]} ${metrics[i]}"
done
# one table row: LABEL FORMAT then a value per binary, then new's ratio to each reference
row() {
	local label=$1 fmt=$2 inv=$3
	shift 3
	awk -v label="$label" -v fmt="$fmt" -v inv="$inv" -v vals="$*" 'BEGIN {
		k = split(vals, v, " "); printf "%-24s", label
		for (i = 1; i <= k; i++) printf " %14" fmt, v[i]
		for (i = 1; i < k; i++) {
			a = v[k] < 0.001 ? 0.001 : v[k]; b = v[i] < 0.001 ? 0.001 : v[i]
			printf " %9.2fx", inv ? b / a : a / b
		}
		printf "\n" }'
}
hdr=$(printf '%-24s' "")
for ((i = 0; i < n; i++)); do hdr+=$(printf ' %14s' "${names[i]}"); done
for ((i = 0; i + 1 < n; i++)); do hdr+=$(printf ' %10s' "/${names[i]}"); done
echo "$hdr"
walls=() cpus=() tps=() eps=() rsss=()
for ((i = 0; i < n; i++)); do
	w=$(awk -v w="${best[i]}" 'BEGIN { print w < 0.001 ? 0.001 : w }')
	read -r t _ ev <<<"${metrics[i]}"
	walls+=("$w") cpus+=("${cpu[i]}") rsss+=("${rss[i]}")
	tps+=("$(awk -v t="$t" -v w="$w" 'BEGIN { printf "%.0f", t / w }')")
	eps+=("$(awk -v e="$ev" -v w="$w" 'BEGIN { printf "%.0f", e / w }')")
done
row "wall seconds" .3f 1 "${walls[@]}"
row "CPU seconds" .3f 1 "${cpus[@]}"
row "transactions / wall s" .0f 0 "${tps[@]}"
row "events / wall s" .0f 0 "${eps[@]}"
row "peak RSS (KiB)" .0f 0 "${rsss[@]}"
# the floor: the data file image (pages + the two control pages), the WAL recovery can need
# (with no checkpoint after the start, all of it), the buffer pool's frames
field() { grep -o "$1: *[0-9]*" "$scenario" | head -1 | grep -o '[0-9]*$'; }
pages=$(field pages) buffers=$(field buffers)
awk -v p="${pages:-0}" -v b="${buffers:-0}" -v w="$wbn" -v c="$cpn" -v m="${rss[n - 1]}" 'BEGIN {
	img = (p + 2) * 8; wal = w / 1024; pool = b * 8
	printf "device data image %.0f KiB (%d pages), WAL %.0f KiB (%d checkpoints: %s;\n",
	       img, p, wal, c, c == 0 ? "recovery would need all of it" : "recovery needs less"
	printf "a single run keeps none of it, sim/device.h DV7), buffer pool %.0f KiB (%d frames);\n",
	       pool, b
	printf "image + pool %.0f KiB, new peak RSS %.2fx of it; with the WAL %.0f KiB, %.2fx\n",
	       img + pool, m / (img + pool), img + wal + pool, m / (img + wal + pool) }'
: "${tn:?}"
