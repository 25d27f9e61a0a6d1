#!/usr/bin/env bash
# rule-collisions.sh: numbered rules whose name means two things (issue 33 item 5; CTest
# rule_collisions). A rule is defined where a comment line starts with its name, "X1" or
# "X1.", then text (` *   W1 LSN = ...`); the same name defined in two files is a collision.
# Each file's rules carry a prefix of their own (WF, WR, XR, DK, CL, RP, PD, MR, ...); a file
# that restates another's rules cites them ("checker.h C1: ...") rather than defining them.
#
#   scripts/rule-collisions.sh [ROOT]    prints "NAME FILE FILE ..." per collision; exit 0
#                                        when there is none, 1 otherwise
# Files: every *.c and *.h of ROOT outside build*/, .git, tests/ and docs/.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
exec python3 - <<'PY'
import collections, os, re, sys
defs = collections.defaultdict(set)
pat = re.compile(r"^\s*(?:\*|//|-)\s+([A-Z]{1,3}[0-9]{1,2}[a-z]?)\.?\s+\S")
for root, dirs, files in os.walk("."):
    dirs[:] = sorted(d for d in dirs if not d.startswith("build") and d not in (".git", "tests", "docs"))
    for f in sorted(files):
        if f.endswith((".c", ".h")):
            p = os.path.join(root, f)[2:]
            for line in open(p, errors="replace"):
                m = pat.match(line)
                if m:
                    defs[m.group(1)].add(p)
bad = sorted((r, sorted(fs)) for r, fs in defs.items() if len(fs) > 1)
for r, fs in bad:
    print(r, " ".join(fs))
sys.exit(1 if bad else 0)
PY
