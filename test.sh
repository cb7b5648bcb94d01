#!/usr/bin/env bash
# Sets up (installs dependencies, builds) and runs the whole test suite: the Check
# suites and command-line tests through ctest, then the TVM conformance corpus when
# ../shared/conformance exists. Usage: ./test.sh [--sanitize]
set -euo pipefail
cd "$(dirname "$0")"
BUILD_DIR=build
SETUP_ARGS=(--with-test-deps)
if [ "${1:-}" = "--sanitize" ]; then BUILD_DIR=build-asan; SETUP_ARGS+=(--sanitize); fi
[ -n "${CI:-}" ] && SETUP_ARGS+=(--werror)
./setup.sh "${SETUP_ARGS[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)")

if [ -d ../shared/conformance ]; then
  # ctest has checked it (cli_conformance); this prints where the corpus stands. Cases
  # and modules listed in the baselines must keep passing; new passes are reported
  # with the command that adds them.
  "$BUILD_DIR/tvmjit" conformance ../shared/conformance --baseline tests/conformance_baseline.txt \
    --parse-baseline tests/conformance_parsing.txt | sed -n '/^kind /,$p'
else
  echo "test.sh: ../shared/conformance not found; conformance corpus skipped"
fi
