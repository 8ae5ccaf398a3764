"""A Hopper GEMM for a small M (decode: M <= 64), on the shared parts.

    D[m, n] = sum_k A[m, k] * B[n, k]          A: M x K, B: N x K, D: M x N

wgmma's M side is 64 rows, so a tile of D of M = 1 rows wastes 63 of them. Swapped, the product
is D^T = B A^T: B's rows (N of them: thousands) fill the 64-row side, and A's M rows, padded to
MPAD (a multiple of 8, wgmma's n), the other. Each CTA then streams BN rows of B through a TMA
ring, with A's MPAD rows of the same k-tile beside them (TMA reads zeros past A's M rows), and
its consumer warpgroups keep a 64 x MPAD fp32 accumulator each. The roof is reading B once at
the device's bandwidth; A and D are small.

N / BN row tiles are fewer than the SMs for most decode shapes (N = 4096, BN = 128: 32), so K
is split as well (SPLIT_K units per tile, each a run of the k-tiles: parts.SplitK sums the
fp32 partials of a tile in split order) and the persistent grid walks the units. The epilogue
stores the accumulator transposed, straight from registers: its register tile seen as MPAD x 64
(the same registers, the dims swapped) goes to D's rows 0 .. M with masked stores.

M may be known only at run time (`T.dynamic("M")`, within MPAD): one compile per MPAD serves
every M up to it.

SWAP=True is the same kernel for a small N instead (N <= 64, any M: a narrow product such as an
MoE router's logits, or a matrix-vector product): A's rows are the 64-row side and B's N rows,
padded to MPAD, the other, so the accumulator is D's tile as it is (64 rows of D by MPAD
columns, stored with masked stores); M may then be known only at run time.
"""


import math

import tilemlir.lang as T
from tilemlir.kernels.parts import (Barriers, ShapeError, SplitK,
                                    TileSchedule, check_gemm, check_splits, consumer_regs,
                                    k_tile_stages, producer_regs, split_k_buffers,
                                    warp_specialized)
from tilemlir.lang import wgmma_accumulator_layout

Tx = T.tile

MPADS = (8, 16, 24, 32, 40, 48, 56, 64)        # wgmma n for M rows of A: multiples of 8


def mpad_for(M: int) -> int:
    """The smallest wgmma n (a multiple of 8) holding M rows."""
    if isinstance(M, bool) or not isinstance(M, int) or not 1 <= M <= MPADS[-1]:
        raise ShapeError(f"hgemm_decode: M={M!r} must be an integer from 1 to {MPADS[-1]}")
    return next(p for p in MPADS if p >= M)


def hgemm_decode(M, N, K, dtype="float16", MPAD=None, BN=128, BK=64, STAGES=8, SPLIT_K=1,
                 SMS=132, PRODUCER_REGS=None, CONSUMER_REGS=None, PRODUCER="tma", SWAP=False):
    """D = A @ B^T for M <= MPAD <= 64 (M an int, or a run-time dim with MPAD given): BN rows
    of B per tile (BN / 64 consumer warpgroups), SPLIT_K units per tile, a persistent grid of
    at most SMS CTAs. With SPLIT_K > 1 the kernel takes (A, B, D, W, C) as hgemm_v6 does
    (decode_buffers_shapes). PRODUCER="cp_async": the producer warpgroup loads the k-tiles
    with masked cp.async (K not a multiple of 8; parts.CpAsyncStages). SWAP=True: the roles
    of M and N exchanged (N <= MPAD <= 64, BN rows of A per tile; M may be a run-time dim)."""
    kernel = "hgemm_decode"
    small, big = (N, M) if SWAP else (M, N)          # B's rows (SWAP) or A's pad to MPAD
    run_time_small = isinstance(small, T.DimExpr)
    if MPAD is None:
        if run_time_small:
            raise ShapeError(f"{kernel}: a run-time M needs MPAD (the rows it may reach)")
        MPAD = mpad_for(small)
    if MPAD not in MPADS or (not run_time_small and not 1 <= small <= MPAD):
        raise ShapeError(f"{kernel}: MPAD={MPAD!r} must be one of {MPADS} and hold "
                         f"{'N' if SWAP else 'M'}={small}")
    whole_big = BN if isinstance(big, T.DimExpr) else BN * -(-big // BN)
    check_gemm(kernel, whole_big, MPAD, K, dtype, BN, MPAD, BK, STAGES, PRODUCER)
    cp_async = PRODUCER == "cp_async"
    PRODUCER_REGS = producer_regs(cp_async, PRODUCER_REGS)
    consumers = BN // 64
    CONSUMER_REGS = consumer_regs(kernel, consumers, PRODUCER_REGS, CONSUMER_REGS)
    k_tiles = math.ceil(K / BK)
    check_splits(kernel, "SPLIT_K", SPLIT_K, K, k_tiles)
    # The tiles of D^T (SWAP: of D): `big` / BN rows of one MPAD-wide column.
    schedule = TileSchedule(big, MPAD, BN, MPAD, sms=SMS, k_tiles=k_tiles, group_m=1,
                            split_k=SPLIT_K)
    split = SPLIT_K > 1
    w_shape, c_shape = split_k_buffers(schedule.split_tiles, SPLIT_K, BN, MPAD)
    acc_layout = wgmma_accumulator_layout(64, MPAD)
    out_t_layout = acc_layout.permute_by_groups((64, MPAD), (1, 0))     # the same registers

    @T.prim_func
    def hgemm_decode(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                     D: T.Buffer((M, N), dtype),
                     W: T.Buffer(w_shape, "float32") if split else None,
                     C: T.Buffer(c_shape, "int32") if split else None):
        pid = T.cta_id([schedule.ctas])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])

        pool = T.SMEMPool()
        barriers = Barriers(pool)
        # B's rows are the product's "A" (wgmma's 64-row side), A's rows its "B" (n = MPAD);
        # SWAP: A's and B's own roles
        wide, narrow = (A, B) if SWAP else (B, A)
        ring, stages = k_tile_stages(barriers, pool, cp_async, STAGES, consumers, wide, narrow,
                                     dtype, BN, MPAD, BK, warp, lane, (big, small, K))
        pool.commit()
        barriers.init(wg, warp, lane)

        def producer():
            stages.producer(schedule, pid)

        def consumer():
            row = (wg - 1) * 64
            acc = T.alloc_local((64, MPAD), "float32", layout=acc_layout)
            out = T.alloc_local((64, MPAD), dtype, layout=acc_layout)
            split_k = SplitK(W, C, BN, consumers, wg, warp, lane) if split else None

            def write_back(n0, _):
                # D[m, n0 + row + i] = acc[i, m], for m < M and n < N (the swapped product's
                # tile origin: B's rows first); SWAP: D[n0 + row + i, n] = acc[i, n]
                Tx.wg.cast(out, acc)
                n1 = n0 + row
                if SWAP:
                    Tx.wg.copy(D[n1:n1 + 64, 0:MPAD], out, bounds=(M - n1, N))
                else:
                    out_t = out.view(MPAD, 64, layout=out_t_layout)
                    Tx.wg.copy(D[0:MPAD, n1:n1 + 64], out_t, bounds=(M, N - n1))

            stages.consume_units(schedule, pid, acc, row, write_back, split_k, SPLIT_K)

        warp_specialized(wg, warp, PRODUCER_REGS, CONSUMER_REGS, producer, consumer,
                         whole_warpgroup=cp_async)

    return hgemm_decode


def decode_buffers_shapes(N, BN=128, MPAD=8, SPLIT_K=1, SMS=132, K=None):
    """Shapes of hgemm_decode's fp32 workspace W and int32 counters C (SPLIT_K > 1)."""
    schedule = TileSchedule(N, MPAD, BN, MPAD, sms=SMS, group_m=1, split_k=SPLIT_K)
    return split_k_buffers(schedule.split_tiles, SPLIT_K, BN, MPAD)


# The model's cost of a split of K: its fix-up and its pipeline's prologue, in k-tile steps
# of a 128-row tile. Fitted to every candidate timed at N = 4096 and 14336, K = 4096, M = 1
# to 64 (results/2026-12-02-session3/decode.md): SPLIT_K = 2 ran faster than 4 and than 1 at
# N = K = 4096 (M up to 16), which puts it between 8 and 32; with 2 the model chose splits of
# 4 there.
SPLIT_COST = 12
# Where A has at most this many rows (MPAD), a k-tile step of a 64-row tile of B costs what a
# 128-row one does: the kernel waits on B's bytes, and a CTA with half the rows in flight
# reads them no faster. At N = 14336, 112 tiles of 128 rows ran 1.21-1.23x faster than 224
# (or 896 split) tiles of 64 (same results file). With more rows of A the MMAs count, and
# 64-row tiles cost half (M = 32 and 64 ran fastest on them).
NARROW_TILE_MPAD = 16
# Too few units leave DRAM idle: a CTA streams its slice at a bounded rate, so below the
# units that saturate DRAM each k-tile step costs up to 1 + UNDERFILL_COST times more (in
# proportion to the shortfall). The TMA producer saturates it from about 40% of the SMs
# (N = 14336: 112 tiles unsplit ran as fast as any split); the cp.async producer (K not a
# multiple of 8: each thread's realigned loads, then its stores) needs every SM, and its
# k-tile step costs CP_ASYNC_STEP_COST TMA steps. Fitted to every candidate timed on 16
# decode and narrow-N shapes with odd and even K (results/2026-12-03-session8/runA/
# decode-candidates.md: the model's pick 1.74x the best's time before, 1.06x after) without
# changing a pick of the decode suite (N, K = 4096 .. 128256, K even).
UNDERFILL_COST = 6
TMA_SATURATING_SMS = 0.4
CP_ASYNC_STEP_COST = 4


def decode_config(M: int, N: int, K: int, sms: int = 132) -> dict:
    """hgemm_decode's tile rows and split for the shape: enough units to keep every SM reading
    B (the roof), in as few waves as whole, without splits so fine that their fix-ups (and
    prologues) dominate: the fewest k-tile steps per SM, a split costing SPLIT_COST, a step
    dearer where too few units read (UNDERFILL_COST)."""
    return decode_candidates(M, N, K, sms)[0]


def decode_candidates(M: int, N: int, K: int, sms: int = 132) -> list[dict]:
    """hgemm_decode's configurations worth trying, best modelled first (see decode_config):
    BN 128 or 64, and splits of K while the tiles fill fewer than two waves."""
    k_tiles = math.ceil(K / 64)
    mpad = mpad_for(M)
    cp_async = K % 8 != 0
    saturating = sms if cp_async else TMA_SATURATING_SMS * sms
    scored = []
    for BN in (128, 64):
        tiles = math.ceil(N / BN)
        step = 1.0 if mpad <= NARROW_TILE_MPAD else BN / 128
        if cp_async:
            step *= CP_ASYNC_STEP_COST
        for split in range(1, 17):
            if split > k_tiles or (split > 1 and tiles >= 2 * sms):
                break
            units = tiles * split
            underfill = 1 + UNDERFILL_COST * max(0.0, 1 - units / saturating)
            steps = math.ceil(units / sms) * math.ceil(k_tiles / split) * step * underfill
            scored.append((steps + SPLIT_COST * split, -BN, split))
    configs = []
    for _, neg_bn, split in sorted(scored):
        config = dict(KERNEL="hgemm_decode", MPAD=mpad, BN=-neg_bn, SPLIT_K=split,
                      STAGES=8 if neg_bn == -128 else 12)
        if cp_async:
            config["PRODUCER"] = "cp_async"
        configs.append(config)
    return configs
