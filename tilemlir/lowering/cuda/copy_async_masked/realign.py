"""copy_async_masked global -> shared for 16-bit rows too narrowly aligned for cp.async (K odd,
say): each 16-byte chunk of the shared tile is read from the aligned 4-byte words around its
source (copy/realign.py, masked as copy_masked/realign.py: a word only where it holds an element
in range, zeros for the elements out of range) and stored whole, done at once like the
synchronous variant, instead of one 2-byte load and store per element.

After, per chunk of 8 elements (round j, thread t; coordinates c of its first element):

    %w_k = llvm.load (src_c - mid + 4 k) : i32         (k = 0..4, each where it holds an element
                                                         in range; else the buffer's start)
    %v = fshr(%w_(m+1), %w_m, 8 * mid) for m = 0..3, the elements out of range zeroed
    llvm.store %v, %dst_c {alignment = 16} : vector<8xf16>

The shared tile's chunks must be 16 bytes (its layout and swizzle allow them); the source's
need not be aligned at all.
"""

from __future__ import annotations

from tilemlir.dispatch.registry import Reject, register
from tilemlir.ir import emit, windows
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import masks
from tilemlir.lowering.cuda.copy.realign import RUN, check_realignable
from tilemlir.lowering.cuda.copy.vector import ChunkPlan, chunk_rounds, plan_chunks
from tilemlir.lowering.cuda.copy_async.cp_async import SIZES
from tilemlir.lowering.cuda.copy_masked.cooperative import plan as cooperative_plan
from tilemlir.lowering.cuda.copy_masked.realign import masked_run
from tilemlir.lowering.cuda.predicates import (copies, full_active_lanes, no_replica,
                                               same_shape_and_type)


def _plan(ctx) -> ChunkPlan:
    check_realignable(windows.resolve(ctx.operand("src")))
    nthreads = ctx.scope_threads()
    if cooperative_plan(ctx, ("dst", "src"), nthreads).n * 2 in SIZES:
        raise Reject("the chunks are at least 4 bytes: cp.async moves them")
    p = plan_chunks(ctx, ("dst", "src"), nthreads, unaligned="src")
    if p.n != RUN:
        raise Reject(f"the shared tile takes chunks of {p.n} elements, not {RUN} "
                     f"({p.narrowed or 'its last dim'})")
    return p


def _emit(ctx, p: ChunkPlan):
    shape = ctx.buffer("dst").shape
    elem = windows.resolve(ctx.operand("dst")).type.elem
    safe = addresses.storage(windows.resolve(ctx.operand("src")))

    def body(pointers, rounds, t):
        values = []
        for j, src in zip(rounds, pointers[1]):
            flat = emit.mul(emit.add(emit.mul(j, p.threads), t), p.n)
            coords = masks.unravel(flat, shape)
            values.append(emit.bitcast(emit.vector_type(RUN, elem),
                                       masked_run(ctx, coords, src, safe, elem)))
        for value, dst in zip(values, pointers[0]):
            emit.store(value, dst, align=RUN * 2)

    chunk_rounds(ctx, p, ("dst", "src"), body, with_rounds=True)


@register("copy_async_masked", name="realigned", priority=5,
          when=[copies("shared", "global", "a realigned load"), same_shape_and_type,
                full_active_lanes, no_replica, masks.bounds_per_dim])
def lower_realigned_masked(ctx):
    """Where cp.async cannot move the chunks (16-bit rows on 2 bytes): each 16-byte chunk of
    the shared tile read realigned from the aligned words around it and stored whole, at once
    (as complete as an async copy after its wait)."""
    p = _plan(ctx)
    return lambda: _emit(ctx, p)
