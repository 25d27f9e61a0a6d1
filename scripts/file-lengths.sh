#!/usr/bin/env bash
# file-lengths.sh: no C source file over a bound (issue 33: "no .c file over 1,000 lines
# outside generated tables"; CTest file_lengths). A file that long is read in more than one
# sitting; it is split by what each part owns (src/scenario/load*.c, tests/test_cli*.c).
#
#   scripts/file-lengths.sh [ROOT [MAX]]   MAX defaults to 1000 lines
#
# Files: every *.c of ROOT outside build*/ and .git. A generated table is exempt: a file
# whose first three lines say "generated" and "do not edit" (none is committed today).
# Prints "FILE: N lines, more than MAX" per file over it and exits 1; 0 when none is; 2 on
# bad use.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
max=${2:-1000}
[[ -d $root && $max =~ ^[0-9]+$ ]] || { echo "usage: file-lengths.sh [ROOT [MAX]]" >&2; exit 2; }
cd "$root"
exec python3 - "$max" <<'PY'
import os, sys
cap = int(sys.argv[1])
bad, n = [], 0
for root, dirs, files in os.walk("."):
    dirs[:] = sorted(d for d in dirs if not d.startswith("build") and d != ".git")
    for f in sorted(files):
        if not f.endswith(".c"):
            continue
        n += 1
        path = os.path.join(root, f)[2:]
        with open(path, errors="replace") as fh:
            lines = fh.read().split("\n")
        head = " ".join(lines[:3]).lower()
        if "generated" in head and "do not edit" in head:
            continue
        count = len(lines) - 1 if lines[-1] == "" else len(lines)
        if count > cap:
            bad.append("%s: %d lines, more than %d" % (path, count, cap))
print("\n".join(bad) if bad else "file-lengths: %d .c files, none over %d lines" % (n, cap))
sys.exit(1 if bad else 0)
PY
