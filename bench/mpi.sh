#!/usr/bin/env bash
# mpi.sh: crash states per second of one big scenario at `check --jobs 1`, `--jobs 2`, and
# under `mpirun -np 2` and `-np 3` (rank 0 leads, the others check), side by side from one run
# (docs/cluster.md). Not a test: timings are the machine's. Usage:
#   bench/mpi.sh PENUMBRA_BINARY [ROUNDS [SCENARIO [CHECK_ARG...]]]
# (defaults: ROUNDS 1, SCENARIO bench/jobs-big.yaml). Each line: the way it ran, wall seconds,
# CPU seconds (user + system of the run and its children: mpirun's ranks are its children on
# one machine), crash states, states recovered, both per wall second, and for MPI the units,
# those rank 0 checked itself, the messages and bytes through rank 0 (its "mpi:" line), with
# bytes per unit sent to another rank, and the crash-state lookups between ranks (model/unit.h
# U6, model/mpirank.h MR4): keys asked, answered, states recovered twice (relearned), units run
# again, the lookups' messages and bytes.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/lib.sh"
same_usage 1 "PENUMBRA_BINARY [ROUNDS [SCENARIO [CHECK_ARG...]]]" "$@"
bin=$1
rounds=${2:-1}
scenario=${3:-$(dirname "$0")/jobs-big.yaml}
shift $(($# < 3 ? $# : 3))
mpiexec=${MPIEXEC:-mpirun}
pn_bench_tmp mpi
echo "scenario $scenario, $(pn_bench_machine)"
printf '%-6s %-6s %7s %7s %8s %9s %9s %11s %6s %5s %8s %8s %10s %6s %8s %6s %5s %6s %8s\n' \
	round how wall_s cpu_s states recovered states/s recovered/s units own messages bytes \
	bytes/unit asked answered twice again lk_msg lk_bytes
TIMEFORMAT='%R %U %S'
for ((k = 1; k <= rounds; k++)); do
	for how in jobs1 jobs2 np2 np3; do
		case $how in
		jobs1) run=("$bin" check --jobs 1) ;;
		jobs2) run=("$bin" check --jobs 2) ;;
		np*) run=("$mpiexec" --allow-run-as-root --oversubscribe --mca btl self,vader
			-np "${how#np}" "$bin" check) ;;
		esac
		t=$( { time "${run[@]}" "$scenario" "$@" --quiet --traces "$tmp/tr" \
			--json "$tmp/$how.json" >"$tmp/$how.txt" 2>&1 </dev/null; } 2>&1 )
		read -r wall user sys <<<"$t"
		read -r states rec < <(pn_bench_counts "$tmp/$how.json")
		read -r units own msgs bytes < <(sed -nE \
			's/^mpi: .* ([0-9]+) units \(([0-9]+) on rank 0\), ([0-9]+) messages, ([0-9]+) bytes.*/\1 \2 \3 \4/p' \
			"$tmp/$how.txt")
		read -r asked answered twice again lkm lkb < <(sed -nE \
			's/^mpi: .*lookups: ([0-9]+) keys asked, ([0-9]+) answered, ([0-9]+) relearned, ([0-9]+) units run again, ([0-9]+) messages, ([0-9]+) bytes.*/\1 \2 \3 \4 \5 \6/p' \
			"$tmp/$how.txt")
		awk -v k="$k" -v h="$how" -v w="$wall" -v c="$user $sys" -v st="$states" -v r="$rec" \
			-v u="${units:--}" -v o="${own:--}" -v m="${msgs:--}" -v b="${bytes:--}" \
			-v lk="${asked:--} ${answered:--} ${twice:--} ${again:--} ${lkm:--} ${lkb:--}" 'BEGIN {
			split(c, cs, " ")
			split(lk, l, " ")
			printf "%-6s %-6s %7.2f %7.2f %8d %9d %9.0f %11.0f %6s %5s %8s %8s %10s %6s %8s %6s %5s %6s %8s\n",
				k, h, w, cs[1] + cs[2], st, r, st / w, r / w, u, o, m, b,
				(u == "-" || u == o ? "-" : sprintf("%.0f", b / (u - o))),
				l[1], l[2], l[3], l[4], l[5], l[6] }'
	done
done
