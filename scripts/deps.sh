#!/usr/bin/env bash
# Installs the Debian 12 packages penumbra builds with, if any is missing (run as root).
set -euo pipefail
# clang and libclang-rt-14-dev (libFuzzer, clang's sanitizers; only recommended by clang, so
# named here) build the fuzz/ harnesses. chromium (headless) renders `penumbra report`'s pages
# in the browser test (tests/report_browser.sh). postgresql-15 (initdb, pgbench, pg_waldump)
# is the real PostgreSQL that CTest postgres runs (tests/postgres.sh); util-linux gives it
# runuser. clang-format (14) is what CTest format checks the C sources with
# (scripts/format-check.sh). openmpi-bin (mpirun) and libopenmpi-dev (the MPI library and
# headers CMake's find_package(MPI) finds) build `penumbra check`'s MPI ranks (CMake option
# PN_MPI, model/mpirank.c) and run CTest mpi_same and mpi_kill (docs/cluster.md).
pkgs=(build-essential cmake pkg-config check libyaml-dev libjemalloc-dev liburing-dev
      libxxhash-dev libjansson-dev jq bsdutils procps universal-ctags python3 clang
      libclang-rt-14-dev chromium postgresql-15 util-linux clang-format openmpi-bin
      libopenmpi-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "penumbra: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
