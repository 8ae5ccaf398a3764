"""A complete GEMM from seed-001 primitives: cp.async pipeline, ldmatrix, mma.sync, vector epilogue.

D[m, n] = sum_k A[m, k] * B[n, k] (B stored N x K, as in the seeds), fp16 or bf16 inputs, fp32
accumulation, output in the input type. Structure (CUTLASS's sm80 "multistage" recipe):

  * a CTA computes a BM x BN tile with (BM / WM) x (BN / WN) warps, each a WM x WN sub-tile;
    CTAs are rasterised in groups of GROUP_M tile rows so that CTAs running together share
    their A and B tiles in L2;
  * STAGES shared-memory stages of A (BM x BK) and B (BN x BK), 128-byte swizzled, filled by
    cp.async (16-byte chunks, the whole CTA cooperating) STAGES - 1 k-tiles ahead (rows of
    BK = 32 use the 64-byte swizzle);
  * per 16-deep k-step each warp loads its A (WM x 16) and B (WN x 16) fragments with
    ldmatrix.x4 and issues (WM / 16) x (WN / 8) mma.sync.m16n8k16, accumulating in registers;
  * the epilogue converts the accumulators to the output type and stores them.

Shapes must be multiples of the CTA tile; others are rejected with a clear message.
"""

import math

import tilemlir.lang as T
from tilemlir.kernels.warp_gemm import fragments

Tx = T.tile


class ShapeError(ValueError):
    pass


def gemm_mma_sync(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, WM=64, WN=64,
                  GROUP_M=8):
    for name, value, tile in (("M", M, BM), ("N", N, BN), ("K", K, BK)):
        if value % tile:
            raise ShapeError(f"gemm_mma_sync: {name}={value} is not a multiple of the tile's "
                             f"{name} extent {tile} (tile {BM}x{BN}x{BK}); pad the operands")
    if BM % WM or BN % WN or WM % 16 or WN % 16 or BK % 16:
        raise ShapeError(f"gemm_mma_sync: warp tile {WM}x{WN} must divide the CTA tile "
                         f"{BM}x{BN} in multiples of 16, and BK={BK} be a multiple of 16")
    warps_m, warps_n = BM // WM, BN // WN
    tiles_m, tiles_n, k_tiles = M // BM, N // BN, K // BK
    group_m = math.gcd(GROUP_M, tiles_m)
    row_bytes = BK * 2                                            # 16-bit elements
    swizzle = "128B" if row_bytes >= 128 else f"{row_bytes}B"    # rows of 32/64 bytes: narrower
    a_smem = T.mma_shared_layout(dtype, swizzle, (STAGES * BM, BK))
    b_smem = T.mma_shared_layout(dtype, swizzle, (STAGES * BN, BK))
    a_frag, b_frag_kn, acc_frag = fragments(WM, WN, 16)
    b_frag = b_frag_kn.permute_by_groups((16, WN), (1, 0))      # B fragments read as N x K

    @T.prim_func
    def gemm_mma_sync(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                      D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([tiles_m * tiles_n])
        warp = T.warp_id([warps_m * warps_n])
        T.lane_id([32])

        # Grouped rasterisation: group_m tile rows are swept column by column.
        in_group = pid % (group_m * tiles_n)
        m0 = (pid // (group_m * tiles_n) * group_m + in_group % group_m) * BM
        n0 = in_group // group_m * BN
        wm = warp // warps_n * WM
        wn = warp % warps_n * WN

        pool = T.SMEMPool()
        As = pool.alloc((STAGES * BM, BK), dtype, layout=a_smem)
        Bs = pool.alloc((STAGES * BN, BK), dtype, layout=b_smem)
        pool.commit()
        A_f = T.alloc_local((WM, 16), dtype, layout=a_frag)
        B_f = T.alloc_local((WN, 16), dtype, layout=b_frag)
        acc = T.alloc_local((WM, WN), "float32", layout=acc_frag)
        Tx.warp.fill(acc, 0.0)

        # Prologue: the first STAGES - 1 k-tiles in flight.
        for s in T.unroll(STAGES - 1):
            if s < k_tiles:
                Tx.cta.copy_async(As[s * BM:(s + 1) * BM, :], A[m0:m0 + BM, s * BK:(s + 1) * BK])
                Tx.cta.copy_async(Bs[s * BN:(s + 1) * BN, :], B[n0:n0 + BN, s * BK:(s + 1) * BK])
            T.ptx.cp_async.commit_group()

        for kt in T.serial(k_tiles):
            # k-tile kt has landed (at most STAGES - 2 younger groups pending); every warp is
            # done with the stage the next copy overwrites.
            T.ptx.cp_async.wait_group(STAGES - 2)
            T.cuda.cta_sync()
            nxt = kt + (STAGES - 1)
            if nxt < k_tiles:
                ns = nxt % STAGES
                Tx.cta.copy_async(As[ns * BM:ns * BM + BM, :], A[m0:m0 + BM, nxt * BK:nxt * BK + BK])
                Tx.cta.copy_async(Bs[ns * BN:ns * BN + BN, :], B[n0:n0 + BN, nxt * BK:nxt * BK + BK])
            T.ptx.cp_async.commit_group()

            st = kt % STAGES
            for kk in T.unroll(BK // 16):
                Tx.warp.copy(A_f, As[st * BM + wm:st * BM + wm + WM, kk * 16:kk * 16 + 16])
                Tx.warp.copy(B_f, Bs[st * BN + wn:st * BN + wn + WN, kk * 16:kk * 16 + 16])
                Tx.warp.gemm(acc, A_f, B_f, acc, transpose_B=True, beta=1.0)

        T.ptx.cp_async.wait_group(0)
        out = T.alloc_local((WM, WN), dtype, layout=acc_frag)
        Tx.warp.cast(out, acc)
        Tx.warp.copy(D[m0 + wm:m0 + wm + WM, n0 + wn:n0 + wn + WN], out)

    return gemm_mma_sync
