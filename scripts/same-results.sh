#!/usr/bin/env bash
# Shows that two commits give the same results: builds each (Release, in a throw-away git
# worktree), runs `compare --json` on every scenario in scenarios/ and `check --json` on
# every scenario with a crash: section, drops what measures the machine rather than the
# model (wall-clock seconds, rates), and diffs the two.
#
#   scripts/same-results.sh [OLD [NEW]]     default: OLD = HEAD~1, NEW = the working tree
#
# Prints one line per scenario that differs and a last line "same: N of M outputs";
# exit 0 when every output is the same, 1 otherwise, 2 on bad use.
# Environment: PN_SAME_MODES (compare's modes, default fpw,nofpw,umbra,doublewrite,pushdown),
# PN_SAME_NESTED (check's --nested, default 0), PN_SAME_JOBS (default nproc), PN_SAME_DROP
# (more keys to drop, comma-separated: keys that NEW adds, e.g. series,Imported/RECORD, so
# that the rest is compared).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
old=${1:-HEAD~1}
new=${2:-}
modes=${PN_SAME_MODES:-fpw,nofpw,umbra,doublewrite,pushdown}
nested=${PN_SAME_NESTED:-0}
jobs=${PN_SAME_JOBS:-$(nproc)}
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1 || true;
      git -C "$root" worktree remove --force "$work/new" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

build() { # build REV DIR: the binary of REV (or of the working tree when REV is empty)
	local rev=$1 dir=$2
	if [[ -z $rev ]]; then
		cmake -S "$root" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	else
		git -C "$root" rev-parse --verify -q "$rev^{commit}" >/dev/null ||
			{ echo "same-results: no commit '$rev'" >&2; exit 2; }
		git -C "$root" worktree add -q --detach "$dir" "$rev"
		cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	fi
	cmake --build "$dir/build" -j"$jobs" --target penumbra >/dev/null
}

# The normalised JSON of one command: keys that measure the machine are removed, every
# other value is kept exactly.
normalise() {
	python3 -c '
import json, sys
import os
DROP = {"seconds", "wall_seconds", "states_per_second", "elapsed_wall_seconds", "trace",
        "seconds_to_violation", "shrink_seconds"}
DROP |= {k for k in os.environ.get("PN_SAME_DROP", "").split(",") if k}
def walk(v):
    if isinstance(v, dict):
        return {k: walk(x) for k, x in v.items() if k not in DROP}
    if isinstance(v, list):
        return [walk(x) for x in v]
    return v
try:
    print(json.dumps(walk(json.load(sys.stdin)), indent=1, sort_keys=True))
except ValueError as e:
    print("not JSON:", e)
'
}

outputs() { # outputs BIN DIR: every scenario's normalised compare and check JSON into DIR
	local bin=$1 out=$2 f name
	mkdir -p "$out"
	while IFS= read -r f; do
		name=${f//\//_}
		"$bin" compare "$f" --modes "$modes" --json - 2>/dev/null | normalise >"$out/$name.compare" || true
		if grep -q '^crash:' "$f"; then
			"$bin" check "$f" --nested "$nested" --quiet --no-shrink --traces "$out.traces" \
				--json - 2>/dev/null | normalise >"$out/$name.check" || true
		fi
	done < <(find scenarios -name '*.yaml' -not -path '*/bench/*' | sort)
}

build "$old" "$work/old"
if [[ -z $new ]]; then
	build "" "$work/new-tree"
	newbin=$work/new-tree/build/penumbra
else
	build "$new" "$work/new"
	newbin=$work/new/build/penumbra
fi
outputs "$work/old/build/penumbra" "$work/out-old"
outputs "$newbin" "$work/out-new"

same=0 all=0
for f in "$work/out-old"/*; do
	b=$(basename "$f")
	all=$((all + 1))
	if cmp -s "$f" "$work/out-new/$b"; then
		same=$((same + 1))
	else
		echo "differs: $b"
		{ diff "$f" "$work/out-new/$b" || true; } | head -20 | sed 's/^/    /'
	fi
done
echo "same: $same of $all outputs (old $old, new ${new:-working tree})"
[[ $same -eq $all ]]
