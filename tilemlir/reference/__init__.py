"""tilemlir.reference: an interpreter of tile IR on the CPU, in numpy, to check a kernel without a
GPU (`tilemlir.interpret`).

    import tilemlir
    d = np.zeros((16, 8), np.float32)
    tilemlir.interpret(gemm_16x8x16, a, b, d)        # fills d as the GPU would

It runs the module the kernel language produces (before dispatch), on small shapes:

- **Per thread, as written.** Every scalar (thread ids, indices, loads, loop-carried values)
  has one value per thread; threads that take different branches, or loops of different
  bounds, run them under masks. A kernel that stages a register with a wrong index, or copies
  a wrong window, computes a wrong result here too.
- **Roles at once** (tilemlir.reference.threads). The threads of a CTA run as strands in
  lockstep, which split where the threads diverge around an op that can block, and block in
  mbarrier waits, named barriers (bar.sync / bar.arrive / bar.red with any id and count), the
  CTA barrier, cluster_sync and setmaxnreg.inc (until the registers other warps' .dec gave
  back to the CTA cover it) until what they wait for has happened: the producer and
  consumer warpgroups of a warp-specialized kernel hand stages to each other as on the GPU.
  The CTAs of a thread-block cluster run together (multicast TMA loads, mbarriers of the
  peer through mapa, cluster_sync); clusters run one after another. A deadlock is an
  InterpretError naming, per group of threads, the Python line it waits at and what for.
- **Primitives at their scope, whole-tile.** copy, copy_async, their masked forms (elements
  past the bounds read the fill, and are not written to global memory), cast, fill, iota,
  unary, binary, select, reduce, gemm and gemm_async run once per thread, warp, warpgroup or
  CTA (their scope) as one numpy operation on their tiles; each element is read from (and
  written to) the thread or the memory its operand's layout names — register fragments come
  from the lanes that hold them, shared tiles through their swizzle, tensor memory by lane
  and column; a register tile whose layout names no thread is each thread's own copy (a CTA
  reduction into it gives every thread the result). A collective primitive waits for every
  thread of its scope; one that only some of them reach is reported.
- **Async work completes when issued**, and mbarriers count arrivals and transaction bytes
  (TMA loads complete theirs, tcgen05.commit arrives): a kernel that waits before it uses the
  work gets the GPU's values.
- **A race detector** (tilemlir.reference.races; `races=False` turns it off): shared-memory
  reads and writes that no barrier, mbarrier phase, TMA completion or wait_group orders are a
  RaceError naming both Python lines; so are registers of a gemm_async read or written before
  wgmma.wait_group retires it, and generic-proxy writes read by TMA stores or wgmma without a
  fence.proxy.async.
- T.print writes to `out` (default: stdout), per thread in thread order.

What it does not model: timing; the memory model beyond the ordering above (fences other than
fence.proxy.async are no-ops; races inside a warp, in global memory and in tensor memory are
not looked for; tcgen05's reads of shared memory count as the issuing warp's); CTA pairs
(cta_group=2); TMA's out-of-bounds fill; rounding inside the tensor cores (products are summed
in float32 by numpy); the approximate instructions of `fast=True` math (numpy's precise
functions run instead); a reduction's scratch buffer (the lowering's; never read or written
here); and anything past the ops it knows (an unknown op is an error naming it and the Python
line).
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from tilemlir.ir import kernel_abi
from tilemlir.ir.types import F8_NUMPY_DTYPES
from tilemlir.reference.machine import Machine
from tilemlir.reference.memory import InterpretError, Storage, buffer_type_of, elem_of
from tilemlir.reference.races import RaceError

__all__ = ["InterpretError", "RaceError", "interpret"]


def _module(kernel) -> ir.Module:
    from tilemlir.dsl.kernel import KernelFunction
    if isinstance(kernel, KernelFunction):
        return kernel.build()
    if isinstance(kernel, ir.Module):
        return kernel
    if isinstance(kernel, str):
        from tilemlir.ir.context import make_context
        from tilemlir.ir.source import parse_source
        with make_context():
            return parse_source(kernel)
    raise TypeError(f"cannot interpret a {type(kernel).__name__}: pass a @T.prim_func function, "
                    f"tile-IR text or an ir.Module")


def _kernel_function(module: ir.Module):
    found = []

    def visit(op):
        if op.name == "gpu.func" and "gpu.kernel" in op.attributes:
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    if len(found) != 1:
        raise InterpretError(f"the module holds {len(found)} kernels; the interpreter runs one")
    return found[0]


def _buffer_types(func) -> dict[int, object]:
    """Parameter index -> the buffer type its tile.global gives it."""
    args = list(func.regions[0].blocks[0].arguments)
    types = {}

    def visit(op):
        if op.name == "tile.global":
            for i, a in enumerate(args):
                if a == op.operands[0]:
                    types[i] = buffer_type_of(op.results[0].type)
        return ir.WalkResult.ADVANCE
    func.walk(visit)
    return types


def _run_time_dims(names, args, leading: dict[int, str]) -> dict[str, int]:
    """The run-time dims (T.dynamic), read off the leading extent of the arrays they size."""
    dims: dict[str, int] = {}
    for i, extent in leading.items():
        dim = kernel_abi.extent_dim(extent)
        if dim is None or i >= len(args):
            continue
        rows = np.shape(args[i])[0] if np.ndim(args[i]) else 0
        if dims.setdefault(dim, rows) != rows:
            raise TypeError(f"argument '{names[i]}' has {rows} rows, but {dim} is {dims[dim]} "
                            f"from an earlier argument")
    return dims


def interpret(kernel, *args, out=None, races: bool = True) -> None:
    """Runs `kernel` (a @T.prim_func function, tile-IR text or an ir.Module) on the CPU with
    `args`: numpy arrays for buffer parameters (written in place, as a GPU call with numpy
    arrays writes them back; bfloat16 as uint16 bit patterns; the 8-bit floats as ml_dtypes'
    float8_e4m3fn / float8_e5m2 arrays or uint8 bit patterns) and Python numbers for scalars.
    Raises InterpretError naming the kernel's Python line where the kernel cannot run as
    written, and RaceError (one) where it races (see the module docstring for what is
    modelled); races=False skips the race detector."""
    module = _module(kernel)
    with module.context:
        func = _kernel_function(module)
        entry = func.regions[0].blocks[0]
        declared = kernel_abi.read(func)
        names = declared.param_names(len(entry.arguments))
        hidden = dict((index, dim) for dim, index in declared.dims)   # run-time dims' params
        taken = len(entry.arguments) - len(hidden)
        if len(args) != taken:
            raise TypeError(f"the kernel takes {taken} arguments "
                            f"({', '.join(names[:taken])}), got {len(args)}")
        types = _buffer_types(func)
        leading = dict(declared.extents)
        dims = _run_time_dims(names, args, leading)
        buffers, scalars, outputs = {}, {}, []
        for index, dim in hidden.items():
            scalars[index] = dims[dim]
        for i, (name, value, arg) in enumerate(zip(names, args, entry.arguments)):
            if i in types:
                t = types[i]
                elem = elem_of(t.elem)
                array = np.asarray(value)
                if array.dtype == F8_NUMPY_DTYPES.get(elem.name):     # ml_dtypes' f8: its bits
                    array = array.view(np.uint8)
                size = t.size if i not in leading else \
                    kernel_abi.evaluate_extent(leading[i], dims) * (t.size // t.shape[0])
                if array.dtype != elem.storage or array.size != size:
                    raise TypeError(f"argument '{name}' must be an array of {size} "
                                    f"{elem.storage} ({t.describe()}), got {array.size} "
                                    f"{array.dtype}")
                data = np.ascontiguousarray(array).reshape(-1).view(np.uint8).reshape(1, -1)
                buffers[i] = Storage("global", 0, data=data.copy())
                outputs.append((array, buffers[i], elem))
            elif isinstance(arg.type, ir.Type) and str(arg.type) in ("i1", "i8", "i16", "i32",
                                                                     "i64", "index", "f16",
                                                                     "bf16", "f32", "f64"):
                if not isinstance(value, (int, float, np.number)):
                    raise TypeError(f"argument '{name}' must be a number, got "
                                    f"{type(value).__name__}")
                scalars[i] = value
            else:
                raise TypeError(f"parameter '{name}' of type {arg.type} is not used as a buffer "
                                f"nor a scalar the interpreter knows")
        Machine(func, buffers, scalars, out, races, dims).run()
        for array, storage, elem in outputs:
            array[...] = storage.data.reshape(-1).view(elem.storage).reshape(array.shape)
