#!/usr/bin/env bash
# atomic_replay.sh: the atomic unit decides which tears exist (sim/device.h DV4; CTest label
# scenario). Usage: atomic_replay.sh PENUMBRA_BINARY SOURCE_DIR.
#   1. docs/umbra-traces/nofpw-atomic-4096.trace.yaml (nofpw, crash.atomic_unit 4096, a page
#      write torn at its 4 KiB middle) replays its violation: exit 1;
#   2. the same trace with atomic_unit 8192 names a tear inside one atomic unit, which the
#      crash model has not: replay refuses it (exit 2, "one unit, which cannot tear");
#   3. with atomic_unit 2048 the page has 4 units and the state (unit 0 new) is one of them:
#      the violation replays again (exit 1).
set -u
bin=$1
trace=$2/docs/umbra-traces/nofpw-atomic-4096.trace.yaml
work=$(mktemp -d "${TMPDIR:-/tmp}/pn_atomic_replay.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
expect() { # expect RC FILE [SUBSTRING]
	"$bin" replay "$2" >"$work/out" 2>"$work/err"
	local rc=$?
	if [[ $rc -ne $1 ]] || { [[ -n ${3:-} ]] && ! grep -qF -- "$3" "$work/err"; }; then
		echo "FAIL $2: exit $rc (expected $1${3:+, stderr with '$3'}): $(tail -1 "$work/err")"
		fail=1
	else
		echo "ok   $2: exit $rc"
	fi
}
expect 1 "$trace"
sed 's/atomic_unit: 4096/atomic_unit: 8192/' "$trace" >"$work/unit-8192.yaml"
expect 2 "$work/unit-8192.yaml" "write #10 is torn (units 0x1 of 1) but it is one unit, which cannot tear"
sed 's/atomic_unit: 4096/atomic_unit: 2048/' "$trace" >"$work/unit-2048.yaml"
expect 1 "$work/unit-2048.yaml"
exit $fail
