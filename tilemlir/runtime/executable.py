"""Compiled tile modules and callable kernels.

    exe = Executable.from_text(open("examples/mma_demo.mlir").read(), target="sm_90a")
    kernel = exe.kernel("gemm_16x8x16")
    kernel(a, b, d)                 # numpy arrays: copied to the GPU and back
    kernel(a_t, b_t, d_t)           # torch / cupy CUDA tensors: used in place

Both calls go through MLIR's ExecutionEngine and libmlir_cuda_runtime.so (host code built from
gpu.alloc / gpu.memcpy / gpu.launch_func). `kernel.launch(..., stream=s)` instead launches the
same PTX with the CUDA driver API on the caller's stream, without synchronising: that is the
path benchmarks take, so that CUDA-event timings see only the kernel.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Callable

import mlir
from mlir import ir

from tilemlir.ir.context import make_context
from tilemlir.pipeline import lower_to_ptx
from tilemlir.runtime import args as argcheck
from tilemlir.runtime.cuda import DriverKernel, require_driver
from tilemlir.runtime.host import copy_entry, launch_entry
from tilemlir.runtime.signature import KernelSignature, kernels
from tilemlir.target import Target
from tilemlir.target.ptx import extract_ptx

MLIR_LIB = Path(list(mlir.__path__)[0]).resolve() / "lib"
RUNTIME_LIBS = ("libmlir_cuda_runtime.so", "libmlir_runner_utils.so")


def _memref_descriptor(array) -> ctypes.Structure:
    rank = array.ndim
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
              ("strides", ctypes.c_int64 * rank)]
    desc = type("MemRef", (ctypes.Structure,), {"_fields_": fields})()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    for i in range(rank):
        desc.sizes[i] = array.shape[i]
        desc.strides[i] = array.strides[i] // array.itemsize
    return desc


_SCALAR_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "index": ctypes.c_int64,
                  "f32": ctypes.c_float, "f64": ctypes.c_double, "i1": ctypes.c_bool}


def with_host_entries(module: ir.Module, signatures) -> ir.Module:
    """A copy of `module` (locations kept) with the host entry points of every kernel added."""
    text = module.operation.get_asm(enable_debug_info=True)
    body_end = [m.start() for m in re.finditer(r"^\}", text, re.M)][-1]  # the module's "}"
    entries = "\n".join(copy_entry(s) + "\n" + launch_entry(s) for s in signatures)
    with module.context:
        new = ir.Module.parse(text[:body_end] + entries + "\n" + text[body_end:])
        new.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
    return new


class Executable:
    """Kernels (signatures + PTX) and, on demand, the lowered module the engine runs."""

    def __init__(self, target: Target, signatures: dict[str, KernelSignature],
                 ptx: dict[str, str], lowered: Callable[[], ir.Module]):
        self.target = target
        self.signatures = signatures
        self.ptx = ptx
        self._lowered = lowered
        self._engine = None

    @staticmethod
    def compile(module: ir.Module, target: Target, opt_level: int = 3,
                dump_dir: str | None = None) -> "Executable":
        """Lowers a tile module (kernels + generated host entries) to PTX."""
        signatures = {s.name: s for s in kernels(module)}
        lowered = with_host_entries(module, signatures.values())
        lower_to_ptx(lowered, target, opt_level, dump_dir)
        return Executable(target, signatures, extract_ptx(lowered), lambda: lowered)

    @staticmethod
    def from_text(text: str, target: str | Target = "sm_90a") -> "Executable":
        t = target if isinstance(target, Target) else Target.parse(target)
        with make_context():
            return Executable.compile(ir.Module.parse(text), t)

    def kernel(self, name: str | None = None) -> "Kernel":
        if name is None:
            if len(self.signatures) != 1:
                raise KeyError(f"name one of the kernels: {', '.join(self.signatures)}")
            name = next(iter(self.signatures))
        if name not in self.signatures:
            raise KeyError(f"no kernel '{name}'; the kernels are: {', '.join(self.signatures)}")
        return Kernel(self, self.signatures[name])

    def engine(self):
        """The MLIR ExecutionEngine (created on first use; needs a CUDA driver)."""
        if self._engine is None:
            require_driver()
            from mlir.execution_engine import ExecutionEngine
            libs = [str(MLIR_LIB / name) for name in RUNTIME_LIBS]
            self._engine = ExecutionEngine(self._lowered(), opt_level=2, shared_libs=libs)
            self._engine.initialize()
        return self._engine


class Kernel:
    def __init__(self, exe: Executable, sig: KernelSignature):
        self.executable = exe
        self.signature = sig
        self._driver_kernel = None

    @property
    def name(self) -> str:
        return self.signature.name

    @property
    def ptx(self) -> str:
        return self.executable.ptx[self.signature.module]

    def _check_count(self, values) -> None:
        params = self.signature.params
        if len(values) != len(params):
            raise argcheck.ArgumentError(
                f"{self.name} takes {len(params)} arguments "
                f"({', '.join(p.describe() for p in params)}), got {len(values)}")

    def __call__(self, *values) -> None:
        """Runs the kernel through MLIR's CUDA runtime and waits for it."""
        self._check_count(values)
        buffers = [v for p, v in zip(self.signature.params, values) if p.kind == "buffer"]
        on_device = [argcheck.is_device_tensor(v) for v in buffers]
        if any(on_device) and not all(on_device):
            names = [p.name for p in self.signature.params if p.kind == "buffer"]
            host = [n for n, d in zip(names, on_device) if not d]
            raise argcheck.ArgumentError(
                f"{self.name}: mix of host arrays and CUDA tensors; "
                f"argument(s) {', '.join(repr(h) for h in host)} are not on the GPU")
        engine_args, keep = [], []
        for p, v in zip(self.signature.params, values):
            if p.kind == "scalar":
                c = _SCALAR_CTYPES[p.dtype](argcheck.check_scalar(p, v))
                keep.append(c)
                engine_args.append(ctypes.pointer(c))
            elif all(on_device):
                t = argcheck.check_device_tensor(p, v)
                c = ctypes.c_int64(t.address)
                keep.append((t, c))
                engine_args.append(ctypes.pointer(c))
            else:
                desc = _memref_descriptor(argcheck.check_host_array(p, v))
                keep.append(desc)
                engine_args.append(ctypes.pointer(ctypes.pointer(desc)))
        entry = f"{self.name}__launch" if buffers and all(on_device) else f"{self.name}__copy"
        self.executable.engine().invoke(entry, *engine_args)

    def launch(self, *values, stream: int = 0, grid=None) -> None:
        """Launches on `stream` with the CUDA driver API (CUDA tensors only), without waiting."""
        self._check_count(values)
        if self._driver_kernel is None:
            self._driver_kernel = DriverKernel(self.ptx, self.name, self.signature.shared_memory)
        launch_args = []
        for p, v in zip(self.signature.params, values):
            if p.kind == "buffer":
                launch_args.append((argcheck.check_device_tensor(p, v).address, ctypes.c_void_p))
            else:
                launch_args.append((argcheck.check_scalar(p, v), _SCALAR_CTYPES[p.dtype]))
        self._driver_kernel.launch(grid or self.signature.grid, self.signature.block, launch_args,
                                   stream)
