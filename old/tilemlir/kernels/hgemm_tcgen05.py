"""Seed 000: fp16 GEMM on Blackwell (tcgen05, tensor memory), D[m, n] = sum_k A[m, k] * B[n, k].

Three steps, each adding one mechanism, written as in the seed:
  hgemm_v1  one 128x128 output tile, K = 64, one warpgroup runs everything in order;
  hgemm_v2  a K loop over 64-wide chunks accumulating into the same TMEM tile; the reused
            barrier's phase flips after each wait;
  hgemm_v3  a 2-D grid of CTAs, one per 128x128 output tile.

These compile and assemble for sm_100a; the H200 (sm_90a) cannot run tcgen05 — see
hgemm_wgmma.py for the Hopper twins that run the same structure on wgmma. Each step is written
out whole, as the seed does, so that each reads on its own and diffs against the previous one.

The seed leaves out two fences the PTX memory model requires, written here: fence.proxy.async
after the synchronous copies (st.shared is the generic proxy, tcgen05.mma reads shared memory
through the async proxy), and the tcgen05 fences around the thread syncs that order tcgen05 work
(after_thread_sync after the mbarrier wait and before tcgen05.ld; before_thread_sync after the
last tcgen05.ld and before the sync that precedes the dealloc; the same pair around the sync
that publishes the TMEM allocation).
"""

import tilemlir.lang as T
from tilemlir.lang import S, TCol, TileLayout, TLane, tid_in_wg

Tx = T.tile


def _require(kernel: str, condition: bool, what: str, M, N, K) -> None:
    """The seed's steps are written for particular shapes; say so instead of failing later."""
    if not condition:
        raise ValueError(f"{kernel} {what}; got M={M}, N={N}, K={K}")


def hgemm_v1(M, N, K):
    _require("hgemm_v1", (M, N, K) == (128, 128, 64), "computes one 128x128 tile with K = 64", M, N, K)
    a_type, b_type, d_type, acc_type = "float16", "float16", "float16", "float32"
    BLK_M, BLK_N, BLK_K = 128, 128, 64
    A_layout = T.mma_shared_layout(a_type, T.SwizzleMode.SWIZZLE_128B_ATOM, (BLK_M, BLK_K))
    B_layout = T.mma_shared_layout(b_type, T.SwizzleMode.SWIZZLE_128B_ATOM, (BLK_N, BLK_K))

    @T.prim_func
    def hgemm_v1(A: T.Buffer((M, K), a_type), B: T.Buffer((N, K), b_type),
                 D: T.Buffer((M, N), d_type)):
        bx, by = T.cta_id([M // BLK_M, N // BLK_N])
        wg_id = T.warpgroup_id([1])
        warp_id = T.warp_id_in_wg([4])
        lane_id = T.lane_id([32])

        # --- SMEM allocation ---
        pool = T.SMEMPool()
        tmem_addr = pool.alloc((1,), "uint32")
        mma_bar = pool.alloc((1,), "uint64", align=8)
        pool.move_base_to(1024)
        Asmem = pool.alloc((BLK_M, BLK_K), a_type, layout=A_layout)
        Bsmem = pool.alloc((BLK_N, BLK_K), b_type, layout=B_layout)
        pool.commit()

        # --- Barrier + TMEM init (warp 0 only) ---
        if warp_id == 0:
            if lane_id == 0:
                T.ptx.mbarrier.init(mma_bar.ptr_to([0]), 1)
            T.ptx.tcgen05.alloc(T.address_of(tmem_addr), n_cols=512, cta_group=1)
            T.ptx.tcgen05.fence_before_thread_sync()

        T.ptx.fence.proxy_async("shared::cta")
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence_after_thread_sync()     # the allocation, then the TMEM address

        tmem = T.decl_buffer((128, 512), "float32", scope="tmem", allocated_addr=tmem_addr[0],
                             layout=TileLayout(S[(128, 512):(1 @ TLane, 1 @ TCol)]))
        m_st = T.meta_var(bx * BLK_M)
        n_st = T.meta_var(by * BLK_N)
        phase_mma: T.int32 = 0

        # --- Load: all threads copy global -> shared synchronously ---
        Tx.cta.copy(Asmem[:, :], A[m_st:m_st + BLK_M, :])
        Tx.cta.copy(Bsmem[:, :], B[n_st:n_st + BLK_N, :])
        T.ptx.fence.proxy_async("shared::cta")      # st.shared (generic) -> tcgen05.mma (async)
        T.cuda.cta_sync()

        # --- Compute: one elected thread issues the MMA ---
        if warp_id == 0:
            if T.ptx.elect_sync():
                Tx.gemm_async(tmem[:, :BLK_N], Asmem[:, :], Bsmem[:, :],
                              accum=False, dispatch="tcgen05", cta_group=1)
                T.ptx.tcgen05.commit(mma_bar.ptr_to([0]), cta_group=1)

        T.ptx.mbarrier.try_wait(mma_bar.ptr_to([0]), phase_mma)
        T.ptx.tcgen05.fence_after_thread_sync()     # the MMA's completion, then tcgen05.ld

        # --- Writeback: TMEM -> registers -> GMEM ---
        Dreg = T.alloc_local((BLK_N,), acc_type)
        Dreg_f16 = T.alloc_local((BLK_N,), d_type)
        Dreg_wg = Dreg.view(128, BLK_N, layout=TileLayout(S[(128, BLK_N):(1 @ tid_in_wg, 1)]))
        Tx.wg.copy_async(Dreg_wg[:, :], tmem[:, :BLK_N])
        T.ptx.tcgen05.wait.ld()
        Tx.cast(Dreg_f16[:], Dreg[:])
        m_thr = T.meta_var(m_st + warp_id * 32 + lane_id)
        Tx.copy(D[m_thr, n_st:n_st + BLK_N], Dreg_f16[:])

        # --- Release TMEM ---
        T.ptx.tcgen05.fence_before_thread_sync()    # every tcgen05.ld, then the dealloc
        T.cuda.cta_sync()
        if warp_id == 0:
            T.ptx.tcgen05.fence_after_thread_sync()
            T.ptx.tcgen05.relinquish_alloc_permit(cta_group=1)
            T.ptx.tcgen05.dealloc(tmem_addr[0], n_cols=512, cta_group=1)

    return hgemm_v1


def hgemm_v2(M, N, K):
    _require("hgemm_v2", (M, N) == (128, 128) and K % 64 == 0,
             "computes one 128x128 tile, K a multiple of 64", M, N, K)
    a_type, b_type, d_type, acc_type = "float16", "float16", "float16", "float32"
    BLK_M, BLK_N, BLK_K = 128, 128, 64
    K_TILES = K // BLK_K
    A_layout = T.mma_shared_layout(a_type, T.SwizzleMode.SWIZZLE_128B_ATOM, (BLK_M, BLK_K))
    B_layout = T.mma_shared_layout(b_type, T.SwizzleMode.SWIZZLE_128B_ATOM, (BLK_N, BLK_K))

    @T.prim_func
    def hgemm_v2(A: T.Buffer((M, K), a_type), B: T.Buffer((N, K), b_type),
                 D: T.Buffer((M, N), d_type)):
        bx, by = T.cta_id([M // BLK_M, N // BLK_N])     # still one output tile (M = N = 128)
        wg_id = T.warpgroup_id([1])
        warp_id = T.warp_id_in_wg([4])
        lane_id = T.lane_id([32])

        pool = T.SMEMPool()
        tmem_addr = pool.alloc((1,), "uint32")
        mma_bar = pool.alloc((1,), "uint64", align=8)
        pool.move_base_to(1024)
        Asmem = pool.alloc((BLK_M, BLK_K), a_type, layout=A_layout)
        Bsmem = pool.alloc((BLK_N, BLK_K), b_type, layout=B_layout)
        pool.commit()

        if warp_id == 0:
            if lane_id == 0:
                T.ptx.mbarrier.init(mma_bar.ptr_to([0]), 1)
            T.ptx.tcgen05.alloc(T.address_of(tmem_addr), n_cols=512, cta_group=1)
            T.ptx.tcgen05.fence_before_thread_sync()

        T.ptx.fence.proxy_async("shared::cta")
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence_after_thread_sync()     # the allocation, then the TMEM address

        tmem = T.decl_buffer((128, 512), "float32", scope="tmem", allocated_addr=tmem_addr[0],
                             layout=TileLayout(S[(128, 512):(1 @ TLane, 1 @ TCol)]))
        phase_mma: T.int32 = 0
        m_st = T.meta_var(bx * BLK_M)
        n_st = T.meta_var(by * BLK_N)

        # === K loop over BLK_K-wide chunks ===
        for i in T.serial(K_TILES):
            Tx.cta.copy(Asmem[:, :], A[:, i * BLK_K:(i + 1) * BLK_K])
            Tx.cta.copy(Bsmem[:, :], B[:, i * BLK_K:(i + 1) * BLK_K])
            T.ptx.fence.proxy_async("shared::cta")  # st.shared (generic) -> tcgen05.mma (async)
            T.cuda.cta_sync()

            # the first chunk starts the accumulator, later ones accumulate
            if warp_id == 0:
                if T.ptx.elect_sync():
                    Tx.gemm_async(tmem[:, :BLK_N], Asmem[:, :], Bsmem[:, :],
                                  accum=(i != 0), dispatch="tcgen05", cta_group=1)
                    T.ptx.tcgen05.commit(mma_bar.ptr_to([0]), cta_group=1)

            # wait for this chunk's MMA, then flip the phase for the next wait
            T.ptx.mbarrier.try_wait(mma_bar.ptr_to([0]), phase_mma)
            phase_mma ^= 1
        T.ptx.tcgen05.fence_after_thread_sync()     # the last MMA's completion, then tcgen05.ld

        # === Writeback (as in step 1) ===
        Dreg = T.alloc_local((BLK_N,), acc_type)
        Dreg_f16 = T.alloc_local((BLK_N,), d_type)
        Dreg_wg = Dreg.view(128, BLK_N, layout=TileLayout(S[(128, BLK_N):(1 @ tid_in_wg, 1)]))
        Tx.wg.copy_async(Dreg_wg[:, :], tmem[:, :BLK_N])
        T.ptx.tcgen05.wait.ld()
        Tx.cast(Dreg_f16[:], Dreg[:])
        m_thr = T.meta_var(m_st + warp_id * 32 + lane_id)
        Tx.copy(D[m_thr, n_st:n_st + BLK_N], Dreg_f16[:])

        T.ptx.tcgen05.fence_before_thread_sync()    # every tcgen05.ld, then the dealloc
        T.cuda.cta_sync()
        if warp_id == 0:
            T.ptx.tcgen05.fence_after_thread_sync()
            T.ptx.tcgen05.relinquish_alloc_permit(cta_group=1)
            T.ptx.tcgen05.dealloc(tmem_addr[0], n_cols=512, cta_group=1)

    return hgemm_v2


def hgemm_v3(M, N, K):
    _require("hgemm_v3", M % 128 == 0 and N % 128 == 0 and K % 64 == 0,
             "needs M, N multiples of 128 and K a multiple of 64", M, N, K)
    a_type, b_type, d_type, acc_type = "float16", "float16", "float16", "float32"
    BLK_M, BLK_N, BLK_K = 128, 128, 64
    K_TILES = K // BLK_K
    A_layout = T.mma_shared_layout(a_type, T.SwizzleMode.SWIZZLE_128B_ATOM, (BLK_M, BLK_K))
    B_layout = T.mma_shared_layout(b_type, T.SwizzleMode.SWIZZLE_128B_ATOM, (BLK_N, BLK_K))

    @T.prim_func
    def hgemm_v3(A: T.Buffer((M, K), a_type), B: T.Buffer((N, K), b_type),
                 D: T.Buffer((M, N), d_type)):
        # 2-D grid: one CTA per 128x128 output tile
        bx, by = T.cta_id([M // BLK_M, N // BLK_N])
        wg_id = T.warpgroup_id([1])
        warp_id = T.warp_id_in_wg([4])
        lane_id = T.lane_id([32])

        pool = T.SMEMPool()
        tmem_addr = pool.alloc((1,), "uint32")
        mma_bar = pool.alloc((1,), "uint64", align=8)
        pool.move_base_to(1024)
        Asmem = pool.alloc((BLK_M, BLK_K), a_type, layout=A_layout)
        Bsmem = pool.alloc((BLK_N, BLK_K), b_type, layout=B_layout)
        pool.commit()

        if warp_id == 0:
            if lane_id == 0:
                T.ptx.mbarrier.init(mma_bar.ptr_to([0]), 1)
            T.ptx.tcgen05.alloc(T.address_of(tmem_addr), n_cols=512, cta_group=1)
            T.ptx.tcgen05.fence_before_thread_sync()

        T.ptx.fence.proxy_async("shared::cta")
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence_after_thread_sync()     # the allocation, then the TMEM address

        tmem = T.decl_buffer((128, 512), "float32", scope="tmem", allocated_addr=tmem_addr[0],
                             layout=TileLayout(S[(128, 512):(1 @ TLane, 1 @ TCol)]))
        phase_mma: T.int32 = 0

        # this CTA's tile offsets
        m_st = T.meta_var(bx * BLK_M)
        n_st = T.meta_var(by * BLK_N)

        # K loop: load the A, B slices at this CTA's offsets
        for i in T.serial(K_TILES):
            Tx.cta.copy(Asmem[:, :], A[m_st:m_st + BLK_M, i * BLK_K:(i + 1) * BLK_K])
            Tx.cta.copy(Bsmem[:, :], B[n_st:n_st + BLK_N, i * BLK_K:(i + 1) * BLK_K])
            T.ptx.fence.proxy_async("shared::cta")  # st.shared (generic) -> tcgen05.mma (async)
            T.cuda.cta_sync()

            if warp_id == 0:
                if T.ptx.elect_sync():
                    Tx.gemm_async(tmem[:, :BLK_N], Asmem[:, :], Bsmem[:, :],
                                  accum=(i != 0), dispatch="tcgen05", cta_group=1)
                    T.ptx.tcgen05.commit(mma_bar.ptr_to([0]), cta_group=1)

            T.ptx.mbarrier.try_wait(mma_bar.ptr_to([0]), phase_mma)
            phase_mma ^= 1
        T.ptx.tcgen05.fence_after_thread_sync()     # the last MMA's completion, then tcgen05.ld

        # write back this CTA's output tile
        Dreg = T.alloc_local((BLK_N,), acc_type)
        Dreg_f16 = T.alloc_local((BLK_N,), d_type)
        Dreg_wg = Dreg.view(128, BLK_N, layout=TileLayout(S[(128, BLK_N):(1 @ tid_in_wg, 1)]))
        Tx.wg.copy_async(Dreg_wg[:, :], tmem[:, :BLK_N])
        T.ptx.tcgen05.wait.ld()
        Tx.cast(Dreg_f16[:], Dreg[:])
        m_thr = T.meta_var(m_st + warp_id * 32 + lane_id)
        Tx.copy(D[m_thr, n_st:n_st + BLK_N], Dreg_f16[:])

        T.ptx.tcgen05.fence_before_thread_sync()    # every tcgen05.ld, then the dealloc
        T.cuda.cta_sync()
        if warp_id == 0:
            T.ptx.tcgen05.fence_after_thread_sync()
            T.ptx.tcgen05.relinquish_alloc_permit(cta_group=1)
            T.ptx.tcgen05.dealloc(tmem_addr[0], n_cols=512, cta_group=1)

    return hgemm_v3
