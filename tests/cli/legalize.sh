#!/usr/bin/env bash
# LegalizeOps end to end: the seed network written with high-level ops (conv2d,
# relu, layer_norm) goes through LegalizeOps and the default pipeline and computes
# exactly what the seed module (already legalized, only call_tir) computes.
. "$(dirname "$0")/lib.bash"

cat >"$TMP/seed_ops.rx" <<'RX'
# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(data: R.Tensor((16, 32, 32, 16), dtype="float16"), weight1: R.Tensor((16, 3, 3, 16), dtype="float16"), weight2: R.Tensor((16, 3, 3, 16), dtype="float16"), weight3: R.Tensor((16, 3, 3, 16), dtype="float16"), gamma: R.Tensor((16,), dtype="float16"), beta: R.Tensor((16,), dtype="float16")) -> R.Tensor((16, 32, 32, 16), dtype="float16"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv = R.nn.conv2d(data, weight1, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="OHWI")
            conv1 = R.nn.relu(lv)
            lv2 = R.nn.conv2d(conv1, weight2, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="OHWI")
            conv2 = R.nn.relu(lv2)
            ln = R.nn.layer_norm(conv2, gamma, beta, axes=[-1])
            lv5 = R.nn.conv2d(ln, weight3, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="OHWI")
            conv3 = R.nn.relu(lv5)
            R.output(conv3)
        return conv3
RX

expect_exit 0 "LegalizeOps on the op-level seed" -- "$BIN" print "$TMP/seed_ops.rx" --passes LegalizeOps
expect_text "$TMP/out" 'with T.block("conv2d_nhwc"):' "conv2d legalized to the conv2d_nhwc block"
expect_text "$TMP/out" 'conv2_red_temp_v0 = T.alloc_buffer' "layer_norm accumulates in conv2_red_temp_v0"
expect_text "$TMP/out" 'R.call_tir(cls.conv2d, (ln, weight3)' "main calls the deduplicated conv2d"

expect_exit 0 "run the op-level seed" -- "$BIN" run "$TMP/seed_ops.rx" --fill random --seed 3 --output "$TMP/ops.npy"
expect_exit 0 "run the seed" -- "$BIN" run "$SRC/examples/seed/model.rx" --fill random --seed 3 --output "$TMP/seed.npy"
if cmp -s "$TMP/ops.npy" "$TMP/seed.npy"; then
  passes=$((passes + 1))
else
  echo "FAIL: the op-level seed and the seed give different results"
  failures=$((failures + 1))
fi
finish
