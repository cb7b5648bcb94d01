#!/usr/bin/python3
"""Whole models for bench/models: ResNet-18, MobileNetV2 and one BERT-base encoder layer,
written here as torch modules (weights from fixed seeds), and a printer that writes a
traced module as Relax TVMScript the way TVM's PyTorch frontend (from_fx with
keep_params_as_input=True) prints it: one parameter per weight, named after the
state_dict key, conv2d/batch_norm/max_pool2d/... with TVM's attributes, linear as
permute_dims + matmul + add.

    /usr/bin/python3 bench/model_zoo.py OUT_DIR [resnet18 mobilenet_v2 bert_layer]
    /usr/bin/python3 bench/model_zoo.py --time MODEL THREADS WARMUP RUNS

writes OUT_DIR/<model>/{model.rx, params.npz, data.npy, expected.npy, model.onnx}
(expected.npy: PyTorch's output in eval mode). --time times PyTorch on the model
(eval mode, no_grad, THREADS intra-op threads) and prints one JSON line. Batch norm is in inference form, so
tvmjit runs these with DecomposeOpsForInference before the default pipeline, as TVM
users run them.
"""
import operator
import os
import sys

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

# ---------------------------------------------------------------- the models


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.pool = nn.MaxPool2d(3, 2, 1)
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*blocks)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.gap(self.layers(x))
        return self.fc(torch.flatten(x, 1))


def conv_bn(cin, cout, k, stride, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*(layers + [nn.ReLU6()] if act else layers))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [conv_bn(cin, hidden, 1, 1)] if expand != 1 else []
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden), conv_bn(hidden, cout, 1, 1, act=False)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        layers, cin = [conv_bn(3, 32, 3, 2)], 32
        for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                           (6, 320, 1, 1)):
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(conv_bn(cin, 1280, 1, 1))
        self.features = nn.Sequential(*layers)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Linear(1280, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.gap(self.features(x)), 1))


class BertLayer(nn.Module):
    """One BERT-base encoder layer (post-LN), batch 1, fixed sequence length."""

    def __init__(self, seq=128, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.seq, self.hidden, self.heads, self.dk = seq, hidden, heads, hidden // heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attn_out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.gelu = nn.GELU()
        self.ffn_out = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def heads_first(self, t):
        return t.reshape(1, self.seq, self.heads, self.dk).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.heads_first(self.query(x)), self.heads_first(self.key(x)), self.heads_first(self.value(x))
        scores = torch.matmul(q, k.permute(0, 1, 3, 2)) / 8.0  # sqrt(dk) = 8
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        ctx = ctx.permute(0, 2, 1, 3).reshape(1, self.seq, self.hidden)
        x = self.ln1(x + self.attn_out(ctx))
        return self.ln2(x + self.ffn_out(self.gelu(self.ffn_in(x))))


MODELS = {
    "resnet18": (ResNet18, (1, 3, 224, 224)),
    "mobilenet_v2": (MobileNetV2, (1, 3, 224, 224)),
    "bert_layer": (BertLayer, (1, 128, 768)),
}


def build(name, seed=0):
    """The module in eval mode with seeded weights (batch-norm statistics included, so
    that inference-form batch norm is not an identity) and a seeded input."""
    cls, shape = MODELS[name]
    torch.manual_seed(seed)
    model = cls().eval()
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.1, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.1, 0.1)
    return model, torch.randn(*shape)


# ---------------------------------------------------------------- the printer


def tensor_type(shape):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    return 'R.Tensor((%s), dtype="float32")' % dims


def ints(v):
    return "[%s]" % ", ".join(str(int(x)) for x in v)


class RelaxPrinter:
    """Walks a torch.fx graph (shapes from a run of the module) and emits bindings."""

    def __init__(self, model, example):
        self.model = model
        self.gm = torch.fx.symbolic_trace(model)
        self.modules = dict(self.gm.named_modules())
        self.lines, self.params, self.names = [], [], {}
        self.n = 0
        self.example = example

    def fresh(self):
        name = "lv" if self.n == 0 else "lv%d" % self.n
        self.n += 1
        return name

    def emit(self, text):
        var = self.fresh()
        self.lines.append("            %s = %s" % (var, text))
        return var

    def param(self, key, tensor):
        name = key.replace(".", "_")
        if name not in self.names:
            self.names[name] = tensor.detach().numpy().astype(np.float32)
            self.params.append((name, tuple(tensor.shape)))
        return name

    def module_weights(self, target, mod):
        return {k: self.param("%s.%s" % (target, k), v) for k, v in list(mod.named_parameters(recurse=False)) +
                list(mod.named_buffers(recurse=False)) if k != "num_batches_tracked"}

    def linear(self, x, w, b):
        wt = self.emit("R.permute_dims(%s, axes=None)" % w)
        y = self.emit('R.matmul(%s, %s, out_dtype="float32")' % (x, wt))
        return self.emit("R.add(%s, %s)" % (y, b)) if b else y

    def call_module(self, node, args):
        mod, x = self.modules[node.target], args[0]
        p = self.module_weights(node.target, mod)
        if isinstance(mod, nn.Conv2d):
            y = self.emit('R.nn.conv2d(%s, %s, strides=%s, padding=%s, dilation=%s, groups=%d, data_layout="NCHW", '
                          'kernel_layout="OIHW", out_layout="NCHW", out_dtype="float32")' %
                          (x, p["weight"], ints(mod.stride), ints(list(mod.padding) * 2), ints(mod.dilation), mod.groups))
            if "bias" in p:
                b = self.emit("R.reshape(%s, R.shape([1, %d, 1, 1]))" % (p["bias"], mod.out_channels))
                y = self.emit("R.add(%s, %s)" % (y, b))
            return y
        if isinstance(mod, nn.BatchNorm2d):
            t = self.emit("R.nn.batch_norm(%s, %s, %s, %s, %s, axis=1, epsilon=%r, center=True, scale=True)" %
                          (x, p["weight"], p["bias"], p["running_mean"], p["running_var"], mod.eps))
            return self.emit("%s[0]" % t)
        if isinstance(mod, nn.ReLU):
            return self.emit("R.nn.relu(%s)" % x)
        if isinstance(mod, nn.ReLU6):
            return self.emit("R.clip(%s, R.prim_value(0), R.prim_value(6))" % x)
        if isinstance(mod, nn.GELU):
            return self.emit("R.nn.gelu(%s)" % x)
        if isinstance(mod, nn.MaxPool2d):
            k, s, pd = (mod.kernel_size,) * 2, (mod.stride,) * 2, (mod.padding,) * 4
            return self.emit('R.nn.max_pool2d(%s, pool_size=%s, strides=%s, dilation=[1, 1], padding=%s, '
                             'ceil_mode=False, layout="NCHW", out_layout="NCHW")' % (x, ints(k), ints(s), ints(pd)))
        if isinstance(mod, nn.AdaptiveAvgPool2d):
            return self.emit('R.nn.adaptive_avg_pool2d(%s, output_size=%s, layout="NCHW", out_layout="NCHW")' %
                             (x, ints(mod.output_size)))
        if isinstance(mod, nn.Linear):
            return self.linear(x, p["weight"], p.get("bias"))
        if isinstance(mod, nn.LayerNorm):
            return self.emit("R.nn.layer_norm(%s, %s, %s, axes=[-1], epsilon=%r, center=True, scale=True)" %
                             (x, p["weight"], p["bias"], mod.eps))
        raise NotImplementedError("module %s" % type(mod).__name__)

    def call(self, node, args):
        fn, shape = node.target, self.shapes[node.name]
        if fn in (F.relu, torch.relu) or fn == "relu":
            return self.emit("R.nn.relu(%s)" % args[0])
        if fn in (operator.add, torch.add):
            return self.emit("R.add(%s, %s)" % (args[0], args[1]))
        if fn == operator.truediv and isinstance(node.args[1], (int, float)):
            return self.emit('R.divide(%s, R.const(%r, "float32"))' % (args[0], float(node.args[1])))
        if fn == torch.matmul:
            return self.emit('R.matmul(%s, %s, out_dtype="float32")' % (args[0], args[1]))
        if fn == torch.softmax or fn == "softmax":
            return self.emit("R.nn.softmax(%s, axis=%d)" % (args[0], node.kwargs.get("dim", -1)))
        if fn in (torch.flatten, "reshape", "view"):
            return self.emit("R.reshape(%s, R.shape(%s))" % (args[0], ints(shape)))
        if fn == "permute":
            return self.emit("R.permute_dims(%s, axes=%s)" % (args[0], ints(node.args[1:])))
        raise NotImplementedError("function %s" % fn)

    def arg(self, a):
        return self.names_of[a.name] if isinstance(a, torch.fx.Node) else a

    def print(self):
        shapes = {}

        class Recorder(torch.fx.Interpreter):
            def run_node(self, n):
                out = super().run_node(n)
                if isinstance(out, torch.Tensor):
                    shapes[n.name] = tuple(out.shape)
                return out

        with torch.no_grad():
            Recorder(self.gm).run(self.example)
        self.shapes = shapes
        self.names_of = {}
        inputs, ret = [], None
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                self.names_of[node.name] = node.name
                inputs.append((node.name, shapes[node.name]))
            elif node.op == "output":
                ret = self.names_of[node.args[0].name]
            else:
                args = [self.arg(a) for a in node.args]
                if node.op == "call_module":
                    self.names_of[node.name] = self.call_module(node, args)
                else:
                    self.names_of[node.name] = self.call(node, args)
        out_shape = shapes[[n for n in self.gm.graph.nodes if n.op == "output"][0].args[0].name]
        sig = ", ".join("%s: %s" % (n, tensor_type(s)) for n, s in inputs + self.params)
        body = "\n".join(self.lines)
        return ("# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
                "@I.ir_module\nclass Module:\n    @R.function\n"
                "    def main(%s) -> %s:\n        with R.dataflow():\n%s\n            gv = %s\n"
                "            R.output(gv)\n        return gv\n" % (sig, tensor_type(out_shape), body, ret))


def write(name, out_dir):
    model, x = build(name)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    printer = RelaxPrinter(model, x)
    with open(os.path.join(d, "model.rx"), "w") as f:
        f.write(printer.print())
    np.savez(os.path.join(d, "params.npz"), **printer.names)
    np.save(os.path.join(d, "data.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(d, "expected.npy"), model(x).numpy())
        torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=13, input_names=["x"],
                          output_names=["y"])
    return d


def time_torch(name, threads, warmup, runs):
    import json
    import resource
    import time
    torch.set_num_threads(threads)
    model, x = build(name)
    samples = []
    with torch.no_grad():
        for i in range(warmup + runs):
            start = time.perf_counter()
            model(x)
            if i >= warmup:
                samples.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({"samples_ms": samples, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--time":
        time_torch(sys.argv[2], *(int(v) for v in sys.argv[3:]))
        sys.exit(0)
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    for name in sys.argv[2:] or list(MODELS):
        print("model_zoo: wrote", write(name, sys.argv[1]))
