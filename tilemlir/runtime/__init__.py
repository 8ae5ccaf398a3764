"""Running compiled kernels: MLIR's ExecutionEngine + CUDA runtime, or the CUDA driver API."""

from tilemlir.runtime.args import ArgumentError
from tilemlir.runtime.cuda import CudaUnavailable, driver_available
from tilemlir.runtime.executable import Executable, Kernel

__all__ = ["ArgumentError", "CudaUnavailable", "Executable", "Kernel", "driver_available"]
