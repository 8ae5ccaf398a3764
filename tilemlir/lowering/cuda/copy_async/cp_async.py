"""copy_async global -> shared with cp.async (sm_80+): the cooperative copy without registers.

Before (the CTA starts copying a 128x64 tile of A into a 128B-swizzled shared stage):

    "tile.copy_async"(%a_smem, %a_window) {scope = "cta"}
        : (!tile.buf<[128, 64], f16, "shared", S[(128, 64):(64, 1)] o Sw<3,3,3>>,
           !tile.buf<[128, 64], f16, "global", S[(128, 64):(K, 1)]>) -> ()   (dynamic m, k)
    "tile.async_commit"() {kind = "cp_async"}
    ...
    "tile.async_wait"() {kind = "cp_async", pending = 0}

After: the chunks of copy/vector.py's cooperative copy (16 bytes along the last dim, thread t
of the 128 taking chunks t, t + 128, ...), each one cp.async; the commit and the wait stay
separate ops (lowered in sync.py), so that stages can overlap:

    %g = (m * K + k) + (%t / 8) * K + (%t % 8) * 8       %s = swizzle(%t * 8)
    nvvm.cp.async.shared.global %smem[%s + 1024 j], %A[%g + 16 j K], 16, cache = cg
                                                                               (j = 0..7)

16-byte chunks use .cg (bypassing L1, as tiles that are reused live in shared memory); where an
alignment allows only 8 or 4 bytes, .ca (the only form for those sizes). Chunks narrower than
4 bytes, and copies tracked by a barrier operand (TMA's business), are rejected.
"""

from __future__ import annotations

from mlir.dialects import nvvm

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.lowering.cuda.copy.vector import ChunkPlan, chunk_rounds, plan_chunks
from tilemlir.lowering.cuda.predicates import (copies, full_active_lanes, inside_buffers, no_replica,
                                               same_shape_and_type, target_supports)

SIZES = (4, 8, 16)


@predicate("no_barrier")
def no_barrier(ctx):
    if ctx.operand("barrier") is None:
        return None
    return ("cp.async completes through tile.async_commit / tile.async_wait groups, not a "
            "barrier operand")


def _emit(ctx, p: ChunkPlan, size: int):
    modifier = nvvm.LoadCacheModifierKind.CG if size == 16 else nvvm.LoadCacheModifierKind.CA

    def body(pointers):
        for dst, src in zip(*pointers):
            nvvm.cp_async_shared_global(dst, src, size, modifier)

    chunk_rounds(ctx, p, ("dst", "src"), body)


@register("copy_async", name="cp_async", priority=10,
          when=[copies("shared", "global", "cp.async"), no_barrier, same_shape_and_type,
                full_active_lanes, no_replica, target_supports("cp_async"), inside_buffers])
def lower_cp_async(ctx):
    """cp.async.cg.shared.global 16 (or .ca 8 / 4) per chunk, spread over the scope's threads."""
    p = plan_chunks(ctx, ("dst", "src"), ctx.scope_threads())
    size = p.n * max(ctx.buffer("dst").elem_bits // 8, 1)
    if size not in SIZES:
        raise Reject(f"cp.async moves 4, 8 or 16 bytes; these chunks are {size} bytes "
                     f"({p.narrowed or 'the rows are that short'})")
    return lambda: _emit(ctx, p, size)
