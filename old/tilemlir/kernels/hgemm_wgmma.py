"""The Hopper twins of seed 000's hgemm_v1..v3: the same tile-level structure on wgmma.

What stays as in hgemm_tcgen05.py: the shared-memory pool with 128B-swizzled MMA layouts,
synchronous CTA-cooperative copies global -> shared, one tile-level `gemm_async` per 64-deep K
tile (lowered to K/16 MMAs with advancing shared-memory descriptors), the K loop (v2) and the
2-D grid of CTAs (v3), and an epilogue from registers. What differs, because Hopper has no
tensor memory and wgmma is warpgroup-collective: the accumulator lives in registers (the wgmma
fragment layout), the whole warpgroup issues gemm_async, and completion is
`wgmma.wait_group 0` instead of tcgen05.commit + an mbarrier. Stores by ordinary threads must be
made visible to the tensor cores' async proxy (fence.proxy.async) before the barrier. As in the
seed, each step is written out whole.
"""

import tilemlir.lang as T
from tilemlir.lang import wgmma_accumulator_layout

Tx = T.tile


def _require(kernel: str, condition: bool, what: str, M, N, K) -> None:
    """The seed's steps are written for particular shapes; say so instead of failing later."""
    if not condition:
        raise ValueError(f"{kernel} {what}; got M={M}, N={N}, K={K}")


def _config(dtype):
    BLK_M, BLK_N, BLK_K = 128, 128, 64
    A_layout = T.mma_shared_layout(dtype, T.SwizzleMode.SWIZZLE_128B_ATOM, (BLK_M, BLK_K))
    B_layout = T.mma_shared_layout(dtype, T.SwizzleMode.SWIZZLE_128B_ATOM, (BLK_N, BLK_K))
    return BLK_M, BLK_N, BLK_K, A_layout, B_layout, wgmma_accumulator_layout(BLK_M, BLK_N)


def hgemm_wgmma_v1(M, N, K, dtype="float16"):
    """One 128x128 output tile, K = 64: load, one gemm_async, wait, write back."""
    _require("hgemm_wgmma_v1", (M, N, K) == (128, 128, 64), "computes one 128x128 tile with K = 64",
             M, N, K)
    BLK_M, BLK_N, BLK_K, A_layout, B_layout, acc_layout = _config(dtype)

    @T.prim_func
    def hgemm_wgmma_v1(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                       D: T.Buffer((M, N), dtype)):
        bx, by = T.cta_id([M // BLK_M, N // BLK_N])
        wg_id = T.warpgroup_id([1])
        warp_id = T.warp_id_in_wg([4])
        lane_id = T.lane_id([32])

        pool = T.SMEMPool()
        pool.move_base_to(1024)
        Asmem = pool.alloc((BLK_M, BLK_K), dtype, layout=A_layout)
        Bsmem = pool.alloc((BLK_N, BLK_K), dtype, layout=B_layout)
        pool.commit()
        acc = T.alloc_local((BLK_M, BLK_N), "float32", layout=acc_layout)

        m_st = T.meta_var(bx * BLK_M)
        n_st = T.meta_var(by * BLK_N)

        # --- Load: all threads copy global -> shared synchronously ---
        Tx.cta.copy(Asmem[:, :], A[m_st:m_st + BLK_M, :])
        Tx.cta.copy(Bsmem[:, :], B[n_st:n_st + BLK_N, :])
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()

        # --- Compute: the warpgroup issues the MMA and waits for it ---
        Tx.wg.gemm_async(acc, Asmem[:, :], Bsmem[:, :], accum=False, dispatch="wgmma")
        T.ptx.wgmma.wait_group(0)

        # --- Writeback: registers -> GMEM ---
        out = T.alloc_local((BLK_M, BLK_N), dtype, layout=acc_layout)
        Tx.wg.cast(out, acc)
        Tx.wg.copy(D[m_st:m_st + BLK_M, n_st:n_st + BLK_N], out)

    return hgemm_wgmma_v1


def hgemm_wgmma_v2(M, N, K, dtype="float16"):
    """One output tile, a K loop over 64-wide chunks accumulating into the same registers."""
    _require("hgemm_wgmma_v2", (M, N) == (128, 128) and K % 64 == 0,
             "computes one 128x128 tile, K a multiple of 64", M, N, K)
    BLK_M, BLK_N, BLK_K, A_layout, B_layout, acc_layout = _config(dtype)
    K_TILES = K // BLK_K

    @T.prim_func
    def hgemm_wgmma_v2(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                       D: T.Buffer((M, N), dtype)):
        bx, by = T.cta_id([M // BLK_M, N // BLK_N])
        wg_id = T.warpgroup_id([1])
        warp_id = T.warp_id_in_wg([4])
        lane_id = T.lane_id([32])

        pool = T.SMEMPool()
        pool.move_base_to(1024)
        Asmem = pool.alloc((BLK_M, BLK_K), dtype, layout=A_layout)
        Bsmem = pool.alloc((BLK_N, BLK_K), dtype, layout=B_layout)
        pool.commit()
        acc = T.alloc_local((BLK_M, BLK_N), "float32", layout=acc_layout)

        m_st = T.meta_var(bx * BLK_M)
        n_st = T.meta_var(by * BLK_N)

        for i in T.serial(K_TILES):
            Tx.cta.copy(Asmem[:, :], A[:, i * BLK_K:(i + 1) * BLK_K])
            Tx.cta.copy(Bsmem[:, :], B[:, i * BLK_K:(i + 1) * BLK_K])
            T.ptx.fence.proxy_async("shared::cta")
            T.cuda.cta_sync()

            # the first chunk starts the accumulator, later ones accumulate
            Tx.wg.gemm_async(acc, Asmem[:, :], Bsmem[:, :], accum=(i != 0), dispatch="wgmma")
            T.ptx.wgmma.wait_group(0)
            T.cuda.cta_sync()          # every warp's MMA has read the tiles the next copy overwrites

        out = T.alloc_local((BLK_M, BLK_N), dtype, layout=acc_layout)
        Tx.wg.cast(out, acc)
        Tx.wg.copy(D[m_st:m_st + BLK_M, n_st:n_st + BLK_N], out)

    return hgemm_wgmma_v2


def hgemm_wgmma_v3(M, N, K, dtype="float16"):
    """A 2-D grid of CTAs, one per 128x128 output tile, each running v2's K loop."""
    _require("hgemm_wgmma_v3", M % 128 == 0 and N % 128 == 0 and K % 64 == 0,
             "needs M, N multiples of 128 and K a multiple of 64", M, N, K)
    BLK_M, BLK_N, BLK_K, A_layout, B_layout, acc_layout = _config(dtype)
    K_TILES = K // BLK_K

    @T.prim_func
    def hgemm_wgmma_v3(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                       D: T.Buffer((M, N), dtype)):
        bx, by = T.cta_id([M // BLK_M, N // BLK_N])
        wg_id = T.warpgroup_id([1])
        warp_id = T.warp_id_in_wg([4])
        lane_id = T.lane_id([32])

        pool = T.SMEMPool()
        pool.move_base_to(1024)
        Asmem = pool.alloc((BLK_M, BLK_K), dtype, layout=A_layout)
        Bsmem = pool.alloc((BLK_N, BLK_K), dtype, layout=B_layout)
        pool.commit()
        acc = T.alloc_local((BLK_M, BLK_N), "float32", layout=acc_layout)

        # this CTA's tile offsets
        m_st = T.meta_var(bx * BLK_M)
        n_st = T.meta_var(by * BLK_N)

        for i in T.serial(K_TILES):
            Tx.cta.copy(Asmem[:, :], A[m_st:m_st + BLK_M, i * BLK_K:(i + 1) * BLK_K])
            Tx.cta.copy(Bsmem[:, :], B[n_st:n_st + BLK_N, i * BLK_K:(i + 1) * BLK_K])
            T.ptx.fence.proxy_async("shared::cta")
            T.cuda.cta_sync()

            Tx.wg.gemm_async(acc, Asmem[:, :], Bsmem[:, :], accum=(i != 0), dispatch="wgmma")
            T.ptx.wgmma.wait_group(0)
            T.cuda.cta_sync()

        out = T.alloc_local((BLK_M, BLK_N), dtype, layout=acc_layout)
        Tx.wg.cast(out, acc)
        Tx.wg.copy(D[m_st:m_st + BLK_M, n_st:n_st + BLK_N], out)

    return hgemm_wgmma_v3
