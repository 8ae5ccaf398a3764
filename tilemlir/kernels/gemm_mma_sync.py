"""A complete GEMM from seed-001 primitives: cp.async pipeline, ldmatrix, mma.sync, vector epilogue.

D[m, n] = sum_k A[m, k] * B[n, k] (B stored N x K, as in the seeds), fp16 or bf16 inputs, fp32
accumulation, output in the input type. Structure (CUTLASS's sm80 "multistage" recipe):

  * a CTA computes a BM x BN tile with (BM / WM) x (BN / WN) warps, each a WM x WN sub-tile;
    CTAs are rasterised in groups of GROUP_M tile rows so that CTAs running together share
    their A and B tiles in L2;
  * STAGES shared-memory stages of A (BM x BK) and B (BN x BK), 128-byte swizzled, filled by
    cp.async (16-byte chunks, the whole CTA cooperating) STAGES - 1 k-tiles ahead (rows of
    BK = 32 use the 64-byte swizzle), each tile's copies spread over the k-steps before;
  * per 16-deep k-step each warp loads its A (WM x 16) and B (WN x 16) fragments with
    ldmatrix.x4 and issues (WM / 16) x (WN / 8) mma.sync.m16n8k16, accumulating in registers;
    fragments are double-buffered so the next step's loads overlap this step's MMAs, and the
    one barrier per k-tile sits before the tile's last step (CUTLASS's multistage schedule);
  * the epilogue converts the accumulators to the output type, stages the CTA tile in shared
    memory (stmatrix) and writes it with coalesced 16-byte stores.

Shapes must be multiples of the CTA tile; others are rejected with a clear message.
"""

import math

import tilemlir.lang as T

Tx = T.tile


class ShapeError(ValueError):
    pass


MAX_WARPS = 32                      # 1024 threads per block


def _check_parameters(M, N, K, dtype, BM, BN, BK, STAGES, WM, WN, GROUP_M, SPREAD, EPILOGUE):
    """ShapeError naming the parameter for what the kernel's body cannot build."""
    for name, value in (("M", M), ("N", N), ("K", K), ("BM", BM), ("BN", BN), ("BK", BK),
                        ("STAGES", STAGES), ("WM", WM), ("WN", WN), ("GROUP_M", GROUP_M)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ShapeError(f"gemm_mma_sync: {name} must be a positive integer, got {value!r}")
    for name, value in (("SPREAD", SPREAD), ("EPILOGUE", EPILOGUE)):
        if value not in (0, 1) or isinstance(value, float):
            raise ShapeError(f"gemm_mma_sync: {name} must be 0 or 1, got {value!r}")
    if dtype not in ("float16", "bfloat16"):
        raise ShapeError(f"gemm_mma_sync: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    if STAGES < 2:
        raise ShapeError(f"gemm_mma_sync: STAGES={STAGES} must be at least 2 (one stage "
                         f"loads while another is read)")


def gemm_mma_sync(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, WM=64, WN=64,
                  GROUP_M=8, SPREAD=1, EPILOGUE=1):
    _check_parameters(M, N, K, dtype, BM, BN, BK, STAGES, WM, WN, GROUP_M, SPREAD, EPILOGUE)
    for name, value, tile in (("M", M, BM), ("N", N, BN), ("K", K, BK)):
        if value % tile:
            raise ShapeError(f"gemm_mma_sync: {name}={value} is not a multiple of the tile's "
                             f"{name} extent {tile} (tile {BM}x{BN}x{BK}); pad the operands")
    if BM % WM or BN % WN or WM % 16 or WN % 16 or BK % 16:
        raise ShapeError(f"gemm_mma_sync: warp tile {WM}x{WN} must divide the CTA tile "
                         f"{BM}x{BN} in multiples of 16, and BK={BK} be a multiple of 16")
    if (BM // WM) * (BN // WN) > MAX_WARPS:
        raise ShapeError(f"gemm_mma_sync: a {BM}x{BN} tile of {WM}x{WN} warp tiles needs "
                         f"{(BM // WM) * (BN // WN)} warps; a block has at most {MAX_WARPS} "
                         f"(1024 threads): use larger WM or WN")
    KK = BK // 16                                                   # mma k-steps per k-tile
    if KK % 2 and KK != 1:
        raise ShapeError(f"gemm_mma_sync: BK={BK} must give an even number of 16-deep k-steps")
    # The next tile's copies, as 64-row pieces of A and B spread over the first copy_steps
    # k-steps of the current tile (SPREAD=0: all at the first).
    pieces = [("A", r, min(64, BM - r)) for r in range(0, BM, 64)] + \
             [("B", r, min(64, BN - r)) for r in range(0, BN, 64)]
    copy_steps = max(1, min(KK - 1, len(pieces))) if SPREAD else 1
    # The output tile is staged through the A stages when they can hold it (EPILOGUE=0: each
    # warp stores its fragment to global memory directly).
    stage_output = bool(EPILOGUE) and STAGES * BK >= BN
    if stage_output and BN > 64 and WN % 64:
        raise ShapeError(f"gemm_mma_sync: WN={WN}: the epilogue stages the {BM}x{BN} tile in "
                         f"shared memory in 64-column swizzle atoms, which each warp's "
                         f"{WM}x{WN} window must cover whole: WN must be a multiple of 64 when "
                         f"BN > 64 (or EPILOGUE=0)")
    c_smem = T.mma_shared_layout(dtype, "128B", (BM, BN)) if stage_output else None
    warps_m, warps_n = BM // WM, BN // WN
    tiles_m, tiles_n, k_tiles = M // BM, N // BN, K // BK
    group_m = math.gcd(GROUP_M, tiles_m)
    row_bytes = BK * 2                                            # 16-bit elements
    swizzle = "128B" if row_bytes >= 128 else f"{row_bytes}B"    # rows of 32/64 bytes: narrower
    a_smem = T.mma_shared_layout(dtype, swizzle, (STAGES * BM, BK))
    b_smem = T.mma_shared_layout(dtype, swizzle, (STAGES * BN, BK))
    a_frag, b_frag_kn, acc_frag = T.MmaSync(16).fragments(WM, WN, 16)
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
        # Two register sets for the fragments: the next k-step's load overlaps this one's MMAs.
        frags = [(T.alloc_local((WM, 16), dtype, layout=a_frag),
                  T.alloc_local((WN, 16), dtype, layout=b_frag)) for _ in range(2)]
        acc = T.alloc_local((WM, WN), "float32", layout=acc_frag)
        Tx.warp.fill(acc, 0.0)

        def load_fragments(regs, stage, kk):
            Tx.warp.copy(regs[0], As[stage * BM + wm:stage * BM + wm + WM, kk * 16:kk * 16 + 16])
            Tx.warp.copy(regs[1], Bs[stage * BN + wn:stage * BN + wn + WN, kk * 16:kk * 16 + 16])

        def issue_rows(t, stage, piece):
            smem, gmem, rows, base = (As, A, BM, m0) if piece[0] == "A" else (Bs, B, BN, n0)
            r, n = piece[1], piece[2]
            Tx.cta.copy_async(smem[stage * rows + r:stage * rows + r + n, :],
                              gmem[base + r:base + r + n, t * BK:t * BK + BK])

        def issue_tile(t, stage):
            for piece in pieces:
                issue_rows(t, stage, piece)

        # Prologue: the first STAGES - 1 k-tiles in flight, the first fragments loaded.
        for s in T.unroll(STAGES - 1):
            if s < k_tiles:
                issue_tile(s, s)
            T.ptx.cp_async.commit_group()
        T.ptx.cp_async.wait_group(STAGES - 2)
        T.cuda.cta_sync()
        load_fragments(frags[0], 0, 0)

        # Main loop (CUTLASS's multistage schedule): at the last k-step of tile kt, wait for
        # tile kt + 1 and pass the barrier, so that its first fragments load while the last
        # MMAs of tile kt run; at the first k-step, refill the stage every warp left at that
        # barrier (the one tile kt - 1 used) with tile kt + STAGES - 1.
        for kt in T.serial(k_tiles):
            st = kt % STAGES
            for kk in T.unroll(KK):
                if kk == KK - 1:
                    T.ptx.cp_async.wait_group(STAGES - 2)
                    T.cuda.cta_sync()
                if kk + 1 < KK:
                    load_fragments(frags[(kk + 1) % 2], st, kk + 1)
                else:
                    load_fragments(frags[(kk + 1) % 2], (kt + 1) % STAGES, 0)
                if kk < copy_steps:
                    # Tile kt + STAGES - 1, a share at each of the first k-steps (fewer LSU
                    # bursts); committed before the wait at the last k-step counts groups.
                    nxt = kt + (STAGES - 1)
                    if nxt < k_tiles:
                        for piece in pieces[kk::copy_steps]:
                            issue_rows(nxt, nxt % STAGES, piece)
                    if kk == copy_steps - 1:
                        T.ptx.cp_async.commit_group()
                A_f, B_f = frags[kk % 2]
                Tx.warp.gemm(acc, A_f, B_f, acc, transpose_B=True, beta=1.0)

        T.ptx.cp_async.wait_group(0)
        out = T.alloc_local((WM, WN), dtype, layout=acc_frag)
        Tx.warp.cast(out, acc)
        if stage_output:
            # Through shared memory (the A stages, free once every warp passed the barrier):
            # stmatrix in, then 16-byte stores of whole rows, coalesced across the CTA.
            T.cuda.cta_sync()
            Cs = As.view(BM, BN, layout=c_smem)
            Tx.warp.copy(Cs[wm:wm + WM, wn:wn + WN], out)
            T.cuda.cta_sync()
            Tx.cta.copy(D[m0:m0 + BM, n0:n0 + BN], Cs)
        else:
            Tx.warp.copy(D[m0 + wm:m0 + wm + WM, n0 + wn:n0 + wn + WN], out)

    return gemm_mma_sync
