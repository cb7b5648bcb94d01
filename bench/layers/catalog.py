"""The layers of bench/layers: each one a small Relax model, its inputs from a fixed seed,
the same computation in PyTorch (reference and timing) and the oneDNN harness's
description of it.

A layer is a flat dict of JSON values (kind plus shape attributes); everything else is
derived from it, so that the three runtimes cannot disagree on what a row means:

    relax(spec)     the TVMScript text, one op (conv+batch_norm+relu: three)
    inputs(spec)    {parameter name: float32 array}, seeded by the layer's name
    torch_fn(spec)  a function of torch_inputs(spec, arrays) giving the output
    onednn(spec)    'kind key=value ...' for bench/layers/onednn_layers
    passes(spec)    tvmjit's pass pipeline for it

    /usr/bin/python3 bench/layers/catalog.py OUT_DIR [NAME...]   writes OUT_DIR/NAME/
        {model.rx, inputs.npz, constants.npz, layer.json, expected.npy} (expected: PyTorch's output)
"""
import json
import os
import sys
import zlib

import numpy as np

DECOMPOSE = "DecomposeOpsForInference,LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR"
TOLERANCE = {"float32": 1e-4}  # max |tvmjit - PyTorch| / max |PyTorch|, per dtype


def conv(name, layout, ic, hw, oc, k, stride, pad, groups=1, post=""):
    return dict(name=name, kind="conv", layout=layout, n=1, ic=ic, h=hw, w=hw, oc=oc, k=k, stride=stride, pad=pad,
                groups=groups, post=post, dtype="float32")


def matmul(name, batch, m, k, n):
    return dict(name=name, kind="matmul", batch=batch, m=m, k=k, n=n, dtype="float32")


def rows(name, kind, shape):
    return dict(name=name, kind=kind, shape=list(shape), dtype="float32")


def pool(name, kind, c, hw, k, stride, pad):
    return dict(name=name, kind=kind, n=1, c=c, h=hw, w=hw, k=k, stride=stride, pad=pad, dtype="float32")


def catalog():
    """ResNet-18/50, MobileNetV2, ResNeXt and BERT-base layers, batch 1."""
    out = []
    for layout in ("nchw", "nhwc"):
        out += [conv(f"conv3x3_64_56_{layout}", layout, 64, 56, 64, 3, 1, 1),  # ResNet-18 layer1
                conv(f"conv1x1_256to64_56_{layout}", layout, 256, 56, 64, 1, 1, 0),  # ResNet-50 layer1 reduce
                conv(f"conv3x3s2_64to128_56_{layout}", layout, 64, 56, 128, 3, 2, 1),  # ResNet-18 layer2 entry
                conv(f"stem7x7s2_3to64_224_{layout}", layout, 3, 224, 64, 7, 2, 3)]
    out += [conv("dw3x3_144_56_nchw", "nchw", 144, 56, 144, 3, 1, 1, groups=144),  # MobileNetV2
            conv("dw3x3s2_144_56_nchw", "nchw", 144, 56, 144, 3, 2, 1, groups=144),
            conv("group3x3_128g32_56_nchw", "nchw", 128, 56, 128, 3, 1, 1, groups=32),  # ResNeXt-50 32x4d
            conv("conv3x3_64_56_bn_relu_nchw", "nchw", 64, 56, 64, 3, 1, 1, post="bn_relu"),
            matmul("gemm_128x768x768", 0, 128, 768, 768),  # BERT-base: attention projections
            matmul("gemm_128x768x3072", 0, 128, 768, 3072),  # FFN in
            matmul("gemm_128x3072x768", 0, 128, 3072, 768),  # FFN out
            matmul("gemv_1x768x768", 0, 1, 768, 768),
            matmul("bmm_12x128x64x128", 12, 128, 64, 128),  # attention scores
            rows("softmax_12x128x128", "softmax", (12, 128, 128)),
            rows("layer_norm_128x768", "layer_norm", (128, 768)),
            rows("gelu_128x3072", "gelu", (128, 3072)),
            pool("max_pool3x3s2_64_112", "max_pool", 64, 112, 3, 2, 1),  # ResNet stem pool
            pool("avg_pool_global_512_7", "avg_pool", 512, 7, 7, 1, 0)]  # adaptive_avg_pool2d to 1x1
    return out


def by_name():
    return {s["name"]: s for s in catalog()}


# ---------------------------------------------------------------- shapes


def conv_shapes(s):
    """(input, weight, output) shapes in the layer's layout: NCHW/OIHW or NHWC/OHWI."""
    oh = (s["h"] + 2 * s["pad"] - s["k"]) // s["stride"] + 1
    ow = (s["w"] + 2 * s["pad"] - s["k"]) // s["stride"] + 1
    icg = s["ic"] // s["groups"]
    if s["layout"] == "nchw":
        return (s["n"], s["ic"], s["h"], s["w"]), (s["oc"], icg, s["k"], s["k"]), (s["n"], s["oc"], oh, ow)
    return (s["n"], s["h"], s["w"], s["ic"]), (s["oc"], s["k"], s["k"], icg), (s["n"], oh, ow, s["oc"])


def matmul_shapes(s):
    lead = (s["batch"],) if s["batch"] else ()
    return lead + (s["m"], s["k"]), lead + (s["k"], s["n"]), lead + (s["m"], s["n"])


def pool_out_hw(s):
    return (s["h"] + 2 * s["pad"] - s["k"]) // s["stride"] + 1


def passes(s):
    # batch_norm in its inference form (running statistics), as TVM users run it.
    return DECOMPOSE if s.get("post") == "bn_relu" else "default"


# ---------------------------------------------------------------- inputs


def inputs(s):
    """Seeded by the layer's name: the same arrays on every run and machine."""
    rng = np.random.default_rng(zlib.crc32(s["name"].encode()))

    def normal(shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    if s["kind"] == "conv":
        x, w, _ = conv_shapes(s)
        d = {"x": normal(x), "w": normal(w, 1.0 / np.sqrt(np.prod(w[1:])))}
        if s["post"] == "bn_relu":
            c = s["oc"]
            d.update(gamma=rng.uniform(0.5, 1.5, c).astype(np.float32), beta=rng.uniform(-0.1, 0.1, c).astype(np.float32),
                     mean=rng.uniform(-0.1, 0.1, c).astype(np.float32), var=rng.uniform(0.5, 1.5, c).astype(np.float32))
        return d
    if s["kind"] == "matmul":
        a, b, _ = matmul_shapes(s)
        return {"a": normal(a), "b": normal(b, 1.0 / np.sqrt(s["k"]))}
    if s["kind"] in ("softmax", "gelu"):
        return {"x": normal(s["shape"], 2.0)}
    if s["kind"] == "layer_norm":
        c = s["shape"][-1]
        return {"x": normal(s["shape"], 2.0) + 0.5, "gamma": rng.uniform(0.5, 1.5, c).astype(np.float32),
                "beta": rng.uniform(-0.5, 0.5, c).astype(np.float32)}
    if s["kind"] in ("max_pool", "avg_pool"):
        return {"x": normal((s["n"], s["c"], s["h"], s["w"]))}
    raise ValueError(f"unknown layer kind {s['kind']!r}")


def constants(s):
    """The arrays oneDNN's side prepares once, before timing (onednn_layers.c): conv weights
    (and batch_norm's scale and shift, computed from gamma, beta, mean and var) and a 2-D
    matmul's right operand. tvmjit binds the same ones as constants of the model."""
    if s["kind"] == "conv":
        return ["w"] + (["gamma", "beta", "mean", "var"] if s["post"] == "bn_relu" else [])
    if s["kind"] == "matmul" and not s["batch"]:
        return ["b"]
    return []


# ---------------------------------------------------------------- Relax


def ttype(shape, dtype="float32"):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    return f'R.Tensor(({dims}), dtype="{dtype}")'


def ints(v):
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def body(s):
    """The bindings (lines without indentation) and the output variable."""
    if s["kind"] == "conv":
        data, kernel = ("NCHW", "OIHW") if s["layout"] == "nchw" else ("NHWC", "OHWI")
        p, st = s["pad"], s["stride"]
        lines = [f"y = R.nn.conv2d(x, w, strides={ints([st, st])}, padding={ints([p] * 4)}, dilation=[1, 1], "
                 f'groups={s["groups"]}, data_layout="{data}", kernel_layout="{kernel}", out_layout="{data}", '
                 'out_dtype="float32")']
        if s["post"] != "bn_relu":
            return lines, "y"
        axis = 1 if s["layout"] == "nchw" else 3
        return lines + [f"bn = R.nn.batch_norm(y, gamma, beta, mean, var, axis={axis}, epsilon=1e-05, center=True, "
                        "scale=True)", "z = bn[0]", "r = R.nn.relu(z)"], "r"
    if s["kind"] == "matmul":
        return ['y = R.matmul(a, b, out_dtype="float32")'], "y"
    if s["kind"] == "softmax":
        return ["y = R.nn.softmax(x, axis=-1)"], "y"
    if s["kind"] == "layer_norm":
        return ["y = R.nn.layer_norm(x, gamma, beta, axes=[-1], epsilon=1e-05, center=True, scale=True)"], "y"
    if s["kind"] == "gelu":
        return ["y = R.nn.gelu(x)"], "y"
    if s["kind"] == "max_pool":
        k, st, p = s["k"], s["stride"], s["pad"]
        return [f"y = R.nn.max_pool2d(x, pool_size={ints([k, k])}, strides={ints([st, st])}, dilation=[1, 1], "
                f'padding={ints([p] * 4)}, ceil_mode=False, layout="NCHW", out_layout="NCHW")'], "y"
    if s["kind"] == "avg_pool":
        return ['y = R.nn.adaptive_avg_pool2d(x, output_size=[1, 1], layout="NCHW", out_layout="NCHW")'], "y"
    raise ValueError(f"unknown layer kind {s['kind']!r}")


def relax(s, arrays):
    sig = ", ".join(f"{k}: {ttype(v.shape)}" for k, v in arrays.items())
    lines, out = body(s)
    text = "\n".join(" " * 12 + l for l in lines)
    return (f"# bench/layers: {s['name']} ({json.dumps(s)})\n"
            "from tvm.script import ir as I\nfrom tvm.script import relax as R\n\n"
            "@I.ir_module\nclass Module:\n    @R.function\n"
            f"    def main({sig}):\n        with R.dataflow():\n{text}\n"
            f"            R.output({out})\n        return {out}\n")


# ---------------------------------------------------------------- PyTorch


def torch_fn(s):
    """f(**tensors) -> tensor, on tensors laid out as the Relax model's parameters."""
    import torch
    import torch.nn.functional as F

    if s["kind"] == "conv":
        def f(x, w, gamma=None, beta=None, mean=None, var=None):
            y = F.conv2d(x, w, stride=s["stride"], padding=s["pad"], groups=s["groups"])
            if s["post"] == "bn_relu":
                y = F.relu(F.batch_norm(y, mean, var, gamma, beta, training=False, eps=1e-5))
            return y
        return f
    if s["kind"] == "matmul":
        return lambda a, b: torch.matmul(a, b)
    if s["kind"] == "softmax":
        return lambda x: torch.softmax(x, dim=-1)
    if s["kind"] == "layer_norm":
        return lambda x, gamma, beta: F.layer_norm(x, (x.shape[-1],), gamma, beta, 1e-5)
    if s["kind"] == "gelu":
        return lambda x: F.gelu(x)
    if s["kind"] == "max_pool":
        return lambda x: F.max_pool2d(x, s["k"], s["stride"], s["pad"])
    if s["kind"] == "avg_pool":
        return lambda x: F.adaptive_avg_pool2d(x, (1, 1))
    raise ValueError(f"unknown layer kind {s['kind']!r}")


def torch_inputs(s, arrays):
    """Torch tensors over the arrays. NHWC/OHWI conv operands become NCHW/OIHW views with
    channels_last strides (no copy), so that PyTorch runs its channels_last kernels."""
    import torch
    t = {k: torch.from_numpy(v) for k, v in arrays.items()}
    if s["kind"] == "conv" and s["layout"] == "nhwc":
        t["x"], t["w"] = t["x"].permute(0, 3, 1, 2), t["w"].permute(0, 3, 1, 2)
    return t


def torch_output(s, y):
    """The output as a C-order array in the Relax model's layout."""
    if s["kind"] == "conv" and s["layout"] == "nhwc":
        y = y.permute(0, 2, 3, 1)
    return np.ascontiguousarray(y.numpy())


# ---------------------------------------------------------------- oneDNN


def onednn(s):
    """The harness's layer description: kind, then key=value attributes."""
    keys = {"conv": ("layout", "n", "ic", "h", "w", "oc", "k", "stride", "pad", "groups", "post"),
            "matmul": ("batch", "m", "k", "n"), "max_pool": ("n", "c", "h", "w", "k", "stride", "pad"),
            "avg_pool": ("n", "c", "h", "w", "k", "stride", "pad")}
    if s["kind"] in keys:
        args = [f"{k}={s[k]}" for k in keys[s["kind"]] if s[k] != ""]
    else:
        args = ["shape=" + "x".join(str(d) for d in s["shape"])]
    return [s["kind"]] + args


# ---------------------------------------------------------------- files


def write(s, out_dir):
    import torch
    d = os.path.join(out_dir, s["name"])
    os.makedirs(d, exist_ok=True)
    arrays = inputs(s)
    with open(os.path.join(d, "model.rx"), "w") as f:
        f.write(relax(s, arrays))
    np.savez(os.path.join(d, "inputs.npz"), **arrays)
    np.savez(os.path.join(d, "constants.npz"), **{k: arrays[k] for k in constants(s)})
    for k, v in arrays.items():  # one .npy each for the oneDNN harness
        np.save(os.path.join(d, k + ".npy"), v)
    with open(os.path.join(d, "layer.json"), "w") as f:
        json.dump(s, f)
    with torch.no_grad():
        want = torch_fn(s)(**torch_inputs(s, arrays))
    np.save(os.path.join(d, "expected.npy"), torch_output(s, want))
    return d


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    table = by_name()
    names = argv[2:] or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        sys.exit(f"catalog.py: unknown layer(s) {', '.join(unknown)}; known: {', '.join(table)}")
    for n in names:
        print(write(table[n], argv[1]))


if __name__ == "__main__":
    main(sys.argv)
