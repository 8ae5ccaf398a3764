"""copy between registers and memory, element by element, as the register layout distributes it.

Before (a warp loads its m16n8k16 A fragment from global memory):

    "tile.copy"(%a_frag, %a_global) {scope = "warp"}
        : (!tile.buf<[16, 16], f16, "local", S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]>,
           !tile.buf<[16, 16], f16, "global", S[(16, 16):(16, 1)]>) -> ()

After: for each register slot s of the calling thread, the logical element (m, k) it holds is
computed from the thread's lane (the layout inverted on its thread axes), then

    %v = llvm.load (gep %a_global_storage, m * 16 + k)   ->   llvm.store %v, (gep %a_regs, s)

Threads a layout gives no elements (lanes past a partial lane range) skip the copy under an
scf.if. A replicated register layout (a row vector every thread of a row-broadcast holds, say)
can be loaded: each holder of a copy loads it. This is the fallback for any register fragment; faster copies (ldmatrix, vectors) are
separate variants with higher priority.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout import LayoutError
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda.predicates import inside_buffers, same_shape_and_type
from tilemlir.lowering.cuda.threads import ThreadEnv, owned_elements, thread_iterators


def register_side(ctx):
    """('dst' or 'src' held in registers, the other operand), or None."""
    dst, src = ctx.buffer("dst"), ctx.buffer("src")
    if dst.scope == "local" and src.scope in ("global", "shared"):
        return "dst", "src"
    if src.scope == "local" and dst.scope in ("global", "shared"):
        return "src", "dst"
    return None


@predicate("register_and_memory")
def register_and_memory(ctx):
    if register_side(ctx) is None:
        return (f"needs one operand in registers and the other in global or shared memory; "
                f"dst is in {ctx.buffer('dst').scope}, src in {ctx.buffer('src').scope}")
    return None


@predicate("scope_reaches")
def scope_reaches(ctx):
    """Every thread the register layout names takes part (else some registers stay unwritten)."""
    if ctx.scope == "thread":
        return None
    return ctx.narrowing_reason()


def _emit(ctx, reg_name: str, mem_name: str):
    reg = windows.resolve(ctx.operand(reg_name))
    mem = windows.resolve(ctx.operand(mem_name))
    env = ThreadEnv()
    # A replicated register layout is loaded by every holder of a copy (storing one is
    # refused: thread_iterators accepts replicas only for loads).
    owned = owned_elements(reg.layout, reg.shape, env, replicas=reg_name == "dst")
    reg_base, mem_base = addresses.storage(reg), addresses.storage(mem)
    elem = reg.type.elem

    def body():
        for e in owned.elements:
            reg_ptr = addresses.slot_pointer(reg, e.slot, reg_base)
            mem_ptr = addresses.element_pointer(mem, e.coord, mem_base)
            src_ptr, dst_ptr = (mem_ptr, reg_ptr) if reg_name == "dst" else (reg_ptr, mem_ptr)
            emit.store(emit.load(elem, src_ptr), dst_ptr)

    if owned.guard is None:
        body()
    else:
        branch = scf.IfOp(owned.guard)
        with ir.InsertionPoint(branch.then_block):
            body()
            scf.yield_([])


@register("copy", name="elementwise", priority=0,
          when=[register_and_memory, same_shape_and_type, scope_reaches, inside_buffers])
def lower_elementwise(ctx):
    """Each thread moves the elements its register layout gives it, one scalar at a time."""
    reg_name, _ = register_side(ctx)
    reg = ctx.buffer(reg_name)
    try:
        reg.layout.group(tuple(reg.shape))
        thread_iterators(reg.layout, replicas=reg_name == "dst")
    except LayoutError as err:
        raise Reject(str(err))
    mem_name = "src" if reg_name == "dst" else "dst"
    return lambda: _emit(ctx, reg_name, mem_name)
