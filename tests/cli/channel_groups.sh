#!/usr/bin/env bash
# Channel groups (jit/channel_groups.c, transforms/tir/channel_slice.h): an expand 1x1 conv whose
# output only a depthwise conv reads runs with it a group of channels at a time. Two
# blocks (expand + batch_norm + clip, depthwise 3x3 + batch_norm + clip), the weights
# bound: A (24 -> 40 channels at 37x37, depthwise stride 2) is grouped with the group
# size set to 100 KiB (16 channels: groups of 16, 16 and a last one of 8); B (16 -> 48 at
# 30x30, stride 1) is not, as a relu also reads its expand's output. Checked: the profile
# shows the sliced kernels of A only (6 calls); the memory plan has A's 16-channel
# scratch instead of its 40-channel intermediate; grouped and ungrouped runs give the same
# bits at 1 and 2 threads, in the default float mode and with --strict-float; and the
# strict results equal a numpy float32 reference that adds the same terms in the same
# order, bit for bit.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy"; exit 77; }
P=DecomposeOpsForInference,CanonicalizeBindings,LegalizeOps,AnnotateTIROpPattern,FoldConstant,DeadCodeElimination,FuseOps,FuseTIR
M=$TMP/blocks.rx
$PY - "$M" "$TMP" <<'PYEOF'
import sys, numpy as np
path, tmp = sys.argv[1], sys.argv[2]
blocks = [(24, 40, 37, 2), (16, 48, 30, 1)]   # in channels, expanded channels, size, depthwise stride
args, body, outs = [], [], []
r = np.random.default_rng(5)
params, inputs = {}, {}
for i, (c, f, s, st) in enumerate(blocks):
    args += [f'x{i}: R.Tensor((1, {c}, {s}, {s}), dtype="float32")', f'we{i}: R.Tensor(({f}, {c}, 1, 1), dtype="float32")',
             f'wd{i}: R.Tensor(({f}, 1, 3, 3), dtype="float32")']
    args += [f'{n}{k}{i}: R.Tensor(({f},), dtype="float32")' for k in 'ed' for n in ('g', 'b', 'm', 'v')]
    body += [f'a{i} = R.nn.conv2d(x{i}, we{i}, strides=[1, 1], padding=[0, 0, 0, 0])',
             f'an{i} = R.nn.batch_norm(a{i}, ge{i}, be{i}, me{i}, ve{i}, axis=1, epsilon=1e-05)',
             f'ae{i} = an{i}[0]', f'e{i} = R.clip(ae{i}, R.prim_value(0), R.prim_value(6))',
             f'd{i} = R.nn.conv2d(e{i}, wd{i}, strides=[{st}, {st}], padding=[1, 1, 1, 1], groups={f})',
             f'dn{i} = R.nn.batch_norm(d{i}, gd{i}, bd{i}, md{i}, vd{i}, axis=1, epsilon=1e-05)',
             f'de{i} = dn{i}[0]', f'y{i} = R.clip(de{i}, R.prim_value(0), R.prim_value(6))']
    outs.append(f'y{i}')
    inputs[f'x{i}'] = r.standard_normal((1, c, s, s)).astype('float32')
    params[f'we{i}'] = (r.standard_normal((f, c, 1, 1)) * np.sqrt(2 / c)).astype('float32')
    params[f'wd{i}'] = (r.standard_normal((f, 1, 3, 3)) * 0.4).astype('float32')
    for k in 'ed':
        params[f'g{k}{i}'] = r.uniform(0.5, 1.5, f).astype('float32'); params[f'b{k}{i}'] = r.standard_normal(f).astype('float32')
        params[f'm{k}{i}'] = r.standard_normal(f).astype('float32') * 0.1; params[f'v{k}{i}'] = r.uniform(0.5, 1.5, f).astype('float32')
body.append('z1 = R.nn.relu(e1)')   # a second reader of block B's expand output
outs.append('z1')
open(path, 'w').write('from tvm.script import ir as I\nfrom tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n'
    '    @R.function\n    def main(' + ', '.join(args) + '):\n        with R.dataflow():\n' +
    ''.join(f'            {l}\n' for l in body) + f'            gv = ({", ".join(outs)})\n            R.output(gv)\n        return gv\n')
np.savez(f'{tmp}/params.npz', **params)
for k, v in inputs.items(): np.save(f'{tmp}/{k}.npy', v)
PYEOF
INPUTS="--input x0=$TMP/x0.npy --input x1=$TMP/x1.npy"
run() { # NAME GROUPS THREADS FLAGS...
  local name=$1 g=$2 t=$3; shift 3
  expect_exit 0 "$name, groups $g, $t threads" -- env TVMJIT_CHANNEL_GROUPS=$g "$BIN" run "$M" --params "$TMP/params.npz" --bind-params --passes $P $INPUTS --threads $t --output "$TMP/$name$g-$t.npz" "$@"
}
for t in 1 2; do
  for g in 0 100; do
    run default $g $t
    run strict $g $t --strict-float
  done
done
SAME="
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
sys.exit(0 if sorted(a.keys()) == sorted(b.keys()) and all(a[k].tobytes() == b[k].tobytes() for k in a.keys()) else 1)"
for name in default strict; do
  for t in 1 2; do
    expect_exit 0 "$name, $t threads: grouped and ungrouped give the same bits" -- $PY -c "$SAME" "$TMP/${name}0-$t.npz" "$TMP/${name}100-$t.npz"
  done
done
# numpy float32, each sum in the kernels' order: the 1x1 conv over input channels in order,
# the depthwise conv over (ry, rx) in order, batch_norm as decomposed (subtract, divide by
# sqrt(var + eps), multiply, add), clip.
REF="
import sys, numpy as np
tmp, out = sys.argv[1], np.load(sys.argv[2])
p = np.load(tmp + '/params.npz')
f32 = np.float32
def bn(y, k, i):
    q = lambda n: p[n + k + str(i)][:, None, None]
    return np.clip((y - q('m')) / np.sqrt(q('v') + f32(1e-5)) * q('g') + q('b'), f32(0), f32(6))
for i, st in ((0, 2), (1, 1)):
    x = np.load(f'{tmp}/x{i}.npy')[0]; we = p[f'we{i}']; wd = p[f'wd{i}']
    acc = np.zeros((we.shape[0],) + x.shape[1:], f32)
    for c in range(x.shape[0]): acc = acc + we[:, c, 0, 0][:, None, None] * x[c][None]
    e = bn(acc, 'e', i)
    xp = np.pad(e, ((0, 0), (1, 1), (1, 1))); s = x.shape[1]; o = (s + 2 - 3) // st + 1
    d = np.zeros((e.shape[0], o, o), f32)
    for ry in range(3):
        for rx in range(3): d = d + xp[:, ry:ry + st * (o - 1) + 1:st, rx:rx + st * (o - 1) + 1:st] * wd[:, 0, ry, rx][:, None, None]
    y = bn(d, 'd', i)
    got = out[f'output{i}'][0]
    assert got.shape == y.shape, (got.shape, y.shape)
    if got.tobytes() != y.tobytes():
        print(f'block {i}: {int((got != y).sum())} elements differ, max {np.abs(got - y).max():.3e}'); sys.exit(1)
"
expect_exit 0 "strict, grouped: numpy float32 in the same order, bit for bit" -- $PY -c "$REF" "$TMP" "$TMP/strict100-1.npz"
expect_exit 0 "profile with groups of 100 KiB" -- env TVMJIT_CHANNEL_GROUPS=100 "$BIN" bench "$M" --params "$TMP/params.npz" --bind-params --passes $P $INPUTS --threads 1 --warmup 0 --runs 1 --profile
grep -E '^ +[0-9]+ ' "$TMP/out" > "$TMP/calls"
expect_exit 0 "block A: 4 calls of 16 channels, 2 of 8 (its last group)" -- test "$(grep -c '_channels16 ' "$TMP/calls")-$(grep -c '_channels8 ' "$TMP/calls")" = 4-2
expect_exit 0 "block B (a second reader): not grouped" -- test "$(grep -c '_channels' "$TMP/calls")" = 6
expect_exit 0 "memory plan with groups" -- env TVMJIT_CHANNEL_GROUPS=100 "$BIN" run "$M" --params "$TMP/params.npz" --bind-params --passes $P $INPUTS --print-memory-plan
cp "$TMP/out" "$TMP/plan"
expect_text "$TMP/plan" "float32[1, 16, 37, 37]" "block A's scratch of 16 channels"
expect_text "$TMP/plan" "float32[1, 48, 30, 30]" "block B's intermediate is planned"
expect_exit 1 "block A's 40-channel intermediate is not planned" -- grep -qF "float32[1, 40, 37, 37]" "$TMP/plan"
finish
