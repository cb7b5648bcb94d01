#!/usr/bin/env bash
# tvmjit check: exit codes and messages.
. "$(dirname "$0")/lib.bash"

expect_exit 0 "a well-formed model" -- "$BIN" check "$SRC/tests/models/relu_f16.rx"

expect_exit 1 "float32 argument to a float16 call_tir parameter" -- "$BIN" check "$SRC/tests/models/bad_call_tir_dtype.rx"
expect_text "$TMP/err" "main: binding 'lv': call_tir argument 0 ('x': float32[4, 8]) does not match parameter 0 'lv' of 'relu' (float16[4, 8])" \
  "verifier message names function, binding, argument, parameter and callee"

printf 'def main(:\n' >"$TMP/broken.rx"
expect_exit 1 "a syntax error" -- "$BIN" check "$TMP/broken.rx"
expect_text "$TMP/err" "broken.rx:1:" "syntax errors name file:line:col"

expect_exit 1 "a missing file" -- "$BIN" check "$TMP/does-not-exist.rx"
expect_text "$TMP/err" "does-not-exist.rx" "the message names the missing file"

expect_exit 2 "no file" -- "$BIN" check
expect_exit 2 "an unknown option" -- "$BIN" check --frobnicate x.rx
expect_exit 0 "--help" -- "$BIN" check --help
expect_text "$TMP/out" "usage: tvmjit check" "help text"

expect_exit 0 "the seed model" -- "$BIN" check "$SRC/examples/seed/model.rx"
finish
