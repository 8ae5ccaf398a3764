"""Compiled tile modules and callable kernels.

    exe = Executable.from_text(open("examples/mma_demo.mlir").read(), target="sm_90a")
    kernel = exe.kernel("gemm_16x8x16")
    kernel(a, b, d)                 # numpy arrays: copied to the GPU and back, then synchronised
    kernel(a_t, b_t, d_t)           # torch / cupy CUDA tensors: used in place, on the current stream
    kernel(a_t, b_t, d_t, stream=s) # ... or on stream s

Every call goes through MLIR's CUDA runtime (tilemlir.runtime.launch): the PTX is loaded once
per kernel, and each call launches it on the caller's stream without synchronising (numpy
arrays excepted). TMA tensor maps the kernel takes are encoded here, from the tensors' addresses.
"""

from __future__ import annotations

import ctypes
from mlir import ir

from tilemlir.ir.context import make_context
from tilemlir.pipeline import lower_to_ptx
from tilemlir.runtime import args as argcheck
from tilemlir.runtime import launch as rt
from tilemlir.runtime.signature import KernelSignature, kernels, with_tensor_maps
from tilemlir.runtime.streams import LEGACY_DEFAULT_STREAM, current_stream, stream_handle
from tilemlir.target import Target
from tilemlir.target.ptx import extract_ptx

_SCALAR_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "index": ctypes.c_int64,
                  "f32": ctypes.c_float, "f64": ctypes.c_double, "i1": ctypes.c_bool}


class Executable:
    """Kernels: their signatures and PTX."""

    def __init__(self, target: Target, signatures: dict[str, KernelSignature],
                 ptx: dict[str, str]):
        self.target = target
        self.signatures = signatures
        self.ptx = ptx

    @staticmethod
    def compile(module: ir.Module, target: Target, opt_level: int = 3,
                dump_dir: str | None = None) -> "Executable":
        """Lowers a tile module to PTX (in place)."""
        signatures = {s.name: s for s in kernels(module)}
        lower_to_ptx(module, target, opt_level, dump_dir)
        with_tensor_maps(signatures, module)
        return Executable(target, signatures, extract_ptx(module))

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


class Kernel:
    """A compiled kernel; calling it launches it (see the module docstring)."""

    def __init__(self, exe: Executable, sig: KernelSignature):
        self.executable = exe
        self.signature = sig
        self._functions: dict = {}         # device -> the kernel loaded there
        self._maps: dict = {}            # (record, address) -> encoded tensor map

    @property
    def name(self) -> str:
        return self.signature.name

    @property
    def ptx(self) -> str:
        return self.executable.ptx[self.signature.module]

    def __call__(self, *values, stream=None) -> None:
        """Launches on the tensors' current stream (or `stream`); numpy arrays are copied to
        the GPU and back, and the call then waits for the kernel."""
        self._run(values, stream, None)

    def launch(self, *values, stream=None, grid=None) -> None:
        """Like calling the kernel, with the grid overridable (for experiments)."""
        self._run(values, stream, grid)

    # ------------------------------------------------------------------ one launch path
    def _run(self, values, stream, grid) -> None:
        sig = self.signature
        if len(values) != len(sig.params):
            raise argcheck.ArgumentError(
                f"{self.name} takes {len(sig.params)} arguments "
                f"({', '.join(p.describe() for p in sig.params)}), got {len(values)}")
        buffers = [(p, v) for p, v in zip(sig.params, values) if p.kind == "buffer"]
        on_device = [argcheck.is_device_tensor(v) for _, v in buffers]
        if any(on_device) and not all(on_device):
            host = [p.name for (p, _), d in zip(buffers, on_device) if not d]
            raise argcheck.ArgumentError(
                f"{self.name}: mix of host arrays and CUDA tensors; "
                f"argument(s) {', '.join(repr(h) for h in host)} are not on the GPU")
        scalars = {i: argcheck.check_scalar(p, v)
                   for i, (p, v) in enumerate(zip(sig.params, values)) if p.kind == "scalar"}
        if buffers and all(on_device):
            addresses, device = {}, None
            for i, (p, v) in enumerate(zip(sig.params, values)):
                if p.kind != "buffer":
                    continue
                t = argcheck.check_device_tensor(p, v)
                if device is not None and t.device != device:
                    raise argcheck.ArgumentError(
                        f"argument '{p.name}' is on cuda:{t.device} but earlier arguments are "
                        f"on cuda:{device}")
                device, addresses[i] = t.device, t.address
            handle = stream_handle(stream) if stream is not None \
                else current_stream(buffers[0][1], device)
            self._launch(grid, handle, addresses, scalars, device)
            return
        arrays = {i: argcheck.check_host_array(p, v)
                  for i, (p, v) in enumerate(zip(sig.params, values)) if p.kind == "buffer"}
        handle = stream_handle(stream) if stream is not None else LEGACY_DEFAULT_STREAM
        addresses, device = {}, rt.bound_device()      # host arrays go to the runtime's device
        try:
            for i, array in arrays.items():
                addresses[i] = rt.copy_to_device(array)
            self._launch(grid, handle, addresses, scalars, device)
        finally:
            for i, address in addresses.items():
                rt.copy_back_and_free(arrays[i], address)

    def _launch(self, grid, stream: int, addresses: dict, scalars: dict, device: int) -> None:
        sig = self.signature
        params, _keep = self._params(addresses, scalars)
        function = self._functions.get(device)
        if function is None:
            function = self._functions[device] = rt.load_function(self.ptx, self.name, device)
        function.launch(grid or sig.grid, sig.block, sig.cluster, sig.shared_memory, stream,
                        params)

    def _params(self, addresses: dict, scalars: dict):
        """The kernel's argument array (pointers to each value) and what keeps them alive."""
        sig = self.signature
        keep = []
        for i, p in enumerate(sig.params):
            if p.kind == "buffer":
                keep.append(ctypes.c_void_p(addresses[i]))
            else:
                keep.append(_SCALAR_CTYPES[p.dtype](scalars[i]))
        for record in sig.tensor_maps:
            p = sig.params[record.param]
            key = (record, addresses[record.param])
            tmap = self._maps.get(key)
            if tmap is None:
                if len(self._maps) > 64:         # tensors come and go: keep the cache small
                    self._maps.clear()
                tmap = rt.encode_tensor_map(addresses[record.param], p.dtype, p.shape,
                                            record.box, record.swizzle)
                self._maps[key] = tmap
            keep.append(tmap)
        pointers = [k.address if isinstance(k, rt.TensorMap) else ctypes.addressof(k) for k in keep]
        return (ctypes.c_void_p * len(keep))(*pointers), keep
