#!/usr/bin/env bash
# jobs.sh: crash states per second of one big scenario at `check --jobs 1` and `--jobs N`,
# side by side from one run (docs/checker.md section 12). Not a test: timings are the
# machine's. Usage: bench/jobs.sh PENUMBRA_BINARY [N [ROUNDS [SCENARIO [CHECK_ARG...]]]]
# (defaults: N 2, ROUNDS 3, SCENARIO bench/jobs-big.yaml). The two are run in turn, ROUNDS
# times each (1, N, 1, N, ...), so that a machine shared with other work weighs on both
# alike; each line gives a run's wall seconds, the CPU seconds of the process and its
# children, the crash states and distinct states recovered, and both per wall second; then
# the best round of each (least wall time) side by side, with the CPU the units cost beyond
# --jobs 1 (reruns of the schedule, surveys, states met again: docs/checker.md section 12).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/lib.sh"
same_usage 1 "PENUMBRA_BINARY [N [ROUNDS [SCENARIO [CHECK_ARG...]]]]" "$@"
bin=$1
n=${2:-2}
rounds=${3:-3}
scenario=${4:-$(dirname "$0")/jobs-big.yaml}
shift $(($# < 4 ? $# : 4))
pn_bench_tmp jobs
echo "scenario $scenario, $(pn_bench_machine)"
printf '%-6s %-5s %8s %8s %10s %10s %12s %12s\n' round jobs wall_s cpu_s states recovered \
	states/s recovered/s
TIMEFORMAT='%R %U %S'
for ((k = 1; k <= rounds; k++)); do
	for j in 1 "$n"; do
		t=$( { time "$bin" check "$scenario" "$@" --jobs "$j" --quiet --traces "$tmp/tr" \
			--json "$tmp/$j.json" >/dev/null 2>&1; } 2>&1 )
		read -r wall user sys <<<"$t"
		read -r states rec < <(pn_bench_counts "$tmp/$j.json")
		echo "$j $wall $user $sys $states $rec" >>"$tmp/runs"
		awk -v k="$k" -v j="$j" -v w="$wall" -v u="$user" -v s="$sys" -v st="$states" -v r="$rec" 'BEGIN {
			printf "%-6s %-5s %8.2f %8.2f %10d %10d %12.0f %12.0f\n", k, j, w, u + s, st, r, st / w, r / w }'
	done
done
awk -v n="$n" '
	{ c = $3 + $4; if (!($1 in best) || $2 < best[$1]) { best[$1] = $2; cpu[$1] = c; st[$1] = $5 } }
	END {
		printf "best of each: --jobs 1 %.0f states/s (%.2f s), --jobs %s %.0f states/s (%.2f s): %.2fx; CPU %.2f s and %.2f s (%+.0f%%)\n",
		       st[1] / best[1], best[1], n, st[n] / best[n], best[n], best[1] / best[n], cpu[1], cpu[n],
		       100 * (cpu[n] / cpu[1] - 1) }' "$tmp/runs"
