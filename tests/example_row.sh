#!/usr/bin/env bash
# example_row.sh: the example protocol row, built into the binary, checks (CTest example_row,
# label cli, seconds; example_row_full, label slow, every crash state of both scenarios).
# Adding a protocol is its file and its line in src/protocol/list.h (docs/ARCHITECTURE.md,
# "Adding a protocol"): penumbra-example (CMakeLists.txt, PN_EXAMPLE_BINARY) is the binary
# with exactly those added, docs/examples/protocol_example.c and the line PN_EXAMPLE_ROW
# enables. Then, with nothing else changed:
#   1. `penumbra help protocols` lists fpw-always with its declaration;
#   2. `check` finds the violation of its mutant (protocol_example_off.yaml, a small
#      scenario: it stops at the first violation), whose trace names the row and which check
#      replays; with --full, it also passes protocol_example.yaml at every crash state;
#   3. `compare --modes fpw,fpw-always` runs both, and fpw-always writes more images.
# Usage: example_row.sh SOURCE_DIR BIN [--full]. Exit 0 when all hold.
set -u
src=$1 bin=$2 full=${3:-}
fail() { echo "FAIL: $*"; exit 1; }
[[ -x $bin ]] || fail "no binary $bin (configure with PN_EXAMPLE_BINARY=ON)"
ex=$src/docs/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row=$("$bin" help protocols | grep '^| `fpw-always` |') || fail "help protocols lacks fpw-always"
echo "ok: $row"

scenarios=("$ex/protocol_example_off.yaml")
[[ $full == --full ]] && scenarios+=("$ex/protocol_example.yaml")
"$bin" check "${scenarios[@]}" --traces "$tmp" --quiet --jobs 1 >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out"; fail "check of the example's scenarios"; }
grep -q "^check: ${#scenarios[@]} passed, 0 failed" "$tmp/out" ||
	{ cat "$tmp/out"; fail "check's verdicts"; }
grep -q '^protocol: {mode: fpw, policy: always,' "$tmp/protocol-example-off.trace.yaml" ||
	fail "the mutant's trace does not name the row"
echo "ok: check finds protocol_example_off.yaml's violation${full:+ and passes protocol_example.yaml}"

"$bin" compare "$ex/protocol_example.yaml" --modes fpw,fpw-always --json "$tmp/c.json" \
	>/dev/null 2>&1 || fail "compare --modes fpw,fpw-always"
python3 - "$tmp/c.json" <<'PY' || fail "compare: fpw-always does not write more images than fpw"
import json, sys
r = {x["mode"]: x for x in json.load(open(sys.argv[1]))["results"]}
sys.exit(0 if r["fpw-always"]["fpi_count"] > r["fpw"]["fpi_count"] else 1)
PY
echo "ok: compare --modes fpw,fpw-always"
