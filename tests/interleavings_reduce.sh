#!/usr/bin/env bash
# interleavings_reduce.sh: reduction keeps every verdict (docs/checker.md section 13, "What
# the reduction guarantees"; CTest interleavings_reduce, label slow, and
# interleavings_reduce_fast, the files named on its command line, in the default run).
#
# Usage: interleavings_reduce.sh PENUMBRA_BINARY FILE...
#          checks each scenario file as written (reduce: true, the default) and again with
#          `reduce: false` added to its schedules: mapping; both must give the file's expected
#          verdict. A seeded file (no schedules: line) has nothing to reduce and is skipped.
# Prints one line per file, then a count. Exits 1 when any differs, or none ran.
set -u
bin=${1:?usage: interleavings_reduce.sh PENUMBRA_BINARY FILE...}
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_reduce.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
verdict() { # FILE JSON: the verdict and whether it was the expected one
	"$bin" check "$1" --no-shrink --json "$2" >/dev/null 2>&1
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["scenarios"][0]
print(d["verdict"], d["ok"])' "$2" 2>/dev/null || echo "none False"
}
for f in "$@"; do
	grep -q '^schedules: {' "$f" || continue
	n=$((n + 1))
	off=$tmp/$(basename "$f")
	sed 's/^schedules: {/schedules: {reduce: false, /' "$f" >"$off"
	a=$(verdict "$f" "$tmp/on.json")
	b=$(verdict "$off" "$tmp/off.json")
	if [[ $a == "$b" && $a == *True ]]; then
		echo "ok   $f: ${a% *} with and without reduction"
	else
		echo "FAIL $f: reduce on: $a, off: $b (verdict, as expected)"
		bad=$((bad + 1))
	fi
done
echo "$((n - bad)) agree, $bad not"
[[ $n -gt 0 && $bad -eq 0 ]]
