#!/usr/bin/env bash
# replay_traces.sh: counterexample traces reproduce, and reproduce what check reported (CTest
# label "scenario").
#
# Usage: replay_traces.sh PENUMBRA_BINARY DIR
#          runs `PENUMBRA replay FILE` for each DIR/*.yaml; a file passes when it exits 1 (the
#          violation reproduces) and replay does not call it an EDITED TRACE (a stored trace
#          is what the current trace writer writes: its recorded hash is its scenario's).
#        replay_traces.sh PENUMBRA_BINARY --agree CHECK_JSON...
#          for every violation of every scenario in each `check --json` output whose trace was
#          written, runs `PENUMBRA replay TRACE --json`: it must exit 1, say the trace is not
#          edited, and give the verdict check gave: kind, page, the event of the run it broke at
#          and the state crashed in, whether a crash inside recovery was needed and that
#          crash's event and state (docs/checker.md sections 7 and 9).
# Prints one line per trace, then a count. Exits 1 when any did not pass, or none ran.
set -u
if [[ $# -lt 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY DIR | PENUMBRA_BINARY --agree CHECK_JSON..." >&2
	exit 2
fi
bin=$1
shift
n=0
bad=0

if [[ $1 != --agree ]]; then
	for f in "$1"/*.yaml; do
		[[ -e $f ]] || continue
		n=$((n + 1))
		out=$("$bin" replay "$f" 2>&1)
		rc=$?
		edited=$(grep -c '^EDITED TRACE' <<<"$out")
		if [[ $rc -eq 1 && $edited -eq 0 ]]; then
			echo "ok   $f"
		elif [[ $rc -eq 1 ]]; then
			echo "FAIL $f: replay calls it an EDITED TRACE (write it again with the current writer)"
			bad=$((bad + 1))
		else
			echo "FAIL $f: replay exited $rc, expected 1"
			bad=$((bad + 1))
		fi
	done
	echo "$((n - bad)) reproduced, $bad not"
	[[ $n -gt 0 && $bad -eq 0 ]]
	exit
fi
shift

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_replay_agree.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
# the verdict as check's JSON gives it, and as replay's does (the same keys, in this order)
check_verdict='[.kind, .page, .crash_point, .state, .in_recovery, .recovery_crash_point, .recovery_state]'
replay_verdict='[.kind, .page, .broke_at, .state, .in_recovery, .recovery_crash_point, .recovery_state]'
for json in "$@"; do
	if ! jq -e '.scenarios' "$json" >/dev/null 2>&1; then
		echo "FAIL $json: not a check --json output"
		bad=$((bad + 1))
		continue
	fi
	while IFS=$'\t' read -r name trace want; do
		n=$((n + 1))
		"$bin" replay "$trace" --json "$tmp/r.json" >"$tmp/out" 2>&1
		rc=$?
		got=$(jq -c "$replay_verdict" "$tmp/r.json" 2>/dev/null)
		edited=$(jq -r '.edited' "$tmp/r.json" 2>/dev/null)
		if [[ $rc -ne 1 ]]; then
			echo "FAIL $name ($trace): replay exited $rc, expected 1: $(tail -n 3 "$tmp/out")"
		elif [[ $edited != false ]]; then
			echo "FAIL $name ($trace): replay says edited: $edited"
		elif [[ $got != "$want" ]]; then
			echo "FAIL $name ($trace): check reported $want, replay gives $got"
		else
			echo "ok   $name: $got"
			continue
		fi
		bad=$((bad + 1))
	done < <(jq -r ".scenarios[] | select(.violation != null and .violation.trace != null) |
		[.name, .violation.trace, (.violation | $check_verdict | tojson)] | @tsv" "$json")
done
echo "$((n - bad)) of $n traces replay as check reported them"
[[ $n -gt 0 && $bad -eq 0 ]]
