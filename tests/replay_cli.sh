#!/usr/bin/env bash
# replay_cli.sh: `penumbra replay` on traces that do not fit their run, edited traces, --json -,
# crashes inside recovery under crash.tear: none, and --twice, from the command line (CTest
# label cli). Usage: replay_cli.sh PENUMBRA_BINARY SOURCE_DIR. Writes its traces to a
# temporary directory; prints one line per case and "N passed, M failed"; exits 1 if any failed.
set -u
if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY SOURCE_DIR" >&2
	exit 2
fi
bin=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_replay_cli.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# case NAME WANT_STATUS PATTERN FILE COMMAND...: the command exits WANT_STATUS and FILE (out,
# err or first: the first line of stdout) matches the extended regex PATTERN ("" = anything).
case_() {
	local name=$1 want=$2 pattern=$3 which=$4
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	head -n 1 "$tmp/out" >"$tmp/first"
	if [[ $rc -ne $want ]]; then
		echo "FAIL $name: exit $rc, expected $want"
		sed -n 1,5p "$tmp/err" "$tmp/first"
		fail=$((fail + 1))
	elif [[ -n $pattern ]] && ! grep -Eq -- "$pattern" "$tmp/$which"; then
		echo "FAIL $name: $which does not match '$pattern':"
		sed -n 1,5p "$tmp/$which"
		fail=$((fail + 1))
	else
		echo "ok   $name"
		pass=$((pass + 1))
	fi
}

"$bin" check "$src/scenarios/mutants/shift-split.yaml" "$src/scenarios/mutants/ckpt-active-only.yaml" \
	--quiet --traces "$tmp" >/dev/null 2>&1
ckpt=$tmp/ckpt-active-only.trace.yaml
split=$tmp/shift-split.trace.yaml
[[ -f $ckpt && -f $split ]] || { echo "FAIL: check wrote no traces"; exit 1; }

# a trace of a scenario without crash: whose runtime invariant no longer breaks
sed 's/mutations: \[shift_split\]/mutations: []/' "$split" >"$tmp/cost.yaml"
case_ "cost-scenario trace replays, no crash" 0 "no runtime invariant broke" out "$bin" replay "$tmp/cost.yaml"
case_ "cost-scenario trace still reproduces" 1 "violation reproduces" out "$bin" replay "$split"
sed 's/^  crash_point: .*/  crash_point: 99999/' "$ckpt" >"$tmp/past.yaml"
case_ "crash point past the end: exit 2" 2 "past the end of the run, which ends after event" err \
	"$bin" replay "$tmp/past.yaml"
sed 's/^  crash_point: .*/  crash_point: 18446744073709551615/' "$ckpt" >"$tmp/max.yaml"
case_ "crash point 2^64-1: exit 2" 2 "18446744073709551615 is past the end" err "$bin" replay "$tmp/max.yaml"
case_ "an edited crash point shows in the first line" 2 "^EDITED TRACE: " first "$bin" replay "$tmp/past.yaml"
sed 's/^seed: .*/seed: 8/' "$ckpt" >"$tmp/seed.yaml"
case_ "an edited seed shows in the first line" 1 "^EDITED TRACE: .*seed.yaml was changed" first \
	"$bin" replay "$tmp/seed.yaml"
case_ "an unedited trace: the first line is the replay" 1 "^replaying ckpt-active-only: " first \
	"$bin" replay "$ckpt"
case_ "replay --json -: stdout starts as JSON" 1 "^\{$" first "$bin" replay "$ckpt" --json -
case_ "replay --json -: the report is on stderr" 1 "the violation reproduces" err "$bin" replay "$ckpt" --json -
if grep -q "replaying\|  #" "$tmp/out"; then
	echo "FAIL replay --json -: human text on stdout"
	fail=$((fail + 1))
fi
case_ "replay --json -: an error is JSON too" 2 "^\{$" first "$bin" replay "$tmp/past.yaml" --json -

# crashes inside recovery keep the scenario's crash model: no tear under tear: none
sed 's/tear: sectors/tear: none/' "$src/scenarios/mutants/fpw-off.yaml" >"$tmp/fpw-none.yaml"
"$bin" check "$tmp/fpw-none.yaml" --nested 16 --no-shrink --traces "$tmp/t" >"$tmp/out" 2>&1
if grep -q "crash inside recovery" "$tmp/out"; then
	echo "FAIL --nested under tear: none found a torn write:"
	grep "state" "$tmp/out"
	fail=$((fail + 1))
else
	echo "ok   --nested under tear: none tears nothing"
	pass=$((pass + 1))
fi

case_ "check --twice agrees" 0 "check: 1 passed, 0 failed" out \
	"$bin" check "$src/scenarios/mutants/ckpt-active-only.yaml" --twice --quiet --traces "$tmp/t"
case_ "run --twice agrees" 0 "determinism \(--twice\): the two runs agree on all" out \
	"$bin" run "$src/scenarios/protocols/umbra-random.yaml" --twice

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
