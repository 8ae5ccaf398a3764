"""Kernel arguments: numpy arrays on the host, CUDA tensors of any framework (torch, cupy, ...)
through DLPack or the CUDA Array Interface, read by cuda.core's StridedMemoryView.

Every argument is checked against the kernel's parameter (kind, dtype, shape, device,
contiguity); a mismatch raises ArgumentError naming the parameter.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from tilemlir.analysis.alignment import GLOBAL_ALIGNMENT
from tilemlir.runtime.signature import Param, leading_text


class ArgumentError(TypeError):
    pass


NUMPY_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8,
                "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8,
                "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}

# DLPack's device types of memory a kernel can use: kDLCUDA, kDLCUDAManaged.
DLPACK_CUDA_DEVICES = (2, 13)

# numpy dtype names of the element types, as cuda.core's views give them (bfloat16 and the
# 8-bit floats through ml_dtypes).
VIEW_DTYPES = {np.dtype(v).name: k for k, v in NUMPY_DTYPES.items()} | {"bfloat16": "bf16"}


@dataclass
class DeviceTensor:
    """A CUDA tensor's description (`owner` keeps the memory alive)."""
    owner: object
    address: int
    dtype: str | None
    shape: tuple[int, ...]
    contiguous: bool
    device: int


@functools.lru_cache(maxsize=1)
def _strided_memory_view():
    """cuda.core's view constructor: `from_any_interface` (DLPack, else the CUDA Array
    Interface), or, on older cuda.core (StridedMemoryView under cuda.core.experimental, no
    `from_any_interface`), the class itself, which does the same."""
    try:
        from cuda.core.utils import StridedMemoryView
    except ImportError:
        from cuda.core.experimental.utils import StridedMemoryView
    return getattr(StridedMemoryView, "from_any_interface", StridedMemoryView)


def _row_major(shape, strides) -> bool:
    """Whether element `strides` (None: row-major, as older cuda.core says) are row-major;
    dimensions of extent 1 may have any stride."""
    if strides is None:
        return True
    expected = 1
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


# ---------------------------------------------------------------- DLPack capsules, checked
# A DLPack capsule holds raw pointers, and cuda.core reads them as they are: a faulty or
# hostile exporter's capsule would crash the process there. Each capsule is checked first, its
# memory read through write(2) into a pipe (which fails with EFAULT on a bad address where
# reading it directly would fault), and only a capsule that reads as a DLPack tensor is handed
# on, wrapped so that cuda.core sees that very capsule.
class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


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
    """`size` bytes at `address` of this process, or None when they are not all readable."""
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


class _CheckedCapsule:
    """An exporter's DLPack capsule that reads as a tensor, for cuda.core to consume."""

    def __init__(self, capsule, device):
        self._capsule, self._device = capsule, device

    def __dlpack__(self, *args, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _checked_dlpack(obj) -> _CheckedCapsule:
    """obj's DLPack capsule, checked as the section above says; ArgumentError (the caller adds
    the parameter's name) for one that is not a readable DLPack tensor."""
    try:
        try:
            capsule = obj.__dlpack__(stream=-1)        # no stream ordering, as cuda.core asks
        except TypeError:
            capsule = obj.__dlpack__()
        device = tuple(obj.__dlpack_device__())
    except Exception as err:           # the exporter's own failure, whatever its type
        raise ArgumentError(f"its __dlpack__() raised {type(err).__name__}: {err}") from None
    if not _capsule_valid(capsule, b"dltensor"):
        raise ArgumentError(f"its __dlpack__() returned {type(capsule).__name__}, not an "
                            f"unused DLPack capsule (\"dltensor\")")
    # A DLManagedTensor: the tensor, then the manager's context and deleter pointers.
    raw = _read_memory(_capsule_pointer(capsule, b"dltensor"), ctypes.sizeof(_DLTensor) + 16)
    if raw is None:
        raise ArgumentError("its DLPack capsule points at unreadable memory")
    tensor = _DLTensor.from_buffer_copy(raw[:ctypes.sizeof(_DLTensor)])
    if not 0 <= tensor.ndim <= MAX_DLPACK_DIMS:
        raise ArgumentError(f"its DLPack tensor has {tensor.ndim} dimensions")
    if tensor.ndim:
        for what, address in (("shape", tensor.shape), ("strides", tensor.strides)):
            if (address or what == "shape") and _read_memory(address, 8 * tensor.ndim) is None:
                raise ArgumentError(f"its DLPack tensor's {what} points at unreadable memory")
        shape = _read_memory(tensor.shape, 8 * tensor.ndim)
        if any(int.from_bytes(shape[i:i + 8], "little", signed=True) < 0
               for i in range(0, len(shape), 8)):
            raise ArgumentError("its DLPack tensor has a negative extent")
    return _CheckedCapsule(capsule, device)


class _CudaArrayV3:
    """An exporter of the CUDA Array Interface before version 3 (torch exports version 2),
    seen as version 3, which cuda.core's StridedMemoryView requires: version 2 has no stream
    field, which is what version 3's "stream": None says."""

    def __init__(self, interface: dict):
        self.__cuda_array_interface__ = dict(interface, version=3, stream=None)


def _cai_v3(obj):
    """`obj`, or its CUDA Array Interface as version 3 where it exports an older one (and no
    DLPack, which StridedMemoryView would take first)."""
    if hasattr(obj, "__dlpack__"):
        return obj
    interface = getattr(obj, "__cuda_array_interface__", None)
    if isinstance(interface, dict) and isinstance(interface.get("version"), int) \
            and interface["version"] < 3:
        return _CudaArrayV3(interface)
    return obj


def view_tensor(obj) -> DeviceTensor:
    """A CUDA tensor of any framework, through cuda.core's StridedMemoryView (DLPack or the
    CUDA Array Interface), without ordering any stream: the kernel runs on the stream the
    caller names or the framework's current one."""
    if not is_device_tensor(obj):      # pinned host memory, say, is device-accessible too
        raise ArgumentError("not a CUDA tensor")
    source = _checked_dlpack(obj) if hasattr(obj, "__dlpack__") else _cai_v3(obj)
    try:
        view = _strided_memory_view()(source, stream_ptr=-1)
    except Exception:
        raise ArgumentError("not a CUDA tensor") from None
    try:
        dtype = VIEW_DTYPES.get(view.dtype.name)
    except Exception:          # a dtype numpy lacks (bfloat16 without ml_dtypes, ...)
        dtype = None
    shape = tuple(view.shape)
    return DeviceTensor(view, view.ptr, dtype, shape, _row_major(shape, view.strides),
                        view.device_id)


# The scalar parameter types' ranges: a value outside would be truncated silently by ctypes.
INT_RANGES = {"i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
              "index": (-2**63, 2**63 - 1), "i1": (0, 1)}

# torch's dtype attribute names of our element types (torch.float16 ...).
TORCH_DTYPE_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
                     "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                     "ui8": "uint8", "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2"}

_TORCH_DTYPES = {f"torch.{name}": dtype for dtype, name in TORCH_DTYPE_NAMES.items()}


def _is_torch_tensor(obj) -> bool:
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr")


def _peek_torch(t) -> DeviceTensor:
    """torch tensors read directly: the launch path's common case, kept cheap."""
    if not t.is_cuda:
        raise ArgumentError("not a CUDA tensor")
    return DeviceTensor(t, t.data_ptr(), _TORCH_DTYPES.get(str(t.dtype)), tuple(t.shape),
                        t.is_contiguous(), t.device.index)


def is_device_tensor(obj) -> bool:
    if _is_torch_tensor(obj):
        return obj.is_cuda
    if isinstance(obj, np.ndarray):
        return False
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    try:
        return obj.__dlpack_device__()[0] in DLPACK_CUDA_DEVICES
    except Exception:
        return False


def _check_shape(p: Param, shape, dtype, contiguous) -> None:
    if dtype != p.dtype:
        raise ArgumentError(f"argument '{p.name}' must hold {p.dtype}, got {dtype or 'an unsupported dtype'}")
    if p.leading:                  # a run-time leading extent: checked against the others later
        if len(shape) != len(p.shape) or tuple(shape[1:]) != tuple(p.shape[1:]) \
                or not 1 <= shape[0] <= MAX_DIM:
            raise ArgumentError(f"argument '{p.name}' must have shape "
                                f"[{leading_text(p.leading)}, {', '.join(map(str, p.shape[1:]))}]"
                                f" with {leading_text(p.leading)} from 1 to {MAX_DIM}, got "
                                f"{list(shape)}")
    elif tuple(shape) != tuple(p.shape):
        raise ArgumentError(f"argument '{p.name}' must have shape {list(p.shape)}, got {list(shape)}")
    if not contiguous:
        raise ArgumentError(f"argument '{p.name}' must be contiguous (row-major)")


MAX_DIM = 2 ** 31 - 1            # a run-time dim is an i32 kernel parameter


def run_time_dims(sig, shapes: dict[int, tuple]) -> dict[str, int]:
    """The values of `sig`'s run-time dims, read off the leading extents of the buffers they
    size (`shapes`: parameter index -> the argument's shape); the buffers whose leading extent
    is an expression of them must agree. ArgumentError names the arguments that disagree."""
    return DimsPlan(sig).values(shapes)


def launch_grid(sig, values: dict[str, int]) -> tuple[int, int, int] | None:
    """The grid for run-time dims `values` (None: the static one)."""
    return DimsPlan(sig).grid(values)


class DimsPlan:
    """How a signature's run-time dims are read off its arguments and what they make of its
    derived extents and grid, each extent built into a function once: a kernel keeps its plan,
    so that a launch only looks values up (Kernel._set_dims, at every call)."""

    def __init__(self, sig):
        from tilemlir.ir.kernel_abi import extent_dim, extent_function
        self.name = sig.name
        self.bare, self.derived = [], []      # (index, name, dim) / (index, name, f, text)
        for i, p in enumerate(sig.params):
            if not p.leading:
                continue
            dim = extent_dim(p.leading)
            if dim is None:
                self.derived.append((i, p.name, extent_function(p.leading), p.leading))
            else:
                self.bare.append((i, p.name, dim))
        self.grid_fns = None
        if any(sig.grid_exprs):
            self.grid_fns = tuple(extent_function(e) if e else (lambda _, g=g: g)
                                  for e, g in zip(sig.grid_exprs, sig.grid))

    def values(self, shapes: dict[int, tuple]) -> dict[str, int]:
        values: dict[str, int] = {}
        where: dict[str, str] = {}
        for i, name, dim in self.bare:
            if i not in shapes:
                continue
            extent = shapes[i][0]
            if dim in values:
                if values[dim] != extent:
                    raise ArgumentError(f"argument '{name}' has {extent} rows but "
                                        f"'{where[dim]}' has {values[dim]}: both are {dim}")
            else:
                values[dim], where[dim] = extent, name
        for i, name, f, text in self.derived:
            if i in shapes and shapes[i][0] != f(values):
                raise ArgumentError(f"argument '{name}' must have {f(values)} rows "
                                    f"({leading_text(text)} with "
                                    f"{', '.join(f'{k}={v}' for k, v in values.items())}), got "
                                    f"{shapes[i][0]}")
        return values

    def grid(self, values: dict[str, int]) -> tuple[int, int, int] | None:
        if self.grid_fns is None:
            return None
        grid = tuple(f(values) for f in self.grid_fns)
        if grid[0] < 1 or grid[1] < 1 or grid[2] < 1:
            raise ArgumentError(f"{self.name}: its grid {list(grid)} for "
                                f"{', '.join(f'{k}={v}' for k, v in values.items())} is empty")
        return grid


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
        t = _peek_torch(value) if _is_torch_tensor(value) else view_tensor(value)
    except ArgumentError as err:
        detail = "" if str(err) == "not a CUDA tensor" else f": {err}"
        raise ArgumentError(f"argument '{p.name}' must be a CUDA tensor{detail}") from None
    _check_shape(p, t.shape, t.dtype, t.contiguous)
    if math.prod(t.shape):
        if not t.address:
            raise ArgumentError(f"argument '{p.name}' has a NULL data pointer")
        if t.address % GLOBAL_ALIGNMENT:
            raise ArgumentError(
                f"argument '{p.name}' starts at {t.address:#x}, which is not "
                f"{GLOBAL_ALIGNMENT}-byte aligned: kernels are compiled for buffers that start "
                f"on {GLOBAL_ALIGNMENT} bytes (as cudaMalloc and torch allocate them; TMA and "
                f"vector accesses need it); pass a tensor that does, e.g. a .clone() of this "
                f"view")
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


# ------------------------------------------------------------------------------ front doors
def _dense(t) -> bool:
    """Contiguous and starting on GLOBAL_ALIGNMENT bytes (or empty): what kernels take. Not a
    torch tensor: left as it is, for the kernel's argument checks to name."""
    if not _is_torch_tensor(t):
        return True
    return not t.numel() or (t.is_contiguous() and t.data_ptr() % GLOBAL_ALIGNMENT == 0)


def kernel_input(t):
    """`t`, or a contiguous copy that starts on GLOBAL_ALIGNMENT bytes where `t` is strided or
    starts elsewhere (a torch view into another tensor's storage, say): the kernels take
    row-major aligned buffers, the front doors whatever a torch user has."""
    if _dense(t):
        return t
    return t.clone() if t.is_contiguous() else t.contiguous()   # a fresh, aligned allocation


def kernel_input_padded(t, columns: int):
    """A contiguous copy of the 2-D torch tensor `t` (any strides) whose rows are padded with
    zeros to `columns` elements, in a fresh (aligned) allocation: rows of whole 16-byte units,
    which TMA loads, for a kernel compiled for the padded width (the GEMM front door's PAD_K)."""
    import torch.nn.functional as F
    return F.pad(t, (0, columns - t.shape[-1])).contiguous()


def kernel_output(t):
    """The tensor a kernel should write for `t`: `t` itself, or where `t` is strided or not
    aligned a contiguous scratch tensor, whose contents the caller then copies into `t`
    (`t.copy_(target)`, on the current stream, after the kernel)."""
    return t if _dense(t) else t.new_empty(t.shape)
