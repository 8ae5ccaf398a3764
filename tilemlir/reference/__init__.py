"""tilemlir.reference: an interpreter of tile IR on the CPU, in numpy, to check a kernel without a
GPU (`tilemlir.interpret`).

    import tilemlir
    d = np.zeros((16, 8), np.float32)
    tilemlir.interpret(gemm_16x8x16, a, b, d)        # fills d as the GPU would

It runs the module the kernel language produces (before dispatch), on small shapes:

- **Per thread, as written.** The threads of a CTA run in lockstep; every scalar (thread ids,
  indices, loads, loop-carried values) has one value per thread, and branches on thread ids run
  under a mask. A kernel that stages a register with a wrong index, or copies a wrong window,
  computes a wrong result here too.
- **Primitives at their scope, whole-tile.** copy, copy_async, cast, fill, iota, unary,
  binary, select, reduce, gemm and gemm_async run once per thread, warp, warpgroup or CTA (their
  scope) as one numpy operation on their tiles; each element is read from (and written to) the
  thread or the memory its operand's layout names — register fragments come from the lanes
  that hold them, shared tiles through their swizzle, tensor memory by lane and column; a
  register tile whose layout names no thread is each thread's own copy (a CTA reduction into
  it gives every thread the result). A collective primitive that only some threads of its
  scope reach is an error.
- **Synchronisation checked where it can be.** A CTA barrier must be reached by every thread;
  mbarriers count arrivals and transaction bytes (TMA loads complete their bytes, tcgen05.commit
  arrives), and a wait for a phase that has not completed is an error: on the GPU it would
  wait for something later in program order, or forever.
- T.print writes to `out` (default: stdout), per thread in thread order.

What it does not model: timing and asynchrony (every async copy and MMA completes when issued,
so a missing wait or fence is invisible, and so are races between threads), the memory
model (fences are no-ops), roles that hand work to each other through mbarriers or named
barriers in different branches (warp-specialized kernels: the branches run one after the other,
so the first wait for the other role is reported), thread-block clusters and CTA pairs, TMA's
out-of-bounds fill, rounding inside the tensor cores (products are summed in float32 by numpy),
the approximate instructions of `fast=True` math (numpy's precise functions run instead), a
reduction's scratch buffer (the lowering's; never read or written here),
and anything past the ops it knows (an unknown op is an error naming it and the Python line).
CTAs run one after another.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from tilemlir.ir import kernel_abi
from tilemlir.reference.machine import Machine
from tilemlir.reference.memory import InterpretError, Storage, buffer_type_of, elem_of

__all__ = ["InterpretError", "interpret"]


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


def interpret(kernel, *args, out=None) -> None:
    """Runs `kernel` (a @T.prim_func function, tile-IR text or an ir.Module) on the CPU with
    `args`: numpy arrays for buffer parameters (written in place, as a GPU call with numpy
    arrays writes them back; bfloat16 as uint16 bit patterns) and Python numbers for scalars.
    Raises InterpretError naming the kernel's Python line where the kernel cannot run as
    written (see the module docstring for what is modelled)."""
    module = _module(kernel)
    with module.context:
        func = _kernel_function(module)
        entry = func.regions[0].blocks[0]
        names = kernel_abi.read(func).param_names(len(entry.arguments))
        if len(args) != len(entry.arguments):
            raise TypeError(f"the kernel takes {len(entry.arguments)} arguments "
                            f"({', '.join(names)}), got {len(args)}")
        types = _buffer_types(func)
        buffers, scalars, outputs = {}, {}, []
        for i, (name, value, arg) in enumerate(zip(names, args, entry.arguments)):
            if i in types:
                t = types[i]
                elem = elem_of(t.elem)
                array = np.asarray(value)
                if array.dtype != elem.storage or array.size != t.size:
                    raise TypeError(f"argument '{name}' must be an array of {t.size} "
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
        Machine(func, buffers, scalars, out).run()
        for array, storage, elem in outputs:
            array[...] = storage.data.reshape(-1).view(elem.storage).reshape(array.shape)
