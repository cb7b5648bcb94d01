#!/usr/bin/env bash
# Winograd 3x3 convs in NHWC (schedule_winograd_nhwc.c, default float mode: on unless
# TVMJIT_WINOGRAD=0): bench/layers' conv3x3_64_56_nhwc shape (64 channels at 56x56,
# F(4x4)), the seed's (16 channels at 32x32, a batch of two, F(4x4)), 24 -> 32 channels
# at 13x11 (F(2x2)) and 256 channels at 14x14 (F(2x2): F(4x4)'s transformed weights would
# be 9.4 MB), each with OHWI weights and a per-channel bias and relu, the weights
# bound (transformed once at load, OHWI read through the prepack's perm) and, with
# --no-prepack, transformed by the kernel on every call: each output against numpy's
# float64 conv within 3e-5 of the output's scale (the errors are printed), 1 and 2 threads
# the same bits, --strict-float and TVMJIT_WINOGRAD=0 (the direct conv) within 5e-6 and
# not the same bits as Winograd.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy"; exit 77; }
P=DecomposeOpsForInference,CanonicalizeBindings,LegalizeOps,AnnotateTIROpPattern,FoldConstant,DeadCodeElimination,FuseOps,FuseTIR
M=$TMP/convs.rx
$PY - "$M" "$TMP" <<'PYEOF'
import sys, numpy as np
path, tmp = sys.argv[1], sys.argv[2]
shapes = [(1, 64, 64, 56, 56), (2, 16, 16, 32, 32), (1, 24, 32, 13, 11), (1, 256, 256, 14, 14)]  # n, c, f, h, w
args, body, outs = [], [], []
for i, (n, c, f, h, w) in enumerate(shapes):
    args += [f'x{i}: R.Tensor(({n}, {h}, {w}, {c}), dtype="float32")', f'w{i}: R.Tensor(({f}, 3, 3, {c}), dtype="float32")',
             f'b{i}: R.Tensor(({f},), dtype="float32")']
    body += [f'c{i} = R.nn.conv2d(x{i}, w{i}, strides=[1, 1], padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="OHWI")',
             f'a{i} = R.add(c{i}, b{i})', f'y{i} = R.nn.relu(a{i})']
    outs.append(f'y{i}')
open(path, 'w').write('from tvm.script import ir as I\nfrom tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n'
    '    @R.function\n    def main(' + ', '.join(args) + '):\n        with R.dataflow():\n' +
    ''.join(f'            {l}\n' for l in body) + f'            gv = ({", ".join(outs)})\n            R.output(gv)\n        return gv\n')
r = np.random.default_rng(5)
params = {}
for i, (n, c, f, h, w) in enumerate(shapes):
    np.save(f'{tmp}/x{i}.npy', np.maximum(r.standard_normal((n, h, w, c)), 0).astype('float32'))  # after a relu
    params[f'w{i}'] = (r.standard_normal((f, 3, 3, c)) * np.sqrt(2 / (9 * c))).astype('float32')
    params[f'b{i}'] = (r.standard_normal(f) * 0.1).astype('float32')
np.savez(f'{tmp}/params.npz', **params)
PYEOF
INPUTS="--input x0=$TMP/x0.npy --input x1=$TMP/x1.npy --input x2=$TMP/x2.npy --input x3=$TMP/x3.npy"
CHECK="
import sys, numpy as np
tmp, out, tol = sys.argv[1], np.load(sys.argv[2]), float(sys.argv[3])
p = np.load(tmp + '/params.npz')
for i in range(4):
    x = np.load(f'{tmp}/x{i}.npy').astype('float64'); w = p[f'w{i}'].astype('float64')
    n, h, wd, c = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    y = sum(np.einsum('nhwc,fc->nhwf', xp[:, a:a + h, b:b + wd, :], w[:, a, b, :]) for a in range(3) for b in range(3))
    y = np.maximum(y + p[f'b{i}'].astype('float64'), 0)
    got = out['output%d' % i]; err = np.abs(got - y).max() / np.abs(y).max()
    print(f'conv {i} ({c} -> {w.shape[0]} channels at {h}x{wd}, batch {n}): max error / max |y| = {err:.2e}')
    assert got.shape == y.shape and err <= tol, (i, err)
"
run() { # NAME THREADS ENV FLAGS...
  local name=$1 t=$2 env=$3; shift 3
  expect_exit 0 "$name, $t threads" -- env $env "$BIN" run "$M" --params "$TMP/params.npz" --bind-params --passes $P $INPUTS --threads $t --output "$TMP/$name$t.npz" "$@"
}
for t in 1 2; do
  run default $t "-u TVMJIT_WINOGRAD"
  run wino_noprepack $t "-u TVMJIT_WINOGRAD" --no-prepack
  run strict $t "-u TVMJIT_WINOGRAD" --strict-float
  run direct $t TVMJIT_WINOGRAD=0
done
for name in default wino_noprepack; do
  expect_exit 0 "$name matches numpy float64" -- $PY -c "$CHECK" "$TMP" "$TMP/${name}1.npz" 3e-5
  sed 's/^/  /' "$TMP/out"
done
for name in strict direct; do
  expect_exit 0 "$name (direct conv) matches numpy float64" -- $PY -c "$CHECK" "$TMP" "$TMP/${name}1.npz" 5e-6
done
SAME="
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
if sys.argv[3] == 'same':
    sys.exit(0 if all(a[k].tobytes() == b[k].tobytes() for k in a.keys()) else 1)
sys.exit(0 if all(a[k].tobytes() != b[k].tobytes() for k in a.keys()) else 1)  # every conv"
for name in default wino_noprepack strict; do
  expect_exit 0 "$name: same bits at 1 and 2 threads" -- $PY -c "$SAME" "$TMP/${name}1.npz" "$TMP/${name}2.npz" same
done
expect_exit 0 "no conv has the direct conv's bits (the rule applied to each)" -- $PY -c "$SAME" "$TMP/default1.npz" "$TMP/strict1.npz" differ
expect_exit 0 "TVMJIT_WINOGRAD=0: no conv has Winograd's bits" -- $PY -c "$SAME" "$TMP/default1.npz" "$TMP/direct1.npz" differ
# The bound OHWI weights are transformed at load and freed (the kernels read only U).
run verbose 1 "-u TVMJIT_WINOGRAD" --verbose
expect_text "$TMP/err" "weights: 4 bound weights (" "the conv weights are freed once packed"
expect_exit 0 "verbose: same bits" -- $PY -c "$SAME" "$TMP/default1.npz" "$TMP/verbose1.npz" same
finish
