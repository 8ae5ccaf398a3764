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

At scope "warpgroup" the 4 warps of each warpgroup combine their own rows while the CTA's other
warpgroups run other code (consumers of a warp-specialized kernel, each reducing its rows):

- warp ranks are those inside the warpgroup (the layouts' wid_in_wg), the thread index the
  one inside it (threadIdx % 128);
- the barrier is a named barrier of the warpgroup alone: warpgroup w of the CTA (threads 128w
  .. 128w + 127) takes `bar.sync 15 - w, 128`, so warpgroups 0..7 use ids 15..8 (kernels take
  their own named barriers from 1 up: hgemm_v6 1..consumers, the FlashAttention kernel 3 and
  4). The `warpgroup_barrier` predicate rejects a kernel that uses one of those ids for other
  threads or with another count (the same warpgroup syncing on its own id with 128 is fine);
- scratch is the warpgroup's own: the kernel passes each warpgroup a window of a shared buffer
  (`scratch=red[wg, :]` of a [warpgroups, rows x warps] buffer, a slice at the warpgroup's
  index). The `scratch` predicate rejects windows that differ inside a warpgroup or that it
  cannot prove apart between the warpgroups that may reach the op (a plain buffer is fine when
  only one warpgroup reaches it).

    "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1, scope = "warpgroup"}   (%w = %red[wg, :])
    ->  ... st.shared %v, [red + 32 wg + 4f + w]; bar.sync %id, 128; 4 x ld.shared; bar.sync %id, 128
        with %id = 15 - tid / 128
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, nvvm, scf

from tilemlir.analysis import barriers
from tilemlir.analysis import threads as reach
from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout import LayoutError
from tilemlir.lowering import accesses, addresses, banks
from tilemlir.lowering.cuda import threads
from tilemlir.lowering.cuda.predicates import full_active_lanes, no_replica, scope_in
from tilemlir.lowering.cuda.reduce import rows
from tilemlir.lowering.cuda.reduce.warp_shuffle import combinable, shuffle, word_sized

WARPGROUP = 128
# warpgroup w's named barrier: 15 - w (ids 15..8 for the 8 warpgroups of a 1024-thread CTA)
TOP_BARRIER = 15


@predicate("several_warps_per_row")
def several_warps_per_row(ctx):
    r = rows._cached(ctx)
    if r is None:
        return None
    if r.warps == 1 and not r.whole_rows:
        return "each row lies within one warp (shuffles alone combine it)"
    return None


def _warpgroups(ctx):
    """(value analysis, threads that may reach the op, their warpgroups) of a warpgroup-scope
    op, or raises Reject; once per op."""
    if "_warpgroups" not in ctx.__dict__:
        if ctx.block_size is None:
            raise Reject("the enclosing gpu.func declares no known_block_size, so the "
                         "warpgroups that reach the op (and their barriers) are unknown")
        analysis = reach.analysis_of(ctx.op)
        mask = reach.reaching_mask(ctx.op, analysis)
        groups = sorted({int(t) // WARPGROUP for t in np.flatnonzero(mask)})
        ctx.__dict__["_warpgroups"] = analysis, mask, groups
    return ctx.__dict__["_warpgroups"]


@predicate("warpgroup_barrier")
def warpgroup_barrier(ctx):
    """At warpgroup scope, the named barriers 15 - w the variant takes are the kernel's nowhere
    else (see the module docstring)."""
    if ctx.scope != "warpgroup":
        return None
    try:
        analysis, mask, _ = _warpgroups(ctx)
    except Reject as rejection:
        return rejection.reason
    ids = TOP_BARRIER - analysis.threads // WARPGROUP
    problems = barriers.clashes(ids, mask, WARPGROUP,
                                barriers.named_barrier_uses(ctx.func, analysis))
    if problems:
        return ("warpgroup w synchronises on named barrier 15 - w with 128 threads, but "
                + "; ".join(problems))
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
        per = " per warpgroup (each passes its own window)" if ctx.scope == "warpgroup" else ""
        problems.append(f"scratch has {buf.size} elements; {dst.size} rows x {r.warps} warps "
                        f"need {need}{per}")
    elif ctx.scope == "warpgroup" and not problems:
        problems += _apart(ctx, need)
    return "; ".join(problems) or None


def _apart(ctx, need: int) -> list[str]:
    """The warpgroups that may reach the op use disjoint parts of scratch, each one part."""
    try:
        analysis, mask, groups = _warpgroups(ctx)
        ref = windows.resolve(ctx.operand("scratch"))
    except (Reject, LayoutError) as err:
        return [getattr(err, "reason", str(err))]
    moved = windows.dynamic_offset_values(ref, analysis.values)
    if moved is None:
        coarse = all(analysis.granularity(v) >= WARPGROUP for _, _, v in ref.dynamic)
        if not coarse:
            return ["scratch is sliced at an offset that may differ between the threads of a "
                    "warpgroup (all of them must use one window)"]
        if len(groups) > 1:
            return [f"warpgroups {groups} may reach the op, but scratch's window offset cannot "
                    f"be computed per thread, so their windows cannot be shown apart (slice "
                    f"it by the warpgroup index, e.g. scratch=red[wg, :])"]
        return []
    moved = np.broadcast_to(np.asarray(moved, np.int64), mask.shape)
    used = _offsets(ref, np.arange(need))
    footprint = {}
    for g in groups:
        mine = moved[g * WARPGROUP:(g + 1) * WARPGROUP][mask[g * WARPGROUP:(g + 1) * WARPGROUP]]
        if (mine != mine[0]).any():
            return [f"scratch's window differs between the threads of warpgroup {g} (offsets "
                    f"{sorted(set(mine.tolist()))[:4]}): all of them must use one window"]
        footprint[g] = set((used + int(mine[0])).tolist())
    for i, g in enumerate(groups):
        for h in groups[i + 1:]:
            shared = footprint[g] & footprint[h]
            if shared:
                return [f"warpgroups {g} and {h} may both reach the op and their scratch "
                        f"windows overlap (element {min(shared)} of the shared buffer): give "
                        f"each warpgroup its own window, e.g. scratch=red[wg, :]"]
    return []


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
        plans = accesses.plan_accesses(ref, write), accesses.plan_accesses(ref, read)
    except LayoutError as err:
        raise Reject(f"scratch addresses: {err}")
    writers = (np.arange(r.threads) & r.lane_mask) == 0          # a lane per group writes
    banks.note(ref, write, 1, write=True, active=writers)
    banks.note(ref, read, 1, write=False)
    return plans


def _barrier(ctx):
    """A builder of the barrier between writing and reading the partials: bar.sync 0 at CTA
    scope; at warpgroup scope bar.sync 15 - w, 128 (its id computed once)."""
    if ctx.scope != "warpgroup":
        return nvvm.barrier0
    wg = threads.scope_index(WARPGROUP, ctx.block_size)
    barrier_id = emit.to_i32(TOP_BARRIER - wg if isinstance(wg, int)
                             else arith.subi(emit.const_index(TOP_BARRIER), wg))
    count = emit.const_i32(WARPGROUP)
    return lambda: nvvm.barrier(None, barrier_id=barrier_id, number_of_threads=count)


def _emit(ctx, r: rows.Rows, write, read):
    fn = ctx.attr("fn")
    values = shuffle(fn, rows.fold_own(ctx, r), r.lane_mask)
    ref = windows.resolve(ctx.operand("scratch"))
    base = addresses.storage(ref)
    t = threads.scope_thread_index(r.threads, ctx.block_size)
    writers = write.pointers(t, base)
    lane_bits = emit.to_i32(emit.band(t, r.lane_mask)) if r.lane_mask else None
    barrier = _barrier(ctx)
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
    barrier()
    readers = read.pointers(t, base)
    elem = ctx.buffer("dst").elem
    folded = []
    for i in range(len(r.dst_slots)):
        parts = [emit.load(elem, p) for p in readers[i * r.warps:(i + 1) * r.warps]]
        folded.append(rows.tree(fn, parts))
    barrier()
    rows.store_dst(ctx, r, folded)


@register("reduce", name="cross_warp", priority=10,
          when=[rows.register_tiles, rows.rows_known, rows.types, word_sized, combinable,
                several_warps_per_row, scope_in("cta", "warpgroup"), full_active_lanes,
                warpgroup_barrier, scratch, no_replica])
def lower_cross_warp(ctx):
    """Shuffles within each warp, partials through shared scratch between two barriers: bar.sync
    0 at CTA scope, bar.sync 15 - w, 128 for warpgroup w at warpgroup scope."""
    r = rows._cached(ctx)
    write, read = _plan(ctx, r)
    return lambda: _emit(ctx, r, write, read)
