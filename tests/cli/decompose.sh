#!/bin/bash
# DecomposeOpsForInference: R.nn.batch_norm in its inference form (the moving statistics,
# as PyTorch's eval mode and TVM's pass compute it), checked against numpy for float32
# and float16, with and without scale/center, on a channel axis in the middle (NCHW) and
# last (axis=-1); and the printed pass output has TVM's bindings, no batch_norm left.
source "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy"; exit 77; }
PASSES="DecomposeOpsForInference,LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR"

model() { # model FILE DTYPE SHAPE AXIS CENTER SCALE: batch_norm over channels of size 3
  local c=3
  cat >"$1" <<RX
from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor($3, dtype="$2"), gamma: R.Tensor(($c,), dtype="$2"), beta: R.Tensor(($c,), dtype="$2"), mean: R.Tensor(($c,), dtype="$2"), var: R.Tensor(($c,), dtype="$2")) -> R.Tensor($3, dtype="$2"):
        with R.dataflow():
            lv = R.nn.batch_norm(x, gamma, beta, mean, var, axis=$4, epsilon=0.001, center=$5, scale=$6)
            lv1: R.Tensor($3, dtype="$2") = lv[0]
            R.output(lv1)
        return lv1
RX
}

check() { # check NAME DTYPE SHAPE AXIS CENTER SCALE TOL
  local name=$1
  model "$TMP/$name.rx" "$2" "$3" "$4" "$5" "$6"
  /usr/bin/python3 -c "
import numpy as np, sys
rng = np.random.default_rng(7)
shape, axis, dt = $3, $4, np.$2
x = rng.standard_normal(shape).astype(dt)
p = {k: rng.uniform(lo, hi, 3).astype(dt) for k, lo, hi in
     [('gamma', 0.5, 2), ('beta', -1, 1), ('mean', -0.5, 0.5), ('var', 0.1, 3)]}
np.save('$TMP/$name.x.npy', x); np.savez('$TMP/$name.p.npz', **p)
b = [1] * len(shape); b[axis] = 3
f = lambda k: p[k].astype(np.float64).reshape(b)
y = (x - f('mean')) / np.sqrt(f('var') + 0.001)
if $6: y = y * f('gamma')
if $5: y = y + f('beta')
np.save('$TMP/$name.want.npy', y)"
  expect_exit 0 "$name: runs" -- "$BIN" run "$TMP/$name.rx" --input "$TMP/$name.x.npy" --params "$TMP/$name.p.npz" \
    --passes "$PASSES" --output "$TMP/$name.y.npy"
  expect_exit 0 "$name: matches numpy within $7" -- /usr/bin/python3 -c "
import numpy as np
y, w = np.load('$TMP/$name.y.npy'), np.load('$TMP/$name.want.npy')
assert y.dtype == np.$2 and y.shape == w.shape, (y.dtype, y.shape)
err = np.abs(y.astype(np.float64) - w).max(); print('max abs error', err); assert err <= $7, err"
}

check nchw_f32 float32 "(2, 3, 5, 7)" 1 True True 1e-5
check last_axis_f32 float32 "(4, 3)" -1 True True 1e-5
check no_affine_f32 float32 "(2, 3, 5, 7)" 1 False False 1e-5
check scale_only_f32 float32 "(2, 3, 4, 4)" 1 False True 1e-5
check nchw_f16 float16 "(2, 3, 5, 7)" 1 True True 2e-2

# The pass's own output: TVM's decomposition, in the order TVM's BlockBuilder emits it.
model "$TMP/print.rx" float32 "(2, 3, 5, 7)" 1 True True
expect_exit 0 "print after DecomposeOpsForInference" -- "$BIN" print "$TMP/print.rx" --passes DecomposeOpsForInference
cp "$TMP/out" "$TMP/printed"
expect_exit 1 "no batch_norm is left" -- grep -q "batch_norm" "$TMP/printed"
tr -s ' ' <"$TMP/printed" | grep -o '= R\.[a-z_]*(' | tr -d '=( ' | tr '\n' ' ' >"$TMP/ops"
expect_text "$TMP/ops" "R.expand_dims R.subtract R.expand_dims R.add R.sqrt R.divide R.expand_dims R.multiply R.expand_dims R.add" \
  "bindings in TVM's order"
expect_text "$TMP/printed" 'R.expand_dims(mean, axis=[0, 2, 3])' "moving mean broadcast along every axis but the channel"
finish
