#!/usr/bin/env bash
# report_cli.sh: `penumbra report` from the command line (CTest report_cli, label cli): a
# report of a compare, a check and a trace whose every number equals its source's
# (tests/report_check.py), which that check fails when one number is changed; the same
# bytes twice; under 5 MB; --help; bad input (FILE:LINE:COL, exit 2, no file written).
# Usage: report_cli.sh PENUMBRA_BINARY SOURCE_DIR. Prints a line per case, exits 1 if any failed.
set -u
source "$(dirname "$0")/report_lib.sh"
report_setup "$0" "$@"

make_inputs "$bin" "$src" "$tmp"
verdict "inputs: compare, check --coverage, a trace that replays" $?
cd "$tmp" || exit 2
"$bin" report compare.json check.json trace.yaml -o r.html
verdict "report of three inputs exits 0" $?
python3 "$src/tests/report_check.py" r.html compare.json check.json replay.json
verdict "every number shown equals the JSON's" $?
size=$(stat -c %s r.html)
[[ $size -gt 20000 && $size -lt 5000000 ]]
verdict "size $size bytes, under 5 MB" $?
cp r.html r1.html && "$bin" report compare.json check.json trace.yaml -o r.html && cmp -s r.html r1.html
verdict "the same bytes twice (the same command line: it is on the page)" $?
sed 's/\(data-j="\.results\[0\]\.wal_bytes">\)\([0-9]\)/\1\27/' r.html >tampered.html
! cmp -s r.html tampered.html && ! python3 "$src/tests/report_check.py" tampered.html \
	compare.json check.json replay.json >/dev/null 2>&1
verdict "a changed number is caught" $?
"$bin" check "$src/docs/examples/mutated.yaml" --quiet --traces inv >/dev/null 2>&1
"$bin" replay inv/mutated.trace.yaml --json inv.json >/dev/null
"$bin" report inv/mutated.trace.yaml -o inv.html && grep -q 'a runtime invariant' inv.html &&
	python3 "$src/tests/report_check.py" inv.html inv.json >/dev/null
verdict "a trace of a runtime invariant (no crash: section): its run up to the event" $?
"$bin" report compare.json -o - | grep -q '<svg'
verdict "-o - writes to stdout" $?
"$bin" report --help | grep -q '^usage: penumbra report INPUT'
verdict "--help" $?

# bad input: exit 2, the message, and no file written
bad() { # NAME PATTERN ARGS...
	local name=$1 pattern=$2
	shift 2
	rm -f out.html
	"$bin" report "$@" >out.txt 2>err.txt
	local rc=$?
	[[ $rc -eq 2 && ! -e out.html ]] && grep -Eq -- "$pattern" err.txt
	local held=$?
	verdict "$name (exit $rc: $(head -n 1 err.txt | cut -c 1-100))" $held
}
printf '{"results": [\n  {"mode": 1,}\n]}\n' >broken.json
bad "JSON that does not parse" '^broken\.json:2:[0-9]+: ' broken.json -o out.html
echo '{"nothing": []}' >other.json
bad "JSON of neither kind" '^other\.json:1:1: .*neither' other.json -o out.html
bad "a scenario that is not a trace" 'ex\.yaml:1:1: not a trace' compare.json "$src/docs/examples/ex.yaml" -o out.html
bad "a file the loader rejects" 'bad\.yaml:2:11: unknown key' "$src/docs/examples/bad.yaml" -o out.html
sed 's/^  crash_point: .*/  crash_point: 99999999/' trace.yaml >far.yaml
bad "a trace past the end of its run" 'far\.yaml: .*past the end' far.yaml -o out.html
bad "no -o" "name the HTML file" compare.json
bad "no input" "name at least one input" -o out.html
bad "a missing file" 'nope\.json|nope' nope.json -o out.html
"$bin" report compare.json -o "$tmp/no/such/dir/r.html" 2>err.txt
verdict "an output that cannot be written is exit 2" $(( $? == 2 ? 0 : 1 ))

echo "report_cli: $failed failed"
[[ $failed -eq 0 ]]
