# lib.sh: sourced by bench/states.sh and bench/run.sh (not run by itself). With $here (the
# source tree), $tmp (a mktemp directory the caller removes) and $new (the binary to
# measure) set:
#   pn_bench_build_new  builds $new as Release in $here/build-release if it is absent;
#   pn_bench_ref REF    sets $ref to PN_BENCH_REF_BIN or to the penumbra of commit REF, built
#                       as Release in a temporary git worktree under $tmp;
#   pn_bench_cleanup    removes that worktree and $tmp (the callers' EXIT trap).
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
