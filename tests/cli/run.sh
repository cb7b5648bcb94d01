#!/usr/bin/env bash
# tvmjit run: end to end on the shipped seed example, and every bad-input message.
. "$(dirname "$0")/lib.bash"
EX=$SRC/examples/seed
MODEL=$EX/model.rx

# The seed as written (--passes none) must be bit-exact against the numpy float16
# reference with float16 accumulation in TVM's order (tests/fixtures/README.md).
expect_exit 0 "seed, --passes none" -- "$BIN" run "$MODEL" --passes none --input "$EX/data.npy" --params "$EX/params.npz" --output "$TMP/none.npy"
cmp -s "$TMP/none.npy" "$SRC/tests/fixtures/y_f16_acc16.npy" && passes=$((passes + 1)) ||
  { echo "FAIL: seed output differs from y_f16_acc16.npy"; failures=$((failures + 1)); }

# The full pipeline that crashed TVM gives the same bits (fusion does not reorder math).
expect_exit 0 "seed, mixed precision + default pipeline" -- "$BIN" run "$MODEL" --mixed-precision --input "$EX/data.npy" --params "$EX/params.npz" --output "$TMP/fused.npy" --verbose
cmp -s "$TMP/none.npy" "$TMP/fused.npy" && passes=$((passes + 1)) ||
  { echo "FAIL: fused pipeline output differs from --passes none"; failures=$((failures + 1)); }
expect_text "$TMP/err" "2 kernels requested, 2 compiled" "the fused seed compiles exactly two kernels"

# Only float32/float64 is computed more loosely by default (FMA, reordered sums): the
# float16 seed has the same bits with and without --strict-float.
expect_exit 0 "seed, --strict-float" -- "$BIN" run "$MODEL" --strict-float --no-cache --input "$EX/data.npy" --params "$EX/params.npz" --output "$TMP/contract.npy"
cmp -s "$TMP/none.npy" "$TMP/contract.npy" && passes=$((passes + 1)) ||
  { echo "FAIL: --strict-float changed the float16 seed's output"; failures=$((failures + 1)); }

expect_exit 0 "npz output" -- "$BIN" run "$MODEL" --input "$EX/data.npy" --params "$EX/params.npz" --output "$TMP/out.npz"
expect_exit 0 "summary without --output" -- "$BIN" run "$MODEL" --input data="$EX/data.npy" --params "$EX/params.npz"
expect_text "$TMP/out" "output 0: float16[16, 32, 32, 16]" "summary names dtype and shape"
expect_exit 0 "--fill random" -- "$BIN" run "$MODEL" --fill random --seed 3 --repeat 3
expect_text "$TMP/err" "median" "--repeat reports latency"

# Bad inputs: one message naming the parameter, exit 1, and no output file.
/usr/bin/python3 - "$TMP" <<'PY' 2>/dev/null || { echo "SKIP: numpy missing"; exit 77; }
import sys, numpy as np
np.save(sys.argv[1] + "/f32.npy", np.zeros((16, 32, 32, 16), np.float32))
np.save(sys.argv[1] + "/small.npy", np.zeros((16, 32, 32, 8), np.float16))
np.save(sys.argv[1] + "/x48.npy", np.arange(-16, 16, dtype=np.float16).reshape(4, 8))
PY
expect_exit 1 "wrong dtype" -- "$BIN" run "$MODEL" --input "$TMP/f32.npy" --params "$EX/params.npz" --output "$TMP/bad1.npy"
expect_text "$TMP/err" "input 'data': expected float16[16, 32, 32, 16], got float32[16, 32, 32, 16] from $TMP/f32.npy" "dtype message"
[ ! -e "$TMP/bad1.npy" ] && passes=$((passes + 1)) || { echo "FAIL: output written after an error"; failures=$((failures + 1)); }
expect_exit 1 "wrong shape" -- "$BIN" run "$MODEL" --input "$TMP/small.npy" --params "$EX/params.npz"
expect_text "$TMP/err" "input 'data': expected float16[16, 32, 32, 16], got float16[16, 32, 32, 8]" "shape message"
expect_exit 1 "missing parameter" -- "$BIN" run "$MODEL" --input "$EX/data.npy"
expect_text "$TMP/err" "input 'weight1' is missing" "missing parameter message"
expect_exit 1 "unknown parameter name" -- "$BIN" run "$MODEL" --input nope="$EX/data.npy" --params "$EX/params.npz"
expect_text "$TMP/err" "has no parameter 'nope'" "unknown parameter message"
expect_exit 1 "too many inputs" -- "$BIN" run "$SRC/tests/models/relu_f16.rx" --input "$TMP/x48.npy" --input "$TMP/x48.npy"
expect_text "$TMP/err" "all are already given" "extra input message"
head -c 100 "$EX/data.npy" >"$TMP/truncated.npy"
expect_exit 1 "truncated .npy" -- "$BIN" run "$MODEL" --input "$TMP/truncated.npy" --params "$EX/params.npz"
expect_text "$TMP/err" "truncated.npy" "the message names the file"
expect_exit 1 "unwritable output" -- "$BIN" run "$MODEL" --input "$EX/data.npy" --params "$EX/params.npz" --output /nonexistent-dir/out.npy
expect_exit 1 "bad output extension" -- "$BIN" run "$MODEL" --input "$EX/data.npy" --params "$EX/params.npz" --output "$TMP/out.txt"
expect_exit 2 "unknown pass" -- "$BIN" run "$MODEL" --passes Frobnicate --fill zeros
expect_text "$TMP/err" "LegalizeOps" "unknown pass lists the valid ones"
# relu on a small model: exact values.
expect_exit 0 "relu model" -- "$BIN" run "$SRC/tests/models/relu_f16.rx" --input "$TMP/x48.npy" --output "$TMP/relu.npy"
/usr/bin/python3 -c "import numpy as np,sys; x=np.load(sys.argv[1]); y=np.load(sys.argv[2]); sys.exit(0 if (y==np.maximum(x,0)).all() and y.dtype==np.float16 else 1)" "$TMP/x48.npy" "$TMP/relu.npy" &&
  passes=$((passes + 1)) || { echo "FAIL: relu output"; failures=$((failures + 1)); }
# --fill random gives integer inputs small random integers, not zeros (x + x of int32
# [-8, 8) values: even numbers in [-16, 14], many distinct).
cat >"$TMP/int_add.rx" <<'RX'
@R.function
def main(x: R.Tensor((256,), dtype="int32")) -> R.Tensor((256,), dtype="int32"):
    y = R.add(x, x)
    return y
RX
expect_exit 0 "--fill random, int32 input" -- "$BIN" run "$TMP/int_add.rx" --fill random --output "$TMP/int_add.npy"
expect_exit 0 "random integers are spread, not zeros" -- /usr/bin/python3 -c "
import numpy as np; y = np.load('$TMP/int_add.npy')
assert y.dtype == np.int32 and (y % 2 == 0).all() and y.min() >= -16 and y.max() <= 14, y
assert len(np.unique(y)) >= 10, np.unique(y)"
# A model with more parameters than any fixed-size table (ResNet-18 has 102): the sum
# of 100 inputs filled with ones is 100 everywhere.
{
  printf '@R.function\ndef main('
  for i in $(seq 0 99); do printf '%sp%d: R.Tensor((4,), dtype="float32")' "$([ "$i" = 0 ] || echo ', ')" "$i"; done
  printf ') -> R.Tensor((4,), dtype="float32"):\n    s0 = R.add(p0, p1)\n'
  for i in $(seq 2 99); do printf '    s%d = R.add(s%d, p%d)\n' "$((i - 1))" "$((i - 2))" "$i"; done
  printf '    return s98\n'
} >"$TMP/many_params.rx"
expect_exit 0 "100 parameters" -- "$BIN" run "$TMP/many_params.rx" --fill ones --output "$TMP/many.npy"
expect_exit 0 "sum of 100 ones is 100" -- /usr/bin/python3 -c "
import numpy as np; y = np.load('$TMP/many.npy'); assert (y == 100).all(), y"
expect_exit 2 "bad --repeat" -- "$BIN" run "$MODEL" --repeat 0
expect_exit 2 "no model" -- "$BIN" run
expect_exit 0 "--help" -- "$BIN" run --help
finish
