#!/usr/bin/env bash
# mpi_optional.sh: MPI is optional at run time (model/executor.c; docs/cluster.md "Building").
# Usage: mpi_optional.sh PENUMBRA_BINARY SOURCE_DIR
# The binary does not link libmpi (no NEEDED entry names it): the MPI executor is the module
# libpn_exec_mpi.so beside it, loaded only when MPI is asked for. Without the module
# (PN_MPI_MODULE naming a file that does not exist) a check runs as always, and `--mpi` is
# refused with exit 2.
set -u
if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY SOURCE_DIR" >&2
	exit 2
fi
bin=$1
src=$2
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_mpi_optional.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
if readelf -d "$bin" | grep NEEDED | grep -qi mpi; then
	echo "mpi_optional: $bin links MPI:"
	readelf -d "$bin" | grep NEEDED
	fail=1
fi
if [[ ! -f $(dirname "$bin")/libpn_exec_mpi.so ]]; then
	echo "mpi_optional: no libpn_exec_mpi.so beside $bin"
	fail=1
fi
PN_MPI_MODULE=$tmp/none.so "$bin" check "$src/scenarios/truncate/hazard-truncate-reset-l3.yaml" \
	--quiet --traces "$tmp/tr" >"$tmp/out" 2>&1
rc=$?
[[ $rc -eq 0 ]] || { echo "mpi_optional: a check without the module exited $rc"; cat "$tmp/out"; fail=1; }
PN_MPI_MODULE=$tmp/none.so "$bin" check "$src/scenarios/truncate" --mpi >"$tmp/out" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q -- "--mpi: " "$tmp/out" ||
	{ echo "mpi_optional: --mpi without the module exited $rc:"; cat "$tmp/out"; fail=1; }
[[ $fail -eq 0 ]] && echo "mpi_optional: ok"
exit $fail
