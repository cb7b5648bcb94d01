#!/usr/bin/env bash
# The project's numpy reference (tests/reference/seed_reference.py) against the checked-in
# fixtures (tests/fixtures/, made earlier with another, independent numpy reference, see
# tests/fixtures/README.md): two references written apart must agree, bit for bit where
# both follow TVM's float16 order, within the float16 tolerance otherwise.
. "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy (setup.sh installs python3-numpy)"; exit 77; }
ref() { /usr/bin/python3 "$SRC/tests/reference/seed_reference.py" "$@"; }
FIX=$SRC/tests/fixtures
check() { # check WHAT -- command...
  local what=$1; shift 2
  if "$@" >"$TMP/cmp" 2>&1; then passes=$((passes + 1)); else echo "FAIL: $what: $(cat "$TMP/cmp")"; failures=$((failures + 1)); fi
}
check "inputs from examples/seed" -- ref inputs "$TMP/in" --dtype float16
for stage in conv1:conv1_f16_acc16 ln_conv1:ln_conv1_f16 all:y_f16_acc16; do
  check "float16 $stage" -- ref tvm_f16 "$TMP/in/x.npy" "$TMP/in/params.npz" "$TMP/${stage%%:*}.npy" --stage "${stage%%:*}"
  check "float16 ${stage%%:*} equals tests/fixtures/${stage#*:}.npy" -- ref compare "$TMP/${stage%%:*}.npy" "$FIX/${stage#*:}.npy" 0 0 --exact
done
check "float64 network" -- ref exact "$TMP/in/x.npy" "$TMP/in/params.npz" "$TMP/y64.npy"
check "y_f16_acc32.npy within float16 tolerance of float64" -- ref compare "$FIX/y_f16_acc32.npy" "$TMP/y64.npy" 1e-2 5e-2
check "y_f16_acc16.npy within float16 tolerance of float64" -- ref compare "$FIX/y_f16_acc16.npy" "$TMP/y64.npy" 1e-2 5e-2
# The reference can fail: a float16 result is not float64 to 1e-4.
if ref compare "$FIX/y_f16_acc16.npy" "$TMP/y64.npy" 1e-4 1e-4 >/dev/null; then
  echo "FAIL: compare accepts float16 results at float32 tolerance"; failures=$((failures + 1))
else passes=$((passes + 1)); fi
finish
