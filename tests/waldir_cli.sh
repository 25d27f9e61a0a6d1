#!/usr/bin/env bash
# waldir_cli.sh: `--wal-dir` from the command line (CTest waldir_cli, label cli), without a
# PostgreSQL (tests/postgres.sh reads the files with the real pg_waldump): the files are named
# and sized as PostgreSQL's segments; a segment size below PostgreSQL's 1 MiB minimum still
# writes them but warns, once per directory, and a 1 MiB one does not; compare writes one
# directory per column; both create a directory and its missing parents; a directory that
# cannot be made is status 2 with its path.
# Usage: waldir_cli.sh PENUMBRA_BINARY SOURCE_DIR. Prints a line per case, exits 1 if any failed.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
verdict() { if [[ $2 == 0 ]]; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi; }
cd "$tmp" || exit 2
first=000000010000000000000001

"$bin" run "$src/scenarios/protocols/fpw-random.yaml" --wal-dir small >/dev/null 2>small.err
verdict "run --wal-dir with 64 KiB segments exits 0" $?
[[ -f small/$first && $(stat -c %s small/$first) == 65536 ]]
verdict "small/$first is one 64 KiB segment" $?
grep -q "^penumbra: --wal-dir small: warning: storage.wal_segment_size is 64 KiB, below PostgreSQL's 1 MiB minimum" small.err
verdict "64 KiB segments: the warning names the directory and the size" $?

"$bin" run "$src/scenarios/bench/ci-vacuum.yaml" --wal-dir big >/dev/null 2>big.err
verdict "run --wal-dir with 1 MiB segments exits 0" $?
[[ -f big/$first && $(stat -c %s big/$first) == 1048576 ]]
verdict "big/$first is one 1 MiB segment" $?
! grep -q warning big.err
verdict "1 MiB segments: no warning" $?

"$bin" compare "$src/scenarios/protocols/fpw-random.yaml" --modes fpw,nofpw --wal-dir cmp >/dev/null 2>cmp.err
verdict "compare --wal-dir exits 0" $?
[[ -f cmp/fpw/$first && -f cmp/nofpw/$first ]]
verdict "compare: one directory per column" $?
[[ $(grep -c warning cmp.err) == 2 ]]
verdict "compare: one warning per directory" $?

# A directory whose parents are missing: run and compare both create the whole path (issue
# 30: compare refused DIR when DIR did not exist, since it made only DIR/MODE's parent).
for cmd in run compare; do
	"$bin" $cmd "$src/scenarios/bench/ci-vacuum.yaml" --wal-dir "new-$cmd/a/b" \
		>/dev/null 2>"new-$cmd.err"
	status=$?
	dir=new-$cmd/a/b
	[[ $cmd == compare ]] && dir=$dir/fpw
	[[ $status == 0 && -f $dir/$first ]]
	verdict "$cmd --wal-dir new-$cmd/a/b (none of it there) exits 0 and writes $dir/$first" $?
done

touch afile
"$bin" run "$src/scenarios/protocols/fpw-random.yaml" --wal-dir afile/x >/dev/null 2>bad.err
[[ $? == 2 ]] && grep -q "afile/x" bad.err
verdict "a directory that cannot be made: status 2, its path named" $?
exit $failed
