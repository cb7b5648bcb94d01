#!/usr/bin/env bash
# Every elementwise operator of ir/op/unary.c and ir/op/binary.c end to end (parse, the
# default pipeline, JIT, run) against numpy (/usr/bin/python3), for each dtype TVM
# accepts: float32, float16, int32 (and int8/uint8/bool where the op is about them),
# with NaN/inf, integer edge values (INT_MIN, overflow), broadcasting, integer division
# and modulo by zero (0, docs/numerics.md) and shifts out of range (numpy's results).
# The reference follows TVM where TVM and numpy differ: round halves away from zero,
# sign(NaN) = 0, not_equal is an ordered compare (NaN != NaN is false), logical_xor of
# integers is a bitwise xor. Tolerances: float32 rtol = atol = 1e-5 (libm vs numpy);
# float16 computed in float16: rtol 1e-2, atol 5e-2 (CONTRIBUTING.md).
. "$(dirname "$0")/lib.bash"
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no numpy"; exit 77; }
TVMJIT_CACHE=0 /usr/bin/python3 - "$BIN" "$TMP" <<'PY'
import math, subprocess, sys
import numpy as np

BIN, TMP = sys.argv[1], sys.argv[2]
np.seterr(all="ignore")
rng = np.random.default_rng(15)
failures, passes = [], 0

def rx(op, args, out_dtype=None, extra=""):
    params = ", ".join(f"{n}: R.Tensor({tuple(a.shape)!r}, \"{a.dtype}\")" for n, a in args)
    call_args = ", ".join(n for n, _ in args) + extra
    return ("from tvm.script import ir as I\nfrom tvm.script import relax as R\nfrom tvm.script import tir as T\n"
            "@I.ir_module\nclass Module:\n"
            "    @R.function\n"
            f"    def main({params}):\n"
            "        with R.dataflow():\n"
            f"            gv = R.{op}({call_args})\n"
            "            R.output(gv)\n"
            "        return gv\n")

def run(op, arrays, extra=""):
    names = ["x", "y"][:len(arrays)]
    model = f"{TMP}/m.rx"
    open(model, "w").write(rx(op, list(zip(names, arrays)), extra=extra))
    cmd = [BIN, "run", model, "--output", f"{TMP}/out.npy"]
    for n, a in zip(names, arrays):
        np.save(f"{TMP}/{n}.npy", a)
        cmd += ["--input", f"{TMP}/{n}.npy"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return np.load(f"{TMP}/out.npy"), None

def check(what, op, arrays, want, rtol=0.0, atol=0.0, extra=""):
    global passes
    got, err = run(op, arrays, extra)
    if got is None:
        failures.append(f"{what}: tvmjit failed: {err}")
        return
    want = np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        failures.append(f"{what}: got {got.dtype}{got.shape}, want {want.dtype}{want.shape}")
        return
    if want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        same_special = np.array_equal(np.isnan(g), np.isnan(w)) and np.array_equal(np.isinf(g) & (g > 0), np.isinf(w) & (w > 0)) \
            and np.array_equal(np.isinf(g) & (g < 0), np.isinf(w) & (w < 0))
        fin = np.isfinite(w) & np.isfinite(g)
        ok = same_special and np.all(np.abs(g[fin] - w[fin]) <= atol + rtol * np.abs(w[fin]))
    else:
        ok = np.array_equal(got, want)
    if ok:
        passes += 1
    else:
        bad = np.argwhere(~np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))[:3]
        detail = "; ".join(f"at {tuple(i)} x={[a[tuple(i[-a.ndim:])] if a.ndim else a for a in arrays]} got {got[tuple(i)]} want {want[tuple(i)]}" for i in bad)
        failures.append(f"{what}: mismatch: {detail}")

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=np.float64)

def floats(lo, hi, n=60, special=True):
    v = rng.uniform(lo, hi, n)
    return np.concatenate([v, SPECIAL]) if special else v

TOL = {"float32": (1e-5, 1e-5), "float16": (1e-2, 5e-2)}

def unary_float(op, ref, lo, hi):
    for dt in ("float32", "float16"):
        x = floats(lo, hi).astype(dt).reshape(5, 13)
        rtol, atol = TOL[dt]
        want = ref(x.astype(np.float64)).astype(dt)  # float16: one rounding of the exact result
        check(f"{op} {dt}", op, [x], want, rtol, atol)

erf = np.vectorize(math.erf)
def round_half_away(v): return np.sign(v) * np.floor(np.abs(v) + 0.5)
def sign_tvm(v): return np.where(v > 0, 1.0, np.where(v < 0, -1.0, 0.0))

for op, ref, lo, hi in [
    ("abs", np.abs, -4, 4), ("negative", np.negative, -4, 4), ("exp", np.exp, -5, 5), ("log", np.log, 0.01, 8),
    ("sqrt", np.sqrt, 0, 9), ("rsqrt", lambda v: 1 / np.sqrt(v), 0.05, 9), ("square", np.square, -4, 4),
    ("sin", np.sin, -6, 6), ("cos", np.cos, -6, 6), ("tan", np.tan, -1.2, 1.2), ("asin", np.arcsin, -1, 1),
    ("acos", np.arccos, -1, 1), ("atan", np.arctan, -8, 8), ("sinh", np.sinh, -4, 4), ("cosh", np.cosh, -4, 4),
    ("tanh", np.tanh, -5, 5), ("asinh", np.arcsinh, -8, 8), ("acosh", np.arccosh, 1, 8),
    ("atanh", np.arctanh, -0.99, 0.99), ("sigmoid", lambda v: 1 / (1 + np.exp(-v)), -8, 8), ("erf", erf, -3, 3),
    ("floor", np.floor, -5, 5), ("ceil", np.ceil, -5, 5), ("trunc", np.trunc, -5, 5),
    ("round", round_half_away, -5, 5), ("sign", sign_tvm, -3, 3)]:
    unary_float(op, ref, lo, hi)

halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997], dtype=np.float32)
check("round halves away from zero", "round", [halves], round_half_away(halves.astype(np.float64)).astype(np.float32))

for op, ref in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    for dt in ("float32", "float16"):
        x = floats(-1e4, 1e4).astype(dt)
        check(f"{op} {dt}", op, [x], ref(x))
    xi = np.array([0, -1, 2**31 - 1, -2**31], dtype=np.int32)
    check(f"{op} int32", op, [xi], ref(xi.astype(np.float64)))

I32 = np.iinfo(np.int32)
edge = np.array([0, 1, -1, 7, -7, 46341, I32.max, I32.min], dtype=np.int32)
for op, ref in [("abs", np.abs), ("negative", np.negative), ("square", lambda v: v * v), ("floor", lambda v: v),
                ("ceil", lambda v: v), ("round", lambda v: v), ("trunc", lambda v: v), ("sign", np.sign),
                ("bitwise_not", np.invert)]:
    check(f"{op} int32", op, [edge], ref(edge))
check("bitwise_not uint8", "bitwise_not", [np.array([0, 1, 200, 255], dtype=np.uint8)], np.array([255, 254, 55, 0], dtype=np.uint8))
check("bitwise_not int8", "bitwise_not", [np.array([0, 1, -128, 127], dtype=np.int8)], np.array([-1, -2, 127, -128], dtype=np.int8))
b = np.array([[True, False, True], [False, False, True]])
check("logical_not bool", "logical_not", [b], ~b)

xf = floats(-4, 4).astype(np.float32)
# TVM's min/max are selects on ordered compares: min(NaN, b) = b, max(a, NaN) = NaN.
def tvm_min(a, b): return np.where(a < b, a, b)
def tvm_max(a, b): return np.where(a > b, a, b)
check("clip float32 (NaN clips to max)", "clip", [xf], tvm_max(tvm_min(xf, np.float32(2)), np.float32(-1)), extra=", -1, 2")
check("clip int32", "clip", [edge], np.clip(edge, -5, 7), extra=", -5, 7")

# ---------------- binary, broadcasting (2,3,4) with (3,1) ----------------
def pair(dt, lo, hi, nonzero=False):
    x = rng.uniform(lo, hi, (2, 3, 4))
    y = rng.uniform(lo, hi, (3, 1))
    if nonzero: y = np.where(np.abs(y) < 0.25, 0.75, y)
    return x.astype(dt), y.astype(dt)

def wrap32(v): return ((np.asarray(v, dtype=np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)

for dt in ("float32", "float16"):
    rtol, atol = TOL[dt]
    x, y = pair(dt, -6, 6, nonzero=True)
    X, Y = x.astype(np.float64), y.astype(np.float64)
    for op, ref in [("maximum", np.maximum), ("minimum", np.minimum), ("floor_divide", lambda a, b: np.floor(a / b)),
                    ("floor_mod", lambda a, b: a - np.floor(a / b) * b), ("mod", np.fmod)]:
        # float16 floor_* round a / b to half before the floor: compare only away from integer quotients
        want = ref(X, Y)
        if dt == "float16" and op in ("floor_divide", "floor_mod"):
            q = x / y  # in float16, as the kernel computes it
            want = np.floor(q.astype(np.float64)) if op == "floor_divide" else X - np.floor(q.astype(np.float64)) * Y
        check(f"{op} {dt} broadcast", op, [x, y], want.astype(dt), rtol, max(atol, 1e-4))
    for op, ref in [("equal", np.equal), ("less", np.less), ("less_equal", np.less_equal), ("greater", np.greater),
                    ("greater_equal", np.greater_equal), ("not_equal", np.not_equal)]:
        xs = x.copy(); xs[0, 0, :2] = y[0, 0]; xs[1, 2, 0] = np.nan  # ties and NaN
        want = ref(xs, y)
        if op == "not_equal": want = want & ~np.isnan(xs) & ~np.isnan(y)  # ordered, as TVM
        check(f"{op} {dt} broadcast with ties and NaN", op, [xs, y], want)
    xn = x.copy(); xn[1, 2, 0] = np.nan; yn = y.copy(); yn[0, 0] = np.nan
    for op, ref in [("maximum", tvm_max), ("minimum", tvm_min)]:
        check(f"{op} {dt} NaN as TVM's select", op, [xn, yn], ref(xn, yn))
xp, yp = np.abs(pair("float32", 0.1, 3)[0]) + 0.1, pair("float32", -2, 2)[1]
check("power float32 broadcast", "power", [xp, yp], np.power(xp.astype(np.float64), yp).astype(np.float32), 1e-5, 1e-5)

xi = rng.integers(-50, 50, (2, 3, 4)).astype(np.int32)
xi[0, 0, :3] = [I32.min, I32.max, -7]
yi = np.array([[0], [-1], [3]], dtype=np.int32)
XI, YI = xi.astype(np.int64), yi.astype(np.int64)
safe = np.where(YI == 0, 1, YI)
tdiv = np.where(YI == 0, 0, np.trunc(XI / safe).astype(np.int64))
for op, want in [
    ("divide", wrap32(tdiv)),
    ("floor_divide", wrap32(np.where(YI == 0, 0, XI // safe))),
    ("floor_mod", wrap32(np.where(YI == 0, 0, XI % safe))),
    ("mod", wrap32(np.where(YI == 0, 0, XI - tdiv * YI))),
    ("maximum", np.maximum(xi, yi)), ("minimum", np.minimum(xi, yi)),
    ("add", wrap32(XI + YI)), ("multiply", wrap32(XI * YI)),
    ("equal", xi == yi), ("not_equal", xi != yi), ("less", xi < yi), ("greater_equal", xi >= yi),
    ("bitwise_and", xi & yi), ("bitwise_or", xi | yi), ("bitwise_xor", xi ^ yi), ("logical_xor", xi ^ yi)]:
    check(f"{op} int32 (x / 0, INT_MIN / -1)", op, [xi, yi], want)

u = np.array([[0, 1, 200, 255]], dtype=np.uint8); v = np.array([[3], [250]], dtype=np.uint8)
for op, want in [("bitwise_and", u & v), ("bitwise_or", u | v), ("bitwise_xor", u ^ v), ("floor_divide", np.where(v == 0, 0, u // np.where(v == 0, 1, v))),
                 ("less", u < v)]:
    check(f"{op} uint8", op, [u, v], want.astype(want.dtype))

sv = np.array([[-1], [0], [5], [31], [32], [40]], dtype=np.int32)
sx = np.array([1, -1, 12345, I32.min, I32.max], dtype=np.int32)
SX, SV = sx.astype(np.int64), sv.astype(np.int64)
inr = (SV >= 0) & (SV < 32)
check("left_shift int32, amounts -1..40", "left_shift", [sx, sv], wrap32(np.where(inr, SX << np.where(inr, SV, 0), 0)))
check("right_shift int32, amounts -1..40", "right_shift", [sx, sv],
      wrap32(np.where(inr, SX >> np.where(inr, SV, 0), np.where(SX < 0, -1, 0))))

# a 0-d constant divisor becomes a literal in the kernel: 0 and -1 must still be guarded
for c in (0, -1, 3, -3):
    for op, ref in [("floor_divide", lambda a, b: 0 if b == 0 else a // b), ("floor_mod", lambda a, b: 0 if b == 0 else a % b),
                    ("divide", lambda a, b: 0 if b == 0 else int(a / b)), ("mod", lambda a, b: 0 if b == 0 else a - int(a / b) * b)]:
        want = wrap32([ref(int(a), c) for a in edge])
        check(f"{op} int32 by the constant {c}", op, [edge], want, extra=f', R.const({c}, "int32")')
xc = np.array([-2.5, -1.0, 0.0, 1.0, 2.5, np.nan], dtype=np.float32)
check("maximum float32 with a PrimValue", "maximum", [xc], tvm_max(xc, np.float32(0.5)), extra=", R.prim_value(T.float32(0.5))")

p = np.array([[True, False, True, False]]); q = np.array([[True], [False]])
for op, want in [("logical_and", p & q), ("logical_or", p | q), ("logical_xor", p ^ q), ("equal", p == q)]:
    check(f"{op} bool", op, [p, q], want)

# dtype errors TVM reports (at inference, or where its TIR builders would fail)
for op, arrays, phrase in [("exp", [edge], "x must be a float tensor"), ("bitwise_not", [xf], "needs an integer tensor"),
                           ("logical_not", [edge], "needs a bool tensor"), ("add", [xf, edge], "")]:
    got, err = run(op, arrays)
    if got is None and phrase in err: passes += 1
    else: failures.append(f"{op} on {[a.dtype for a in arrays]}: expected an error with '{phrase}', got {err!r}")

for f in failures: print("FAIL:", f)
print(f"{passes} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
PY
