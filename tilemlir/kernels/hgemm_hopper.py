"""Seed 000's roadmap on Hopper (sm_90a), one mechanism per step, after hgemm_wgmma_v3:

  v4  TMA + a multi-stage mbarrier pipeline. One elected thread keeps STAGES - 1 k-tiles in
      flight with TMA loads that complete on a `full` barrier per stage (arrive_expect_tx
      counts their bytes); the consumer warpgroups wait on it, issue wgmma, keep one wgmma
      group in flight (wait_group 1) and free the stage the previous group read.
  v5  Warp specialization: warpgroup 0 is the producer (it only issues TMA, with its register
      budget lowered by setmaxnreg), the consumer warpgroups only compute (budget raised).
      Stages are freed through an `empty` barrier per stage, one arrival per consumer.
  v6  Persistent tiles: one CTA per SM walks the output tiles; the producer runs ahead into the
      next tile while the consumers write the last one back (stmatrix -> shared -> TMA store).
      With SPLIT_K > 1 the CTAs walk tiles x splits instead, for shapes with fewer tiles than
      SMs: each unit accumulates a run of K, and the last unit of a tile to finish adds the
      others' fp32 partials (from a workspace; a gpu-scope counter per tile says who is last).
  v7  2x1 clusters: the two CTAs of a cluster compute vertically adjacent tiles, which need the
      same B; each loads half of it and multicasts that half into both CTAs' stages, so B's
      traffic from L2 halves. A stage is freed by the consumers of both CTAs.
  v8  Split-K for shapes with few tiles, reduced in 2-CTA clusters: the pair of CTAs that
      accumulate two runs of K of one tile hand each other half of their partial sums (through
      L2, ordered by cluster-scope mbarriers), so the fix-up is shared instead of one SM
      reading every partial.

D[m, n] = sum_k A[m, k] * B[n, k]: A is M x K, B is N x K (both K-major, as the seeds store
them), D is M x N in the input type, accumulated in fp32. Each CTA computes a BM x BN tile with
BM / 64 consumer warpgroups (64 rows each, wgmma m64nBNk16). TMA zero-fills reads past the
edges, so K needs no padding; v4 and v5 write whole tiles from registers, so M and N must be
multiples of the tile, while v6's to v8's TMA stores are clipped at the edges. Tiles are
visited in grouped order (GROUP_M tile rows swept column by column) so that neighbouring CTAs
share A and B in L2.

v4 and v5 are written out whole, as the seed's steps are, so that each reads on its own. v6 to
v8 are built from the shared Hopper parts (tilemlir/kernels/parts: the stage ring, the GEMM
k-loop, the TMA-store epilogue, the split-K fix-up, the tile scheduler), so that each reads as
its mechanism.
"""

import math

import tilemlir.lang as T
from tilemlir.kernels.parts import (Barriers, ClusterPair,
                                    GemmStages, ShapeError, SplitK, TileSchedule,
                                    TmaStore, check_epilogue_columns, epilogue_store,
                                    check_gemm, check_pair, check_ragged_gemm,
                                    check_splits, check_staging, consumer_regs, k_tile_stages,
                                    producer_regs, split_k_buffers, tile_origin,
                                    warp_specialized)
from tilemlir.lang import wgmma_accumulator_layout

Tx = T.tile

# hgemm_v7's widest tile: each CTA of the pair loads BN / 2 rows of B (one TMA box, at most 256)
# and a consumer holds BN / 2 fp32 accumulators a thread (160 of its 232 registers at 320:
# 128 x 320 tiles make one wave where 128 x 256 leave a tail, 1280 x 4096 as cuBLAS does).
V7_MAX_BN = 320
# Columns hgemm_v8's pair reduction adds and stores per step (32 fp32 registers a thread).
V8_STEP_N = 64


def hgemm_v4(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8):
    """TMA loads into a STAGES-deep ring of shared-memory stages, tracked by mbarriers."""
    check_gemm("hgemm_v4", M, N, K, dtype, BM, BN, BK, STAGES)
    consumers = BM // 64
    tiles_m, tiles_n, k_tiles = M // BM, N // BN, math.ceil(K / BK)
    group_m = math.gcd(GROUP_M, tiles_m)
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    acc_layout = wgmma_accumulator_layout(64, BN)
    stage_bytes = (BM + BN) * BK * 2

    @T.prim_func
    def hgemm_v4(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([tiles_m * tiles_n])
        wg = T.warpgroup_id([consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        m0, n0 = tile_origin(pid, tiles_m, tiles_n, group_m, BM, BN)

        pool = T.SMEMPool()
        full = pool.alloc((STAGES,), "uint64", align=8)
        pool.move_base_to(1024)
        As = pool.alloc((STAGES * BM, BK), dtype, layout=a_layout)
        Bs = pool.alloc((STAGES * BN, BK), dtype, layout=b_layout)
        pool.commit()

        if wg == 0:
            if warp == 0:
                if lane == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init(full.ptr_to([s]), 1)
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()

        def load(kt):
            s = kt % STAGES
            T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
            Tx.copy_async(As[s * BM:s * BM + BM, :], A[m0:m0 + BM, kt * BK:kt * BK + BK],
                          full.ptr_to([s]))
            Tx.copy_async(Bs[s * BN:s * BN + BN, :], B[n0:n0 + BN, kt * BK:kt * BK + BK],
                          full.ptr_to([s]))

        # Prologue: one thread starts the first STAGES - 1 k-tiles.
        if wg == 0:
            if warp == 0:
                if T.ptx.elect_sync():
                    for kt in T.unroll(STAGES - 1):
                        if kt < k_tiles:
                            load(kt)

        acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
        Tx.wg.fill(acc, 0.0)
        row = wg * 64
        for kt in T.serial(k_tiles):
            s = kt % STAGES
            T.ptx.mbarrier.try_wait(full.ptr_to([s]), (kt // STAGES) % 2)
            Tx.wg.gemm_async(acc, As[s * BM + row:s * BM + row + 64, :],
                             Bs[s * BN:s * BN + BN, :], accum=True)
            # One group in flight: the group of k-tile kt - 1 is done, so every consumer has
            # finished reading its stage once all pass the barrier; refill that stage.
            T.ptx.wgmma.wait_group(1)
            T.cuda.cta_sync()
            if wg == 0:
                if warp == 0:
                    if T.ptx.elect_sync():
                        if kt + STAGES - 1 < k_tiles:
                            load(kt + STAGES - 1)
        T.ptx.wgmma.wait_group(0)

        out = T.alloc_local((64, BN), dtype, layout=acc_layout)
        Tx.wg.cast(out, acc)
        Tx.wg.copy(D[m0 + row:m0 + row + 64, n0:n0 + BN], out)

    return hgemm_v4


def hgemm_v5(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8,
             PRODUCER_REGS=40, CONSUMER_REGS=None):
    """Warp-specialized: a producer warpgroup issues TMA, BM / 64 consumer warpgroups compute."""
    check_gemm("hgemm_v5", M, N, K, dtype, BM, BN, BK, STAGES)
    consumers = BM // 64
    CONSUMER_REGS = consumer_regs("hgemm_v5", consumers, PRODUCER_REGS, CONSUMER_REGS)
    tiles_m, tiles_n, k_tiles = M // BM, N // BN, math.ceil(K / BK)
    group_m = math.gcd(GROUP_M, tiles_m)
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    acc_layout = wgmma_accumulator_layout(64, BN)
    stage_bytes = (BM + BN) * BK * 2

    @T.prim_func
    def hgemm_v5(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([tiles_m * tiles_n])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        m0, n0 = tile_origin(pid, tiles_m, tiles_n, group_m, BM, BN)

        pool = T.SMEMPool()
        full = pool.alloc((STAGES,), "uint64", align=8)     # TMA bytes landed
        empty = pool.alloc((STAGES,), "uint64", align=8)    # every consumer done reading
        pool.move_base_to(1024)
        As = pool.alloc((STAGES * BM, BK), dtype, layout=a_layout)
        Bs = pool.alloc((STAGES * BN, BK), dtype, layout=b_layout)
        pool.commit()

        if wg == 0:
            if warp == 0:
                if lane == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init(empty.ptr_to([s]), consumers)
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()

        if wg == 0:
            # --- producer: one thread keeps the ring full ---
            T.ptx.setmaxnreg(PRODUCER_REGS, increase=False)
            if warp == 0:
                if T.ptx.elect_sync():
                    for kt in T.serial(k_tiles):
                        s = kt % STAGES
                        # A fresh barrier's preceding phase (parity 1) counts as complete,
                        # so the first round of waits passes at once.
                        T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (kt // STAGES + 1) % 2)
                        T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                        Tx.copy_async(As[s * BM:s * BM + BM, :],
                                      A[m0:m0 + BM, kt * BK:kt * BK + BK], full.ptr_to([s]))
                        Tx.copy_async(Bs[s * BN:s * BN + BN, :],
                                      B[n0:n0 + BN, kt * BK:kt * BK + BK], full.ptr_to([s]))
        else:
            # --- consumers: 64 rows each ---
            T.ptx.setmaxnreg(CONSUMER_REGS, increase=True)
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            Tx.wg.fill(acc, 0.0)
            row = (wg - 1) * 64
            for kt in T.serial(k_tiles):
                s = kt % STAGES
                T.ptx.mbarrier.try_wait(full.ptr_to([s]), (kt // STAGES) % 2)
                Tx.wg.gemm_async(acc, As[s * BM + row:s * BM + row + 64, :],
                                 Bs[s * BN:s * BN + BN, :], accum=True)
                # One group in flight; the previous one is done: free its stage.
                T.ptx.wgmma.wait_group(1)
                if kt > 0:
                    if warp == 0:
                        if lane == 0:
                            T.ptx.mbarrier.arrive(empty.ptr_to([(kt + STAGES - 1) % STAGES]))
            T.ptx.wgmma.wait_group(0)

            out = T.alloc_local((64, BN), dtype, layout=acc_layout)
            Tx.wg.cast(out, acc)
            Tx.wg.copy(D[m0 + row:m0 + row + 64, n0:n0 + BN], out)

    return hgemm_v5


def split_k_workspace_shape(M, N, BM, BN, SPLIT_K) -> tuple[int, int]:
    """hgemm_v6's fp32 workspace for SPLIT_K > 1: one BM x BN block per (tile, split) unit."""
    return split_k_buffers(math.ceil(M / BM) * math.ceil(N / BN), SPLIT_K, BM, BN)[0]


def split_k_counters_shape(M, N, BM, BN) -> tuple[int]:
    """hgemm_v6's split-K counters: one per (tile, consumer warpgroup); zero before the first
    launch, and the kernel leaves them zero."""
    return split_k_buffers(math.ceil(M / BM) * math.ceil(N / BN), 1, BM, BN)[1]


def v7_split_buffers_shapes(M, N, BM=128, BN=256, SMS=132, SPLIT_K=1, TAIL_SPLIT=1,
                            STREAM_K=False):
    """Shapes of hgemm_v7's fp32 workspace W (one BM x BN block per split unit of a tile with
    a slot) and int32 counters C (one per such tile and consumer warpgroup; zero before the
    first launch, and the kernel leaves them zero)."""
    schedule = TileSchedule(M, N, BM, BN, sms=SMS, split_k=SPLIT_K, tail_split=TAIL_SPLIT,
                            pairs=True, stream_k=STREAM_K)
    return split_k_buffers(schedule.split_tiles, schedule.splits, BM, BN)


def hgemm_v6(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, SMS=132,
             EPI_N=128, PRODUCER_REGS=None, CONSUMER_REGS=None, SPLIT_K=1, PRODUCER="tma",
             EPILOGUE="tma"):
    """Persistent: one CTA per SM walks the output tiles (grouped order, stride = CTAs); the
    producer runs ahead into the next tile while the consumers write the last one back through
    shared memory with TMA stores (clipped at the edges: M and N need not be multiples of the
    tile), EPI_N columns at a time so that the staging buffer leaves room for STAGES stages.
    SMS: the number of SMs (132 on the H200).

    SPLIT_K > 1 (for few tiles and long K): the work units are tiles x SPLIT_K, unit
    (tile, s) accumulating the s-th contiguous run of k-tiles. Each consumer warpgroup writes
    its fp32 partial to the workspace W (one BM x BN block per unit) and counts itself on the
    tile's counter in C; the last of the tile's units to arrive sums the SPLIT_K partials in
    split order, resets the counter and writes D through the usual epilogue (parts.split_k).
    The kernel then takes (A, B, D, W, C): W float32 of split_k_workspace_shape(...), C int32
    zeros of split_k_counters_shape(...) (tilemlir.kernels.gemm allocates both); launches
    sharing W and C must be ordered (one stream).

    Rows that are not a whole number of TMA's 16-byte units (16-bit elements): PRODUCER=
    "cp_async" loads the k-tiles with the producer warpgroup's masked cp.async instead of TMA
    (any K; parts.CpAsyncStages), EPILOGUE="direct" stores the tiles from registers with
    masked stores instead of TMA stores (any N; parts.DirectStore)."""
    check_ragged_gemm("hgemm_v6", M, N, K, dtype, BM, BN, BK, STAGES, PRODUCER, EPILOGUE)
    check_epilogue_columns("hgemm_v6", BN, EPI_N)
    check_staging("hgemm_v6", BM, BN, BK, STAGES, EPI_N, EPILOGUE)
    cp_async = PRODUCER == "cp_async"
    PRODUCER_REGS = producer_regs(cp_async, PRODUCER_REGS)
    consumers = BM // 64
    CONSUMER_REGS = consumer_regs("hgemm_v6", consumers, PRODUCER_REGS, CONSUMER_REGS)
    k_tiles = math.ceil(K / BK)
    check_splits("hgemm_v6", "SPLIT_K", SPLIT_K, K, k_tiles)
    schedule = TileSchedule(M, N, BM, BN, sms=SMS, k_tiles=k_tiles, group_m=GROUP_M,
                            split_k=SPLIT_K)
    acc_layout = wgmma_accumulator_layout(64, BN)
    split = SPLIT_K > 1
    w_shape, c_shape = split_k_buffers(schedule.split_tiles, SPLIT_K, BM, BN)

    @T.prim_func
    def hgemm_v6(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype),
                 W: T.Buffer(w_shape, "float32") if split else None,
                 C: T.Buffer(c_shape, "int32") if split else None):
        pid = T.cta_id([schedule.ctas])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])

        pool = T.SMEMPool()
        barriers = Barriers(pool)
        ring, stages = k_tile_stages(barriers, pool, cp_async, STAGES, consumers, A, B, dtype,
                                     BM, BN, BK, warp, lane, (M, N, K))
        store = epilogue_store(EPILOGUE, pool, D, M, N, dtype, BM, EPI_N, wg, warp, lane,
                               consumers)
        pool.commit()
        barriers.init(wg, warp, lane)

        def producer():
            # the k-tiles of every unit of this CTA, through one ring
            stages.producer(schedule, pid)

        def consumer():
            # 64 rows of each unit each
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            out = T.alloc_local((64, BN), dtype, layout=acc_layout)
            split_k = SplitK(W, C, BM, consumers, wg, warp, lane) if split else None

            def write_back(m0, n0):
                # the unit's tile (at m0, n0), once acc holds all of it
                Tx.wg.cast(out, acc)
                store.tile(out, row, m0, n0)

            stages.consume_units(schedule, pid, acc, row, write_back, split_k, SPLIT_K)
            store.await_staging()           # shared memory lives until the last store read it

        warp_specialized(wg, warp, PRODUCER_REGS, CONSUMER_REGS, producer, consumer,
                         whole_warpgroup=cp_async)

    return hgemm_v6


def hgemm_v7(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=16, SMS=132,
             EPI_N=128, PRODUCER_REGS=40, CONSUMER_REGS=None, CLUSTER_RELEASE=False,
             SPLIT_K=1, TAIL_SPLIT=1, OVERLAP_EPILOGUE=True, EPILOGUE="tma", STREAM_K=False):
    """2x1 clusters with TMA multicast: v6, with the CTAs launched in pairs (a cluster of 2)
    that compute two tiles sharing n0 (rows m0 and m0 + BM). Both need the same BN x BK slab of
    B per k-tile, so each CTA loads only half of it and multicasts that half into the stage of
    both CTAs: B's traffic from L2 halves. Each CTA still loads its own A tile.

    The ring is shared across the pair: a stage of CTA r is written by both producers, so
      - each CTA's `full` barrier expects the whole stage (its A, both halves of B): the peer's
        multicast half completes on it too;
      - a stage is free only when the consumers of BOTH CTAs have read it: `empty` counts
        2 x consumers arrivals, each consumer arrives on its own CTA's barrier and on the
        peer's (mapa), and the producer's wait acquires what the peer's consumers released.
        The hand-off is at CTA scope, as CUTLASS's cluster barriers are: what it orders is
        wgmma's reads of the stage, which wait_group has completed before the arrive, not
        writes that need publishing to the peer. CLUSTER_RELEASE=True makes it release/acquire
        at cluster scope instead; ptxas then puts a MEMBAR.GPU before each such arrive, once
        per k-tile, which cost 10-15% at 8192^3 on the H200
        (results/2026-12-01-hopper/v7-first.md).
    A cluster_sync after the barriers are initialised (no peer signals a barrier that does not
    exist yet) and one before exit (no CTA leaves while its peer may still write its shared
    memory or arrive on its barriers). The persistent scheduler hands out pairs of tiles in
    grouped order (GROUP_M tile rows, swept column by column); where the tile rows are odd,
    the last pair's second tile lies past M: that CTA still loads (TMA zero-fills A, and its B
    half feeds its peer) and computes, but stores nothing. SMS: the number of SMs (132 on the
    H200); the grid is a whole number of clusters, at most SMS CTAs.

    SPLIT_K > 1 as in v6, per pair: a cluster's unit is (pair, split), both CTAs accumulating
    the same run of k-tiles (so the multicast still feeds both), each then fixing up its own
    tile (W and C of v6's shapes, from v7_split_buffers_shapes); a tile past M takes no part in
    the fix-up.

    TAIL_SPLIT > 1 instead splits only the pairs past the last whole wave of clusters: the
    first pairs // clusters waves run whole, as without split-K, and the partial wave's pairs
    run as TAIL_SPLIT units each, fixed up as above. A shape with 1.2-2.5 waves of pairs then
    ends after a fraction of a wave instead of a whole one. W and C hold only those tiles
    (v7_split_buffers_shapes).

    STREAM_K=True instead deals the k-tiles of the pairs past the whole waves (and of the last
    whole wave, where fewer than half a wave are left) out evenly, one contiguous run per
    cluster, whatever the pairs' count (parts.TileSchedule's stream_k): a run may stop inside a
    pair and the next cluster's begin there, and a pair in more than one piece is fixed up as
    above (a pair in one piece needs none; at most four pieces, runs of at least a third of a
    pair's k-tiles). M may be a run-time dim. On the H200 it ran slower than TAIL_SPLIT, the
    128 x 192 / 320 widths or 64 x 128 tiles on each of 12 mid-size and few-tile-row shapes
    (0.52-0.92x cuBLAS against 0.70-1.05x for the front door's choice: every piece publishes
    a whole fp32 tile and the last reads them all back, results/2026-12-03-session10/), so the
    front door does not choose it.

    OVERLAP_EPILOGUE (the default) keeps the tensor cores busy through the epilogue: a tile's
    accumulators are cast into `out` registers as soon as its last MMA completes, and the
    next tile's first BN / EPI_N k-tiles each store one EPI_N-column chunk of `out` (stmatrix,
    TMA store) while their MMAs run. Without it the warpgroup stores every chunk before its
    next MMA, and the stages the producer filled meanwhile wait (about 4% of the consumers'
    time at 4096^3, results/2026-12-01-parity/ncu-source-v7-4096.txt).

    EPILOGUE="direct" stores from registers with masked stores instead of TMA stores, for a D
    whose rows are not a whole number of 16-byte units (any N; parts.DirectStore)."""
    check_ragged_gemm("hgemm_v7", M, N, K, dtype, BM, BN, BK, STAGES, "tma", EPILOGUE,
                      max_bn=V7_MAX_BN)
    check_pair("hgemm_v7", BN, SMS)
    check_epilogue_columns("hgemm_v7", BN, EPI_N)
    check_staging("hgemm_v7", BM, BN, BK, STAGES, EPI_N, EPILOGUE)
    consumers = BM // 64
    CONSUMER_REGS = consumer_regs("hgemm_v7", consumers, PRODUCER_REGS, CONSUMER_REGS)
    k_tiles = math.ceil(K / BK)
    for name, value in (("SPLIT_K", SPLIT_K), ("TAIL_SPLIT", TAIL_SPLIT)):
        check_splits("hgemm_v7", name, value, K, k_tiles)
    if (SPLIT_K > 1) + (TAIL_SPLIT > 1) + bool(STREAM_K) > 1:
        raise ShapeError("hgemm_v7: SPLIT_K splits every pair, TAIL_SPLIT the last wave's and "
                         "STREAM_K deals the last wave's k-tiles out: give one of them")
    schedule = TileSchedule(M, N, BM, BN, sms=SMS, k_tiles=k_tiles, group_m=GROUP_M,
                            split_k=SPLIT_K, tail_split=TAIL_SPLIT, pairs=True,
                            stream_k=bool(STREAM_K))
    if TAIL_SPLIT > 1 and schedule.whole == schedule.items:
        raise ShapeError(f"hgemm_v7: TAIL_SPLIT={TAIL_SPLIT}: the {schedule.items} pairs of "
                         f"tiles fill whole waves of {SMS // 2} clusters, so no last wave is "
                         f"left to split")
    acc_layout = wgmma_accumulator_layout(64, BN)
    handoff = "cluster" if CLUSTER_RELEASE else "cta"        # scope of the cross-CTA hand-off
    splits = schedule.splits
    split = splits > 1
    w_shape, c_shape = split_k_buffers(schedule.split_tiles, splits, BM, BN)
    chunks = BN // EPI_N                                     # epilogue stores per tile

    @T.prim_func
    def hgemm_v7(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype),
                 W: T.Buffer(w_shape, "float32") if split else None,
                 C: T.Buffer(c_shape, "int32") if split else None):
        pid = T.cta_id([schedule.ctas])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        pair = ClusterPair(pid)

        pool = T.SMEMPool()
        barriers = Barriers(pool)
        # freed by the consumers of both CTAs
        ring = barriers.ring(STAGES, consumers, peer=pair.peer, handoff=handoff)
        stages = GemmStages(pool, ring, A, B, dtype, BM, BN, BK, warp, lane, rank=pair.rank)
        store = epilogue_store(EPILOGUE, pool, D, M, N, dtype, BM, EPI_N, wg, warp, lane,
                               consumers)
        pool.commit()
        barriers.init(wg, warp, lane, cluster=True)

        def producer():
            # its A tile, and its half of B into both CTAs
            stages.producer(schedule, pair.cluster, pair.rank)

        def consumer():
            # 64 rows of each tile each; stages freed in both CTAs
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            out = T.alloc_local((64, BN), dtype, layout=acc_layout)
            if split:
                split_k = SplitK(W, C, BM, consumers, wg, warp, lane)

            def store_pending(j):
                # chunk j of the tile `out` holds (none if `pending` is False)
                if pending:
                    store.chunk(out, row, pm0, pn0, j * EPI_N)

            it: T.int32 = 0
            pending: T.boolean = False       # `out` holds a tile not yet stored, at pm0, pn0
            pm0: T.int32 = 0
            pn0: T.int32 = 0
            for u in schedule.walk(pair.cluster):
                t, k_begin, k_end, part_of = schedule.unit(u)
                live = True                     # STREAM_K: a run's missing pieces are empty
                if STREAM_K:
                    live = k_end > k_begin
                if live:
                    m0, n0 = schedule.origin(t, pair.rank)
                    # The previous tile's chunks are stored one under each of this tile's first
                    # k-tiles, while their MMAs run (OVERLAP_EPILOGUE); else `pending` is False.
                    it = stages.consume(acc, row, it, k_begin, k_end, chunks, store_pending)
                    # A tile past M (the odd pair's second) stores nothing.
                    done: T.boolean = m0 < M
                    if split:
                        if m0 < M and t >= schedule.whole:
                            # Split-K fix-up of this CTA's own tile, in its slot of W and C
                            # (every tile's with SPLIT_K, the last wave's with TAIL_SPLIT or
                            # STREAM_K, whose items in one piece need none).
                            if schedule.tail:       # TAIL_SPLIT or STREAM_K
                                slot = (t - schedule.whole) * 2 + pair.rank
                            else:
                                slot = m0 // BM * schedule.tiles_n + n0 // BN
                            if STREAM_K:
                                pieces = schedule.pieces(t)
                                if pieces > 1:
                                    done = split_k.fix_up(acc, row, slot * splits + part_of,
                                                          slot, splits, None, pieces)
                            else:
                                done = split_k.fix_up(acc, row, slot * splits + part_of, slot,
                                                      splits)
                    if done:
                        Tx.wg.cast(out, acc)
                        if not OVERLAP_EPILOGUE:
                            store.tile(out, row, m0, n0)
                    if OVERLAP_EPILOGUE:
                        pending = done
                        pm0 = m0
                        pn0 = n0
            for j in T.unroll(chunks):
                store_pending(j)                # the last tile's, under no MMAs
            store.await_staging()

        warp_specialized(wg, warp, PRODUCER_REGS, CONSUMER_REGS, producer, consumer)

        T.cuda.cluster_sync()           # no CTA exits while its peer may still signal or write it

    return hgemm_v7


def split_k_pair_counters_shape(M, N, BM, BN) -> tuple[int]:
    """hgemm_v8's counters with SPLIT_K = 4 (two clusters per tile): one per (tile, half,
    consumer warpgroup); zero before the first launch, and the kernel leaves them zero."""
    return (2 * split_k_counters_shape(M, N, BM, BN)[0],)


def hgemm_v8(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, SPLIT_K=4,
             PRODUCER_REGS=40, CONSUMER_REGS=None):
    """Split-K reduced by both CTAs of a 2-CTA cluster, for shapes with fewer output tiles
    than SMs and long K (1000 x 1000 x 8192: 32 tiles of 128 x 256 for 132 SMs). v6's split-K
    lets one unit per tile add all SPLIT_K partials, reading them through one SM's share of L2
    while the other units' SMs idle. Here the splits of a tile run in clusters of 2 CTAs
    (launched together, so they may wait for each other) that share the reduction:
      - the CTA of split s accumulates the s-th run of k-tiles, as v5 does (producer
        warpgroup, BM / 64 consumers, a STAGES-deep TMA ring of its own);
      - the CTA of cluster rank r owns column half r of the tile. Each consumer writes the
        half its peer owns to the fp32 workspace W (one BM x BN block per split, as v6's),
        then arrives on the peer consumer's `ready` barrier (mbarrier.arrive.release.cluster
        through mapa, after a warpgroup barrier so that the release covers every thread's
        stores); once its own `ready` has the peer's arrival (try_wait acquiring at cluster
        scope) it adds the peer's half to its own, in registers.
    SPLIT_K = 4 runs two clusters per tile (clusters of 4 would reduce in one step, but 32 of
    them do not fit the H200 at once: results/2026-12-01-cluster-splitk/). Each CTA then
    publishes its cluster's sum of its half in its own block of W and counts itself on the
    half's counter in C (atom.add, acq_rel at gpu scope, as v6); the second of the two to
    arrive adds the other's sum, resets the counter and writes the half. No cluster waits for
    another, so any number of waves is safe. Every sum has two terms, so it is the same
    whichever CTA adds it: the result is bitwise repeatable.
    The halves go to D through shared memory and TMA stores, 64 columns at a time (clipped at
    the edges). Each `ready` barrier completes one phase, after the peer's arrival, so no CTA
    exits while its peer may still signal it. The grid is tiles x SPLIT_K CTAs, one unit
    each (not persistent: there is no next tile to overlap). The kernel takes (A, B, D, W),
    and C with SPLIT_K = 4: W float32 of split_k_workspace_shape(M, N, BM, BN, SPLIT_K), C int32
    zeros of split_k_pair_counters_shape(M, N, BM, BN)."""
    check_ragged_gemm("hgemm_v8", M, N, K, dtype, BM, BN, BK, STAGES)
    tiles_m, tiles_n, k_tiles = math.ceil(M / BM), math.ceil(N / BN), math.ceil(K / BK)
    if isinstance(SPLIT_K, bool) or SPLIT_K not in (2, 4):
        raise ShapeError(f"hgemm_v8: SPLIT_K={SPLIT_K!r} must be 2 or 4 (one or two clusters "
                         f"of 2 CTAs per tile)")
    if SPLIT_K > k_tiles:
        raise ShapeError(f"hgemm_v8: SPLIT_K={SPLIT_K} exceeds the {k_tiles} k-tiles of K={K} "
                         f"(every split needs a k-tile)")
    STEP = V8_STEP_N
    if BN % (2 * STEP):
        raise ShapeError(f"hgemm_v8: BN={BN} must be a multiple of {2 * STEP} (each CTA of the "
                         f"pair reduces and stores half of it, {STEP} columns at a time)")
    check_staging("hgemm_v8", BM, BN, BK, STAGES, STEP)
    consumers = BM // 64
    CONSUMER_REGS = consumer_regs("hgemm_v8", consumers, PRODUCER_REGS, CONSUMER_REGS)
    tiles = tiles_m * tiles_n
    group_m = math.gcd(GROUP_M, tiles_m)
    HALF = BN // 2
    acc_layout = wgmma_accumulator_layout(64, BN)
    half_layout = wgmma_accumulator_layout(64, HALF)
    step_layout = wgmma_accumulator_layout(64, STEP)
    two_clusters = SPLIT_K == 4                 # per tile, joined by a counter
    w_shape = split_k_workspace_shape(M, N, BM, BN, SPLIT_K)
    c_shape = split_k_pair_counters_shape(M, N, BM, BN)

    @T.prim_func
    def hgemm_v8(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype), W: T.Buffer(w_shape, "float32"),
                 C: T.Buffer(c_shape, "int32") if two_clusters else None):
        pid = T.cta_id([tiles * SPLIT_K])
        T.cluster_shape([2, 1, 1])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        rank = T.cuda.cluster_ctarank()                     # the half this CTA reduces
        t = pid // SPLIT_K
        split = pid % SPLIT_K                               # (cluster, rank) of the tile
        k_begin = split * k_tiles // SPLIT_K
        k_end = (split + 1) * k_tiles // SPLIT_K
        m0, n0 = tile_origin(t, tiles_m, tiles_n, group_m, BM, BN)

        pool = T.SMEMPool()
        barriers = Barriers(pool)
        ring = barriers.ring(STAGES, consumers)
        ready = barriers.alloc(consumers)                   # the peer's half is in W
        stages = GemmStages(pool, ring, A, B, dtype, BM, BN, BK, warp, lane)
        store = TmaStore(pool, D, dtype, BM, STEP, wg, warp, lane, consumers)
        pool.commit()
        barriers.init(wg, warp, lane, cluster=True)

        def producer():
            # this CTA's run of k-tiles
            for kt in T.serial(k_begin, k_end):
                s = ring.acquire(kt - k_begin, stages.stage_bytes)
                stages.load(s, kt, m0, n0)

        def consumer():
            # 64 rows of the tile each
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            part = T.alloc_local((64, HALF), "float32", layout=half_layout)
            out = T.alloc_local((64, STEP), dtype, layout=step_layout)
            Tx.wg.fill(acc, 0.0)
            for kt in T.serial(k_begin, k_end):
                stages.k_step(acc, row, kt, kt - k_begin, k_begin)
            T.ptx.wgmma.wait_group(0)   # the last stage needs no release: nothing refills it
            if two_clusters:
                split_k = SplitK(W, C, BM, consumers, wg, warp, lane)

            mine = t * (SPLIT_K * BM) + split * BM + row     # this split's block of W
            for owner in T.unroll(2):
                if rank == owner:
                    theirs = 1 - owner                      # the peer's rank
                    cols = slice(owner * HALF, owner * HALF + HALF)
                    half = acc[:, cols]                     # the half this CTA reduces
                    # Publish the peer's half; then tell the peer's matching consumer.
                    Tx.wg.copy(W[mine:mine + 64, theirs * HALF:theirs * HALF + HALF],
                               acc[:, theirs * HALF:theirs * HALF + HALF])
                    T.cuda.bar_sync(wg, 128)        # every thread's stores precede the release
                    if warp == 0:
                        if lane == 0:
                            T.ptx.mbarrier.arrive(T.cuda.mapa(ready.ptr_to([wg - 1]), theirs),
                                                  scope="cluster")
                    T.ptx.mbarrier.try_wait(ready.ptr_to([wg - 1]), 0, scope="cluster")
                    peer_block = mine + (theirs - owner) * BM
                    Tx.wg.copy(part, W[peer_block:peer_block + 64, cols])
                    Tx.wg.add(half, half, part)
                    write = True
                    if two_clusters:
                        # Two clusters per tile: the second to count adds the first's sum.
                        Tx.wg.copy(W[mine:mine + 64, cols], half)
                        write, counter = split_k.count(t, 2, owner, 2)
                        if write:
                            other = t * (SPLIT_K * BM) + (split + 2) % 4 * BM + row
                            Tx.wg.copy(part, W[other:other + 64, cols])
                            Tx.wg.add(half, half, part)
                            split_k.reset(counter)
                    if write:
                        n_half = n0 + owner * HALF
                        for c0 in T.unroll(0, HALF, STEP):
                            if n_half + c0 < N:         # a step wholly past N stores nothing
                                Tx.wg.cast(out, half[:, c0:c0 + STEP])
                                store.chunk(out, row, m0, n_half, c0)
            store.await_staging()               # shared memory lives until the last store read it

        warp_specialized(wg, warp, PRODUCER_REGS, CONSUMER_REGS, producer, consumer)

    return hgemm_v8
