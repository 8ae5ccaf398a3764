"""fill a tile with one value: registers slot by slot, memory in vector stores.

Before (zero a warp's m16n8 accumulator; zero a shared tile with the whole CTA):

    "tile.fill"(%acc, %zero) {scope = "warp"}
        : (!tile.buf<[16, 8], f32, "local", S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]>, f32) -> ()
    "tile.fill"(%c_smem, %zero16) {scope = "cta"}
        : (!tile.buf<[128, 64], f16, "shared", S[(128, 64):(64, 1)] o Sw<3,3,3>>, f16) -> ()

After: registers: each thread stores the value into every register slot the layout uses (its
own elements):

    llvm.store %zero, %acc[0] : f32   ...   llvm.store %zero, %acc[3] : f32

Memory: the chunks of copy/vector.py's cooperative copy (16 bytes along the last dim, thread t
taking chunks t, t + threads, ...), each stored from one splat vector; at thread scope the
calling thread stores every chunk itself:

    %v = splat %zero16 : vector<8xf16>
    llvm.store %v, %smem[swizzle(%t * 8) + 1024 j] {alignment = 16}            (j = 0..7)

The value must have the tile's element type; an 8-bit float tile's is a constant, stored as its
bits. A memory fill at warp, warpgroup or CTA scope is
cooperative, so every thread of the scope must reach it.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from tilemlir.dispatch.registry import predicate, register
from tilemlir.ir import emit, windows
from tilemlir.ir.types import is_f8
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.copy.vector import ChunkPlan, chunk_rounds, plan_chunks


@predicate("value_type")
def value_type(ctx):
    dst, value = ctx.buffer("dst"), ctx.operand("value")
    if value.type != dst.elem:
        return f"the value is {value.type} but the tile holds {dst.elem}"
    if is_f8(dst.elem) and _constant(value) is None:
        return f"an 8-bit float tile is filled with a constant; the value of {dst.elem} is computed"
    return None


def _constant(value):
    """The float an arith.constant `value` holds, or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.FloatAttr(owner.attributes["value"]).value


def _stored(ctx):
    """The value as stored: an 8-bit float as its bits (i8), as LLVM holds it."""
    value, elem = ctx.operand("value"), ctx.buffer("dst").elem
    return emit.stored_const(_constant(value), elem) if is_f8(elem) else value


@predicate("storage")
def storage(ctx):
    scope = ctx.buffer("dst").scope
    if scope in ("local", "shared", "global"):
        return None
    return f"fills registers, shared or global memory; dst is in {scope}"


@predicate("scope_reaches")
def scope_reaches(ctx):
    """Every thread of the scope reaches the op (it fills their registers, or their chunks)."""
    return None if ctx.scope == "thread" else ctx.narrowing_reason()


def _emit_registers(ctx, slots):
    dst = windows.resolve(ctx.operand("dst"))
    base = addresses.storage(dst)
    value = _stored(ctx)
    for s in slots:
        emit.store(value, addresses.slot_pointer(dst, s, base))


def _emit_memory(ctx, p: ChunkPlan):
    value = _stored(ctx)
    splat = value if p.n == 1 else emit.build_vector([value] * p.n)
    align = p.n * max(ctx.buffer("dst").elem_bits // 8, 1)

    def body(pointers):
        for ptr in pointers[0]:
            emit.store(splat, ptr, align=align)

    chunk_rounds(ctx, p, ("dst",), body)


@predicate("replicas_in_registers")
def replicas_in_registers(ctx):
    """A replicated layout is filled in registers (each holder of a copy fills its own); in
    memory its copies would be several writes of one element."""
    dst = ctx.buffer("dst")
    if dst.layout.is_replicated() and dst.scope != "local":
        return f"replicated layout on DST ({dst.layout}) in {dst.scope} memory"
    return None


@register("fill", name="elementwise", priority=0, when=[storage, value_type, scope_reaches,
                                                        replicas_in_registers])
def lower_fill(ctx):
    """Registers: every slot of the calling thread; memory: vector stores spread over the scope."""
    dst = windows.resolve(ctx.operand("dst"))
    if dst.scope == "local":
        fragments.register_ref(ctx, "dst")
        slots = np.unique(dst.layout.evaluate_all(dst.shape).get("m", np.zeros(1, np.int64)))
        return lambda: _emit_registers(ctx, [int(s) for s in slots])
    nthreads = 1 if ctx.scope == "thread" else ctx.scope_threads()
    p = plan_chunks(ctx, ("dst",), nthreads)
    return lambda: _emit_memory(ctx, p)
