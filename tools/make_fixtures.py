#!/usr/bin/python3
"""Writes the checked-in data files that tests and examples use.

    /usr/bin/python3 tools/make_fixtures.py [--reference ../shared/reference/ref_model.py]

Uses numpy and the independent numpy reference of the seed network (shared/reference/
ref_model.py, imported by path, never copied) to write:

  examples/seed/data.npy            x, the float16 input of the seed network (seed 0)
  examples/seed/params.npz          weight1, weight2, weight3, gamma, beta (float16, seed 0)
  tests/fixtures/y_f16_acc16.npy    reference output, float16 with float16 accumulation
                                    (TVM's order ry, rx, rc; rounded after every operation)
  tests/fixtures/y_f16_acc32.npy    reference output, float16 storage, float32 accumulation
  tests/fixtures/conv1_f16_acc16.npy relu(conv2d(x, weight1)), float16 accumulation
  tests/fixtures/ln_conv1_f16.npy   layer_norm(conv1, gamma, beta) in TVM's float16 form
  tests/fixtures/npy/*.npy          small files written by numpy (versions 1, 2, 3, Fortran
                                    order, big-endian) for the .npy reader tests
  tests/fixtures/npz/*.npz          small archives written by np.savez / np.savez_compressed,
                                    one with a member that is not .npy, one cut short

Everything is deterministic: running it again rewrites identical files.
"""
import argparse
import importlib.util
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_reference(path):
    spec = importlib.util.spec_from_file_location("ref_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def pattern(shape, dtype):
    """Element i holds (i % 5) - 2 (unsigned: i % 5, bool: i % 2): the tests know it."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        v = (i % 2).astype(bool)
    elif dt.kind == "u":
        v = (i % 5).astype(dt)
    else:
        v = ((i % 5) - 2).astype(dt)
    return v.reshape(shape)


def write_npy_fixtures(out):
    os.makedirs(out, exist_ok=True)
    simple = {
        "f16_2x3.npy": ((2, 3), "<f2"),
        "f32_4.npy": ((4,), "<f4"),
        "f64_scalar.npy": ((), "<f8"),
        "i8_2x2.npy": ((2, 2), "i1"),
        "i64_3.npy": ((3,), "<i8"),
        "u16_2x3.npy": ((2, 3), "<u2"),
        "bool_5.npy": ((5,), "?"),
    }
    for name, (shape, dt) in simple.items():
        np.save(os.path.join(out, name), pattern(shape, dt))
    with open(os.path.join(out, "v2_i32_2x3.npy"), "wb") as f:
        np.lib.format.write_array(f, pattern((2, 3), "<i4"), version=(2, 0))
    with open(os.path.join(out, "v3_u8_2x3x1.npy"), "wb") as f:
        np.lib.format.write_array(f, pattern((2, 3, 1), "u1"), version=(3, 0))
    # A Fortran-order 2-D array (rejected) and a 1-D one flagged Fortran (same bytes: accepted).
    np.save(os.path.join(out, "fortran_f32_2x3.npy"), np.asfortranarray(pattern((2, 3), "<f4")))
    with open(os.path.join(out, "fortran_1d_f32.npy"), "wb") as f:
        a = pattern((4,), "<f4")
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": True, "shape": (4,)})
        f.write(a.tobytes())
    np.save(os.path.join(out, "big_endian_f4.npy"), pattern((3,), ">f4"))


def write_npz_fixtures(out):
    os.makedirs(out, exist_ok=True)
    arrays = {"a": pattern((2, 3), "<f4"), "b": pattern((4,), "<i8"), "flag": pattern((3,), "?")}
    np.savez(os.path.join(out, "stored.npz"), **arrays)
    np.savez_compressed(os.path.join(out, "deflated.npz"), **arrays)
    # A valid zip whose member is not a .npy file, and an archive cut short.
    import zipfile
    with zipfile.ZipFile(os.path.join(out, "bad_member.npz"), "w") as z:
        z.writestr(zipfile.ZipInfo("good.npy", date_time=(2024, 1, 1, 0, 0, 0)),
                   _npy_bytes(pattern((2,), "<f4")))
        z.writestr(zipfile.ZipInfo("x.npy", date_time=(2024, 1, 1, 0, 0, 0)), b"this is not a .npy file")
    with open(os.path.join(out, "stored.npz"), "rb") as f:
        whole = f.read()
    with open(os.path.join(out, "truncated.npz"), "wb") as f:
        f.write(whole[: len(whole) // 2])


def _npy_bytes(a):
    import io
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", default=os.path.join(ROOT, "..", "shared", "reference", "ref_model.py"))
    args = ap.parse_args()
    if not os.path.exists(args.reference):
        sys.exit(f"make_fixtures: {args.reference} not found; pass --reference path/to/ref_model.py")
    ref = load_reference(args.reference)

    inp16 = ref.to_f16(ref.make_inputs(0))
    seed_dir = os.path.join(ROOT, "examples", "seed")
    os.makedirs(seed_dir, exist_ok=True)
    np.save(os.path.join(seed_dir, "data.npy"), inp16["x"])
    # Keys are the seed's parameter names (main(data, weight1, weight2, weight3, gamma, beta)).
    np.savez(os.path.join(seed_dir, "params.npz"), weight1=inp16["w1"], weight2=inp16["w2"],
             weight3=inp16["w3"], gamma=inp16["gamma"], beta=inp16["beta"])

    fix = os.path.join(ROOT, "tests", "fixtures")
    os.makedirs(fix, exist_ok=True)
    np.save(os.path.join(fix, "y_f16_acc16.npy"), ref.model_f16_acc16(inp16))
    np.save(os.path.join(fix, "y_f16_acc32.npy"), ref.model_f16_acc32(inp16))
    conv1 = ref.relu(ref.conv_f16_acc16(inp16["x"], inp16["w1"]))
    np.save(os.path.join(fix, "conv1_f16_acc16.npy"), conv1)
    # layer_norm (TVM's float16 form, one-pass variance) applied to conv1 with gamma, beta.
    np.save(os.path.join(fix, "ln_conv1_f16.npy"), ref.layer_norm_f16_tvm(conv1, inp16["gamma"], inp16["beta"]))
    write_npy_fixtures(os.path.join(fix, "npy"))
    write_npz_fixtures(os.path.join(fix, "npz"))


if __name__ == "__main__":
    main()
