#!/usr/bin/env bash
# check_cli.sh: end-to-end tests of `penumbra check` (and of every long command on a
# terminal), CTest label "cli".
#
# Usage: check_cli.sh PENUMBRA_BINARY SOURCE_DIR CASE
#
# CASE is one of:
#   tty        check, compare and bench under a pseudo-terminal (script(1)): exit codes,
#              the summary, and the one progress line (issue 10 items 1, 20); with --jobs,
#              its work units and an ETA from them (issue 36); none when piped
#   jobs       --jobs 2 over violating scenarios (results bigger than a pipe page) ends, and
#              gives the verdicts of --jobs 1 (item 3); --coverage lists every marker (21);
#              with no --jobs, PENUMBRA_JOBS or one process per CPU the affinity mask
#              allows (issue 35, K14)
#   shrunk     a shrunk violation: JSON, report and trace name the same crash point and
#              state; seconds include the shrinking (item 10)
#   json       --json - is pure JSON on stdout; an error verdict has violation null and an
#              error key (items 12, 13)
#   badfile    a malformed file among good ones (.yaml and .yml, and a symlink loop): the
#              rest are checked, JSON and JUnit report it as an error case, exit 2 (item 14)
#   outputs    unusable --traces / --json / --junit refused before checking; a trace that
#              cannot be written is an error (item 15)
#   interrupt  SIGINT during a check (--jobs 1 and --jobs 2): exit 130, the finished ones
#              reported and written, marked interrupted, no child left (item 16)
#   many       more than one scenario: only the results not as expected are printed (line
#              and report), with how many were left out; --verbose prints every one (issue 36)
#   modes      --modes fpw,nofpw,umbra-l3: one verdict per scenario and mode in text, JSON
#              ("mode") and JUnit, each against the scenario's expect; distinct traces that
#              replay; a bad mode list is a usage error (issue 36)
#   junit      a JUnit <failure> holds the whole report: kind, page, crash point, the trace
#              and the `penumbra replay` line, which reproduces the violation (issue 36)
#   coverage   the marker "crash between a checkpoint's data fsync and its control-file
#              update" counts a crash point only after the data fsync: not at l3's SELECT
#              and MAP_WRITE, which come before the writes (issue 11)
# Needs jq, script (bsdutils), pgrep (procps), timeout (coreutils).
set -u

if [[ $# -ne 3 ]]; then
	echo "usage: $0 PENUMBRA_BINARY SOURCE_DIR CASE" >&2
	exit 2
fi
bin=$1
src=$2
case_name=$3
mut=$src/scenarios/mutants
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

fail() {
	echo "FAIL: $*"
	failed=1
}

# expect_rc WANT GOT WHAT
expect_rc() {
	[[ $2 -eq $1 ]] || fail "$3: exit $2, expected $1"
}

# expect_grep PATTERN FILE WHAT
expect_grep() {
	grep -q -- "$1" "$2" || fail "$3: '$1' not in $2: $(head -c 2000 "$2")"
}

# json_is FILE JQ_EXPR WHAT: the expression is true
json_is() {
	[[ $(jq -r "$2" "$1" 2>/dev/null) == true ]] || fail "$3: $2 is not true in $(head -c 3000 "$1")"
}

# A pseudo-terminal for stdin/stdout/stderr; its exit status is the command's.
on_tty() {
	timeout 300 script -qec "$1" /dev/null
}

# same_rate FILE WHAT: the last progress line in FILE (a terminal's bytes) and the summary
# print the same rate, within rounding (progress.h P1: one definition, one clock).
same_rate() {
	local line p s
	line=$(tr '\r' '\n' <"$1" | grep -aE 'check: [0-9]+/[0-9]+ scenarios, ' | tail -n 1)
	p=$(sed -nE 's/.*, ([0-9]+) states\/s[,].*/\1/p' <<<"$line")
	s=$(grep -aoE '\([0-9]+ states/s of wall time\)' "$1" | grep -oE '[0-9]+' | tail -n 1)
	if [[ -z $p || -z $s ]] || ((p - s > 1 || s - p > 1)); then
		fail "$2: the last progress line's rate '${p:-none}' is not the summary's '${s:-none}': $(cat -v "$1" | tail -c 1500)"
	fi
}

case_tty() {
	local out=$work/tty.txt
	on_tty "'$bin' check '$mut/fpw-off.yaml' '$mut/fpw-off-control.yaml' --nested 0 --traces '$work/tr'" >"$out" 2>&1
	expect_rc 0 $? "check on a terminal"
	expect_grep "check: 2 passed, 0 failed" "$out" "check on a terminal"
	expect_grep "check: 2/2 scenarios, .* states, .* states/s, .* elapsed" "$out" "the progress line"
	same_rate "$out" "check on a terminal"
	on_tty "'$bin' check '$mut/fpw-off.yaml' '$mut/fpw-off-control.yaml' '$mut/ack-before-flush.yaml' --jobs 2 --nested 0 --traces '$work/tr'" >"$out" 2>&1
	expect_rc 0 $? "check --jobs 2 on a terminal"
	expect_grep "check: 3 passed, 0 failed" "$out" "check --jobs 2 on a terminal"
	expect_grep "check: [0-9]/3 scenarios, " "$out" "the progress line with --jobs 2"
	on_tty "'$bin' compare '$src/scenarios/protocols/fpw-random.yaml' --modes fpw,nofpw" >"$out" 2>&1
	expect_rc 0 $? "compare on a terminal"
	expect_grep "WAL bytes" "$out" "compare on a terminal"
	on_tty "'$bin' bench '$src/scenarios/bench/ci-small.yaml' --path '$work/bench' --duration 200ms --modes fpw" >"$out" 2>&1
	expect_rc 0 $? "bench on a terminal"
	expect_grep "transactions" "$out" "bench on a terminal"
	# not a terminal: no progress line at all
	"$bin" check "$mut/fpw-off-control.yaml" --nested 0 --traces "$work/tr" >"$work/o.txt" 2>"$work/e.txt"
	expect_rc 0 $? "check, not a terminal"
	if grep -q "elapsed" "$work/e.txt" || grep -q $'\r' "$work/e.txt"; then
		fail "a progress line on a stderr that is not a terminal: $(cat -v "$work/e.txt")"
	fi
	# a scenario cut into work units: the line counts them, and the ETA comes from the units
	# done before the scenario finishes (progress.h); piped, nothing of it
	# --seeded-only: with the default exploration a scenario is one unit (docs/checker.md 13)
	local big=("$src/bench/jobs-big.yaml" --jobs 2 --unit-states 64 --nested 0 --points-every 4 --seeded-only)
	on_tty "'$bin' check ${big[*]} --traces '$work/tr'" >"$out" 2>&1
	expect_rc 0 $? "check --jobs 2 of one scenario on a terminal"
	same_rate "$out" "check --jobs 2 of one scenario on a terminal"
	tr '\r' '\n' <"$out" >"$work/lines.txt"
	grep -aEq "check: 0/1 scenarios, [0-9]+/[0-9]+ units, .*, ETA [0-9]+:[0-9]{2}$" "$work/lines.txt" ||
		fail "no ETA from the units done before the scenario finished: $(grep -a 'check: ' "$work/lines.txt" | head -5)"
	grep -aEq "check: 1/1 scenarios, ([0-9]+)/\1 units, .*, done$" "$work/lines.txt" ||
		fail "the last progress line does not count every unit done: $(grep -a 'check: ' "$work/lines.txt" | tail -2)"
	# a bounded search cut into parts: the schedules of each part done count from then on, so
	# the count never falls between two lines, shows before the search ends, and ends at the
	# JSON's
	{ sed 's/transactions: 4/transactions: 6/' "$src/bench/interleavings.yaml"
	  echo "schedules: {strategy: bounded, preemption_bound: 2}"; } >"$work/search.yaml"
	on_tty "'$bin' check '$work/search.yaml' --jobs 2 --json '$work/search.json'" >"$out" 2>&1
	expect_rc 0 $? "a bounded search with --jobs 2 on a terminal"
	local counts last
	counts=$(tr '\r' '\n' <"$out" | grep -aE 'check: [0-9]+/1 scenarios, ' |
		 sed -nE 's/.* ([0-9]+) schedules, .*/\1/p')
	last=$(jq '.scenarios[0].schedules_explored' "$work/search.json")
	[[ $(tail -n 1 <<<"$counts") == "$last" ]] ||
		fail "the last progress line's schedules are not the JSON's $last: $(cat -v "$out" | tail -c 1500)"
	sort -n -c <<<"$counts" 2>/dev/null ||
		fail "the schedules fell between two progress lines: $(tr '\n' ' ' <<<"$counts")"
	tr '\r' '\n' <"$out" | grep -aEq "check: 0/1 scenarios, .* [0-9]+ schedules, .*ETA" ||
		fail "no schedules counted before the search ended: $(cat -v "$out" | tail -c 1500)"
	"$bin" check "${big[@]}" --traces "$work/tr" >"$work/o.txt" 2>"$work/e.txt"
	expect_rc 0 $? "check --jobs 2 of one scenario, piped"
	if grep -q "units\|elapsed" "$work/o.txt" "$work/e.txt" || grep -q $'\r' "$work/o.txt" "$work/e.txt"; then
		fail "a progress line in piped output: $(cat -v "$work/o.txt" "$work/e.txt")"
	fi
}

case_jobs() {
	local list=("$mut/fpw-off.yaml" "$mut/ack-before-flush.yaml" "$mut/hint-no-fpi.yaml"
		    "$mut/no-wal-before-data.yaml" "$mut/slru-header-unprotected.yaml")
	timeout 120 "$bin" check "${list[@]}" --jobs 2 --nested 0 --traces "$work/tr2" \
		--json "$work/j2.json" --coverage >"$work/o2.txt" 2>&1
	expect_rc 0 $? "check --jobs 2 (a hang here is the parent not draining its children)"
	timeout 600 "$bin" check "${list[@]}" --jobs 1 --nested 0 --traces "$work/tr1" \
		--json "$work/j1.json" --coverage >"$work/o1.txt" 2>&1
	expect_rc 0 $? "check --jobs 1"
	local v1 v2
	v1=$(jq -c '[.scenarios[] | [.name, .verdict, .crash_states, .violation.crash_point]]' "$work/j1.json")
	v2=$(jq -c '[.scenarios[] | [.name, .verdict, .crash_states, .violation.crash_point]]' "$work/j2.json")
	[[ -n $v1 && $v1 == "$v2" ]] || fail "--jobs 2 gave $v2, --jobs 1 gave $v1"
	json_is "$work/j2.json" '[.scenarios[] | .verdict == "violation"] | all and length == 5' "--jobs 2"
	# every marker in the sources is listed, reached or not, with the same counts either way
	local sites listed
	sites=$(grep -rhoE 'PN_TESTCASE\("' "$src/src" "$src/sim" "$src/model" | wc -l)
	listed=$(sed -n 's/^\([0-9]*\) markers: .*never reached$/\1/p' "$work/o2.txt")
	[[ $listed == "$sites" ]] || fail "--coverage lists $listed markers, the sources have $sites"
	expect_grep "NEVER\|ONLY" "$work/o2.txt" "--coverage names markers not seen both ways"
	diff <(grep -E '^  (both|ONLY|NEVER)' "$work/o1.txt") <(grep -E '^  (both|ONLY|NEVER)' "$work/o2.txt") \
		>/dev/null || fail "--coverage differs between --jobs 1 and --jobs 2"
	# K14: without --jobs, PENUMBRA_JOBS, else one process per CPU this process may run on
	# (nproc reads the same affinity mask), one under taskset -c 0 and with --list-states;
	# the JSON says how many (the sanitizer preset sets PENUMBRA_JOBS: unset here)
	local one=$src/scenarios/interleavings/umbra-bounded.yaml cpus
	unset PENUMBRA_JOBS
	cpus=$(nproc)
	"$bin" check "$one" --json "$work/d.json" --traces "$work/tr3" >/dev/null 2>&1
	expect_rc 0 $? "check with no --jobs"
	json_is "$work/d.json" ".jobs == $cpus" "no --jobs: one process per CPU ($cpus)"
	json_is "$work/d.json" 'has("ranks") | not' "no --jobs: no MPI ranks"
	taskset -c 0 "$bin" check "$one" --json "$work/t.json" --traces "$work/tr3" >/dev/null 2>&1
	expect_rc 0 $? "check under taskset -c 0"
	json_is "$work/t.json" '.jobs == 1' "under taskset -c 0: one process"
	"$bin" check "$one" --list-states "$work/keys.txt" --json "$work/l.json" --traces "$work/tr3" \
		>/dev/null 2>&1
	expect_rc 0 $? "--list-states with no --jobs"
	json_is "$work/l.json" '.jobs == 1' "--list-states with no --jobs: this process"
	"$bin" check "$one" --jobs 1 --list-states "$work/keys1.txt" --traces "$work/tr3" >/dev/null 2>&1
	[[ -s $work/keys.txt ]] && cmp -s "$work/keys.txt" "$work/keys1.txt" ||
		fail "--list-states with no --jobs: not the keys of --jobs 1"
	"$bin" check "$one" --jobs 3 --json "$work/3.json" --traces "$work/tr3" >/dev/null 2>&1
	json_is "$work/3.json" '.jobs == 3' "--jobs 3"
	PENUMBRA_JOBS=3 "$bin" check "$one" --json "$work/e.json" --traces "$work/tr3" >/dev/null 2>&1
	json_is "$work/e.json" '.jobs == 3' "PENUMBRA_JOBS=3"
	PENUMBRA_JOBS=3 "$bin" check "$one" --jobs 1 --json "$work/e1.json" --traces "$work/tr3" \
		>/dev/null 2>&1
	json_is "$work/e1.json" '.jobs == 1' "--jobs 1 over PENUMBRA_JOBS=3"
	PENUMBRA_JOBS= "$bin" check "$one" --json "$work/e0.json" --traces "$work/tr3" >/dev/null 2>&1
	json_is "$work/e0.json" ".jobs == $cpus" "an empty PENUMBRA_JOBS is unset"
	PENUMBRA_JOBS=two "$bin" check --help >"$work/help.txt" 2>&1
	expect_rc 0 $? "check --help whatever PENUMBRA_JOBS holds (opts.h OP5)"
	local bad
	for bad in 0 257 two; do
		PENUMBRA_JOBS=$bad "$bin" check "$one" --traces "$work/tr3" >/dev/null 2>"$work/bad.txt"
		expect_rc 2 $? "PENUMBRA_JOBS=$bad"
		expect_grep "PENUMBRA_JOBS" "$work/bad.txt" "PENUMBRA_JOBS=$bad names the variable"
	done
	v1=$(jq -c '[.scenarios[] | [.verdict, .crash_states, .recoveries, .derived]]' "$work/l.json")
	v2=$(jq -c '[.scenarios[] | [.verdict, .crash_states, .recoveries, .derived]]' "$work/d.json")
	[[ $v1 == "$v2" ]] || fail "no --jobs gave $v2, one process $v1"
}

case_shrunk() {
	local s=$mut/aio-late-bind-random.yaml tr=$work/tr
	"$bin" check "$s" --nested 0 --traces "$tr" --json "$work/j.json" >"$work/o.txt" 2>&1
	expect_rc 0 $? "check aio-late-bind-random"
	local file=$tr/aio-late-bind-random.trace.yaml
	local point state
	point=$(sed -n 's/^  crash_point: //p' "$file")
	state=$(sed -n 's/^  state: "\(.*\)"$/\1/p' "$file")
	json_is "$work/j.json" ".scenarios[0].violation.crash_point == $point" "JSON crash point = the trace's ($point)"
	json_is "$work/j.json" ".scenarios[0].violation.state == \"$state\"" "JSON state = the trace's ($state)"
	json_is "$work/j.json" ".scenarios[0].violation.found.crash_point != $point" "the first finding is kept apart"
	json_is "$work/j.json" '.scenarios[0] | .seconds >= .violation.shrink_seconds and .violation.shrink_seconds > 0' \
		"seconds include the shrinking"
	expect_grep "crash point: event $point\$" "$work/o.txt" "the report names the trace's crash point"
	expect_grep "($state)" "$work/o.txt" "the report names the trace's state"
	"$bin" replay "$file" >"$work/r.txt" 2>&1
	expect_rc 1 $? "the shrunk trace reproduces"
}

case_json() {
	"$bin" check "$mut/fpw-off.yaml" --nested 0 --traces "$work/tr" --json - >"$work/j.json" 2>"$work/e.txt"
	expect_rc 0 $? "check --json -"
	jq -e . "$work/j.json" >/dev/null || fail "stdout is not pure JSON: $(head -c 500 "$work/j.json")"
	expect_grep "VIOLATION in fpw-off" "$work/e.txt" "the report goes to stderr"
	json_is "$work/j.json" '.scenarios[0].violation | type == "object" and has("kind") and has("page") and has("crash_point") and has("trace")' \
		"violation is an object"
	printf 'name: stalls\nworkload: {kind: nosuch}\n' >"$work/bad.yaml"
	"$bin" check "$work/bad.yaml" "$mut/fpw-off-control.yaml" --nested 0 --json - >"$work/j.json" 2>"$work/e.txt"
	expect_rc 2 $? "check --json - with a bad file"
	jq -e . "$work/j.json" >/dev/null || fail "stdout is not pure JSON: $(head -c 500 "$work/j.json")"
	json_is "$work/j.json" '.scenarios[0] | .verdict == "error" and .violation == null and (.error | type == "string")' \
		"an error verdict: violation null, message in error"
	json_is "$work/j.json" '.scenarios[1] | .verdict == "pass" and .violation == null and (has("error") | not)' \
		"a pass: violation null, no error key"
}

case_badfile() {
	local d=$work/dir
	mkdir -p "$d/sub"
	cp "$mut/fpw-off-control.yaml" "$d/a.yaml"
	printf '# a malformed file\nname: broken\nstorage: {pages: [1\n' >"$d/b.yaml"
	cp "$mut/fpw-off.yaml" "$d/sub/c.yml"
	ln -s .. "$d/sub/up" # a directory loop: not followed
	"$bin" check "$d" --nested 0 --traces "$work/tr" --json "$work/j.json" --junit "$work/j.xml" \
		>"$work/o.txt" 2>"$work/e.txt"
	expect_rc 2 $? "a directory with one malformed file"
	expect_grep "b.yaml:[0-9]*:[0-9]*: " "$work/e.txt" "the loader's FILE:LINE:COL on stderr"
	json_is "$work/j.json" '[.scenarios[].verdict] == ["pass", "error", "violation"]' "every file checked, in name order"
	json_is "$work/j.json" '.scenarios[1] | .name == "b" and (.error | test("b.yaml:[0-9]+:[0-9]+: ")) and .violation == null' \
		"the malformed file is an error case"
	expect_grep '<error message=' "$work/j.xml" "JUnit <error>"
	expect_grep 'tests="3" failures="0" errors="1"' "$work/j.xml" "JUnit counts"
	expect_grep "check: 2 passed, 1 failed" "$work/o.txt" "the summary"
}

case_outputs() {
	touch "$work/file"
	local t0=$SECONDS
	"$bin" check "$mut/aio-late-bind-random.yaml" --traces "$work/file" >"$work/o.txt" 2>"$work/e.txt"
	expect_rc 2 $? "--traces is a regular file"
	expect_grep "traces" "$work/e.txt" "the message names --traces"
	"$bin" check "$mut/aio-late-bind-random.yaml" --traces "$work/file/sub" >"$work/o.txt" 2>"$work/e.txt"
	expect_rc 2 $? "--traces cannot be created"
	"$bin" check "$mut/aio-late-bind-random.yaml" --traces "$work/tr" --json "$work/file/j.json" >"$work/o.txt" 2>"$work/e.txt"
	expect_rc 2 $? "--json cannot be written"
	expect_grep "j.json" "$work/e.txt" "the message names the JSON file"
	"$bin" check "$mut/aio-late-bind-random.yaml" --traces "$work/tr" --junit "$work/file/j.xml" >"$work/o.txt" 2>"$work/e.txt"
	expect_rc 2 $? "--junit cannot be written"
	[[ ! -s $work/o.txt ]] || fail "checking started before the outputs were validated: $(cat "$work/o.txt")"
	((SECONDS - t0 < 20)) || fail "refusing the outputs took $((SECONDS - t0)) s: the check ran first"
	# a trace that cannot be written when the violation is found: an error, not exit 0
	mkdir -p "$work/tr/fpw-off.trace.yaml"
	"$bin" check "$mut/fpw-off.yaml" --nested 0 --traces "$work/tr" --json "$work/j.json" >"$work/o.txt" 2>&1
	expect_rc 2 $? "the trace cannot be written"
	json_is "$work/j.json" '.scenarios[0] | (.error | test("trace not written")) and .violation.trace == null' \
		"the lost trace is reported"
}

# interrupt_one JOBS: SIGINT once the first scenario's line is out. The two after it pass, so
# each runs its whole search (seconds): a mutant found in a few crash states can finish within
# the half second the SIGINT waits, and did once the checker got faster.
interrupt_one() {
	local jobs=$1 tag=$work/int$1
	mkdir -p "$tag"
	# job control: the background check gets its own process group and SIGINT is not
	# ignored in it (a non-interactive shell ignores SIGINT for its background jobs, and
	# penumbra keeps an ignored SIGINT ignored, as a background job should)
	set -m
	"$bin" check "$mut/fpw-off.yaml" "$src/scenarios/protocols/fpw-random.yaml" "$src/scenarios/protocols/umbra-random.yaml" \
		--verbose --jobs "$jobs" --traces "$tag/tr" --json "$tag/j.json" --junit "$tag/j.xml" \
		>"$tag/o.txt" 2>"$tag/e.txt" &
	local pid=$! i
	set +m
	for ((i = 0; i < 300; i++)); do
		grep -q "fpw-off " "$tag/o.txt" 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.5
	kill -INT "$pid"
	local t0=$SECONDS rc
	wait "$pid"
	rc=$?
	expect_rc 130 "$rc" "--jobs $jobs interrupted"
	((SECONDS - t0 < 10)) || fail "--jobs $jobs: $((SECONDS - t0)) s from SIGINT to exit"
	sleep 0.2
	if pgrep -f -- "$tag/tr" >/dev/null; then
		fail "--jobs $jobs: a child outlived the interrupted check: $(pgrep -af -- "$tag/tr")"
		pkill -KILL -f -- "$tag/tr"
	fi
	expect_grep "interrupted by SIGINT: 1 of 3 scenarios finished" "$tag/o.txt" "--jobs $jobs summary"
	json_is "$tag/j.json" '.interrupted == true and ([.scenarios[].name] == ["fpw-off"]) and (.not_finished | length == 2)' \
		"--jobs $jobs JSON"
	expect_grep '<property name="interrupted" value="true"/>' "$tag/j.xml" "--jobs $jobs JUnit property"
	[[ $(grep -c '<skipped message=' "$tag/j.xml") -eq 2 ]] || fail "--jobs $jobs JUnit: not 2 skipped cases"
}

case_interrupt() {
	interrupt_one 1
	interrupt_one 2
}

# A copy of fpw-off-control (which passes) that expects a violation: not as expected.
wrong_expectation() {
	sed 's/^name: .*/name: expects-violation/; s/verdict: pass/verdict: violation/' \
		"$mut/fpw-off-control.yaml" >"$work/wrong.yaml"
}

case_many() {
	wrong_expectation
	local list=("$mut/fpw-off.yaml" "$mut/fpw-off-control.yaml" "$work/wrong.yaml")
	"$bin" check "${list[@]}" --nested 0 --traces "$work/tr" --json "$work/j.json" >"$work/o.txt" 2>&1
	expect_rc 1 $? "three scenarios, one not as expected"
	expect_grep "^FAIL expects-violation " "$work/o.txt" "the unexpected result is printed"
	grep -q "^ok \|VIOLATION in fpw-off " "$work/o.txt" &&
		fail "results as expected printed without --verbose: $(cat "$work/o.txt")"
	expect_grep "^(2 scenarios as expected, not listed: --verbose lists every one)" "$work/o.txt" \
		"the count of the results left out"
	expect_grep "check: 2 passed, 1 failed" "$work/o.txt" "the summary"
	json_is "$work/j.json" '.scenarios | length == 3' "the JSON holds every scenario"
	"$bin" check "${list[@]}" --nested 0 --traces "$work/tr" --verbose >"$work/v.txt" 2>&1
	expect_rc 1 $? "--verbose"
	expect_grep "^ok   fpw-off " "$work/v.txt" "--verbose: a pass"
	expect_grep "^ok   fpw-off-control " "$work/v.txt" "--verbose: an expected violation"
	expect_grep "^VIOLATION in fpw-off " "$work/v.txt" "--verbose: its report"
	expect_grep "^FAIL expects-violation " "$work/v.txt" "--verbose: the unexpected one"
	grep -q "not listed" "$work/v.txt" && fail "--verbose says results were left out"
	# a single scenario is printed whatever its verdict
	"$bin" check "$mut/fpw-off.yaml" --nested 0 --traces "$work/tr" >"$work/s.txt" 2>&1
	expect_rc 0 $? "one scenario"
	expect_grep "^VIOLATION in fpw-off " "$work/s.txt" "one scenario: its report"
}

case_modes() {
	"$bin" check "$mut/fpw-off-control.yaml" --modes fpw,nofpw,umbra-l3 --nested 0 --verbose \
		--traces "$work/tr" --json "$work/j.json" --junit "$work/j.xml" >"$work/o.txt" 2>&1
	expect_rc 1 $? "--modes fpw,nofpw,umbra-l3 (nofpw is not crash-safe)"
	expect_grep "^ok   fpw-off-control.fpw .* pass " "$work/o.txt" "the fpw line"
	expect_grep "^FAIL fpw-off-control.nofpw .* violation (expected pass" "$work/o.txt" "the nofpw line"
	expect_grep "^ok   fpw-off-control.umbra-l3 .* pass " "$work/o.txt" "the umbra-l3 line"
	expect_grep "check: 2 passed, 1 failed" "$work/o.txt" "one verdict per mode"
	json_is "$work/j.json" '[.scenarios[] | [.name, .mode, .verdict, .ok]] == [["fpw-off-control.fpw", "fpw", "pass", true], ["fpw-off-control.nofpw", "nofpw", "violation", false], ["fpw-off-control.umbra-l3", "umbra-l3", "pass", true]]' \
		"JSON: a scenario per mode, its mode"
	expect_grep 'tests="3" failures="1" errors="0"' "$work/j.xml" "JUnit: a case per mode"
	expect_grep '<testcase classname="penumbra.check" name="fpw-off-control.nofpw"' "$work/j.xml" \
		"JUnit: the case's name carries the mode"
	local trace=$work/tr/fpw-off-control.nofpw.trace.yaml
	[[ -f $trace ]] || fail "no trace $trace: $(ls "$work/tr")"
	"$bin" replay "$trace" >"$work/r.txt" 2>&1
	expect_rc 1 $? "the nofpw trace reproduces"
	# without --modes, "mode" is the scenario's own protocol
	"$bin" check "$mut/fpw-off-control.yaml" --nested 0 --traces "$work/tr" --json - >"$work/j1.json" 2>/dev/null
	json_is "$work/j1.json" '.scenarios[0] | .mode == "fpw" and .name == "fpw-off-control"' "JSON mode without --modes"
	"$bin" check "$mut/fpw-off-control.yaml" --modes fpw,fpw >"$work/o.txt" 2>&1
	expect_rc 2 $? "a mode given twice"
	"$bin" check "$mut/fpw-off-control.yaml" --modes fpw,nosuch >"$work/o.txt" 2>&1
	expect_rc 2 $? "an unknown mode"
	expect_grep "nosuch" "$work/o.txt" "the message names the unknown mode"
}

case_junit() {
	wrong_expectation
	"$bin" check "$mut/fpw-off-control.yaml" --modes nofpw --nested 0 --quiet --traces "$work/tr" \
		--junit "$work/j.xml" >"$work/o.txt" 2>&1
	expect_rc 1 $? "nofpw where a pass is expected"
	local body=$work/body.txt trace=$work/tr/fpw-off-control.nofpw.trace.yaml
	sed -n '/<failure /,/<\/failure>/p' "$work/j.xml" >"$body"
	expect_grep 'message="verdict violation, expected pass">VIOLATION in fpw-off-control.nofpw' "$body" \
		"the failure opens with the report"
	expect_grep "^  kind: *checksum" "$body" "the violation's kind"
	expect_grep "^  page: *[0-9]" "$body" "the page"
	expect_grep "crash point: event [0-9]" "$body" "the crash point"
	expect_grep "^  crash state: " "$body" "the crash state"
	expect_grep "^  trace: *$trace " "$body" "the trace's path"
	local replay
	replay=$(sed -n 's/.*(\(penumbra replay [^)]*\)).*/\1/p' "$body" | head -1)
	[[ $replay == "penumbra replay $trace" ]] || fail "no replay line in the failure: $(cat "$body")"
	"$bin" ${replay#penumbra } >"$work/r.txt" 2>&1
	expect_rc 1 $? "the failure's replay line reproduces the violation"
	# a pass where a violation was expected says what was checked
	"$bin" check "$work/wrong.yaml" --nested 0 --traces "$work/tr" --junit "$work/w.xml" >/dev/null 2>&1
	expect_rc 1 $? "a pass where a violation is expected"
	expect_grep '<failure message="verdict pass, expected violation">no violation in [0-9]* crash states of [0-9]* crash points' \
		"$work/w.xml" "the failure of an unexpected pass"
}

case_coverage() {
	# l3: checkpoint_epoch pauses the run before its selection; when the script ends the
	# pause is released and the run completes. Events 33, 37 and 38 are its SELECT, 42 its
	# MAP_WRITE (before WRITING); 55-65 come after its data fsync.
	local marker="crash between a checkpoint's data fsync and its control-file update"
	local pts
	for pts in "[33, 37, 38, 42]" all; do
		cat >"$work/sel.yaml" <<EOF
name: coverage-select-l3
seed: 91
storage: {pages: 8, buffers: 4, wal_segment_size: 64KiB}
protocol: {mode: umbra, policy: l3, checksums: true}
checkpoint: {interval: 0s, max_wal_size: 0}
crash: {points: $pts, max_unsynced: 2, tear: none}
workload:
  kind: script
  script:
    - {op: update, page: 4}
    - {op: commit}
    - {op: checkpoint_epoch}
    - {op: update, page: 4}
    - {op: commit}
expect: {verdict: pass}
EOF
		"$bin" check "$work/sel.yaml" --nested 0 --coverage >"$work/c.txt" 2>&1
		expect_rc 0 $? "check coverage-select-l3 (points $pts)"
		grep -F "$marker" "$work/c.txt" >"$work/m.txt"
		if [[ $pts == all ]]; then
			expect_grep "^  both " "$work/m.txt" "points all: the marker is seen both ways"
		else
			expect_grep "^  ONLY FALSE .* 0 / 4 " "$work/m.txt" \
				"points in SELECT and MAP_WRITE only: the marker is never true"
		fi
	done
}

case "$case_name" in
tty | jobs | shrunk | json | badfile | outputs | interrupt | many | modes | junit | coverage) "case_$case_name" ;;
*)
	echo "$0: unknown case $case_name" >&2
	exit 2
	;;
esac
if ((failed)); then
	exit 1
fi
echo "ok: check_cli $case_name"
