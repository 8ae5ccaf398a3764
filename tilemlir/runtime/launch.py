"""Launching kernels through MLIR's CUDA runtime (libmlir_cuda_runtime.so), on the caller's stream.

This is the launch path: `mgpuModuleLoad` / `mgpuModuleGetFunction` load the PTX once per
device, `mgpuLaunchKernel` (or `mgpuLaunchClusterKernel` for kernels with a cluster shape)
launches it on the stream the caller works on, and `mgpuTensorMapEncodeTiled` encodes TMA tensor
maps on the host. Nothing here synchronises except the numpy path, which copies through device
buffers.

The runtime serves one device per process: its context is the primary context of the device set
with `mgpuSetDefaultDevice` before its first call, kept in a static. We bind it to the device of
the first call. Tensors on another device (cuda:1 after cuda:0) are what that runtime lacks, and
only for them do we go to the driver API (tilemlir.runtime.cuda.DriverFunction, through
cuda-python: the same steps, with that device's primary context pushed around them), so every
device runs its own tensors' kernels.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from pathlib import Path

import mlir

from tilemlir.ir.kernel_abi import PORTABLE_CLUSTER_CTAS, TENSOR_MAP_BYTES
from tilemlir.runtime.cuda import (CudaError, DriverFunction, allow_non_portable_clusters,
                                   current_context, require_driver)

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
    """Makes `device` the runtime's device if it has none yet (the first call's device)."""
    global _device
    if _device is not None:
        return
    with _lock:
        if _device is None:
            runtime().mgpuSetDefaultDevice(device)
            _device = device


def bound_device() -> int:
    if _device is None:
        bind_device(0)
    return _device


def load_function(ptx: str, name: str, device: int):
    """The kernel `name` of `ptx`, loaded on `device`: through MLIR's runtime on its device,
    through the driver API on any other."""
    bind_device(device)
    if device == _device:
        return LoadedFunction(ptx, name)
    return DriverFunction(ptx, name, device)


class LoadedFunction:
    """A kernel function of a module loaded from PTX by the runtime (on its device)."""

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

    def launcher(self, grid, block, cluster, shared_memory: int):
        """launch(stream, params, None, len(params)) with everything else bound, so that a
        call costs one ctypes call."""
        if tuple(cluster) == (1, 1, 1):
            return functools.partial(_runtime.mgpuLaunchKernel, self.function, *grid, *block,
                                     shared_memory)
        if cluster[0] * cluster[1] * cluster[2] > PORTABLE_CLUSTER_CTAS:
            allow_non_portable_clusters(self.function, bound_device())
        return functools.partial(_runtime.mgpuLaunchClusterKernel, self.function, *cluster,
                                 *grid, *block, shared_memory)


# ------------------------------------------------------------------------------ tensor maps
# CUtensorMapDataType of the element types TMA moves here.
# (TMA moves bytes: the 8-bit floats go as UINT8.)
_TMA_DTYPES = {"f16": 6, "bf16": 9, "f32": 7, "i8": 0, "ui8": 0, "i32": 3, "i16": 1,
               "f8E4M3FN": 0, "f8E5M2": 0}
_ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "ui8": 1, "i32": 4, "i16": 2,
               "f8E4M3FN": 1, "f8E5M2": 1}
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
# mgpuMemcpy, unlike the runtime's other wrappers, pushes no context and fails in a thread where
# none is current (a process that has not touched CUDA otherwise): the copies push the
# runtime's own.
def copy_to_device(array) -> int:
    rt = runtime()
    ptr = rt.mgpuMemAlloc(max(array.nbytes, 1), None, False)
    if not ptr:
        raise CudaError(f"could not allocate {array.nbytes} bytes on the GPU")
    with current_context(bound_device()):
        rt.mgpuMemcpy(ptr, array.ctypes.data, array.nbytes, None)
    return ptr


def copy_back_and_free(array, ptr: int) -> None:
    rt = runtime()
    with current_context(bound_device()):
        rt.mgpuMemcpy(array.ctypes.data, ptr, array.nbytes, None)
        rt.mgpuStreamSynchronize(None)
    rt.mgpuMemFree(ptr, None)
