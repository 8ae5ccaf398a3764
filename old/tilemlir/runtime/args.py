"""Kernel arguments: numpy arrays on the host, CUDA tensors (torch, cupy, ...) through DLPack.

Every argument is checked against the kernel's parameter (kind, dtype, shape, device,
contiguity); a mismatch raises ArgumentError naming the parameter.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import numpy as np

from tilemlir.runtime.signature import Param


class ArgumentError(TypeError):
    pass


NUMPY_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8,
                "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8}

# DLPack type codes: 0 int, 1 uint, 2 float, 4 bfloat.
DLPACK_DTYPES = {(2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (4, 16): "bf16", (0, 8): "i8",
                 (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "ui8"}
DL_CUDA, DL_CUDA_MANAGED = 2, 13


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@dataclass
class DeviceTensor:
    """A CUDA tensor seen through DLPack (the owner keeps the memory alive)."""
    owner: object
    address: int
    dtype: str | None
    shape: tuple[int, ...]
    contiguous: bool
    device: int


def peek_dlpack(obj) -> DeviceTensor:
    """Reads a DLPack tensor's description without taking ownership of it."""
    try:
        capsule = obj.__dlpack__()
    except TypeError:          # older exporters want a stream argument
        capsule = obj.__dlpack__(stream=None)
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    contiguous = True
    if tensor.strides:
        expected = 1
        for i in reversed(range(tensor.ndim)):
            if shape[i] != 1 and tensor.strides[i] != expected:
                contiguous = False
            expected *= shape[i]
    dtype = DLPACK_DTYPES.get((tensor.dtype.code, tensor.dtype.bits)) \
        if tensor.dtype.lanes == 1 else None
    if tensor.device.device_type not in (DL_CUDA, DL_CUDA_MANAGED):
        raise ArgumentError("not a CUDA tensor")
    return DeviceTensor(obj, (tensor.data or 0) + tensor.byte_offset, dtype, shape, contiguous,
                        tensor.device.device_id)


# The scalar parameter types' ranges: a value outside would be truncated silently by ctypes.
INT_RANGES = {"i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
              "index": (-2**63, 2**63 - 1), "i1": (0, 1)}

# torch's dtype attribute names of our element types (torch.float16 ...).
TORCH_DTYPE_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
                     "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                     "ui8": "uint8"}

_TORCH_DTYPES = {f"torch.{name}": dtype for dtype, name in TORCH_DTYPE_NAMES.items()}


def _is_torch_tensor(obj) -> bool:
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr")


def _peek_torch(t) -> DeviceTensor:
    """torch tensors without a DLPack capsule: the launch path's common case, kept cheap."""
    if not t.is_cuda:
        raise ArgumentError("not a CUDA tensor")
    return DeviceTensor(t, t.data_ptr(), _TORCH_DTYPES.get(str(t.dtype)), tuple(t.shape),
                        t.is_contiguous(), t.device.index)


def is_device_tensor(obj) -> bool:
    if _is_torch_tensor(obj):
        return obj.is_cuda
    if isinstance(obj, np.ndarray) or not hasattr(obj, "__dlpack_device__"):
        return False
    try:
        return obj.__dlpack_device__()[0] in (DL_CUDA, DL_CUDA_MANAGED)
    except Exception:
        return False


def _check_shape(p: Param, shape, dtype, contiguous) -> None:
    if dtype != p.dtype:
        raise ArgumentError(f"argument '{p.name}' must hold {p.dtype}, got {dtype or 'an unsupported dtype'}")
    if tuple(shape) != tuple(p.shape):
        raise ArgumentError(f"argument '{p.name}' must have shape {list(p.shape)}, got {list(shape)}")
    if not contiguous:
        raise ArgumentError(f"argument '{p.name}' must be contiguous (row-major)")


def check_host_array(p: Param, value) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise ArgumentError(f"argument '{p.name}' must be a numpy array or a CUDA tensor, "
                            f"got {type(value).__name__}")
    dtype = next((k for k, v in NUMPY_DTYPES.items() if value.dtype == np.dtype(v)), None)
    if dtype is None and value.dtype.name == "bfloat16":
        dtype = "bf16"
    _check_shape(p, value.shape, dtype, value.flags["C_CONTIGUOUS"])
    return value


def check_device_tensor(p: Param, value) -> DeviceTensor:
    try:
        t = _peek_torch(value) if _is_torch_tensor(value) else peek_dlpack(value)
    except ArgumentError:
        raise ArgumentError(f"argument '{p.name}' must be a CUDA tensor") from None
    _check_shape(p, t.shape, t.dtype, t.contiguous)
    if not t.address and math.prod(t.shape):
        raise ArgumentError(f"argument '{p.name}' has a NULL data pointer")
    return t


def check_scalar(p: Param, value):
    if p.dtype.startswith("f"):
        if not isinstance(value, (int, float, np.floating, np.integer)):
            raise ArgumentError(f"argument '{p.name}' must be a number, got {type(value).__name__}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ArgumentError(f"argument '{p.name}' must be an integer, got {type(value).__name__}")
    lo, hi = INT_RANGES.get(p.dtype, (None, None))
    if lo is not None and not lo <= value <= hi:
        raise ArgumentError(f"argument '{p.name}' is {p.dtype}: {value} is outside "
                            f"[{lo}, {hi}]")
    return int(value)
