#!/usr/bin/env bash
# jobs_same.sh: `check --jobs N` gives what `--jobs 1` gives but for the timings (CTest label
# cli; docs/checker.md section 12). Usage: jobs_same.sh PENUMBRA_BINARY CHECK_ARG...
# Runs `penumbra check CHECK_ARG... --jobs J` for J = 1, 2 and 3, each in a directory of its
# own with `--traces tr` (so that trace paths read alike), and compares (tests/same_lib.sh):
# the JSON with the timing keys (seconds, seconds_to_violation, shrink_seconds) dropped, the
# JUnit XML without its time attributes, the readable output without its seconds, every trace
# file byte for byte, and the exit status; and that the traces replay as check reported them
# (tests/replay_traces.sh --agree). Fails on any difference, or when --jobs 1 checked nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
name=jobs_same
# shellcheck source=tests/same_lib.sh
. "$here/same_lib.sh"
same_usage 2 "PENUMBRA_BINARY CHECK_ARG..." "$@"
same_args "$@"
fail=0
for j in 1 2 3; do
	same_check "$tmp/j$j" -- --jobs $j
	[[ $(cat "$tmp/j$j/json") != "no JSON" ]] || fail=1
done
same_checked "$tmp/j1"
for j in 2 3; do
	same_diff "$tmp/j1" "$tmp/j$j" "--jobs $j" || fail=1
done
# the traces --jobs 1 wrote (the same as 2's and 3's) replay as it reported them
if compgen -G "$tmp/j1/tr/*.yaml" >/dev/null &&
	! (cd "$tmp/j1" && "$here/replay_traces.sh" "$bin" --agree out.json >agree.txt 2>&1); then
	echo "jobs_same: the traces do not replay as check reported them:"
	grep -v '^ok' "$tmp/j1/agree.txt"
	agree_fail=1
fi
echo "jobs_same: $n scenarios, $states crash states, exit $(cat "$tmp/j1/rc"): --jobs 2 and 3 $( ((fail)) && echo DIFFER || echo "give the same")"
exit $((fail || ${agree_fail:-0}))
