#!/usr/bin/env bash
# The thread pool under ThreadSanitizer: tests/tsan/thread_pool_tsan.c with
# runtime/thread_pool.c built -fsanitize=thread (skips when the compiler has no TSan).
. "$(dirname "$0")/lib.bash"
CC=${CC:-cc}
if ! "$CC" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=thread -I"$SRC" \
    "$SRC/tests/tsan/thread_pool_tsan.c" "$SRC/runtime/thread_pool.c" "$SRC/support/alloc.c" \
    "$SRC/support/status.c" "$SRC/support/strbuf.c" -o "$TMP/pool_tsan" -lpthread 2>"$TMP/cc.err"; then
  echo "SKIP: cannot build with -fsanitize=thread"; sed 's/^/  /' "$TMP/cc.err" | head -5; exit 77
fi
expect_exit 0 "thread pool under TSan" -- env TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$TMP/pool_tsan"
expect_text "$TMP/out" "0 wrong counts" "every chunk ran once"
if grep -q "ThreadSanitizer" "$TMP/err"; then
  echo "FAIL: TSan reports"; head -30 "$TMP/err"; failures=$((failures + 1))
fi
finish
