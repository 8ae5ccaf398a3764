"""Compiled tile modules and callable kernels.

    exe = Executable.from_text(open("examples/mma_demo.mlir").read(), target="sm_90a")
    kernel = exe.kernel("gemm_16x8x16")
    kernel(a, b, d)                 # numpy arrays: copied to the GPU and back, then synchronised
    kernel(a_t, b_t, d_t)           # torch / cupy CUDA tensors: used in place, on the current stream
    kernel(a_t, b_t, d_t, stream=s) # ... or on stream s
    kernel.n_regs, kernel.n_spills, kernel.shared_bytes, kernel.sass   # docs/resources.md

Every call goes through MLIR's CUDA runtime (tilemlir.runtime.launch): the PTX is loaded once
per kernel, and each call launches it on the caller's stream without synchronising (numpy
arrays excepted). TMA tensor maps the kernel takes are encoded here, from the tensors' addresses.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np
from mlir import ir

from tilemlir.analysis.alignment import GLOBAL_ALIGNMENT
from tilemlir.ir.context import make_context
from tilemlir.ir.source import parse_source
from tilemlir.pipeline import PipelineOptions, lower_to_ptx
from tilemlir.runtime import args as argcheck
from tilemlir.runtime import launch as rt
from tilemlir.runtime.signature import KernelSignature, kernels, with_tensor_maps
from tilemlir.runtime.streams import LEGACY_DEFAULT_STREAM, current_stream, stream_handle
from tilemlir.target import Target
from tilemlir.target.ptx import (ResourceUsage, assemble_verbose, disassemble, extract_ptx,
                                  parse_resource_usage, pick_usage)

# the fast path leaves a tensor that does not start on GLOBAL_ALIGNMENT bytes to the checked one
_MISALIGNED = GLOBAL_ALIGNMENT - 1
_SCALAR_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "index": ctypes.c_int64,
                  "f32": ctypes.c_float, "f64": ctypes.c_double, "i1": ctypes.c_bool}


class Executable:
    """Kernels: their signatures and PTX."""

    def __init__(self, target: Target, signatures: dict[str, KernelSignature],
                 ptx: dict[str, str]):
        self.target = target
        self.signatures = signatures
        self.ptx = ptx
        self._assembled: dict = {}       # module -> (cubin, ptxas -v messages), on first ask
        self._lock = threading.Lock()

    def assembled(self, module: str) -> tuple[bytes, str]:
        """(cubin, the messages of ptxas -v) of a gpu.module's PTX for the target chip, made
        once (ToolNotFound without ptxas)."""
        with self._lock:
            if module not in self._assembled:
                self._assembled[module] = assemble_verbose(self.ptx[module], self.target.chip)
            return self._assembled[module]

    @staticmethod
    def compile(module: ir.Module, options: PipelineOptions,
                dump_dir: str | None = None) -> "Executable":
        """Lowers a tile module to PTX (in place) with tile-to-ptx's `options`; `dump_dir`:
        see lower_to_ptx."""
        signatures = {s.name: s for s in kernels(module)}
        lower_to_ptx(module, options, dump_dir)
        with_tensor_maps(signatures, module)
        return Executable(options.target, signatures, extract_ptx(module))

    @staticmethod
    def from_text(text: str, target: str | Target = "sm_90a") -> "Executable":
        t = target if isinstance(target, Target) else Target(target)
        with make_context():
            return Executable.compile(parse_source(text), PipelineOptions(t))

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
        self._functions: dict = {}       # device -> the kernel loaded there
        self._launchers: dict = {}       # (device, grid) -> launch(stream, params, None, n)
        self._maps: dict = {}            # (record index, address, rows) -> tensor map
        self._local = threading.local()  # per thread: the argument block reused call after call
        self._torch_args = None          # what torch tensors the fast path accepts, or False
        self._dims_plan = None           # argcheck.DimsPlan of the run-time dims (first launch)

    @property
    def name(self) -> str:
        return self.signature.name

    @property
    def ptx(self) -> str:
        return self.executable.ptx[self.signature.module]

    # ------------------------------------------------------------------ resource figures
    # From ptxas -v and nvdisasm (found by tilemlir.target.ptx.find_cuda_tool: the [tools]
    # extra brings both), run on first use for the target chip and kept.
    @property
    def cubin(self) -> bytes:
        """The cubin ptxas makes of the kernel's module for the target chip."""
        return self.executable.assembled(self.signature.module)[0]

    @property
    def sass(self) -> str:
        """The SASS of `cubin` (nvdisasm)."""
        sass = getattr(self, "_sass", None)
        if sass is None:
            sass = self._sass = disassemble(self.cubin)
        return sass

    @property
    def resource_usage(self) -> ResourceUsage:
        """All that ptxas -v reports for this kernel (tilemlir.target.ptx.ResourceUsage)."""
        messages = self.executable.assembled(self.signature.module)[1]
        return pick_usage(parse_resource_usage(messages), self.name, messages)

    @property
    def n_regs(self) -> int:
        """Registers a thread (allocated per warp in steps of 8)."""
        return self.resource_usage.registers

    @property
    def n_spills(self) -> int:
        """4-byte registers spilled to local memory a thread (ptxas's spill-store bytes / 4):
        0 when nothing spills."""
        return -(-self.resource_usage.spill_stores // 4)

    @property
    def local_bytes(self) -> int:
        """Local memory a thread: its stack frame, spills included."""
        return self.resource_usage.stack

    @property
    def shared_bytes(self) -> int:
        """Shared memory a CTA: the dynamic shared memory each launch asks for plus any static
        shared memory ptxas reports."""
        return self.signature.shared_memory + self.resource_usage.shared

    def __call__(self, *values, stream=None) -> None:
        """Launches on the tensors' current stream (or `stream`); numpy arrays are copied to
        the GPU and back, and the call then waits for the kernel."""
        if stream is None and self._call_with_torch(values):
            return
        self._run(values, stream, None)

    def launch(self, *values, stream=None, grid=None) -> None:
        """Like calling the kernel, with the grid overridable (for experiments)."""
        if stream is None and grid is None and self._call_with_torch(values):
            return
        self._run(values, stream, grid)

    # ------------------------------------------------------------------ torch fast path
    def _call_with_torch(self, values) -> bool:
        """The common case, kept cheap: CUDA torch tensors of exactly the parameters' dtypes
        and shapes, and plain Python scalars, on torch's current stream. Anything else (or any
        mismatch) returns False and takes the checked path, which names what is wrong."""
        expected = self._torch_args
        if expected is None:
            expected = self._torch_args = _torch_expectations(self.signature)
        if not expected or len(values) != len(expected) - 1:
            return False
        tensor_type, raw_stream = expected[0]
        block = self._block()
        device = -1
        dims = leading = None       # run-time dims, and parameter -> a run-time leading extent
        for index, (value, want, slot) in enumerate(zip(values, expected[1:], block.slots)):
            if len(want) == 3:                             # a scalar: (int, lo, hi) or float
                kind, lo, hi = want
                if value.__class__ is not kind or (lo is not None and not lo <= value <= hi):
                    return False
                slot.value = value
                continue
            dtype, shape = want
            if value.__class__ is not tensor_type or value.dtype is not dtype \
                    or not value.is_cuda or not value.is_contiguous():
                return False
            if value.shape != shape:
                if shape.__class__ is not tuple:        # static: a torch.Size to match
                    return False
                dim, trailing = shape                   # a run-time leading extent
                got = value.shape
                if got[1:] != trailing or not 0 < got[0] <= argcheck.MAX_DIM:
                    return False
                if leading is None:
                    dims, leading = {}, {}
                if dim is not None:
                    if dims.setdefault(dim, got[0]) != got[0]:
                        return False
                leading[index] = got[0]
            where = value.get_device()
            if where != device:
                if device != -1:
                    return False
                device = where
            address = value.data_ptr()
            if not address or address & _MISALIGNED:   # the checked path names the problem
                return False
            slot.value = address
        if device == -1:
            return False
        grid = None
        if leading:
            try:
                grid = self._set_dims(block, {i: (rows,) for i, rows in leading.items()})
            except argcheck.ArgumentError:
                return False                            # the checked path names the problem
        block.leading = leading
        self._start(block, grid, raw_stream(device), device)
        return True

    def _set_dims(self, block: "_ArgumentBlock", shapes: dict) -> tuple | None:
        """The run-time dims into their hidden slots, from the buffers' leading extents
        (`shapes`: parameter index -> shape); returns the launch grid they give (None: the
        static one)."""
        sig = self.signature
        plan = self._dims_plan
        if plan is None:
            plan = self._dims_plan = argcheck.DimsPlan(sig)
        values = plan.values(shapes)
        for slot, name in zip(block.dims, sig.dims):
            slot.value = values[name]
        return plan.grid(values)

    def _block(self) -> "_ArgumentBlock":
        block = getattr(self._local, "block", None)
        if block is None:
            block = self._local.block = _ArgumentBlock(self.signature)
        return block

    # ------------------------------------------------------------------ one launch path
    def _run(self, values, stream, grid) -> None:
        sig = self.signature
        grid = tuple(grid) if grid is not None else None
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
            addresses, shapes, device = {}, {}, None
            for i, (p, v) in enumerate(zip(sig.params, values)):
                if p.kind != "buffer":
                    continue
                t = argcheck.check_device_tensor(p, v)
                if device is not None and t.device != device:
                    raise argcheck.ArgumentError(
                        f"argument '{p.name}' is on cuda:{t.device} but earlier arguments are "
                        f"on cuda:{device}")
                device, addresses[i], shapes[i] = t.device, t.address, tuple(t.shape)
            handle = stream_handle(stream) if stream is not None \
                else current_stream(buffers[0][1], device)
            self._launch(grid, handle, addresses, scalars, device, shapes)
            return
        arrays = {i: argcheck.check_host_array(p, v)
                  for i, (p, v) in enumerate(zip(sig.params, values)) if p.kind == "buffer"}
        shapes = {i: tuple(a.shape) for i, a in arrays.items()}
        handle = stream_handle(stream) if stream is not None else LEGACY_DEFAULT_STREAM
        addresses, device = {}, rt.bound_device()      # host arrays go to the runtime's device
        # A read-only array (flags.writeable False, e.g. over an immutable buffer) is never
        # written: its copy comes back into a scratch array, which must equal it.
        back = {i: a if a.flags.writeable else np.empty_like(a) for i, a in arrays.items()}
        try:
            for i, array in arrays.items():
                addresses[i] = rt.copy_to_device(array)
            self._launch(grid, handle, addresses, scalars, device, shapes)
        finally:
            for i, address in addresses.items():
                rt.copy_back_and_free(back[i], address)
        for i, array in arrays.items():
            if back[i] is not array and back[i].tobytes() != array.tobytes():
                name = sig.params[i].name
                raise argcheck.ArgumentError(
                    f"{self.name} wrote argument '{name}', a read-only array (its "
                    f"flags.writeable is False), which was left unchanged: pass a writable "
                    f"array for '{name}' (e.g. a copy: numpy.array(...))")

    def _launch(self, grid, stream: int, addresses: dict, scalars: dict, device: int,
                shapes: dict) -> None:
        block = self._block()
        for i, slot in enumerate(block.slots):
            slot.value = addresses[i] if i in addresses else scalars[i]
        block.leading = {}
        if self.signature.dims:
            dims_grid = self._set_dims(block, shapes)
            grid = grid if grid is not None else dims_grid
            block.leading = {i: shape[0] for i, shape in shapes.items()
                             if self.signature.params[i].leading}
        self._start(block, grid, stream, device)

    def _start(self, block: "_ArgumentBlock", grid, stream: int, device: int) -> None:
        """Encodes the tensor maps of this call's addresses (and run-time leading extents,
        block.leading: parameter -> extent), then launches."""
        sig = self.signature
        base = len(sig.params) + len(sig.dims)
        for j, record in enumerate(sig.tensor_maps):
            address = block.slots[record.param].value
            rows = block.leading.get(record.param) if block.leading else None
            key = (j, address, rows)             # (j: the record; hashing it costs a call)
            tmap = self._maps.get(key)
            if tmap is None:
                if len(self._maps) > 64:         # tensors come and go: keep the cache small
                    self._maps.clear()
                p = sig.params[record.param]
                shape = p.shape if rows is None else (rows,) + tuple(p.shape[1:])
                tmap = rt.encode_tensor_map(address, p.dtype, shape, record.box,
                                            record.swizzle)
                self._maps[key] = tmap
            block.maps[j] = tmap                 # alive until the launch has read it
            block.pointers[base + j] = tmap.address
        launch = self._launchers.get((device, grid))
        if launch is None:
            function = self._functions.get(device)
            if function is None:
                function = self._functions[device] = rt.load_function(self.ptx, self.name,
                                                                      device)
            launch = self._launchers[(device, grid)] = function.launcher(
                grid or sig.grid, sig.block, sig.cluster, sig.shared_memory)
        launch(stream, block.pointers, None, len(block.pointers))


class _ArgumentBlock:
    """ctypes storage for a launch's arguments and the array of pointers to them, reused call
    after call: the launch copies the values before it returns. One per kernel and thread."""

    def __init__(self, sig: KernelSignature):
        self.slots = [ctypes.c_void_p() if p.kind == "buffer" else _SCALAR_CTYPES[p.dtype]()
                      for p in sig.params]
        self.dims = [ctypes.c_int32() for _ in sig.dims]     # run-time dims, hidden
        self.leading: dict = {}          # this call's run-time leading extents, per parameter
        self.maps: list = [None] * len(sig.tensor_maps)
        self.pointers = (ctypes.c_void_p * (len(self.slots) + len(self.dims) + len(self.maps)))(
            *[ctypes.addressof(slot) for slot in self.slots + self.dims])


def _torch_expectations(sig: KernelSignature):
    """[(torch.Tensor, current raw stream), then per parameter (torch dtype, torch.Size) or, for
    a scalar, (int, lowest, highest) / (float, None, None)], or False where the fast path does not apply (torch not loaded,
    no buffer parameters, a dtype torch lacks)."""
    import sys
    torch = sys.modules.get("torch")
    raw_stream = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    if raw_stream is None or not any(p.kind == "buffer" for p in sig.params):
        return False
    expected = [(torch.Tensor, raw_stream)]
    for p in sig.params:
        if p.kind == "scalar":
            expected.append((float, None, None) if p.dtype.startswith("f")
                            else (int, *argcheck.INT_RANGES[p.dtype]))
            continue
        dtype = getattr(torch, argcheck.TORCH_DTYPE_NAMES.get(p.dtype, ""), None)
        if not isinstance(dtype, torch.dtype):
            return False
        if p.leading:      # (the dim it reads, or None for an expression; the other extents)
            from tilemlir.ir.kernel_abi import extent_dim
            expected.append((dtype, (extent_dim(p.leading), torch.Size(p.shape[1:]))))
        else:
            expected.append((dtype, torch.Size(p.shape)))
    return expected
