#!/usr/bin/env bash
# determinism.sh: the determinism self-check over the scenario suite (CTest labels scenario,
# determinism). Usage: determinism.sh PENUMBRA_BINARY EVERY DIR...
# Runs `check --twice` (each schedule twice, every event and verdict compared) over the
# scenarios under each DIR, cheaply: no crashes inside recovery and every EVERYth crash point
# (every event of each run is still hashed and compared), so verdicts that need a skipped point may differ from expect.verdict: that is the
# scenarios_check test's business. This one fails when any scenario's two runs diverge
# (check's JSON has a "divergence" key for it), when check exits 2, or when nothing ran.
set -u
if [[ $# -lt 3 ]]; then
	echo "usage: $0 PENUMBRA_BINARY EVERY DIR..." >&2
	exit 2
fi
bin=$1
every=$2
shift 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_determinism.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
"$bin" check "$@" --twice --nested 0 --points-every "$every" --jobs 2 --quiet --no-shrink \
	--traces "$tmp/traces" --json "$tmp/check.json" >"$tmp/out" 2>&1
rc=$?
n=$(grep -c '"verdict"' "$tmp/check.json" 2>/dev/null)
bad=$(grep -c '"divergence"' "$tmp/check.json" 2>/dev/null)
grep 'nondeterminism' "$tmp/out"
if [[ $rc -eq 2 || -z $n || $n -eq 0 ]]; then
	echo "determinism: check exited $rc and checked ${n:-no} scenarios:"
	cat "$tmp/out"
	exit 1
fi
echo "determinism: $((n - bad)) passed, $bad failed"
[[ $bad -eq 0 ]]
