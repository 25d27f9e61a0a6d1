#!/usr/bin/env bash
# states.sh: crash states judged per second (`check --nested 0`, one process) of the current
# binary and of a reference commit's, side by side from one run, with their ratio (issue 12).
# Not a test: timings are the machine's. Usage:
#   bench/states.sh [NEW_BINARY [REF_COMMIT [ROUNDS [SCENARIO...]]]]
# NEW_BINARY defaults to build-release/penumbra (built first if absent); REF_COMMIT to
# 854e4f4, built as Release in a temporary git worktree under a mktemp directory (removed at
# the end; set PN_BENCH_REF_BIN to reuse a binary already built). The scenarios default to
# scenarios/protocols/{umbra,fpw,doublewrite}-random.yaml. The two binaries run in turn,
# ROUNDS times each (default 3), so that a shared machine weighs on both alike; the best
# round of each (least CPU seconds: user + system of the process) gives states/s. The
# crash-state counts of the two must agree (the same enumeration); a line says so if not.
# "derived" is the share of the new binary's distinct states judged without a recovery of
# their own (check --derive, docs/checker.md "Derived crash states"). With PN_BENCH_MID_BIN
# set (a third binary, PN_BENCH_MID_NAME its label, default "mid"), it runs in the same
# rounds, between the two, and its states/s and the new binary's ratio to it are printed too.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
new=${1:-$here/build-release/penumbra}
ref_commit=${2:-854e4f4}
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
scenarios=("$@")
if [[ ${#scenarios[@]} -eq 0 ]]; then
	for m in umbra fpw doublewrite; do
		scenarios+=("$here/scenarios/protocols/$m-random.yaml")
	done
fi
. "$here/bench/lib.sh"
pn_bench_tmp states
pn_bench_new_ref "$ref_commit"
echo "$(pn_bench_machine); new $(
	git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet HEAD || echo +), ref $ref_commit"
TIMEFORMAT='%U %S'
# one run: prints "cpu_s states recoveries derived" of binary $1 on scenario $2
one() {
	local t
	t=$({ time "$1" check "$2" --nested 0 --jobs 1 --quiet --traces "$tmp/tr" \
		--json "$tmp/out.json" >/dev/null 2>&1; } 2>&1)
	read -r user sys <<<"$t"
	python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
print(float(sys.argv[2]) + float(sys.argv[3]), s["crash_states"], s["recoveries"],
      s.get("derived", 0))' \
		"$tmp/out.json" "$user" "$sys"
}
mid=${PN_BENCH_MID_BIN:-}
mid_name=${PN_BENCH_MID_NAME:-mid}
if [[ -n $mid ]]; then
	printf '%-26s %12s %12s %12s %10s %10s %8s %8s %8s\n' scenario states "$ref_commit/s" \
		"$mid_name/s" "new/s" "new rec/s" derived ratio "vs $mid_name"
else
	printf '%-26s %12s %12s %10s %10s %8s %8s\n' scenario states "$ref_commit/s" "new/s" \
		"new rec/s" derived ratio
fi
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b < a ? b : a) }'; }
for s in "${scenarios[@]}"; do
	best_new=1e9 best_ref=1e9 best_mid=1e9
	for ((k = 1; k <= rounds; k++)); do
		read -r cn sn rn dn < <(one "$new" "$s")
		if [[ -n $mid ]]; then
			read -r cm sm _ _ < <(one "$mid" "$s")
			best_mid=$(best "$best_mid" "$cm")
			[[ $sn == "$sm" ]] ||
				echo "note: $(basename "$s"): crash states differ: new $sn, $mid_name $sm"
		fi
		read -r cr sr rr dr < <(one "$ref" "$s")
		best_new=$(best "$best_new" "$cn")
		best_ref=$(best "$best_ref" "$cr")
	done
	[[ $sn == "$sr" ]] || echo "note: $(basename "$s"): crash states differ: new $sn, ref $sr"
	awk -v n="$(basename "$s" .yaml)" -v st="$sn" -v sr="$sr" -v rn="$rn" -v dn="$dn" \
		-v cn="$best_new" -v cr="$best_ref" -v cm="$best_mid" -v mid="${mid:+1}" 'BEGIN {
		cn = cn < 0.001 ? 0.001 : cn; cr = cr < 0.001 ? 0.001 : cr
		cm = cm < 0.001 ? 0.001 : cm
		d = rn > 0 ? 100 * dn / rn : 0; r = (st / cn) / (sr / cr)
		f = "%-26s %12d %12.0f %10.0f %10.0f %7.0f%% %7.1fx\n"
		g = "%-26s %12d %12.0f %12.0f %12.0f %10.0f %7.0f%% %7.1fx %7.2fx\n"
		if (mid) printf g, n, st, sr / cr, st / cm, st / cn, rn / cn, d, r, cm / cn
		else printf f, n, st, sr / cr, st / cn, rn / cn, d, r }'
done
