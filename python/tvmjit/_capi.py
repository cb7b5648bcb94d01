"""ctypes declarations of include/tvmjit.h, and where the shared library is found.

The library is looked up, in order: $TVMJIT_LIBRARY; next to this file (a copy made by
`pip install ./python`); the build tree this file sits in (../../build); the system's
library path (an install with `cmake --install`).
"""
import ctypes
import ctypes.util
import os

MAX_NDIM = 8

# tvmjit_dtype_t, in the header's order.
DTYPE_NAMES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64",
               "uint8", "uint16", "uint32", "uint64", "bool", "bfloat16"]
DTYPE_CODE = {name: code for code, name in enumerate(DTYPE_NAMES)}

# tvmjit_code_t, in the header's order.
STATUS_NAMES = ["OK", "INVALID_ARGUMENT", "PARSE_ERROR", "VERIFY_ERROR", "UNSUPPORTED",
                "IO_ERROR", "OUT_OF_MEMORY", "NOT_FOUND", "INTERNAL", "COMPILE_ERROR"]

MESSAGE_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


class CacheOptions(ctypes.Structure):
    _fields_ = [("enable", ctypes.c_int), ("directory", ctypes.c_char_p), ("max_bytes", ctypes.c_uint64)]


class InstanceOptions(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int), ("cache", CacheOptions)]


class ModuleOptions(ctypes.Structure):
    _fields_ = [
        ("passes", ctypes.c_char_p),
        ("mixed_precision", ctypes.c_char_p),
        ("verify_each", ctypes.c_int),
        ("ir_dump", ctypes.c_void_p),
        ("print_ir_before", ctypes.c_char_p),
        ("print_ir_after", ctypes.c_char_p),
        ("print_ir_after_all", ctypes.c_int),
        ("time_passes", ctypes.c_int),
        ("no_schedule", ctypes.c_int),
        ("strict_float", ctypes.c_int),
        ("use_cache", ctypes.c_int),
        ("cache_debug", ctypes.c_int),
        ("on_message", MESSAGE_CALLBACK),
        ("message_user", ctypes.c_void_p),
        ("opt_level", ctypes.c_int),
        ("n_bind_params", ctypes.c_int),
        ("bind_param_names", ctypes.c_void_p),
        ("bind_params", ctypes.c_void_p),
        ("bind_params_skip_unknown", ctypes.c_int),
        ("no_prepack", ctypes.c_int),
    ]


def _candidates():
    env = os.environ.get("TVMJIT_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libtvmjit.so")
    yield os.path.join(here, "..", "..", "build", "libtvmjit.so")
    found = ctypes.util.find_library("tvmjit")
    if found:
        yield found
    yield "libtvmjit.so.0"


def _load_library():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("tvmjit: cannot find libtvmjit.so; build it with ./setup.sh, or set "
                      "TVMJIT_LIBRARY to its path. Tried: " + "; ".join(tried))


lib = _load_library()

_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_I64P = ctypes.POINTER(ctypes.c_int64)


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


_declare("tvmjit_status_code", ctypes.c_int, _P)
_declare("tvmjit_status_message", ctypes.c_char_p, _P)
_declare("tvmjit_status_free", None, _P)
_declare("tvmjit_tensor_wrap", _P, ctypes.c_int, ctypes.c_int, _I64P, _P, _PP)
_declare("tvmjit_tensor_free", None, _P)
_declare("tvmjit_tensor_dtype", ctypes.c_int, _P)
_declare("tvmjit_tensor_ndim", ctypes.c_int, _P)
_declare("tvmjit_tensor_shape", _I64P, _P)
_declare("tvmjit_tensor_data", _P, _P)
_declare("tvmjit_tensor_nbytes", ctypes.c_size_t, _P)
_declare("tvmjit_instance_options_init", None, ctypes.POINTER(InstanceOptions))
_declare("tvmjit_instance_create", _P, ctypes.POINTER(InstanceOptions), _PP)
_declare("tvmjit_instance_free", None, _P)
_declare("tvmjit_module_options_init", None, ctypes.POINTER(ModuleOptions))
_declare("tvmjit_module_load_file", _P, _P, ctypes.c_char_p, ctypes.POINTER(ModuleOptions), _PP)
_declare("tvmjit_module_load_string", _P, _P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
         ctypes.POINTER(ModuleOptions), _PP)
_declare("tvmjit_module_free", None, _P)
_declare("tvmjit_module_report", ctypes.c_char_p, _P)
_declare("tvmjit_module_messages", ctypes.c_char_p, _P)
_declare("tvmjit_module_get_function", _P, _P, ctypes.c_char_p, _PP)
_declare("tvmjit_function_num_inputs", ctypes.c_int, _P)
_declare("tvmjit_function_num_outputs", ctypes.c_int, _P)
_declare("tvmjit_function_input_info", ctypes.c_int, _P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
         ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_I64P))
_declare("tvmjit_function_output_info", ctypes.c_int, _P, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
         ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_I64P))
_declare("tvmjit_function_flops", ctypes.c_double, _P)
_declare("tvmjit_function_call", _P, _P, ctypes.c_int, _PP, ctypes.c_int, _PP)
