#!/usr/bin/env bash
# TVMScript constructs end to end: main returning a parameter, a constant and a value
# twice (each output its own copy), R.match_cast checked against the value's shape, and
# the calls tvmjit cannot run (packed functions, R.print) refused with a message naming
# the external function. Numbers are checked with numpy.
. "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "SKIP: numpy missing"; exit 77; }

cat >"$TMP/ret.rx" <<'RX'
@R.function
def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
    y1 = R.match_cast(y, R.Tensor((2, 3), "float32"))
    z = R.add(x, y1)
    return (x, z, R.const([[1.5, 2.5, 3.5], [4.0, 5.0, 6.0]], "float32"), z)
RX
/usr/bin/python3 - "$TMP" <<'PY'
import sys, numpy as np
np.save(sys.argv[1] + "/x.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
np.save(sys.argv[1] + "/y.npy", np.full((2, 3), 0.25, np.float32))
PY
expect_exit 0 "return a parameter, a constant and a value twice" -- "$BIN" run "$TMP/ret.rx" --input "$TMP/x.npy" --input "$TMP/y.npy" --output "$TMP/ret.npz"
if /usr/bin/python3 - "$TMP" <<'PY'
import sys, numpy as np
d = sys.argv[1]
x, y, o = np.load(d + "/x.npy"), np.load(d + "/y.npy"), np.load(d + "/ret.npz")
want = [x, x + y, np.array([[1.5, 2.5, 3.5], [4.0, 5.0, 6.0]], np.float32), x + y]
got = [o["output%d" % i] for i in range(4)]
assert len(o.files) == 4, o.files
for w, g in zip(want, got):
    assert g.dtype == np.float32 and g.shape == (2, 3) and np.array_equal(w, g), (w, g)
PY
then passes=$((passes + 1)); else echo "FAIL: returned values differ from numpy"; failures=$((failures + 1)); fi

# Non-finite literals in the forms users write (math.inf, float("nan")) and TVM prints ("inf").
cat >"$TMP/inf.rx" <<'RX'
@R.function
def main(x: R.Tensor((2, 3), "float32")):
    a = R.add(x, R.const(-math.inf, "float32"))
    b = R.multiply(x, R.const([float("nan"), 1.0, "inf"], "float32"))
    return (a, b)
RX
expect_exit 0 "math.inf / float(\"nan\") / \"inf\" constants" -- "$BIN" run "$TMP/inf.rx" --input "$TMP/x.npy" --output "$TMP/inf.npz"
if /usr/bin/python3 - "$TMP" <<'PY'
import sys, numpy as np
d = sys.argv[1]
x, o = np.load(d + "/x.npy"), np.load(d + "/inf.npz")
with np.errstate(invalid="ignore"):
    want = [x + np.float32(-np.inf), x * np.array([np.nan, 1.0, np.inf], np.float32)]
for w, g in zip(want, [o["output0"], o["output1"]]):
    assert np.array_equal(w, g, equal_nan=True), (w, g)
PY
then passes=$((passes + 1)); else echo "FAIL: non-finite constants differ from numpy"; failures=$((failures + 1)); fi
expect_exit 0 "non-finite constants print" -- "$BIN" print "$TMP/inf.rx"
expect_text "$TMP/out" 'R.const("-inf", "float32")' "-inf prints as TVM does"
expect_text "$TMP/out" 'R.const(["nan", 1, "inf"], "float32")' "an array with nan and inf prints as TVM does"
"$BIN" print "$TMP/inf.rx" >"$TMP/inf_printed.rx" 2>/dev/null
expect_exit 0 "the printed form runs" -- "$BIN" run "$TMP/inf_printed.rx" --input "$TMP/x.npy" --output "$TMP/inf2.npz"
if /usr/bin/python3 -c "
import sys, numpy as np
a, b = np.load(sys.argv[1] + '/inf.npz'), np.load(sys.argv[1] + '/inf2.npz')
assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in a.files)" "$TMP"
then passes=$((passes + 1)); else echo "FAIL: the printed form computes something else"; failures=$((failures + 1)); fi

cat >"$TMP/bad_cast.rx" <<'RX'
@R.function
def main(x: R.Tensor((2, 3), "float32")):
    y1 = R.match_cast(x, R.Tensor((3, 2), "float32"))
    return y1
RX
expect_exit 1 "match_cast to another shape" -- "$BIN" run "$TMP/bad_cast.rx" --input "$TMP/x.npy"
expect_text "$TMP/err" "binding 'y1': R.match_cast wants dimension 0 to be 3, the value has 2" "match_cast names the dimension"

cat >"$TMP/dps.rx" <<'RX'
@R.function
def main(x: R.Tensor((2, 3), "float32")):
    y = R.call_dps_packed("my_extern_kernel", (x,), R.Tensor((2, 3), "float32"))
    return y
RX
expect_exit 1 "call_dps_packed" -- "$BIN" run "$TMP/dps.rx" --input "$TMP/x.npy"
expect_text "$TMP/err" "binding 'y': R.call_dps_packed calls the external function 'my_extern_kernel', which tvmjit does not provide" "dps names the function"

cat >"$TMP/packed.rx" <<'RX'
@R.function(pure=False)
def main(x: R.Tensor((2, 3), "float32")):
    y = R.call_packed("vm.builtin.copy", x, sinfo_args=R.Tensor((2, 3), "float32"))
    return y
RX
expect_exit 1 "call_packed" -- "$BIN" run "$TMP/packed.rx" --input "$TMP/x.npy"
expect_text "$TMP/err" "R.call_packed calls the external function 'vm.builtin.copy'" "call_packed names the function"

cat >"$TMP/print.rx" <<'RX'
@R.function(pure=False)
def main(x: R.Tensor((2, 3), "float32")):
    R.print(x, format="x={}")
    y = R.add(x, x)
    return y
RX
expect_exit 1 "R.print" -- "$BIN" run "$TMP/print.rx" --input "$TMP/x.npy"
expect_text "$TMP/err" "R.print has an effect at run time" "print is refused by name"
finish
