#!/usr/bin/env bash
# suite18.sh: the wall time of issue 12's suite, scenarios/bench/suite18 (18 scenarios of 40
# transactions, 2 clients, 10 pages, 6 buffers, 4 schedules, max_unsynced 4, torn sectors,
# 200 samples; every mode, correct and mutant), fully checked at the default --nested with
# `check --jobs N`. Not a test: timings are the machine's (and a run takes minutes).
# Usage: bench/suite18.sh [PENUMBRA_BINARY [N [CHECK_ARG...]]]  (defaults:
# build-release/penumbra, N = 2). Prints each scenario's verdict, states and seconds, then the
# run's wall and CPU seconds; exit status that of check (0: every verdict as expected).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build-release/penumbra}
n=${2:-2}
shift $(($# < 2 ? $# : 2))
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_bench_suite18.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), --jobs $n"
TIMEFORMAT='%R %U %S'
t=$({ time "$bin" check "$here/scenarios/bench/suite18" --jobs "$n" "$@" --quiet \
	--traces "$tmp/tr" --json "$tmp/out.json" >"$tmp/out.txt" 2>&1; echo "rc $?" >"$tmp/rc"; } 2>&1)
read -r wall user sys <<<"$t"
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for s in d["scenarios"]:
    print("%-28s %-9s %-10s %10d states %9d recovered %8.1f s" % (s["name"],
          s.get("verdict", "?"), "ok" if s.get("ok") else "NOT AS EXPECTED",
          s.get("crash_states", 0), s.get("recoveries", 0), s.get("seconds", 0)))' "$tmp/out.json"
tail -2 "$tmp/out.txt"
awk -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN { printf "wall %.1f s, CPU %.1f s\n", w, u + s }'
read -r _ rc <"$tmp/rc"
exit "$rc"
