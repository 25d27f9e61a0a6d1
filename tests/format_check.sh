#!/usr/bin/env bash
# CTest format_check_tool: scripts/format-check.sh on files of its own, whatever the state of
# the tree (CTest format checks the tree): a file it would change is listed with its diff and
# exit 1; --fix rewrites it as .clang-format says and leaves a /* clang-format off */ table
# alone; a formatted file gives exit 0; bad use exit 2; no clang-format 14, exit 77 (skip).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
check=$root/scripts/format-check.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/pn_format_check.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

"$check" --help >"$work/help" 2>&1 || fail "--help exits $?"
grep -q '^usage: scripts/format-check.sh \[--fix\] \[FILE...\]' "$work/help" || fail "--help: no usage"

# The sample: a function on one line that does not fit in 100 columns, a brace after the
# signature, a switch indented one level too deep, and a table kept as written.
cat >"$work/sample.c" <<'EOF'
#include <stdint.h>

static uint64_t sample_sum_of_two_values_with_rather_long_names(uint64_t first_value, uint64_t second_value) { return first_value + second_value; }

int sample_pick(int c) {
	switch (c) {
		case 1:
			return 10;
		default:
			return 0;
	}
}

/* clang-format off */
static const int sample_table[] = { 1,    2,
                                    30,   40 };
/* clang-format on */
EOF
cp "$work/sample.c" "$work/before.c"

"$check" "$work/sample.c" >"$work/out" 2>"$work/err"
rc=$?
if ((rc == 77)); then
	echo "format_check_tool: no clang-format 14; skipped" >&2
	exit 77
fi
((rc == 1)) || fail "unformatted file: exit $rc, expected 1"
[[ $(cat "$work/out") == "$work/sample.c" ]] || fail "unformatted file: stdout is '$(cat "$work/out")'"
grep -q '^+int sample_pick(int c)$' "$work/err" || fail "no diff of the first file on stderr"
cmp -s "$work/sample.c" "$work/before.c" || fail "the check changed the file"

"$check" --fix "$work/sample.c" >"$work/out" 2>"$work/err" || fail "--fix exits $?"
grep -q "^formatted $work/sample.c\$" "$work/out" || fail "--fix does not list the file"
# What .clang-format asks for: Linux braces, case labels at the switch's depth, a long
# one-line function broken at 100 columns with tabs, the table untouched.
printf 'int sample_pick(int c)\n{\n\tswitch (c) {\n\tcase 1: return 10;\n' >"$work/want1"
grep -A3 -x 'int sample_pick(int c)' "$work/sample.c" >"$work/got1"
cmp -s "$work/want1" "$work/got1" || fail "sample_pick formatted as: $(cat "$work/got1")"
grep -q -x $'static uint64_t sample_sum_of_two_values_with_rather_long_names(uint64_t first_value,' \
	"$work/sample.c" || fail "the long signature is not broken after its first argument"
grep -q -x $'\t\t\t\t\t\t\t\tuint64_t second_value)' "$work/sample.c" ||
	fail "the second argument is not aligned under the first (column 64, eight tabs)"
grep -q -x 'static const int sample_table\[\] = { 1,    2,' "$work/sample.c" ||
	fail "the clang-format off table was reformatted"
awk 'length($0) > 100 { exit 1 }' "$work/sample.c" || fail "a line over 100 columns is left"

"$check" "$work/sample.c" >"$work/out" 2>"$work/err"
rc=$?
((rc == 0)) || fail "formatted file: exit $rc, expected 0 ($(cat "$work/err"))"
[[ ! -s $work/out ]] || fail "formatted file is listed"

"$check" --bogus >/dev/null 2>&1
rc=$?
((rc == 2)) || fail "unknown option: exit $rc, expected 2"
"$check" "$work/missing.c" >/dev/null 2>&1
rc=$?
((rc == 2)) || fail "missing file: exit $rc, expected 2"
PN_CLANG_FORMAT=true "$check" "$work/sample.c" >/dev/null 2>"$work/err"
rc=$?
((rc == 77)) || fail "a tool that is not clang-format 14: exit $rc, expected 77"

((fails == 0)) || exit 1
echo "format_check_tool: ok"
