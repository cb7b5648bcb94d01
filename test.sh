#!/usr/bin/env bash
# Sets up (installs dependencies, builds) and runs the whole test suite: the Check
# suites and command-line tests through ctest, then the TVM conformance corpus when
# ../shared/conformance exists. Usage: ./test.sh [--sanitize]
set -euo pipefail
cd "$(dirname "$0")"
BUILD_DIR=build
SETUP_ARGS=()
if [ "${1:-}" = "--sanitize" ]; then BUILD_DIR=build-asan; SETUP_ARGS+=(--sanitize); fi
[ -n "${CI:-}" ] && SETUP_ARGS+=(--werror)
./setup.sh "${SETUP_ARGS[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)")

if [ -d ../shared/conformance ]; then
  # Cases listed in the baseline passed when it was last written: any of them failing
  # now is a regression and fails the run. Refresh it with --write-passing.
  "$BUILD_DIR/tvmjit" conformance ../shared/conformance --baseline tests/conformance_baseline.txt
else
  echo "test.sh: ../shared/conformance not found; conformance corpus skipped"
fi
