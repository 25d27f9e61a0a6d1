#!/usr/bin/env bash
# The two commands of the README's quick start:
#   ./penumbra.sh        installs what is missing, builds (Release), checks every scenario
#                        in scenarios/ and prints the summary
#   ./penumbra.sh test   installs what is missing, builds (Debug), runs the whole test suite
#   ./penumbra.sh asan   the whole test suite again under AddressSanitizer + UBSan
#   ./penumbra.sh fuzz   builds the libFuzzer harnesses (clang, fuzz/) and runs their CTest:
#                        each replays its corpus, then fuzzes for 30 s (`test` runs it too)
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
jobs=$(nproc)
case "${1:-check}" in
check)
	cmake --preset release >/dev/null
	cmake --build --preset release -j"$jobs"
	./build-release/penumbra check scenarios --jobs "$jobs" --traces build-release/traces \
		--junit build-release/scenarios.xml
	;;
test)
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j"$jobs"
	ctest --preset debug -j"$jobs"
	./penumbra.sh fuzz
	;;
fuzz)
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j"$jobs"
	ctest --preset fuzz -j"$jobs"
	;;
asan)
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j"$jobs"
	ctest --preset asan -j"$jobs"
	;;
*)
	echo "usage: ./penumbra.sh [check|test|asan|fuzz]" >&2
	exit 2
	;;
esac
