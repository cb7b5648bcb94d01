#!/usr/bin/env bash
# The Python package (python/): its pytest suite against this build's library, then the
# README's install into a fresh virtualenv (Debian's python3, --system-site-packages for
# numpy and torch; no package index), used from another folder with no environment
# variables: the seed bit for bit against the command line, PyTorch in and out.
. "$(dirname "$0")/lib.bash"
BUILD=$(cd "${TVMJIT_BUILD_DIR:-$(dirname "$BIN")}" && pwd)
PY=/usr/bin/python3

if [ "${TVMJIT_SANITIZE:-OFF}" = ON ]; then
  echo "skip: a sanitizer build of libtvmjit.so cannot be loaded into an uninstrumented python3"
  exit 77
fi
for module in numpy pytest; do
  if ! "$PY" -c "import $module" 2>/dev/null; then
    echo "FAIL: $PY lacks $module: ./setup.sh --with-test-deps installs python3-$module"; exit 1
  fi
done

expect_exit 0 "pytest python/tests against the build tree" -- \
  env TVMJIT_LIBRARY="$BUILD/libtvmjit.so" TVMJIT_BIN="$BIN" "$PY" -m pytest -q -p no:cacheprovider "$SRC/python/tests"
tail -n 3 "$TMP/out"

expect_exit 0 "make a virtualenv" -- "$PY" -m venv --system-site-packages "$TMP/venv"
expect_exit 0 "pip install ./python (no index, no build isolation)" -- \
  env TVMJIT_BUILD_DIR="$BUILD" "$TMP/venv/bin/pip" install --no-index --no-build-isolation "$SRC/python"
cat >"$TMP/use.py" <<PYEOF
import os, numpy as np, tvmjit
assert tvmjit.__file__.startswith("$TMP/venv"), tvmjit.__file__  # the installed copy
m = tvmjit.load("$SRC/examples/seed/model.rx", params="$SRC/examples/seed/params.npz")
x = np.load("$SRC/examples/seed/data.npy")
want = np.load("$TMP/cli.npy").view(np.uint16)
assert np.array_equal(m(x).view(np.uint16), want)
try:
    import torch
except ImportError:
    print("torch: not installed, skipped")
else:
    y = torch.from_dlpack(m(torch.from_numpy(x)))
    assert np.array_equal(y.numpy().view(np.uint16), want)
    print("torch: from_dlpack output equals the command line's")
print("installed package: seed equals the command line bit for bit")
PYEOF
expect_exit 0 "the command line's output" -- "$BIN" run "$SRC/examples/seed/model.rx" --input "$SRC/examples/seed/data.npy" \
  --params "$SRC/examples/seed/params.npz" --output "$TMP/cli.npy"
expect_exit 0 "the installed package from another folder, no environment variables" -- \
  sh -c "cd '$TMP' && env -u TVMJIT_LIBRARY -u LD_LIBRARY_PATH '$TMP/venv/bin/python' '$TMP/use.py'"
cat "$TMP/out"
finish
