#!/usr/bin/env bash
# run_fuzz.sh: the CTest of one libFuzzer harness (label fuzz; fuzz/README.md).
#
# Usage: run_fuzz.sh HARNESS CORPUS_DIR SECONDS WORK_DIR [DICT]
#
# 1. Replays every file of the committed corpus once (a crash found earlier stays fixed).
# 2. Fuzzes PN_FUZZ_RUNS inputs (default 200000) from that corpus, for at most SECONDS
#    seconds, writing new inputs to WORK_DIR/new (never into the repository) and a crashing
#    input to WORK_DIR/artifacts/. The seed is PN_FUZZ_SEED (default 1; 0 means a random one).
#    A count of runs, not a time, so that a CI run tries the same inputs on any machine: what
#    passes here passes there (the time is only a cap for a very slow machine).
# Exits 0 when both found nothing; otherwise prints the input to add to CORPUS_DIR once the
# bug is fixed, and exits 1.
set -u
(($# >= 4)) || { echo "usage: $0 HARNESS CORPUS_DIR SECONDS WORK_DIR [DICT]" >&2; exit 2; }
harness=$1 corpus=$2 seconds=$3 work=$4
dict=${5:-}
rm -rf "$work"
mkdir -p "$work/new" "$work/artifacts"

shopt -s nullglob
files=("$corpus"/*)
if ((${#files[@]} == 0)); then
	echo "$0: no corpus in $corpus" >&2
	exit 1
fi
if ! "$harness" "${files[@]}" >"$work/replay.log" 2>&1; then
	tail -n 40 "$work/replay.log"
	echo "FAIL: a committed corpus file of $corpus crashes $harness (see above)"
	exit 1
fi
echo "replayed ${#files[@]} corpus files of $corpus: none crashed"

args=(-runs="${PN_FUZZ_RUNS:-200000}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384
      -seed="${PN_FUZZ_SEED:-1}" -artifact_prefix="$work/artifacts/" -print_final_stats=1)
if [[ -n $dict ]]; then
	args+=(-dict="$dict")
fi
if ! "$harness" "${args[@]}" "$work/new" "$corpus" >"$work/fuzz.log" 2>&1; then
	tail -n 60 "$work/fuzz.log"
	echo "FAIL: $harness found a crash; the input is in $work/artifacts/:"
	ls -l "$work/artifacts/"
	echo "fix it, then add that input to $corpus"
	exit 1
fi
grep -E '^stat::number_of_executed_units|^Done' "$work/fuzz.log" || true
echo "fuzzed $harness (${PN_FUZZ_RUNS:-200000} runs, at most ${seconds}s): no crash"
