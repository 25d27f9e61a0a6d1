#!/usr/bin/env bash
# format-check.sh: the C sources are as clang-format 14 writes them with the repository's
# .clang-format (CTest format; README.md, "Code format").
#
#   scripts/format-check.sh [--fix] [FILE...]
#
# FILEs default to every *.c and *.h under src/ sim/ disk/ model/ cli/ tests/ bench/ fuzz/
# (sources only: builds live in build*/, outside those folders), except tests/module_graph/:
# the input of tests/module_graph.sh, whose line counts that test asserts (a header of 6
# lines with three blank ones). Without --fix, lists each
# file that clang-format would change, shows the diff of the first (its first 40 lines) and
# exits 1; exits 0 when none would change. With --fix, rewrites those files in place and
# lists them. Exit 2 on bad use or a missing FILE; 77 (CTest's skip) when no clang-format 14
# is found: another version formats differently, so its verdict would be noise.
# Environment: PN_CLANG_FORMAT, the clang-format to run (default clang-format-14, else
# clang-format when that is version 14).
set -euo pipefail

usage() {
	cat <<'EOF'
usage: scripts/format-check.sh [--fix] [FILE...]
  checks that the C sources are formatted as .clang-format says (clang-format 14);
  lists the files that differ, shows the first diff, exits 1 if any differ
  --fix     rewrite those files in place instead
  FILE...   only these files (default: *.c, *.h of src sim disk model cli tests bench fuzz)
EOF
}

fix=false
files=()
for arg in "$@"; do
	case $arg in
	--fix) fix=true ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "format-check: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
	*) files+=("$arg") ;;
	esac
done
for f in "${files[@]}"; do
	[[ -f $f ]] || { echo "format-check: $f: no such file" >&2; exit 2; }
done

root=$(cd "$(dirname "$0")/.." && pwd)
style=$root/.clang-format
[[ -f $style ]] || { echo "format-check: $style is missing" >&2; exit 2; }

tool=${PN_CLANG_FORMAT:-}
if [[ -z $tool ]]; then
	for t in clang-format-14 clang-format; do
		if command -v "$t" >/dev/null; then tool=$t; break; fi
	done
fi
if [[ -z $tool ]] || ! command -v "$tool" >/dev/null; then
	echo "format-check: no clang-format found (scripts/deps.sh installs it); skipped" >&2
	exit 77
fi
version=$("$tool" --version)
if [[ ! $version =~ version\ 14\. ]]; then
	echo "format-check: $tool is not clang-format 14 ($version); skipped" >&2
	exit 77
fi

if ((${#files[@]} == 0)); then
	cd "$root"
	mapfile -t files < <(find src sim disk model cli tests bench fuzz \
		-path tests/module_graph -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print |
		LC_ALL=C sort)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pn_format.XXXXXX")
trap 'rm -rf "$work"' EXIT
changed=()
for f in "${files[@]}"; do
	"$tool" --style="file:$style" "$f" >"$work/out" ||
		{ echo "format-check: $tool failed on $f" >&2; exit 2; }
	cmp -s "$f" "$work/out" && continue
	changed+=("$f")
	if $fix; then
		cat "$work/out" >"$f"
	elif ((${#changed[@]} == 1)); then
		diff -u --label "$f" --label "$f (formatted)" "$f" "$work/out" | head -n 40 \
			>"$work/first.diff" || true
	fi
done

if $fix; then
	for f in "${changed[@]}"; do echo "formatted $f"; done
	echo "format-check: ${#changed[@]} of ${#files[@]} files rewritten" >&2
	exit 0
fi
if ((${#changed[@]} == 0)); then
	echo "format-check: ${#files[@]} files formatted as .clang-format says" >&2
	exit 0
fi
for f in "${changed[@]}"; do echo "$f"; done
echo "format-check: ${#changed[@]} of ${#files[@]} files differ from clang-format's output;" \
	"the first:" >&2
cat "$work/first.diff" >&2
echo "format-check: scripts/format-check.sh --fix rewrites them" >&2
exit 1
