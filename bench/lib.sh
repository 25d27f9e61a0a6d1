# lib.sh: sourced by bench/states.sh, bench/run.sh, bench/jobs.sh and bench/mpi.sh (not run
# by itself).
#   same_usage MIN USAGE ARG...  (tests/same_lib.sh, sourced here) exits 2 with "usage: $0
#                       USAGE" when fewer than MIN ARGs;
#   pn_bench_tmp NAME   sets $tmp to a new mktemp directory, removed at exit (pn_bench_cleanup);
#   pn_bench_machine    prints the cores and the load average (no newline);
#   pn_bench_counts JSON  prints the crash states and the recoveries summed over the
#                       scenarios of a check --json file.
# With $here (the source tree), $tmp and $new (the binary to measure) set:
#   pn_bench_new_ref REF  pn_bench_build_new then pn_bench_ref REF, exit 2 if either fails;
#   pn_bench_build_new  builds $new as Release in $here/build-release if it is absent;
#   pn_bench_ref REF    sets $ref to PN_BENCH_REF_BIN or to the penumbra of commit REF, built
#                       as Release in a temporary git worktree under $tmp;
#   pn_bench_cleanup    removes that worktree and $tmp (the callers' EXIT trap).
# shellcheck source=tests/same_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/same_lib.sh"
pn_bench_cleanup() {
	if [[ -d $tmp/ref-src ]]; then
		git -C "$here" worktree remove --force "$tmp/ref-src" >/dev/null 2>&1
	fi
	rm -rf "$tmp"
}
pn_bench_build_new() {
	[[ -x $new ]] && return 0
	cmake -S "$here" -B "$here/build-release" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
		cmake --build "$here/build-release" -j2 --target penumbra >/dev/null
}
pn_bench_ref() {
	ref=${PN_BENCH_REF_BIN:-}
	[[ -n $ref ]] && return 0
	echo "building $1 (Release) in a temporary worktree..." >&2
	git -C "$here" worktree add --detach "$tmp/ref-src" "$1" >/dev/null 2>&1 || {
		echo "$0: cannot check out $1" >&2
		return 2
	}
	cmake -S "$tmp/ref-src" -B "$tmp/ref-build" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
		cmake --build "$tmp/ref-build" -j2 --target penumbra >/dev/null || {
		echo "$0: cannot build $1" >&2
		return 2
	}
	ref=$tmp/ref-build/penumbra
}
pn_bench_new_ref() {
	pn_bench_build_new || exit 2
	pn_bench_ref "$1" || exit 2
}
pn_bench_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_bench_$1.XXXXXX") || exit 2
	trap pn_bench_cleanup EXIT
}
pn_bench_machine() {
	printf '%s cores, load average %s' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
pn_bench_counts() {
	python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))["scenarios"]
print(sum(x["crash_states"] for x in s), sum(x["recoveries"] for x in s))' "$1"
}
