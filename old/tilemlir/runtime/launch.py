"""Launching kernels through MLIR's CUDA runtime (libmlir_cuda_runtime.so), on the caller's stream.

This is the launch path: `mgpuModuleLoad` / `mgpuModuleGetFunction` load the PTX once per
device, `mgpuLaunchKernel` (or `mgpuLaunchClusterKernel` for kernels with a cluster shape)
launches it on the stream the caller works on, and `mgpuTensorMapEncodeTiled` encodes TMA tensor
maps on the host. Nothing here synchronises except the numpy path, which copies through device
buffers.

The runtime serves one device per process: its context is the primary context of the device set
with `mgpuSetDefaultDevice` before its first call, kept in a static. We bind it to the device of
the first call. Tensors on another device (cuda:1 after cuda:0) are what that runtime lacks, and
only for them do we go to the driver API (`_DriverFunction`: the same five steps, with that
device's primary context pushed around them), so every device runs its own tensors' kernels.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
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
    return _DriverFunction(ptx, name, device)


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
        return functools.partial(_runtime.mgpuLaunchClusterKernel, self.function, *cluster,
                                 *grid, *block, shared_memory)


# ------------------------------------------------------------------------------ other devices
# The driver API for what MLIR's runtime lacks: a second device. Same steps as the runtime's
# wrappers (load, get function, raise the dynamic shared-memory limit, launch, cluster launch
# through cuLaunchKernelEx with the spread scheduling policy), but in that device's context.
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
_CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5
_CU_CLUSTER_SCHEDULING_POLICY_SPREAD = 1


class _LaunchAttribute(_c.Structure):
    """CUlaunchAttribute: an id, padding to 8 bytes, a 64-byte value union."""
    _fields_ = [("id", _c.c_int), ("pad", _c.c_char * 4), ("value", _c.c_uint32 * 16)]


class _LaunchConfig(_c.Structure):
    _fields_ = [("gridDimX", _c.c_uint), ("gridDimY", _c.c_uint), ("gridDimZ", _c.c_uint),
                ("blockDimX", _c.c_uint), ("blockDimY", _c.c_uint), ("blockDimZ", _c.c_uint),
                ("sharedMemBytes", _c.c_uint), ("hStream", _ptr),
                ("attrs", _c.POINTER(_LaunchAttribute)), ("numAttrs", _c.c_uint)]


_driver = None
_contexts: dict[int, int] = {}


def _cu(call: str, *args) -> None:
    result = getattr(_driver, call)(*args)
    if result != 0:
        name = _c.c_char_p()
        _driver.cuGetErrorName(result, _c.byref(name))
        raise CudaError(f"{call} failed: {(name.value or b'?').decode()} ({result})")


def _primary_context(device: int) -> int:
    global _driver
    known = _contexts.get(device)          # every driver-path launch asks: no lock once known
    if known is not None:
        return known
    with _lock:
        if _driver is None:
            require_driver()
            _driver = _c.CDLL("libcuda.so.1")
            _driver.cuLaunchKernel.argtypes = [_ptr] + [_c.c_uint] * 7 + [_ptr, _ptr, _ptr]
            _driver.cuLaunchKernelEx.argtypes = [_c.POINTER(_LaunchConfig), _ptr, _ptr, _ptr]
            _driver.cuModuleLoadData.argtypes = [_c.POINTER(_ptr), _c.c_char_p]
            _driver.cuModuleGetFunction.argtypes = [_c.POINTER(_ptr), _ptr, _c.c_char_p]
            _driver.cuFuncSetAttribute.argtypes = [_ptr, _c.c_int, _c.c_int]
            _driver.cuCtxPushCurrent_v2.argtypes = [_ptr]
        if device not in _contexts:
            dev, ctx = _c.c_int(), _ptr()
            _cu("cuDeviceGet", _c.byref(dev), device)
            _cu("cuDevicePrimaryCtxRetain", _c.byref(ctx), dev)
            _contexts[device] = ctx.value
        return _contexts[device]


@contextlib.contextmanager
def _current(device: int):
    """`device`'s primary context (the one MLIR's runtime uses for its device) made current."""
    _cu("cuCtxPushCurrent_v2", _primary_context(device))
    try:
        yield
    finally:
        _cu("cuCtxPopCurrent_v2", _c.byref(_ptr()))


class _DriverFunction:
    """A kernel loaded on a device other than the runtime's, through the driver API."""

    def __init__(self, ptx: str, name: str, device: int):
        self.device = device
        module, function = _ptr(), _ptr()
        with _current(device):
            _cu("cuModuleLoadData", _c.byref(module), ptx.encode())
            _cu("cuModuleGetFunction", _c.byref(function), module, name.encode())
        self.module, self.function = module.value, function.value
        self._configured = False

    def launcher(self, grid, block, cluster, shared_memory: int):
        """Called like LoadedFunction's launcher."""
        def launch(stream, params, extra, count):
            self._launch(grid, block, cluster, shared_memory, stream, params)
        return launch

    def _launch(self, grid, block, cluster, shared_memory: int, stream: int,
                params: "ctypes.Array") -> None:
        with _current(self.device):
            if not self._configured:         # every launch of a kernel has the same budget
                _cu("cuFuncSetAttribute", self.function,
                    _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_memory)
                _cu("cuFuncSetAttribute", self.function,
                    _CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
                self._configured = True
            if tuple(cluster) == (1, 1, 1):
                _cu("cuLaunchKernel", self.function, *grid, *block, shared_memory, stream,
                    params, None)
                return
            attrs = (_LaunchAttribute * 2)()
            attrs[0].id = _CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            attrs[0].value[0:3] = list(cluster)
            attrs[1].id = _CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
            attrs[1].value[0] = _CU_CLUSTER_SCHEDULING_POLICY_SPREAD
            config = _LaunchConfig(*grid, *block, shared_memory, stream, attrs, 2)
            _cu("cuLaunchKernelEx", _c.byref(config), self.function, params, None)


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
# mgpuMemcpy, unlike the runtime's other wrappers, pushes no context and fails in a thread where
# none is current (a process that has not touched CUDA otherwise): the copies push the
# runtime's own.
def copy_to_device(array) -> int:
    rt = runtime()
    ptr = rt.mgpuMemAlloc(max(array.nbytes, 1), None, False)
    if not ptr:
        raise CudaError(f"could not allocate {array.nbytes} bytes on the GPU")
    with _current(bound_device()):
        rt.mgpuMemcpy(ptr, array.ctypes.data, array.nbytes, None)
    return ptr


def copy_back_and_free(array, ptr: int) -> None:
    rt = runtime()
    with _current(bound_device()):
        rt.mgpuMemcpy(array.ctypes.data, ptr, array.nbytes, None)
        rt.mgpuStreamSynchronize(None)
    rt.mgpuMemFree(ptr, None)
