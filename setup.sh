#!/usr/bin/env bash
# Installs tvmjit's dependencies (Debian packages), then configures and builds it.
# Safe to run again: packages already present are not reinstalled and the build is
# incremental. Usage: ./setup.sh [--sanitize] [--fuzz] [--with-test-deps] [--build-dir DIR]
# (--fuzz: the libFuzzer targets in build-fuzz, built with clang; see tests/fuzz/run;
# --with-test-deps: also what the tests need: pytest, venv and PyTorch for python/, graphviz)
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=build
CMAKE_ARGS=()
BUILD_TARGET=()
FUZZ_PACKAGES=()
TEST_PACKAGES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) BUILD_DIR=build-asan; CMAKE_ARGS+=(-DTVMJIT_SANITIZE=ON) ;;
    --fuzz) BUILD_DIR=build-fuzz; CMAKE_ARGS+=(-DTVMJIT_FUZZ=ON -DCMAKE_C_COMPILER=clang)
            BUILD_TARGET=(--target fuzz_targets); FUZZ_PACKAGES=(clang libclang-rt-14-dev) ;;
    --with-test-deps) TEST_PACKAGES=(python3-pytest python3-venv python3-torch graphviz) ;;
    --build-dir) BUILD_DIR="$2"; shift ;;
    --werror) CMAKE_ARGS+=(-DTVMJIT_WERROR=ON) ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

PACKAGES=(build-essential cmake pkg-config llvm-19-dev libffi-dev check libsubunit-dev libzip-dev
          libdeflate-dev libxxhash-dev zlib1g-dev libdlpack-dev python3-numpy "${FUZZ_PACKAGES[@]}" "${TEST_PACKAGES[@]}")
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
fi

cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${CMAKE_ARGS[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" "${BUILD_TARGET[@]}"
echo "setup.sh: built $BUILD_DIR"
