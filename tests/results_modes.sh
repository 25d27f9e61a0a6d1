#!/usr/bin/env bash
# results_modes.sh: every file of scenarios/results runs to its end in every mode it names
# (CTest results_modes, label scenario, at a tenth of the size; results_modes_full, labels
# scenario, results, slow, as the files are). The modes a file names: its protocol.mode, and
# each mode of every `--modes LIST` in its description (the command the description gives);
# a description that says "compare" but gives no `--modes` fails, so that a file cannot name
# modes this test does not read. Each file runs once through `penumbra compare --modes` with
# all of them: exit 0 passes; exit 1 (a runtime invariant broke in some mode) passes only in a
# file with `expect: {verdict: violation}`; exit 2 (bad input, an error) never does.
# Without --full the workload's sizes of 1,000 or more (rows, transactions, inserts,
# every_transactions) are divided by 10 in a copy of the file: the same shape (the buffer
# pool, the checkpoint cadence per transaction) at a tenth of the work; the crash scenarios
# (small sizes) run as they are.
# Usage: results_modes.sh PENUMBRA_BINARY SOURCE_DIR [--full]. A line per file; exit 1 if any
# failed.
set -u
bin=$1 src=$2 full=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
n=0

# The modes file $1 names, comma-separated, its own mode first, each once; empty if the
# description says "compare" without --modes.
named_modes() {
	local own desc lists m out
	own=$(sed -n 's/^protocol: *{[^}]*\bmode: *\([a-z0-9-]*\).*/\1/p' "$1")
	desc=$(sed -n 's/^description: *//p' "$1")
	lists=$(grep -o -- '--modes [a-z0-9,-]*' <<<"$desc" | sed 's/^--modes //' | tr ',' ' ')
	if [[ -z $lists ]] && grep -qi compare <<<"$desc"; then
		return
	fi
	out=${own:-fpw}
	for m in $lists; do
		[[ ",$out," == *",$m,"* ]] || out+=",$m"
	done
	echo "$out"
}

# A copy of $1 at a tenth of its workload sizes (those of 1,000 or more) in $2.
reduced() {
	sed -E '/^(workload|checkpoint):/ s/\b(rows|transactions|inserts|every_transactions): *([0-9]{4,})\b/\1: \2@/g' "$1" |
		awk '{ while (match($0, /[0-9]+@/)) { v = substr($0, RSTART, RLENGTH - 1);
			$0 = substr($0, 1, RSTART - 1) int(v / 10) substr($0, RSTART + RLENGTH) } print }' >"$2"
}

for f in "$src"/scenarios/results/*.yaml; do
	base=$(basename "$f")
	n=$((n + 1))
	modes=$(named_modes "$f")
	if [[ -z $modes ]]; then
		echo "FAIL $base: the description says compare but names no --modes LIST"
		failed=1
		continue
	fi
	run=$f
	if [[ $full != --full ]]; then
		run=$tmp/$base
		reduced "$f" "$run"
	fi
	grep -q '^expect: *{ *verdict: *violation' "$f" && allowed=1 || allowed=0
	"$bin" compare "$run" --modes "$modes" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	why=$(grep -v '^$' "$tmp/err" | head -3 | tr '\n' ' ')
	if [[ $rc == 0 || ($rc == 1 && $allowed == 1) ]]; then
		echo "ok   $base ($modes${why:+; expected: $why})"
	else
		echo "FAIL $base ($modes): exit $rc: $why"
		failed=1
	fi
done
[[ $n -gt 0 ]] || { echo "FAIL no scenario in $src/scenarios/results"; exit 1; }
exit $failed
