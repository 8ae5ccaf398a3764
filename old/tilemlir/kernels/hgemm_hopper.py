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
multiples of the tile, while v6's to v8's TMA stores are clipped at the edges. Tiles are visited in
grouped order (GROUP_M tile rows swept column by column) so that neighbouring CTAs share A and
B in L2. As in the seed, each step is written out whole, so that it reads on its own.
"""

import math

import tilemlir.lang as T
from tilemlir.lang import wgmma_accumulator_layout

Tx = T.tile

_DTYPES = ("float16", "bfloat16")


class ShapeError(ValueError):
    pass


def _check_row_stride(kernel: str, name: str, extent: int) -> None:
    """A row-major operand's row of `extent` 16-bit elements must be a whole number of TMA's
    16-byte stride units."""
    if extent % 8:
        raise ShapeError(f"{kernel}: {name}={extent} must be a multiple of 8 (TMA needs 16-byte "
                         f"row strides for 16-bit elements)")


def _check_epilogue_columns(kernel: str, BN: int, EPI_N: int) -> None:
    """The TMA-store epilogue writes a tile's BN columns EPI_N at a time, each a whole number
    of 64-column (128-byte swizzled) boxes."""
    if BN % EPI_N or EPI_N % 64:
        raise ShapeError(f"{kernel}: EPI_N={EPI_N} must be a multiple of 64 dividing BN={BN}")


def _check(kernel: str, M, N, K, dtype, BM, BN, BK, STAGES):
    if dtype not in _DTYPES:
        raise ShapeError(f"{kernel}: dtype must be one of {_DTYPES}, got {dtype!r}")
    for name, value, tile in (("M", M, BM), ("N", N, BN)):
        if value % tile:
            raise ShapeError(f"{kernel}: {name}={value} is not a multiple of the tile's {name} "
                             f"extent {tile} (tile {BM}x{BN}x{BK})")
    _check_row_stride(kernel, "K", K)
    if BM % 64 or not 64 <= BM <= 256:
        raise ShapeError(f"{kernel}: BM={BM} must be 64, 128, 192 or 256 (64 rows per consumer "
                         f"warpgroup)")
    if BN % 8 or not 8 <= BN <= 256:
        raise ShapeError(f"{kernel}: BN={BN} must be a multiple of 8 up to 256 (wgmma n)")
    if BK != 64:
        raise ShapeError(f"{kernel}: BK must be 64 (one 128-byte swizzle row of 16-bit elements)")
    if STAGES < 2:
        raise ShapeError(f"{kernel}: STAGES={STAGES} must be at least 2")
    stage_bytes = (BM + BN) * BK * 2
    if 1024 + STAGES * stage_bytes > 227 * 1024:
        raise ShapeError(f"{kernel}: {STAGES} stages of {stage_bytes} bytes exceed the 227 KiB "
                         f"of shared memory a Hopper CTA can have")


def _tile_origin(pid, tiles_m: int, tiles_n: int, group_m: int, BM: int, BN: int):
    """(m0, n0) of CTA `pid` in grouped order: group_m tile rows swept column by column."""
    in_group = pid % (group_m * tiles_n)
    m0 = (pid // (group_m * tiles_n) * group_m + in_group % group_m) * BM
    n0 = in_group // group_m * BN
    return m0, n0


def hgemm_v4(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8):
    """TMA loads into a STAGES-deep ring of shared-memory stages, tracked by mbarriers."""
    _check("hgemm_v4", M, N, K, dtype, BM, BN, BK, STAGES)
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
        m0, n0 = _tile_origin(pid, tiles_m, tiles_n, group_m, BM, BN)

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


def _consumer_regs(kernel: str, consumers: int, producer: int, consumer) -> int:
    """setmaxnreg budgets: a warpgroup's .inc waits until the registers are free, so the
    producer's and the consumers' budgets must fit the 64 Ki registers (512 per thread of one
    warpgroup) or the kernel deadlocks. Default: the most the consumers can have, up to 232."""
    if consumer is None:
        consumer = min(232, (512 - producer) // consumers // 8 * 8)
    if producer + consumers * consumer > 512:
        raise ShapeError(f"{kernel}: register budgets {producer} + {consumers} x {consumer} per "
                         f"thread exceed the register file (512 per thread of one warpgroup); "
                         f"setmaxnreg would wait forever")
    return consumer


def hgemm_v5(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8,
             PRODUCER_REGS=40, CONSUMER_REGS=None):
    """Warp-specialized: a producer warpgroup issues TMA, BM / 64 consumer warpgroups compute."""
    _check("hgemm_v5", M, N, K, dtype, BM, BN, BK, STAGES)
    consumers = BM // 64
    CONSUMER_REGS = _consumer_regs("hgemm_v5", consumers, PRODUCER_REGS, CONSUMER_REGS)
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
        m0, n0 = _tile_origin(pid, tiles_m, tiles_n, group_m, BM, BN)

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


def _split_unit(u, split_k: int, k_tiles: int):
    """(tile, first k-tile, end k-tile) of work unit `u`: the split_k units of a tile are
    consecutive, each a contiguous run of about k_tiles / split_k k-tiles (none empty when
    split_k <= k_tiles)."""
    if split_k == 1:
        return u, 0, k_tiles
    s = u % split_k
    return u // split_k, s * k_tiles // split_k, (s + 1) * k_tiles // split_k


def split_k_workspace_shape(M, N, BM, BN, SPLIT_K) -> tuple[int, int]:
    """hgemm_v6's fp32 workspace for SPLIT_K > 1: one BM x BN block per (tile, split) unit."""
    return math.ceil(M / BM) * math.ceil(N / BN) * SPLIT_K * BM, BN


def split_k_counters_shape(M, N, BM, BN) -> tuple[int]:
    """hgemm_v6's split-K counters: one per (tile, consumer warpgroup); zero before the first
    launch, and the kernel leaves them zero."""
    return (math.ceil(M / BM) * math.ceil(N / BN) * (BM // 64),)


SPLIT_K_STEP_N = 64     # accumulator columns a split-K fix-up adds per load (32 registers)


def v7_pairs(M, N, BM, BN) -> int:
    """hgemm_v7's pairs of vertically adjacent BM x BN tiles (the last row's second tile lies
    past M where the tile rows are odd): its work units without split-K."""
    return math.ceil(math.ceil(M / BM) / 2) * math.ceil(N / BN)


def _v7_units(M, N, BM, BN, SMS, SPLIT_K, TAIL_SPLIT) -> tuple[int, int, int, int]:
    """hgemm_v7's work: (pairs of tiles, pairs that run whole, units per split pair, tiles
    with a slot in W and C). SPLIT_K splits every pair; TAIL_SPLIT those past the last whole
    wave of SMS // 2 clusters."""
    pairs = v7_pairs(M, N, BM, BN)
    if TAIL_SPLIT > 1:
        whole = pairs // (SMS // 2) * (SMS // 2)
        return pairs, whole, TAIL_SPLIT, 2 * (pairs - whole)
    if SPLIT_K > 1:
        return pairs, 0, SPLIT_K, math.ceil(M / BM) * math.ceil(N / BN)
    return pairs, pairs, 1, 0


def v7_split_buffers_shapes(M, N, BM=128, BN=256, SMS=132, SPLIT_K=1, TAIL_SPLIT=1):
    """Shapes of hgemm_v7's fp32 workspace W (one BM x BN block per split unit of a tile with
    a slot) and int32 counters C (one per such tile and consumer warpgroup; zero before the
    first launch, and the kernel leaves them zero)."""
    _, _, splits, slots = _v7_units(M, N, BM, BN, SMS, SPLIT_K, TAIL_SPLIT)
    return (slots * splits * BM, BN), (slots * (BM // 64),)


def hgemm_v6(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, SMS=132,
             EPI_N=128, PRODUCER_REGS=40, CONSUMER_REGS=None, SPLIT_K=1):
    """Persistent: one CTA per SM walks the output tiles (grouped order, stride = CTAs); the
    producer runs ahead into the next tile while the consumers write the last one back through
    shared memory with TMA stores (clipped at the edges: M and N need not be multiples of the
    tile), EPI_N columns at a time so that the staging buffer leaves room for STAGES stages.
    SMS: the number of SMs (132 on the H200).

    SPLIT_K > 1 (for few tiles and long K): the work units are tiles x SPLIT_K, unit
    (tile, s) accumulating the s-th contiguous run of k-tiles. Each consumer warpgroup writes
    its fp32 partial to the workspace W (one BM x BN block per unit) and counts itself on the
    tile's counter in C (atom.add, acq_rel at gpu scope, after a warpgroup barrier so that the
    release covers every thread's stores); the last of the tile's units to arrive sums the
    SPLIT_K partials in split order (the same sum whichever unit is last), resets the counter
    to 0 for the next launch and writes D through the usual epilogue. The kernel then takes
    (A, B, D, W, C): W float32 of split_k_workspace_shape(...), C int32 zeros of
    split_k_counters_shape(...) (tilemlir.kernels.gemm allocates both); launches sharing W
    and C must be ordered (one stream)."""
    _check("hgemm_v6", BM * math.ceil(M / BM), BN * math.ceil(N / BN), K, dtype, BM, BN, BK,
           STAGES)
    _check_row_stride("hgemm_v6", "N", N)
    _check_epilogue_columns("hgemm_v6", BN, EPI_N)
    if 1024 + STAGES * (BM + BN) * BK * 2 + BM * EPI_N * 2 > 227 * 1024:
        raise ShapeError(f"hgemm_v6: {STAGES} stages and a {BM}x{EPI_N} staging buffer exceed "
                         f"the 227 KiB of shared memory a Hopper CTA can have")
    consumers = BM // 64
    CONSUMER_REGS = _consumer_regs("hgemm_v6", consumers, PRODUCER_REGS, CONSUMER_REGS)
    tiles_m, tiles_n, k_tiles = math.ceil(M / BM), math.ceil(N / BN), math.ceil(K / BK)
    if isinstance(SPLIT_K, bool) or not isinstance(SPLIT_K, int) or not 1 <= SPLIT_K <= k_tiles:
        raise ShapeError(f"hgemm_v6: SPLIT_K={SPLIT_K!r} must be an integer from 1 to the "
                         f"{k_tiles} k-tiles of K={K} (every split needs a k-tile)")
    if SPLIT_K > 1 and BN % SPLIT_K_STEP_N:
        raise ShapeError(f"hgemm_v6: with SPLIT_K > 1, BN={BN} must be a multiple of "
                         f"{SPLIT_K_STEP_N} (the fix-up adds {SPLIT_K_STEP_N} columns at a time)")
    tiles = tiles_m * tiles_n
    units = tiles * SPLIT_K
    ctas = min(SMS, units)
    group_m = math.gcd(GROUP_M, tiles_m)
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    c_layout = T.mma_shared_layout(dtype, "128B", (BM, EPI_N))
    acc_layout = wgmma_accumulator_layout(64, BN)
    step_layout = wgmma_accumulator_layout(64, SPLIT_K_STEP_N)
    stage_bytes = (BM + BN) * BK * 2
    split = SPLIT_K > 1
    w_shape = split_k_workspace_shape(M, N, BM, BN, SPLIT_K)
    c_shape = split_k_counters_shape(M, N, BM, BN)

    @T.prim_func
    def hgemm_v6(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype),
                 W: T.Buffer(w_shape, "float32") if split else None,
                 C: T.Buffer(c_shape, "int32") if split else None):
        pid = T.cta_id([ctas])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])

        pool = T.SMEMPool()
        full = pool.alloc((STAGES,), "uint64", align=8)
        empty = pool.alloc((STAGES,), "uint64", align=8)
        pool.move_base_to(1024)
        As = pool.alloc((STAGES * BM, BK), dtype, layout=a_layout)
        Bs = pool.alloc((STAGES * BN, BK), dtype, layout=b_layout)
        Cs = pool.alloc((BM, EPI_N), dtype, layout=c_layout)
        pool.commit()

        if wg == 0:
            if warp == 0:
                if lane == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init(empty.ptr_to([s]), consumers)
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()

        def epilogue(acc, out, row, m0, n0):
            # Registers -> this warpgroup's rows of Cs -> TMA store, EPI_N columns at a time.
            # A store must have read Cs before Cs is overwritten.
            Tx.wg.cast(out, acc)
            for c0 in T.unroll(0, BN, EPI_N):
                if warp == 0:
                    if lane == 0:
                        T.ptx.bulk.wait_group(0)
                T.cuda.bar_sync(wg, 128)
                Tx.wg.copy(Cs[row:row + 64, :], out[:, c0:c0 + EPI_N])
                T.ptx.fence.proxy_async("shared::cta")      # generic writes -> TMA reads
                T.cuda.bar_sync(wg, 128)
                if warp == 0:
                    if lane == 0:
                        Tx.copy_async(D[m0 + row:m0 + row + 64, n0 + c0:n0 + c0 + EPI_N],
                                      Cs[row:row + 64, :])
                        T.ptx.bulk.commit_group()

        if wg == 0:
            # --- producer: the k-tiles of every unit of this CTA, through one ring ---
            T.ptx.setmaxnreg(PRODUCER_REGS, increase=False)
            if warp == 0:
                if T.ptx.elect_sync():
                    it: T.int32 = 0
                    for u in T.serial(pid, units, ctas):
                        t, k_begin, k_end = _split_unit(u, SPLIT_K, k_tiles)
                        m0, n0 = _tile_origin(t, tiles_m, tiles_n, group_m, BM, BN)
                        for kt in T.serial(k_begin, k_end):
                            s = it % STAGES
                            T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (it // STAGES + 1) % 2)
                            T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                            Tx.copy_async(As[s * BM:s * BM + BM, :],
                                          A[m0:m0 + BM, kt * BK:kt * BK + BK], full.ptr_to([s]))
                            Tx.copy_async(Bs[s * BN:s * BN + BN, :],
                                          B[n0:n0 + BN, kt * BK:kt * BK + BK], full.ptr_to([s]))
                            it += 1
        else:
            # --- consumers: 64 rows of each unit each ---
            T.ptx.setmaxnreg(CONSUMER_REGS, increase=True)
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            out = T.alloc_local((64, BN), dtype, layout=acc_layout)
            if split:
                part = T.alloc_local((64, SPLIT_K_STEP_N), "float32", layout=step_layout)
            it: T.int32 = 0
            for u in T.serial(pid, units, ctas):
                t, k_begin, k_end = _split_unit(u, SPLIT_K, k_tiles)
                m0, n0 = _tile_origin(t, tiles_m, tiles_n, group_m, BM, BN)
                Tx.wg.fill(acc, 0.0)
                for kt in T.serial(k_begin, k_end):
                    s = it % STAGES
                    T.ptx.mbarrier.try_wait(full.ptr_to([s]), (it // STAGES) % 2)
                    Tx.wg.gemm_async(acc, As[s * BM + row:s * BM + row + 64, :],
                                     Bs[s * BN:s * BN + BN, :], accum=True)
                    T.ptx.wgmma.wait_group(1)
                    if kt > k_begin:
                        if warp == 0:
                            if lane == 0:
                                T.ptx.mbarrier.arrive(empty.ptr_to([(it + STAGES - 1) % STAGES]))
                    it += 1
                T.ptx.wgmma.wait_group(0)
                if warp == 0:
                    if lane == 0:
                        T.ptx.mbarrier.arrive(empty.ptr_to([(it + STAGES - 1) % STAGES]))
                if split:
                    # Split-K fix-up: publish this partial, count it; the last unit sums all.
                    mine = u * BM + row
                    Tx.wg.copy(W[mine:mine + 64, :], acc)
                    T.cuda.bar_sync(wg, 128)         # every thread's partial is written
                    counter = t * consumers + wg - 1
                    last: T.boolean = False
                    if warp == 0:
                        if lane == 0:
                            last = T.ptx.atom_add(C.ptr_to([counter]), 1, sem="acq_rel",
                                                  scope="gpu") == SPLIT_K - 1
                    # One thread's answer, for the warpgroup (and after its acquire).
                    if T.cuda.bar_or(wg, 128, last):
                        first = t * (SPLIT_K * BM) + row
                        Tx.wg.copy(acc, W[first:first + 64, :])
                        for k in T.serial(1, SPLIT_K):
                            other = first + k * BM
                            for c0 in T.unroll(0, BN, SPLIT_K_STEP_N):
                                step = acc[:, c0:c0 + SPLIT_K_STEP_N]
                                Tx.wg.copy(part, W[other:other + 64,
                                                   c0:c0 + SPLIT_K_STEP_N])
                                Tx.wg.add(step, step, part)
                        if warp == 0:
                            if lane == 0:
                                C[counter] = 0
                        epilogue(acc, out, row, m0, n0)
                else:
                    epilogue(acc, out, row, m0, n0)
            if warp == 0:
                if lane == 0:
                    T.ptx.bulk.wait_group(0)          # shared memory lives until it is read

    return hgemm_v6


def hgemm_v7(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=16, SMS=132,
             EPI_N=128, PRODUCER_REGS=40, CONSUMER_REGS=None, CLUSTER_RELEASE=False,
             SPLIT_K=1, TAIL_SPLIT=1, OVERLAP_EPILOGUE=True):
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

    OVERLAP_EPILOGUE (the default) keeps the tensor cores busy through the epilogue: a tile's
    accumulators are cast into `out` registers as soon as its last MMA completes, and the
    next tile's first BN / EPI_N k-tiles each store one EPI_N-column chunk of `out` (stmatrix,
    TMA store) while their MMAs run. Without it the warpgroup stores every chunk before its
    next MMA, and the stages the producer filled meanwhile wait (about 4% of the consumers'
    time at 4096^3, results/2026-12-01-parity/ncu-source-v7-4096.txt)."""
    _check("hgemm_v7", BM * math.ceil(M / BM), BN * math.ceil(N / BN), K, dtype, BM, BN, BK,
           STAGES)
    _check_row_stride("hgemm_v7", "N", N)
    if BN % 16:
        raise ShapeError(f"hgemm_v7: BN={BN} must be a multiple of 16 (each CTA of the pair "
                         f"loads BN / 2 rows of B, whose boxes start on 1024-byte swizzle "
                         f"repeats)")
    _check_epilogue_columns("hgemm_v7", BN, EPI_N)
    if 1024 + STAGES * (BM + BN) * BK * 2 + BM * EPI_N * 2 > 227 * 1024:
        raise ShapeError(f"hgemm_v7: {STAGES} stages and a {BM}x{EPI_N} staging buffer exceed "
                         f"the 227 KiB of shared memory a Hopper CTA can have")
    if SMS < 2:
        raise ShapeError(f"hgemm_v7: SMS={SMS} leaves no room for one cluster of 2 CTAs")
    consumers = BM // 64
    CONSUMER_REGS = _consumer_regs("hgemm_v7", consumers, PRODUCER_REGS, CONSUMER_REGS)
    tiles_m, tiles_n, k_tiles = math.ceil(M / BM), math.ceil(N / BN), math.ceil(K / BK)
    for name, value in (("SPLIT_K", SPLIT_K), ("TAIL_SPLIT", TAIL_SPLIT)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= k_tiles:
            raise ShapeError(f"hgemm_v7: {name}={value!r} must be an integer from 1 to the "
                             f"{k_tiles} k-tiles of K={K} (every split needs a k-tile)")
    if SPLIT_K > 1 and TAIL_SPLIT > 1:
        raise ShapeError("hgemm_v7: SPLIT_K splits every pair and TAIL_SPLIT only the last "
                         "wave's; give one of them")
    if max(SPLIT_K, TAIL_SPLIT) > 1 and BN % SPLIT_K_STEP_N:
        raise ShapeError(f"hgemm_v7: with split-K, BN={BN} must be a multiple of "
                         f"{SPLIT_K_STEP_N} (the fix-up adds {SPLIT_K_STEP_N} columns at a time)")
    pairs_m = math.ceil(tiles_m / 2)
    pairs, whole, splits, slots = _v7_units(M, N, BM, BN, SMS, SPLIT_K, TAIL_SPLIT)
    if TAIL_SPLIT > 1 and whole == pairs:
        raise ShapeError(f"hgemm_v7: TAIL_SPLIT={TAIL_SPLIT}: the {pairs} pairs of tiles fill "
                         f"whole waves of {SMS // 2} clusters, so no last wave is left to split")
    units = whole + (pairs - whole) * splits
    clusters = min(SMS // 2, units)
    group_m = math.gcd(max(1, GROUP_M // 2), pairs_m)       # in pairs of tile rows
    HALF_N = BN // 2
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    c_layout = T.mma_shared_layout(dtype, "128B", (BM, EPI_N))
    acc_layout = wgmma_accumulator_layout(64, BN)
    step_layout = wgmma_accumulator_layout(64, SPLIT_K_STEP_N)
    stage_bytes = (BM + BN) * BK * 2                         # A + both halves of B
    handoff = "cluster" if CLUSTER_RELEASE else "cta"        # scope of the cross-CTA hand-off
    split = splits > 1
    w_shape, c_shape = v7_split_buffers_shapes(M, N, BM, BN, SMS, SPLIT_K, TAIL_SPLIT)
    chunks = BN // EPI_N                                     # epilogue stores per tile

    @T.prim_func
    def hgemm_v7(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype),
                 W: T.Buffer(w_shape, "float32") if split else None,
                 C: T.Buffer(c_shape, "int32") if split else None):
        pid = T.cta_id([2 * clusters])
        T.cluster_shape([2, 1, 1])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        rank = T.cuda.cluster_ctarank()
        peer = rank ^ 1
        cluster = pid // 2

        def unit(u):
            # (pair, first k-tile, end k-tile, split index) of work unit u: the first `whole`
            # units are whole pairs, each later pair is `splits` consecutive units
            if TAIL_SPLIT > 1:
                t: T.int32 = u
                k_begin: T.int32 = 0
                k_end: T.int32 = k_tiles
                part_of: T.int32 = 0
                if u >= whole:
                    part_of = (u - whole) % splits
                    t = whole + (u - whole) // splits
                    k_begin = part_of * k_tiles // splits
                    k_end = (part_of + 1) * k_tiles // splits
                return t, k_begin, k_end, part_of
            t, k_begin, k_end = _split_unit(u, SPLIT_K, k_tiles)
            return t, k_begin, k_end, u % SPLIT_K

        pool = T.SMEMPool()
        full = pool.alloc((STAGES,), "uint64", align=8)      # this CTA's stage has landed
        empty = pool.alloc((STAGES,), "uint64", align=8)     # both CTAs' consumers are done
        pool.move_base_to(1024)
        As = pool.alloc((STAGES * BM, BK), dtype, layout=a_layout)
        Bs = pool.alloc((STAGES * BN, BK), dtype, layout=b_layout)
        Cs = pool.alloc((BM, EPI_N), dtype, layout=c_layout)
        pool.commit()

        if wg == 0:
            if warp == 0:
                if lane == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init(empty.ptr_to([s]), 2 * consumers)
        T.ptx.fence.mbarrier_init()
        T.cuda.cluster_sync()           # the peer's barriers exist before anyone signals them

        if wg == 0:
            # --- producer: its A tile, and its half of B into both CTAs ---
            T.ptx.setmaxnreg(PRODUCER_REGS, increase=False)
            if warp == 0:
                if T.ptx.elect_sync():
                    it: T.int32 = 0
                    for u in T.serial(cluster, units, clusters):
                        t, k_begin, k_end, _ = unit(u)
                        m_pair, n0 = _tile_origin(t, pairs_m, tiles_n, group_m, 2 * BM, BN)
                        m0 = m_pair + rank * BM
                        nb = n0 + rank * HALF_N
                        for kt in T.serial(k_begin, k_end):
                            s = it % STAGES
                            T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (it // STAGES + 1) % 2,
                                                    scope=handoff)
                            T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                            Tx.copy_async(As[s * BM:s * BM + BM, :],
                                          A[m0:m0 + BM, kt * BK:kt * BK + BK], full.ptr_to([s]))
                            Tx.copy_async(Bs[s * BN + rank * HALF_N:
                                             s * BN + rank * HALF_N + HALF_N, :],
                                          B[nb:nb + HALF_N, kt * BK:kt * BK + BK],
                                          full.ptr_to([s]), multicast=0b11)
                            it += 1
        else:
            # --- consumers: 64 rows of each tile each; stages freed in both CTAs ---
            T.ptx.setmaxnreg(CONSUMER_REGS, increase=True)
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            out = T.alloc_local((64, BN), dtype, layout=acc_layout)
            if split:
                part = T.alloc_local((64, SPLIT_K_STEP_N), "float32", layout=step_layout)

            def release(s):
                T.ptx.mbarrier.arrive(empty.ptr_to([s]))
                T.ptx.mbarrier.arrive(T.cuda.mapa(empty.ptr_to([s]), peer), scope=handoff)

            def k_step(kt, it, k_begin):
                # one k-tile's MMAs in flight; the stage the previous k-tile read is freed
                s = it % STAGES
                T.ptx.mbarrier.try_wait(full.ptr_to([s]), (it // STAGES) % 2)
                Tx.wg.gemm_async(acc, As[s * BM + row:s * BM + row + 64, :],
                                 Bs[s * BN:s * BN + BN, :], accum=True)
                T.ptx.wgmma.wait_group(1)
                if kt > k_begin:
                    if warp == 0:
                        if lane == 0:
                            release((it + STAGES - 1) % STAGES)

            def store(c0, m0, n0):
                # columns c0 .. c0 + EPI_N of `out`: registers -> Cs (stmatrix) -> D (TMA)
                if warp == 0:
                    if lane == 0:
                        T.ptx.bulk.wait_group(0)
                T.cuda.bar_sync(wg, 128)
                Tx.wg.copy(Cs[row:row + 64, :], out[:, c0:c0 + EPI_N])
                T.ptx.fence.proxy_async("shared::cta")
                T.cuda.bar_sync(wg, 128)
                if warp == 0:
                    if lane == 0:
                        Tx.copy_async(D[m0 + row:m0 + row + 64, n0 + c0:n0 + c0 + EPI_N],
                                      Cs[row:row + 64, :])
                        T.ptx.bulk.commit_group()

            it: T.int32 = 0
            pending: T.boolean = False       # `out` holds a tile not yet stored, at pm0, pn0
            pm0: T.int32 = 0
            pn0: T.int32 = 0
            for u in T.serial(cluster, units, clusters):
                t, k_begin, k_end, part_of = unit(u)
                m_pair, n0 = _tile_origin(t, pairs_m, tiles_n, group_m, 2 * BM, BN)
                m0 = m_pair + rank * BM
                Tx.wg.fill(acc, 0.0)
                # The previous tile's chunks are stored one under each of this tile's first
                # k-tiles, while their MMAs run (OVERLAP_EPILOGUE); else `pending` is False.
                for j in T.unroll(chunks):
                    if k_begin + j < k_end:
                        k_step(k_begin + j, it, k_begin)
                        it += 1
                    if pending:
                        store(j * EPI_N, pm0, pn0)
                for kt in T.serial(k_begin + chunks, k_end):
                    k_step(kt, it, k_begin)
                    it += 1
                T.ptx.wgmma.wait_group(0)
                if warp == 0:
                    if lane == 0:
                        release((it + STAGES - 1) % STAGES)
                # Epilogue as in v6; a tile past M (the odd pair's second) stores nothing.
                done: T.boolean = m0 < M
                if split:
                    if m0 < M and t >= whole:
                        # Split-K fix-up as in v6, for this CTA's own tile, in its slot of W
                        # and C (every tile's with SPLIT_K, the last wave's with TAIL_SPLIT).
                        if TAIL_SPLIT > 1:
                            slot = (t - whole) * 2 + rank
                        else:
                            slot = m0 // BM * tiles_n + n0 // BN
                        mine = (slot * splits + part_of) * BM + row
                        Tx.wg.copy(W[mine:mine + 64, :], acc)
                        T.cuda.bar_sync(wg, 128)     # every thread's partial is written
                        counter = slot * consumers + wg - 1
                        last: T.boolean = False
                        if warp == 0:
                            if lane == 0:
                                last = T.ptx.atom_add(C.ptr_to([counter]), 1, sem="acq_rel",
                                                      scope="gpu") == splits - 1
                        done = T.cuda.bar_or(wg, 128, last)
                        if done:
                            first = slot * (splits * BM) + row
                            Tx.wg.copy(acc, W[first:first + 64, :])
                            for k in T.serial(1, splits):
                                other = first + k * BM
                                for c0 in T.unroll(0, BN, SPLIT_K_STEP_N):
                                    step = acc[:, c0:c0 + SPLIT_K_STEP_N]
                                    Tx.wg.copy(part, W[other:other + 64,
                                                       c0:c0 + SPLIT_K_STEP_N])
                                    Tx.wg.add(step, step, part)
                            if warp == 0:
                                if lane == 0:
                                    C[counter] = 0
                if done:
                    Tx.wg.cast(out, acc)
                    if not OVERLAP_EPILOGUE:
                        for c0 in T.unroll(0, BN, EPI_N):
                            store(c0, m0, n0)
                if OVERLAP_EPILOGUE:
                    pending = done
                    pm0 = m0
                    pn0 = n0
            for c0 in T.unroll(0, BN, EPI_N):
                if pending:
                    store(c0, pm0, pn0)                 # the last tile's, under no MMAs
            if warp == 0:
                if lane == 0:
                    T.ptx.bulk.wait_group(0)

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
    _check("hgemm_v8", BM * math.ceil(M / BM), BN * math.ceil(N / BN), K, dtype, BM, BN, BK,
           STAGES)
    _check_row_stride("hgemm_v8", "N", N)
    tiles_m, tiles_n, k_tiles = math.ceil(M / BM), math.ceil(N / BN), math.ceil(K / BK)
    if isinstance(SPLIT_K, bool) or SPLIT_K not in (2, 4):
        raise ShapeError(f"hgemm_v8: SPLIT_K={SPLIT_K!r} must be 2 or 4 (one or two clusters "
                         f"of 2 CTAs per tile)")
    if SPLIT_K > k_tiles:
        raise ShapeError(f"hgemm_v8: SPLIT_K={SPLIT_K} exceeds the {k_tiles} k-tiles of K={K} "
                         f"(every split needs a k-tile)")
    STEP = SPLIT_K_STEP_N
    if BN % (2 * STEP):
        raise ShapeError(f"hgemm_v8: BN={BN} must be a multiple of {2 * STEP} (each CTA of the "
                         f"pair reduces and stores half of it, {STEP} columns at a time)")
    if 1024 + STAGES * (BM + BN) * BK * 2 + BM * STEP * 2 > 227 * 1024:
        raise ShapeError(f"hgemm_v8: {STAGES} stages and a {BM}x{STEP} staging buffer exceed "
                         f"the 227 KiB of shared memory a Hopper CTA can have")
    consumers = BM // 64
    CONSUMER_REGS = _consumer_regs("hgemm_v8", consumers, PRODUCER_REGS, CONSUMER_REGS)
    tiles = tiles_m * tiles_n
    group_m = math.gcd(GROUP_M, tiles_m)
    HALF = BN // 2
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    c_layout = T.mma_shared_layout(dtype, "128B", (BM, STEP))
    acc_layout = wgmma_accumulator_layout(64, BN)
    half_layout = wgmma_accumulator_layout(64, HALF)
    step_layout = wgmma_accumulator_layout(64, STEP)
    stage_bytes = (BM + BN) * BK * 2
    pair = SPLIT_K == 4                         # two clusters per tile, joined by a counter
    w_shape = split_k_workspace_shape(M, N, BM, BN, SPLIT_K)
    c_shape = split_k_pair_counters_shape(M, N, BM, BN)

    @T.prim_func
    def hgemm_v8(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype), W: T.Buffer(w_shape, "float32"),
                 C: T.Buffer(c_shape, "int32") if pair else None):
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
        m0, n0 = _tile_origin(t, tiles_m, tiles_n, group_m, BM, BN)

        pool = T.SMEMPool()
        full = pool.alloc((STAGES,), "uint64", align=8)
        empty = pool.alloc((STAGES,), "uint64", align=8)
        ready = pool.alloc((consumers,), "uint64", align=8)  # the peer's half is in W
        pool.move_base_to(1024)
        As = pool.alloc((STAGES * BM, BK), dtype, layout=a_layout)
        Bs = pool.alloc((STAGES * BN, BK), dtype, layout=b_layout)
        Cs = pool.alloc((BM, STEP), dtype, layout=c_layout)
        pool.commit()

        if wg == 0:
            if warp == 0:
                if lane == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init(empty.ptr_to([s]), consumers)
                    for c in T.unroll(consumers):
                        T.ptx.mbarrier.init(ready.ptr_to([c]), 1)
        T.ptx.fence.mbarrier_init()
        T.cuda.cluster_sync()           # the peer's barriers exist before anyone signals them

        if wg == 0:
            # --- producer: this CTA's run of k-tiles ---
            T.ptx.setmaxnreg(PRODUCER_REGS, increase=False)
            if warp == 0:
                if T.ptx.elect_sync():
                    for kt in T.serial(k_begin, k_end):
                        it = kt - k_begin
                        s = it % STAGES
                        T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (it // STAGES + 1) % 2)
                        T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                        Tx.copy_async(As[s * BM:s * BM + BM, :],
                                      A[m0:m0 + BM, kt * BK:kt * BK + BK], full.ptr_to([s]))
                        Tx.copy_async(Bs[s * BN:s * BN + BN, :],
                                      B[n0:n0 + BN, kt * BK:kt * BK + BK], full.ptr_to([s]))
        else:
            # --- consumers: 64 rows of the tile each ---
            T.ptx.setmaxnreg(CONSUMER_REGS, increase=True)
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            part = T.alloc_local((64, HALF), "float32", layout=half_layout)
            out = T.alloc_local((64, STEP), dtype, layout=step_layout)
            Tx.wg.fill(acc, 0.0)
            for kt in T.serial(k_begin, k_end):
                it = kt - k_begin
                s = it % STAGES
                T.ptx.mbarrier.try_wait(full.ptr_to([s]), (it // STAGES) % 2)
                Tx.wg.gemm_async(acc, As[s * BM + row:s * BM + row + 64, :],
                                 Bs[s * BN:s * BN + BN, :], accum=True)
                T.ptx.wgmma.wait_group(1)
                if kt > k_begin:
                    if warp == 0:
                        if lane == 0:
                            T.ptx.mbarrier.arrive(empty.ptr_to([(it + STAGES - 1) % STAGES]))
            T.ptx.wgmma.wait_group(0)   # the last stage needs no release: nothing refills it

            mine = t * (SPLIT_K * BM) + split * BM + row     # this split's block of W
            staging = Cs[row:row + 64, :]                    # this warpgroup's rows of Cs
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
                    if pair:
                        # Two clusters per tile: the second to count adds the first's sum.
                        Tx.wg.copy(W[mine:mine + 64, cols], half)
                        T.cuda.bar_sync(wg, 128)    # every thread's sum is written
                        counter = (t * 2 + owner) * consumers + wg - 1
                        second: T.boolean = False
                        if warp == 0:
                            if lane == 0:
                                second = T.ptx.atom_add(C.ptr_to([counter]), 1, sem="acq_rel",
                                                        scope="gpu") == 1
                        write = T.cuda.bar_or(wg, 128, second)
                        if write:
                            other = t * (SPLIT_K * BM) + (split + 2) % 4 * BM + row
                            Tx.wg.copy(part, W[other:other + 64, cols])
                            Tx.wg.add(half, half, part)
                            if warp == 0:
                                if lane == 0:
                                    C[counter] = 0
                    if write:
                        for c0 in T.unroll(0, HALF, STEP):
                            if n0 + owner * HALF + c0 < N:  # a step wholly past N stores nothing
                                Tx.wg.cast(out, half[:, c0:c0 + STEP])
                                if warp == 0:
                                    if lane == 0:
                                        T.ptx.bulk.wait_group(0)    # the last store read Cs
                                T.cuda.bar_sync(wg, 128)
                                Tx.wg.copy(staging, out)
                                T.ptx.fence.proxy_async("shared::cta")  # generic -> TMA reads
                                T.cuda.bar_sync(wg, 128)
                                if warp == 0:
                                    if lane == 0:
                                        n1 = n0 + owner * HALF + c0
                                        Tx.copy_async(D[m0 + row:m0 + row + 64, n1:n1 + STEP],
                                                      staging)
                                        T.ptx.bulk.commit_group()
            if warp == 0:
                if lane == 0:
                    T.ptx.bulk.wait_group(0)          # shared memory lives until it is read

    return hgemm_v8
