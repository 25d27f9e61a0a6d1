#!/usr/bin/env bash
# mpi_same.sh: `mpirun -np N penumbra check` gives what `check --jobs 1` gives but for the
# timings, the top-level "ranks" key of the JSON and the MPI lines of the readable output (CTest
# label mpi; docs/cluster.md). Usage: mpi_same.sh PENUMBRA MPIEXEC NP CHECK_ARG...
# Runs both in directories of their own with `--traces tr` and compares (tests/same_lib.sh):
# the JSON without its timing keys and "ranks" (which must be NP), the JUnit XML without its
# time attributes, the readable output without its seconds and MPI lines, every trace file,
# the exit status; and that rank 0 checked units itself (with NP up to 8).
set -u
here=$(cd "$(dirname "$0")" && pwd)
name=mpi_same
np=$3
# shellcheck source=tests/same_lib.sh
. "$here/same_lib.sh"
same_usage 4 "PENUMBRA MPIEXEC NP CHECK_ARG..." "$@"
mpi_args "$1" "$2" "${@:4}"
fail=0
same_check "$tmp/j1" --
same_check "$tmp/np" mpi_run "$np" --
ranks=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("ranks"))' \
	"$tmp/np/out.json" 2>/dev/null)
if [[ $ranks != "$np" ]]; then
	echo "mpi_same: the MPI run's JSON says ranks ${ranks:-none}, not $np:"
	cat "$tmp/np/out.txt" "$tmp/np/err.txt"
	exit 1
fi
same_checked "$tmp/j1"
same_diff "$tmp/j1" "$tmp/np" "-np $np" || fail=1
grep '^mpi: ' "$tmp/np/out.txt"
own=$(sed -nE 's/^mpi: .* units \(([0-9]+) on rank 0\).*/\1/p' "$tmp/np/out.txt")
if [[ $np -le 8 && ${own:-0} -eq 0 ]]; then
	echo "mpi_same: with -np $np rank 0 checked no unit (${own:-no mpi: line})"
	fail=1
fi
echo "mpi_same: $n scenarios, $states crash states, exit $(cat "$tmp/j1/rc"): -np $np $( ((fail)) && echo DIFFERS || echo "gives the same")"
exit $fail
