"""reduce across the lanes of a warp: each thread folds its own slots, then butterfly shuffles
over the lane-index bits a row is spread over; every lane of the row ends with the result.

Before (a warp sums rows of 256 f32, each lane holding 8 chunks of its row... here a [4, 256]
tile with 8 lanes per row: lanes differing in bits 0-2 share a row):

    "tile.reduce"(%s, %x) {fn = "sum", axis = 1, scope = "warp"}
        : (!tile.buf<[4, 1], f32, "local", S[(4, 8, 1):(1@laneid, 8@laneid, 1)]>,   (sketch)
           !tile.buf<[4, 256], f32, "local", S[(4, 8, 32):(8@laneid, 1@laneid, 1)]>) -> ()

After: 31 adds folding the 32 own slots pairwise, then for bit in (1, 2, 4):

    %o = nvvm.shfl.sync bfly %all, %v, bit, 31 : f32 -> f32       %v = arith.addf %v, %o

Needs every lane of the warp at the op (shfl.sync with a full mask) and a 32-bit dst type.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import nvvm

from tilemlir.dispatch.registry import predicate, register
from tilemlir.ir import emit
from tilemlir.lowering.cuda.predicates import full_active_lanes
from tilemlir.lowering.cuda.reduce import rows


@predicate("src_unreplicated")
def src_unreplicated(ctx):
    """src is not replicated (its copies would be counted twice). dst may be: the butterfly
    leaves the result in every lane of the row, and `rows` checks that each of dst's holders is
    one of them (a row statistic in the tile's column_vector layout)."""
    src = ctx.buffer("src")
    if src.layout.is_replicated():
        return f"replicated layout on SRC ({src.layout})"
    return None


@predicate("combinable")
def combinable(ctx):
    r = rows._cached(ctx)
    if r is None:
        return None
    if r.whole_rows:
        return "every thread holds whole rows (the thread variant folds them without shuffles)"
    return r.problem


@predicate("one_warp_per_row")
def one_warp_per_row(ctx):
    r = rows._cached(ctx)
    if r is None:
        return None
    if r.warps > 1:
        return f"each row is spread over {r.warps} warps (combined through shared memory)"
    return None


@predicate("word_sized")
def word_sized(ctx):
    dst = ctx.buffer("dst").elem
    if str(dst) in ("f32", "i32"):
        return None
    return f"shuffles move 32-bit words; dst holds {dst} (reduce into f32 or i32)"


def shuffle(fn: str, values: list[ir.Value], lane_mask: int) -> list[ir.Value]:
    """Butterfly over the bits of lane_mask, all values interleaved (independent shuffles in
    flight together)."""
    full, clamp = emit.const_i32(-1), emit.const_i32(31)
    for bit in range(5):
        if lane_mask & (1 << bit):
            others = [nvvm.shfl_sync(v.type, full, v, emit.const_i32(1 << bit), clamp,
                                     nvvm.ShflKind.bfly) for v in values]
            values = [rows.combine(fn, v, o) for v, o in zip(values, others)]
    return values


@register("reduce", name="warp_shuffle", priority=20,
          when=[rows.register_tiles, rows.rows_known, rows.types, word_sized, combinable, one_warp_per_row,
                full_active_lanes, src_unreplicated])
def lower_warp_shuffle(ctx):
    """Own slots folded, then shfl.sync.bfly over the lane bits each row is spread over."""
    r = rows._cached(ctx)
    fn = ctx.attr("fn")
    return lambda: rows.store_dst(ctx, r, shuffle(fn, rows.fold_own(ctx, r), r.lane_mask))
