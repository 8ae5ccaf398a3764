"""Clusters in the language: T.cluster_shape records the launch's cluster shape on the kernel
(`tile.cluster`, which the runtime's signature reads), T.cuda.cluster_ctarank /
T.cuda.cluster_sync, tcgen05.commit's multicast mask, TMA multicast (copy_async(...,
multicast=mask)), arrivals on a peer's barrier and cluster-scope waits; bad shapes and masks
are refused by name.
(test/Target/cluster-ops.mlir checks the lowerings' IR and PTX.)"""

import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.runtime.signature import kernels

Tx = T.tile


def _kernel(grid, cluster, multicast=3):
    @T.prim_func
    def pair(D: T.Buffer((grid,), "int32")):
        bx = T.cta_id([grid])
        T.cluster_shape(cluster)
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        pool = T.SMEMPool()
        bar = pool.alloc((1,), "uint64", align=8)
        pool.commit()
        T.cuda.cluster_sync()
        rank = T.cuda.cluster_ctarank()
        if warp == 0:
            if lane == 0:
                T.ptx.tcgen05.commit(bar.ptr_to([0]), cta_group=2, multicast=multicast)
                D[bx] = rank
    return pair


def test_cluster_shape_reaches_the_signature_and_the_ptx():
    module = _kernel(8, [2]).build()
    (signature,) = kernels(module)
    assert signature.cluster == (2, 1, 1)
    ptx = tilemlir.compile(_kernel(8, [2]), target="sm_100a", cache=False).ptx
    assert "%cluster_ctarank" in ptx
    assert "barrier.cluster.arrive.aligned;" in ptx
    assert ".multicast::cluster.b64" in ptx


@pytest.mark.parametrize("grid,cluster,message", [
    (6, [4], "the grid [6, 1, 1] is not made of whole clusters of [4, 1, 1]"),
    (32, [16], "a cluster of [16, 1, 1] has more than 8 CTAs"),
    (8, [2, 1, 1, 1], "the cluster shape is 1 to 3 extents"),
    (8, [0], "T.cluster_shape takes positive static extents"),
])
def test_bad_cluster_shapes_are_refused(grid, cluster, message):
    with pytest.raises(T.KernelError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _kernel(grid, cluster).build()


@pytest.mark.parametrize("mask", [0, 1 << 16, True, 1.5])
def test_commit_multicast_is_a_16_bit_mask(mask):
    with pytest.raises(T.KernelError, match="multicast is a 16-bit mask of cluster CTA ranks"):
        _kernel(8, [2], multicast=mask).build()


def test_clusters_need_sm90():
    from mlir import ir
    with pytest.raises(ir.MLIRError, match=r"test_cluster_language.py\":\d+:\d+: the kernel "
                       r"runs in clusters of \[2, 1, 1\]: thread-block clusters need sm_90 or "
                       r"newer, the target is sm_80"):
        tilemlir.compile(_kernel(8, [2]), target="sm_80", cache=False)


def _multicast_kernel(cluster, multicast=0b11, barrier=True, scope="cluster"):
    """Each CTA of a pair multicasts a 64x64 tile of A into both CTAs and frees the peer's
    barrier; the language checks the mask and the wait's scope by name."""
    layout = T.mma_shared_layout("float16", "128B", (64, 64))

    @T.prim_func
    def multicast_load(A: T.Buffer((128, 64), "float16")):
        bx = T.cta_id([2])
        if cluster:
            T.cluster_shape(cluster)
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        pool = T.SMEMPool()
        bars = pool.alloc((2,), "uint64", align=8)
        pool.move_base_to(1024)
        As = pool.alloc((64, 64), "float16", layout=layout)
        pool.commit()
        rank = T.cuda.cluster_ctarank()
        if warp == 0:
            if lane == 0:
                Tx.copy_async(As[:, :], A[bx * 64:bx * 64 + 64, :],
                              bars.ptr_to([0]) if barrier else None, multicast=multicast)
                T.ptx.mbarrier.arrive(T.cuda.mapa(bars.ptr_to([1]), rank ^ 1), scope=scope)
                T.ptx.mbarrier.try_wait(bars.ptr_to([1]), 0, scope=scope)
    return multicast_load



def test_multicast_copy_reaches_the_ptx():
    ptx = tilemlir.compile(_multicast_kernel([2]), target="sm_90a", cache=False).ptx
    assert ".multicast::cluster [" in ptx
    assert "mbarrier.arrive.release.cluster.shared::cluster.b64 _," in ptx
    assert "mbarrier.try_wait.parity.acquire.cluster.shared.b64" in ptx


def test_barrier_scope_cta_is_the_plain_instruction():
    ptx = tilemlir.compile(_multicast_kernel([2], scope="cta"), target="sm_90a", cache=False).ptx
    assert "mbarrier.arrive.shared::cluster.b64 _," in ptx
    assert "release.cluster" not in ptx and "acquire.cluster" not in ptx


@pytest.mark.parametrize("kwargs, message", [
    (dict(multicast=0), "copy_async multicast is a 16-bit mask of cluster CTA ranks"),
    (dict(multicast=True), "copy_async multicast is a 16-bit mask of cluster CTA ranks"),
    (dict(barrier=False), "copy_async with multicast completes on a barrier in each CTA"),
    (dict(scope="gpu"), "mbarrier.arrive scope is 'cta' or 'cluster', got 'gpu'"),
])
def test_multicast_arguments_are_checked(kwargs, message):
    with pytest.raises(T.KernelError, match=message):
        _multicast_kernel([2], **kwargs).build()


@pytest.mark.parametrize("cluster, multicast, reason", [
    (None, 0b11, "the kernel needs a cluster of more than one CTA"),
    ([2], 0b111, "the multicast mask 0b111 names CTA ranks beyond the 2 CTAs"),
])
def test_multicast_needs_a_cluster_holding_the_mask(cluster, multicast, reason):
    with pytest.raises(Exception, match=reason):
        tilemlir.compile(_multicast_kernel(cluster, multicast), target="sm_90a", cache=False)
