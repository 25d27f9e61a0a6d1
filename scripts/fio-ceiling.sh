#!/usr/bin/env bash
# The device's ceiling for the I/O patterns of `penumbra bench` (docs/bench.md), measured with
# fio on files in DIR (the filesystem and device bench runs on):
#   data  8 KiB O_DIRECT random writes at queue depth QD (aio.queue_depth of the scenario),
#         through io_uring, over a SIZE file: the checkpointer, bgwriter and evictions;
#   wal   8 KiB O_DIRECT sequential writes, each followed by fdatasync, queue depth 1: a WAL
#         flush (write the page, then fdatasync) as a committing backend waits for it;
#         through io_uring (bench's io_uring method) and through pwrite + fdatasync system
#         calls (its worker method).
# usage: scripts/fio-ceiling.sh DIR [QD] [MIB] [SECONDS]   (defaults: 32 256 10)
# Each file is written in full with zeros first, as penumbra formats its files, so that no
# measured write allocates blocks or converts unwritten extents (which an fdatasync would
# then have to commit to the journal).
# Needs fio (Debian: apt-get install fio) and python3. Leaves nothing in DIR but fio's files,
# which it removes.
set -euo pipefail
dir=${1:?usage: $0 DIR [QD] [MIB] [SECONDS]}
qd=${2:-32}
mib=${3:-256}
secs=${4:-10}
command -v fio >/dev/null || { echo "fio-ceiling: fio is not installed (apt-get install fio)" >&2; exit 2; }
mkdir -p "$dir"
engine=io_uring
fio --name=probe --filename="$dir/fio-probe" --size=1M --rw=write --bs=8k --direct=1 --fallocate=none \
    --ioengine=io_uring --output=/dev/null >/dev/null 2>&1 || engine=psync
rm -f "$dir/fio-probe"
run() { # name, fio options...: prints the JSON of the run
	local name=$1; shift
	dd if=/dev/zero of="$dir/fio-$name" bs=1M count="$mib" conv=fsync status=none
	fio --name="$name" --filename="$dir/fio-$name" --size="${mib}M" --bs=8k --direct=1 --fallocate=none \
	    --time_based --runtime="$secs" --output-format=json "$@"
	rm -f "$dir/fio-$name"
}
summary() { # label, JSON on stdin
	python3 -c '
import json, sys
label = sys.argv[1]
job = json.load(sys.stdin)["jobs"][0]["write"]
pct = job["clat_ns"].get("percentile", {})
p50 = pct.get("50.000000", 0) / 1e3
p99 = pct.get("99.000000", 0) / 1e3
iops, mbs = job["iops"], job["bw_bytes"] / 1e6
print(f"{label:46s} {iops:9.0f} IOPS {mbs:8.2f} MB/s   write latency p50 {p50:.0f} us, p99 {p99:.0f} us")
' "$1"
}
echo "fio ceiling on $dir ($(fio --version), engine $engine, ${secs}s each)"
run data --rw=randwrite --iodepth="$qd" --ioengine="$engine" | summary "8 KiB O_DIRECT random writes, qd $qd"
run wal --rw=write --iodepth=1 --ioengine="$engine" --fdatasync=1 | summary "8 KiB appends + fdatasync each ($engine), qd 1"
# the worker method's path: pwrite, then the fdatasync system call
run walsync --rw=write --iodepth=1 --ioengine=psync --fdatasync=1 | summary "8 KiB appends + fdatasync each (psync), qd 1"
