#!/usr/bin/env bash
# Stress (issue 8): 4 processes share one cache directory, starting empty, 100 runs of
# the fused seed each (with 1 and 2 threads); one of them clears the cache every 25 of
# its runs, so entries keep being rewritten while the others read them. Every output
# must equal the single-threaded --no-cache run's bits, and no run may warn.
# Took 290 s on a 2-core machine at load average 16 (about 80 s of CPU).
# STRESS_ITERATIONS overrides the 100.
. "$(dirname "$0")/lib.bash"
EX=$SRC/examples/seed
N=${STRESS_ITERATIONS:-100}
export TVMJIT_CACHE=1 TVMJIT_CACHE_DIR=$TMP/cache
unset TVMJIT_CACHE_MAX_BYTES TVMJIT_CACHE_DEBUG
ARGS=(run "$EX/model.rx" --mixed-precision --input "$EX/data.npy" --params "$EX/params.npz")

expect_exit 0 "single-threaded reference run" -- "$BIN" "${ARGS[@]}" --no-cache --threads 1 --output "$TMP/ref.npy"

worker() {
  local id=$1 i rc=0
  for ((i = 1; i <= N; i++)); do
    if [ "$id" -eq 0 ] && [ $((i % 25)) -eq 0 ]; then "$BIN" cache clear >/dev/null || rc=1; fi
    if ! "$BIN" "${ARGS[@]}" --threads $((1 + id % 2)) --output "$TMP/out$id.npy" 2>"$TMP/err$id"; then
      echo "worker $id run $i failed:"; cat "$TMP/err$id"; rc=1; continue
    fi
    if ! cmp -s "$TMP/out$id.npy" "$TMP/ref.npy"; then echo "worker $id run $i: output differs"; rc=1; fi
    if grep -q warning "$TMP/err$id"; then echo "worker $id run $i warned:"; cat "$TMP/err$id"; rc=1; fi
  done
  return $rc
}

start=$SECONDS
pids=()
for id in 0 1 2 3; do worker "$id" & pids+=($!); done
for id in 0 1 2 3; do
  wait "${pids[$id]}" && passes=$((passes + 1)) || { echo "FAIL: worker $id"; failures=$((failures + 1)); }
done
echo "4 x $N runs in $((SECONDS - start)) s"
# Whatever is left in the cache must be whole: a run from it loads without a warning.
expect_exit 0 "run from the stressed cache" -- "$BIN" "${ARGS[@]}" --output "$TMP/final.npy" --verbose
expect_text "$TMP/err" "0 compiled, 2 loaded from cache" "the stressed cache is complete and valid"
cmp -s "$TMP/final.npy" "$TMP/ref.npy" && passes=$((passes + 1)) || { echo "FAIL: final output differs"; failures=$((failures + 1)); }
finish
