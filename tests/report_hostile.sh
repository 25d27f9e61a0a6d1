#!/usr/bin/env bash
# report_hostile.sh: `penumbra report` against hostile input (CTest report_hostile, label cli;
# issue 31 items 2, 3, 9 and 10; cli/report.h RP1-RP3):
#   markup     every string of a compare JSON, a check JSON (values at any depth, and the
#              record types, which are keys) and a trace (name, description) gets live markup
#              appended, <svg onload=alert(N)>"'&, each its own N: the page holds no markup but
#              the report's own (tests/report_markup.py) and shows every drawn field escaped;
#   corpus     tests/bad-report/*.json, each naming what it expects in its "#expect" key: a
#              value out of range, of the wrong type, too long, too many (exit 2, one line
#              "FILE: KEY is ...", no file written), or "exit 0" (a page with no live markup);
#   generated  an empty file, a blank one, a byte-order mark alone, one before a JSON (read),
#              a file one byte over 16 MiB, a series of 20000 samples and 1000 checkpoints
#              (drawn through 256 and 128, said so), too many scenarios or markers.
# Every run is bounded in time and (without ASan) in address space.
# Usage: report_hostile.sh PENUMBRA_BINARY SOURCE_DIR. A line per case; exits 1 if any failed.
set -u
source "$(dirname "$0")/report_lib.sh"
report_setup "$0" "$@"
markup="python3 $src/tests/report_markup.py"
limit_vmem=true
grep -q __asan_init "$bin" 2>/dev/null && limit_vmem=false

# report ARGS...: the binary under a time bound (and an address-space bound), stderr to err.txt
report() {
	(
		if $limit_vmem; then
			ulimit -v $((4 * 1024 * 1024))
		fi
		exec timeout 120 "$bin" report "$@"
	) >out.txt 2>err.txt </dev/null
}

# refused NAME FILE EXPECT: exit 2, no page, stderr's first line "FILE: ..." or
# "FILE:LINE:COL: ..." (LINE, COL >= 1) holding EXPECT, and no other line
refused() {
	local name=$1 file=$2 expect=$3 rc first
	rm -f page.html
	report "$file" -o page.html
	rc=$?
	first=$(head -n 1 err.txt)
	[[ $rc -eq 2 && ! -e page.html && $(wc -l <err.txt) -eq 1 && $first == "$file:"* &&
		$first == *"$expect"* ]] &&
		[[ ${first#"$file:"} =~ ^(\ |[1-9][0-9]*:[1-9][0-9]*:\ ) ]]
	verdict "$name (exit $rc: ${first:0:150})" $?
}

# drawn NAME FILE... : exit 0, a page with no live markup
drawn() {
	local name=$1
	shift
	rm -f page.html
	report "$@" -o page.html && $markup check page.html >markup.txt
	local held=$?
	verdict "$name ($(cat err.txt markup.txt | head -n 1 | cut -c 1-150))" $held
}

make_inputs "$bin" "$src" "$tmp"
verdict "inputs: compare, check --coverage, a trace that replays" $?
cd "$tmp" || exit 2

# ---- markup in every string of every kind of input ----
$markup inject compare.json compare-m.json >compare-m.map &&
	$markup inject check.json check-m.json >check-m.map &&
	$markup inject-yaml trace.yaml trace-m.yaml >trace-m.map
verdict "markup injected: $(cat ./*-m.map | wc -l) strings" $?
# the N of the first field that matches a pattern, in one of the maps
n_of() { grep -E -m 1 "^[0-9]+ $2\$" "$1" | cut -d ' ' -f 1; }
shown=(
	"$(n_of compare-m.map '\.results\[0\]\.scenario')"
	"$(n_of compare-m.map '\.results\[0\]\.mode')" "$(n_of compare-m.map '\.results\[1\]\.mode')"
	"$(n_of compare-m.map '\.results\[2\]\.mode')"
	"$(n_of compare-m.map '\.results\[0\]\.records\.Heap/HOT_UPDATE \(key\)')"
	"$(n_of check-m.map '\.scenarios\[0\]\.name')" "$(n_of check-m.map '\.scenarios\[0\]\.verdict')"
	"$(n_of check-m.map '\.scenarios\[0\]\.expected')"
	"$(n_of check-m.map '\.scenarios\[0\]\.violation\.kind')"
	"$(n_of check-m.map '\.coverage\.markers\[0\]\.name')"
	"$(n_of check-m.map '\.coverage\.markers\[0\]\.file')"
	"$(n_of trace-m.map name)"
)
rm -f page.html
report compare-m.json check-m.json trace-m.yaml -o page.html
verdict "a report of the three, markup in every string, exits 0 ($(head -c 100 err.txt))" $?
$markup check page.html "${shown[@]}"
verdict "no live markup on the page; the ${#shown[@]} fields drawn show it escaped" $?
! grep -q '<svg onload' page.html
verdict "no '<svg onload' anywhere on the page" $?

# ---- the committed corpus ----
cp "$src"/tests/bad-report/*.json .
python3 -c 'import json, sys
for f in sys.argv[1:]:
    print(f.split("/")[-1] + "\t" + json.load(open(f))["#expect"])' "$src"/tests/bad-report/*.json >expect.tsv
while IFS=$'\t' read -r name expect; do
	if [[ $expect == "exit 0" ]]; then
		drawn "$name drawn" "$name"
	else
		refused "$name" "$name" "$expect"
	fi
done <expect.tsv
report markup-costs.json -o page.html && $markup check page.html 1
verdict "markup-costs.json: the mode, scenario and record type shown escaped" $?

# ---- generated ----
printf '' >empty.json
refused "an empty file" empty.json "1:1: the file is empty; expected a run, compare or check JSON"
printf ' \n\t\r\n' >blank.json
refused "a blank file" blank.json "1:1: the file is blank (only white space); expected"
printf '\xef\xbb\xbf' >bom-only.json
refused "a byte-order mark alone" bom-only.json "1:1: the file is empty but for a byte-order mark"
printf '\xef\xbb\xbf\n' >bom-blank.yaml
refused "a byte-order mark and a line break" bom-blank.yaml "1:1: the file is blank"
{ printf '\xef\xbb\xbf'; cat compare.json; } >bom.json
report bom.json -o bom.html && report compare.json -o plain.html &&
	cmp -s <(sed -E '/id="provenance"|<code>[0-9a-f]{16}<\/code>/d; s/bom\.json/X/g' bom.html) \
		<(sed -E '/id="provenance"|<code>[0-9a-f]{16}<\/code>/d; s/compare\.json/X/g' plain.html)
verdict "a byte-order mark before a JSON is skipped: the same page (but for the command line and the input's hash)" $?
printf '\xef\xbb\xbf{"results": [\n  {"mode": 1,}\n]}\n' >bom-broken.json
refused "a byte-order mark, then JSON that does not parse: its position" bom-broken.json \
	"bom-broken.json:2:"
printf '{"results": [\n\xff]}\n' >not-utf8.json
refused "a byte that is not UTF-8 first on its line: column 1, not 0" not-utf8.json \
	"not-utf8.json:2:1: unable to decode byte 0xff"
printf '{"results": "a\\\n"}' >escape.json
refused "jansson quoting a line break: on one line" escape.json "escape.json:2:1: invalid escape near '\"a\\\\n'"
{ printf '{"results": []}'; head -c $((16 * 1024 * 1024 - 15 + 1)) /dev/zero | tr '\0' ' '; } >big.json
refused "a JSON one byte over 16 MiB" big.json "1:1: the file is larger than 16 MiB"
{ printf '{"results": []}'; head -c $((16 * 1024 * 1024 - 15)) /dev/zero | tr '\0' ' '; } >at-limit.json
report at-limit.json -o page.html
verdict "a JSON of exactly 16 MiB is read" $?

python3 - compare.json long.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    s = r["series"]
    n = 20000
    for col, v in list(s.items()):
        if isinstance(v, list) and len(v) == s["samples"]:
            s[col] = [v[-1] * i // (n - 1) for i in range(n)]
    s["samples"] = n
    m = s["checkpoint_marks"]
    s["checkpoint_marks"] = [dict(m[k % len(m)], number=k + 1) for k in range(1000)]
json.dump(d, open(sys.argv[2], "w"))
EOF
report long.json -o long.html
verdict "a series of 20000 samples and 1000 checkpoints per mode is drawn (exit $?)" $?
python3 - long.html <<'EOF'
import re, sys
page = open(sys.argv[1]).read()
lines = [len(p.split()) for p in re.findall(r'<polyline [^>]*points="([^"]*)"', page)]
marks = page.count('class="mark"')
cols = max(int(c) for c in re.findall(r'width="(\d+)" height="\d+" viewBox', page))
ok = lines and max(lines) <= 256 and marks <= 3 * 128 * 2 + 128 and cols <= 80 + 10 + 128 * 48
ok = ok and "a line is drawn through at most 256 of its samples and at most 128" in page
print(f"lines of at most {max(lines)} points, {marks} checkpoint marks, widest plot {cols} px")
sys.exit(0 if ok else 1)
EOF
verdict "  drawn through 256 samples and 128 checkpoints per line, said on the page" $?
size=$(stat -c %s long.html)
[[ $size -lt 2000000 ]]
verdict "  its page is $size bytes" $?

python3 -c '
import json
print(json.dumps({"scenarios": [{"name": "s%d" % i} for i in range(4097)]}))' >many.json
refused "4097 scenarios in a check JSON" many.json "scenarios has 4097 elements; expected at most 4096"
python3 -c '
import json
print(json.dumps({"scenarios": [], "coverage": {"markers": [{"name": "m"}] * 4097}}))' >markers.json
refused "4097 coverage markers" markers.json "coverage.markers has 4097 elements; expected at most 4096"

echo "report_hostile: $failed failed"
[[ $failed -eq 0 ]]
