#!/usr/bin/env bash
# protocol_list.sh: the CLI takes every protocol of the list (src/protocol/list.h) and each
# protocol's declaration holds where it runs (CTest protocol_list, label cli):
#   1. `penumbra help protocols` has one row per protocol (the list, as built);
#   2. `compare --modes` with every one of them runs each, one result per protocol, each
#      labelled with its name (PN_CLI_MAX_MODES comes from the list);
#   3. a script step a protocol --mode picks cannot run (truncate under pushdown) is refused
#      from its declaration: exit 2, "FILE:LINE:COL: " and the protocols that can.
# Usage: protocol_list.sh PENUMBRA_BINARY SOURCE_DIR. Exit 0 when all hold, 1 otherwise.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

names=$("$bin" help protocols | sed -n 's/^| `\([a-z0-9-]*\)` |.*/\1/p')
n=$(wc -l <<<"$names")
[[ $n -ge 9 ]] || fail "help protocols lists $n protocols: $names"
echo "ok: $n protocols: $(tr '\n' ' ' <<<"$names")"

list=$(paste -sd, <<<"$names")
"$bin" compare "$src/scenarios/protocols/fpw-random.yaml" --modes "$list" --json "$tmp/c.json" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc -eq 0 ]] || fail "compare --modes $list: exit $rc: $(head -3 "$tmp/err")"
got=$(python3 -c 'import json,sys; print("\n".join(r["mode"] for r in json.load(open(sys.argv[1]))["results"]))' "$tmp/c.json")
[[ $got == "$names" ]] || fail "compare's results are for $(tr '\n' ' ' <<<"$got")"
echo "ok: compare --modes $list: one result each"

s=$src/scenarios/truncate/truncate-regrow-fpw.yaml
"$bin" run "$s" --mode pushdown >/dev/null 2>"$tmp/err"
rc=$?
first=$(head -1 "$tmp/err")
[[ $rc -eq 2 ]] || fail "run --mode pushdown on $s: exit $rc, expected 2"
[[ $first =~ ^$s:[0-9]+:[0-9]+:\ .*op\ \'truncate\',\ which\ needs\ protocol\ fpw ]] ||
	fail "run --mode pushdown on $s says: $first"
echo "ok: $first"
