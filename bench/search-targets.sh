#!/usr/bin/env bash
# search-targets.sh: the bounded searches issue 35 sets targets on, run with one binary or two
# side by side (docs/performance.md). Not a test: timings are the machine's.
#   bench/search-targets.sh PENUMBRA [REF_PENUMBRA] [CASE...]
# Environment: JOBS (default 2: check --jobs), LIMIT (seconds a run may take, default 900).
# Cases (default: all but forty and the torn ones' mutant):
#   control-umbra control-fpw control-doublewrite control-l3 control-l4
#                 scenarios/interleavings/slow/control-<protocol>-nodelay-k2.yaml (K = 2)
#   k3            bench/interleavings.yaml at preemption_bound 3 (no crash section)
#   torn-umbra torn-fpw torn-doublewrite
#                 the same controls with crash.max_unsynced 4 and crash.tear sectors (K = 2)
#   torn-mutant   ckpt-active-only-bounded.yaml so changed (Umbra, mutation ckpt_active_only)
#   forty         control-umbra with 40 transactions (K = 2)
# One line per case and binary: the verdict, schedules, crash states, recovered, wall and
# user seconds ("timeout" past LIMIT); with a REF, the new binary's wall over the ref's. The
# two binaries run in turn, case by case, so a shared machine weighs on both alike.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/lib.sh"
same_usage 1 "PENUMBRA [REF_PENUMBRA] [CASE...]" "$@"
new=$1
shift
ref=
if [[ $# -gt 0 && -x $1 ]]; then
	ref=$1
	shift
fi
jobs=${JOBS:-2}
limit=${LIMIT:-900}
cases=("$@")
if [[ ${#cases[@]} -eq 0 ]]; then
	cases=(control-umbra control-fpw control-doublewrite control-l3 control-l4 k3 torn-umbra
		torn-fpw torn-doublewrite)
fi
pn_bench_tmp search_targets
il=$here/scenarios/interleavings
slow=$il/slow

# make_case NAME FILE: writes the scenario of case NAME to FILE; false for an unknown name.
make_case() {
	local name=$1 out=$2 torn='s/max_unsynced: 2, tear: none/max_unsynced: 4, tear: sectors/'
	case $name in
	control-*) cp "$slow/$name-nodelay-k2.yaml" "$out" ;;
	k3)
		grep -v '^schedules:' "$here/bench/interleavings.yaml" >"$out"
		echo "schedules: {strategy: bounded, preemption_bound: 3}" >>"$out"
		;;
	torn-mutant) sed -e "$torn" "$il/ckpt-active-only-bounded.yaml" >"$out" ;;
	torn-*) sed -e "$torn" "$slow/control-${name#torn-}-nodelay-k2.yaml" >"$out" ;;
	forty) sed -e 's/transactions: 12/transactions: 40/' "$slow/control-umbra-nodelay-k2.yaml" >"$out" ;;
	*) return 1 ;;
	esac
}

# run_case BIN FILE TAG: one line; sets $wall (empty when the run did not finish).
run_case() {
	local bin=$1 file=$2 tag=$3 t rc elapsed user
	TIMEFORMAT='%R %U'
	wall=
	rm -f "$tmp/out.json" # a run that writes none must not show the case before it
	t=$( { time timeout "$limit" "$bin" check "$file" --no-shrink --quiet --jobs "$jobs" \
		--traces "$tmp/tr" --json "$tmp/out.json" >/dev/null 2>&1; } 2>&1 )
	rc=$?
	read -r elapsed user <<<"$t"
	if [[ $rc -eq 124 ]]; then
		printf '%-4s timeout after %s s\n' "$tag" "$limit"
		return
	fi
	if [[ $rc -gt 1 || ! -s $tmp/out.json ]]; then
		printf '%-4s could not check (exit %s)\n' "$tag" "$rc"
		return
	fi
	wall=$elapsed
	python3 - "$tmp/out.json" "$tag" "$wall" "$user" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["scenarios"][0]
print(f"{sys.argv[2]:4} {s['verdict']:9} schedules {s.get('schedules_explored', 0):>9} "
      f"states {s['crash_states']:>11} recovered {s['recoveries']:>10} "
      f"wall {float(sys.argv[3]):8.1f} s user {float(sys.argv[4]):8.1f} s")
PY
}

echo "jobs $jobs, limit $limit s, $(pn_bench_machine)"
for name in "${cases[@]}"; do
	file=$tmp/$name.yaml
	if ! make_case "$name" "$file"; then
		echo "$0: no case $name" >&2
		exit 2
	fi
	echo "$name"
	run_case "$new" "$file" new
	new_wall=$wall
	[[ -n $ref ]] || continue
	run_case "$ref" "$file" ref
	if [[ -n $new_wall && -n $wall ]]; then
		python3 -c "import sys; print(f'     new / ref wall {float(sys.argv[1]) / float(sys.argv[2]):.3f}')" \
			"$new_wall" "$wall"
	fi
done
