"""The CUDA driver: is there one, and launching PTX on a caller's stream (cuda-python).

`require_driver()` is called before anything that would load libmlir_cuda_runtime.so: without a
driver that library aborts the process, so we raise CudaUnavailable first.
"""

from __future__ import annotations

import ctypes
import functools


class CudaUnavailable(RuntimeError):
    """No usable CUDA driver or device on this machine."""


class CudaError(RuntimeError):
    pass


@functools.lru_cache(maxsize=1)
def _driver_problem() -> str | None:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "no CUDA driver: libcuda.so.1 cannot be loaded on this machine"
    if lib.cuInit(0) != 0:
        return "the CUDA driver is present but cuInit failed (no usable GPU?)"
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "the CUDA driver found no GPU"
    return None


def driver_available() -> bool:
    return _driver_problem() is None


def require_driver() -> None:
    problem = _driver_problem()
    if problem is not None:
        raise CudaUnavailable(problem)


def device_chip(ordinal: int = 0) -> str:
    """sm_XY(a) of a device: the 'a' variant for Hopper/Blackwell, whose features we use."""
    require_driver()
    lib = ctypes.CDLL("libcuda.so.1")
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.cuDeviceGetAttribute(ctypes.byref(major), 75, ordinal)   # COMPUTE_CAPABILITY_MAJOR
    lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, ordinal)   # COMPUTE_CAPABILITY_MINOR
    sm = major.value * 10 + minor.value
    return f"sm_{sm}a" if sm in (90, 100, 101, 103) else f"sm_{sm}"


def _check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        from cuda.bindings import driver
        _, name = driver.cuGetErrorName(err)
        raise CudaError(f"CUDA driver error {name.decode() if name else int(err)}")
    return rest[0] if len(rest) == 1 else rest


class DriverKernel:
    """A kernel loaded from PTX with the driver API, launched on any stream."""

    def __init__(self, ptx: str, name: str, shared_memory: int):
        require_driver()
        from cuda.bindings import driver
        self._driver = driver
        _check(driver.cuInit(0))
        device = _check(driver.cuDeviceGet(0))
        self._context = _check(driver.cuDevicePrimaryCtxRetain(device))
        _check(driver.cuCtxSetCurrent(self._context))
        self._module = _check(driver.cuModuleLoadData(ptx.encode() + b"\0"))
        self._function = _check(driver.cuModuleGetFunction(self._module, name.encode()))
        self.shared_memory = shared_memory
        if shared_memory > 48 * 1024:
            attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(driver.cuFuncSetAttribute(self._function, attr, shared_memory))

    def launch(self, grid, block, args: list[tuple[int | float, type]], stream: int = 0) -> None:
        values = tuple(v for v, _ in args)
        types = tuple(t for _, t in args)
        _check(self._driver.cuLaunchKernel(self._function, *grid, *block, self.shared_memory,
                                           stream, (values, types), 0))
