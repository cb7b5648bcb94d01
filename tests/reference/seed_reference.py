#!/usr/bin/python3
"""The project's own numpy reference for its example networks (tvmjit is not used).

The seed network (examples/seed/model.rx, TVM issue #17254), NHWC activations, OHWI
weights, 3x3 kernels, padding 1, stride 1, no bias:

    y = relu(conv(layer_norm(relu(conv(relu(conv(x, weight1)), weight2)), gamma, beta), weight3))

layer_norm normalises over the last axis (channels) with eps = 1e-5.

Two ways of computing it:

  exact     every operation in float64 (the oracle for tolerance checks). layer_norm uses
            the two-pass variance, mean((x - mean)^2).
  tvm_f16   what the seed's TIR says, operation by operation, for float16 data:
            conv2d   acc = float16(0); for ry, for rx, for rc (this order, as in the TIR
                     block conv2d_nhwc): acc = f16(acc + f16(x * w)); no fused multiply-add
            relu     max(x, 0)
            layer_norm (the block conv2_red_temp and T_layer_norm): s0 = sum x, s1 = sum x*x
                     in float32, sequential over the channel; mean = s0 * 0.0625,
                     var = s1 * 0.0625 - mean * mean + eps (float32);
                     y = f16((x - mean) * rsqrt(var)); y = f16(f16(y * gamma) + beta)
            numpy's float16 * and + round every result to float16 (computed wider, then
            rounded once, which is exact for one operation), so this matches a kernel that
            keeps TVM's order and rounds after every operation bit for bit.

Usage (Debian's /usr/bin/python3 has numpy):

    seed_reference.py inputs DIR [--dtype float32|float16]
        writes DIR/x.npy and DIR/params.npz (keys: main's parameter names) from
        examples/seed, converted to the dtype (float16 -> float32 is exact)
    seed_reference.py exact DIR/x.npy DIR/params.npz OUT.npy
        the float64 network output
    seed_reference.py tvm_f16 DIR/x.npy DIR/params.npz OUT.npy [--stage conv1|ln_conv1|all]
        the float16 network output in TVM's order (or one of its first stages)
    seed_reference.py compare GOT.npy WANT.npy RTOL ATOL [--exact]
        exit 0 when allclose (or, with --exact, identical after conversion to float64)
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARAMS = ("weight1", "weight2", "weight3", "gamma", "beta")
EPS = 1e-5


# ---------------------------------------------------------------- float64, exact
def conv2d_nhwc_ohwi(x, w, pad=1):
    """Stride 1, dilation 1: out[n, i, j, o] = sum_{ry, rx, c} xpad[n, i+ry, j+rx, c] * w[o, ry, rx, c]."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, h, wd, _ = x.shape
    co, kh, kw, _ = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, oh, ow, co))
    for ry in range(kh):
        for rx in range(kw):
            window = xp[:, ry:ry + oh, rx:rx + ow, :]
            out += np.einsum("nijc,oc->nijo", window, w[:, ry, rx, :])
    return out


def relu(x):
    return np.maximum(x, 0)


def layer_norm_last_axis(x, gamma, beta, eps=EPS):
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * np.asarray(gamma, np.float64) + np.asarray(beta, np.float64)


def seed_exact(x, p):
    y = relu(conv2d_nhwc_ohwi(x, p["weight1"]))
    y = relu(conv2d_nhwc_ohwi(y, p["weight2"]))
    y = layer_norm_last_axis(y, p["gamma"], p["beta"])
    return relu(conv2d_nhwc_ohwi(y, p["weight3"]))


# ---------------------------------------------------------------- float16, TVM's order
def conv2d_f16_tvm_order(x, w, pad=1):
    x = np.asarray(x, np.float16)
    w = np.asarray(w, np.float16)
    n, h, wd, _ = x.shape
    co, kh, kw, ci = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    acc = np.zeros((n, oh, ow, co), np.float16)
    for ry in range(kh):
        for rx in range(kw):
            for rc in range(ci):
                product = xp[:, ry:ry + oh, rx:rx + ow, rc:rc + 1] * w[:, ry, rx, rc]  # float16, rounded
                acc = acc + product  # float16, rounded
    return acc


def layer_norm_f16_tvm(x, gamma, beta):
    x32 = np.asarray(x, np.float16).astype(np.float32)
    s0 = np.zeros(x32.shape[:-1], np.float32)
    s1 = np.zeros(x32.shape[:-1], np.float32)
    for k in range(x32.shape[-1]):  # sequential, float32, as the reduction block
        v = x32[..., k]
        s0 = s0 + v
        s1 = s1 + v * v
    inv_n = np.float32(1.0 / x32.shape[-1])
    mean = s0 * inv_n
    var = s1 * inv_n - mean * mean + np.float32(EPS)
    norm = ((x32 - mean[..., None]) * (np.float32(1) / np.sqrt(var))[..., None]).astype(np.float16)
    return norm * np.asarray(gamma, np.float16) + np.asarray(beta, np.float16)


def seed_tvm_f16(x, p, stage="all"):
    y = relu(conv2d_f16_tvm_order(x, p["weight1"]))
    if stage == "conv1":
        return y
    if stage == "ln_conv1":
        return layer_norm_f16_tvm(y, p["gamma"], p["beta"])
    y = relu(conv2d_f16_tvm_order(y, p["weight2"]))
    y = layer_norm_f16_tvm(y, p["gamma"], p["beta"])
    return relu(conv2d_f16_tvm_order(y, p["weight3"]))


# ---------------------------------------------------------------- command line
def load(x_path, params_path):
    with np.load(params_path) as z:
        return np.load(x_path), {k: z[k] for k in PARAMS}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("inputs")
    a.add_argument("dir")
    a.add_argument("--dtype", default="float32")
    a = sub.add_parser("exact")
    a.add_argument("x"), a.add_argument("params"), a.add_argument("out")
    a = sub.add_parser("tvm_f16")
    a.add_argument("x"), a.add_argument("params"), a.add_argument("out")
    a.add_argument("--stage", default="all", choices=("conv1", "ln_conv1", "all"))
    a = sub.add_parser("compare")
    a.add_argument("got"), a.add_argument("want"), a.add_argument("rtol", type=float), a.add_argument("atol", type=float)
    a.add_argument("--exact", action="store_true")
    args = ap.parse_args(argv)

    if args.cmd == "inputs":
        seed = os.path.join(ROOT, "examples", "seed")
        x, p = load(os.path.join(seed, "data.npy"), os.path.join(seed, "params.npz"))
        os.makedirs(args.dir, exist_ok=True)
        np.save(os.path.join(args.dir, "x.npy"), x.astype(args.dtype))
        np.savez(os.path.join(args.dir, "params.npz"), **{k: v.astype(args.dtype) for k, v in p.items()})
    elif args.cmd == "exact":
        x, p = load(args.x, args.params)
        np.save(args.out, seed_exact(x, p))
    elif args.cmd == "tvm_f16":
        x, p = load(args.x, args.params)
        np.save(args.out, seed_tvm_f16(x, p, args.stage))
    elif args.cmd == "compare":
        got = np.load(args.got).astype(np.float64)
        want = np.load(args.want).astype(np.float64)
        if got.shape != want.shape:
            print(f"shape {got.shape} != {want.shape}")
            return 1
        diff = np.abs(got - want)
        bad = int((diff > args.atol + args.rtol * np.abs(want)).sum())
        differ = int((got != want).sum())
        print(f"max abs diff {diff.max():.3g}, {differ} elements differ, {bad} beyond rtol {args.rtol} atol {args.atol}")
        return int(differ != 0) if args.exact else int(bad != 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
