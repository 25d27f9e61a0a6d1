#!/usr/bin/env bash
# jobs_death.sh: a unit whose child dies under `check --jobs` (cli/cmd_check.c K7, model/unit.h
# U5; CTest label cli). Usage: jobs_death.sh PENUMBRA_BINARY SOURCE_DIR
# With the test hook PN_TEST_KILL_UNIT=T the first scenario's first unit is killed (SIGKILL)
# the first T times it runs:
#   T=1  it runs again, and everything (JSON, JUnit, output, traces) is what --jobs 1 gives
#        (tests/jobs_same.sh, with the hook in the environment);
#   T=2  that scenario is an error naming the unit and the signal, exit 2, and the scenario
#        after it is still checked as --jobs 1 checks it: never a silent partial result.
set -u
if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY SOURCE_DIR" >&2
	exit 2
fi
bin=$1
mut=$2/scenarios/mutants
here=$(dirname "$0")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_jobs_death.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
PN_TEST_KILL_UNIT=1 "$here/jobs_same.sh" "$bin" "$mut/no-delay-chkpt.yaml" "$mut/no-delay-chkpt-control.yaml" \
	--nested 8 --unit-states 16 || fail=1
PN_TEST_KILL_UNIT=2 "$bin" check "$mut/no-delay-chkpt.yaml" "$mut/fpw-off.yaml" --jobs 2 --quiet \
	--traces "$tmp/tr" --json "$tmp/two.json" >"$tmp/out" 2>&1
rc=$?
"$bin" check "$mut/fpw-off.yaml" --quiet --traces "$tmp/tr1" --json "$tmp/one.json" >/dev/null 2>&1
python3 - "$tmp/two.json" "$tmp/one.json" <<'PY' || fail=1
import json, sys
two, one = (json.load(open(f))["scenarios"] for f in sys.argv[1:3])
first, second = two
ok = True
def need(cond, what):
    global ok
    if not cond:
        print("jobs_death: " + what)
        ok = False
need(first["verdict"] == "error" and not first["ok"], "the twice-killed unit's scenario is not an error: %s" % first)
need("failed 2 times: the checking process died of signal 9" in first.get("error", ""),
     "its error does not say the unit died twice: %r" % first.get("error"))
need(first["crash_states"] == 0 and first["violation"] is None, "a partial result was merged: %s" % first)
keys = ("verdict", "crash_points", "crash_states", "recoveries", "events")
need(all(second[k] == one[0][k] for k in keys), "the next scenario differs from --jobs 1: %s / %s" % (second, one[0]))
need(second["violation"]["state"] == one[0]["violation"]["state"], "the next scenario's violation differs")
sys.exit(0 if ok else 1)
PY
if [[ $rc -ne 2 ]]; then
	echo "jobs_death: a scenario whose unit died twice exited $rc, not 2"
	cat "$tmp/out"
	fail=1
fi
grep -q "failed 2 times" "$tmp/out" || { echo "jobs_death: the report does not name the failure"; fail=1; }
echo "jobs_death: $( ((fail)) && echo FAILED || echo "a unit killed once is run again, twice is an error")"
exit $fail
