#!/usr/bin/env bash
# mpi_dedup.sh: crash-state lookups between ranks (CTest label mpi; docs/cluster.md
# "Crash-state deduplication across ranks"; model/unit.h U6, model/mpirank.h MR4).
# Usage: mpi_dedup.sh PENUMBRA MPIEXEC NP CHECK_ARG... (CHECK_ARG: scenarios whose schedules
# are cut into many units, e.g. a small --unit-states, so that units meet states first met
# before their range).
#   1. -np NP: the outputs are those of --jobs 1 (tests/same_lib.sh), keys were asked and
#      answered (hits > 0), none relearned and no unit run again.
#   2. PN_TEST_MPI_WRONG_END=1 (every owner answers a WAL end one byte short): the outputs are
#      still those of --jobs 1; units whose answer falls below what C1 needs run again.
#   3. PN_TEST_MPI_WRONG_END=1 PN_TEST_MPI_VERIFY=1: every unit also runs without lookups and
#      the answers are compared; stderr names a wrong one; the outputs are those of --jobs 1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
name=mpi_dedup
np=$3
# shellcheck source=tests/same_lib.sh
. "$here/same_lib.sh"
same_usage 4 "PENUMBRA MPIEXEC NP CHECK_ARG..." "$@"
mpi_args "$1" "$2" "${@:4}"
fail=0
bad() {
	echo "$name: $*"
	fail=1
}
# lookups DIR: sets asked, answered, relearned, reruns from DIR's mpi: line.
lookups() {
	read -r asked answered relearned reruns < <(sed -nE \
		's/^mpi: .*lookups: ([0-9]+) keys asked, ([0-9]+) answered, ([0-9]+) relearned, ([0-9]+) units run again.*/\1 \2 \3 \4/p' \
		"$tmp/$1/out.txt")
	grep '^mpi: ' "$tmp/$1/out.txt" || bad "$1: no mpi: line with lookups: $(cat "$tmp/$1/err.txt")"
}
same_check "$tmp/j1" --
same_checked "$tmp/j1"
for run in np wrong verify; do
	envs=()
	case $run in
	wrong) envs=(-x PN_TEST_MPI_WRONG_END=1) ;;
	verify) envs=(-x PN_TEST_MPI_WRONG_END=1 -x PN_TEST_MPI_VERIFY=1) ;;
	esac
	for e in "${envs[@]}"; do [[ $e == -x ]] || export "${e?}"; done
	same_check "$tmp/$run" mpi_run "$np" "${envs[@]}" --
	unset PN_TEST_MPI_WRONG_END PN_TEST_MPI_VERIFY
	same_diff "$tmp/j1" "$tmp/$run" "-np $np ($run)" || {
		cat "$tmp/$run/err.txt"
		fail=1
	}
	lookups "$run"
	case $run in
	np) [[ ${answered:-0} -gt 0 && ${asked:-0} -eq ${answered:-0} && ${relearned:-1} -eq 0 &&
		${reruns:-1} -eq 0 ]] ||
		bad "np: expected every key asked answered (some), none relearned, no unit run again" ;;
	wrong) [[ ${reruns:-0} -gt 0 ]] || bad "wrong: owners answered short, yet no unit ran again" ;;
	verify) grep -q 'a lookup answered WAL end [0-9A-F]* for state [0-9a-f]* of schedule [0-9]*, its recovery ends at' \
		"$tmp/verify/err.txt" || bad "verify: no wrong answer named: $(head -5 "$tmp/verify/err.txt")" ;;
	esac
done
echo "$name: $n scenarios, $states crash states, -np $np: $( ((fail)) && echo FAILED || echo "the same as --jobs 1, the lookups as they must be")"
exit $fail
