"""A small warp-specialized Hopper GEMM (the shape of hgemm_v6 / v7) whose synchronisation can
be broken one step at a time, for the interpreter's race detector and deadlock report.

D (64 x BN) = A (64 x K) @ B (BN x K)^T: a producer warpgroup loads A and B by TMA into a
2-stage ring (`full` / `empty` mbarriers), one consumer warpgroup runs wgmma and stores D through
shared memory with TMA stores, EPI_N columns at a time. With cluster=True two CTAs compute two
row blocks of D as hgemm_v7 does: each loads half of B and multicasts it into both CTAs, and a
stage is free once both CTAs' consumers released it (the peer's through mapa).

`plant` names the step that is left out or moved:
  no_full_wait         the consumer reads a stage without waiting for its TMA load
  early_release        the consumer frees a stage before its wgmma has read it
  no_wgmma_wait        the accumulator is read before wgmma.wait_group retires the MMAs
  no_epilogue_barrier  the TMA store is issued without the barrier after every warp's stmatrix
  no_proxy_fence       the stmatrix writes are not fenced for the TMA store (async proxy)
  no_store_wait        the staging buffer is overwritten before the last TMA store has read it
  no_release           the consumer never frees a stage: the producer waits forever
  no_peer_release      (cluster) the stage is freed in this CTA only: the peer's producer waits
"""

import tilemlir.lang as T
from tilemlir.lang import wgmma_accumulator_layout

Tx = T.tile

PLANTS = ("no_full_wait", "early_release", "no_wgmma_wait", "no_epilogue_barrier",
          "no_proxy_fence", "no_store_wait", "no_release", "no_peer_release")
BM, BK, STAGES, EPI_N = 64, 64, 2, 64


def pipeline_gemm(K=256, BN=128, cluster=False, plant=None):
    assert plant is None or plant in PLANTS
    ctas = 2 if cluster else 1
    M, N = BM * ctas, BN
    k_tiles = K // BK
    half = BN // ctas                                   # rows of B each CTA loads
    a_layout = T.mma_shared_layout("float16", "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout("float16", "128B", (STAGES * BN, BK))
    c_layout = T.mma_shared_layout("float16", "128B", (BM, EPI_N))
    acc_layout = wgmma_accumulator_layout(64, BN)
    stage_bytes = (BM + BN) * BK * 2

    @T.prim_func
    def pipeline_gemm(A: T.Buffer((M, K), "float16"), B: T.Buffer((N, K), "float16"),
                      D: T.Buffer((M, N), "float16")):
        pid = T.cta_id([ctas])
        if cluster:
            T.cluster_shape([2, 1, 1])
        wg = T.warpgroup_id([2])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        rank = T.cuda.cluster_ctarank() if cluster else 0
        m0 = pid * BM

        pool = T.SMEMPool()
        full = pool.alloc((STAGES,), "uint64", align=8)
        empty = pool.alloc((STAGES,), "uint64", align=8)
        pool.move_base_to(1024)
        As = pool.alloc((STAGES * BM, BK), "float16", layout=a_layout)
        Bs = pool.alloc((STAGES * BN, BK), "float16", layout=b_layout)
        Cs = pool.alloc((BM, EPI_N), "float16", layout=c_layout)
        pool.commit()

        if wg == 0:
            if warp == 0:
                if lane == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init(empty.ptr_to([s]), ctas)
        T.ptx.fence.mbarrier_init()
        if cluster:
            T.cuda.cluster_sync()
        else:
            T.cuda.cta_sync()

        if wg == 0:
            if warp == 0:
                if T.ptx.elect_sync():
                    for kt in T.serial(k_tiles):
                        s = kt % STAGES
                        T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (kt // STAGES + 1) % 2)
                        T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                        Tx.copy_async(As[s * BM:s * BM + BM, :],
                                      A[m0:m0 + BM, kt * BK:kt * BK + BK], full.ptr_to([s]))
                        if cluster:
                            Tx.copy_async(Bs[s * BN + rank * half:s * BN + rank * half + half, :],
                                          B[rank * half:rank * half + half,
                                            kt * BK:kt * BK + BK],
                                          full.ptr_to([s]), multicast=0b11)
                        else:
                            Tx.copy_async(Bs[s * BN:s * BN + BN, :],
                                          B[0:BN, kt * BK:kt * BK + BK], full.ptr_to([s]))
        else:
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            out = T.alloc_local((64, BN), "float16", layout=acc_layout)

            def release(s):
                if warp == 0:
                    if lane == 0:
                        T.ptx.mbarrier.arrive(empty.ptr_to([s]))
                        if cluster:
                            if plant != "no_peer_release":
                                T.ptx.mbarrier.arrive(T.cuda.mapa(empty.ptr_to([s]), rank ^ 1))

            Tx.wg.fill(acc, 0.0)
            for kt in T.serial(k_tiles):
                s = kt % STAGES
                if plant != "no_full_wait":
                    T.ptx.mbarrier.try_wait(full.ptr_to([s]), (kt // STAGES) % 2)
                Tx.wg.gemm_async(acc, As[s * BM:s * BM + BM, :], Bs[s * BN:s * BN + BN, :],
                                 accum=True)
                if plant == "early_release":
                    release(s)                      # before its wgmma has read the stage
                T.ptx.wgmma.wait_group(1)
                if plant not in ("early_release", "no_release"):
                    if kt > 0:
                        release((kt + STAGES - 1) % STAGES)
            if plant != "no_wgmma_wait":
                T.ptx.wgmma.wait_group(0)
            Tx.wg.cast(out, acc)
            for c0 in T.unroll(0, BN, EPI_N):
                if plant != "no_store_wait":
                    if warp == 0:
                        if lane == 0:
                            T.ptx.bulk.wait_group(0)
                T.cuda.bar_sync(1, 128)
                Tx.wg.copy(Cs[:, :], out[:, c0:c0 + EPI_N])
                if plant != "no_proxy_fence":
                    T.ptx.fence.proxy_async("shared::cta")
                if plant != "no_epilogue_barrier":
                    T.cuda.bar_sync(1, 128)
                if warp == 0:
                    if lane == 0:
                        Tx.copy_async(D[m0:m0 + BM, c0:c0 + EPI_N], Cs[:, :])
                        T.ptx.bulk.commit_group()
            if warp == 0:
                if lane == 0:
                    T.ptx.bulk.wait_group(0)
        if cluster:
            T.cuda.cluster_sync()
    return pipeline_gemm
