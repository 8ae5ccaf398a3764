"""The CUDA driver: is there one, and which chip is each device.

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
