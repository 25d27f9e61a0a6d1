#!/usr/bin/env bash
# derive_share.sh: the derivation takes at least MIN_PERCENT of the distinct crash states of
# every scenario checked (CTest label cli; docs/checker.md "Derived crash states"). A count,
# not a timing: the same on every machine. Guards a fast path whose loss no other test sees
# (derive_same and cross_check only show that derived states are judged right), such as
# doublewrite's summarized reads (sim/device.h DV8). Usage:
#   derive_share.sh PENUMBRA_BINARY MIN_PERCENT CHECK_ARG...
set -u
. "$(dirname "$0")/same_lib.sh"
same_usage 3 "PENUMBRA_BINARY MIN_PERCENT CHECK_ARG..." "$@"
bin=$1 min=$2
shift 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_derive_share.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
"$bin" check "$@" --quiet --traces "$tmp/tr" --json "$tmp/out.json" >"$tmp/out.txt" 2>&1
rc=$?
if [[ $rc -ne 0 ]]; then
	echo "derive_share: check exited $rc"
	cat "$tmp/out.txt"
	exit 1
fi
python3 - "$tmp/out.json" "$min" <<'PY'
import json, sys
scen = json.load(open(sys.argv[1]))["scenarios"]
low = 0
for s in scen:
    share = 100.0 * s["derived"] / max(1, s["recoveries"])
    ok = share >= float(sys.argv[2])
    low += not ok
    print("derive_share: %s %d of %d distinct states derived (%.1f %%)%s"
          % (s["name"], s["derived"], s["recoveries"], share, "" if ok else ", below " + sys.argv[2]))
sys.exit(1 if low or not scen else 0)
PY
