#!/usr/bin/env bash
# pgcrash_table.sh: the real-PostgreSQL-versus-model table of docs/results.md ("Real
# PostgreSQL 15 in the model's crash states"). For each configuration both worlds have, runs
# `penumbra pgcrash` on a small workload and `penumbra check` on the matching model scenario,
# and prints one markdown row: verdicts side by side, states judged, deduplicated share,
# states per second. Settings the checked-in scenarios do not have (checksums off,
# wal_log_hints on) are those scenarios with their protocol's checksums key rewritten. Not a
# CTest test (minutes per row); tests/pgcrash.sh asserts the first three rows' verdicts.
#
# Usage: pgcrash_table.sh PENUMBRA_BINARY [OUT.md]
set -euo pipefail
if [[ $# -lt 1 ]]; then
	echo "usage: $0 PENUMBRA_BINARY [OUT.md]" >&2
	exit 2
fi
pn=$1
out=${2:-/dev/stdout}
scen=$(dirname "$0")/../scenarios/protocols
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_table.XXXXXX")
chmod 755 "$tmp" # the server's user works in it
trap 'rm -rf "$tmp"' EXIT
small=(--transactions 2 --rows 40 --updates 2 --checkpoint-every 1 --jobs 2 --max-unsynced 0)
# name | pgcrash options | model scenario | its protocol's checksums key rewritten to this
rows=(
	"fpw on, checksums, 512 B sectors torn in halves|--fpw on --tear halves|fpw-random.yaml|"
	"fpw off, checksums, 512 B sectors torn in halves|--fpw off --tear halves --fail-fast|nofpw-random-torn.yaml|"
	"fpw off, checksums, 8 KiB atomic writes|--fpw off --sector 8192|nofpw-random-atomic.yaml|"
	"fpw on, no checksums, 512 B torn in halves|--fpw on --checksums off --tear halves|fpw-random.yaml|checksums: false"
	"fpw off, no checksums, 512 B torn in halves|--fpw off --checksums off --tear halves --fail-fast|nofpw-random-torn.yaml|checksums: false"
	"fpw off, no checksums, 8 KiB atomic writes|--fpw off --checksums off --sector 8192|nofpw-random-atomic.yaml|checksums: false"
	"fpw on, no checksums, wal_log_hints, 512 B torn in halves|--fpw on --checksums off --wal-log-hints on --tear halves|fpw-random.yaml|checksums: false, wal_log_hints: true"
	"fpw off, no checksums, wal_log_hints, 512 B torn in halves|--fpw off --checksums off --wal-log-hints on --tear halves --fail-fast|nofpw-random-torn.yaml|checksums: false, wal_log_hints: true"
)
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
{
	echo "| configuration | real PostgreSQL 15 | model | real states judged (deduplicated of all) | real states/s |"
	echo "| --- | --- | --- | --- | --- |"
	for row in "${rows[@]}"; do
		IFS='|' read -r name opts model proto <<<"$row"
		i=$((${i:-0} + 1))
		# the model's scenario for the same setting: the checked-in one, its key rewritten
		sed "s/checksums: true/${proto:-checksums: true}/" "$scen/$model" >"$tmp/$i-$model"
		# shellcheck disable=SC2086
		"$pn" pgcrash --work "$tmp/w$i" $opts "${small[@]}" --json "$tmp/r$i.json" \
			>"$tmp/r$i.out" 2>/dev/null || true
		"$pn" check "$tmp/$i-$model" --json "$tmp/m$i.json" >/dev/null 2>&1 || true
		real=$(j "$tmp/r$i.json" 'd["verdict"]')
		judged=$(j "$tmp/r$i.json" '"%d (%d of %d)" % (d["judged"], d["deduplicated"], d["crash_states"])')
		rate=$(j "$tmp/r$i.json" '"%.2f" % (d["crash_states"] / d["seconds"])')
		mod=$(j "$tmp/m$i.json" 'd["scenarios"][0]["verdict"]')
		echo "| $name | $real | $mod | $judged | $rate |"
	done
} >"$out"
