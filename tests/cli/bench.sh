#!/usr/bin/env bash
# tvmjit bench: runs the seed, reports what it says it reports, --json is valid JSON with
# the counted FLOPs, and bad flags or inputs give clear errors. No timing assertions.
. "$(dirname "$0")/lib.bash"
EX=$SRC/examples/seed
MODEL=$EX/model.rx

expect_exit 0 "text report" -- "$BIN" bench "$MODEL" --input "$EX/data.npy" --params "$EX/params.npz" --warmup 1 --runs 2
expect_text "$TMP/out" "latency over 2 runs after 1 warm-up: min" "latency line"
expect_text "$TMP/out" "compile:" "compile time"
# 3 convs (2 x 16*32*32*16 outputs x 144 MACs) + 3 relus + layer_norm (15 per element).
expect_text "$TMP/out" "work: 231.2 MFLOP per call" "FLOPs of the seed"
expect_text "$TMP/out" "peak RSS:" "peak memory"

expect_exit 0 "--json" -- "$BIN" bench "$MODEL" --input "$EX/data.npy" --params "$EX/params.npz" --warmup 0 --runs 3 --json --threads 1
if python3 -m json.tool "$TMP/out" >/dev/null; then passes=$((passes + 1)); else
  echo "FAIL: --json output does not parse"; sed 's/^/  got: /' "$TMP/out"; failures=$((failures + 1)); fi
expect_text "$TMP/out" '"flops": 231211008' "JSON flops"
expect_text "$TMP/out" '"threads": 1' "JSON threads"
expect_text "$TMP/out" '"runs": 3' "JSON runs"
expect_text "$TMP/out" '"strict_float": false' "JSON float mode (default)"
python3 - "$TMP/out" <<'PY' && passes=$((passes + 1)) || { echo "FAIL: JSON latencies"; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
lat, s = d["latency_ms"], d["samples_ms"]
assert len(s) == 3 and lat["min"] == min(s) and lat["max"] == max(s) and lat["min"] <= lat["median"] <= lat["max"], d
assert d["compile_ms"] > 0 and d["peak_rss_kib"] > 0 and d["gflops_median"] > 0, d
PY

# --profile: one line per kernel call of the seed (3 fused convs and the layer norm, in
# order), in text and in the JSON.
expect_exit 0 "--profile" -- "$BIN" bench "$MODEL" --input "$EX/data.npy" --params "$EX/params.npz" --warmup 0 --runs 3 --profile
expect_text "$TMP/out" "kernel calls (median over 3 runs):" "profile header"
expect_text "$TMP/out" "sum of kernel medians" "profile total"
expect_text "$TMP/out" "executor overhead (latency minus the same run's kernel times" "profile overhead"
[ "$(grep -c '^ *[0-9]  fused_conv2d' "$TMP/out")" = 3 ] && [ "$(grep -c '^ *2  layer_norm' "$TMP/out")" = 1 ] \
  && passes=$((passes + 1)) || { echo "FAIL: --profile lines"; cat "$TMP/out"; failures=$((failures + 1)); }
expect_exit 0 "--profile --json" -- "$BIN" bench "$MODEL" --input "$EX/data.npy" --params "$EX/params.npz" --warmup 0 --runs 3 --profile --json
python3 - "$TMP/out" <<'PY' && passes=$((passes + 1)) || { echo "FAIL: JSON profile"; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
p = d["profile"]
assert [e["kernel"].split("_")[0] for e in p] == ["fused", "fused", "layer", "fused"], p
assert all(e["median_ms"] >= 0 for e in p) and sum(e["median_ms"] for e in p) <= d["latency_ms"]["max"] * 1.5, d
# Each run's latency encloses its kernel calls, so what is left is >= 0 and below the latency.
assert 0 <= d["overhead_median_ms"] <= d["latency_ms"]["max"], d
PY
expect_exit 2 "--profile=1" -- "$BIN" bench "$MODEL" --fill zeros --profile=1

# The compile line says what the kernel cache did (its own directory here).
# ctest sets TVMJIT_CACHE=0; turn it on here with a directory of our own.
export TVMJIT_CACHE=1 TVMJIT_CACHE_DIR=$TMP/cache
expect_exit 0 "cold cache" -- "$BIN" bench "$SRC/tests/models/relu_f16.rx" --fill ones --runs 1 --warmup 0
expect_text "$TMP/out" "1 kernels requested, 1 compiled, 0 loaded from cache" "cold compile"
expect_exit 0 "warm cache" -- "$BIN" bench "$SRC/tests/models/relu_f16.rx" --fill ones --runs 1 --warmup 0 --json
expect_text "$TMP/out" '"jit": "jit: 1 kernels requested, 0 compiled, 1 loaded from cache' "cache hit in the JSON"
expect_exit 0 "--no-cache" -- "$BIN" bench "$SRC/tests/models/relu_f16.rx" --fill ones --runs 1 --warmup 0 --no-cache
expect_text "$TMP/out" "1 kernels requested, 1 compiled, 0 loaded from cache" "--no-cache compiles"
export TVMJIT_CACHE=0

# The float32 seed in high-level operators: inputs by --fill, mixed precision accepted.
expect_exit 0 "float32 ops model, --mixed-precision" -- "$BIN" bench "$SRC/tests/models/seed_f32_ops.rx" --fill random --seed 1 --mixed-precision --runs 1 --warmup 0 --json
expect_text "$TMP/out" '"mixed_precision": "float32"' "mixed precision in the JSON"
# Operators not lowered: FLOPs unknown, and the JIT names the fix.
expect_exit 1 "high-level ops without passes" -- "$BIN" bench "$SRC/tests/models/seed_f32_ops.rx" --fill zeros --passes none
expect_text "$TMP/err" "is not lowered" "not-lowered message"

# Bad flags: exit 2 with a message naming the flag; bad inputs: exit 1.
expect_exit 2 "no model" -- "$BIN" bench
expect_text "$TMP/err" "missing the model file" "no-model message"
expect_exit 2 "--runs 0" -- "$BIN" bench "$MODEL" --fill zeros --runs 0
expect_text "$TMP/err" "--runs takes a count" "--runs message"
expect_exit 2 "--warmup x" -- "$BIN" bench "$MODEL" --fill zeros --warmup x
expect_text "$TMP/err" "--warmup takes a count" "--warmup message"
expect_exit 2 "--json=1" -- "$BIN" bench "$MODEL" --fill zeros --json=1
expect_exit 2 "unknown option" -- "$BIN" bench "$MODEL" --frobnicate
expect_text "$TMP/err" "tvmjit bench: unknown option '--frobnicate'" "unknown option message"
expect_exit 2 "--threads 0" -- "$BIN" bench "$MODEL" --fill zeros --threads 0
expect_text "$TMP/err" "--threads takes a count" "--threads message"
expect_exit 2 "--input without a value" -- "$BIN" bench "$MODEL" --input
expect_text "$TMP/err" "option '--input' needs a value" "missing value message"
expect_exit 2 "bad --mixed-precision" -- "$BIN" bench "$MODEL" --fill zeros --mixed-precision=int8
expect_exit 2 "unknown pass" -- "$BIN" bench "$MODEL" --fill zeros --passes Frobnicate
expect_exit 1 "missing parameter" -- "$BIN" bench "$MODEL" --input "$EX/data.npy"
expect_text "$TMP/err" "input 'weight1' is missing" "missing parameter message"
expect_exit 1 "missing model file" -- "$BIN" bench "$TMP/nope.rx" --fill zeros
expect_exit 0 "--help" -- "$BIN" bench --help
expect_text "$TMP/out" "--warmup N" "help lists --warmup"
finish
