#!/usr/bin/env bash
# jobs.sh: crash states per second of one big scenario at `check --jobs 1` and `--jobs N`,
# side by side from one run (docs/checker.md section 12). Not a test: timings are the
# machine's. Usage: bench/jobs.sh PENUMBRA_BINARY [N [SCENARIO [CHECK_ARG...]]]
# (default N 2, SCENARIO bench/jobs-big.yaml). Prints, for each, the wall seconds, the CPU
# seconds of the process and its children, the crash states and distinct states recovered,
# and both per wall second; then the speedup and the CPU the units cost beyond --jobs 1
# (their surveys and the states met again at their starts, docs/checker.md section 12).
set -u
if [[ $# -lt 1 ]]; then
	echo "usage: $0 PENUMBRA_BINARY [N [SCENARIO [CHECK_ARG...]]]" >&2
	exit 2
fi
bin=$1
n=${2:-2}
scenario=${3:-$(dirname "$0")/jobs-big.yaml}
shift $(($# < 3 ? $# : 3))
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_bench_jobs.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
echo "scenario $scenario, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %8s %8s %10s %10s %12s %12s\n' jobs wall_s cpu_s states recovered states/s recovered/s
for j in 1 "$n"; do
	TIMEFORMAT='%R %U %S'
	t=$( { time "$bin" check "$scenario" "$@" --jobs "$j" --quiet --traces "$tmp/tr" \
		--json "$tmp/$j.json" >/dev/null 2>&1; } 2>&1 )
	read -r wall user sys <<<"$t"
	read -r states rec < <(python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
print(s["crash_states"], s["recoveries"])' "$tmp/$j.json")
	awk -v j="$j" -v w="$wall" -v u="$user" -v s="$sys" -v st="$states" -v r="$rec" 'BEGIN {
		printf "%-8s %8.2f %8.2f %10d %10d %12.0f %12.0f\n", j, w, u + s, st, r, st / w, r / w }'
	echo "$wall $user $sys" >"$tmp/t$j"
done
read -r w1 u1 s1 <"$tmp/t1"
read -r wn un sn <"$tmp/t$n"
awk -v w1="$w1" -v u1="$u1" -v s1="$s1" -v wn="$wn" -v un="$un" -v sn="$sn" -v n="$n" 'BEGIN {
	c1 = u1 + s1; cn = un + sn
	printf "--jobs %s: %.2fx the states per wall second of --jobs 1; CPU %.2fx (%+.0f%%)\n",
	       n, w1 / wn, cn / c1, 100 * (cn / c1 - 1) }'
