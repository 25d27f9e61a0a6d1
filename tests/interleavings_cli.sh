#!/usr/bin/env bash
# interleavings_cli.sh: the bounded search from the command line (CTest label cli;
# docs/checker.md section 13). Usage: interleavings_cli.sh PENUMBRA_BINARY SOURCE_DIR.
#   - the seeded schedule misses shift_split, the same scenario at preemption_bound 2 finds
#     it; its trace records the preemptions and replays the violation (exit 1), and with
#     its choices: line removed replays none (exit 0);
#   - the same for aio_late_bind at 12 transactions with crash points (its counterexample is
#     a crash state of a preempted schedule);
#   - the race window: umbra-race-seeded never lets a checkpoint begin between DECIDE and
#     INSERT (the marker seen false only), umbra-race-bounded does (seen both ways);
#   - no_delay_chkpt (Umbra l4): the seeded schedule misses it, and the schedule the bounded
#     search finds (slow/no-delay-chkpt-bounded.yaml, minutes: CTest
#     scenarios_interleavings_slow) replays from its choices to the same violation (exit 1),
#     and without them to none (exit 0);
#   - the DELAY_CHKPT_START window: l4-window-seeded never brings a checkpoint to its
#     selection while a backend is between its shift's WAL insert and its publication (the
#     marker seen false only), l4-window-bounded does (seen both ways);
#   - check --json reports strategy, preemption_bound and the schedule counts;
#   - check --list-states writes one key of 16 hex digits per state recovered (with --nested
#     0, as many as "recoveries"), and is refused with --jobs 2 (exit 2, no file).
# Prints one line per case and "N passed, M failed"; exits 1 if any failed.
set -u
if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY SOURCE_DIR" >&2
	exit 2
fi
bin=$1
dir=$2/scenarios/interleavings
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_interleavings.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
marker='redo pointer moved between decide and insert'

# expect NAME WANT_STATUS PATTERN COMMAND...: exit WANT_STATUS, stdout+stderr match PATTERN.
expect() {
	local name=$1 want=$2 pattern=$3
	shift 3
	"$@" >"$tmp/out" 2>&1
	local rc=$?
	if [[ $rc -ne $want ]] || ! grep -Eq -- "$pattern" "$tmp/out"; then
		echo "FAIL $name: exit $rc (expected $want), output:"
		sed -n 1,12p "$tmp/out"
		fail=$((fail + 1))
	else
		echo "ok   $name"
		pass=$((pass + 1))
	fi
}

expect seeded-misses 0 'pass +\(expected pass' \
	"$bin" check "$dir/shift-split-seeded.yaml" --traces "$tmp/t"
expect bounded-finds 0 'preemptions: [0-9]+:[12]' \
	"$bin" check "$dir/shift-split-bounded.yaml" --traces "$tmp/t" --no-shrink
trace=$tmp/t/shift-split-bounded.trace.yaml
expect trace-has-choices 0 '^  choices: "[0-9]+:[12]' cat "$trace"
expect replay-reproduces 1 'the violation reproduces' "$bin" replay "$trace"
grep -v '^  choices:' "$trace" >"$tmp/seeded.trace.yaml"
expect replay-without-choices 0 'no violation' "$bin" replay "$tmp/seeded.trace.yaml"
expect late-bind-seeded-misses 0 'pass +\(expected pass' \
	"$bin" check "$dir/aio-late-bind-seeded.yaml" --traces "$tmp/t"
expect late-bind-bounded-finds 0 'preemptions: [0-9]+:[12]' \
	"$bin" check "$dir/aio-late-bind-bounded.yaml" --traces "$tmp/t" --no-shrink
expect late-bind-replays 1 'the violation reproduces' \
	"$bin" replay "$tmp/t/aio-late-bind-bounded.trace.yaml"
expect nodelay-seeded-misses 0 'pass +\(expected pass' \
	"$bin" check "$dir/no-delay-chkpt-seeded.yaml" --traces "$tmp/t"
# the counterexample slow/no-delay-chkpt-bounded.yaml finds (docs/checker.md section 13)
nodelay_replay() { # CHOICES: the seeded scenario with that schedule (none: the seeded one) and its crash state
	cat "$dir/no-delay-chkpt-seeded.yaml"
	printf 'replay: {schedule: 0, crash_point: 294, state: "p73"%s}\n' "${1:+, choices: \"$1\"}"
}
nodelay_replay 237:2,243:2 >"$tmp/nodelay.trace.yaml"
expect nodelay-choices-replay 1 'the violation reproduces' "$bin" replay "$tmp/nodelay.trace.yaml"
expect nodelay-exactness 1 'kind: exactness' "$bin" replay "$tmp/nodelay.trace.yaml"
nodelay_replay "" >"$tmp/nodelay-seeded.trace.yaml"
expect nodelay-without-choices 0 'no violation' "$bin" replay "$tmp/nodelay-seeded.trace.yaml"
expect window-never-seeded 0 "ONLY FALSE +$marker" \
	"$bin" check "$dir/umbra-race-seeded.yaml" --coverage
expect window-reached-bounded 0 "both +$marker" \
	"$bin" check "$dir/umbra-race-bounded.yaml" --coverage
delay='checkpoint waits for a shift between its WAL and its publication'
expect delay-window-never-seeded 0 "ONLY FALSE +$delay" \
	"$bin" check "$dir/l4-window-seeded.yaml" --coverage
expect delay-window-reached-bounded 0 "both +$delay" \
	"$bin" check "$dir/l4-window-bounded.yaml" --coverage
expect json-counts 0 '"strategy": "bounded".*"preemption_bound": 1.*"schedules_explored": [1-9][0-9]+' \
	bash -c "'$bin' check '$dir/umbra-race-bounded.yaml' --json - 2>/dev/null | tr -d '\n'"
# --list-states (docs/cli.md): one line per recovery, each a key
list_states() {
	"$bin" check "$dir/crash-keys-bounded.yaml" --nested 0 --list-states "$tmp/keys" \
		--json "$tmp/keys.json" >/dev/null 2>&1 || return 1
	local n bad
	n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scenarios"][0]["recoveries"])' "$tmp/keys.json")
	bad=$(grep -cvE '^[0-9a-f]{16}$' "$tmp/keys")
	echo "recoveries $n, lines $(wc -l <"$tmp/keys"), not a key $bad"
}
expect list-states-lines 0 'recoveries ([1-9][0-9]*), lines \1, not a key 0' list_states
expect list-states-jobs 2 'list-states: not with --jobs' \
	"$bin" check "$dir/crash-keys-bounded.yaml" --jobs 2 --list-states "$tmp/keys2"
expect list-states-jobs-no-file 0 'absent' bash -c "test -e '$tmp/keys2' || echo absent"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
