"""The FP8 GEMM on Hopper: D = (A . B^T) scaled, with A (M x K) and B (N x K) of 8-bit floats
(float8_e4m3fn / float8_e5m2, mixed as wished), fp32 accumulation and a bfloat16 or float16 D.

Three kinds of scales, as torch._scaled_mm and DeepSeek-V3 take them (A ~ SA * A8, B ~ SB * B8):

    "tensor"   SA (1,), SB (1,)          D = SA SB (A8 . B8^T)
    "row"      SA (M, 1), SB (N,)        D[m, n] = SA[m] SB[n] (A8 . B8^T)[m, n]
    "block"    SA (M, ceil(K / 128)),    D[m, n] = sum over k-blocks b of SA[m, b] SB[n / 128, b]
               SB (ceil(N / 128), ceil(K / 128))        times (A8 . B8^T over block b)[m, n]

(A scaled per 1 x 128, B per 128 x 128: DeepSeek-V3's fine-grained quantization.)

The kernel is the hgemm_v6 / v7 mechanism from the shared parts (tilemlir/kernels/parts): one
CTA per SM walking the output tiles (TileSchedule, run-time M), a TMA producer warpgroup filling
a STAGES-deep ring of A and B k-tiles (GemmStages), BM / 64 consumer warpgroups issuing wgmma
kind f8 (m64nBNk32), and the TMA-store epilogue (TmaStore; StagedStore or DirectStore for rows
of D that are not whole 16-byte units). A k-tile is BK = 128 elements: one 128-byte swizzle row
per row of a tile, what one TMA box writes. With CLUSTER (v7's 2x1 clusters) two CTAs computing
vertically adjacent tiles each load half of their common B tile and multicast it into both.

Where the scales act:
  - tensor and row scales commute with the sum over K, so they scale the fp32 accumulator
    once per tile, in the epilogue, before the cast (row: the tile's 64 rows of SA in the
    accumulator's column layout, EPI_SUB columns of SB at a time in its row layout);
  - block scales change every 128 elements of K, i.e. every k-tile: two-level accumulation
    (GemmStages.consume_promoted; PROMOTE=True does the same for tensor and row scales). Each
    k-tile's MMAs accumulate into a register tile `part` from zero; once they are done,
    part * (SA[rows, kt] x SB[n block, kt]) is added into the fp32 accumulator (one FMA per
    element). This also bounds the error of the tensor cores' own FP8 accumulation, whose
    precision is limited, to one k-tile's 128 products (DeepSeek-V3 report, section 3.3.2).
    The k-tile's scales are loaded from global memory between the MMAs' issue and their wait.
    part holds 128 columns (one B scale block), so a 128 x 256 tile takes each k-tile
    in two halves: a half's MMAs, their wait and their promotion, while the other consumer
    warpgroup's MMAs keep the tensor cores busy; acc and part fit the registers (128 + 64 per
    thread; the epilogue does not overlap the next tile there, whose D tile would need 64
    more).

Edges: TMA reads zeros past M, N and K and clips the stores past M and N; scale loads are masked
(zeros past M and N). TMA needs K a multiple of 16 (16-byte rows of 8-bit elements, as
torch._scaled_mm requires): PRODUCER="cp_async" loads any K with masked cp.async instead; the
TMA epilogue needs N a multiple of 8 (16-bit D): EPILOGUE="staged" or "direct" stores any N
(the front door, scaled_mm, picks as parts.unaligned_epilogue says).
"""

import math

import tilemlir.lang as T
from tilemlir.kernels.parts import (Barriers, ClusterPair, ShapeError, TileSchedule,
                                    check_epilogue_columns, check_pair, check_ragged_gemm,
                                    check_staging, consumer_regs, epilogue_store, k_tile_stages,
                                    producer_regs, warp_specialized)
from tilemlir.lang import wgmma_accumulator_layout

Tx = T.tile

F8_DTYPES = ("float8_e4m3fn", "float8_e5m2")
OUT_DTYPES = ("bfloat16", "float16")
SCALINGS = ("tensor", "row", "block")
SCALE_BLOCK = 128               # the block scales' extent along K (A: 1 x 128, B: 128 x 128)
BK = 128                        # one 128-byte swizzle row of 8-bit elements


def scale_shapes(M, N, K, scaling: str) -> tuple[tuple, tuple]:
    """The shapes of the kernel's SA and SB for `scaling` (M may be a run-time dim)."""
    if scaling == "tensor":
        return (1,), (1,)
    if scaling == "row":
        return (M, 1), (N,)
    k_blocks = math.ceil(K / SCALE_BLOCK)
    return (M, k_blocks), (math.ceil(N / SCALE_BLOCK), k_blocks)


class BlockScales:
    """consume_promoted's hook for block scales, the part 128 columns wide (one B block):
    fetch(kt) loads this warpgroup's 64 rows of SA's column kt (the accumulator's column
    layout: the two rows each thread holds) and multiplies them by SB[n / 128, kt] of each of
    the tile's B blocks (the last block's where the tile runs past N), while the k-tile's
    first MMAs run; add(acc, part, kt, c0) adds part times the scales of the block at column
    c0 into acc (one FMA each)."""

    def __init__(self, SA, SB, M: int, N: int, sa, scales):
        self.SA, self.SB, self.M = SA, SB, M
        self.last_block = (N - 1) // SCALE_BLOCK
        self.sa, self.scales = sa, scales       # registers: SA's column, SA x SB per B block
        self.m0, self.n0, self.row = 0, 0, 0

    def at(self, m0, n0, row):
        """The tile (at m0, n0) and this warpgroup's first row in it, for the next k-tiles."""
        self.m0, self.n0, self.row = m0, n0, row

    @T.macro
    def fetch(self, kt):
        r0 = self.m0 + self.row
        Tx.wg.copy(self.sa, self.SA[r0:r0 + 64, kt:kt + 1], bounds=(self.M - r0, 1))
        for b in T.unroll(len(self.scales)):
            nb = T.min(self.n0 // SCALE_BLOCK + b, self.last_block)
            Tx.wg.mul(self.scales[b], self.sa, self.SB[nb, kt])

    @T.macro
    def add(self, acc, part, kt, c0):
        Tx.wg.mul(part, part, self.scales[c0 // SCALE_BLOCK])
        Tx.wg.add(acc, acc, part)


class Promotion:
    """consume_promoted's hook without scales (tensor and row scales, which the epilogue
    applies): add(acc, part, kt) adds the k-tile's part into acc."""

    @T.macro
    def fetch(self, kt):
        pass

    @T.macro
    def add(self, acc, part, kt, c0):
        Tx.wg.add(acc, acc, part)


def fp8_gemm(M, N, K, a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn", out_dtype="bfloat16",
             scaling="tensor", BM=128, BN=None, STAGES=None, GROUP_M=16, SMS=132, EPI_N=128,
             EPI_SUB=32, PRODUCER_REGS=None, CONSUMER_REGS=None, CLUSTER=True,
             OVERLAP_EPILOGUE=None, PROMOTE=None, PRODUCER="tma", EPILOGUE="tma"):
    """The kernel (A, B, SA, SB, D) for `scaling` (see the module docstring); A is M x K of
    a_dtype, B N x K of b_dtype, D M x N of out_dtype; SA and SB float32 of scale_shapes(...).
    M may be T.dynamic("M"). PROMOTE: two-level accumulation (GemmStages.consume_promoted:
    each k-tile's MMAs into registers of their own, added into the fp32 accumulator once done),
    always with block scales, which act there; by default off with tensor and row scales (the
    tensor cores then accumulate all of K, torch._scaled_mm's use_fast_accum=True). BN: 256,
    128 with block scales (256 takes their promotion 128 columns at a time, but spills a few
    registers in the k-loop); STAGES: as many as shared memory holds. CLUSTER: 2x1 clusters
    sharing B (hgemm_v7's multicast); OVERLAP_EPILOGUE: each tile's stores run under the next
    tile's first MMAs (v7's; by default unless a promoted tile is 256 wide, whose registers
    hold no D tile beside acc and part); EPI_SUB: the columns the row scales multiply at a
    time.
    PRODUCER="cp_async" loads the k-tiles with the producer warpgroup's masked cp.async
    (parts.CpAsyncStages: any K, no cluster); EPILOGUE="direct" stores D from registers with
    masked stores (parts.DirectStore: any N), "staged" through padded staging rows in 16-byte
    stores (parts.StagedStore: any N)."""
    kernel = "fp8_gemm"
    for name, value, allowed in (("a_dtype", a_dtype, F8_DTYPES), ("b_dtype", b_dtype, F8_DTYPES),
                                 ("out_dtype", out_dtype, OUT_DTYPES),
                                 ("scaling", scaling, SCALINGS)):
        if value not in allowed:
            raise ShapeError(f"{kernel}: {name} must be one of {allowed}, got {value!r}")
    block = scaling == "block"
    if PROMOTE is None:
        PROMOTE = block
    if block and not PROMOTE:
        raise ShapeError(f"{kernel}: block scales act at the promotion: PROMOTE must be True")
    if BN is None:
        BN = SCALE_BLOCK if block else 256
    if PROMOTE and BN not in (SCALE_BLOCK, 2 * SCALE_BLOCK):
        raise ShapeError(f"{kernel}: promotion takes BN={SCALE_BLOCK} or {2 * SCALE_BLOCK} "
                         f"({SCALE_BLOCK} columns at a time, one B scale block), got BN={BN}")
    if OVERLAP_EPILOGUE is None:
        OVERLAP_EPILOGUE = not (PROMOTE and BN > SCALE_BLOCK)
    if STAGES is None:
        STAGES = max_stages(BM, BN, EPI_N, EPILOGUE)
    cp_async = PRODUCER == "cp_async"
    if cp_async and CLUSTER:
        raise ShapeError(f"{kernel}: PRODUCER='cp_async' runs without clusters (CLUSTER=False): "
                         f"its copies do not multicast")
    PRODUCER_REGS = producer_regs(cp_async, PRODUCER_REGS)
    check_ragged_gemm(kernel, M, N, K, a_dtype, BM, BN, BK, STAGES, PRODUCER, EPILOGUE,
                      F8_DTYPES)
    check_epilogue_columns(kernel, BN, EPI_N)
    check_staging(kernel, BM, BN, BK, STAGES, EPI_N, EPILOGUE, in_bytes=1)
    if CLUSTER:
        check_pair(kernel, BN, SMS)
    if EPI_N % EPI_SUB or EPI_SUB % 8:
        raise ShapeError(f"{kernel}: EPI_SUB={EPI_SUB} must be a multiple of 8 dividing "
                         f"EPI_N={EPI_N}")
    consumers = BM // 64
    CONSUMER_REGS = consumer_regs(kernel, consumers, PRODUCER_REGS, CONSUMER_REGS)
    k_tiles = math.ceil(K / BK)
    schedule = TileSchedule(M, N, BM, BN, sms=SMS, k_tiles=k_tiles, group_m=GROUP_M,
                            pairs=CLUSTER)
    acc_layout = wgmma_accumulator_layout(64, BN)
    column = acc_layout.column_vector((64, BN))             # one value per row
    sub_row = wgmma_accumulator_layout(64, EPI_SUB).row_vector((64, EPI_SUB))
    sa_shape, sb_shape = scale_shapes(M, N, K, scaling)
    chunks = BN // EPI_N

    @T.prim_func
    def fp8_gemm(A: T.Buffer((M, K), a_dtype), B: T.Buffer((N, K), b_dtype),
                 SA: T.Buffer(sa_shape, "float32"), SB: T.Buffer(sb_shape, "float32"),
                 D: T.Buffer((M, N), out_dtype)):
        pid = T.cta_id([schedule.ctas])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        if CLUSTER:
            pair = ClusterPair(pid)
            worker, rank, peer = pair.cluster, pair.rank, pair.peer
        else:
            worker, rank, peer = pid, None, None

        pool = T.SMEMPool()
        barriers = Barriers(pool)
        ring, stages = k_tile_stages(barriers, pool, cp_async, STAGES, consumers, A, B,
                                     a_dtype, BM, BN, BK, warp, lane, (M, N, K), peer=peer,
                                     rank=rank, b_dtype=b_dtype)
        store = epilogue_store(EPILOGUE, pool, D, M, N, out_dtype, BM, EPI_N, wg, warp, lane,
                               consumers)
        pool.commit()
        barriers.init(wg, warp, lane, cluster=CLUSTER)

        def producer():
            stages.producer(schedule, worker, 0 if rank is None else rank)

        def consumer():
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            out = T.alloc_local((64, BN), out_dtype, layout=acc_layout)
            if scaling == "tensor":
                scale: T.float32 = SA[0] * SB[0]
            if scaling == "row":
                sa = T.alloc_local((64, 1), "float32", layout=column)
                sb = T.alloc_local((EPI_SUB,), "float32", layout=sub_row)
            if PROMOTE:
                part = T.alloc_local((64, SCALE_BLOCK), "float32",
                                     layout=wgmma_accumulator_layout(64, SCALE_BLOCK))
                promotion = Promotion()
            if block:
                sa = T.alloc_local((64, 1), "float32", layout=column)
                scaled = [T.alloc_local((64, 1), "float32", layout=column)
                          for _ in range(BN // SCALE_BLOCK)]
                promotion = BlockScales(SA, SB, M, N, sa, scaled)

            def store_pending(j):
                # chunk j of the tile `out` holds, under the next tile's MMAs
                if pending:
                    store.chunk(out, row, pm0, pn0, j * EPI_N)

            def apply_scales(m0, n0):
                # acc *= the tile's tensor or row scales (block scales are in it already)
                if scaling == "tensor":
                    Tx.wg.mul(acc, acc, scale)
                if scaling == "row":
                    r0 = m0 + row
                    Tx.wg.copy(sa, SA[r0:r0 + 64, 0:1], bounds=(M - r0, 1))
                    for s0 in T.unroll(0, BN, EPI_SUB):
                        x = acc[:, s0:s0 + EPI_SUB]
                        c0 = n0 + s0
                        Tx.wg.copy(sb, SB[c0:c0 + EPI_SUB], bounds=(N - c0,))
                        Tx.wg.mul(x, x, sa)
                        Tx.wg.mul(x, x, sb)

            it: T.int32 = 0
            pending: T.boolean = False       # `out` holds a tile not yet stored, at pm0, pn0
            pm0: T.int32 = 0
            pn0: T.int32 = 0
            for u in schedule.walk(worker):
                t, k_begin, k_end, _ = schedule.unit(u)
                m0, n0 = schedule.origin(t, 0 if rank is None else rank)
                if PROMOTE:
                    if block:
                        promotion.at(m0, n0, row)
                    if OVERLAP_EPILOGUE:
                        it = stages.consume_promoted(acc, part, row, it, k_begin, k_end,
                                                     promotion, chunks, store_pending)
                    else:
                        it = stages.consume_promoted(acc, part, row, it, k_begin, k_end,
                                                     promotion)
                elif OVERLAP_EPILOGUE:
                    it = stages.consume(acc, row, it, k_begin, k_end, chunks, store_pending)
                else:
                    it = stages.consume(acc, row, it, k_begin, k_end)
                done: T.boolean = m0 < M      # a pair's tile past M stores nothing
                if done:
                    apply_scales(m0, n0)
                    Tx.wg.cast(out, acc)
                    if not OVERLAP_EPILOGUE:
                        store.tile(out, row, m0, n0)
                if OVERLAP_EPILOGUE:
                    pending = done
                    pm0 = m0
                    pn0 = n0
            if OVERLAP_EPILOGUE:
                for j in T.unroll(chunks):
                    store_pending(j)            # the last tile's, under no MMAs
            store.await_staging()

        warp_specialized(wg, warp, PRODUCER_REGS, CONSUMER_REGS, producer, consumer,
                         whole_warpgroup=cp_async)

        if CLUSTER:
            T.cuda.cluster_sync()       # no CTA exits while its peer may still signal or write it

    return fp8_gemm


def max_stages(BM: int, BN: int, EPI_N: int = 128, epilogue: str = "tma") -> int:
    """The most k-tile stages (of 8-bit A and B, BK = 128) that fit shared memory next to the
    mbarriers and the epilogue's staging buffer (at most 8)."""
    from tilemlir.kernels.parts.checks import BARRIER_BYTES, SHARED_MEMORY_BYTES, staging_bytes
    staging = staging_bytes(epilogue, BM, EPI_N)
    return min(8, (SHARED_MEMORY_BYTES - BARRIER_BYTES - staging) // ((BM + BN) * BK))
