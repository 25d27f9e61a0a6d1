# same_lib.sh: what tests/jobs_same.sh, tests/mpi_same.sh and tests/mpi_kill.sh share (and
# the usage check of tests/derive_same.sh and tests/cross_check.sh)
# (sourced, not run): runs of `penumbra check` in directories of their own, their outputs
# normalised, and their comparison with a `--jobs 1` run. The caller sets `here` (this
# directory) and `name` (its own name, for messages).

# same_usage MIN USAGE ARG...: exits 2 with "usage: $0 USAGE" when fewer than MIN ARGs.
same_usage() {
	local min=$1 usage=$2
	shift 2
	if [[ $# -lt $min ]]; then
		echo "usage: $0 $usage" >&2
		exit 2
	fi
}
# same_args PENUMBRA CHECK_ARG...: sets bin and args (paths made absolute: each run works in
# a directory of its own) and tmp (removed at exit).
same_args() {
	bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
	shift
	args=()
	for a in "$@"; do
		if [[ -e $a ]]; then a=$(cd "$(dirname "$a")" && pwd)/$(basename "$a"); fi
		args+=("$a")
	done
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_same.XXXXXX") || exit 2
	trap 'rm -rf "$tmp"' EXIT
}
# mpi_args PENUMBRA MPIEXEC CHECK_ARG...: same_args, and mpiexec.
mpi_args() {
	mpiexec=$2
	same_args "$1" "${@:3}"
}
# same_check DIR [CMD_PREFIX...] -- CHECK_OPTION...: `penumbra check` with the args, the
# options, --quiet --traces tr --json out.json --junit out.xml, in DIR (made, with DIR/tr),
# under CMD_PREFIX if any (mpi_run NP ...); DIR/out.txt, err.txt, rc (its exit status); then
# same_normalise DIR.
same_check() {
	local d=$1 pre=()
	shift
	while [[ $1 != -- ]]; do pre+=("$1"); shift; done
	shift
	mkdir -p "$d/tr"
	(cd "$d" && "${pre[@]}" "$bin" check "${args[@]}" "$@" --quiet --traces tr \
		--json out.json --junit out.xml >out.txt 2>err.txt; echo $? >rc)
	same_normalise "$d"
}
# mpi_run NP CMD...: CMD under Open MPI's mpirun with NP ranks, as CI runs it: as root
# (--allow-run-as-root), more ranks than cores (--oversubscribe), only the shared-memory and
# self transports (one machine; docs/cluster.md), stdin closed; killed 10 s after the
# timeout's TERM (Open MPI 4.1.4's mpirun can ignore TERM after MPI_Abort with a hung rank).
mpi_run() {
	local np=$1
	shift
	timeout -k 10 "${PN_MPI_TIMEOUT:-300}" "$mpiexec" --allow-run-as-root --oversubscribe \
		--mca btl self,vader -np "$np" "$@" </dev/null
}
# same_normalise DIR: DIR/out.{json,xml,txt} as DIR/{json,xml,txt} without what may differ
# between a --jobs 1 run and another: timings, "ranks", the MPI lines.
same_normalise() {
	python3 "$here/strip_timings.py" "$1/out.json" ranks >"$1/json" 2>/dev/null || echo "no JSON" >"$1/json"
	sed -E 's/ time="[0-9.]+"//g' "$1/out.xml" >"$1/xml" 2>/dev/null
	sed -E 's/ +[0-9]+\.[0-9]+s$//; s/ \([0-9]+ states\/s of wall time\)//; s/; [0-9]+ MPI ranks$//' \
		"$1/out.txt" | grep -v '^mpi: ' >"$1/txt"
}
# same_checked DIR: exits 1, saying so, when the --jobs 1 run in DIR exited 2 or checked
# nothing; else sets n (its scenarios) and states (their crash states).
same_checked() {
	n=$(grep -c '"verdict"' "$1/out.json" 2>/dev/null)
	if [[ -z $n || $n -eq 0 || $(cat "$1/rc") -eq 2 ]]; then
		echo "$name: --jobs 1 exited $(cat "$1/rc") and checked ${n:-no} scenarios:"
		cat "$1/out.txt" "$1/err.txt"
		exit 1
	fi
	states=$(python3 -c 'import json,sys; print(sum(s["crash_states"] for s in json.load(open(sys.argv[1]))["scenarios"]))' "$1/out.json")
}
# same_diff REF DIR WHAT: false, printing the differences, when DIR's normalised outputs,
# exit status or traces differ from REF's; WHAT names DIR's run in the messages.
same_diff() {
	local f ok=0
	for f in rc json xml txt; do
		if ! diff -u "$1/$f" "$2/$f" >"$tmp/diff"; then
			echo "$name: $3 differs from --jobs 1 in $f:"
			head -40 "$tmp/diff"
			ok=1
		fi
	done
	if ! diff -r "$1/tr" "$2/tr" >"$tmp/diff" 2>&1; then
		echo "$name: $3 wrote other traces than --jobs 1:"
		head -40 "$tmp/diff"
		ok=1
	fi
	return $ok
}
