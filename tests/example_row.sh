#!/usr/bin/env bash
# example_row.sh: the example protocol row builds into the binary and checks (CTest
# example_row, labels cli and slow: it configures and builds a tree of its own). Adding a
# protocol is its file and its line in src/protocol/list.h (docs/ARCHITECTURE.md, "Adding a
# protocol"): -DPN_EXAMPLE_ROW=ON adds exactly those, docs/examples/protocol_example.c and
# the line PN_EXAMPLE_ROW enables. Then, with nothing else changed:
#   1. `penumbra help protocols` lists fpw-always with its declaration;
#   2. `check` passes its scenario and finds its mutant's violation (whose trace check
#      replays), both as expected;
#   3. `compare --modes fpw,fpw-always` runs both, and fpw-always writes more images.
# Usage: example_row.sh SOURCE_DIR BUILD_DIR. Exit 0 when all hold.
set -u
src=$1 build=$2
fail() { echo "FAIL: $*"; exit 1; }
cmake -S "$src" -B "$build" -DPN_EXAMPLE_ROW=ON -DCMAKE_BUILD_TYPE=Debug >"$build.log" 2>&1 &&
	cmake --build "$build" --target penumbra -j2 >>"$build.log" 2>&1 ||
	{ tail -20 "$build.log"; fail "the tree with PN_EXAMPLE_ROW=ON does not build"; }
bin=$build/penumbra
ex=$src/docs/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row=$("$bin" help protocols | grep '^| `fpw-always` |') || fail "help protocols lacks fpw-always"
echo "ok: $row"

"$bin" check "$ex/protocol_example.yaml" "$ex/protocol_example_off.yaml" --traces "$tmp" \
	--quiet >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "check of the example's scenarios"; }
grep -q '^check: 2 passed, 0 failed' "$tmp/out" || { cat "$tmp/out"; fail "check's verdicts"; }
grep -q '^protocol: {mode: fpw, policy: always,' "$tmp/protocol-example-off.trace.yaml" ||
	fail "the mutant's trace does not name the row"
echo "ok: check passes protocol_example.yaml and finds protocol_example_off.yaml's violation"

"$bin" compare "$ex/protocol_example.yaml" --modes fpw,fpw-always --json "$tmp/c.json" \
	>/dev/null 2>&1 || fail "compare --modes fpw,fpw-always"
python3 - "$tmp/c.json" <<'PY' || fail "compare: fpw-always does not write more images than fpw"
import json, sys
r = {x["mode"]: x for x in json.load(open(sys.argv[1]))["results"]}
sys.exit(0 if r["fpw-always"]["fpi_count"] > r["fpw"]["fpi_count"] else 1)
PY
echo "ok: compare --modes fpw,fpw-always"
