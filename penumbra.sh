#!/usr/bin/env bash
# The two commands of the README's quick start:
#   ./penumbra.sh        installs what is missing, builds (Release), checks every scenario
#                        in scenarios/ and prints the summary
#   ./penumbra.sh test   installs what is missing, builds (Debug), runs the test suite but
#                        the tests labelled slow (what CI runs, with asan)
#   ./penumbra.sh suite18  builds (Release), checks issue 12's suite scenarios/bench/suite18
#                        (18 scenarios, minutes) and prints its wall time (bench/suite18.sh)
#   ./penumbra.sh slow   the tests labelled slow (minutes each: a real-disk TPC-C, --jobs
#                        against --jobs 1 over scenarios/protocols and scenarios/mutants)
#   ./penumbra.sh asan   the test suite again under AddressSanitizer + UBSan (slow ones left out)
#   ./penumbra.sh fuzz   builds the libFuzzer harnesses (clang, fuzz/) and runs their CTest:
#                        each replays its corpus, then fuzzes 200,000 inputs (`test` runs it too)
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
jobs=$(nproc)
case "${1:-check}" in
check)
	cmake --preset release >/dev/null
	cmake --build --preset release -j"$jobs"
	# every scenario but issue 12's suite (scenarios/bench/suite18: minutes on 2 cores; run
	# it with ./penumbra.sh suite18) and the slow bounded searches of
	# scenarios/interleavings/slow (minutes each: ./penumbra.sh slow runs them), in the order
	# `check scenarios` takes them
	./build-release/penumbra check $(find scenarios -name '*.yaml' -o -name '*.yml' |
		grep -v -e '^scenarios/bench/suite18/' -e '^scenarios/interleavings/slow/' |
		LC_ALL=C sort) --jobs "$jobs" \
		--traces build-release/traces --junit build-release/scenarios.xml
	;;
suite18)
	cmake --preset release >/dev/null
	cmake --build --preset release -j"$jobs"
	bench/suite18.sh build-release/penumbra "$jobs"
	;;
test)
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j"$jobs"
	ctest --preset debug -j"$jobs"
	./penumbra.sh fuzz
	;;
slow)
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j"$jobs"
	ctest --preset slow -j"$jobs"
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
	echo "usage: ./penumbra.sh [check|test|suite18|slow|asan|fuzz]" >&2
	exit 2
	;;
esac
