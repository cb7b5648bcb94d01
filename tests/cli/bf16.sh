#!/usr/bin/env bash
# bfloat16 end to end, against PyTorch (independent of tvmjit):
#  1. a model declared in bfloat16 (x*x + x, relu) reading and writing .npy in ml_dtypes'
#     convention ('<V2': the raw 16-bit patterns): bit for bit PyTorch's bfloat16 ops
#     (each op in float32, rounded to nearest even; relu is TVM's b > 0 ? b : 0);
#  2. a float32 .npy for that bfloat16 input: refused with a message naming the input, both
#     dtypes and the fix, and accepted with --convert-inputs (rounded as torch rounds);
#  3. the float32 seed (tests/models/seed_f32_ops.rx) under --mixed-precision=bfloat16 against
#     PyTorch running the same graph with bfloat16 storage (inputs, weights and conv outputs
#     rounded to bfloat16; convs and layer_norm in float32): within 4 bfloat16 ulp of each
#     value (the sums' order differs, so a stored intermediate can round the other way and
#     move the next layer's sums: 3 ulp seen), and not the float32 result;
#  4. ResNet-18, MobileNetV2 and a BERT layer (when /tmp/mz has them, made by
#     bench/model_zoo.py) under --mixed-precision=bfloat16 against PyTorch's float32
#     output: within 2% of max |y| (bfloat16 keeps 8 significant bits, 0.4% per rounding;
#     measured 0.36%, 0.37% and 0.09%), and the same top-1 class.
. "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c 'import numpy, torch' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy or torch"; exit 77; }
py() { /usr/bin/python3 - "$TMP" "$@"; }

cat >"$TMP/bf16.rx" <<'EOF'
from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 33), dtype="bfloat16")) -> R.Tensor((4, 33), dtype="bfloat16"):
        with R.dataflow():
            a = R.multiply(x, x)
            b = R.add(a, x)
            y = R.nn.relu(b)
            R.output(y)
        return y
EOF
# Inputs: random values, ties for the rounding, and specials (inf, NaN, the largest finite).
py <<'PY' || { echo "FAIL: making the inputs"; exit 1; }
import sys, numpy as np, torch
d = sys.argv[1]
rng = np.random.default_rng(3)
x = rng.normal(0, 3, size=(4, 33)).astype(np.float32)
x.flat[:6] = [np.inf, -np.inf, np.nan, 3.3895313892515355e38, -0.0, 1.00390625]
np.save(f"{d}/x32.npy", x)
bits = torch.from_numpy(x).bfloat16().view(torch.int16).numpy().view(np.uint16)
np.save(f"{d}/x16.npy", bits.view("<V2"))  # what np.save writes for an ml_dtypes bfloat16 array
xb = torch.from_numpy(x).bfloat16()
b = xb * xb + xb
y = torch.where(b > 0, b, torch.zeros_like(b))  # TVM's relu, max(b, 0) = b > 0 ? b : 0: NaN gives 0
np.save(f"{d}/want.npy", y.view(torch.int16).numpy().view(np.uint16))
PY
same_bits() { # OUT.npy WHAT
  py "$1" <<'PY' >"$TMP/cmp" 2>&1 && passes=$((passes + 1)) || { echo "FAIL: $2: $(cat "$TMP/cmp")"; failures=$((failures + 1)); }
import sys, numpy as np
d, out = sys.argv[1], sys.argv[2]
got = np.load(out)
assert got.dtype.str == "<V2" or got.dtype.str == "|V2", f"dtype {got.dtype.str}, want <V2"
got, want = got.view(np.uint16), np.load(f"{d}/want.npy")
nan = lambda b: ((b & 0x7f80) == 0x7f80) & ((b & 0x7f) != 0)
bad = (got != want) & ~(nan(got) & nan(want))
assert not bad.any(), f"{bad.sum()} values differ, e.g. {got[bad][:4]} vs {want[bad][:4]}"
PY
}
expect_exit 0 "bfloat16 model, '<V2' .npy in and out" -- "$BIN" run "$TMP/bf16.rx" --input "$TMP/x16.npy" --output "$TMP/y16.npy"
same_bits "$TMP/y16.npy" "bfloat16 model vs PyTorch bfloat16, bit for bit"
expect_exit 0 "bfloat16 model, vectorized schedule off" -- "$BIN" run "$TMP/bf16.rx" --no-schedule --input "$TMP/x16.npy" --output "$TMP/y16s.npy"
same_bits "$TMP/y16s.npy" "bfloat16 model without the schedule vs PyTorch"

expect_exit 1 "float32 .npy for a bfloat16 input" -- "$BIN" run "$TMP/bf16.rx" --input "$TMP/x32.npy"
expect_text "$TMP/err" "input 'x': expected bfloat16[4, 33], got float32[4, 33]" "dtype mismatch names the input and dtypes"
expect_text "$TMP/err" "--convert-inputs" "dtype mismatch names the fix"
expect_exit 0 "--convert-inputs" -- "$BIN" run "$TMP/bf16.rx" --convert-inputs --input "$TMP/x32.npy" --output "$TMP/y16c.npy"
same_bits "$TMP/y16c.npy" "float32 input converted to bfloat16 vs PyTorch"

# The seed under --mixed-precision=bfloat16.
REF=$SRC/tests/reference/seed_reference.py
/usr/bin/python3 "$REF" inputs "$TMP/in32" --dtype float32 || { echo "FAIL: seed inputs"; exit 1; }
MODEL=$SRC/tests/models/seed_f32_ops.rx
expect_exit 0 "seed --mixed-precision=bfloat16" -- "$BIN" run "$MODEL" --mixed-precision=bfloat16 \
  --input "$TMP/in32/x.npy" --params "$TMP/in32/params.npz" --output "$TMP/seed_bf16.npy"
expect_exit 0 "seed float32" -- "$BIN" run "$MODEL" --input "$TMP/in32/x.npy" --params "$TMP/in32/params.npz" --output "$TMP/seed_f32.npy"
py <<'PY' >"$TMP/cmp" 2>&1 && passes=$((passes + 1)) || { echo "FAIL: seed bfloat16 vs PyTorch: $(cat "$TMP/cmp")"; failures=$((failures + 1)); }
import sys, numpy as np, torch
import torch.nn.functional as F
d = sys.argv[1]
x = torch.from_numpy(np.load(f"{d}/in32/x.npy"))
p = {k: torch.from_numpy(v) for k, v in np.load(f"{d}/in32/params.npz").items()}
bf = lambda t: t.bfloat16().float()  # bfloat16 storage
def conv(t, w):  # NHWC data, OHWI weights, bfloat16 operands, float32 accumulation
    y = F.conv2d(t.permute(0, 3, 1, 2).double(), bf(w).permute(0, 3, 1, 2).double(), padding=1)
    return bf(y.permute(0, 2, 3, 1).float())
h = torch.relu(conv(bf(x), p["weight1"]))
h = torch.relu(conv(h, p["weight2"]))
h = bf(F.layer_norm(h, (16,), p["gamma"], p["beta"], eps=1e-5))
want = torch.relu(conv(h, p["weight3"])).numpy()
got, f32 = np.load(f"{d}/seed_bf16.npy"), np.load(f"{d}/seed_f32.npy")
ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(want), 2.0 ** -126))) - 7)
err = np.abs(got - want) / ulp
assert err.max() <= 4, f"{(err > 4).sum()} values beyond 4 bfloat16 ulp (worst {err.max():.1f} ulp)"
assert np.abs(got - f32).max() > 1e-3, "bfloat16 storage gave the float32 result"
print(f"worst {err.max():.1f} ulp; {np.mean(err > 0):.4f} of values not bit-exact; max |bf16 - f32| {np.abs(got - f32).max():.3g}")
PY

# Real models (made by bench/model_zoo.py into /tmp/mz; skipped where absent).
P=DecomposeOpsForInference,CanonicalizeBindings,LegalizeOps,AnnotateTIROpPattern,FoldConstant,DeadCodeElimination,FuseOps,FuseTIR
for model in resnet18 mobilenet_v2 bert_layer; do
  MZ=/tmp/mz/$model
  if [ ! -f "$MZ/model.rx" ]; then echo "note: $MZ not found (bench/model_zoo.py makes it): skipped"; continue; fi
  expect_exit 0 "$model --mixed-precision=bfloat16" -- "$BIN" run "$MZ/model.rx" --mixed-precision=bfloat16 --passes $P \
    --params "$MZ/params.npz" --bind-params --input "$MZ/data.npy" --output "$TMP/$model.npy"
  py "$MZ" "$model" <<'PY' >"$TMP/cmp" 2>&1 && passes=$((passes + 1)) || { echo "FAIL: $model bfloat16 vs PyTorch: $(cat "$TMP/cmp")"; failures=$((failures + 1)); }
import sys, numpy as np
got, want = np.load(f"{sys.argv[1]}/{sys.argv[3]}.npy"), np.load(f"{sys.argv[2]}/expected.npy")
err = np.abs(got - want)
tol = 0.02 * np.abs(want).max()
assert (err <= tol).all(), f"{(err > tol).sum()} values beyond tolerance (worst {err.max():.3g}, max |y| {np.abs(want).max():.3g})"
if want.ndim == 2:
    assert (got.argmax(-1) == want.argmax(-1)).all(), "top-1 class differs"
print(f"max |err| {err.max():.3g} of max |y| {np.abs(want).max():.3g}")
PY
done
finish
