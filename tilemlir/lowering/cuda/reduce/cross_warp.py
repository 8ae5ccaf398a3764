"""reduce across the warps of a CTA: fold own slots, shuffle within each warp, then one lane
per warp and row writes its partial to a shared scratch buffer; after bar.sync every thread
holding the row reads the partials of all its warps and folds them (the same order in every
thread, so all get the same bits); a second bar.sync lets the next reduction reuse scratch.

Before (a CTA of 4 warps sums a row of 4096 f32, 8-element chunks spread over lanes and warps;
every thread gets the sum):

    "tile.reduce"(%s, %x, %scratch) {fn = "sum", axis = 1, scope = "cta"}
        : (!tile.buf<[1, 1], f32, "local", S[(1, 1):(1, 1)]>,
           !tile.buf<[1, 4096], f32, "local", S[(1, 4, 4, 32, 8):(1, 8, 1@warpid, 1@laneid, 1)]>,
           !tile.buf<[32], f32, "shared", S[32:1]>) -> ()

After:

    31 adds, 5 x (shfl.sync.bfly + add)
    scf.if (lane & 31) == 0 { st.shared %v, scratch[warp] }
    bar.sync 0
    %p0..%p3 = ld.shared scratch[0..3]      %s = (p0 + p1) + (p2 + p3)
    bar.sync 0

scratch: a shared buffer of dst's element type with at least (dst elements) x (warps per row)
elements; partial (row f, warp rank w) goes to its element f * warps + w.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, nvvm, scf

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout import LayoutError
from tilemlir.lowering import accesses, addresses
from tilemlir.lowering.cuda import threads
from tilemlir.lowering.cuda.predicates import full_active_lanes, no_replica, scope_in
from tilemlir.lowering.cuda.reduce import rows
from tilemlir.lowering.cuda.reduce.warp_shuffle import combinable, shuffle, word_sized


@predicate("several_warps_per_row")
def several_warps_per_row(ctx):
    r = rows._cached(ctx)
    if r is None:
        return None
    if r.warps == 1 and not r.whole_rows:
        return "each row lies within one warp (shuffles alone combine it)"
    return None


@predicate("scratch")
def scratch(ctx):
    if ctx.operand("scratch") is None:
        return ("combining partials of several warps needs a shared-memory scratch buffer "
                "(pass scratch=, dst's element type, dst elements x warps per row)")
    buf, dst = ctx.buffer("scratch"), ctx.buffer("dst")
    problems = []
    if buf.scope != "shared":
        problems.append(f"scratch is in {buf.scope}, not shared memory")
    if buf.elem != dst.elem:
        problems.append(f"scratch holds {buf.elem} but dst holds {dst.elem}")
    r = rows._cached(ctx)
    need = dst.size * (r.warps if r is not None else 1)
    if r is not None and buf.size < need:
        problems.append(f"scratch has {buf.size} elements; {dst.size} rows x {r.warps} warps "
                        f"need {need}")
    return "; ".join(problems) or None


def _offsets(ref, table):
    """The scratch offsets of flat element indices `table` (one per thread)."""
    pre = windows.static_offsets(ref).reshape(-1)
    return pre[table]


def _plan(ctx, r: rows.Rows):
    ref = windows.resolve(ctx.operand("scratch"))
    write = [_offsets(ref, r.owner[:, i] * r.warps + r.warp_rank[:, i])
             for i in range(len(r.dst_slots))]
    read = [_offsets(ref, r.owner[:, i] * r.warps + j)
            for i in range(len(r.dst_slots)) for j in range(r.warps)]
    try:
        return accesses.plan_accesses(ref, write), accesses.plan_accesses(ref, read)
    except LayoutError as err:
        raise Reject(f"scratch addresses: {err}")


def _emit(ctx, r: rows.Rows, write, read):
    fn = ctx.attr("fn")
    values = shuffle(fn, rows.fold_own(ctx, r), r.lane_mask)
    ref = windows.resolve(ctx.operand("scratch"))
    base = addresses.storage(ref)
    t = threads.scope_thread_index(r.threads, ctx.block_size)
    writers = write.pointers(t, base)
    lane_bits = emit.to_i32(emit.band(t, r.lane_mask)) if r.lane_mask else None
    if lane_bits is None:
        for v, p in zip(values, writers):
            emit.store(v, p)
    else:
        first = arith.cmpi(arith.CmpIPredicate.eq, lane_bits, emit.const_i32(0))
        branch = scf.IfOp(first)
        with ir.InsertionPoint(branch.then_block):
            for v, p in zip(values, writers):
                emit.store(v, p)
            scf.yield_([])
    nvvm.barrier0()
    readers = read.pointers(t, base)
    elem = ctx.buffer("dst").elem
    folded = []
    for i in range(len(r.dst_slots)):
        parts = [emit.load(elem, p) for p in readers[i * r.warps:(i + 1) * r.warps]]
        folded.append(rows.tree(fn, parts))
    nvvm.barrier0()
    rows.store_dst(ctx, r, folded)


@register("reduce", name="cross_warp", priority=10,
          when=[rows.register_tiles, rows.rows_known, rows.types, word_sized, combinable, several_warps_per_row, scope_in("cta"),
                full_active_lanes, scratch, no_replica])
def lower_cross_warp(ctx):
    """Shuffles within each warp, partials through shared scratch between two bar.sync 0."""
    r = rows._cached(ctx)
    write, read = _plan(ctx, r)
    return lambda: _emit(ctx, r, write, read)
