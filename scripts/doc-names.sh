#!/usr/bin/env bash
# doc-names.sh: every function and source file that a comment or a doc names exists (CTest
# doc_names). Comments once named pn_ckpt_begin() and check.h, which never existed or no
# longer do; a reader following them found nothing.
#
# Usage: scripts/doc-names.sh [ROOT]   (default: the repository this script is in)
#
# What is checked, in every *.c / *.h (comments) and *.md (text) of ROOT outside build*/:
#   - an identifier `pn_x` or `PN_X` is one the code uses (the code being the sources with
#     their comments removed by the C preprocessor), a CMake target, or an environment
#     variable that the code reads;
#   - `x()` (a function, by its call-like spelling) is one the code uses;
#   - a file name `x.c` / `x.h` (or `dir/x.c`) is a file of ROOT;
#   - a citation `(dir/x.c, name)` of a sources' comment (over line breaks too), name being
#     a C identifier with an underscore, names something file x.c holds (K8 of
#     cli/cmd_check.c once sent the reader to model/check.c for a function that had moved to
#     model/run.c).
# Names of other projects (PostgreSQL, Neon) that are cited are listed in `external` below.
# A doc's lines between `<!-- doc-names: off -->` and `<!-- doc-names: on -->` are not checked:
# a plan names functions and files that do not exist yet.
# Prints each name that is not found as FILE:LINE: NAME and exits 1; 0 when all are found.
set -u

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
# Functions and files of other projects that the docs cite (PostgreSQL, Neon).
external=' pg_checksum_page() bufmgr.c pagestore_smgr.c xlog_internal.h xlogrecord.h
	xlogreader.c nbtxlog.h heapam_xlog.h xact.h pg_control.h storage_xlog.h
	pg_current_wal_lsn() pg_current_wal_insert_lsn() generic_xlog.c pg_lzcompress.c '

mapfile -t sources < <(find . -path './build*' -prune -o \( -name '*.c' -o -name '*.h' \) \
	-type f -print | sort)
mapfile -t docs < <(find . -path './build*' -prune -o -name '*.md' -type f -print | sort)
work=$(mktemp -d "${TMPDIR:-/tmp}/pn_doc_names.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The code's identifiers (comments removed), CMake's targets, every file's name.
for f in "${sources[@]}"; do
	gcc -fpreprocessed -dD -E -P "$f" 2>/dev/null
done | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\b' | sort -u >"$work/defined"
# CMake options and the environment variables the scripts read (PN_FUZZ_SEED, ...) count too
find . -path './build*' -prune -o \( -name CMakeLists.txt -o -name '*.sh' -o -name '*.json' \) \
	-type f -print0 | xargs -0 cat | grep -oE '\b(pn|PN)_[A-Za-z0-9_]+\b' | sort -u >>"$work/defined"
find . -path './build*' -prune -o -path ./.git -prune -o -type f -print |
	sed 's|.*/||' | sort -u >"$work/files"

bad=0
# One awk pass: the lists first, then each source's comments and each doc's text.
awk -v external="$external" '
function known(name, kind) {
	if (index(external, " " name " ") || index(external, "\t" name " ") ||
	    index(external, " " name "\n"))
		return 1
	if (kind == "file") {
		sub(/.*\//, "", name)
		return name in files
	}
	sub(/\(\)$/, "", name)
	return name in defined
}
function scan(text, line,    rest, tok, kind, next_ch) {
	rest = text
	while (match(rest, /[A-Za-z_][A-Za-z0-9_]*(\(\)|\.[ch])?/)) {
		tok = substr(rest, RSTART, RLENGTH)
		next_ch = substr(rest, RSTART + RLENGTH, 1)
		rest = substr(rest, RSTART + RLENGTH)
		kind = ""
		if (tok ~ /\.[ch]$/ && next_ch !~ /[A-Za-z0-9_]/)
			kind = "file"
		else if (tok ~ /\(\)$/ && tok ~ /^[a-z_][a-z0-9_]*\(\)$/)
			kind = "function"
		else if (tok ~ /^(pn|PN)_/ && tok !~ /_$/ && next_ch != "*" && tok !~ /\.[ch]$/)
			kind = "name"
		if (kind != "" && !known(tok, kind)) {
			printf "%s:%d: %s does not exist\n", FILENAME, line, tok
			bad = 1
		}
	}
}
FILENAME == ARGV[1] { defined[$0] = 1; next }
FILENAME == ARGV[2] { files[$0] = 1; next }
FNR == 1 { in_comment = 0; is_doc = FILENAME ~ /\.md$/; off = 0 }
is_doc && /<!-- doc-names: off -->/ { off = 1 }
is_doc && /<!-- doc-names: on -->/ { off = 0 }
is_doc { if (!off) scan($0, FNR); next }
{
	line = $0
	text = ""
	while (line != "") {
		if (in_comment) {
			end = index(line, "*/")
			if (!end) { text = text " " line; line = ""; break }
			text = text " " substr(line, 1, end - 1)
			line = substr(line, end + 2)
			in_comment = 0
			continue
		}
		open_ = index(line, "/*")
		slash = index(line, "//")
		if (slash && (!open_ || slash < open_)) { text = text " " substr(line, slash + 2); break }
		if (!open_) break
		line = substr(line, open_ + 2)
		in_comment = 1
	}
	if (text != "")
		scan(text, FNR)
}
END { exit bad }
' "$work/defined" "$work/files" "${sources[@]}" "${docs[@]}" || bad=1
# The citations (FILE, NAME) in the sources' comments: NAME is in FILE.
python3 - "${sources[@]}" <<'PY' || bad=1
import os, re, sys
paths = {}
for f in sys.argv[1:]:
    paths.setdefault(os.path.basename(f), []).append(f)
bad = 0
for f in sys.argv[1:]:
    text = open(f, errors="replace").read()
    for m in re.finditer(r"/\*.*?\*/", text, re.S):
        body = re.sub(r"\n\s*\*", " ", m.group(0))
        for c in re.finditer(r"\(((?:[a-z0-9_]+/)*[a-z0-9_]+\.[ch]),\s+([a-z][a-z0-9]*_[a-z0-9_]*)\)", body):
            cited, name = c.group(1), c.group(2)
            where = [p for p in paths.get(os.path.basename(cited), []) if p.endswith(cited)]
            if where and not any(re.search(r"\b%s\b" % name, open(p, errors="replace").read()) for p in where):
                line = text.count("\n", 0, m.start()) + 1
                print("%s:%d: (%s, %s) in the comment from this line: %s is not in %s"
                      % (f, line, cited, name, name, cited))
                bad = 1
sys.exit(bad)
PY
exit $bad
