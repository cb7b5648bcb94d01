#!/usr/bin/env bash
# Symbolic-shape legalizations whose index arithmetic goes through TVM's simplified
# forms (transforms/legalize/canonical_simplify.c): each model runs at two sizes of
# its symbolic dims and matches numpy.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy"; exit 77; }
M=$SRC/tests/models

# conv2d_transpose, stride 2, 3x3 kernel, over (h, w) = (3, 4) and (6, 2).
for hw in "3 4" "6 2"; do
  set -- $hw
  $PY -c "
import numpy as np; r = np.random.default_rng($1 * 10 + $2)
np.savez('$TMP/ct$1$2.npz', x=r.standard_normal((1, 2, $1, $2)).astype('float32'), k=r.standard_normal((2, 3, 3, 3)).astype('float32'))"
  expect_exit 0 "conv2d_transpose at h=$1 w=$2" -- "$BIN" run "$M/symbolic_conv2d_transpose.rx" --params "$TMP/ct$1$2.npz" --output "$TMP/cto$1$2.npy"
  expect_exit 0 "conv2d_transpose at h=$1 w=$2 matches numpy" -- $PY -c "
import numpy as np
a = np.load('$TMP/ct$1$2.npz'); x = a['x'].astype('float64'); k = a['k'].astype('float64')
h, w = $1, $2; ref = np.zeros((1, 3, 2 * h + 1, 2 * w + 1))
for i in range(h):
  for j in range(w):
    ref[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += np.einsum('c,cokl->okl', x[0, :, i, j], k)
o = np.load('$TMP/cto$1$2.npy'); assert o.shape == ref.shape, o.shape
np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-4)"
done

# flatten of (a, b, c) at (2, 3, 4) and (5, 1, 3): row-major order.
for abc in "2 3 4" "5 1 3"; do
  set -- $abc
  $PY -c "import numpy as np; np.save('$TMP/f$1$2$3.npy', np.arange($1 * $2 * $3, dtype='float32').reshape($1, $2, $3) * 0.5)"
  expect_exit 0 "flatten at ($1, $2, $3)" -- "$BIN" run "$M/symbolic_flatten.rx" --input x="$TMP/f$1$2$3.npy" --output "$TMP/fo$1$2$3.npy"
  expect_exit 0 "flatten at ($1, $2, $3) matches numpy" -- $PY -c "
import numpy as np
x = np.load('$TMP/f$1$2$3.npy'); o = np.load('$TMP/fo$1$2$3.npy')
np.testing.assert_array_equal(o, x.reshape(-1))"
done

# batch_norm with batch statistics over (n, c, h, w) = (2, 3, 4, 5) and (1, 4, 2, 3).
for s in "2 3 4 5" "1 4 2 3"; do
  set -- $s
  $PY -c "
import numpy as np; r = np.random.default_rng($1 + $2 * 7)
f = lambda *s: r.standard_normal(s).astype('float32')
np.savez('$TMP/bn$1$2.npz', x=f($1, $2, $3, $4) * 2 + 1, gamma=f($2), beta=f($2), mean=f($2), var=np.abs(f($2)))"
  expect_exit 0 "batch_norm at ($*)" -- "$BIN" run "$M/symbolic_batch_norm.rx" --params "$TMP/bn$1$2.npz" --output "$TMP/bno$1$2.npy"
  expect_exit 0 "batch_norm at ($*) matches numpy" -- $PY -c "
import numpy as np
a = np.load('$TMP/bn$1$2.npz'); x = a['x'].astype('float64')
m = x.mean(axis=(0, 2, 3), keepdims=True); v = x.var(axis=(0, 2, 3), keepdims=True)
ref = (x - m) / np.sqrt(v + 1e-5) * a['gamma'].reshape(1, -1, 1, 1) + a['beta'].reshape(1, -1, 1, 1)
o = np.load('$TMP/bno$1$2.npy'); assert o.shape == x.shape, o.shape
np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-4)"
done
# concat of (a, b0), (a, b1), (a, b2) along the symbolic axis 1.
for sz in "2 1 3 2" "3 4 1 5"; do
  set -- $sz
  $PY -c "
import numpy as np; r = np.random.default_rng($1 * 100 + $2 * 10 + $3)
np.savez('$TMP/cc$1$2$3.npz', x=r.standard_normal(($1, $2)).astype('float32'), y=r.standard_normal(($1, $3)).astype('float32'), z=r.standard_normal(($1, $4)).astype('float32'))"
  expect_exit 0 "concat at ($*)" -- "$BIN" run "$M/symbolic_concat.rx" --params "$TMP/cc$1$2$3.npz" --output "$TMP/cco$1$2$3.npy"
  expect_exit 0 "concat at ($*) matches numpy" -- $PY -c "
import numpy as np
a = np.load('$TMP/cc$1$2$3.npz'); o = np.load('$TMP/cco$1$2$3.npy')
np.testing.assert_array_equal(o, np.concatenate([a['x'], a['y'], a['z']], axis=1))"
done
# group_norm with 2 groups over (n, c, h, w) = (2, 4, 3, 5) and (1, 6, 2, 2).
for s in "2 4 3 5" "1 6 2 2"; do
  set -- $s
  $PY -c "
import numpy as np; r = np.random.default_rng($1 + $2 * 3)
f = lambda *s: r.standard_normal(s).astype('float32')
np.savez('$TMP/gn$1$2.npz', x=f($1, $2, $3, $4), gamma=f($2), beta=f($2))"
  expect_exit 0 "group_norm at ($*)" -- "$BIN" run "$M/symbolic_group_norm.rx" --params "$TMP/gn$1$2.npz" --output "$TMP/gno$1$2.npy"
  expect_exit 0 "group_norm at ($*) matches numpy" -- $PY -c "
import numpy as np
a = np.load('$TMP/gn$1$2.npz'); x = a['x'].astype('float64'); n, c, h, w = x.shape
g = x.reshape(n, 2, c // 2, h, w)
m = g.mean(axis=(2, 3, 4), keepdims=True); v = g.var(axis=(2, 3, 4), keepdims=True)
ref = ((g - m) / np.sqrt(v + 1e-5)).reshape(n, c, h, w) * a['gamma'].reshape(1, -1, 1, 1) + a['beta'].reshape(1, -1, 1, 1)
o = np.load('$TMP/gno$1$2.npy'); assert o.shape == x.shape, o.shape
np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-4)"
done
finish
