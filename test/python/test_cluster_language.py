"""Clusters in the language: T.cluster_shape records the launch's cluster shape on the kernel
(`tile.cluster`, which the runtime's signature reads), T.cuda.cluster_ctarank /
T.cuda.cluster_sync, and tcgen05.commit's multicast mask; bad shapes are refused by name.
(test/Target/cluster-ops.mlir checks the lowerings' IR and PTX.)"""

import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.runtime.signature import kernels


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
    with pytest.raises(Exception, match="thread-block clusters is not available on sm_80"):
        tilemlir.compile(_kernel(8, [2]), target="sm_80", cache=False)
