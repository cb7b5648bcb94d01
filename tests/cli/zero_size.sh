#!/usr/bin/env bash
# Zero-sized tensors: a (0, 8) relu and a matmul over an empty inner dimension run, and
# the outputs have the right shapes and values (numpy reads them back).
. "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "SKIP: numpy missing"; exit 77; }
MODEL=$SRC/tests/models/zero_size.rx
/usr/bin/python3 - "$TMP" <<'PY'
import sys, numpy as np
np.save(sys.argv[1] + "/x.npy", np.zeros((0, 8), np.float16))
np.savez(sys.argv[1] + "/ab.npz", a=np.zeros((4, 0), np.float32), b=np.zeros((0, 3), np.float32))
PY
expect_exit 0 "zero-sized inputs from files" -- "$BIN" run "$MODEL" --input "$TMP/x.npy" --params "$TMP/ab.npz" --output "$TMP/out.npz"
/usr/bin/python3 - "$TMP/out.npz" <<'PY' && passes=$((passes + 1)) || { echo "FAIL: zero-size outputs"; failures=$((failures + 1)); }
import sys, numpy as np
z = np.load(sys.argv[1])
y, m = z["output0"], z["output1"]
assert y.shape == (0, 8) and y.dtype == np.float16, (y.shape, y.dtype)
assert m.shape == (4, 3) and m.dtype == np.float32 and (m == 0).all(), m
PY
expect_exit 0 "zero-sized inputs filled" -- "$BIN" run "$MODEL" --fill ones
expect_text "$TMP/out" "output 0: float16[0, 8]" "an empty output is summarised"
expect_text "$TMP/out" "output 1: float32[4, 3] min 0 max 0" "an empty sum is 0"
finish
