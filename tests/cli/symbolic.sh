#!/usr/bin/env bash
# Symbolic shapes: one loaded model runs at several sizes of its symbolic dims (its
# kernels compiled once, for every size), matches numpy (and PyTorch for the conv
# network, when installed), and a bad shape is a clear error.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy"; exit 77; }
M=$SRC/tests/models

# Elementwise over (n, 4): numpy's relu(x + y) at n = 1, 5, 17.
for n in 1 5 17; do
  $PY -c "
import numpy as np; r = np.random.default_rng($n)
np.save('$TMP/x$n.npy', r.standard_normal(($n, 4)).astype('float32'))
np.save('$TMP/y$n.npy', r.standard_normal(($n, 4)).astype('float32'))"
  expect_exit 0 "add+relu at n=$n" -- "$BIN" run "$M/symbolic_add_relu.rx" --input x="$TMP/x$n.npy" --input y="$TMP/y$n.npy" --output "$TMP/o$n.npy"
  expect_exit 0 "add+relu at n=$n matches numpy" -- $PY -c "
import numpy as np
x, y, o = (np.load('$TMP/%s$n.npy' % k) for k in 'xyo')
assert o.shape == ($n, 4), o.shape
np.testing.assert_allclose(o, np.maximum(x + y, 0), rtol=1e-6, atol=1e-6)"
done

# Bad shapes name the input, the dim and the var; nothing is written.
expect_exit 1 "n bound twice to different sizes" -- "$BIN" run "$M/symbolic_add_relu.rx" --input x="$TMP/x5.npy" --input y="$TMP/y17.npy" --output "$TMP/bad.npy"
expect_text "$TMP/err" "input 'y': dim 0 is 17, but n = 5 from dim 0 of input 'x'" "the mismatch names both inputs and the var"
[ ! -e "$TMP/bad.npy" ] && passes=$((passes + 1)) || { echo "FAIL: an output was written for a bad shape"; failures=$((failures + 1)); }
$PY -c "import numpy as np; np.save('$TMP/x3d.npy', np.zeros((5, 3), 'float32'))"
expect_exit 1 "a constant dim differs" -- "$BIN" run "$M/symbolic_add_relu.rx" --input x="$TMP/x3d.npy" --input y="$TMP/y5.npy"
expect_text "$TMP/err" "input 'x': expected float32[?, 4], got float32[5, 3]" "the expected shape shows the symbolic dim"
expect_exit 1 "--fill cannot size a symbolic input" -- "$BIN" run "$M/symbolic_add_relu.rx" --input x="$TMP/x5.npy" --fill zeros
expect_text "$TMP/err" "input 'y' has a symbolic dim 0" "--fill names the input"

# One load, repeated calls at one size compile once: the add+relu kernel is row-
# independent, so it is compiled at 32, 8 and 1 rows (transforms/tir/row_split.h).
expect_exit 0 "repeated calls" -- "$BIN" run "$M/symbolic_add_relu.rx" --input x="$TMP/x5.npy" --input y="$TMP/y5.npy" --repeat 3 --verbose --no-cache
expect_text "$TMP/err" "3 kernels requested, 3 compiled" "three calls at one size compile one kernel (at three row counts)"

# Attention with a symbolic sequence length s, against numpy.
for s in 1 7 16; do
  $PY -c "
import numpy as np; r = np.random.default_rng(100 + $s)
np.savez('$TMP/a$s.npz', x=r.standard_normal((1, $s, 8)).astype('float32'), wq=r.standard_normal((8, 8)).astype('float32'), wk=r.standard_normal((8, 8)).astype('float32'), wv=r.standard_normal((8, 8)).astype('float32'))"
  expect_exit 0 "attention at s=$s" -- "$BIN" run "$M/symbolic_attention.rx" --params "$TMP/a$s.npz" --output "$TMP/ao$s.npy"
  expect_exit 0 "attention at s=$s matches numpy" -- $PY -c "
import numpy as np
a = np.load('$TMP/a$s.npz'); o = np.load('$TMP/ao$s.npy')
x = a['x'].astype('float64'); q, k, v = (x @ a[w] for w in ('wq', 'wk', 'wv'))
sc = q @ k.transpose(0, 2, 1) * 0.35355339
p = np.exp(sc - sc.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
assert o.shape == (1, $s, 8), o.shape
np.testing.assert_allclose(o, p @ v, rtol=1e-4, atol=1e-4)"
done

# A CNN with a symbolic batch, against PyTorch's conv2d and layer_norm.
if $PY -c 'import torch' 2>/dev/null; then
  for n in 1 3; do
    $PY -c "
import numpy as np; r = np.random.default_rng(200 + $n)
f = lambda *s: r.standard_normal(s).astype('float32')
np.savez('$TMP/c$n.npz', x=f($n, 4, 9, 9), w=f(6, 2, 3, 3), bias=f(6, 1, 1), gamma=f(3, 4), beta=f(3, 4))"
    expect_exit 0 "cnn at n=$n" -- "$BIN" run "$M/symbolic_cnn.rx" --params "$TMP/c$n.npz" --output "$TMP/co$n.npy"
    expect_exit 0 "cnn at n=$n matches PyTorch" -- $PY -c "
import numpy as np, torch, torch.nn.functional as F
a = {k: torch.from_numpy(v).double() for k, v in np.load('$TMP/c$n.npz').items()}
x = F.pad(a['x'], (2, 1, 1, 0))
y = F.conv2d(x, a['w'], stride=2, dilation=2, groups=2) + a['bias']
y = F.relu(F.layer_norm(y, (3, 4), a['gamma'], a['beta'], eps=1e-5))
o = np.load('$TMP/co$n.npy'); assert o.shape == ($n, 6, 3, 4), o.shape
np.testing.assert_allclose(o, y.numpy(), rtol=1e-4, atol=1e-4)"
  done
fi
# One loaded model, three sizes in one process (the Python package over this build's
# library): the attention layer at s = 16, 7, 1 and the CNN at n = 8, 3, 1 match numpy /
# PyTorch, and the module's report shows that no size after the first compiled anything.
if [ "${TVMJIT_SANITIZE:-OFF}" != ON ]; then
  BUILD=$(cd "${TVMJIT_BUILD_DIR:-$(dirname "$BIN")}" && pwd)
  expect_exit 0 "one compile serves every size" -- env TVMJIT_LIBRARY="$BUILD/libtvmjit.so" PYTHONPATH="$SRC/python" $PY - "$M" <<'PY'
import re, sys
import numpy as np
import tvmjit

def compiled(m):
    return sum(int(k) for k in re.findall(r"requested, (\d+) compiled", m.report))

def softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)

m = tvmjit.Module(sys.argv[1] + "/symbolic_attention.rx", use_cache=False)
first = compiled(m)
assert first > 0, m.report
for s in (16, 7, 1):
    r = np.random.default_rng(300 + s)
    x, wq, wk, wv = (r.standard_normal(sh).astype("float32") for sh in ((1, s, 8), (8, 8), (8, 8), (8, 8)))
    o = m(x, wq, wk, wv)
    xd = x.astype("float64")
    q, k, v = xd @ wq, xd @ wk, xd @ wv
    ref = softmax(q @ k.transpose(0, 2, 1) * 0.35355339) @ v
    assert o.shape == (1, s, 8), o.shape
    np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-4)
    assert compiled(m) == first, ("s=%d compiled more" % s, m.report)

try:
    import torch, torch.nn.functional as F
except ImportError:
    torch = None
if torch is not None:
    m = tvmjit.Module(sys.argv[1] + "/symbolic_cnn.rx", use_cache=False)
    first = compiled(m)
    for n in (8, 3, 1):
        r = np.random.default_rng(400 + n)
        f = lambda *sh: r.standard_normal(sh).astype("float32")
        a = dict(x=f(n, 4, 9, 9), w=f(6, 2, 3, 3), bias=f(6, 1, 1), gamma=f(3, 4), beta=f(3, 4))
        o = m(**a)
        t = {k: torch.from_numpy(v).double() for k, v in a.items()}
        y = F.conv2d(F.pad(t["x"], (2, 1, 1, 0)), t["w"], stride=2, dilation=2, groups=2) + t["bias"]
        y = F.relu(F.layer_norm(y, (3, 4), t["gamma"], t["beta"], eps=1e-5))
        assert o.shape == (n, 6, 3, 4), o.shape
        np.testing.assert_allclose(o, y.numpy(), rtol=1e-4, atol=1e-4)
        assert compiled(m) == first, ("n=%d compiled more" % n, m.report)
PY
fi
finish
