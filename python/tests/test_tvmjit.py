"""The Python package against the command line and numpy: the seed network bit for bit,
PyTorch tensors in and out through DLPack, inputs by name and position, errors."""
import os
import subprocess
import warnings

import numpy as np
import pytest

import tvmjit

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED = os.path.join(ROOT, "examples", "seed")
BIN = os.environ.get("TVMJIT_BIN", os.path.join(ROOT, "build", "tvmjit"))

HEADER = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
ADD_RELU = HEADER + '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            s = R.add(x, y)
            r = R.nn.relu(s)
            R.output(r)
        return r
'''


@pytest.fixture(scope="module")
def seed():
    return tvmjit.load(os.path.join(SEED, "model.rx"), params=os.path.join(SEED, "params.npz"))


@pytest.fixture(scope="module")
def seed_data():
    return np.load(os.path.join(SEED, "data.npy"))


@pytest.fixture(scope="module")
def cli_output(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "out.npy"
    subprocess.run([BIN, "run", os.path.join(SEED, "model.rx"), "--input", os.path.join(SEED, "data.npy"),
                    "--params", os.path.join(SEED, "params.npz"), "--output", str(out)], check=True)
    return np.load(out)


def test_seed_matches_the_command_line_bit_for_bit(seed, seed_data, cli_output):
    y = seed(seed_data)
    assert y.dtype == np.float16 and y.shape == (16, 32, 32, 16)
    assert np.array_equal(y.view(np.uint16), cli_output.view(np.uint16))


def test_run_by_name_returns_a_list(seed, seed_data, cli_output):
    (y,) = seed.run({"data": seed_data})
    assert np.array_equal(y.view(np.uint16), cli_output.view(np.uint16))
    assert seed.input_names == ["data"]


def test_torch_tensor_in_and_from_dlpack_out_without_a_copy(seed, seed_data, cli_output):
    torch = pytest.importorskip("torch")
    y = seed(torch.from_numpy(seed_data))
    t = torch.from_dlpack(y)
    assert t.dtype == torch.float16 and tuple(t.shape) == (16, 32, 32, 16)
    assert t.data_ptr() == y.ctypes.data  # the same memory
    assert np.array_equal(t.numpy().view(np.uint16), cli_output.view(np.uint16))
    del y
    assert float(t.float().abs().sum()) > 0  # still alive through the DLPack capsule


def test_output_memory_outlives_the_module(seed_data):
    m = tvmjit.load(os.path.join(SEED, "model.rx"), params=os.path.join(SEED, "params.npz"))
    y = m(seed_data)
    expected = y.copy()
    del m
    assert np.array_equal(y.view(np.uint16), expected.view(np.uint16))


def test_float32_against_numpy_with_strided_and_keyword_inputs():
    m = tvmjit.load_string(ADD_RELU, name="add_relu.rx")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2), dtype=np.float32).T  # not contiguous: copied once
    y = rng.standard_normal((2, 3), dtype=np.float32)
    assert not x.flags.c_contiguous
    np.testing.assert_array_equal(m(x, y=y), np.maximum(x + y, 0))
    np.testing.assert_array_equal(m.run({"x": x, "y": y})[0], np.maximum(x + y, 0))


BF16_MUL_ADD = HEADER + '''@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 5), dtype="bfloat16"), y: R.Tensor((2, 5), dtype="bfloat16")) -> R.Tensor((2, 5), dtype="bfloat16"):
        with R.dataflow():
            s = R.multiply(x, y)
            r = R.add(s, x)
            R.output(r)
        return r
'''


def test_bfloat16_from_torch_and_bit_patterns_against_torch():
    torch = pytest.importorskip("torch")
    m = tvmjit.load_string(BF16_MUL_ADD)
    assert [dt for _, dt, _ in m.inputs] == ["bfloat16", "bfloat16"]
    g = torch.Generator().manual_seed(0)
    x, y = (torch.randn(2, 5, generator=g) * 3).bfloat16(), torch.randn(2, 5, generator=g).bfloat16()
    want = (x * y + x).float().numpy()  # torch: each bfloat16 op in float32, rounded to nearest even
    got = np.asarray(m(x, y), dtype=np.float32)  # ml_dtypes.bfloat16, or float32 without ml_dtypes
    np.testing.assert_array_equal(got, want)
    bits = lambda t: t.view(torch.int16).numpy().view("<V2")  # what np.save writes for ml_dtypes
    np.testing.assert_array_equal(np.asarray(m(bits(x), y=bits(y)), dtype=np.float32), want)


def test_params_dict_binds_weights_and_warns_about_extra_keys():
    y = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    with pytest.warns(UserWarning, match="not used by main.*unused_weight"):
        m = tvmjit.load_string(ADD_RELU, params={"y": y, "unused_weight": np.zeros(1)})
    assert m.input_names == ["x"]
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(m(x), np.maximum(x + y, 0))


def test_errors_raise_with_the_library_message():
    m = tvmjit.load_string(ADD_RELU)
    with pytest.raises(tvmjit.TvmjitError) as e:
        m(np.zeros((2, 4), np.float32), np.zeros((2, 3), np.float32))
    assert e.value.code == "INVALID_ARGUMENT" and "x" in str(e.value)
    with pytest.raises(tvmjit.TvmjitError) as e:
        m(np.zeros((2, 3), np.float64), np.zeros((2, 3), np.float32))
    assert e.value.code == "INVALID_ARGUMENT"
    with pytest.raises(TypeError, match="missing input 'y'"):
        m(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="no parameter 'z'"):
        m.run({"z": 1})
    with pytest.raises(tvmjit.TvmjitError) as e:
        tvmjit.load_string(ADD_RELU.replace("R.add(x, y)", "R.add(x, y"), name="broken.rx")
    assert e.value.code == "PARSE_ERROR" and "broken.rx:" in str(e.value)
    with pytest.raises(tvmjit.TvmjitError) as e:
        tvmjit.load("/nonexistent/model.rx")
    assert e.value.code == "IO_ERROR"


def test_print_after_a_pass_and_after_the_pipeline(seed):
    fused = seed.print(after="FuseTIR")
    assert "def fused_conv2d2_relu(" in fused and "def main(" in fused
    assert seed.print() == fused  # FuseTIR is the default pipeline's last pass
    legalized = tvmjit.load_string(ADD_RELU).print(after="LegalizeOps")
    assert "R.call_tir(" in legalized and "R.add(" not in legalized


def test_bench_reports_latency(seed, seed_data):
    r = seed.bench(seed_data, runs=3, warmup=1)
    assert 0 < r["min_ms"] <= r["median_ms"] <= r["max_ms"] and r["runs"] == 3
