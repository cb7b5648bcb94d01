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
# TVMJIT_POOL_TRACE=1: one line per parallel loop whose threads' iterations add up to n,
# and bench/pool_trace.py reads it (every line of one loop: a period of 1).
expect_exit 0 "TVMJIT_POOL_TRACE=1" -- env TVMJIT_POOL_TRACE=1 "$BIN" run "$MODEL" --fill zeros --threads 2 --repeat 3
expect_text "$TMP/err" "pool n=" "the trace has pool lines"
if awk '/^pool n=/ { split($2, a, "="); n = a[2]; s = 0
         for (i = 1; i <= NF; i++) if ($i ~ /^iters=/) { split($i, b, "="); s += b[2] }
         if (s != n) bad = 1; lines++ }
       END { exit !(lines > 0 && !bad) }' "$TMP/err"; then passes=$((passes + 1)); else
  echo "FAIL: trace iterations do not add up to n"; head -3 "$TMP/err"; failures=$((failures + 1)); fi
# asleep (workers past their idle spin at publication: 0 or the one worker) and gap_us
# (since the previous loop: -1 on the first line only, never negative after)
if awk '/^pool n=/ { a = -2; g = -2
         for (i = 1; i <= NF; i++) { if ($i ~ /^asleep=/) { split($i, b, "="); a = b[2] }
                                     if ($i ~ /^gap_us=/) { split($i, b, "="); g = b[2] + 0 } }
         if (a < 0 || a > 1) bad = 1
         if (lines == 0 ? g != -1 : g < 0) bad = 1; lines++ }
       END { exit !(lines > 1 && !bad) }' "$TMP/err"; then passes=$((passes + 1)); else
  echo "FAIL: trace asleep / gap_us fields"; head -3 "$TMP/err"; failures=$((failures + 1)); fi
cp "$TMP/err" "$TMP/trace.txt"
expect_exit 0 "bench/pool_trace.py" -- python3 "$SRC/bench/pool_trace.py" "$TMP/trace.txt"
expect_text "$TMP/out" "sum of critical paths" "pool_trace.py sums the trace up"
expect_exit 0 "run --help" -- "$BIN" run --help
expect_text "$TMP/out" "threads for parallel loops" "--help describes --threads"
finish
