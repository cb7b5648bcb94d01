#!/usr/bin/env bash
# Numerics against the project's own numpy reference (tests/reference/seed_reference.py,
# float64, independent of tvmjit): the seed network from examples/seed in float16 (bit for
# bit against TVM's order of operations), and written with high-level ops in float32
# (tests/models/seed_f32_ops.rx) through LegalizeOps alone, the default pipeline and
# ToMixedPrecision. Tolerances: float32 rtol = atol = 1e-4; float16 storage atol 5e-2,
# rtol 1e-2 (docs/semantics.md §8).
. "$(dirname "$0")/lib.bash"
REF=$SRC/tests/reference/seed_reference.py
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy (setup.sh installs python3-numpy)"; exit 77; }
ref() { /usr/bin/python3 "$REF" "$@"; }
compare() { # compare OUT.npy REF.npy RTOL ATOL WHAT [--exact]
  ref compare "$1" "$2" "$3" "$4" ${6:-} >"$TMP/cmp" 2>&1 &&
    passes=$((passes + 1)) || { echo "FAIL: $5: $(cat "$TMP/cmp")"; failures=$((failures + 1)); }
}
ref inputs "$TMP/in16" --dtype float16 && ref inputs "$TMP/in32" --dtype float32 &&
  ref exact "$TMP/in32/x.npy" "$TMP/in32/params.npz" "$TMP/y64.npy" &&
  ref tvm_f16 "$TMP/in16/x.npy" "$TMP/in16/params.npz" "$TMP/y16_tvm.npy" || { echo "FAIL: the numpy reference"; exit 1; }

# float16 seed: TVM's order of operations, every float16 operation rounded: identical bits.
for pipeline in none default; do
  expect_exit 0 "float16 seed, --passes $pipeline" -- "$BIN" run "$SRC/examples/seed/model.rx" --passes $pipeline \
    --input "$TMP/in16/x.npy" --params "$TMP/in16/params.npz" --output "$TMP/y16_$pipeline.npy"
  compare "$TMP/y16_$pipeline.npy" "$TMP/y16_tvm.npy" 0 0 "float16 seed ($pipeline) bit for bit" --exact
  compare "$TMP/y16_$pipeline.npy" "$TMP/y64.npy" 1e-2 5e-2 "float16 seed ($pipeline) vs float64 numpy"
done
cp "$TMP/in32/x.npy" "$TMP/x32.npy"
cp "$TMP/in32/params.npz" "$TMP/params32.npz"

MODEL=$SRC/tests/models/seed_f32_ops.rx
for passes_opt in LegalizeOps default; do
  expect_exit 0 "float32 seed, --passes $passes_opt" -- "$BIN" run "$MODEL" --passes $passes_opt --input "$TMP/x32.npy" --params "$TMP/params32.npz" --output "$TMP/y_$passes_opt.npy"
  compare "$TMP/y_$passes_opt.npy" "$TMP/y64.npy" 1e-4 1e-4 "float32 seed ($passes_opt) vs float64 numpy"
done
expect_exit 0 "float32 seed, --strict-float" -- "$BIN" run "$MODEL" --strict-float --no-cache --input "$TMP/x32.npy" --params "$TMP/params32.npz" --output "$TMP/y_nofma.npy"
compare "$TMP/y_nofma.npy" "$TMP/y64.npy" 1e-4 1e-4 "float32 seed without FMA contraction vs float64 numpy"
expect_exit 0 "float32 seed with --mixed-precision=float32" -- "$BIN" run "$MODEL" --mixed-precision --input "$TMP/x32.npy" --params "$TMP/params32.npz" --output "$TMP/y_mp.npy" --verbose
compare "$TMP/y_mp.npy" "$TMP/y64.npy" 1e-2 5e-2 "mixed precision (float16 storage, float32 accumulation) vs float64 numpy"
# float16 accumulation (native float16 vectors where the CPU has AVX512-FP16).
expect_exit 0 "float32 seed with --mixed-precision=float16" -- "$BIN" run "$MODEL" --mixed-precision=float16 --input "$TMP/x32.npy" --params "$TMP/params32.npz" --output "$TMP/y_mp16.npy"
compare "$TMP/y_mp16.npy" "$TMP/y64.npy" 1e-2 5e-2 "mixed precision float16 (float16 accumulation) vs float64 numpy"

# Model 2: NCHW, stride 2, dilation 2, groups 2, asymmetric padding, bias, 2-axis layer_norm.
/usr/bin/python3 - "$TMP" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(7); d = sys.argv[1]
x = rng.normal(size=(2, 4, 9, 9)).astype(np.float32); w = rng.normal(0, 0.3, size=(6, 2, 3, 3)).astype(np.float32)
b = rng.normal(size=(6, 1, 1)).astype(np.float32); g = (1 + rng.normal(0, 0.1, size=(3, 4))).astype(np.float32); be = rng.normal(0, 0.1, size=(3, 4)).astype(np.float32)
xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 0), (2, 1)))
y = np.zeros((2, 6, 3, 4))
for n in range(2):
    for o in range(6):
        grp = o // 3
        for i in range(3):
            for j in range(4):
                patch = xp[n, grp * 2:grp * 2 + 2, 2 * i:2 * i + 5:2, 2 * j:2 * j + 5:2]
                y[n, o, i, j] = (patch * w[o].astype(np.float64)).sum()
y = y + b
m = y.mean(axis=(2, 3), keepdims=True); v = y.var(axis=(2, 3), keepdims=True)
y = np.maximum((y - m) / np.sqrt(v + 1e-5) * g + be, 0)
np.save(d + "/m2_x.npy", x); np.savez(d + "/m2_p.npz", w=w, bias=b, gamma=g, beta=be); np.save(d + "/m2_y.npy", y)
PY
M2=$SRC/tests/models/nchw_group_conv.rx
for pipeline in LegalizeOps default; do
  expect_exit 0 "model 2, --passes $pipeline" -- "$BIN" run "$M2" --passes $pipeline --input "$TMP/m2_x.npy" --params "$TMP/m2_p.npz" --output "$TMP/m2_$pipeline.npy"
  compare "$TMP/m2_$pipeline.npy" "$TMP/m2_y.npy" 1e-4 1e-4 "model 2 ($pipeline) vs float64 numpy"
done
expect_exit 0 "model 2, --mixed-precision" -- "$BIN" run "$M2" --mixed-precision --input "$TMP/m2_x.npy" --params "$TMP/m2_p.npz" --output "$TMP/m2_mp.npy"
compare "$TMP/m2_mp.npy" "$TMP/m2_y.npy" 1e-2 5e-2 "model 2 (mixed precision) vs float64 numpy"
finish
