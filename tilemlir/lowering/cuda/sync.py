"""Synchronisation and tensor-memory management: one variant each, gated by the target.

These ops map 1:1 to NVVM (tile.cta_sync -> bar.sync 0, tile.elect_sync -> elect.sync, ...).
They are dispatched like the tile primitives so that an instruction the chip lacks becomes a
located diagnostic instead of an LLVM abort, and so that the tile IR stays target-neutral.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, llvm, nvvm, scf

from tilemlir.analysis.threads import scope_threads
from tilemlir.analysis.values import BAR_RED_OR
from tilemlir.dispatch.registry import Predicate, predicate, register
from tilemlir.ir import emit
from tilemlir.lowering.cuda.predicates import target_supports
from tilemlir.target import registers_per_thread


def _cta_group(ctx):
    return ir.Attribute.parse(f"#nvvm.cta_group<cta_{ctx.attr('cta_group')}>")


_cta_group_ok = Predicate("cta_group", lambda ctx: None if ctx.attr("cta_group") in (1, 2)
                          else f"cta_group must be 1 or 2, got {ctx.attr('cta_group')}")


@register("cta_sync", name="bar_sync", priority=0)
def lower_cta_sync(ctx):
    """bar.sync 0: every thread of the CTA."""
    return lambda: nvvm.barrier0()


@register("elect_sync", name="elect_sync", priority=0, when=[target_supports("elect_sync")])
def lower_elect_sync(ctx):
    """elect.sync: true in one active lane of the warp."""
    return lambda: [nvvm.elect_sync(emit.i1())]


@register("fence", name="fence", priority=0, when=[target_supports("fence_proxy_async")])
def lower_fence(ctx):
    """fence.proxy.async.shared::cta or fence.mbarrier_init.release.cluster."""
    kind = ctx.attr("kind")

    def build():
        if kind == "proxy_async_shared":
            nvvm.fence_proxy(ir.Attribute.parse("#nvvm.proxy_kind<async.shared>"),
                             space=ir.Attribute.parse("#nvvm.shared_space<cta>"))
        else:
            nvvm.fence_mbarrier_init()
    return build


@register("mbarrier_init", name="mbarrier", priority=0, when=[target_supports("mbarrier")])
def lower_mbarrier_init(ctx):
    """mbarrier.init.shared.b64 [bar], count."""
    return lambda: nvvm.mbarrier_init(ctx.operand("barrier"), ctx.operand("count"))


def _remote(barrier: ir.Value) -> bool:
    """A shared::cluster pointer (tile.mapa): the barrier of another CTA of the cluster."""
    return barrier.type == emit.ptr(7)


_cluster_target = Predicate("cluster_target", lambda ctx: ctx.target.require("clusters")
                           if _remote(ctx.operand("barrier")) or ctx.attr("scope") == "cluster"
                           else None)


@register("mbarrier_arrive", name="mbarrier", priority=0,
          when=[target_supports("mbarrier"), _cluster_target])
def lower_mbarrier_arrive(ctx):
    """mbarrier.arrive.shared.b64 (the returned state is dropped), .release.cluster with scope
    "cluster"; on a peer CTA's barrier (a shared::cluster pointer)
    mbarrier.arrive.release.{cta,cluster}.shared::cluster.b64, which returns no state."""
    barrier = ctx.operand("barrier")
    scope = {"cta": None, "cluster": nvvm.MemScopeKind.CLUSTER}[ctx.attr("scope")]
    if _remote(barrier):
        return lambda: nvvm.mbarrier_arrive(None, barrier, scope=scope or nvvm.MemScopeKind.CTA)
    return lambda: nvvm.mbarrier_arrive(emit.i64(), barrier, scope=scope)


@register("mbarrier_arrive_expect_tx", name="mbarrier", priority=0,
          when=[target_supports("mbarrier_try_wait")])
def lower_mbarrier_arrive_expect_tx(ctx):
    """mbarrier.arrive.expect_tx: arrive and expect `bytes` of asynchronous transactions."""
    return lambda: nvvm.mbarrier_arrive_expect_tx(
        None, ctx.operand("barrier"), ctx.operand("bytes"))


_WAIT_TICKS = 0x989680        # suspend-time hint of each try_wait, in ns


@register("mbarrier_wait", name="try_wait_parity", priority=0,
          when=[target_supports("mbarrier_try_wait"),
                Predicate("scope_target", lambda ctx: ctx.target.require("clusters")
                          if ctx.attr("scope") == "cluster" else None)])
def lower_mbarrier_wait(ctx):
    """A loop of mbarrier.try_wait.parity until the phase of that parity has completed
    (.acquire.cta); with scope "cluster" .acquire.cluster, which synchronizes with the
    release.cluster arrivals of other CTAs' threads."""
    barrier, phase = ctx.operand("barrier"), ctx.operand("phase")
    if ctx.attr("scope") != "cluster":
        return lambda: nvvm.mbarrier_try_wait_parity(barrier, phase, emit.const_i32(_WAIT_TICKS))

    def build():
        loop = scf.WhileOp([], [])
        with ir.InsertionPoint(loop.before.blocks.append()):
            done = nvvm.mbarrier_try_wait(emit.i1(), barrier, phase,
                                          ticks=emit.const_i32(_WAIT_TICKS),
                                          scope=nvvm.MemScopeKind.CLUSTER)
            scf.condition(arith.xori(done, emit.const(1, emit.i1())), [])
        with ir.InsertionPoint(loop.after.blocks.append()):
            scf.yield_([])
    return build


@register("tmem_alloc", name="tcgen05", priority=0, when=[target_supports("tcgen05"), _cta_group_ok])
def lower_tmem_alloc(ctx):
    """tcgen05.alloc: `ncols` TMEM columns, address written to shared memory."""
    ncols = ctx.attr("ncols")

    def build():
        nvvm.tcgen05_alloc(ctx.operand("dst"), emit.const_i32(ncols), group=_cta_group(ctx))
    return build


@register("tmem_relinquish", name="tcgen05", priority=0,
          when=[target_supports("tcgen05"), _cta_group_ok])
def lower_tmem_relinquish(ctx):
    """tcgen05.relinquish_alloc_permit."""
    return lambda: nvvm.tcgen05_relinquish_alloc_permit(group=_cta_group(ctx))


@register("tmem_dealloc", name="tcgen05", priority=0,
          when=[target_supports("tcgen05"), _cta_group_ok])
def lower_tmem_dealloc(ctx):
    """tcgen05.dealloc."""
    ncols = ctx.attr("ncols")

    def build():
        # NVVM takes the TMEM address as a tensor-memory (addrspace 6) pointer.
        taddr = llvm.inttoptr(emit.ptr(6), ctx.operand("address"))
        nvvm.tcgen05_dealloc(taddr, emit.const_i32(ncols), group=_cta_group(ctx))
    return build


@register("tcgen05_commit", name="tcgen05", priority=0,
          when=[target_supports("tcgen05"), _cta_group_ok])
def lower_tcgen05_commit(ctx):
    """tcgen05.commit: the barrier tracks completion of this thread's prior tcgen05 ops
    (.multicast::cluster with a mask: the barrier of every CTA in the mask)."""
    def build():
        nvvm.tcgen05_commit(ctx.operand("barrier"), multicast_mask=ctx.operand("multicast"),
                            group=_cta_group(ctx))
    return build


@register("tcgen05_wait", name="tcgen05", priority=0, when=[target_supports("tcgen05")])
def lower_tcgen05_wait(ctx):
    """tcgen05.wait::ld / tcgen05.wait::st."""
    kind = {"ld": "load", "st": "store"}[ctx.attr("kind")]
    return lambda: nvvm.tcgen05_wait(ir.Attribute.parse(f"#nvvm.tcgen05_wait<{kind}>"))


@register("tcgen05_fence", name="tcgen05", priority=0, when=[target_supports("tcgen05")])
def lower_tcgen05_fence(ctx):
    """tcgen05.fence::before_thread_sync / tcgen05.fence::after_thread_sync."""
    kind = {"before_thread_sync": nvvm.Tcgen05FenceKind.BEFORE_THREAD_SYNC,
            "after_thread_sync": nvvm.Tcgen05FenceKind.AFTER_THREAD_SYNC}[ctx.attr("kind")]
    return lambda: nvvm.tcgen05_fence(kind)


@register("cluster_ctarank", name="sreg", priority=0, when=[target_supports("clusters")])
def lower_cluster_ctarank(ctx):
    """%cluster_ctarank."""
    return lambda: [nvvm.read_ptx_sreg_cluster_ctarank(emit.i32())]


@register("mapa", name="mapa", priority=0, when=[target_supports("clusters")])
def lower_mapa(ctx):
    """mapa.shared::cluster: this CTA's shared address seen in the CTA of another rank."""
    def build():
        pointer = ctx.operand("pointer")
        if pointer.type == emit.ptr():
            pointer = llvm.addrspacecast(emit.ptr(3), pointer)
        return [nvvm.mapa(emit.ptr(7), pointer, ctx.operand("rank"))]
    return build


@register("cluster_sync", name="barrier_cluster", priority=0,
          when=[target_supports("clusters")])
def lower_cluster_sync(ctx):
    """barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned (every thread runs it)."""
    def build():
        nvvm.cluster_arrive(aligned=True)
        nvvm.cluster_wait(aligned=True)
    return build


_ASYNC_FEATURE = {"cp_async": "cp_async", "wgmma": "wgmma", "bulk": "tma"}
_async_target = Predicate("target", lambda ctx: ctx.target.require(_ASYNC_FEATURE[ctx.attr("kind")]))


@register("async_commit", name="group", priority=0, when=[_async_target])
def lower_async_commit(ctx):
    """cp.async.commit_group, wgmma.commit_group.sync.aligned or cp.async.bulk.commit_group."""
    kind = ctx.attr("kind")
    if kind == "cp_async":
        return lambda: nvvm.cp_async_commit_group()
    if kind == "bulk":
        return lambda: nvvm.cp_async_bulk_commit_group()
    return lambda: nvvm.wgmma_commit_group_sync_aligned()


@register("async_wait", name="group", priority=0, when=[_async_target])
def lower_async_wait(ctx):
    """cp.async.wait_group N, wgmma.wait_group.sync.aligned N or cp.async.bulk.wait_group.read N
    (TMA stores: their shared-memory sources are read, and may be overwritten)."""
    pending = ctx.attr("pending")
    kind = ctx.attr("kind")
    if kind == "cp_async":
        return lambda: nvvm.cp_async_wait_group(pending)
    if kind == "bulk":
        return lambda: nvvm.cp_async_bulk_wait_group(
            ir.IntegerAttr.get(emit.i32(), pending), read=True)
    return lambda: nvvm.wgmma_wait_group_sync_aligned(pending)


@predicate("threads")
def _barrier_threads(ctx):
    threads = ctx.attr("threads")
    if threads % 32 == 0 and 32 <= threads <= 1024:
        return None
    return f"a named barrier counts whole warps (a multiple of 32 up to 1024), got {threads}"


@register("named_barrier", name="bar_sync", priority=0, when=[_barrier_threads])
def lower_named_barrier(ctx):
    """bar.sync id, threads."""
    return lambda: nvvm.barrier(None, barrier_id=ctx.operand("id"),
                                number_of_threads=emit.const_i32(ctx.attr("threads")))


@register("barrier_arrive", name="bar_arrive", priority=0, when=[_barrier_threads])
def lower_barrier_arrive(ctx):
    """bar.arrive id, threads."""
    return lambda: nvvm.barrier_arrive(emit.const_i32(ctx.attr("threads")),
                                       barrier_id=ctx.operand("id"))


# nvvm.barrier takes a reduction only on barrier 0; the intrinsic takes any barrier id (the
# value analysis knows its result is the same on every thread of the barrier).
_BAR_RED_OR = BAR_RED_OR


@register("barrier_or", name="bar_red_or", priority=0, when=[_barrier_threads])
def lower_barrier_or(ctx):
    """bar.red.or.pred any, id, threads, pred."""
    def build():
        op = llvm.call_intrinsic(emit.i1(), _BAR_RED_OR,
                                 [ctx.operand("id"), emit.const_i32(ctx.attr("threads")),
                                  ctx.operand("pred")], [], [])
        return [op]
    return build


@predicate("register_count")
def _register_count(ctx):
    count = ctx.attr("count")
    if 24 <= count <= 256 and count % 8 == 0:
        return None
    return f"setmaxnreg takes a register count in [24, 256] that is a multiple of 8, got {count}"


@register("setmaxnreg", name="setmaxnreg", priority=0,
          when=[target_supports("setmaxnreg"), _register_count])
def lower_setmaxnreg(ctx):
    """setmaxnreg.inc / .dec.sync.aligned.u32 count. ptxas honours it only in a kernel whose
    register count at entry it knows, and otherwise drops it with a warning (C7508: the
    warpgroups keep what ptxas chose, and a consumer's wgmma chain may be serialized). The
    kernel therefore gets nvvm.maxnreg (.maxnreg): the registers each of its threads can have,
    64 Ki / threads rounded down to a multiple of 8, at most 248 (registers_per_thread)."""
    action = {"increase": nvvm.SetMaxRegisterAction.increase,
              "decrease": nvvm.SetMaxRegisterAction.decrease}[ctx.attr("action")]

    def build():
        func, threads = ctx.func, scope_threads("cta", ctx.block_size)
        if func is not None and threads is not None and "nvvm.maxnreg" not in func.attributes:
            per_thread = registers_per_thread(threads)
            func.attributes["nvvm.maxnreg"] = ir.IntegerAttr.get(emit.i32(), per_thread)
        nvvm.setmaxregister(ctx.attr("count"), action)
    return build


# ------------------------------------------------------------------------------ atomics
# LLVM's NVPTX backend (LLVM 22) lowers `atomicrmw` to atom.<space>.add with neither the
# ordering nor the scope (so a relaxed atom at the default .gpu scope), but lowers scoped
# fences faithfully. The fence + relaxed-atomic forms are the PTX memory model's release and
# acquire patterns, so the ordering is expressed with fences at the requested scope.
_SYNCSCOPE = {"cta": "block", "cluster": "cluster", "gpu": "device"}


@predicate("mem_scope")
def _atomic_scope(ctx):
    scope = ctx.attr("mem_scope")
    if scope == "sys":
        return ("system scope is not supported: LLVM's NVPTX backend emits atom without a "
                "scope qualifier (.gpu), which does not order accesses of the host or peer "
                "devices")
    if scope == "cluster":
        return ctx.target.require("clusters")
    return None


@predicate("pointer_space")
def _atomic_pointer(ctx):
    space = llvm.PointerType(ctx.operand("pointer").type).address_space
    if space in (0, 1, 3):
        return None
    return (f"atomics address global or shared memory (address space 0, 1 or 3); the pointer "
            f"is in address space {space}")


@register("atomic_add", name="atom_add", priority=0, when=[_atomic_scope, _atomic_pointer])
def lower_atomic_add(ctx):
    """[fence.acq_rel.<scope>;] atom.add.u32 old, [p], v; [fence.acq_rel.<scope>;]: a
    release fence before the atom for release / acq_rel, an acquire fence after it for acquire
    / acq_rel."""
    sem = ctx.attr("sem")
    syncscope = _SYNCSCOPE[ctx.attr("mem_scope")]

    def build():
        if sem in ("release", "acq_rel"):
            llvm.fence(llvm.AtomicOrdering.release, syncscope=syncscope)
        old = llvm.atomicrmw(llvm.AtomicBinOp.add, ctx.operand("pointer"), ctx.operand("value"),
                             llvm.AtomicOrdering.monotonic, syncscope=syncscope)
        if sem in ("acquire", "acq_rel"):
            llvm.fence(llvm.AtomicOrdering.acquire, syncscope=syncscope)
        return [old]
    return build
