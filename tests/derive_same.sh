#!/usr/bin/env bash
# derive_same.sh: `check --derive on` gives what `--derive off` gives but for the timings and
# the count of derived states (CTest label cli; docs/checker.md "Derived crash states").
# Usage: derive_same.sh PENUMBRA_BINARY CHECK_ARG...
# Runs `penumbra check CHECK_ARG... --coverage --derive on|off` and compares the JSON (timing
# keys and "derived" dropped), the readable output (coverage markers included) without its
# seconds, and the exit status, and replays the traces (tests/replay_traces.sh --agree).
# Fails on any difference, a trace that replays otherwise, when nothing was checked, when
# --derive off derived a state or when --derive on derived none (a test that cannot fail).
set -u
. "$(dirname "$0")/same_lib.sh"
same_usage 2 "PENUMBRA_BINARY CHECK_ARG..." "$@"
bin=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_derive_same.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
for d in on off; do
	mkdir -p "$tmp/$d"
	"$bin" check "$@" --coverage --derive $d --quiet --traces "$tmp/tr" \
		--json "$tmp/$d/out.json" >"$tmp/$d/out.txt" 2>"$tmp/$d/err.txt"
	echo $? >"$tmp/$d/rc"
	python3 "$(dirname "$0")/strip_timings.py" "$tmp/$d/out.json" derived >"$tmp/$d/json" ||
		fail=1
	sed -E 's/ +[0-9]+\.[0-9]+s$//; s/ \([0-9]+ states\/s of wall time\)//' \
		"$tmp/$d/out.txt" >"$tmp/$d/txt"
done
derived() {
	python3 -c 'import json, sys
print(sum(s["derived"] for s in json.load(open(sys.argv[1]))["scenarios"]))' "$1"
}
n=$(grep -c '"verdict"' "$tmp/off/out.json" 2>/dev/null)
if [[ -z $n || $n -eq 0 || $(cat "$tmp/off/rc") -eq 2 ]]; then
	echo "derive_same: --derive off exited $(cat "$tmp/off/rc") and checked ${n:-no} scenarios:"
	cat "$tmp/off/out.txt" "$tmp/off/err.txt"
	exit 1
fi
on=$(derived "$tmp/on/out.json") off=$(derived "$tmp/off/out.json")
[[ $off -eq 0 ]] || { echo "derive_same: --derive off derived $off states"; fail=1; }
[[ $on -gt 0 ]] || { echo "derive_same: --derive on derived no state"; fail=1; }
for f in rc json txt; do
	if ! diff -u "$tmp/off/$f" "$tmp/on/$f" >"$tmp/diff"; then
		echo "derive_same: --derive on differs from --derive off in $f:"
		head -40 "$tmp/diff"
		fail=1
	fi
done
# the traces (the second run's, the same as the first's) replay as check reported them
if compgen -G "$tmp/tr/*.yaml" >/dev/null &&
	! "$(dirname "$0")/replay_traces.sh" "$bin" --agree "$tmp/off/out.json" >"$tmp/agree" 2>&1; then
	echo "derive_same: the traces do not replay as check reported them:"
	grep -v '^ok' "$tmp/agree"
	fail=1
fi
[[ $fail -eq 0 ]] && echo "derive_same: $n scenarios alike, $on states derived"
exit $fail
