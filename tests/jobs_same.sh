#!/usr/bin/env bash
# jobs_same.sh: `check --jobs N` gives what `--jobs 1` gives but for the timings (CTest label
# cli; docs/checker.md section 12). Usage: jobs_same.sh PENUMBRA_BINARY CHECK_ARG...
# Runs `penumbra check CHECK_ARG... --jobs J` for J = 1, 2 and 3, each in a directory of its
# own with `--traces tr` (so that trace paths read alike), and compares: the JSON with the
# timing keys (seconds, seconds_to_violation, shrink_seconds) dropped, the JUnit XML without
# its time attributes, the readable output without its seconds, every trace file byte for
# byte, and the exit status. Fails on any difference, or when --jobs 1 checked nothing.
set -u
if [[ $# -lt 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY CHECK_ARG..." >&2
	exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
args=()
for a in "$@"; do # scenario paths made absolute: each run works in a directory of its own
	if [[ -e $a ]]; then a=$(cd "$(dirname "$a")" && pwd)/$(basename "$a"); fi
	args+=("$a")
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_jobs_same.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
strip_json() { python3 "$(dirname "$0")/strip_timings.py" "$1"; }
fail=0
for j in 1 2 3; do
	mkdir -p "$tmp/j$j/tr"
	(cd "$tmp/j$j" && "$bin" check "${args[@]}" --jobs $j --quiet --traces tr --json out.json \
		--junit out.xml >out.txt 2>err.txt; echo $? >rc)
	strip_json "$tmp/j$j/out.json" >"$tmp/j$j/json" || fail=1
	sed -E 's/ time="[0-9.]+"//g' "$tmp/j$j/out.xml" >"$tmp/j$j/xml"
	sed -E 's/ +[0-9]+\.[0-9]+s$//; s/ \([0-9]+ per second of checking\)//' "$tmp/j$j/out.txt" \
		>"$tmp/j$j/txt"
done
n=$(grep -c '"verdict"' "$tmp/j1/out.json" 2>/dev/null)
if [[ -z $n || $n -eq 0 || $(cat "$tmp/j1/rc") -eq 2 ]]; then
	echo "jobs_same: --jobs 1 exited $(cat "$tmp/j1/rc") and checked ${n:-no} scenarios:"
	cat "$tmp/j1/out.txt" "$tmp/j1/err.txt"
	exit 1
fi
for j in 2 3; do
	for f in rc json xml txt; do
		if ! diff -u "$tmp/j1/$f" "$tmp/j$j/$f" >"$tmp/diff"; then
			echo "jobs_same: --jobs $j differs from --jobs 1 in $f:"
			head -40 "$tmp/diff"
			fail=1
		fi
	done
	if ! diff -r "$tmp/j1/tr" "$tmp/j$j/tr" >"$tmp/diff" 2>&1; then
		echo "jobs_same: --jobs $j wrote other traces than --jobs 1:"
		head -40 "$tmp/diff"
		fail=1
	fi
done
states=$(python3 -c 'import json,sys; print(sum(s["crash_states"] for s in json.load(open(sys.argv[1]))["scenarios"]))' "$tmp/j1/out.json")
echo "jobs_same: $n scenarios, $states crash states, exit $(cat "$tmp/j1/rc"): --jobs 2 and 3 $( ((fail)) && echo DIFFER || echo "give the same")"
exit $fail
