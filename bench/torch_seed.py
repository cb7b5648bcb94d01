#!/usr/bin/python3
"""The seed network in PyTorch, float32, channels_last, jit.trace + freeze, for bench/compare.

    x(16,32,32,16) -> conv(w1)+relu -> conv(w2)+relu -> layer_norm(C, gamma, beta)
                   -> conv(w3)+relu
(3x3 convs, pad 1, stride 1, no bias; weights OHWI in the inputs; layer_norm over the
channels, eps 1e-5), as examples/seed/model.rx and tests/models/seed_f32_ops.rx.

usage: torch_seed.py DIR [--threads N] [--warmup N] [--runs N] [--output Y.npy]
  DIR holds data.npy weight1.npy weight2.npy weight3.npy gamma.npy beta.npy (float32,
  NHWC data, OHWI weights). Prints one JSON object with the latencies; --output writes
  the result as NHWC float32.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("torch_seed.py: PyTorch is missing (apt-get install -y python3-torch)")


class Seed(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        # OHWI -> OIHW, PyTorch's logical weight order; channels_last storage.
        def w(name):
            t = torch.from_numpy(np.ascontiguousarray(p[name].transpose(0, 3, 1, 2)))
            return torch.nn.Parameter(t.contiguous(memory_format=torch.channels_last), requires_grad=False)
        self.w1, self.w2, self.w3 = w("weight1"), w("weight2"), w("weight3")
        self.gamma = torch.nn.Parameter(torch.from_numpy(p["gamma"]), requires_grad=False)
        self.beta = torch.nn.Parameter(torch.from_numpy(p["beta"]), requires_grad=False)

    def forward(self, x):
        x = F.relu(F.conv2d(x, self.w1, padding=1))
        x = F.relu(F.conv2d(x, self.w2, padding=1))
        # layer_norm over C: NCHW channels_last permuted to NHWC is a contiguous view.
        x = F.layer_norm(x.permute(0, 2, 3, 1), (x.shape[1],), self.gamma, self.beta, 1e-5).permute(0, 3, 1, 2)
        return F.relu(F.conv2d(x, self.w3, padding=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--output")
    a = ap.parse_args()
    if a.runs < 1 or a.warmup < 0 or a.threads < 0:
        ap.error("--runs must be >= 1, --warmup and --threads >= 0")
    names = ["data", "weight1", "weight2", "weight3", "gamma", "beta"]
    p = {}
    for n in names:
        path = os.path.join(a.dir, n + ".npy")
        try:
            p[n] = np.load(path)
        except OSError as e:
            sys.exit(f"torch_seed.py: cannot read {path}: {e}")
        if p[n].dtype != np.float32:
            sys.exit(f"torch_seed.py: {path} is {p[n].dtype}, expected float32")
    if a.threads:
        torch.set_num_threads(a.threads)
    x = torch.from_numpy(p["data"]).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        model = torch.jit.freeze(torch.jit.trace(Seed(p).eval(), x))
        times = []
        for r in range(a.warmup + a.runs):
            t0 = time.perf_counter()
            y = model(x)
            t1 = time.perf_counter()
            if r >= a.warmup:
                times.append((t1 - t0) * 1e3)
    if a.output:
        np.save(a.output, y.permute(0, 2, 3, 1).contiguous().numpy())
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
    print(json.dumps({"runtime": f"PyTorch {torch.__version__}", "threads": torch.get_num_threads(),
                      "warmup": a.warmup, "runs": a.runs,
                      "latency_ms": {"min": times[0], "median": median, "max": times[-1]}}))


if __name__ == "__main__":
    main()
