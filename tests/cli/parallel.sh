#!/usr/bin/env bash
# tvmjit run --threads / TVMJIT_NUM_THREADS: a model with T.parallel loops gives the
# same bits at every thread count; a bad thread count is a clear error.
. "$(dirname "$0")/lib.bash"
MODEL=$SRC/tests/models/parallel_rows.rx

for t in 1 2 3 7; do
  expect_exit 0 "--threads $t" -- "$BIN" run "$MODEL" --fill random --seed 11 --threads "$t" --output "$TMP/t$t.npy"
done
for t in 2 3 7; do
  cmp -s "$TMP/t1.npy" "$TMP/t$t.npy" && passes=$((passes + 1)) ||
    { echo "FAIL: output at --threads $t differs from --threads 1"; failures=$((failures + 1)); }
done
expect_exit 0 "TVMJIT_NUM_THREADS=2" -- env TVMJIT_NUM_THREADS=2 "$BIN" run "$MODEL" --fill random --seed 11 --output "$TMP/env2.npy"
cmp -s "$TMP/t1.npy" "$TMP/env2.npy" && passes=$((passes + 1)) ||
  { echo "FAIL: output with TVMJIT_NUM_THREADS=2 differs"; failures=$((failures + 1)); }
# --threads wins over the environment, so a bad variable does not matter then.
expect_exit 0 "--threads overrides TVMJIT_NUM_THREADS" -- env TVMJIT_NUM_THREADS=bad "$BIN" run "$MODEL" --fill zeros --threads 2

expect_exit 2 "bad TVMJIT_NUM_THREADS (a usage error)" -- env TVMJIT_NUM_THREADS=lots "$BIN" run "$MODEL" --fill zeros --output "$TMP/bad.npy"
expect_text "$TMP/err" "TVMJIT_NUM_THREADS='lots' is not a thread count" "bad TVMJIT_NUM_THREADS message"
[ ! -e "$TMP/bad.npy" ] && passes=$((passes + 1)) || { echo "FAIL: output written after an error"; failures=$((failures + 1)); }
expect_exit 2 "--threads 0" -- "$BIN" run "$MODEL" --fill zeros --threads 0
expect_text "$TMP/err" "--threads takes a count from 1 to 1024" "--threads range message"
expect_exit 0 "run --help" -- "$BIN" run --help
expect_text "$TMP/out" "threads for parallel loops" "--help describes --threads"
finish
