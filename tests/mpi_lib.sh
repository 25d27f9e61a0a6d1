# mpi_lib.sh: what tests/mpi_same.sh and tests/mpi_kill.sh share (sourced).

# mpi_args PENUMBRA MPIEXEC CHECK_ARG...: sets bin, mpiexec, args (paths made absolute: each
# run works in a directory of its own) and tmp (removed at exit).
mpi_args() {
	bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
	mpiexec=$2
	shift 2
	args=()
	for a in "$@"; do
		if [[ -e $a ]]; then a=$(cd "$(dirname "$a")" && pwd)/$(basename "$a"); fi
		args+=("$a")
	done
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_mpi.XXXXXX") || exit 2
	trap 'rm -rf "$tmp"' EXIT
}
# mpi_run NP CMD...: CMD under Open MPI's mpirun with NP ranks, as CI runs it: as root
# (--allow-run-as-root), more ranks than cores (--oversubscribe), only the shared-memory and
# self transports (one machine; docs/cluster.md), stdin closed.
mpi_run() {
	local np=$1
	shift
	timeout -k 10 "${PN_MPI_TIMEOUT:-300}" "$mpiexec" --allow-run-as-root --oversubscribe --mca btl self,vader -np "$np" \
		"$@" </dev/null
}

# mpi_normalise DIR: DIR/out.{json,xml,txt} as DIR/{json,xml,txt} without what may differ
# between a --jobs 1 run and an MPI run: timings, "ranks", the MPI lines, rank messages.
mpi_normalise() {
	python3 "$here/strip_timings.py" "$1/out.json" ranks >"$1/json" 2>/dev/null || echo "no JSON" >"$1/json"
	sed -E 's/ time="[0-9.]+"//g' "$1/out.xml" >"$1/xml" 2>/dev/null
	sed -E 's/ +[0-9]+\.[0-9]+s$//; s/ \([0-9]+ per second of checking\)//; s/; [0-9]+ MPI ranks$//' \
		"$1/out.txt" | grep -v '^mpi: ' >"$1/txt"
}
