"""Tile primitives with an execution scope, and the escapes to synchronisation instructions.

    Tx.cta.copy(Asmem[:, :], A[m:m + 128, k:k + 64])     # all threads of the CTA cooperate
    Tx.wg.copy_async(Dreg_wg[:, :], tmem[:, :128])       # one warpgroup
    Tx.warp.gemm(D, A, B, D, beta=1.0)                   # one warp (mma.sync)
    Tx.gemm_async(tmem[:, :128], As, Bs, accum=i != 0)   # one thread (the elected one)
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), phase)
    T.cuda.cta_sync()

Every primitive takes `dispatch="variant"` to pin the variant the dispatcher uses.
"""

from __future__ import annotations

from mlir import ir

from tilemlir.dsl.buffers import TileBuffer
from tilemlir.dsl.values import KernelError, Scalar, as_scalar
from tilemlir.ir import emit

def _i64_attr(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(emit.i64(), int(v))


def _buffer(x, what: str) -> ir.Value:
    if not isinstance(x, TileBuffer):
        raise KernelError(f"{what} must be a buffer, got {type(x).__name__}")
    return x.value


def _op(name: str, operands: list, attributes: dict, dispatch: str | None, results=()):
    attrs = dict(attributes)
    if dispatch is not None:
        attrs["dispatch"] = ir.StringAttr.get(dispatch)
    return ir.Operation.create(f"tile.{name}", results=list(results), operands=operands,
                               attributes=attrs)


def _cta_mask(mask, what: str) -> int:
    """A static 16-bit mask of cluster CTA ranks (at least one set)."""
    if not isinstance(mask, int) or isinstance(mask, bool) or not 0 < mask < 1 << 16:
        raise KernelError(f"{what} multicast is a 16-bit mask of cluster CTA ranks, got "
                          f"{mask!r}")
    return mask


def _bool(v) -> ir.Value:
    return as_scalar(v, emit.i1()).value if not isinstance(v, bool) else emit.const(int(v), emit.i1())


class Scope:
    """Primitives executed by every thread of one scope (thread, warp, warpgroup, cta)."""

    def __init__(self, name: str):
        self.name = name

    def _scope(self) -> dict:
        return {"scope": ir.StringAttr.get(self.name)}

    def copy(self, dst, src, dispatch: str | None = None) -> None:
        _op("copy", [_buffer(dst, "dst"), _buffer(src, "src")], self._scope(), dispatch)

    def copy_async(self, dst, src, barrier=None, multicast: int | None = None,
                   dispatch: str | None = None) -> None:
        """With `multicast` (a mask of cluster CTA ranks, e.g. 0b11 for both CTAs of a pair),
        `src` lands at `dst`'s offset in the shared memory of every CTA of the mask and
        completes on the barrier at `barrier`'s offset in each (TMA multicast)."""
        operands = [_buffer(dst, "dst"), _buffer(src, "src")]
        if multicast is not None:
            if barrier is None:
                raise KernelError("copy_async with multicast completes on a barrier in each "
                                  "CTA of the mask: pass barrier")
            operands += [barrier, emit.const(_cta_mask(multicast, "copy_async"),
                                              ir.IntegerType.get_signless(16))]
            _op("copy_async_multicast", operands, self._scope(), dispatch)
            return
        if barrier is not None:
            operands.append(barrier)
        _op("copy_async", operands, self._scope(), dispatch)

    def gemm(self, D, A, B, C, transpose_A: bool = False, transpose_B: bool = False,
             alpha: float = 1.0, beta: float = 0.0, dispatch: str | None = None) -> None:
        f32 = ir.F32Type.get()
        attrs = dict(self._scope(), alpha=ir.FloatAttr.get(f32, float(alpha)),
                     beta=ir.FloatAttr.get(f32, float(beta)),
                     transpose_a=ir.BoolAttr.get(bool(transpose_A)),
                     transpose_b=ir.BoolAttr.get(bool(transpose_B)))
        _op("gemm", [_buffer(D, "D"), _buffer(A, "A"), _buffer(B, "B"), _buffer(C, "C")],
            attrs, dispatch)

    def gemm_async(self, D, A, B, accum=False, cta_group: int = 1,
                   dispatch: str | None = None) -> None:
        if cta_group == 2:
            from tilemlir.dispatch.cta_pair import leader_only_reason
            reason = leader_only_reason(ir.InsertionPoint.current.block, "gemm_async")
            if reason:
                raise KernelError(reason)
        attrs = dict(self._scope(), cta_group=_i64_attr(cta_group))
        _op("gemm_async", [_buffer(D, "D"), _buffer(A, "A"), _buffer(B, "B"), _bool(accum)],
            attrs, dispatch)

    def cast(self, dst, src, dispatch: str | None = None) -> None:
        _op("cast", [_buffer(dst, "dst"), _buffer(src, "src")], self._scope(), dispatch)

    def fill(self, dst, value, dispatch: str | None = None) -> None:
        buf = _buffer(dst, "dst")
        v = as_scalar(value, dst.dtype)
        _op("fill", [buf, v.value], self._scope(), dispatch)


class TileNamespace(Scope):
    """`Tx`: thread-scope primitives, plus `Tx.cta`, `Tx.wg`, `Tx.warp`, `Tx.thread`."""

    def __init__(self):
        super().__init__("thread")
        self.thread = Scope("thread")
        self.warp = Scope("warp")
        self.wg = self.warpgroup = Scope("warpgroup")
        self.cta = Scope("cta")
        self.cluster = Scope("cluster")


tile = TileNamespace()


# ---------------------------------------------------------------------------- escapes
def _group(cta_group: int) -> dict:
    return {"cta_group": _i64_attr(cta_group)}


def _scope_attr(scope, what: str) -> ir.Attribute:
    """The memory scope of a barrier's release or acquire."""
    if scope not in ("cta", "cluster"):
        raise KernelError(f"{what} scope is 'cta' or 'cluster', got {scope!r}")
    return ir.StringAttr.get(scope)


class _MBarrier:
    def init(self, ptr, count) -> None:
        _op("mbarrier_init", [ptr, as_scalar(count, emit.i32()).value], {}, None)

    def arrive(self, ptr, scope: str = "cta") -> None:
        """Arrives on the barrier at `ptr`: this CTA's, or a peer's (a T.cuda.mapa pointer).
        scope="cluster" releases at cluster scope, for waiters in other CTAs that acquire at
        cluster scope (try_wait(..., scope="cluster"))."""
        _op("mbarrier_arrive", [ptr], {"scope": _scope_attr(scope, "mbarrier.arrive")}, None)

    def arrive_expect_tx(self, ptr, nbytes) -> None:
        _op("mbarrier_arrive_expect_tx", [ptr, as_scalar(nbytes, emit.i32()).value], {}, None)

    def try_wait(self, ptr, phase, scope: str = "cta") -> None:
        """Waits until the barrier's phase of parity `phase` has completed. scope="cluster"
        acquires at cluster scope: for barriers that threads of other CTAs arrive on."""
        _op("mbarrier_wait", [ptr, as_scalar(phase, emit.i32()).value],
            {"scope": _scope_attr(scope, "mbarrier.try_wait")}, None)


class _Wait:
    def ld(self) -> None:
        _op("tcgen05_wait", [], {"kind": ir.StringAttr.get("ld")}, None)

    def st(self) -> None:
        _op("tcgen05_wait", [], {"kind": ir.StringAttr.get("st")}, None)


class _Tcgen05:
    wait = _Wait()

    def alloc(self, dst_ptr, n_cols: int, cta_group: int = 1) -> None:
        _op("tmem_alloc", [dst_ptr], dict(_group(cta_group), ncols=_i64_attr(n_cols)), None)

    def relinquish_alloc_permit(self, cta_group: int = 1) -> None:
        _op("tmem_relinquish", [], _group(cta_group), None)

    def dealloc(self, address, n_cols: int, cta_group: int = 1) -> None:
        addr = as_scalar(address, emit.i32()).value
        _op("tmem_dealloc", [addr], dict(_group(cta_group), ncols=_i64_attr(n_cols)), None)

    def commit(self, barrier_ptr, cta_group: int = 1, multicast: int | None = None) -> None:
        """With `multicast` (a mask of cluster CTA ranks, e.g. 0b11 for a CTA pair) the barrier
        at the same offset in each of those CTAs is arrived at."""
        operands = [barrier_ptr]
        if multicast is not None:
            operands.append(emit.const(_cta_mask(multicast, "tcgen05.commit"),
                                       ir.IntegerType.get_signless(16)))
        _op("tcgen05_commit", operands, _group(cta_group), None)

    def fence_before_thread_sync(self) -> None:
        """Orders this thread's earlier tcgen05 ops before the thread sync that follows."""
        _op("tcgen05_fence", [], {"kind": ir.StringAttr.get("before_thread_sync")}, None)

    def fence_after_thread_sync(self) -> None:
        """Orders this thread's later tcgen05 ops after the thread sync that precedes
        (e.g. tcgen05.ld after the mbarrier wait that saw the MMA's commit)."""
        _op("tcgen05_fence", [], {"kind": ir.StringAttr.get("after_thread_sync")}, None)


class _Fence:
    def proxy_async(self, space: str = "shared::cta") -> None:
        if space not in ("shared::cta", "shared"):
            raise KernelError(f"fence.proxy_async supports shared::cta, got {space!r}")
        _op("fence", [], {"kind": ir.StringAttr.get("proxy_async_shared")}, None)

    def mbarrier_init(self) -> None:
        _op("fence", [], {"kind": ir.StringAttr.get("mbarrier_init")}, None)


class _AsyncGroup:
    def __init__(self, kind: str):
        self.kind = kind

    def commit_group(self) -> None:
        _op("async_commit", [], {"kind": ir.StringAttr.get(self.kind)}, None)

    def wait_group(self, pending: int) -> None:
        _op("async_wait", [], {"kind": ir.StringAttr.get(self.kind),
                               "pending": _i64_attr(pending)}, None)


class _Ptx:
    mbarrier = _MBarrier()
    tcgen05 = _Tcgen05()
    fence = _Fence()
    cp_async = _AsyncGroup("cp_async")
    wgmma = _AsyncGroup("wgmma")
    bulk = _AsyncGroup("bulk")          # TMA stores

    def setmaxnreg(self, count: int, increase: bool) -> None:
        """Sets this warpgroup's per-thread register budget (every thread of it must run this)."""
        if not isinstance(count, int) or isinstance(count, bool):
            raise KernelError(f"setmaxnreg count must be an integer, got {count!r}")
        _op("setmaxnreg", [], {"count": _i64_attr(count), "action": ir.StringAttr.get(
            "increase" if increase else "decrease")}, None)

    def elect_sync(self) -> Scalar:
        return Scalar(_op("elect_sync", [], {}, None, results=[emit.i1()]).result)


class _Cuda:
    def cta_sync(self) -> None:
        _op("cta_sync", [], {}, None)

    def cluster_sync(self) -> None:
        """Every thread of every CTA of the cluster waits here (barrier.cluster)."""
        _op("cluster_sync", [], {}, None)

    def mapa(self, pointer, rank) -> ir.Value:
        """The shared::cluster address of the shared-memory variable at `pointer` in the CTA
        of cluster rank `rank` (e.g. the leader's barrier for the CTA pair's TMA loads)."""
        return _op("mapa", [pointer, as_scalar(rank, emit.i32()).value], {}, None,
                   results=[emit.ptr(7)]).result

    def cluster_ctarank(self) -> Scalar:
        """This CTA's rank in its cluster."""
        return Scalar(_op("cluster_ctarank", [], {}, None, results=[emit.i32()]).result)

    def bar_sync(self, barrier_id, threads: int) -> None:
        """bar.sync barrier_id, threads: only the `threads` threads using this id wait (ids
        1..15; 0 is cta_sync's)."""
        if not isinstance(threads, int) or isinstance(threads, bool):
            raise KernelError(f"bar_sync threads must be an integer, got {threads!r}")
        _op("named_barrier", [as_scalar(barrier_id, emit.i32()).value],
            {"threads": _i64_attr(threads)}, None)


ptx = _Ptx()
cuda = _Cuda()
