#!/usr/bin/env bash
# doc-modules.sh: docs/ARCHITECTURE.md's module table (section 1, the reading order, with
# its "Support files" paragraph) is true to the tree (CTest doc_modules), as doc-names.sh
# holds names:
#   - every source file the table names exists (a `dir/x_*.c` glob matches at least one);
#   - every module of the source folders appears in it: a module is x.c with x.h in the same
#     folder, or a lone .c or .h (scripts/module-graph.sh's definition); it appears when one
#     of its files is named or matched by a glob.
# The source folders are those of the layers (docs/ARCHITECTURE.md section 2): src/*, sim,
# disk, model, cli, pgcrash. tests/, fuzz/ and bench/ have READMEs of their own.
#
# Usage: scripts/doc-modules.sh [ROOT]   (default: the repository this script is in)
# Prints each file named that does not exist and each module the table does not list, as
# "docs/ARCHITECTURE.md: ...", and exits 1; 0 when the table and the tree agree; 2 on bad use.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[[ -f $root/docs/ARCHITECTURE.md ]] || { echo "doc-modules: no docs/ARCHITECTURE.md in '$root'" >&2; exit 2; }
cd "$root"
exec python3 - <<'PY'
import fnmatch, os, re, sys

FOLDERS = ["src/base", "src/format", "src/engine", "src/protocol", "src/workload",
           "src/scenario", "sim", "disk", "model", "cli", "pgcrash"]
DOC = "docs/ARCHITECTURE.md"

text = open(DOC, encoding="utf-8").read()
start = text.index("## 1. Reading order")
end = text.index("\n## 2.", start)
table = text[start:end]
named = sorted(set(re.findall(r"`((?:[A-Za-z0-9_]+/)+[A-Za-z0-9_*]+\.[ch])`", table)))

files = []
for folder in FOLDERS:
    for name in sorted(os.listdir(folder)):
        if name.endswith((".c", ".h")) and os.path.isfile(os.path.join(folder, name)):
            files.append(folder + "/" + name)

bad = []
covered = set()
for n in named:
    match = [f for f in files if fnmatch.fnmatchcase(f, n)] if "*" in n else (
        [n] if os.path.isfile(n) else [])
    if not match:
        bad.append(DOC + ": names `" + n + "`, which " +
                   ("matches no file" if "*" in n else "does not exist"))
    covered.update(match)

modules = {}
for f in files:
    modules.setdefault(f[:-2], []).append(f)
for stem, fs in sorted(modules.items()):
    if not covered.intersection(fs):
        bad.append(DOC + ": section 1 does not list the module " + " / ".join(sorted(fs)))

for line in bad:
    print(line)
sys.exit(1 if bad else 0)
PY
