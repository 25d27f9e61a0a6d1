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
# PN_MPI, model/mpirank.c) and run CTest mpi_same and mpi_kill (docs/cluster.md). liblz4-dev
# and libzstd-dev decompress a real WAL's lz4 and zstd page images (`penumbra import`,
# src/format/xlogread.c: LZ4_decompress_safe, ZSTD_decompress; pglz has no Debian library:
# its walk is ours). python3-yaml reads the CI examples' steps out of docs/examples/ci/*.yml
# (CTest ci_example). man-db and zsh check the installed man pages and completion (CTest
# install_cli); dpkg-dev's dpkg-shlibdeps gives the .deb its dependencies (CTest deb_cli).
pkgs=(build-essential cmake pkg-config check libyaml-dev libjemalloc-dev liburing-dev
      libxxhash-dev libjansson-dev jq bsdutils procps universal-ctags python3 clang
      libclang-rt-14-dev chromium postgresql-15 util-linux clang-format openmpi-bin
      libopenmpi-dev liblz4-dev libzstd-dev python3-yaml man-db zsh dpkg-dev)
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
