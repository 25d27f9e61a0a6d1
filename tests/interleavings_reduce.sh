#!/usr/bin/env bash
# interleavings_reduce.sh: reduction keeps every verdict, and the crash states judged
# (docs/checker.md section 13, "What the reduction guarantees"; CTest interleavings_reduce,
# label slow, and interleavings_reduce_fast, the files named on its command line, in the
# default run).
#
# Usage: interleavings_reduce.sh PENUMBRA_BINARY FILE...
#          checks each scenario file as written (reduce: true, the default) and again with
#          `reduce: false` added to its schedules: mapping; both must give the file's expected
#          verdict. A seeded file (no schedules: line) has nothing to reduce and is skipped.
#          Each run lists its crash states (check --list-states: their keys, by content);
#          when both pass, the set of distinct keys is compared:
#          - equal, where the search is small (reduce: false explores under MAX_SCHEDULES
#            schedules);
#          For the files of PRUNE below, a third run with `prune: true` (rule RD3, not
#          sound) must judge only states among the reference's, and the line says how many
#          it misses (a known finding, issue 35);
#          - not at all where the search is larger (verdicts only: the control-*-k2 files,
#            37,000 to 141,000 schedules without reduction; the slow/ controls' key lists
#            would hold about a million keys each).
#          A violation stops each search at its first one, after different schedules: its
#          verdict alone is compared.
# Prints one line per file, then a count. Exits 1 when any differs, or none ran.
set -u
bin=${1:?usage: interleavings_reduce.sh PENUMBRA_BINARY FILE...}
shift
MAX_SCHEDULES=20000
# Files where pruning (prune: true) is measured against the reference: its fingerprint is
# blind to the pending events' times and to the scheduling and I/O PRNG streams, which decide
# the continuation of a run it cuts, and two orders of "commuting" events that its sleep sets
# take as one draw their delays in another order; so it judges fewer distinct crash states.
PRUNE=" umbra-bounded crash-keys-bounded "
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_reduce.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
verdict() { # FILE JSON KEYS: the verdict, whether expected, and the schedules explored
	"$bin" check "$1" --no-shrink --json "$2" --list-states "$3" --traces "$tmp/traces" \
		>/dev/null 2>&1
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["scenarios"][0]
print(d["verdict"], d["ok"], d.get("schedules_explored", 0))' "$2" 2>/dev/null ||
		echo "none False 0"
}
for f in "$@"; do
	grep -q '^schedules: {' "$f" || continue
	n=$((n + 1))
	name=$(basename "$f" .yaml)
	off=$tmp/$name.yaml
	sed 's/^schedules: {/schedules: {reduce: false, /' "$f" >"$off"
	read -r va oka _ <<<"$(verdict "$f" "$tmp/on.json" "$tmp/on.keys")"
	read -r vb okb sb <<<"$(verdict "$off" "$tmp/off.json" "$tmp/off.keys")"
	if [[ $va != "$vb" || $oka != True || $okb != True ]]; then
		echo "FAIL $f: reduce on: $va $oka, off: $vb $okb (verdict, as expected)"
		bad=$((bad + 1))
		continue
	fi
	sort -u "$tmp/on.keys" >"$tmp/on.set"
	sort -u "$tmp/off.keys" >"$tmp/off.set"
	kon=$(wc -l <"$tmp/on.set")
	koff=$(wc -l <"$tmp/off.set")
	extra=$(comm -23 "$tmp/on.set" "$tmp/off.set" | wc -l)
	if [[ $va != pass ]]; then
		echo "ok   $f: $va with and without reduction (verdict only: each stops at its first)"
	elif [[ $sb -ge $MAX_SCHEDULES ]]; then
		echo "ok   $f: pass both ways (verdict only: $sb schedules without reduction)"
	elif cmp -s "$tmp/on.set" "$tmp/off.set"; then
		echo "ok   $f: pass both ways, the same $kon distinct crash states"
		if [[ $PRUNE == *" $name "* ]]; then
			sed 's/^schedules: {/schedules: {prune: true, /' "$f" >"$tmp/prune.yaml"
			read -r vp okp _ <<<"$(verdict "$tmp/prune.yaml" "$tmp/p.json" "$tmp/p.keys")"
			sort -u "$tmp/p.keys" >"$tmp/p.set"
			kp=$(wc -l <"$tmp/p.set")
			pextra=$(comm -23 "$tmp/p.set" "$tmp/off.set" | wc -l)
			if [[ $vp != pass || $okp != True || $pextra -ne 0 ]]; then
				echo "FAIL $f: prune: true gives $vp ($okp), $pextra states not in the reference's"
				bad=$((bad + 1))
			else
				echo "     prune: true judges $kp of them (misses $((koff - kp)): not sound)"
			fi
		fi
	else
		echo "FAIL $f: distinct crash states differ: $kon with reduction, $koff without, $extra only with"
		bad=$((bad + 1))
	fi
done
echo "$((n - bad)) agree, $bad not"
[[ $n -gt 0 && $bad -eq 0 ]]
