"""copy_masked between global and shared memory: the cooperative copy (copy/vector.py) with a
test per chunk.

Before (the CTA loads a 128x64 tile of A at (m, k) into shared memory; past M or K the tile
holds zeros):

    "tile.copy_masked"(%a_smem, %a_window, %rows, %cols) {scope = "cta", fill = 0.0 : f16}
        : (!tile.buf<[128, 64], f16, "shared", ...>, !tile.buf<[128, 64], f16, "global", ...>,
           index, index) -> ()                                  (%rows = M - m, %cols = K - k)

After: the chunks of the cooperative copy, each with its window coordinates (chunk c of n
elements starts at flat element c * n) tested against the bounds. Into shared memory every chunk
is written, the fill where out of range; the load of an out-of-range chunk reads the buffer's
first element instead of its own address, so it cannot fault:

    %c = (j * 128 + %t) * 8      %in = (%c / 64 < %rows) && (%c % 64 < %cols)
    %v = llvm.load (select %in, %src_j, %A) : vector<8xf16>
    llvm.store (select %in, %v, splat 0.0), %dst_j

Into global memory an out-of-range chunk is not written (scf.if per chunk). A chunk is wholly
in or out: its width divides the last dim's bound as far as the value analysis knows (8 f16
when K is a multiple of 8, down to single elements).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from tilemlir.dispatch.registry import register
from tilemlir.ir import emit, windows
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import masks
from tilemlir.lowering.cuda.copy.vector import (MAX_BYTES, ChunkPlan, chunk_rounds, memory_to_memory,
                                                plan_chunks, vector_type)
from tilemlir.lowering.cuda.predicates import full_active_lanes, no_replica, same_shape_and_type


def plan(ctx, names, nthreads: int) -> ChunkPlan:
    """The cooperative copy's chunks, narrowed until each is wholly in or out of range."""
    elem_bytes = max(ctx.buffer("dst").elem_bits // 8, 1)
    n = masks.last_dim_width(ctx, max(MAX_BYTES // elem_bytes, 1))
    return plan_chunks(ctx, names, nthreads, max_bytes=n * elem_bytes)


def chunk_valid(ctx, p: ChunkPlan, j: int, t) -> ir.Value | None:
    """i1: chunk (round j, thread t) is in range (None: every chunk is)."""
    shape = ctx.buffer("dst").shape
    flat = emit.mul(emit.add(emit.mul(j, p.threads), t), p.n)
    return masks.in_range(ctx, masks.unravel(flat, shape))


def _emit(ctx, p: ChunkPlan):
    dst, src = ctx.buffer("dst"), ctx.buffer("src")
    vt = vector_type(p.n, dst.elem)
    align = p.n * max(dst.elem_bits // 8, 1)
    safe = addresses.storage(windows.resolve(ctx.operand("src")))
    fill = masks.fill_value(ctx, vt)

    def body(pointers, rounds, t):
        dst_ptrs, src_ptrs = pointers
        valid = [chunk_valid(ctx, p, j, t) for j in rounds]
        if dst.scope == "global":           # nothing out of range is written
            for ok, d, s in zip(valid, dst_ptrs, src_ptrs):
                _guarded(ok, lambda d=d, s=s: emit.store(emit.load(vt, s, align=align), d,
                                                         align=align))
            return
        values = [masks.guarded_load(vt, s, safe, ok, fill, align)
                  for ok, s in zip(valid, src_ptrs)]
        for value, d in zip(values, dst_ptrs):
            emit.store(value, d, align=align)

    chunk_rounds(ctx, p, ("dst", "src"), body, with_rounds=True)


def _guarded(valid, build) -> None:
    if valid is None:
        build()
        return
    branch = scf.IfOp(valid)
    with ir.InsertionPoint(branch.then_block):
        build()
        scf.yield_([])


@register("copy_masked", name="cooperative", priority=10,
          when=[memory_to_memory, same_shape_and_type, full_active_lanes, no_replica,
                masks.bounds_per_dim])
def lower_cooperative_masked(ctx):
    """Global/shared <-> global/shared in chunks of up to 16 bytes, each tested against the
    bounds: out of range, shared memory gets the fill and global memory is left alone."""
    p = plan(ctx, ("dst", "src"), ctx.scope_threads())
    return lambda: _emit(ctx, p)
