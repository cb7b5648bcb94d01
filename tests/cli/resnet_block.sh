#!/bin/bash
# examples/resnet_block (conv 7x7/2 + batch_norm + relu + max_pool, a residual block
# with a strided 1x1 projection, adaptive_avg_pool2d, flatten, linear), written as
# TVM's PyTorch frontend prints it: `tvmjit run` matches PyTorch's output
# (expected.npy, made by examples/resnet_block/generate.py) within 1e-4 at 1 and 2
# threads, and within float16 tolerance with --mixed-precision.
source "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy"; exit 77; }
EX="$SRC/examples/resnet_block"
close() { # close OUT.npy ATOL RTOL
  /usr/bin/python3 -c "
import sys, numpy as np
y = np.load(sys.argv[1]); e = np.load(sys.argv[2])
ok = y.shape == e.shape and np.allclose(y, e, atol=float(sys.argv[3]), rtol=float(sys.argv[4]))
print('max abs error', np.abs(y.astype(np.float64) - e).max() if y.shape == e.shape else 'shape ' + str(y.shape))
sys.exit(0 if ok else 1)" "$1" "$EX/expected.npy" "$2" "$3"
}
for t in 1 2; do
  expect_exit 0 "run at $t threads" -- "$BIN" run "$EX/model.rx" --input "$EX/data.npy" --params "$EX/params.npz" \
    --output "$TMP/y$t.npy" --threads "$t" --no-cache
  expect_exit 0 "matches PyTorch within 1e-4 at $t threads" -- close "$TMP/y$t.npy" 1e-4 1e-4
done
expect_exit 0 "run with --mixed-precision" -- "$BIN" run "$EX/model.rx" --input "$EX/data.npy" \
  --params "$EX/params.npz" --output "$TMP/ymp.npy" --mixed-precision --no-cache
expect_exit 0 "matches PyTorch within float16 tolerance with --mixed-precision" -- close "$TMP/ymp.npy" 5e-2 1e-2
finish
