#!/usr/bin/env bash
# CTest module_graph_tool: scripts/module-graph.sh finds, on the fixture in tests/module_graph/
# (its README.md says what it holds), exactly the circle, the both-way pair and its names, the
# long header, the use against the layers, and no use from comments, strings, members, locals
# or a module's own static names; --check exits 1 when exceeded and 0 when not.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=scripts/module-graph.sh
fx=tests/module_graph
args=(--layers low,high --max-header-lines 5 "$fx/low" "$fx/high")
out=$("$tool" --json "${args[@]}")
python3 - "$fx" "$out" <<'PY'
import json, sys
fx, doc = sys.argv[1], json.loads(sys.argv[2])
m = lambda name: fx + "/" + name
want = {
    "circles": [{"size": 3, "modules": [m("low/a"), m("low/b"), m("low/c")]}],
    "pairs": [{"a": m("low/a"), "b": m("low/b"), "a_uses_b": ["b_put"], "b_uses_a": ["A_MAX"]}],
    "headers_over": [{"file": m("high/big.h"), "lines": 6}],
    "against_layers": [{"from": m("low/d"), "to": m("high/h"), "names": ["high_hook"]}],
    "unlayered": [],
}
bad = [k for k in want if doc[k] != want[k]]
uses = {k: v["uses"] for k, v in doc["modules"].items()}
if uses[m("low/e")] != {}:
    bad.append("low/e uses " + json.dumps(uses[m("low/e")]))
if uses[m("low/b")] != {m("low/a"): ["A_MAX"], m("low/c"): ["c_item"]}:
    bad.append("low/b uses " + json.dumps(uses[m("low/b")]))
if uses[m("high/h")] != {m("low/a"): ["a_get"]}:
    bad.append("high/h uses " + json.dumps(uses[m("high/h")]))
for k in bad:
    print("module_graph: wrong " + k + ": " + json.dumps(doc.get(k)), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# Without declarations the prototype in low/d.h is no use of high/h.
"$tool" --json --no-declarations "${args[@]}" |
	python3 -c 'import json,sys; sys.exit(1 if json.load(sys.stdin)["against_layers"] else 0)' ||
	{ echo "module_graph: --no-declarations still counts d.h's prototype" >&2; exit 1; }
# --check: within (3 modules, 1 pair) passes only without the long header and the layer use.
"$tool" --check 3 1 --max-header-lines 6 "$fx/low" "$fx/high" >/dev/null ||
	{ echo "module_graph: --check 3 1 failed within the limits" >&2; exit 1; }
for limits in "2 1" "3 0"; do
	rc=0
	"$tool" --check $limits --max-header-lines 6 "$fx/low" "$fx/high" >/dev/null || rc=$?
	[[ $rc == 1 ]] || { echo "module_graph: --check $limits exited $rc, not 1" >&2; exit 1; }
done
rc=0
"$tool" --check 3 1 "${args[@]}" >/dev/null || rc=$?
[[ $rc == 1 ]] || { echo "module_graph: --check ignored the header and the layers ($rc)" >&2; exit 1; }
rc=0
"$tool" --check 3 >/dev/null 2>&1 || rc=$?
[[ $rc == 2 ]] || { echo "module_graph: bad use exited $rc, not 2" >&2; exit 1; }
echo "module_graph: ok"
