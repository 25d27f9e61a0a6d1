#!/usr/bin/env bash
# bad_input.sh: the malformed-scenario corpus test (CTest label "input").
#
# Usage: bad_input.sh PENUMBRA_BINARY DIR [COMMAND]
#
# Runs `PENUMBRA run FILE` for every DIR/*.yaml. Each file's first line is
# "# expect: <substring>". A file passes when penumbra exits with status 2, the first line of
# its stderr starts with "FILE:LINE:COLUMN: " (FILE exactly as passed, LINE and COLUMN
# decimal), and that line contains the expected substring. Prints one line per file (ok, or
# FAIL with the reason and stderr's first line), then "N passed, M failed". Exits 1 when
# any failed (or none ran), 2 on bad usage. COMMAND (default run) is the command to run;
# `replay` (the malformed-trace corpus) also accepts "penumbra replay: FILE: " for a trace
# that loads but does not fit its run.
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

# A bounded run when coreutils' timeout is there: a hang is a failure, not a stuck CI job.
runner=()
if command -v timeout >/dev/null 2>&1; then
	runner=(timeout 60)
fi

stderr_file=$(mktemp)
trap 'rm -f "$stderr_file"' EXIT

location='^[0-9]+:[0-9]+: '
passed=0
failed=0
shopt -s nullglob
for file in "$dir"/*.yaml; do
	expect=$(head -n 1 -- "$file" | tr -d '\r')
	if [[ $expect != "# expect: "* ]]; then
		echo "FAIL $file: first line is not '# expect: <substring>'"
		failed=$((failed + 1))
		continue
	fi
	expect=${expect#"# expect: "}

	"${runner[@]}" "$bin" "$cmd" "$file" >/dev/null 2>"$stderr_file" </dev/null
	status=$?
	first=$(head -n 1 -- "$stderr_file")
	rest=${first#"$file:"}

	reason=""
	if [[ $status -ne 2 ]]; then
		reason="exit status $status, expected 2"
	elif [[ $cmd == replay && $first == "penumbra replay: $file: "* ]]; then
		[[ $first == *"$expect"* ]] || reason="message does not contain '$expect'"
	elif [[ $first != "$file:"* ]] || ! [[ $rest =~ $location ]]; then
		reason="stderr does not start with '$file:LINE:COLUMN: '"
	elif [[ $first != *"$expect"* ]]; then
		reason="message does not contain '$expect'"
	fi
	if [[ -z $reason ]]; then
		echo "ok   $file"
		passed=$((passed + 1))
	else
		echo "FAIL $file: $reason (stderr: $first)"
		failed=$((failed + 1))
	fi
done

echo "$passed passed, $failed failed"
if [[ $failed -ne 0 || $passed -eq 0 ]]; then
	exit 1
fi
exit 0
