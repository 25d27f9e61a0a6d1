#!/usr/bin/env bash
# mpi_same.sh: `mpirun -np N penumbra check` gives what `check --jobs 1` gives but for the
# timings, the top-level "ranks" key of the JSON and the MPI lines of the readable output (CTest
# label mpi; docs/cluster.md). Usage: mpi_same.sh PENUMBRA MPIEXEC NP CHECK_ARG...
# Runs both in directories of their own with `--traces tr` and compares: the JSON without its
# timing keys and "ranks" (which must be NP), the JUnit XML without its time attributes, the
# readable output without its seconds and MPI lines, every trace file, the exit status.
set -u
if [[ $# -lt 4 ]]; then
	echo "usage: $0 PENUMBRA MPIEXEC NP CHECK_ARG..." >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
np=$3
# shellcheck source=tests/mpi_lib.sh
. "$here/mpi_lib.sh"
mpi_args "$1" "$2" "${@:4}"
fail=0
mkdir -p "$tmp/j1/tr" "$tmp/np/tr"
(cd "$tmp/j1" && "$bin" check "${args[@]}" --quiet --traces tr --json out.json --junit out.xml \
	>out.txt 2>err.txt; echo $? >rc)
(cd "$tmp/np" && mpi_run "$np" "$bin" check "${args[@]}" --quiet --traces tr --json out.json \
	--junit out.xml >out.txt 2>err.txt; echo $? >rc)
ranks=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("ranks"))' \
	"$tmp/np/out.json" 2>/dev/null)
if [[ $ranks != "$np" ]]; then
	echo "mpi_same: the MPI run's JSON says ranks ${ranks:-none}, not $np:"
	cat "$tmp/np/out.txt" "$tmp/np/err.txt"
	exit 1
fi
for d in j1 np; do
	mpi_normalise "$tmp/$d"
done
n=$(grep -c '"verdict"' "$tmp/j1/out.json" 2>/dev/null)
if [[ -z $n || $n -eq 0 || $(cat "$tmp/j1/rc") -eq 2 ]]; then
	echo "mpi_same: --jobs 1 exited $(cat "$tmp/j1/rc") and checked ${n:-no} scenarios:"
	cat "$tmp/j1/out.txt" "$tmp/j1/err.txt"
	exit 1
fi
for f in rc json xml txt; do
	if ! diff -u "$tmp/j1/$f" "$tmp/np/$f" >"$tmp/diff"; then
		echo "mpi_same: -np $np differs from --jobs 1 in $f:"
		head -40 "$tmp/diff"
		fail=1
	fi
done
if ! diff -r "$tmp/j1/tr" "$tmp/np/tr" >"$tmp/diff" 2>&1; then
	echo "mpi_same: -np $np wrote other traces than --jobs 1:"
	head -40 "$tmp/diff"
	fail=1
fi
grep '^mpi: ' "$tmp/np/out.txt"
states=$(python3 -c 'import json,sys; print(sum(s["crash_states"] for s in json.load(open(sys.argv[1]))["scenarios"]))' "$tmp/j1/out.json")
echo "mpi_same: $n scenarios, $states crash states, exit $(cat "$tmp/j1/rc"): -np $np $( ((fail)) && echo DIFFERS || echo "gives the same")"
exit $fail
