#!/usr/bin/python3
"""Generates the ResNet-style example: model.rx (written the way TVM's PyTorch frontend
prints a traced module), params.npz (the weights, keyed by main's parameter names),
data.npy (the input) and expected.npy (the output computed by PyTorch).

    /usr/bin/python3 examples/resnet_block/generate.py     # rewrites the four files

The network: conv 7x7/2 + batch_norm + relu + max_pool 3x3/2, one residual block
(conv 3x3/2 + bn + relu, conv 3x3 + bn, a strided 1x1 projection conv + bn on the
shortcut, add, relu), adaptive_avg_pool2d to 1x1, flatten, linear.

batch_norm: TVM's LegalizeOps (the pipeline tvmjit reproduces) legalizes
R.nn.batch_norm in its *training* form: the output is normalised with the batch mean
and biased variance; the moving statistics only feed the tuple's other two outputs.
The inference form is TVM's separate DecomposeOpsForInference pass. The expected
output is therefore PyTorch's in training mode (batch statistics), on a batch of 2.
"""
import os
import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)


class ResNetBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.conv3 = nn.Conv2d(16, 16, 3, stride=1, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(16)
        self.proj = nn.Conv2d(8, 16, 1, stride=2, bias=False)
        self.bnp = nn.BatchNorm2d(16)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        y = torch.relu(self.bn2(self.conv2(x)))
        y = self.bn3(self.conv3(y))
        y = torch.relu(y + self.bnp(self.proj(x)))
        y = torch.flatten(self.gap(y), 1)
        return self.fc(y)


def tensor(shape):
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    return 'R.Tensor((%s), dtype="float32")' % dims


def write_model(path):
    """model.rx in the form TVM's PyTorch frontend (from_fx) prints."""
    params = [("x", (2, 3, 32, 32)), ("conv1_w", (8, 3, 7, 7))]
    for n, c in (("bn1", 8),):
        params += [(n + s, (c,)) for s in ("_g", "_b", "_m", "_v")]
    params += [("conv2_w", (16, 8, 3, 3))] + [("bn2" + s, (16,)) for s in ("_g", "_b", "_m", "_v")]
    params += [("conv3_w", (16, 16, 3, 3))] + [("bn3" + s, (16,)) for s in ("_g", "_b", "_m", "_v")]
    params += [("proj_w", (16, 8, 1, 1))] + [("bnp" + s, (16,)) for s in ("_g", "_b", "_m", "_v")]
    params += [("fc_w", (10, 16)), ("fc_b", (10,))]

    def conv(out, inp, w, shape, s, p):
        return (f'            {out}: {tensor(shape)} = R.nn.conv2d({inp}, {w}, strides=[{s}, {s}], '
                f'padding=[{p}, {p}, {p}, {p}], dilation=[1, 1], groups=1, data_layout="NCHW", '
                f'kernel_layout="OIHW", out_layout="NCHW", out_dtype="float32")')

    def bn(out, inp, n, shape):
        c = (shape[1],)
        tup = f"R.Tuple({tensor(shape)}, {tensor(c)}, {tensor(c)})"
        return [f'            {out}: {tup} = R.nn.batch_norm({inp}, {n}_g, {n}_b, {n}_m, {n}_v, axis=1, '
                f'epsilon=1.0000000000000001e-05, center=True, scale=True, momentum=0.10000000000000001)',
                f'            {out}_0: {tensor(shape)} = {out}[0]']

    L = [conv("lv", "x", "conv1_w", (2, 8, 16, 16), 2, 3)]
    L += bn("lv1", "lv", "bn1", (2, 8, 16, 16))
    L.append(f'            lv2: {tensor((2, 8, 16, 16))} = R.nn.relu(lv1_0)')
    L.append(f'            lv3: {tensor((2, 8, 8, 8))} = R.nn.max_pool2d(lv2, pool_size=[3, 3], strides=[2, 2], '
             'dilation=[1, 1], padding=[1, 1, 1, 1], ceil_mode=False, count_include_pad=False, layout="NCHW", '
             'out_layout="NCHW")')
    L.append(conv("lv4", "lv3", "conv2_w", (2, 16, 4, 4), 2, 1))
    L += bn("lv5", "lv4", "bn2", (2, 16, 4, 4))
    L.append(f'            lv6: {tensor((2, 16, 4, 4))} = R.nn.relu(lv5_0)')
    L.append(conv("lv7", "lv6", "conv3_w", (2, 16, 4, 4), 1, 1))
    L += bn("lv8", "lv7", "bn3", (2, 16, 4, 4))
    L.append(conv("lv9", "lv3", "proj_w", (2, 16, 4, 4), 2, 0))
    L += bn("lv10", "lv9", "bnp", (2, 16, 4, 4))
    L.append(f'            lv11: {tensor((2, 16, 4, 4))} = R.add(lv8_0, lv10_0)')
    L.append(f'            lv12: {tensor((2, 16, 4, 4))} = R.nn.relu(lv11)')
    L.append(f'            lv13: {tensor((2, 16, 1, 1))} = R.nn.adaptive_avg_pool2d(lv12, output_size=[1, 1], '
             'layout="NCHW", out_layout="NCHW")')
    L.append(f'            lv14: {tensor((2, 16))} = R.reshape(lv13, R.shape([2, 16]))')
    L.append(f'            lv15: {tensor((16, 10))} = R.permute_dims(fc_w, axes=None)')
    L.append(f'            lv16: {tensor((2, 10))} = R.matmul(lv14, lv15, out_dtype="float32")')
    L.append(f'            lv17: {tensor((2, 10))} = R.add(lv16, fc_b)')
    L.append(f'            gv: {tensor((2, 10))} = lv17')
    L.append('            R.output(gv)')
    sig = ", ".join(f"{n}: {tensor(s)}" for n, s in params)
    head = ("# A ResNet-style block as TVM's PyTorch frontend prints it. Generated by generate.py\n"
            "# (with the weights and PyTorch's output); batch_norm computes batch statistics\n"
            "# as TVM's LegalizeOps does (see generate.py).\n"
            "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
            "@I.ir_module\nclass Module:\n    @R.function\n"
            f"    def main({sig}) -> {tensor((2, 10))}:\n        with R.dataflow():\n")
    with open(path, "w") as f:
        f.write(head + "\n".join(L) + "\n        return gv\n")


def main():
    m = ResNetBlock()
    with torch.no_grad():
        for bn in (m.bn1, m.bn2, m.bn3, m.bnp):  # non-trivial affine and moving stats
            c = bn.num_features
            bn.weight.copy_(torch.rand(c) + 0.5)
            bn.bias.copy_(torch.rand(c) - 0.5)
            bn.running_mean.copy_(torch.rand(c) - 0.5)
            bn.running_var.copy_(torch.rand(c) + 0.5)
    x = torch.randn(2, 3, 32, 32)
    params = {"conv1_w": m.conv1.weight, "conv2_w": m.conv2.weight, "conv3_w": m.conv3.weight,
              "proj_w": m.proj.weight, "fc_w": m.fc.weight, "fc_b": m.fc.bias}
    for name, bn in (("bn1", m.bn1), ("bn2", m.bn2), ("bn3", m.bn3), ("bnp", m.bnp)):
        params[name + "_g"] = bn.weight
        params[name + "_b"] = bn.bias
        params[name + "_m"] = bn.running_mean
        params[name + "_v"] = bn.running_var
    params = {k: v.detach().numpy().astype(np.float32).copy() for k, v in params.items()}
    m.train()  # batch statistics, as TVM's legalized batch_norm computes them
    with torch.no_grad():
        y = m(x).numpy()
    write_model(os.path.join(HERE, "model.rx"))
    np.save(os.path.join(HERE, "data.npy"), x.numpy())
    np.savez(os.path.join(HERE, "params.npz"), **params)
    np.save(os.path.join(HERE, "expected.npy"), y)


if __name__ == "__main__":
    main()
