#!/usr/bin/env bash
# pgcrash.sh: `penumbra pgcrash` against the real PostgreSQL 15 (CTest label postgres;
# docs/pgcrash.md). One part per CTest test:
#   record   the recorder captures a tiny run whose log, applied to the base image, rebuilds
#            the cluster byte for byte (diff -r against the stopped server's data directory);
#            a log cut short is refused, naming the file and the byte offset;
#   hostile  a bindir that is not PostgreSQL, a work folder the server's user cannot reach,
#            a server that never starts, a full disk: each ends with a clear error and
#            exit 2, within its bound, no server process left;
#            a workload users bring that is not one (a missing file, an SQL file without
#            its marker or transactions, a folder, --sql with --pgbench, a script that
#            script_check.c refuses, with FILE:LINE:COL), --recording of a folder without
#            one or with a workload of its own: exit 2 at once, no work folder made;
#            pgbench's own scripts and one with \gset, \if, casts pass that check;
#   torn     full_page_writes=off, checksums, 512-byte sectors torn in halves: a real torn
#            page is found (the server refuses to start on a checksum failure), its trace
#            replays to the same verdict with real recovery; the JUnit failure says how;
#            penumbra report draws the trace (its ops, state, and the block PostgreSQL names);
#   jobs     one recording checked with --jobs 1 and --jobs 2 (--recording): the same
#            verdicts and counts; SIGINT stops it with exit 130, no server or state left
#            (slow);
#   workload an SQL workload (tests/pgcrash/transfer.sql) passes every state with fpw on,
#            JUnit a testcase per class; a transaction that fails ends with its error and
#            exit 2 (slow);
#   fpw      full_page_writes=on: every distinct state of a small workload recovers (slow);
#   atomic   full_page_writes=off with 8 KiB atomic writes: every state recovers (slow);
#   source   --pg-bindir on PostgreSQL 15 built from Debian's source by
#            scripts/pg-from-source.sh into pg15/ beside the binary (once: the first run
#            builds it, tens of minutes on two cores): the torn workload above gives
#            Debian's verdict (a violation: a torn page, by its checksum), and its trace
#            replays with the source build (slow).
# PostgreSQL not found is a failure, not a skip: CI installs it (scripts/deps.sh).
set -euo pipefail

if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY record|hostile|torn|jobs|workload|fpw|atomic|source" >&2
	exit 2
fi
pn=$1
part=$2
. "$(dirname "$0")/pg_lib.sh"
pg_lib_init pgcrash.sh
mnt=
cleanup() {
	[[ -n $mnt ]] && umount "$mnt" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
failed=0
fail() {
	echo "FAIL: $*" >&2
	failed=1
}

# No process of the server's user may still run on a data directory under $work.
no_leftover() {
	if pgrep -u postgres -f -- "-D $work/" >/dev/null; then
		fail "$1: a server process is left: $(pgrep -a -u postgres -f -- "-D $work/")"
		pkill -KILL -u postgres -f -- "-D $work/" || true
	fi
}

# expect_exit2 NAME WANT_IN_STDERR ARGS...: exit 2, the message, no leftover.
expect_exit2() {
	local name=$1 want=$2 rc=0
	shift 2
	timeout 300 "$pn" pgcrash "$@" >"$work/out" 2>"$work/err" || rc=$?
	[[ $rc -eq 2 ]] || fail "$name: exit $rc, not 2: $(cat "$work/err")"
	grep -q -- "$want" "$work/err" || fail "$name: no '$want' in: $(cat "$work/err")"
	no_leftover "$name"
}

small=(--transactions 2 --rows 40 --updates 2 --checkpoint-every 1 --jobs 2)
case $part in
record)
	"$pn" pgcrash --work "$work/rec" --record-only "${small[@]}" 2>/dev/null
	"$pn" pgcrash --work "$work/rec" --rebuild "$work/rebuilt"
	diff -r "$work/rec/data" "$work/rebuilt" >/dev/null ||
		fail "the log applied to the base image is not the cluster: $(diff -rq "$work/rec/data" "$work/rebuilt" | head -3)"
	size=$(stat -c %s "$work/rec/ops.log")
	head -c $((size - 3)) "$work/rec/ops.log" >"$work/cut.log"
	cp "$work/cut.log" "$work/rec/ops.log"
	expect_exit2 cut "ops.log: byte [0-9]*: " --work "$work/rec" --rebuild "$work/rebuilt2"
	;;
hostile)
	expect_exit2 bindir "/usr/bin/initdb" --pg-bindir /usr/bin --work "$work/a"
	expect_exit2 sql-missing "$work/none.sql: No such file" --sql "$work/none.sql"
	printf 'CREATE TABLE t (a int);\nINSERT INTO t VALUES (1);\n' >"$work/nomark.sql"
	expect_exit2 sql-marker "no line '-- transactions'" --sql "$work/nomark.sql"
	printf 'CREATE TABLE t (a int);\n-- transactions\n-- none\n\n' >"$work/empty.sql"
	expect_exit2 sql-empty "no transaction after it" --sql "$work/empty.sql"
	expect_exit2 sql-folder "not a regular file" --sql "$work"
	expect_exit2 pgbench-missing "$work/none: No such file" --pgbench "$work/none"
	expect_exit2 two-workloads "two workloads" --sql "$work/empty.sql" --pgbench tpcb-like
	# scripts refused before initdb (script_check.c SC1-SC4), FILE:LINE:COL (. for a backslash: grep)
	bad() { # NAME WANT OPTION TEXT
		printf '%s' "$4" >"$work/$1"
		expect_exit2 "$1" "$work/$1$2" "$3" "$work/$1" --work "$work/a"
	}
	bad empty.pgb ": empty" --pgbench $' \n\n'
	bad meta.pgb ":2:1: invalid command .sett" --pgbench $'SELECT 1;\n\\sett x 1\n'
	bad undef.pgb ":2:28: undefined variable ':bid'" --pgbench \
		$'\\set aid random(1, 10)\nSELECT :aid::int + 1 AS x, :bid;\n'
	bad func.pgb ":1:8: function 'rand'" --pgbench $'\\set x rand(1, 2)\nSELECT :x;\n'
	bad expr.pgb ":1:16: '(' not closed" --pgbench $'\\set aid random(1,\nSELECT 1;\n'
	bad if.pgb ":2:1: .if without its .endif" --pgbench $'SELECT 1;\n\\if :scale > 1\nSELECT 2;\n'
	bad gset.pgb ":1:1: .gset must follow" --pgbench $'\\gset\nSELECT 1;\n'
	bad quote.pgb ":2:8: ' not closed" --pgbench $'SELECT 1;\nSELECT \'a;\n'
	bad pipe.pgb ":1:1: .startpipeline: pgcrash" --pgbench $'\\startpipeline\nSELECT 1;\n\\endpipeline\n'
	bad sleep.pgb ":1:1: .sleep takes" --pgbench $'\\sleep 1 min\nSELECT 1;\n'
	bad paren.sql ":4:22: '(' not closed on its line" --sql \
		$'CREATE TABLE t (a int);\n-- transactions\nINSERT INTO t VALUES (1);\nINSERT INTO t VALUES (2;\n'
	bad dollar.sql ":2:4: \\$ not closed" --sql \
		$'CREATE TABLE t (a int);\nDO $x$ BEGIN NULL; END $y$;\n-- transactions\nINSERT INTO t VALUES (1);\n'
	bad empty.sql ": empty" --sql ''
	# no false alarm: pgbench's own scripts, and one with \gset, \if and a cast, pass the check
	# (the error is then the bindir's)
	for b in tpcb-like simple-update select-only; do
		"$pgbin/pgbench" --show-script=$b 2>"$work/$b.pgb"
		expect_exit2 "good-$b" "/usr/bin/initdb" --pg-bindir /usr/bin --work "$work/a" \
			--pgbench "$work/$b.pgb"
	done
	printf '%s\n' '\set n random(1, 3) * :scale' 'SELECT count(*) AS c, $q$:x$q$ FROM pg_class \gset' \
		'\if :c > 0 and :n <> 2' "SELECT ':y', (:n)::int, E'\\\\' || ARRAY[1,2][1:2]::text;" \
		'\else' '\sleep :n ms' '\endif' >"$work/good.pgb"
	expect_exit2 good "/usr/bin/initdb" --pg-bindir /usr/bin --work "$work/a" --pgbench "$work/good.pgb"
	[[ ! -e $work/a ]] || fail "a bad workload made a work folder"
	expect_exit2 recording-none "$work/none/recording.conf: No such file" --recording "$work/none"
	expect_exit2 recording-sql "not with --work, --record-only, --sql" --recording "$work" \
		--sql "$work/empty.sql"
	if [[ $(id -u) -eq 0 ]]; then
		mkdir -m 700 "$work/closed"
		expect_exit2 closed "cannot write it" --work "$work/closed/w"
	fi
	fake=$work/bin
	mkdir "$fake"
	# copies: pg_ctl and initdb look for postgres beside their own resolved path
	for t in initdb pg_ctl psql; do cp "$pgbin/$t" "$fake/$t"; done
	# a postgres that does what initdb asks and never starts a server
	cat >"$fake/postgres" <<-SH
		#!/bin/sh
		case "\$1" in --boot|--single|--check|-V|--version|--describe-config|-C) exec "$pgbin/postgres" "\$@";; esac
		while :; do sleep 1; done
	SH
	chmod 755 "$fake/postgres"
	chmod 755 "$work"
	start=$SECONDS
	expect_exit2 never-starts "not ready within 3 s" --pg-bindir "$fake" --work "$work/b" --timeout 3s
	((SECONDS - start < 200)) || fail "never-starts took $((SECONDS - start)) s"
	mnt=$work/small
	mkdir "$mnt"
	mount -t tmpfs -o size=12m tmpfs "$mnt"
	chown postgres "$mnt"
	expect_exit2 full-disk "No space left on device" --work "$mnt/w"
	;;
torn)
	rc=0
	"$pn" pgcrash --work "$work/t" --fpw off --tear halves --max-unsynced 0 --fail-fast \
		"${small[@]}" --junit "$work/junit.xml" >"$work/out" 2>/dev/null || rc=$?
	[[ $rc -eq 1 ]] || fail "fpw off: exit $rc, not 1: $(cat "$work/out")"
	grep -q "checksum\|invalid page" "$work/out" || fail "fpw off: no torn page: $(cat "$work/out")"
	trace=$(sed -n 's/^trace: //p' "$work/out")
	rc=0
	"$pn" pgcrash --replay "$trace" >"$work/replay" 2>&1 || rc=$?
	[[ $rc -eq 1 ]] || fail "replay: exit $rc, not 1: $(cat "$work/replay")"
	verdict=$(sed -n 's/^verdict: //p' "$trace")
	grep -q ": $verdict: " "$work/replay" || fail "replay: not $verdict: $(cat "$work/replay")"
	python3 - "$work/junit.xml" "$trace" <<-'PY' || fail "torn: the JUnit file: $(cat "$work/junit.xml")"
		import sys, xml.etree.ElementTree as ET
		cases = ET.parse(sys.argv[1]).getroot().findall("testsuite/testcase")
		assert len(cases) == 2, cases
		fails = [c.find("failure") for c in cases if c.find("failure") is not None]
		assert fails and any("reproduce: penumbra pgcrash --replay " + sys.argv[2] in f.text for f in fails), fails
	PY
	rc=0
	"$pn" replay "$trace" >"$work/replay2" 2>&1 || rc=$?
	[[ $rc -eq 1 ]] && grep -q ": $verdict: " "$work/replay2" ||
		fail "penumbra replay: exit $rc: $(cat "$work/replay2")"
	# the report draws it: the ops before the crash, the state, the block PostgreSQL names
	"$pn" report "$trace" -o "$work/report.html" 2>"$work/report.err" ||
		fail "report: $(cat "$work/report.err")"
	python3 - "$work/report.html" "$trace" <<-'PY' || fail "report: the pgcrash section"
		import re, sys
		page, trace = open(sys.argv[1]).read(), open(sys.argv[2]).read()
		sec = page[page.index('data-kind="pgcrash"'):]
		wants = ["The operations before the crash", "The crash state", "torn: units",
		         "The page that differs", "pgcrash --replay " + sys.argv[2]]
		missing = [w for w in wants if w not in sec]
		assert not missing, missing
		m = re.search(r"block (\d+) of relation ([\w/.]+)", trace)
		assert m, "the detail names no block"
		assert "<p>Block %s of <code>%s</code>" % m.groups() in sec, m.groups()
	PY
	no_leftover torn
	;;
jobs)
	"$pn" pgcrash --work "$work/r" --record-only --transactions 1 --rows 20 --updates 1 \
		--checkpoint-every 0 2>/dev/null
	for j in 1 2; do
		rc=0
		"$pn" pgcrash --recording "$work/r" --max-unsynced 0 --tear none --jobs $j \
			--json "$work/j$j" >"$work/out$j" 2>&1 || rc=$?
		[[ $rc -eq 0 ]] || fail "--jobs $j: exit $rc: $(cat "$work/out$j")"
	done
	python3 - "$work/j1" "$work/j2" <<-'PY' || fail "--jobs 2 is not --jobs 1"
		import json, sys
		a, b = (json.load(open(p)) for p in sys.argv[1:])
		for d in a, b:
		    del d["seconds"], d["jobs"], d["penumbra"]
		assert a == b, (a, b)
		assert a["judged"] > 10 and a["verdicts"]["pass"] == a["judged"], a
	PY
	rc=0 # SIGINT: the judges running are stopped, their servers and folders gone, exit 130
	mkdir "$work/shm" # the states' folder (run.h RN5) in a parent of this test's own
	# in a process group of its own, as a terminal's ^C reaches one: sent once a state's
	# folder is there (a judge at work), not after a fixed time the whole run may take less
	PN_PGCRASH_SCRATCH=$work/shm setsid "$pn" pgcrash \
		--recording "$work/r" --jobs 2 --max-unsynced 0 --tear none --json "$work/ji" \
		>"$work/outi" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		compgen -G "$work/shm/*/*" >/dev/null && break
		sleep 0.05
	done
	kill -INT -- "-$pid" 2>/dev/null || fail "interrupted: the run ended before a judge began"
	wait "$pid" || rc=$?
	[[ $rc -eq 130 ]] || fail "interrupted: exit $rc, not 130: $(cat "$work/outi")"
	grep -q '"interrupted": true' "$work/ji" || fail "interrupted: not in the JSON"
	compgen -G "$work/r/st*" >/dev/null && fail "interrupted: states left: $(ls "$work/r")"
	compgen -G "$work/shm/*" >/dev/null && fail "interrupted: states left: $(ls -R "$work/shm")"
	no_leftover jobs
	;;
workload)
	rc=0
	"$pn" pgcrash --work "$work/s" --sql "$(dirname "$0")/pgcrash/transfer.sql" \
		--checkpoint-every 0 --max-unsynced 0 --tear none --jobs 2 --junit "$work/s.xml" \
		--json "$work/s.json" >"$work/out" 2>&1 || rc=$?
	[[ $rc -eq 0 ]] || fail "sql: exit $rc, not 0: $(cat "$work/out")"
	python3 - "$work/s.json" "$work/s.xml" <<-'PY' || fail "sql: $(cat "$work/s.json" "$work/s.xml")"
		import json, sys, xml.etree.ElementTree as ET
		d = json.load(open(sys.argv[1]))
		assert d["verdict"] == "pass" and d["judged"] > 5 and d["verdicts"]["pass"] == d["judged"], d
		cases = ET.parse(sys.argv[2]).getroot().findall("testsuite/testcase")
		assert [c.get("name").split(": ")[1] for c in cases] == ["whole writes", "torn writes"], cases
	PY
	printf 'CREATE TABLE t (a int);\n-- transactions\nINSERT INTO t VALUES (1);\nINSERT INTO nosuch VALUES (2);\n' >"$work/bad.sql"
	expect_exit2 sql-fails 'transaction 2 failed (status 1): ERROR:  relation "nosuch"' \
		--work "$work/b" --sql "$work/bad.sql"
	;;
fpw | atomic)
	args=(--fpw on --tear halves --max-unsynced 0)
	[[ $part == atomic ]] && args=(--fpw off --sector 8192 --max-unsynced 0)
	rc=0
	"$pn" pgcrash --work "$work/p" "${args[@]}" "${small[@]}" --json "$work/j" \
		>"$work/out" 2>/dev/null || rc=$?
	[[ $rc -eq 0 ]] || fail "$part: exit $rc, not 0: $(cat "$work/out")"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"] == "pass" and d["judged"] > 10 and d["judged"] == d["verdicts"]["pass"], d' "$work/j" ||
		fail "$part: the JSON is not a pass of more than 10 judged states"
	no_leftover "$part"
	;;
source)
	bindir=$("$(dirname "$0")/../scripts/pg-from-source.sh" "$(dirname "$pn")/pg15") || {
		echo "FAIL: scripts/pg-from-source.sh failed" >&2
		exit 1
	}
	torn=(--fpw off --tear halves --max-unsynced 0 --fail-fast --jobs 1 --transactions 2
		--rows 40 --updates 2 --checkpoint-every 1)
	for side in debian source; do
		args=()
		[[ $side == source ]] && args=(--pg-bindir "$bindir")
		rc=0
		"$pn" pgcrash --work "$work/$side" "${args[@]}" "${torn[@]}" >"$work/$side.out" 2>&1 ||
			rc=$?
		[[ $rc -eq 1 ]] || fail "$side: exit $rc, not 1: $(cat "$work/$side.out")"
	done
	grep -q "^bindir: $bindir$" "$work/source/recording.conf" ||
		fail "the recording is not of $bindir: $(cat "$work/source/recording.conf")"
	# the two recordings differ (another binary writes its pages at other times), so the
	# first violation may be another state: the verdict asked is the command's (a violation)
	# and what was found (a torn page: a checksum failure, at start-up or on a read)
	for side in debian source; do
		head -n 3 "$work/$side.out"
		grep -q "^violation: " "$work/$side.out" && grep -q "checksum\|invalid page" "$work/$side.out" ||
			fail "$side: not a torn page found: $(cat "$work/$side.out")"
	done
	trace=$(sed -n 's/^trace: //p' "$work/source.out")
	source=$(sed -n 's/^verdict: //p' "$trace")
	rc=0
	"$pn" pgcrash --replay "$trace" >"$work/replay" 2>&1 || rc=$?
	[[ $rc -eq 1 ]] && grep -q ": $source: " "$work/replay" ||
		fail "the source build's trace does not replay to $source (exit $rc): $(cat "$work/replay")"
	no_leftover source
	;;
*)
	echo "$0: unknown part '$part'" >&2
	exit 2
	;;
esac
exit $failed
