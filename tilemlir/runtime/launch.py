"""Launching kernels through MLIR's CUDA runtime (libmlir_cuda_runtime.so), on the caller's stream.

This is the one launch path: `mgpuModuleLoad` / `mgpuModuleGetFunction` load the PTX once,
`mgpuLaunchKernel` (or `mgpuLaunchClusterKernel` for kernels with a cluster shape) launches it
on the stream the caller works on, and `mgpuTensorMapEncodeTiled` encodes TMA tensor maps on the
host. Nothing here synchronises except the numpy path, which copies through device buffers.

The runtime binds one device per process: its context is the primary context of the device set
with `mgpuSetDefaultDevice` before its first call. We set it from the first kernel arguments'
device and refuse tensors on another device later with an error that says so.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path

import mlir

from tilemlir.lowering.kernel_abi import TENSOR_MAP_BYTES
from tilemlir.runtime.cuda import CudaError, require_driver

MLIR_LIB = Path(list(mlir.__path__)[0]).resolve() / "lib"
RUNTIME_LIB = MLIR_LIB / "libmlir_cuda_runtime.so"

_c = ctypes
_ptr = _c.c_void_p
_PROTOTYPES = {
    "mgpuSetDefaultDevice": (None, [_c.c_int32]),
    "mgpuModuleLoad": (_ptr, [_ptr, _c.c_size_t]),
    "mgpuModuleGetFunction": (_ptr, [_ptr, _c.c_char_p]),
    "mgpuLaunchKernel": (None, [_ptr] + [_c.c_ssize_t] * 6 + [_c.c_int32, _ptr, _ptr, _ptr,
                                                              _c.c_size_t]),
    "mgpuLaunchClusterKernel": (None, [_ptr] + [_c.c_ssize_t] * 9 + [_c.c_int32, _ptr, _ptr,
                                                                     _ptr, _c.c_size_t]),
    "mgpuTensorMapEncodeTiled": (None, [_ptr, _c.c_int, _c.c_uint32, _ptr,
                                        _c.POINTER(_c.c_uint64), _c.POINTER(_c.c_uint64),
                                        _c.POINTER(_c.c_uint32), _c.POINTER(_c.c_uint32),
                                        _c.c_int, _c.c_int, _c.c_int, _c.c_int]),
    "mgpuMemAlloc": (_ptr, [_c.c_uint64, _ptr, _c.c_bool]),
    "mgpuMemFree": (None, [_ptr, _ptr]),
    "mgpuMemcpy": (None, [_ptr, _ptr, _c.c_size_t, _ptr]),
    "mgpuStreamSynchronize": (None, [_ptr]),
}

_lock = threading.RLock()            # bind_device loads the runtime under it
_runtime = None
_device: int | None = None


def runtime() -> ctypes.CDLL:
    """libmlir_cuda_runtime.so with its prototypes (loading it without a driver would abort)."""
    global _runtime
    if _runtime is None:
        require_driver()
        with _lock:
            if _runtime is None:
                lib = ctypes.CDLL(str(RUNTIME_LIB))
                for name, (restype, argtypes) in _PROTOTYPES.items():
                    fn = getattr(lib, name)
                    fn.restype, fn.argtypes = restype, argtypes
                _runtime = lib
    return _runtime


def bind_device(device: int) -> None:
    """Makes `device` the runtime's device on first use; any other device later is an error."""
    global _device
    if _device == device:
        return
    with _lock:
        if _device is None:
            runtime().mgpuSetDefaultDevice(device)
            _device = device
        elif _device != device:
            from tilemlir.runtime.args import ArgumentError
            raise ArgumentError(
                f"the tensors are on cuda:{device}, but MLIR's CUDA runtime is bound to "
                f"cuda:{_device} in this process (it keeps one device per process)")


def bound_device() -> int:
    if _device is None:
        bind_device(0)
    return _device


class LoadedFunction:
    """A kernel function of a module loaded from PTX by the runtime."""

    def __init__(self, ptx: str, name: str):
        rt = runtime()
        bound_device()
        self._image = ctypes.create_string_buffer(ptx.encode())   # NUL-terminated for the JIT
        self.module = rt.mgpuModuleLoad(self._image, len(self._image))
        if not self.module:
            raise CudaError(f"MLIR's CUDA runtime could not load the PTX of {name} "
                            f"(its message is on stderr)")
        self.function = rt.mgpuModuleGetFunction(self.module, name.encode())
        if not self.function:
            raise CudaError(f"no kernel function {name} in the loaded module")

    def launch(self, grid, block, cluster, shared_memory: int, stream: int,
               params: "ctypes.Array") -> None:
        rt = _runtime
        if tuple(cluster) == (1, 1, 1):
            rt.mgpuLaunchKernel(self.function, *grid, *block, shared_memory, stream, params,
                                None, len(params))
        else:
            rt.mgpuLaunchClusterKernel(self.function, *cluster, *grid, *block, shared_memory,
                                       stream, params, None, len(params))


# ------------------------------------------------------------------------------ tensor maps
# CUtensorMapDataType of the element types TMA moves here.
_TMA_DTYPES = {"f16": 6, "bf16": 9, "f32": 7, "i8": 0, "ui8": 0, "i32": 3, "i16": 1}
_ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "ui8": 1, "i32": 4, "i16": 2}
_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}                 # CUtensorMapSwizzle


class TensorMap:
    """A CUtensorMap: 128 opaque bytes, 64-byte aligned (cuTensorMapEncodeTiled checks), passed
    to the kernel by value. ctypes has no aligned allocation, so it sits inside a larger buffer."""

    def __init__(self):
        self._buffer = ctypes.create_string_buffer(TENSOR_MAP_BYTES + 64)
        self.address = (ctypes.addressof(self._buffer) + 63) & ~63

    def encoded(self) -> bool:
        return any(ctypes.string_at(self.address, TENSOR_MAP_BYTES))


def encode_tensor_map(address: int, dtype: str, shape, box, swizzle_bytes: int) -> TensorMap:
    """A tiled tensor map over a row-major `shape` array at `address` (box: outermost first).

    Out-of-bounds parts of a box read as zeros, so ragged edges need no padding."""
    rank = len(shape)
    esize = _ELEM_BYTES[dtype]
    dims = (ctypes.c_uint64 * rank)(*reversed(shape))
    strides, run = [], esize
    for extent in reversed(shape[1:]):
        run *= extent
        strides.append(run)
    strides_c = (ctypes.c_uint64 * max(rank - 1, 1))(*(strides or [0]))
    box_c = (ctypes.c_uint32 * rank)(*reversed(box))
    ones = (ctypes.c_uint32 * rank)(*([1] * rank))
    tmap = TensorMap()
    runtime().mgpuTensorMapEncodeTiled(tmap.address, _TMA_DTYPES[dtype], rank, address,
                                       dims, strides_c, box_c, ones, 0, _SWIZZLE[swizzle_bytes],
                                       2, 0)   # no interleave, L2 promotion 128B, zero fill
    if not tmap.encoded():
        raise CudaError(f"cuTensorMapEncodeTiled rejected a {dtype} tensor of shape "
                        f"{list(shape)} with box {list(box)} (its message is on stderr)")
    return tmap


# ------------------------------------------------------------------------------ numpy path
def copy_to_device(array) -> int:
    rt = runtime()
    ptr = rt.mgpuMemAlloc(max(array.nbytes, 1), None, False)
    if not ptr:
        raise CudaError(f"could not allocate {array.nbytes} bytes on the GPU")
    rt.mgpuMemcpy(ptr, array.ctypes.data, array.nbytes, None)
    return ptr


def copy_back_and_free(array, ptr: int) -> None:
    rt = runtime()
    rt.mgpuMemcpy(array.ctypes.data, ptr, array.nbytes, None)
    rt.mgpuStreamSynchronize(None)
    rt.mgpuMemFree(ptr, None)
