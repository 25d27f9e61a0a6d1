#!/usr/bin/env bash
# replay_traces.sh: every stored counterexample trace still reproduces (CTest label "scenario").
# Usage: replay_traces.sh PENUMBRA_BINARY DIR. Runs `PENUMBRA replay FILE` for each DIR/*.yaml;
# a file passes when it exits 1 (the violation reproduces). Exits 1 when any did not, or none ran.
set -u
bin=$1
dir=$2
n=0
bad=0
for f in "$dir"/*.yaml; do
	[[ -e $f ]] || continue
	n=$((n + 1))
	"$bin" replay "$f" >/dev/null 2>&1
	rc=$?
	if [[ $rc -eq 1 ]]; then
		echo "ok   $f"
	else
		echo "FAIL $f: replay exited $rc, expected 1"
		bad=$((bad + 1))
	fi
done
echo "$((n - bad)) reproduced, $bad not"
[[ $n -gt 0 && $bad -eq 0 ]]
