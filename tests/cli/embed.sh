#!/usr/bin/env bash
# The embedding API from outside: install tvmjit into a temporary prefix, build
# examples/embed.c against it once with pkg-config and once with CMake's find_package,
# and run both on the seed example (bit-exact against the float16 reference). Nothing
# may need LD_LIBRARY_PATH or extra flags: the installed tvmjit runs with an empty
# environment, and the host builds find libtvmjit.so through their rpath.
. "$(dirname "$0")/lib.bash"
BUILD=${TVMJIT_BUILD_DIR:-$(dirname "$BIN")}
PREFIX=$TMP/prefix
EX=$SRC/examples/seed
ARGS=("$EX/model.rx" "$EX/data.npy" "$EX/params.npz" "$SRC/tests/fixtures/y_f16_acc16.npy")

expect_exit 0 "cmake --install into a temporary prefix" -- cmake --install "$BUILD" --prefix "$PREFIX"
for f in include/tvmjit.h lib/pkgconfig/tvmjit.pc lib/cmake/tvmjit/tvmjitConfig.cmake bin/tvmjit; do
  [ -e "$PREFIX/$f" ] && passes=$((passes + 1)) || { echo "FAIL: install lacks $f"; failures=$((failures + 1)); }
done

# The installed command, with no environment at all: same output as the build tree's.
expect_exit 0 "installed tvmjit --version with an empty environment" -- env -i "$PREFIX/bin/tvmjit" --version
expect_exit 0 "installed tvmjit run with an empty environment" -- env -i "$PREFIX/bin/tvmjit" run "$EX/model.rx" \
  --input "$EX/data.npy" --params "$EX/params.npz" --no-cache --output "$TMP/y_installed.npy"
expect_exit 0 "build-tree tvmjit run" -- "$BIN" run "$EX/model.rx" --input "$EX/data.npy" --params "$EX/params.npz" \
  --no-cache --output "$TMP/y_build.npy"
expect_exit 0 "installed and build-tree outputs are identical" -- cmp "$TMP/y_installed.npy" "$TMP/y_build.npy"

# pkg-config
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
SAN=""; [ "${TVMJIT_SANITIZE:-OFF}" = ON ] && SAN="-fsanitize=address,undefined"
expect_exit 0 "compile with pkg-config" -- sh -c "cc $SAN -std=c11 -Wall -Werror $SRC/examples/embed.c \$(pkg-config --cflags --libs tvmjit) -o $TMP/embed_pc"
expect_exit 0 "run the pkg-config build" -- "$TMP/embed_pc" "${ARGS[@]}"
expect_text "$TMP/out" "output equals the reference" "pkg-config build output"

# CMake package
mkdir -p "$TMP/proj"
cat >"$TMP/proj/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(embed_user C)
find_package(tvmjit REQUIRED CONFIG)
add_executable(embed_cm $SRC/examples/embed.c)
target_link_libraries(embed_cm PRIVATE tvmjit::tvmjit)
CM
expect_exit 0 "configure with find_package(tvmjit)" -- cmake -S "$TMP/proj" -B "$TMP/proj/build" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN"
expect_exit 0 "build with CMake" -- cmake --build "$TMP/proj/build"
expect_exit 0 "run the CMake build" -- "$TMP/proj/build/embed_cm" "${ARGS[@]}"
expect_text "$TMP/out" "output equals the reference" "CMake build output"
finish
