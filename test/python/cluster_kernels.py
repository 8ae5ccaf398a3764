"""A cluster kernel for the launch-path tests: each CTA of 2-CTA clusters writes its rank."""

import tilemlir.lang as T


@T.prim_func
def cluster_ranks(D: T.Buffer((8,), "int32")):
    bx = T.cta_id([8])
    T.cluster_shape([2])
    warp = T.warp_id_in_wg([4])
    lane = T.lane_id([32])
    T.cuda.cluster_sync()
    if warp == 0:
        if lane == 0:
            D[bx] = T.cuda.cluster_ctarank()
