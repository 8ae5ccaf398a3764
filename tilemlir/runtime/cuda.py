"""The CUDA driver, through cuda-python's bindings (cuda.bindings.driver).

What MLIR's CUDA runtime library does not do is done here: whether there is a driver and a GPU,
which chip each device is, the device contexts that the numpy copies and the second-device path
make current, and that second-device path itself (`DriverFunction`).

`require_driver()` is called before anything that would load libmlir_cuda_runtime.so: without a
driver that library aborts the process, so we raise CudaUnavailable first. cuda.bindings
imports without a driver (its first call raises then) and takes ~0.1 s to import, so it is
imported on first use.
"""

from __future__ import annotations

import functools
import threading


class CudaUnavailable(RuntimeError):
    """No usable CUDA driver or device on this machine."""


class CudaError(RuntimeError):
    pass


class TorchUnavailable(ModuleNotFoundError):
    """PyTorch, which the helper called needs, is not installed."""


def require_torch(what: str):
    """The torch module, or TorchUnavailable naming `what` needs it and how to install it."""
    try:
        import torch
    except ImportError:
        raise TorchUnavailable(f"{what} needs PyTorch, which is not installed here: "
                               f"pip install 'tilemlir[torch]'", name="torch") from None
    return torch


def require_torch_cuda(what: str):
    """The torch module with a usable CUDA device, else TorchUnavailable or CudaUnavailable."""
    torch = require_torch(what)
    if not torch.cuda.is_available():
        raise CudaUnavailable(f"{what} runs on a CUDA GPU, and torch sees none here "
                              f"(torch.cuda.is_available() is False: a CPU-only torch, no "
                              f"driver or no GPU)")
    return torch


@functools.lru_cache(maxsize=1)
def driver():
    """The cuda.bindings.driver module (tests replace this function with a fake)."""
    from cuda.bindings import driver as cu
    return cu


def check(call: str, result):
    """What a cuda.bindings call returned after its status (one value, a tuple, or None);
    CudaError naming `call` and the error when the status is not CUDA_SUCCESS."""
    status = result[0]
    if status:
        raise CudaError(f"{call} failed: {getattr(status, 'name', status)} ({int(status)})")
    return result[1] if len(result) == 2 else (result[1:] or None)


@functools.lru_cache(maxsize=1)
def _driver_problem() -> str | None:
    try:
        cu = driver()
    except ImportError as err:
        return f"cuda-python's driver bindings (cuda.bindings) cannot be imported: {err}"
    try:
        status = cu.cuInit(0)[0]
    except Exception:     # cuda.bindings raises when it cannot load libcuda.so.1
        return "no CUDA driver: libcuda.so.1 cannot be loaded on this machine"
    if status:
        return (f"the CUDA driver is present but cuInit failed "
                f"({getattr(status, 'name', status)}: no usable GPU?)")
    status, count = cu.cuDeviceGetCount()
    if status or count == 0:
        return "the CUDA driver found no GPU"
    return None


def driver_available() -> bool:
    return _driver_problem() is None


def require_driver() -> None:
    problem = _driver_problem()
    if problem is not None:
        raise CudaUnavailable(problem)


def device_chip(ordinal: int = 0) -> str:
    """sm_XY(a) of a device: the 'a' variant for Hopper/Blackwell, whose features we use.
    Asked once per device: `tilemlir.compile(kernel)` asks on every call (its memory-cache
    hit took 7 us more when each call went to the driver)."""
    require_driver()
    return _device_chip(ordinal)


@functools.lru_cache(maxsize=None)
def _device_chip(ordinal: int) -> str:
    cu = driver()
    device = check("cuDeviceGet", cu.cuDeviceGet(ordinal))
    attribute = cu.CUdevice_attribute
    major = check("cuDeviceGetAttribute", cu.cuDeviceGetAttribute(
        attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    minor = check("cuDeviceGetAttribute", cu.cuDeviceGetAttribute(
        attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    sm = major * 10 + minor
    return f"sm_{sm}a" if sm in (90, 100, 101, 103) else f"sm_{sm}"


# ------------------------------------------------------------------------------ contexts
# MLIR's runtime works in the primary context of its device; so do we, on every device. The
# contexts are pushed and popped around each use, never set: the caller's current context (and
# so torch's current device) is what it was.
_lock = threading.Lock()
_contexts: dict[int, object] = {}


def primary_context(device: int):
    """The primary context of `device`, retained once for the life of the process."""
    known = _contexts.get(device)          # every driver-path launch asks: no lock once known
    if known is not None:
        return known
    require_driver()
    with _lock:
        if device not in _contexts:
            cu = driver()
            handle = check("cuDeviceGet", cu.cuDeviceGet(device))
            _contexts[device] = check("cuDevicePrimaryCtxRetain",
                                      cu.cuDevicePrimaryCtxRetain(handle))
        return _contexts[device]


class current_context:
    """`with current_context(device):` makes `device`'s primary context current inside."""

    __slots__ = ("context",)

    def __init__(self, device: int):
        self.context = primary_context(device)

    def __enter__(self):
        check("cuCtxPushCurrent", driver().cuCtxPushCurrent(self.context))

    def __exit__(self, *exc):
        check("cuCtxPopCurrent", driver().cuCtxPopCurrent())


def allow_non_portable_clusters(function, device: int) -> None:
    """Lets `function` (a CUfunction, or its address as an int) launch in clusters of more than
    8 CTAs (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED): without it such a launch
    fails with CUDA_ERROR_INVALID_CLUSTER_SIZE. MLIR's runtime does not set it."""
    cu = driver()
    if isinstance(function, int):
        function = cu.CUfunction(function)
    with current_context(device):
        check("cuFuncSetAttribute", cu.cuFuncSetAttribute(
            function, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            1))


# ------------------------------------------------------------------------------ other devices
class DriverFunction:
    """A kernel loaded and launched through the driver API, for a device other than the one
    MLIR's runtime serves. The same steps as the runtime's wrappers (load the PTX, get the
    function, raise its dynamic shared-memory limit, launch; a cluster launch through
    cuLaunchKernelEx with the spread scheduling policy), in that device's primary context."""

    def __init__(self, ptx: str, name: str, device: int):
        cu = self._cu = driver()
        self.device = device
        with current_context(device):
            self.module = check("cuModuleLoadData", cu.cuModuleLoadData(ptx.encode() + b"\0"))
            self.function = check("cuModuleGetFunction",
                                  cu.cuModuleGetFunction(self.module, name.encode()))
        self._configured = False

    def launcher(self, grid, block, cluster, shared_memory: int):
        """launch(stream, params, None, len(params)), called like LoadedFunction's launcher:
        the launch configuration is built once here, each call sets only its stream."""
        cu, function, context = self._cu, self.function, primary_context(self.device)
        push, pop = cu.cuCtxPushCurrent, cu.cuCtxPopCurrent
        if tuple(cluster) == (1, 1, 1):
            call, config = "cuLaunchKernel", None
        else:
            call, config = "cuLaunchKernelEx", self.cluster_config(grid, block, cluster,
                                                                   shared_memory)

        def launch(stream, params, extra, count):
            if not self._configured:       # every launch of a kernel has the same budget
                self._configure(shared_memory)
            check("cuCtxPushCurrent", push(context))
            try:
                if config is None:
                    result = cu.cuLaunchKernel(function, *grid, *block, shared_memory, stream,
                                               params, 0)
                else:
                    config.hStream = stream
                    result = cu.cuLaunchKernelEx(config, function, params, 0)
                check(call, result)
            finally:
                check("cuCtxPopCurrent", pop())
        return launch

    def _configure(self, shared_memory: int) -> None:
        cu, attribute = self._cu, self._cu.CUfunction_attribute
        with current_context(self.device):
            check("cuFuncSetAttribute", cu.cuFuncSetAttribute(
                self.function, attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared_memory))
        allow_non_portable_clusters(self.function, self.device)
        self._configured = True

    def cluster_config(self, grid, block, cluster, shared_memory: int):
        """The CUlaunchConfig of a cluster launch: cluster dimensions and the spread policy."""
        cu = self._cu
        config = cu.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = grid
        config.blockDimX, config.blockDimY, config.blockDimZ = block
        config.sharedMemBytes = shared_memory
        shape = cu.CUlaunchAttribute()
        shape.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        shape.value.clusterDim.x, shape.value.clusterDim.y, shape.value.clusterDim.z = cluster
        policy = cu.CUlaunchAttribute()
        policy.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
        policy.value.clusterSchedulingPolicyPreference = \
            cu.CUclusterSchedulingPolicy.CU_CLUSTER_SCHEDULING_POLICY_SPREAD
        config.attrs = [shape, policy]
        config.numAttrs = 2
        return config
