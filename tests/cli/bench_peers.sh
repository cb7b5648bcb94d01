#!/usr/bin/env bash
# The benchmark harness's pieces compute what they claim (no timing assertions): the FMA
# micro-kernel builds and prints its JSON; the oneDNN program and the PyTorch script (when
# those peers are installed) give the float32 seed network's output, matching tvmjit
# within 1e-4; bench/compare rejects bad flags. Peers that are missing are skipped.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c "import numpy" 2>/dev/null || { echo "SKIP: numpy missing"; exit 77; }
CC=${CC:-cc}

expect_exit 0 "fma_peak builds" -- "$CC" -O2 -pthread "$SRC/bench/fma_peak.c" -o "$TMP/fma_peak"
expect_exit 0 "fma_peak runs" -- "$TMP/fma_peak" --threads "1 2" --reps 1 --iters 100000
$PY - "$TMP/out" <<'PY' && passes=$((passes + 1)) || { echo "FAIL: fma_peak JSON"; failures=$((failures + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["isa"] in ("avx512", "avx2") and set(d["gflops"]) == {"1", "2"}, d
# Rates only: a loaded machine can make any of them tiny, so no bound is asserted.
assert all(isinstance(v, (int, float)) and v >= 0 for k in ("gflops", "f16_gmacs", "f16_native_gmacs") for v in d.get(k, {}).values()), d
assert d["isa"] != "avx512" or set(d["f16_gmacs"]) == {"1", "2"}, d
# The native float16 rate is there exactly when the CPU has AVX512-FP16.
flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
assert ("f16_native_gmacs" in d) == ("avx512_fp16" in flags), d
assert "f16_native_gmacs" not in d or set(d["f16_native_gmacs"]) == {"1", "2"}, d
# The vdpbf16ps rate is there exactly when the CPU has AVX512-BF16.
assert ("bf16_gflops" in d) == ("avx512_bf16" in flags), d
assert "bf16_gflops" not in d or (set(d["bf16_gflops"]) == {"1", "2"} and min(d["bf16_gflops"].values()) >= 0), d
PY
expect_exit 2 "fma_peak bad thread count" -- "$TMP/fma_peak" --threads "0"

# bench/compare: flags are checked before anything is installed or built.
expect_exit 2 "compare --threads a" -- "$PY" "$SRC/bench/compare" --threads "a"
expect_text "$TMP/err" "--threads takes counts" "compare --threads message"
expect_exit 2 "compare --runs 0" -- "$PY" "$SRC/bench/compare" --runs 0

# The float32 inputs: the seed's float16 inputs widened (exactly), one file per parameter.
$PY - "$SRC/examples/seed" "$TMP" <<'PY' || { echo "FAIL: making inputs"; exit 1; }
import sys, numpy as np
ex, d = sys.argv[1], sys.argv[2]
p = np.load(ex + "/params.npz")
np.save(d + "/data.npy", np.load(ex + "/data.npy").astype(np.float32))
for k in p.files:
    np.save(f"{d}/{k}.npy", p[k].astype(np.float32))
np.savez(d + "/params.npz", **{k: p[k].astype(np.float32) for k in p.files})
PY
expect_exit 0 "tvmjit float32 reference" -- "$BIN" run "$SRC/tests/models/seed_f32_ops.rx" --input "$TMP/data.npy" --params "$TMP/params.npz" --output "$TMP/y_tvmjit.npy"

close() { # close NAME FILE: FILE matches tvmjit's float32 output within rtol = atol = 1e-4
  $PY -c "import numpy as np,sys; a=np.load(sys.argv[1]); b=np.load(sys.argv[2]); sys.exit(0 if a.shape==b.shape and np.allclose(a,b,rtol=1e-4,atol=1e-4) and np.abs(b).max()>1 else 1)" \
    "$TMP/y_tvmjit.npy" "$2" && passes=$((passes + 1)) || { echo "FAIL: $1 output differs from tvmjit float32"; failures=$((failures + 1)); }
}

if echo '#include <dnnl.h>' | "$CC" -E - >/dev/null 2>&1; then
  expect_exit 0 "onednn_seed builds" -- "$CC" -O2 "$SRC/bench/onednn_seed.c" -ldnnl -o "$TMP/onednn_seed"
  expect_exit 0 "onednn_seed runs" -- "$TMP/onednn_seed" "$TMP" --threads 1 --warmup 0 --runs 1 --output "$TMP/y_onednn.npy"
  expect_text "$TMP/out" '"threads": 1' "onednn_seed JSON"
  close oneDNN "$TMP/y_onednn.npy"
  expect_exit 1 "onednn_seed without inputs" -- "$TMP/onednn_seed" "$TMP/nowhere"
  expect_text "$TMP/err" "cannot open $TMP/nowhere/data.npy" "onednn_seed names the missing file"
else
  echo "SKIP: oneDNN not installed (libdnnl-dev)"
fi

if $PY -c "import torch" 2>/dev/null; then
  expect_exit 0 "torch_seed runs" -- "$PY" "$SRC/bench/torch_seed.py" "$TMP" --threads 1 --warmup 0 --runs 1 --output "$TMP/y_torch.npy"
  close PyTorch "$TMP/y_torch.npy"
else
  echo "SKIP: PyTorch not installed (python3-torch)"
fi
finish
