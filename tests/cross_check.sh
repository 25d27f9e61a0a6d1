#!/usr/bin/env bash
# cross_check.sh: `check --cross-check 1` judges every crash state both the fast way and the
# full way (docs/checker.md section 7) and must agree on every one; its results are those of
# a check without it (JSON without timings, traces, exit status), and its traces replay as it
# reported them (tests/replay_traces.sh --agree); and a fast path made wrong on
# purpose (the test hook PN_TEST_CROSS_FAULT, cli/cmd_check.c K8) stops the check with exit 3
# and a message naming the state. Usage: cross_check.sh PENUMBRA_BINARY CHECK_ARG...
set -u
. "$(dirname "$0")/same_lib.sh"
same_usage 2 "PENUMBRA_BINARY CHECK_ARG..." "$@"
bin=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_cross_check.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
strip_json() { python3 "$(dirname "$0")/strip_timings.py" "$1"; }
fail=0
"$bin" check "$@" --quiet --no-shrink --traces "$tmp/tr" --json "$tmp/plain.json" \
	>"$tmp/plain.out" 2>&1
rc0=$?
mv "$tmp/tr" "$tmp/tr0" 2>/dev/null
"$bin" check "$@" --cross-check 1 --quiet --no-shrink --traces "$tmp/tr" \
	--json "$tmp/cross.json" >"$tmp/cross.out" 2>"$tmp/cross.err"
rc1=$?
if [[ $rc1 -ne $rc0 ]]; then
	echo "FAIL: --cross-check 1 exits $rc1, without it $rc0"
	cat "$tmp/cross.err"
	fail=1
fi
if ! diff <(strip_json "$tmp/plain.json") <(strip_json "$tmp/cross.json") >"$tmp/diff"; then
	echo "FAIL: the results with --cross-check 1 differ:"
	head -20 "$tmp/diff"
	fail=1
fi
if [[ -d $tmp/tr0 ]] && ! diff -r "$tmp/tr0" "$tmp/tr" >/dev/null; then
	echo "FAIL: the counterexample traces with --cross-check 1 differ"
	fail=1
fi
# the traces replay as check reported them (crashes inside recovery included)
if ! "$(dirname "$0")/replay_traces.sh" "$bin" --agree "$tmp/cross.json" >"$tmp/agree" 2>&1; then
	echo "FAIL: the traces do not replay as check reported them:"
	grep -v '^ok' "$tmp/agree"
	fail=1
fi
states=$(python3 -c 'import json,sys
print(sum(s.get("crash_states", 0) for s in json.load(open(sys.argv[1]))["scenarios"]))' \
	"$tmp/cross.json")
if [[ $states -eq 0 ]]; then
	echo "FAIL: nothing was checked"
	fail=1
fi
# The fault: the 3rd state judged of the first scenario with a crash gets a wrong WAL end (in
# one process, --jobs 1: each child of --jobs N counts its own states).
first=
for a in "$@"; do
	if [[ -d $a ]]; then
		first=$(grep -l '^crash:' "$a"/*.yaml | head -1)
		break
	elif [[ -f $a ]]; then
		first=$a
		break
	fi
done
PN_TEST_CROSS_FAULT=3 "$bin" check "$first" --jobs 1 --nested 0 --cross-check 1 --quiet \
	--traces "$tmp/tr2" >/dev/null 2>"$tmp/fault.err"
rc=$?
if [[ $rc -ne 3 ]] || ! grep -q 'cross-check failed: .*judged state 3: the fast path says' \
	"$tmp/fault.err"; then
	echo "FAIL: a wrong fast verdict gives exit $rc (expected 3) and says:"
	cat "$tmp/fault.err"
	fail=1
fi
# ...and goes unseen where the cross-check does not sample it (every 2nd state: 3 is not).
PN_TEST_CROSS_FAULT=3 "$bin" check "$first" --jobs 1 --nested 0 --cross-check 2 --quiet \
	--traces "$tmp/tr3" >/dev/null 2>"$tmp/unsampled.err"
rc=$?
if [[ $rc -eq 3 ]]; then
	echo "FAIL: --cross-check 2 judged state 3 the full way:"
	cat "$tmp/unsampled.err"
	fail=1
fi
[[ $fail -eq 0 ]] && echo "cross-check: $states crash states judged both ways, the same verdicts"
exit $fail
