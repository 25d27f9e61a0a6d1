#!/usr/bin/env bash
# realdisk_lock.sh: one penumbra at a time on a bench / crashtest directory (disk/disk.h DK5;
# CTest label disk).
#
# Usage: realdisk_lock.sh PENUMBRA_BINARY SCENARIO
#
# While a `bench` of three modes (and then a `crashtest` of several runs) works on a
# directory, this script keeps knocking: a second penumbra on the same --path, and
# util-linux `flock -n` on its marker. Every knock made while the first command is alive
# must be refused: the lock is the command's for its whole life, not one mode's or one
# run's (it used to be dropped between modes and between runs, and another penumbra got
# in). The first command must still succeed. Exits 0 when all held, 1 otherwise.
set -u

if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY SCENARIO" >&2
	exit 2
fi
bin=$1
scenario=$2
work=$(mktemp -d "${TMPDIR:-/var/tmp}/pn_lock.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0

# Whether process $1 still runs (a zombie has closed its files: its lock is gone).
alive() {
	local stat state
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	state=${stat##*) }
	[[ ${state%% *} != Z ]]
}

# Whether the first command is still at its work: its --json file is written (non-empty)
# only after the last mode and run, just before it unlocks and exits.
working() {
	alive "$1" && [[ ! -s $json ]]
}

# Knocks until the command with pid $1 ends; $2 names it in messages. A fresh directory:
# its marker has content only once the first command holds its lock.
knock() {
	local first=$1 what=$2 knocks=0 refused=0 rc
	while [[ ! -s $dir/PENUMBRA ]] && alive "$first"; do
		sleep 0.01
	done
	while alive "$first"; do
		"$bin" bench "$scenario" --path "$dir" --duration 20ms --modes fpw \
			>"$work/second.out" 2>&1
		rc=$?
		if working "$first"; then # the second ran wholly inside the first's work
			knocks=$((knocks + 1))
			if [[ $rc -eq 2 ]] && grep -q "is in use by another penumbra" "$work/second.out"; then
				refused=$((refused + 1))
			else
				echo "FAIL: a second penumbra got into $what's directory (exit $rc):"
				cat "$work/second.out"
				failed=1
			fi
		fi
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			if flock -n "$dir/PENUMBRA" true && working "$first"; then
				echo "FAIL: the marker of $what's directory was not locked"
				failed=1
			fi
		done
	done
	echo "$what: $knocks second penumbras refused ($refused with 'in use')"
	[[ $knocks -gt 0 ]] || { echo "FAIL: $what ended before any knock"; failed=1; }
}

dir=$work/bench json=$work/bench.json
"$bin" bench "$scenario" --path "$dir" --duration 400ms --modes fpw,nofpw,umbra --json "$json" \
	>"$work/bench.out" 2>&1 &
first=$!
knock "$first" bench
wait "$first" || { echo "FAIL: the bench itself failed:"; cat "$work/bench.out"; failed=1; }

dir=$work/crashtest json=$work/crashtest.json
"$bin" crashtest "$scenario" --path "$dir" --runs 6 --max-time 150ms --modes fpw --json "$json" \
	>"$work/crash.out" 2>&1 &
first=$!
knock "$first" crashtest
wait "$first" || { echo "FAIL: the crashtest itself failed:"; cat "$work/crash.out"; failed=1; }
exit $failed
