#!/usr/bin/env bash
# bench/layers computes what it claims (no timing): flags are checked before anything is
# installed or built; the oneDNN harness rejects bad layer descriptions; and, when oneDNN
# and PyTorch are installed, one layer of every kind written by bench/layers/catalog.py
# runs on tvmjit and oneDNN with outputs matching PyTorch (bench/layers/run --check-only,
# which times nothing). Peers that are missing are skipped.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c "import numpy" 2>/dev/null || { echo "SKIP: numpy missing"; exit 77; }
CC=${CC:-cc}
RUN="$SRC/bench/layers/run"

expect_exit 2 "layers --threads a" -- "$PY" "$RUN" --threads "a"
expect_text "$TMP/err" "--threads takes counts" "layers --threads message"
expect_exit 2 "layers --rounds 0" -- "$PY" "$RUN" --rounds 0
expect_exit 2 "layers --only nothing" -- "$PY" "$RUN" --only "no_such_layer"
expect_text "$TMP/err" "no layer matches no_such_layer" "layers --only message"
expect_exit 0 "layers --list" -- "$PY" "$RUN" --list
expect_text "$TMP/out" "stem7x7s2_3to64_224_nhwc  conv layout=nhwc" "layers --list names the stem"
expect_text "$TMP/out" "bmm_12x128x64x128  matmul batch=12 m=128 k=64 n=128" "layers --list names the attention matmul"

if echo '#include <dnnl.h>' | "$CC" -E - >/dev/null 2>&1; then
  L="$TMP/onednn_layers"
  expect_exit 0 "onednn_layers builds" -- "$CC" -O2 "$SRC/bench/layers/onednn_layers.c" -ldnnl -lm -o "$L"
  expect_exit 2 "onednn_layers unknown kind" -- "$L" lstm --dir "$TMP"
  expect_text "$TMP/err" "unknown layer kind 'lstm'" "onednn_layers names the kind"
  expect_exit 2 "onednn_layers typo in an attribute" -- "$L" matmul batch=0 m=1 k=2 nn=3 --dir "$TMP"
  expect_text "$TMP/err" "unknown attribute for this layer kind: nn" "onednn_layers names the attribute"
  expect_exit 2 "onednn_layers missing attribute" -- "$L" gelu --dir "$TMP"
  expect_text "$TMP/err" "missing attribute shape" "onednn_layers names the missing attribute"
  expect_exit 1 "onednn_layers without inputs" -- "$L" gelu shape=4x8 --dir "$TMP/nowhere"
  expect_text "$TMP/err" "cannot open $TMP/nowhere/x.npy" "onednn_layers names the missing file"
else
  echo "SKIP: oneDNN not installed (libdnnl-dev)"; exit 77
fi

if $PY -c "import torch" 2>/dev/null; then
  # One layer per code path of the harness: NCHW conv with the fused batch_norm+relu,
  # NHWC 1x1, grouped, depthwise stride 2, packed 2-D and batched matmul, the row-wise
  # ops, both pools.
  expect_exit 0 "layers --check-only" -- "$PY" "$RUN" --check-only --no-install --tvmjit "$BIN" --out "$TMP/layers" \
    --threads "1 2" --only 'conv3x3_64_56_bn_relu_nchw,conv1x1_256to64_56_nhwc,group3x3*,dw3x3s2*,gemv*,bmm*,softmax*,layer_norm*,gelu*,max_pool*,avg_pool*'
  expect_text "$TMP/out" "11 layer(s) agree with PyTorch at 1 and 2 thread(s)" "layers --check-only result"
  [ ! -e "$TMP/layers/table.md" ] && passes=$((passes + 1)) || { echo "FAIL: --check-only wrote a table"; failures=$((failures + 1)); }
  # tvmjit binds what oneDNN prepares once: the conv's weight and batch_norm statistics,
  # the GEMV's matrix; the batched matmul's operands are both activations.
  expect_exit 0 "layers constants.npz" -- "$PY" -c "import numpy as np, sys; d = sys.argv[1]
assert sorted(np.load(d + '/conv3x3_64_56_bn_relu_nchw/constants.npz')) == ['beta', 'gamma', 'mean', 'var', 'w']
assert list(np.load(d + '/gemv_1x768x768/constants.npz')) == ['b']
assert list(np.load(d + '/bmm_12x128x64x128/constants.npz')) == []" "$TMP/layers"
  # every operand an input (the weights repacked on every call)
  expect_exit 0 "layers --weights-as-inputs" -- "$PY" "$RUN" --check-only --no-install --tvmjit "$BIN" \
    --out "$TMP/layers_inputs" --threads 1 --weights-as-inputs --only 'conv1x1_256to64_56_nhwc,gemv*'
  expect_text "$TMP/out" "2 layer(s) agree with PyTorch at 1 thread(s)" "layers --weights-as-inputs result"
else
  echo "SKIP: PyTorch not installed (python3-torch)"; exit 77
fi
finish
