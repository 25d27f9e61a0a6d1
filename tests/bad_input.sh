#!/usr/bin/env bash
# bad_input.sh: the hostile-input corpus test (CTest label "input").
#
# Usage: bad_input.sh PENUMBRA_BINARY DIR [COMMAND]
#
# Three kinds of case, each of which must be refused cleanly:
#   DIR/*.yaml         malformed scenarios, run as `PENUMBRA COMMAND FILE` (COMMAND: run,
#                      the default; `replay` for a corpus of traces, where a trace that
#                      loads but does not fit its run may say "penumbra replay: FILE: "
#                      unless its position is pinned);
#   DIR/traces/*.yaml  edited counterexample traces, run as `PENUMBRA replay FILE`;
#   generated cases    (COMMAND run only) made here in a temporary directory, never committed:
#                      a FIFO (to run, replay, check and report -o), a directory, a device,
#                      files above the 16 MiB cap, a million-step script, deep nesting, an
#                      alias bomb, a 10 MiB scalar...
# Each committed file's first line is "# expect: <substring>"; a second line
# "# at: LINE:COL" (or "# at: LINE:") also pins the position. A case passes when penumbra exits with status 2
# within the time bound, the first line of its stderr starts with "FILE:LINE:COLUMN: "
# (FILE exactly as passed, LINE and COLUMN decimal), and that line contains the expected
# substring (and the position, when pinned). Every run is bounded in time (timeout) and,
# unless the binary is built with AddressSanitizer (whose shadow memory needs a large
# address space), in address space (ulimit -v), so a hang or unbounded growth fails.
# The memory limit the loader checks against is pinned (PENUMBRA_MEMORY_LIMIT=8GiB) so
# that the messages do not depend on the machine.
#
# Prints one line per case (ok, or FAIL with the reason and stderr's first line), then
# "N passed, M failed". Exits 1 when any failed (or none ran), 2 on bad usage.
set -u

if [[ $# -ne 2 && $# -ne 3 ]]; then
	echo "usage: $0 PENUMBRA_BINARY DIR [COMMAND]" >&2
	exit 2
fi
bin=$1
dir=$2
cmd=${3:-run}
if [[ ! -x $bin ]]; then
	echo "$0: $bin is not an executable" >&2
	exit 2
fi
if [[ ! -d $dir ]]; then
	echo "$0: $dir is not a directory" >&2
	exit 2
fi

export PENUMBRA_MEMORY_LIMIT=8GiB
seconds=60
vmem_kib=$((4 * 1024 * 1024))
limit_vmem=true
if grep -q __asan_init "$bin" 2>/dev/null; then
	limit_vmem=false
	seconds=180 # the sanitizers make the million-element cases several times slower
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stderr_file=$work/stderr

location='^[0-9]+:[0-9]+: '
passed=0
failed=0

# run_case COMMAND FILE EXPECT [AT]: one case, judged as the header says.
run_case() {
	local command=$1 file=$2 expect=$3 at=${4:-} status first rest reason=""
	(
		if $limit_vmem; then
			ulimit -v "$vmem_kib"
		fi
		# shellcheck disable=SC2086 # COMMAND may carry options: "report -o OUT"
		exec timeout "$seconds" "$bin" $command "$file"
	) >/dev/null 2>"$stderr_file" </dev/null
	status=$?
	first=$(head -n 1 -- "$stderr_file")
	rest=${first#"$file:"}
	if [[ $status -eq 124 ]]; then
		reason="timed out after ${seconds}s"
	elif [[ $status -ne 2 ]]; then
		reason="exit status $status, expected 2"
	elif [[ $command == replay && -z $at && $first == "penumbra replay: $file: "* ]]; then
		[[ $first == *"$expect"* ]] || reason="message does not contain '$expect'"
	elif [[ $first != "$file:"* ]] || ! [[ $rest =~ $location ]]; then
		reason="stderr does not start with '$file:LINE:COLUMN: '"
	elif [[ $first != *"$expect"* ]]; then
		reason="message does not contain '$expect'"
	elif [[ -n $at && $at != *: && $rest != "$at: "* ]] || [[ $at == *: && $rest != "$at"* ]]; then
		reason="position is not $at"
	fi
	if [[ -z $reason ]]; then
		echo "ok   $file"
		passed=$((passed + 1))
	else
		echo "FAIL $file: $reason (stderr: ${first:0:300})"
		failed=$((failed + 1))
	fi
}

# A committed case: its header says what to expect.
run_file() {
	local command=$1 file=$2 expect at
	expect=$(head -n 1 -- "$file" | tr -d '\r')
	if [[ $expect != "# expect: "* ]]; then
		echo "FAIL $file: first line is not '# expect: <substring>'"
		failed=$((failed + 1))
		return
	fi
	expect=${expect#"# expect: "}
	at=$(sed -n '2s/^# at: \([0-9]*:[0-9]*\).*/\1/p' -- "$file")
	run_case "$command" "$file" "$expect" "$at"
}

shopt -s nullglob
for file in "$dir"/*.yaml; do
	run_file "$cmd" "$file"
done
if [[ $cmd != run ]]; then
	echo "$passed passed, $failed failed"
	[[ $failed -eq 0 && $passed -gt 0 ]]
	exit
fi
for file in "$dir"/traces/*.yaml; do
	run_file replay "$file"
done

# ---- generated cases ----
g=$work/gen
mkdir -p "$g"

mkfifo "$g/fifo.yaml"
run_case run "$g/fifo.yaml" "it is a FIFO (named pipe); expected a regular scenario file" 1:1
run_case replay "$g/fifo.yaml" "it is a FIFO" 1:1
run_case check "$g/fifo.yaml" "it is a FIFO (named pipe); expected a regular scenario file" 1:1
mkfifo "$g/fifo.json"
run_case "report -o $g/report.html" "$g/fifo.json" "it is a FIFO (named pipe); expected a run" 1:1
mkdir "$g/directory.json"
run_case "report -o $g/report.html" "$g/directory.json" "it is a directory" 1:1
mkdir "$g/directory.yaml"
run_case run "$g/directory.yaml" "it is a directory" 1:1
run_case run /dev/null "it is a character device" 1:1
printf '' >"$g/empty.yaml"
run_case run "$g/empty.yaml" "the file is empty" 1:1
if [[ -c /dev/zero ]]; then
	ln -s /dev/zero "$g/zero.yaml"
	run_case run "$g/zero.yaml" "it is a character device" 1:1
fi
run_case run "$g/missing.yaml" "cannot read: No such file or directory" 1:1

# above the 16 MiB cap: comments, then a growing file is not needed (a regular file's
# size is known), one byte over
{ echo "name: big"; head -c $((16 * 1024 * 1024)) /dev/zero | tr '\0' '#'; } >"$g/huge.yaml"
run_case run "$g/huge.yaml" "the file is larger than 16 MiB" 1:1
{ echo "name: big"; printf 'description: %s\n' "$(head -c $((10 * 1024 * 1024)) /dev/zero | tr '\0' x)"; } >"$g/long_scalar.yaml"
run_case run "$g/long_scalar.yaml" "description is 10485760 bytes long" 2:14
awk 'BEGIN { printf "name: s\nworkload:\n  kind: script\n  script: ["; for (i = 0; i <= 1000000; i++) printf "{op: commit},"; print "]" }' >"$g/million_steps.yaml"
run_case run "$g/million_steps.yaml" "workload.script has more than 1000000 steps" 4:
awk 'BEGIN { printf "name: s\ncrash:\n  points: ["; for (i = 0; i <= 1000000; i++) printf "%d,", i; print "]" }' >"$g/million_points.yaml"
run_case run "$g/million_points.yaml" "crash.points lists more than 1000000 event numbers"
awk 'BEGIN { printf "name: s\nseed: "; for (i = 0; i < 200000; i++) printf "["; for (i = 0; i < 200000; i++) printf "]"; print "" }' >"$g/deep_flow.yaml"
run_case run "$g/deep_flow.yaml" "nesting deeper than 32 levels" 2:
awk 'BEGIN { print "name: s"; ind = ""; for (i = 0; i < 1000; i++) { printf "%sk%d:\n", ind, i; ind = ind " " } }' >"$g/deep_block.yaml"
run_case run "$g/deep_block.yaml" "nesting deeper than 32 levels"
awk 'BEGIN { printf "name: s\nseed: "; for (i = 0; i < 100000; i++) printf "{a: "; print "" }' >"$g/deep_unclosed.yaml"
run_case run "$g/deep_unclosed.yaml" "nesting deeper than 32 levels"
{
	echo 'name: bomb'
	echo 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]'
	for i in $(seq 1 30); do echo "a$i: &a$i [*a$((i - 1)), *a$((i - 1)), *a$((i - 1)), *a$((i - 1)), *a$((i - 1)), *a$((i - 1)), *a$((i - 1)), *a$((i - 1))]"; done
} >"$g/alias_bomb.yaml"
run_case run "$g/alias_bomb.yaml" "unknown key 'a0'" 2:1
{
	echo 'name: bomb'
	echo 'description: &a0 lol'
	echo 'storage: {pages: *a0}'
} >"$g/alias_value.yaml"
run_case run "$g/alias_value.yaml" "alias '*a0' is not supported" 3:18
awk 'BEGIN { print "name: d"; for (i = 0; i < 300000; i++) print "seed: 1" }' >"$g/many_duplicates.yaml"
run_case run "$g/many_duplicates.yaml" "duplicate key 'seed' at the top level (first at 2:1)" 3:1
awk 'BEGIN { for (i = 0; i < 300000; i++) printf "k%d: 1\n", i }' >"$g/many_keys.yaml"
run_case run "$g/many_keys.yaml" "unknown key 'k0' at the top level" 1:1
awk 'BEGIN { print "name: l"; printf "description: \""; for (i = 0; i < 100000; i++) printf "\\u00e9"; print "\"" }' >"$g/escapes.yaml"
run_case run "$g/escapes.yaml" "description is 200000 bytes long" 2:14
awk 'BEGIN { for (i = 0; i < 100000; i++) print "# a comment line"; print "name: [" }' >"$g/late_error.yaml"
run_case run "$g/late_error.yaml" "YAML syntax error" 100002:1
{ printf 'name: t\n'; head -c 1000000 /dev/zero | tr '\0' '\n'; printf 'seed: -1\n'; } >"$g/blank_lines.yaml"
run_case run "$g/blank_lines.yaml" "seed is negative" 1000002:7
{ printf 'name: t\r\n'; for i in $(seq 1 2000); do printf '\xc2\x85'; done; printf '\r\nseed: -1\r\n'; } >"$g/nel_run.yaml"
run_case run "$g/nel_run.yaml" "seed is negative" 3:7

# encodings that must start the file (a committed case starts with its ASCII header)
printf '\xff\xfen\0a\0m\0e\0:\0 \0t\0\n\0' >"$g/utf16le.yaml"
run_case run "$g/utf16le.yaml" "the file looks like UTF-16 or UTF-32 (bytes 0xFF 0xFE)" 1:1
printf '\xfe\xff\0n\0a\0m\0e\0:\0 \0t\0\n' >"$g/utf16be.yaml"
run_case run "$g/utf16be.yaml" "the file looks like UTF-16 or UTF-32 (bytes 0xFE 0xFF)" 1:1
printf 'n\0a\0m\0e\0:\0 \0t\0\n\0' >"$g/utf16le_nobom.yaml"
run_case run "$g/utf16le_nobom.yaml" "the file looks like UTF-16 or UTF-32 (bytes 0x6E 0x00)" 1:1
printf '\0\0\xfe\xff\0\0\0n' >"$g/utf32be.yaml"
run_case run "$g/utf32be.yaml" "the file looks like UTF-16 or UTF-32 (bytes 0x00 0x00)" 1:1
printf '\xef\xbb\xbfname: t\nseed: -1\n' >"$g/bom_start.yaml"
run_case run "$g/bom_start.yaml" "seed is negative" 2:7

# edited traces: a real trace from docs/umbra-traces, changed
trace=$(dirname "$0")/../docs/umbra-traces/overlap-l4.trace.yaml
if [[ -f $trace ]]; then
	head -c 200 "$trace" >"$g/trace_cut.yaml"
	run_case replay "$g/trace_cut.yaml" "" ""
	sed 's/^  crash_point: .*/  crash_point: forty-five/' "$trace" >"$g/trace_point_word.yaml"
	run_case replay "$g/trace_point_word.yaml" "replay.crash_point is not a number ('forty-five')"
	sed 's/^  crash_point: .*/  crash_point: 18446744073709551616/' "$trace" >"$g/trace_point_overflow.yaml"
	run_case replay "$g/trace_point_overflow.yaml" "replay.crash_point is too large"
	sed 's/^  schedule: .*/  schedule: 7/' "$trace" >"$g/trace_schedule.yaml"
	run_case replay "$g/trace_schedule.yaml" "replay.schedule (7) is not below schedules.runs (1)"
	sed 's/^replay:/replay: 3\nx:/' "$trace" >"$g/trace_replay_scalar.yaml"
	run_case replay "$g/trace_replay_scalar.yaml" "replay is '3'; expected a mapping"
	sed '/^replay:/,$d' "$trace" >"$g/trace_no_replay.yaml"
	run_case replay "$g/trace_no_replay.yaml" "not a trace: it has no replay: section" 1:1
	sed 's/^  state: .*/  state: "t11:1\x01"/' "$trace" >"$g/trace_state_control.yaml"
	run_case replay "$g/trace_state_control.yaml" "control characters are not allowed"
	{ cat "$trace"; cat "$trace"; } >"$g/trace_twice.yaml"
	run_case replay "$g/trace_twice.yaml" "duplicate key 'name' at the top level"
	{ cat "$trace"; printf '\xef\xbb\xbf'; cat "$trace"; } >"$g/trace_joined_bom.yaml"
	run_case replay "$g/trace_joined_bom.yaml" "a byte-order mark (U+FEFF) in mid-file"
	sed 's/^  state: .*/  state: "'"$(head -c 300 /dev/zero | tr '\0' p)"'"/' "$trace" >"$g/trace_state_long.yaml"
	run_case replay "$g/trace_state_long.yaml" "replay.state is 300 bytes long"
	sed 's/^seed: .*/seed: 1e3/' "$trace" >"$g/trace_seed_exp.yaml"
	run_case replay "$g/trace_seed_exp.yaml" "seed is not a number ('1e3')"
	tr 'a' 'A' <"$trace" >"$g/trace_upper.yaml"
	run_case replay "$g/trace_upper.yaml" "unknown key"
fi

echo "$passed passed, $failed failed"
if [[ $failed -ne 0 || $passed -eq 0 ]]; then
	exit 1
fi
exit 0
