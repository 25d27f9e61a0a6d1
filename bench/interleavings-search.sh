#!/usr/bin/env bash
# interleavings-search.sh: looks for configurations where the seeded schedule misses a mutant
# and the bounded search finds it (docs/checker.md section 13, "Scenarios").
#   bench/interleavings-search.sh PENUMBRA MUTATION [SEEDS] [SPACINGS] [BUFFERS] [BOUND] [TIMEOUT_S]
# Umbra with 3 generations and checksums, 12 random transactions of 2 clients, crash points
# (max_unsynced 2, tear none). For every seed, checkpoint spacing (every_transactions) and
# buffer count: the seeded schedule first; only where it passes (misses), the same scenario at
# preemption_bound BOUND (default 2). Defaults: seeds "1 2 3 4", spacings "2 3", buffers "5 8",
# timeout 300 s per bounded run. PROTOCOL (environment) replaces the protocol section's
# extra keys, "generations: 3, checksums: true" by default (no_delay_chkpt: "policy: l4,
# checksums: true"). One line per configuration: "seeded found" (no use), or the
# bounded verdict with its schedules and seconds, or "timeout".
set -u
bin=${1:?usage: bench/interleavings-search.sh PENUMBRA MUTATION [SEEDS] [SPACINGS] [BUFFERS] [BOUND] [TIMEOUT_S]}
mutation=${2:?usage: bench/interleavings-search.sh PENUMBRA MUTATION [SEEDS] [SPACINGS] [BUFFERS] [BOUND] [TIMEOUT_S]}
seeds=${3:-1 2 3 4}
spacings=${4:-2 3}
buffers=${5:-5 8}
bound=${6:-2}
limit=${7:-300}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_interleavings_search.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# scenario FILE SEED SPACING BUFFERS SCHEDULES_LINE
scenario() {
	cat >"$1" <<EOF
name: search
seed: $2
protocol: {mode: umbra, ${PROTOCOL:-generations: 3, checksums: true}, mutations: [$mutation]}
storage: {pages: 12, buffers: $4, wal_segment_size: 64KiB}
checkpoint: {interval: 0s, every_transactions: $3, max_wal_size: 0}
workload: {kind: random, clients: 2, transactions: 12, pages_per_transaction: 2}
crash: {points: all, max_unsynced: 2, tear: none}
$5
EOF
}

# verdict JSON: "VERDICT EXPLORED SECONDS CHOICES"
verdict() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["scenarios"][0]
v = d.get("violation") or {}
print(d["verdict"], d["schedules_explored"], f"{d['seconds']:.1f}", v.get("choices", "-"))
PY
}

for seed in $seeds; do
	for spacing in $spacings; do
		for nbuf in $buffers; do
			what="$mutation seed $seed every_transactions $spacing buffers $nbuf"
			scenario "$tmp/s.yaml" "$seed" "$spacing" "$nbuf" ""
			"$bin" check "$tmp/s.yaml" --no-shrink --json "$tmp/s.json" >/dev/null 2>&1
			read -r v _ _ _ <<<"$(verdict "$tmp/s.json")"
			if [[ $v != pass ]]; then
				echo "$what: seeded $v"
				continue
			fi
			scenario "$tmp/b.yaml" "$seed" "$spacing" "$nbuf" \
				"schedules: {preemption_bound: $bound}"
			if timeout "$limit" "$bin" check "$tmp/b.yaml" --no-shrink \
				--json "$tmp/b.json" >/dev/null 2>&1 || [[ $? -eq 1 ]]; then
				read -r v n s c <<<"$(verdict "$tmp/b.json")"
				echo "$what: seeded pass, bound $bound $v after $n schedules, $s s, choices $c"
			else
				echo "$what: seeded pass, bound $bound timeout after $limit s"
			fi
		done
	done
done
