#!/usr/bin/env bash
# regress_traces.sh: counterexamples of bugs since fixed (tests/regress/*.trace.yaml, each
# written by penumbra check before its fix) replay without a violation: exit 0 and "no
# violation". A trace that no longer fits its run (exit 2) fails too: it must be written again.
#   tests/regress_traces.sh PENUMBRA DIR
set -u
bin=${1:?usage: regress_traces.sh PENUMBRA DIR}
dir=${2:?usage: regress_traces.sh PENUMBRA DIR}
fail=0 n=0
for t in "$dir"/*.trace.yaml; do
	[[ -e $t ]] || continue
	n=$((n + 1))
	out=$("$bin" replay "$t" 2>&1)
	rc=$?
	if [[ $rc -ne 0 ]] || ! grep -q '^no violation' <<<"$out"; then
		echo "FAIL $t: replay exited $rc"
		tail -5 <<<"$out"
		fail=1
	else
		echo "ok   $t"
	fi
done
[[ $n -gt 0 ]] || { echo "no trace under $dir"; exit 1; }
exit $fail
