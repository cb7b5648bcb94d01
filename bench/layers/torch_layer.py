#!/usr/bin/python3
"""One layer of bench/layers in PyTorch (eager, no_grad), timed; for bench/layers/run.

usage: torch_layer.py DIR [--threads N] [--warmup N] [--runs N] [--budget S] [--output Y.npy]
  DIR is a layer directory written by catalog.py (layer.json, inputs.npz). Prints one
  JSON object with the latencies; --output writes the result in the Relax model's layout.
  --budget S (default 3) bounds the time: warm-up stops after S/4 seconds (at least one
  call) and timing after S seconds (at least 3 calls), since this PyTorch's reference
  BLAS takes about a second per BERT-sized GEMM.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog  # noqa: E402

try:
    import torch
except ImportError:
    sys.exit("torch_layer.py: PyTorch is missing (apt-get install -y python3-torch)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--output")
    a = ap.parse_args()
    if a.runs < 1 or a.warmup < 0 or a.threads < 1 or not a.budget > 0:
        ap.error("--runs and --threads must be >= 1, --warmup >= 0, --budget > 0")
    try:
        with open(os.path.join(a.dir, "layer.json")) as f:
            spec = json.load(f)
        arrays = dict(np.load(os.path.join(a.dir, "inputs.npz")))
    except (OSError, ValueError) as e:
        sys.exit(f"torch_layer.py: {a.dir} is not a layer directory written by catalog.py: {e}")
    torch.set_num_threads(a.threads)
    fn, args = catalog.torch_fn(spec), catalog.torch_inputs(spec, arrays)
    samples = []
    with torch.no_grad():
        begin = time.perf_counter()
        for _ in range(a.warmup):
            y = fn(**args)
            if time.perf_counter() - begin > a.budget / 4:
                break
        begin = time.perf_counter()
        for _ in range(a.runs):
            start = time.perf_counter()
            y = fn(**args)
            samples.append((time.perf_counter() - start) * 1e3)
            if len(samples) >= 3 and time.perf_counter() - begin > a.budget:
                break
    if a.output:
        np.save(a.output, catalog.torch_output(spec, y))
    samples.sort()
    lat = {"min": samples[0], "median": float(np.median(samples)), "max": samples[-1]}
    print(json.dumps({"runtime": f"PyTorch {torch.__version__}", "threads": a.threads, "runs": len(samples),
                      "latency_ms": lat}))


if __name__ == "__main__":
    main()
