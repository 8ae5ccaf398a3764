"""copy_async_masked global -> shared with cp.async's zero fill (sm_80+).

Before (the CTA starts loading a 128x64 tile of A at (m, k); past M or K it reads zeros):

    "tile.copy_async_masked"(%a_smem, %a_window, %rows, %cols) {scope = "cta"}
        : (!tile.buf<[128, 64], f16, "shared", ...>, !tile.buf<[128, 64], f16, "global", ...>,
           index, index) -> ()                                  (%rows = M - m, %cols = K - k)

After: the chunks of the cp.async copy (copy_async/cp_async.py), each with its window
coordinates tested against the bounds (copy_masked/cooperative.py); cp.async copies its
source-size operand's bytes and zero-fills the rest of the chunk, so an out-of-range chunk
copies 0 bytes (from the buffer's first element, an address that cannot fault):

    %in = (%c / 64 < %rows) && (%c % 64 < %cols)
    nvvm.cp.async.shared.global %dst_j, (select %in, %src_j, %A), 16, cache = cg,
                                (select %in, 16, 0)

Where the last dim's bound does not divide into whole chunks (a row of odd length, say) but
the addresses allow them, chunks stay whole and the one a bound cuts copies only its bytes in
range (the source size, clamp(bound - column, 0, n) elements), the rest zero-filled, rather
than narrowing every chunk (below 4 bytes cp.async cannot go at all: the copy would be done
synchronously, every element of it in a register at once).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import masks
from tilemlir.lowering.cuda.copy.vector import MAX_BYTES, ChunkPlan, chunk_rounds, plan_chunks
from tilemlir.lowering.cuda.copy_async.cp_async import SIZES
from tilemlir.lowering.cuda.copy_masked.cooperative import (chunk_valid, lower_cooperative_masked,
                                                          plan)
from tilemlir.lowering.cuda.predicates import (copies, full_active_lanes, no_replica,
                                               same_shape_and_type, target_supports)


def _partial_plan(ctx) -> ChunkPlan | None:
    """The chunks as wide as the addresses allow, when the last dim's bound alone (no lower
    bound there) would narrow them: each cut chunk then copies its bytes in range."""
    last = len(ctx.buffer("dst").shape) - 1
    if last not in masks.tested_dims(ctx) or last in masks.tested_lower_dims(ctx):
        return None
    elem_bytes = max(ctx.buffer("dst").elem_bits // 8, 1)
    widest = max(MAX_BYTES // elem_bytes, 1)
    if masks.last_dim_width(ctx, widest) == widest:
        return None
    p = plan_chunks(ctx, ("dst", "src"), ctx.scope_threads())
    if p.n * elem_bytes not in SIZES or ctx.buffer("dst").shape[-1] % p.n:
        return None
    return p


def _partial_bytes(ctx, p: ChunkPlan, j: int, t) -> ir.Value:
    """i32: the bytes of chunk (round j, thread t) in range: 0 unless its other dims are in
    range, else its elements below the last dim's bound (at most the chunk's)."""
    shape = ctx.buffer("dst").shape
    flat = emit.mul(emit.add(emit.mul(j, p.threads), t), p.n)
    coords = masks.unravel(flat, shape)
    last = len(shape) - 1
    left = arith.subi(masks.bound_values(ctx)[last], emit.as_index(coords[last]))
    left = arith.minsi(arith.maxsi(left, emit.const_index(0)), emit.const_index(p.n))
    elem_bytes = max(ctx.buffer("dst").elem_bits // 8, 1)
    nbytes = arith.index_cast(emit.i32(), emit.mul(left, elem_bytes))
    others = masks.in_range(ctx, coords, skip_last=True)
    if others is None:
        return nbytes
    return arith.select(others, nbytes, emit.const(0, emit.i32()))


def _emit(ctx, p: ChunkPlan, size: int, partial: bool = False):
    modifier = nvvm.LoadCacheModifierKind.CG if size == 16 else nvvm.LoadCacheModifierKind.CA
    safe = addresses.storage(windows.resolve(ctx.operand("src")))

    def body(pointers, rounds, t):
        for j, dst, src in zip(rounds, *pointers):
            if partial:
                nbytes = _partial_bytes(ctx, p, j, t)
                some = arith.cmpi(arith.CmpIPredicate.sgt, nbytes, emit.const(0, emit.i32()))
                nvvm.cp_async_shared_global(dst, llvm.select(some, src, safe), size, modifier,
                                            cp_size=nbytes)
                continue
            valid = chunk_valid(ctx, p, j, t)
            if valid is None:
                nvvm.cp_async_shared_global(dst, src, size, modifier)
                continue
            source = llvm.select(valid, src, safe)
            nbytes = arith.select(valid, emit.const(size, emit.i32()), emit.const(0, emit.i32()))
            nvvm.cp_async_shared_global(dst, source, size, modifier, cp_size=nbytes)

    chunk_rounds(ctx, p, ("dst", "src"), body, with_rounds=True)


@register("copy_async_masked", name="cp_async", priority=10,
          when=[copies("shared", "global", "cp.async"), same_shape_and_type, full_active_lanes,
                no_replica, target_supports("cp_async"), masks.bounds_per_dim])
def lower_cp_async_masked(ctx):
    """cp.async per chunk (16, 8 or 4 bytes), source size 0 for chunks out of range (and
    the bytes in range for a chunk the last dim's bound cuts, where that bound does not
    divide into whole chunks)."""
    partial = _partial_plan(ctx)
    if partial is not None:
        size = partial.n * max(ctx.buffer("dst").elem_bits // 8, 1)
        return lambda: _emit(ctx, partial, size, partial=True)
    p = plan(ctx, ("dst", "src"), ctx.scope_threads())
    size = p.n * max(ctx.buffer("dst").elem_bits // 8, 1)
    if size not in SIZES:
        why = p.narrowed or "the bounds allow no wider chunks"
        raise Reject(f"chunks of {size} bytes: cp.async moves 4, 8 or 16 ({why})")
    return lambda: _emit(ctx, p, size)


@register("copy_async_masked", name="synchronous", priority=0,
          when=[copies("shared", "global", "a masked load"), same_shape_and_type,
                full_active_lanes, no_replica, masks.bounds_per_dim])
def lower_synchronous_masked(ctx):
    """Where cp.async cannot move the chunks (rows aligned to fewer than 4 bytes, a chip
    without cp.async): the masked cooperative load (copy_masked), done at once, which is as
    complete as an async copy after its wait."""
    return lower_cooperative_masked(ctx)
