#!/usr/bin/env bash
# interleavings.sh: schedules explored, cut short and checked per preemption bound, with and
# without reduction (docs/performance.md, "Schedules per preemption bound").
#   bench/interleavings.sh PENUMBRA [SCENARIO] [BOUNDS] [TIMEOUT_S]
# SCENARIO defaults to bench/interleavings.yaml, BOUNDS to "0 1 2 3", TIMEOUT_S (per run) to
# 1800. One line per (bound, reduce): the verdict, schedules explored and pruned, distinct
# states, events, and wall seconds; "timeout" when a run did not finish.
set -u
bin=${1:?usage: bench/interleavings.sh PENUMBRA [SCENARIO] [BOUNDS] [TIMEOUT_S]}
scenario=${2:-$(dirname "$0")/interleavings.yaml}
bounds=${3:-0 1 2 3}
limit=${4:-1800}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_interleavings_bench.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
for k in $bounds; do
	for reduce in true false; do
		f=$tmp/k$k-$reduce.yaml
		grep -v '^schedules:' "$scenario" >"$f"
		echo "schedules: {strategy: bounded, preemption_bound: $k, reduce: $reduce}" >>"$f"
		if timeout "$limit" "$bin" check "$f" --no-shrink --json "$tmp/out.json" \
			>/dev/null 2>&1 || [[ $? -eq 1 ]]; then
			python3 - "$tmp/out.json" "$k" "$reduce" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["scenarios"][0]
print(f"K={sys.argv[2]} reduce={sys.argv[3]:5} {d['verdict']:9} explored {d['schedules_explored']:>9} "
      f"pruned {d['schedules_pruned']:>9} states {d['distinct_states']:>9} events {d['events']:>11} "
      f"{d['seconds']:9.2f} s")
PY
		else
			echo "K=$k reduce=$reduce timeout after ${limit} s"
		fi
	done
done
