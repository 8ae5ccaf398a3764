"""Kernel arguments: numpy arrays on the host, CUDA tensors (torch, cupy, ...) through DLPack.

Every argument is checked against the kernel's parameter (kind, dtype, shape, device,
contiguity); a mismatch raises ArgumentError naming the parameter.
"""

from __future__ import annotations

import ctypes
import math
import os
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
_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_libc = ctypes.CDLL(None, use_errno=True)
_libc.write.restype = ctypes.c_ssize_t
_libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]

MAX_DLPACK_DIMS = 32
_READ_LIMIT = 4096          # within a pipe's buffer: the write below never blocks


def _read_memory(address: int | None, size: int) -> bytes | None:
    """`size` bytes at `address` of this process, or None when they are not all readable. A
    DLPack capsule holds raw pointers that a faulty or hostile exporter can set to anything:
    they are read by write(2) into a pipe, which fails with EFAULT on a bad address where
    reading it directly would kill the process."""
    if not address or not 0 < size <= _READ_LIMIT:
        return None
    r, w = os.pipe()
    try:
        if _libc.write(w, address, size) != size:
            return None
        return os.read(r, size)
    finally:
        os.close(r)
        os.close(w)


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
    """Reads a DLPack tensor's description without taking ownership of it; ArgumentError
    (without the parameter's name: the caller adds it) for anything that is not a readable
    DLPack tensor."""
    try:
        try:
            capsule = obj.__dlpack__()
        except TypeError:          # older exporters want a stream argument
            capsule = obj.__dlpack__(stream=None)
    except Exception as err:       # the exporter's own failure, whatever its type
        raise ArgumentError(f"its __dlpack__() raised {type(err).__name__}: {err}") from None
    if not _capsule_valid(capsule, b"dltensor"):
        raise ArgumentError(f"its __dlpack__() returned {type(capsule).__name__}, not an "
                            f"unused DLPack capsule (\"dltensor\")")
    address = _capsule_pointer(capsule, b"dltensor")
    raw = _read_memory(address, ctypes.sizeof(_DLTensor))
    if raw is None:
        raise ArgumentError("its DLPack capsule points at unreadable memory")
    tensor = _DLTensor.from_buffer_copy(raw)
    if not 0 <= tensor.ndim <= MAX_DLPACK_DIMS:
        raise ArgumentError(f"its DLPack tensor has {tensor.ndim} dimensions")
    shape = _read_int64s(tensor.shape, tensor.ndim, "shape")
    strides = _read_int64s(tensor.strides, tensor.ndim, "strides") if tensor.strides else None
    if any(d < 0 for d in shape):
        raise ArgumentError(f"its DLPack tensor has a negative extent: {list(shape)}")
    contiguous = True
    if strides:
        expected = 1
        for i in reversed(range(tensor.ndim)):
            if shape[i] != 1 and strides[i] != expected:
                contiguous = False
            expected *= shape[i]
    dtype = DLPACK_DTYPES.get((tensor.dtype.code, tensor.dtype.bits)) \
        if tensor.dtype.lanes == 1 else None
    if tensor.device.device_type not in (DL_CUDA, DL_CUDA_MANAGED):
        raise ArgumentError("not a CUDA tensor")
    return DeviceTensor(obj, (tensor.data or 0) + tensor.byte_offset, dtype, shape, contiguous,
                        tensor.device.device_id)


def _read_int64s(pointer, count: int, what: str) -> tuple[int, ...]:
    if count == 0:
        return ()
    address = ctypes.cast(pointer, ctypes.c_void_p).value
    raw = _read_memory(address, 8 * count)
    if raw is None:
        raise ArgumentError(f"its DLPack tensor's {what} points at unreadable memory")
    return tuple(int.from_bytes(raw[8 * i:8 * i + 8], "little", signed=True)
                 for i in range(count))


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
    except ArgumentError as err:
        detail = "" if str(err) == "not a CUDA tensor" else f": {err}"
        raise ArgumentError(f"argument '{p.name}' must be a CUDA tensor{detail}") from None
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
