#!/usr/bin/env bash
# realdisk_kinds.sh: a generated workload runs on real files for any duration (CTest label
# "disk"). Usage: realdisk_kinds.sh PENUMBRA_BINARY SCENARIO WORKDIR BENCH_DURATION MAX_TIME.
# bench and crashtest size a workload for 4096 transactions and then run it without end
# (src/workload/layout.h, Growth): `bench` of MODES (default fpw, umbra, pushdown) must exit 0 with transactions done
# in every mode (or, for a workload without transactions, exit 0), and `crashtest` of the
# same modes (RUNS crashes each, default 2) must judge every crash ok (exit 0).
set -u
bin=$1
scenario=$2
work=$3
duration=$4
max_time=$5
modes=${6:-fpw,umbra,pushdown}
runs=${7:-2}
rm -rf "$work"
mkdir -p "$work"
json="$work/bench.json"
"$bin" bench "$scenario" --path "$work/bench" --modes "$modes" --duration "$duration" \
	--json "$json" >"$work/bench.out" 2>&1
rc=$?
if [[ $rc -ne 0 ]]; then
	echo "FAIL bench $scenario exited $rc:"
	tail -5 "$work/bench.out"
	exit 1
fi
tx=$(grep -o '"transactions": [0-9]*' "$json" | grep -o '[0-9]*$' | tr '\n' ' ')
echo "bench $scenario: transactions per mode: $tx"
if ! grep -q 'kind: vacuum' "$scenario"; then
	for n in $tx; do
		if [[ $n -eq 0 ]]; then
			echo "FAIL bench $scenario: a mode ran no transaction"
			exit 1
		fi
	done
fi
"$bin" crashtest "$scenario" --path "$work/crash" --modes "$modes" --runs "$runs" \
	--max-time "$max_time" >"$work/crash.out" 2>&1
rc=$?
grep -E '^[a-z]+: [0-9]+ runs' "$work/crash.out"
if [[ $rc -ne 0 ]]; then
	echo "FAIL crashtest $scenario exited $rc:"
	grep -E 'LOST|failed|stopped' "$work/crash.out" | head -5
	exit 1
fi
rm -rf "$work"
echo "ok $scenario"
