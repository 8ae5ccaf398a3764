"""Running compiled kernels through MLIR's CUDA runtime, on the caller's stream."""

from tilemlir.runtime.args import ArgumentError
from tilemlir.runtime.cuda import CudaUnavailable, TorchUnavailable, driver_available
from tilemlir.runtime.executable import Executable, Kernel

__all__ = ["ArgumentError", "CudaUnavailable", "Executable", "Kernel", "TorchUnavailable",
           "driver_available"]
