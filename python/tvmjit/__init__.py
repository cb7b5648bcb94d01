"""tvmjit: run TVMScript models (what TVM prints with `mod.script()`) from Python.

    import numpy as np, tvmjit
    m = tvmjit.load("model.rx", params="weights.npz")   # parse, passes, JIT (cached)
    y = m(x)                        # numpy arrays, or anything with __dlpack__ (torch)
    ys = m.run({"data": x})         # inputs by name; a list of outputs
    torch.from_dlpack(y)            # outputs are numpy arrays: zero-copy to PyTorch

Inputs are used in place (no copy) when they are C-contiguous and of the parameter's
dtype; other layouts are copied once. numpy has no bfloat16: a bfloat16 input is an
ml_dtypes.bfloat16 array, a torch.bfloat16 tensor, or an array of the raw 16-bit patterns
as np.save writes them ('<V2'); a bfloat16 output comes back as ml_dtypes.bfloat16 when
ml_dtypes is installed, else as float32 (every bfloat16 value is exactly a float32). Errors raise tvmjit.TvmjitError with tvmjit's
message (file:line:col, the parameter, the fix).
"""
import ctypes
import os
import tempfile
import time
import warnings

import numpy as np

from . import _capi
from ._capi import lib

__all__ = ["load", "load_string", "Module", "TvmjitError"]
__version__ = "0.1.0"


class TvmjitError(RuntimeError):
    """An error reported by the tvmjit library; `code` is its status name
    ("PARSE_ERROR", "INVALID_ARGUMENT", ...)."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def _check(status):
    if not status:
        return
    code = _capi.STATUS_NAMES[lib.tvmjit_status_code(status)]
    message = lib.tvmjit_status_message(status).decode("utf-8", "replace")
    lib.tvmjit_status_free(status)
    raise TvmjitError(message, code)


class _OwnedTensor:
    """Frees a library-owned tensor when the numpy array over its memory goes away."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        lib.tvmjit_tensor_free(self.handle)


def _bfloat16_view(bits):
    """A uint16 array of bfloat16 patterns as ml_dtypes.bfloat16 (no copy), or as float32."""
    try:
        import ml_dtypes
        return bits.view(ml_dtypes.bfloat16)
    except ImportError:
        return (bits.astype(np.uint32) << 16).view(np.float32)


def _adopt(handle):
    """A numpy array over an output tensor's memory, without a copy (bfloat16 without
    ml_dtypes: a float32 copy)."""
    ndim = lib.tvmjit_tensor_ndim(handle)
    dims = lib.tvmjit_tensor_shape(handle)
    shape = tuple(dims[i] for i in range(ndim))
    name = _capi.DTYPE_NAMES[lib.tvmjit_tensor_dtype(handle)]
    dtype = np.dtype(np.uint16 if name == "bfloat16" else name)
    nbytes = lib.tvmjit_tensor_nbytes(handle)
    if nbytes == 0:
        lib.tvmjit_tensor_free(handle)
        return np.empty(shape, dtype)
    buf = (ctypes.c_uint8 * nbytes).from_address(lib.tvmjit_tensor_data(handle))
    buf.owner = _OwnedTensor(handle)  # the array keeps buf alive, buf keeps the tensor
    array = np.frombuffer(buf, dtype=dtype).reshape(shape)
    return _bfloat16_view(array) if name == "bfloat16" else array


_BFLOAT16_NAMES = ("bfloat16", "void16")  # ml_dtypes' name; '<V2' as np.load reads ml_dtypes' files


def _dtype_name(array):
    return "bfloat16" if array.dtype.name in _BFLOAT16_NAMES and array.dtype.itemsize == 2 else array.dtype.name


def _as_array(value, name):
    if isinstance(value, np.ndarray):
        array = value
    elif str(getattr(value, "dtype", "")) == "torch.bfloat16":  # numpy's DLPack has no bfloat16
        import torch
        array = value.detach().cpu().contiguous().view(torch.int16).numpy().view("<V2")
    elif hasattr(value, "__dlpack__"):
        try:
            array = np.from_dlpack(value)
        except (BufferError, RuntimeError, TypeError) as e:
            raise TypeError(f"input '{name}': cannot read it through DLPack ({e}); "
                            "pass a CPU tensor (for torch: tensor.detach().cpu())") from e
    else:
        array = np.asarray(value)
    if _dtype_name(array) not in _capi.DTYPE_CODE:
        raise TypeError(f"input '{name}' has dtype {array.dtype}, which tvmjit does not take "
                        f"(it takes {', '.join(_capi.DTYPE_NAMES)}; bfloat16 as ml_dtypes.bfloat16, "
                        "torch.bfloat16 or '<V2' bit patterns)")
    if _dtype_name(array) != "bfloat16" and not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return np.ascontiguousarray(array)  # a copy only when the layout needs one


def _load_params(params):
    if params is None:
        return {}
    if isinstance(params, (str, os.PathLike)):
        with np.load(params) as npz:
            return {key: npz[key] for key in npz.files}
    return dict(params)


class Module:
    """A compiled model: its `main` function, ready to call from several threads."""

    def __init__(self, source, params=None, passes="default", mixed_precision=None, threads=0,
                 strict_float=False, use_cache=True, opt_level=2, name=None, _text=None):
        self._source, self._text, self._name = source, _text, name
        self._settings = dict(passes=passes, mixed_precision=mixed_precision, strict_float=strict_float,
                              use_cache=use_cache, opt_level=opt_level)
        self._instance = self._module = None
        options = _capi.InstanceOptions()
        lib.tvmjit_instance_options_init(ctypes.byref(options))
        options.num_threads = int(threads)
        instance = ctypes.c_void_p()
        _check(lib.tvmjit_instance_create(ctypes.byref(options), ctypes.byref(instance)))
        self._instance = instance
        self._module = self._compile()
        function = ctypes.c_void_p()
        _check(lib.tvmjit_module_get_function(self._module, b"main", ctypes.byref(function)))
        self._function = function
        self.inputs = [self._input_info(i) for i in range(lib.tvmjit_function_num_inputs(function))]
        self.outputs = [self._output_info(i) for i in range(lib.tvmjit_function_num_outputs(function))]
        self._params = {}
        self._bind_params(_load_params(params))

    # ---- compiling
    def _module_options(self, **extra):
        o = _capi.ModuleOptions()
        lib.tvmjit_module_options_init(ctypes.byref(o))
        s = self._settings
        o.passes = s["passes"].encode() if s["passes"] else None
        o.mixed_precision = s["mixed_precision"].encode() if s["mixed_precision"] else None
        o.strict_float = int(bool(s["strict_float"]))
        o.use_cache = int(bool(s["use_cache"]))
        o.opt_level = int(s["opt_level"])
        for key, value in extra.items():
            setattr(o, key, value)
        return o

    def _compile(self, **extra):
        options = self._module_options(**extra)
        module = ctypes.c_void_p()
        if self._text is not None:
            data = self._text.encode()
            _check(lib.tvmjit_module_load_string(self._instance, (self._name or "<string>").encode(), data,
                                                 len(data), ctypes.byref(options), ctypes.byref(module)))
        else:
            _check(lib.tvmjit_module_load_file(self._instance, os.fsencode(self._source), ctypes.byref(options),
                                               ctypes.byref(module)))
        for line in (lib.tvmjit_module_messages(module) or b"").decode().splitlines():
            if line.startswith("warning:"):
                warnings.warn("tvmjit: " + line, RuntimeWarning, stacklevel=3)
        return module

    def _input_info(self, i):
        name, dtype, ndim, shape = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int(), _capi._I64P()
        lib.tvmjit_function_input_info(self._function, i, ctypes.byref(name), ctypes.byref(dtype),
                                       ctypes.byref(ndim), ctypes.byref(shape))
        return (name.value.decode(), _capi.DTYPE_NAMES[dtype.value], tuple(shape[k] for k in range(ndim.value)))

    def _output_info(self, i):
        dtype, ndim, shape = ctypes.c_int(), ctypes.c_int(), _capi._I64P()
        lib.tvmjit_function_output_info(self._function, i, ctypes.byref(dtype), ctypes.byref(ndim),
                                        ctypes.byref(shape))
        return (_capi.DTYPE_NAMES[dtype.value], tuple(shape[k] for k in range(ndim.value)))

    def _bind_params(self, params):
        names = [n for n, _, _ in self.inputs]
        extra = sorted(set(params) - set(names))
        if extra:
            warnings.warn(f"tvmjit: params not used by main (ignored): {', '.join(extra)}", UserWarning,
                          stacklevel=3)
        self._params = {k: _as_array(v, k) for k, v in params.items() if k in names}

    @property
    def input_names(self):
        """Parameters of main still to be given at each call (those not bound by params)."""
        return [n for n, _, _ in self.inputs if n not in self._params]

    # ---- running
    def _feed(self, args, feed):
        free = self.input_names
        if len(args) > len(free):
            raise TypeError(f"main takes {len(free)} input(s) ({', '.join(free)}), got {len(args)}")
        given = dict(zip(free, args))
        for key, value in feed.items():
            if key in given:
                raise TypeError(f"input '{key}' given twice")
            if key not in {n for n, _, _ in self.inputs}:
                raise TypeError(f"main has no parameter '{key}' (it has {', '.join(n for n, _, _ in self.inputs)})")
            given[key] = value
        arrays = []
        for name, _, _ in self.inputs:
            if name in given:
                arrays.append(_as_array(given[name], name))
            elif name in self._params:
                arrays.append(self._params[name])
            else:
                raise TypeError(f"missing input '{name}' of main")
        return arrays

    def _call(self, arrays):
        handles = (ctypes.c_void_p * len(arrays))()
        try:
            for i, a in enumerate(arrays):
                shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
                h = ctypes.c_void_p()
                _check(lib.tvmjit_tensor_wrap(_capi.DTYPE_CODE[_dtype_name(a)], a.ndim, shape,
                                              a.ctypes.data_as(ctypes.c_void_p), ctypes.byref(h)))
                handles[i] = h.value
            outs = (ctypes.c_void_p * len(self.outputs))()
            _check(lib.tvmjit_function_call(self._function, len(arrays), handles, len(self.outputs), outs))
            return [_adopt(h) for h in outs]
        finally:
            for h in handles:
                lib.tvmjit_tensor_free(h)

    def __call__(self, *args, **inputs):
        """Runs main: positional arguments fill the inputs in order, keywords by name.
        One output comes back as an array, several as a tuple."""
        outputs = self._call(self._feed(args, inputs))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run(self, feed):
        """Runs main on a dict {input name: array}; returns the list of outputs."""
        return self._call(self._feed((), dict(feed)))

    def bench(self, *args, runs=50, warmup=5, **inputs):
        """Times main (milliseconds per call, through this binding): min, median, max."""
        arrays = self._feed(args, inputs)
        for _ in range(warmup):
            self._call(arrays)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            self._call(arrays)
            times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        return {"min_ms": times[0], "median_ms": times[len(times) // 2], "max_ms": times[-1], "runs": runs}

    def print(self, after=None):
        """The module as TVMScript after pass `after` (a TVM pass name), or after the whole
        pipeline when None."""
        libc = ctypes.CDLL(None)
        libc.fopen.restype, libc.fopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_char_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ir.txt")
            stream = libc.fopen(path.encode(), b"w")
            if not stream:
                raise OSError(f"cannot write {path}")
            try:
                extra = {"print_ir_after": after.encode()} if after else {"print_ir_after_all": 1}
                module = self._compile(ir_dump=stream, **extra)
                lib.tvmjit_module_free(module)
            finally:
                libc.fclose(stream)
            with open(path, encoding="utf-8") as f:
                text = f.read()
        sections = text.split("# IR after pass '")
        if len(sections) < 2:
            raise ValueError(f"no pass named {after!r} ran (passes: {self._settings['passes']})" if after
                             else "no pass ran, nothing was printed (passes='none')")
        return sections[-1].split("\n", 1)[1]

    @property
    def report(self):
        """Pass times and compile statistics (kernels compiled, cache hits)."""
        return (lib.tvmjit_module_report(self._module) or b"").decode()

    def __del__(self):
        if getattr(self, "_module", None):
            lib.tvmjit_module_free(self._module)
            self._module = None
        if getattr(self, "_instance", None):
            lib.tvmjit_instance_free(self._instance)
            self._instance = None

    def __repr__(self):
        ins = ", ".join(f"{n}: {d}{list(s)}" for n, d, s in self.inputs if n not in self._params)
        outs = ", ".join(f"{d}{list(s)}" for d, s in self.outputs)
        return f"<tvmjit.Module {self._source or self._name}: ({ins}) -> ({outs})>"


def load(path, params=None, passes="default", mixed_precision=None, threads=0, strict_float=False,
         use_cache=True, opt_level=2):
    """Reads a TVMScript model, runs the pass pipeline and compiles it.

    params: an .npz path or a dict {parameter name: array} binding main's weights; keys
    main does not have are ignored with a warning. passes: "default", "none" or a list
    in TVM's spelling ("LegalizeOps,FuseOps"). mixed_precision: None, "float32",
    "float16" or "bfloat16" (bfloat16 storage, float32 accumulation). threads: 0 for TVMJIT_NUM_THREADS or the number of cores."""
    return Module(os.fspath(path), params=params, passes=passes, mixed_precision=mixed_precision, threads=threads,
                  strict_float=strict_float, use_cache=use_cache, opt_level=opt_level)


def load_string(text, params=None, name="<string>", **options):
    """load() for TVMScript text in memory; `name` is used in error messages."""
    return Module(None, params=params, name=name, _text=text, **options)
