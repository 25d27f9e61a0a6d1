#!/usr/bin/env bash
# trace_replayed.sh: check replays every trace it writes before it reports it
# (cli/trace_replay.c; CTest trace_replayed, label cli). A mutant's violation gives a trace
# that reproduces it (exit 0, as expected); with PN_TEST_TRACE_FAULT=1 the trace is written
# without protocol.mutations, so it does not reproduce: check must say so as its own bug
# ("internal error", the trace, why) and exit 3, not report the trace.
# Usage: trace_replayed.sh PENUMBRA_BINARY SOURCE_DIR. Exit 0 when both hold.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
s=$src/scenarios/mutants/fpw-off.yaml

"$bin" check "$s" --traces "$tmp/ok" >"$tmp/out" 2>&1
rc=$?
[[ $rc -eq 0 && -f $tmp/ok/fpw-off.trace.yaml ]] ||
	{ echo "FAIL: check $s: exit $rc"; cat "$tmp/out"; exit 1; }
echo "ok: check $s writes a trace that replays"

# one process (--jobs 1): under --jobs N the child that fails is run again, then the scenario
# is an error, exit 2 (cli/cmd_check.c K7, K8)
PN_TEST_TRACE_FAULT=1 "$bin" check "$s" --jobs 1 --traces "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q "^penumbra check: internal error: the trace $tmp/bad/fpw-off.trace.yaml that check wrote for fpw-off does not reproduce its violation: it replays to no violation" "$tmp/err" ||
	{ echo "FAIL: no internal error for a trace that does not replay:"; cat "$tmp/err"; exit 1; }
[[ $rc -eq 3 ]] || { echo "FAIL: exit $rc for a trace that does not replay, expected 3"; exit 1; }
echo "ok: $(head -1 "$tmp/err")"
