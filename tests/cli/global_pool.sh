#!/usr/bin/env bash
# Global pooling (schedule_global_pool.c sums each plane in vector partial results, not in
# the IR's order): tests/models/global_pools.rx through the JIT in the default float mode
# and with --strict-float, each output against numpy's float64 mean / max / sum, and at
# 1 and 2 threads the same bits.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy"; exit 77; }
M=$SRC/tests/models/global_pools.rx

$PY -c "
import numpy as np; r = np.random.default_rng(7)
f = lambda *s: (r.standard_normal(s) * 2 + 0.5).astype('float32')
np.savez('$TMP/in.npz', a=f(2, 40, 7, 7), b=f(1, 24, 14, 14), c=f(1, 20, 9, 9), d=f(1, 8, 5, 5), e=f(1, 7, 7, 32))"
CHECK="
import numpy as np, sys
i = np.load('$TMP/in.npz'); o = np.load(sys.argv[1])
x = {k: i[k].astype('float64') for k in 'abcde'}
ref = [x['a'].mean((2, 3), keepdims=True), x['b'].mean((2, 3)), x['c'].max((2, 3), keepdims=True),
       x['d'].sum((2, 3), keepdims=True), x['e'].mean((1, 2), keepdims=True)]
for k, want in enumerate(ref):
    got = o['output%d' % k]
    assert got.shape == want.shape, (k, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
"
for mode in default strict; do
  flag=; [ $mode = strict ] && flag=--strict-float
  for t in 1 2; do
    expect_exit 0 "global pools ($mode, $t threads)" -- "$BIN" run "$M" --params "$TMP/in.npz" --threads $t $flag --output "$TMP/$mode$t.npz"
    expect_exit 0 "global pools ($mode, $t threads) match numpy" -- $PY -c "$CHECK" "$TMP/$mode$t.npz"
  done
  expect_exit 0 "global pools ($mode): same bits at 1 and 2 threads" -- $PY -c "
import numpy as np
a, b = np.load('$TMP/${mode}1.npz'), np.load('$TMP/${mode}2.npz')
assert sorted(a.keys()) == sorted(b.keys())
for k in a.keys(): assert a[k].tobytes() == b[k].tobytes(), k"
done
finish
