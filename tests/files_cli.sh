#!/usr/bin/env bash
# files_cli.sh: every command's files, as src/base/files.h's rules F1-F5 promise (CTest
# files_cli, label cli; issue 31 items 5, 6 and 8):
#   inputs   a FIFO where a file is read (a scenario, a trace, a report input, a WAL segment
#            given or found in a directory, an import's workload.trace) is refused at once:
#            status 2, the file named, "FIFO" said, well inside a timeout (a hang fails);
#   inputs   no output replaces an input (device and inode, through a symbolic link too):
#            status 2 naming both files, the input byte for byte unchanged;
#   outputs  a write that fails (RLIMIT_FSIZE: EFBIG, a full tmpfs: ENOSPC) is status 2 (not
#            signal 25) with a message naming the file and the errno's text; no partial
#            file and no temporary is left, and an output that existed keeps its content;
#   signals  a command ended by SIGTERM leaves no temporary and no partial file.
# The tmpfs cases need mount(2) (root, as in CI); without it they are reported as skipped.
# Usage: files_cli.sh PENUMBRA_BINARY SOURCE_DIR. Prints a line per case, exits 1 if any failed.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
mnt=$tmp/mnt
cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT
failed=0
: >"$tmp/err"
verdict() { if [[ $2 == 0 ]]; then echo "ok   $1"; else echo "FAIL $1 (stderr: $(head -c 300 "$tmp/err"))"; failed=1; fi; }
cd "$tmp" || exit 2
scen=$src/scenarios/protocols/fpw-random.yaml
mutant=$src/scenarios/mutants/ack-before-flush.yaml
seg=000000010000000000000001

# pn ARGS...: penumbra with a time bound; stderr in err, status in $status.
pn() {
	timeout 20 "$bin" "$@" >/dev/null 2>"$tmp/err" </dev/null
	status=$?
}
# limited KIB ARGS...: the same under RLIMIT_FSIZE of KIB KiB; stdout and stderr go through
# a pipe (the limit would cut a file they wrote to) into err.
limited() {
	local kib=$1
	shift
	(
		ulimit -f "$kib"
		exec timeout 60 "$bin" "$@"
	) 2>&1 </dev/null | cat >"$tmp/err"
	status=${PIPESTATUS[0]}
}
refused() { [[ $status == 2 ]] && grep -q -- "$1" "$tmp/err"; }
# fresh: a new directory holding copies of the inputs, made the current one, so that each
# case starts from intact files whatever the one before did
cases=0
fresh() {
	cases=$((cases + 1))
	mkdir "$tmp/f$cases" && cp -r "$tmp/wal" "$tmp/run.json" "$tmp/s.yaml" "$tmp/imp.yaml" \
		"$tmp/imp.trace" "$tmp/f$cases/" && cp "$tmp/$trace" "$tmp/f$cases/t.trace.yaml" &&
		cd "$tmp/f$cases" || exit 2
}

# ---- setup: a run's JSON, a real-format WAL, its import, a trace ----
"$bin" run "$scen" --json run.json >/dev/null 2>&1 &&
	"$bin" run "$src/scenarios/bench/ci-vacuum.yaml" --wal-dir wal >/dev/null 2>&1 &&
	"$bin" import wal --out imp.yaml >/dev/null 2>&1 &&
	"$bin" check "$mutant" --traces traces >/dev/null 2>&1
trace=$(ls traces/*.trace.yaml 2>/dev/null | head -n 1)
[[ -f run.json && -f wal/$seg && -f imp.yaml && -f imp.trace && -n $trace ]]
ok=$?
verdict "setup: run.json, wal/$seg, imp.yaml and imp.trace, a trace" $ok
[[ $ok == 0 ]] || exit 1
cp "$scen" s.yaml

# ---- F1: a FIFO where a file is read ----
mkfifo fifo.json fifo.yaml
mkdir fifodir && cp "wal/$seg" fifodir/ && mkfifo fifodir/000000010000000000000002
mkdir fifoseg && mkfifo "fifoseg/$seg"
pn report fifo.json -o r.html
refused "fifo.json:1:1: cannot read: it is a FIFO" && [[ ! -e r.html ]]
verdict "report FIFO: status 2 at once, the file named, no page" $?
pn run fifo.yaml
refused "fifo.yaml:1:1: cannot read: it is a FIFO"
verdict "run FIFO: status 2 at once" $?
pn replay fifo.yaml
refused "fifo.yaml:1:1: cannot read: it is a FIFO"
verdict "replay FIFO: status 2 at once" $?
pn check fifo.yaml --traces traces
refused "fifo.yaml:1:1: cannot read: it is a FIFO"
verdict "check FIFO: status 2 at once" $?
pn import fifodir --stats
refused "fifodir/000000010000000000000002: cannot read: it is a FIFO (named pipe); expected a WAL segment file"
verdict "import DIR with a FIFO named like its second segment: status 2 at once" $?
pn import fifoseg --out x.yaml
refused "fifoseg/$seg: .*it is a FIFO" && [[ ! -e x.yaml ]]
verdict "import DIR whose only segment is a FIFO: status 2 at once" $?
pn import "fifoseg/$seg" --stats
refused "fifoseg/$seg: .*it is a FIFO"
verdict "import of a FIFO named like a segment: status 2 at once" $?
mkdir fifotrace && cp imp.yaml fifotrace/ && mkfifo fifotrace/imp.trace
pn run fifotrace/imp.yaml
refused "imp.trace cannot be read: it is a FIFO"
verdict "run of an import whose workload.trace is a FIFO: status 2 at once" $?

# ---- F2: no output replaces an input ----
sum() { md5sum "$@" | cut -d' ' -f1; }
fresh
before=$(sum "wal/$seg")
pn import "wal/$seg" --out "wal/$seg"
refused "cannot write 'wal/$seg': it is the input 'wal/$seg'" && [[ $(sum "wal/$seg") == "$before" ]]
verdict "import SEG --out SEG: status 2 naming both, the segment unchanged" $?
fresh
pn import wal --out "wal/$seg"
refused "it is the input 'wal/$seg'" && [[ $(sum "wal/$seg") == "$before" ]]
verdict "import DIR --out DIR/SEG: status 2, the segment unchanged" $?
fresh
ln -s "wal/$seg" seglink
pn import wal --out seglink
refused "cannot write 'seglink': it is the input 'wal/$seg'" && [[ $(sum "wal/$seg") == "$before" && -L seglink ]]
verdict "import DIR --out LINK-TO-SEG: status 2, the segment unchanged" $?
fresh
before=$(sum run.json)
pn report run.json -o run.json
refused "cannot write 'run.json': it is the input 'run.json'" && [[ $(sum run.json) == "$before" ]]
verdict "report a.json -o a.json: status 2, the input unchanged" $?
fresh
ln -s run.json runlink.json
pn report run.json -o runlink.json
refused "it is the input 'run.json'" && [[ $(sum run.json) == "$before" && -L runlink.json ]]
verdict "report a.json -o LINK-TO-a.json: status 2, the input unchanged" $?
before=$(sum s.yaml)
for opt in --json --junit; do
	fresh
	pn check s.yaml "$opt" s.yaml --traces traces
	refused "cannot write 's.yaml': it is the input 's.yaml'" && [[ $(sum s.yaml) == "$before" ]]
	verdict "check s.yaml $opt s.yaml: status 2, the input unchanged" $?
done
fresh
pn run s.yaml --json s.yaml
refused "it is the input 's.yaml'" && [[ $(sum s.yaml) == "$before" ]]
verdict "run s.yaml --json s.yaml: status 2, the input unchanged" $?
fresh
pn compare s.yaml --modes fpw,nofpw --json s.yaml
refused "it is the input 's.yaml'" && [[ $(sum s.yaml) == "$before" ]]
verdict "compare s.yaml --json s.yaml: status 2, the input unchanged" $?
fresh
before=$(sum imp.trace)
pn run imp.yaml --json imp.trace
refused "cannot write 'imp.trace': it is the input 'imp.trace'" && [[ $(sum imp.trace) == "$before" ]] &&
	! compgen -G '*.tmp*' >/dev/null
verdict "run IMPORT.yaml --json its workload.trace (read during the run): status 2, unchanged" $?
fresh
before=$(sum t.trace.yaml)
pn replay t.trace.yaml --json t.trace.yaml
refused "it is the input 't.trace.yaml'" && [[ $(sum t.trace.yaml) == "$before" ]]
verdict "replay T --json T: status 2, the trace unchanged" $?
cd "$tmp" || exit 2

# ---- F3/F5: failed writes under RLIMIT_FSIZE (EFBIG) ----
# no_leftover DIR: nothing in DIR but the names given after it
no_leftover() {
	local dir=$1
	shift
	local want=""
	[[ $# -gt 0 ]] && want=$(printf '%s\n' "$@" | LC_ALL=C sort | tr '\n' ' ')
	[[ $(ls -A "$dir" | LC_ALL=C sort | tr '\n' ' ') == "$want" ]]
}
mkdir lim && echo old >lim/old.json
limited 8 run s.yaml --json lim/old.json
refused "cannot write 'lim/old.json': File too large" && [[ $(cat lim/old.json) == old ]] &&
	no_leftover lim old.json
verdict "run --json past RLIMIT_FSIZE: status 2, EFBIG named, the old file kept, no temporary" $?
limited 8 compare s.yaml --modes fpw,nofpw --json lim/c.json
refused "cannot write 'lim/c.json': File too large" && no_leftover lim old.json
verdict "compare --json past RLIMIT_FSIZE: status 2, no file" $?
limited 8 report run.json -o lim/old.json
refused "cannot write 'lim/old.json': File too large" && [[ $(cat lim/old.json) == old ]] &&
	no_leftover lim old.json
verdict "report -o past RLIMIT_FSIZE: status 2, the old file kept" $?
limited 0 import wal --out lim/i.yaml
refused "cannot write 'lim/i.*': File too large" && no_leftover lim old.json
verdict "import --out past RLIMIT_FSIZE: status 2, neither file nor trace left" $?
limited 0 check "$mutant" --json lim/old.json --traces traces
refused "cannot write 'lim/old.json': File too large" && [[ $(cat lim/old.json) == old ]] &&
	no_leftover lim old.json
verdict "check --json past RLIMIT_FSIZE: status 2, the old file kept" $?
limited 0 check "$mutant" --junit lim/j.xml --traces traces
refused "cannot write 'lim/j.xml': File too large" && no_leftover lim old.json
verdict "check --junit past RLIMIT_FSIZE: status 2, no file" $?
limited 0 check "$mutant" --traces lim/tr
refused "trace not written: lim/tr/.*: cannot write: File too large" && no_leftover lim/tr
verdict "check's trace past RLIMIT_FSIZE: status 2, no trace file" $?
limited 0 replay "$trace" --json lim/old.json
refused "cannot write 'lim/old.json': File too large" && [[ $(cat lim/old.json) == old ]] &&
	no_leftover lim old.json tr
verdict "replay --json past RLIMIT_FSIZE: status 2, the old file kept" $?
limited 16 run s.yaml --wal-dir lim/w
refused "lim/w/$seg: File too large" && no_leftover lim/w
verdict "run --wal-dir past RLIMIT_FSIZE: status 2, no partial segment" $?

# ---- F3: a full file system (ENOSPC), when a tmpfs can be mounted here ----
mkdir "$mnt"
if mount -t tmpfs -o size=16k tmpfs "$mnt" 2>/dev/null; then
	echo old >"$mnt/old.json"
	head -c 12288 /dev/zero >"$mnt/fill" # the tmpfs is full: every output below fails
	pn run s.yaml --json "$mnt/old.json"
	refused "cannot write '$mnt/old.json': No space left on device" &&
		[[ $(cat "$mnt/old.json") == old ]] && no_leftover "$mnt" old.json fill
	verdict "run --json on a full tmpfs: status 2, ENOSPC named, the old file kept" $?
	pn report run.json -o "$mnt/old.json"
	refused "No space left on device" && [[ $(cat "$mnt/old.json") == old ]] &&
		no_leftover "$mnt" old.json fill
	verdict "report -o on a full tmpfs: status 2, the old file kept" $?
	pn check "$mutant" --json "$mnt/c.json" --traces traces
	refused "cannot write '$mnt/c.json': No space left on device" && no_leftover "$mnt" old.json fill
	verdict "check --json on a full tmpfs: status 2, no file" $?
	pn import wal --out "$mnt/i.yaml"
	refused "No space left on device" && no_leftover "$mnt" old.json fill
	verdict "import --out on a full tmpfs: status 2, neither file left" $?
	pn bench "$src/scenarios/bench/ci-small.yaml" --path bench --duration 100ms --modes fpw \
		--json "$mnt/b.json"
	refused "cannot write '$mnt/b.json': No space left on device" && no_leftover "$mnt" old.json fill
	verdict "bench --json on a full tmpfs: status 2, no file" $?
	pn run "$src/scenarios/bench/ci-vacuum.yaml" --wal-dir "$mnt/w"
	refused "$mnt/w/$seg: No space left on device" && no_leftover "$mnt/w"
	verdict "run --wal-dir on a full tmpfs: status 2, no partial segment" $?
	umount "$mnt"
else
	echo "skip tmpfs cases: mount -t tmpfs is not permitted here"
fi

# ---- F5: a command ended by SIGTERM (here timeout's) leaves no temporary and no partial file ----
mkdir sig
timeout 60 "$bin" bench "$src/scenarios/bench/ci-small.yaml" --path sig/b --duration 30s \
	--modes fpw --json sig/b.json >/dev/null 2>"$tmp/err" &
pid=$!
for _ in $(seq 300); do # until its output is open (the temporary, or b.json itself)
	compgen -G 'sig/b.json*' >/dev/null && break
	sleep 0.1
done
opened=$(compgen -G 'sig/b.json*')
kill -TERM "$pid"
wait "$pid"
status=$?
[[ -n $opened && $status != 0 ]] && ! compgen -G 'sig/b.json*' >/dev/null
verdict "bench --json ended by SIGTERM: no b.json, no temporary" $?

# ---- what still works: outputs that are not regular files, and a symbolic link kept ----
pn run s.yaml --json /dev/null
[[ $status == 0 ]]
verdict "run --json /dev/null: written in place, status 0" $?
echo old >target.json && ln -s target.json out.json
pn report run.json -o out.json
[[ $status == 0 && -L out.json ]] && grep -q '<html' target.json
verdict "report -o LINK: the link kept, its target replaced" $?
exit $failed
