"""Seed 000's roadmap on Blackwell (sm_100a, tcgen05), one mechanism per step, after hgemm_v3
(hgemm_tcgen05.py); the steps mirror hgemm_hopper.py's. Compiled and assembled by ptxas only:
no Blackwell GPU has run them.

  v4  TMA + a multi-stage mbarrier pipeline. One elected thread keeps the ring of STAGES
      shared-memory stages full with TMA loads (completing on a `full` barrier per stage) and
      issues the MMAs into one TMEM accumulator; tcgen05.commit to the stage's `empty` barrier
      frees the stage once the MMAs that read it are done, and a last commit to `acc_full`
      tells the epilogue warpgroup the accumulator is complete.
  v5  Warp roles: warp 0 only loads (TMA), warp 1 only issues MMAs, warpgroup 1 is the
      epilogue (tcgen05.ld from TMEM, the warp w of a warpgroup reading TMEM lanes 32w..32w+31).
  v6  Persistent, with double-buffered TMEM accumulators: one CTA per SM walks the output
      tiles; the MMA warp writes tile i into accumulator i % 2 while the epilogue reads tile
      i - 1 out of the other, handed over by an acc_full / acc_empty barrier pair per buffer.
  v7  CTA pairs (tcgen05.mma cta_group::2) in 2x1x1 clusters: v5 with one M = 2 * BM MMA per
      k-step that only the even CTA issues, both CTAs' TMA loads counted on its barrier, and
      its commits multicast to the barriers of both.

D[m, n] = sum_k A[m, k] * B[n, k]: A is M x K, B is N x K (both K-major), D is M x N in the input
type, accumulated in fp32 in tensor memory. A CTA computes a BM x BN tile with tcgen05.mma
cta_group::1 (BM = 128: one TMEM lane per row). TMA zero-fills reads past the edges, so K needs
no padding; M and N must be multiples of the tile (the epilogue stores whole rows from
registers). The tcgen05 fences sit where the PTX memory model needs them: after each wait that
orders tcgen05 work (tcgen05.fence::after_thread_sync) and before each sync that hands tcgen05
work to other threads (before_thread_sync). Before the end, the producer (the thread that
waits on `empty` to load) waits out the last `empty` phases, CUTLASS's producer tail
(`_drain`): the arrivals of the last commits must not land in shared memory that a finished
CTA has given up.
"""

import math

import tilemlir.lang as T
from tilemlir.lang import S, TCol, TileLayout, TLane, tid_in_wg

Tx = T.tile

_DTYPES = ("float16", "bfloat16")
_SMEM_BYTES = 227 * 1024              # the most shared memory a Blackwell (sm_100) CTA can have


class ShapeError(ValueError):
    pass


def _check(kernel: str, M, N, K, dtype, BM, BN, BK, STAGES, EPI_N):
    if dtype not in _DTYPES:
        raise ShapeError(f"{kernel}: dtype must be one of {_DTYPES}, got {dtype!r}")
    if BM != 128:
        raise ShapeError(f"{kernel}: BM={BM} must be 128 (tcgen05.mma cta_group::1, one TMEM "
                         f"lane per row)")
    # BN <= 256 also lets v6 keep two accumulators in the 512 columns of tensor memory.
    if BN % 16 or not 16 <= BN <= 256:
        raise ShapeError(f"{kernel}: BN={BN} must be a multiple of 16 up to 256 (tcgen05.mma "
                         f"M=128 N)")
    if BK != 64:
        raise ShapeError(f"{kernel}: BK must be 64 (one 128-byte swizzle row of 16-bit elements)")
    if EPI_N not in (16, 32, 64, 128) or BN % EPI_N:
        raise ShapeError(f"{kernel}: EPI_N={EPI_N} must be 16, 32, 64 or 128 and divide BN={BN} "
                         f"(columns per tcgen05.ld)")
    for name, value, tile in (("M", M, BM), ("N", N, BN)):
        if value % tile:
            raise ShapeError(f"{kernel}: {name}={value} is not a multiple of the tile's {name} "
                             f"extent {tile} (tile {BM}x{BN}x{BK})")
    if K % 8:
        raise ShapeError(f"{kernel}: K={K} must be a multiple of 8 (TMA needs 16-byte row "
                         f"strides for 16-bit elements)")
    if STAGES < 2:
        raise ShapeError(f"{kernel}: STAGES={STAGES} must be at least 2")
    stage_bytes = (BM + BN) * BK * 2
    if 1024 + STAGES * stage_bytes > _SMEM_BYTES:
        raise ShapeError(f"{kernel}: {STAGES} stages of {stage_bytes} bytes exceed the 227 KiB "
                         f"of shared memory a Blackwell CTA can have")


def _tmem_columns(columns: int) -> int:
    """tcgen05.alloc takes a power of two of at least 32 columns."""
    return max(32, 1 << (columns - 1).bit_length())


def _tile_origin(pid, tiles_m: int, tiles_n: int, group_m: int, BM: int, BN: int):
    """(m0, n0) of tile `pid` in grouped order: group_m tile rows swept column by column."""
    in_group = pid % (group_m * tiles_n)
    m0 = (pid // (group_m * tiles_n) * group_m + in_group % group_m) * BM
    n0 = in_group // group_m * BN
    return m0, n0


def _drain(empty, first, STAGES: int):
    """The producer's tail (CUTLASS's producer_tail): waits for the `empty` phases of k-steps
    first .. first + STAGES - 1, which complete with the arrivals of the last STAGES
    tcgen05.commits (a stage never used counts as free at once: the parity trick of the
    loop's first round). Those arrivals land in this CTA's shared memory whenever the MMAs
    finish, with nothing else waiting for them: without the drain the CTA could deallocate and
    exit while they are still landing."""
    for j in T.unroll(STAGES):
        it = first + j
        T.ptx.mbarrier.try_wait(empty.ptr_to([it % STAGES]), (it // STAGES + 1) % 2)


def _stage_ring(pool, STAGES: int, accumulators: int, BM: int, B_ROWS: int, BK: int, dtype: str,
                a_layout, b_layout):
    """The shared memory of a kernel: the TMEM address, the ring's `full` (TMA bytes landed)
    and `empty` (the MMAs reading the stage are done) barriers, `acc_full` per accumulator
    (every MMA of its tile is done) and, with two accumulators, `acc_empty` (the epilogue has
    read it out), then from 1024 bytes the STAGES stages of A (BM rows) and B (B_ROWS rows).
    Returns (tmem_addr, full, empty, acc_full, acc_empty or None, As, Bs)."""
    tmem_addr = pool.alloc((1,), "uint32")
    full = pool.alloc((STAGES,), "uint64", align=8)
    empty = pool.alloc((STAGES,), "uint64", align=8)
    acc_full = pool.alloc((accumulators,), "uint64", align=8)
    acc_empty = pool.alloc((accumulators,), "uint64", align=8) if accumulators > 1 else None
    pool.move_base_to(1024)
    As = pool.alloc((STAGES * BM, BK), dtype, layout=a_layout)
    Bs = pool.alloc((STAGES * B_ROWS, BK), dtype, layout=b_layout)
    pool.commit()
    return tmem_addr, full, empty, acc_full, acc_empty, As, Bs


@T.macro
def _init_ring(lane, full, empty, acc_full, acc_empty, STAGES: int, tmem_addr, tmem_cols: int,
               cta_group: int):
    """The allocating warp: lane 0 initialises the barriers (one arrival each; acc_empty one
    per epilogue thread), the warp allocates tensor memory (with cta_group 2, together with
    the peer CTA's warp)."""
    if lane == 0:
        for s in T.unroll(STAGES):
            T.ptx.mbarrier.init(full.ptr_to([s]), 1)
            T.ptx.mbarrier.init(empty.ptr_to([s]), 1)
        if acc_empty is None:
            T.ptx.mbarrier.init(acc_full.ptr_to([0]), 1)
        else:
            for b in T.unroll(2):
                T.ptx.mbarrier.init(acc_full.ptr_to([b]), 1)
                T.ptx.mbarrier.init(acc_empty.ptr_to([b]), 128)
    T.ptx.tcgen05.alloc(T.address_of(tmem_addr), n_cols=tmem_cols, cta_group=cta_group)
    T.ptx.tcgen05.fence_before_thread_sync()


def _tmem_buffer(address, columns: int):
    """`columns` fp32 columns of tensor memory from `address` (lane << 16 | column), one lane
    per tile row."""
    return T.decl_buffer((128, columns), "float32", scope="tmem", allocated_addr=address,
                         layout=TileLayout(S[(128, columns):(1 @ TLane, 1 @ TCol)]))


def _epilogue_registers(EPI_N: int, dtype: str):
    """(acc, out, acc_wg): an epilogue thread's EPI_N fp32 accumulator columns, the same cast
    to the output type, and acc seen by the warpgroup (thread t of the warpgroup: TMEM lane t,
    the tile's row t)."""
    acc = T.alloc_local((EPI_N,), "float32")
    out = T.alloc_local((EPI_N,), dtype)
    acc_wg = acc.view(128, EPI_N, layout=TileLayout(S[(128, EPI_N):(1 @ tid_in_wg, 1)]))
    return acc, out, acc_wg


def _store_tile(tmem, registers, D, m_thr, n0, BN: int, EPI_N: int):
    """The epilogue warpgroup's store of a tile from `tmem`: EPI_N columns at a time into
    registers (_epilogue_registers), cast, into D's row m_thr from column n0."""
    acc, out, acc_wg = registers
    for c0 in T.unroll(0, BN, EPI_N):
        Tx.wg.copy_async(acc_wg[:, :], tmem[:, c0:c0 + EPI_N])
        T.ptx.tcgen05.wait.ld()
        Tx.cast(out[:], acc[:])
        Tx.copy(D[m_thr, n0 + c0:n0 + c0 + EPI_N], out[:])


def _release_tmem(tmem_addr, tmem_cols: int, cta_group: int):
    """The allocating warp gives its tensor memory back (once every tcgen05 op of the CTA is
    ordered before the sync the caller made)."""
    T.ptx.tcgen05.fence_after_thread_sync()
    T.ptx.tcgen05.relinquish_alloc_permit(cta_group=cta_group)
    T.ptx.tcgen05.dealloc(tmem_addr[0], n_cols=tmem_cols, cta_group=cta_group)


def hgemm_v4(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, EPI_N=64):
    """TMA loads into a STAGES-deep ring, MMAs issued by the same elected thread, stages freed
    by tcgen05.commit to an `empty` barrier each."""
    _check("hgemm_v4", M, N, K, dtype, BM, BN, BK, STAGES, EPI_N)
    tiles_m, tiles_n, k_tiles = M // BM, N // BN, math.ceil(K / BK)
    group_m = math.gcd(GROUP_M, tiles_m)
    tmem_cols = _tmem_columns(BN)
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    stage_bytes = (BM + BN) * BK * 2

    @T.prim_func
    def hgemm_v4(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([tiles_m * tiles_n])
        wg = T.warpgroup_id([1])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        m0, n0 = _tile_origin(pid, tiles_m, tiles_n, group_m, BM, BN)

        tmem_addr, full, empty, acc_full, _, As, Bs = _stage_ring(
            T.SMEMPool(), STAGES, 1, BM, BN, BK, dtype, a_layout, b_layout)
        if warp == 0:
            _init_ring(lane, full, empty, acc_full, None, STAGES, tmem_addr, tmem_cols, 1)
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence_after_thread_sync()
        tmem = _tmem_buffer(tmem_addr[0], tmem_cols)

        def load(kt):
            s = kt % STAGES
            # A fresh barrier's preceding phase (parity 1) counts as complete: the first round
            # of waits passes at once.
            T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (kt // STAGES + 1) % 2)
            T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
            Tx.copy_async(As[s * BM:s * BM + BM, :], A[m0:m0 + BM, kt * BK:kt * BK + BK],
                          full.ptr_to([s]))
            Tx.copy_async(Bs[s * BN:s * BN + BN, :], B[n0:n0 + BN, kt * BK:kt * BK + BK],
                          full.ptr_to([s]))

        # --- one thread: STAGES - 1 k-tiles ahead, then one MMA and one load per k-tile ---
        if warp == 0:
            if T.ptx.elect_sync():
                for kt in T.unroll(STAGES - 1):
                    if kt < k_tiles:
                        load(kt)
                for kt in T.serial(k_tiles):
                    s = kt % STAGES
                    T.ptx.mbarrier.try_wait(full.ptr_to([s]), (kt // STAGES) % 2)
                    Tx.gemm_async(tmem[:, :BN], As[s * BM:s * BM + BM, :],
                                  Bs[s * BN:s * BN + BN, :], accum=(kt != 0), cta_group=1)
                    T.ptx.tcgen05.commit(empty.ptr_to([s]), cta_group=1)
                    if kt + STAGES - 1 < k_tiles:
                        load(kt + STAGES - 1)
                T.ptx.tcgen05.commit(acc_full.ptr_to([0]), cta_group=1)
                _drain(empty, k_tiles, STAGES)

        # --- epilogue: the warpgroup reads TMEM EPI_N columns at a time ---
        T.ptx.mbarrier.try_wait(acc_full.ptr_to([0]), 0)
        T.ptx.tcgen05.fence_after_thread_sync()
        _store_tile(tmem, _epilogue_registers(EPI_N, dtype), D, m0 + warp * 32 + lane, n0, BN,
                    EPI_N)

        T.ptx.tcgen05.fence_before_thread_sync()
        T.cuda.cta_sync()
        if warp == 0:
            _release_tmem(tmem_addr, tmem_cols, 1)

    return hgemm_v4


def hgemm_v5(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, EPI_N=64):
    """Warp roles: warp 0 of warpgroup 0 loads, warp 1 issues the MMAs, warpgroup 1 is the
    epilogue."""
    _check("hgemm_v5", M, N, K, dtype, BM, BN, BK, STAGES, EPI_N)
    tiles_m, tiles_n, k_tiles = M // BM, N // BN, math.ceil(K / BK)
    group_m = math.gcd(GROUP_M, tiles_m)
    tmem_cols = _tmem_columns(BN)
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    stage_bytes = (BM + BN) * BK * 2

    @T.prim_func
    def hgemm_v5(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([tiles_m * tiles_n])
        wg = T.warpgroup_id([2])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        m0, n0 = _tile_origin(pid, tiles_m, tiles_n, group_m, BM, BN)

        tmem_addr, full, empty, acc_full, _, As, Bs = _stage_ring(
            T.SMEMPool(), STAGES, 1, BM, BN, BK, dtype, a_layout, b_layout)
        if wg == 0:
            if warp == 0:
                _init_ring(lane, full, empty, acc_full, None, STAGES, tmem_addr, tmem_cols, 1)
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence_after_thread_sync()
        tmem = _tmem_buffer(tmem_addr[0], tmem_cols)

        if wg == 0:
            if warp == 0:
                # --- TMA warp: one thread keeps the ring full ---
                if T.ptx.elect_sync():
                    for kt in T.serial(k_tiles):
                        s = kt % STAGES
                        T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (kt // STAGES + 1) % 2)
                        T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                        Tx.copy_async(As[s * BM:s * BM + BM, :],
                                      A[m0:m0 + BM, kt * BK:kt * BK + BK], full.ptr_to([s]))
                        Tx.copy_async(Bs[s * BN:s * BN + BN, :],
                                      B[n0:n0 + BN, kt * BK:kt * BK + BK], full.ptr_to([s]))
                    _drain(empty, k_tiles, STAGES)
            if warp == 1:
                # --- MMA warp: one thread issues, commits free the stages ---
                if T.ptx.elect_sync():
                    for kt in T.serial(k_tiles):
                        s = kt % STAGES
                        T.ptx.mbarrier.try_wait(full.ptr_to([s]), (kt // STAGES) % 2)
                        Tx.gemm_async(tmem[:, :BN], As[s * BM:s * BM + BM, :],
                                      Bs[s * BN:s * BN + BN, :], accum=(kt != 0), cta_group=1)
                        T.ptx.tcgen05.commit(empty.ptr_to([s]), cta_group=1)
                    T.ptx.tcgen05.commit(acc_full.ptr_to([0]), cta_group=1)
        else:
            # --- epilogue warpgroup: warp w reads TMEM lanes (rows) 32w .. 32w + 31 ---
            T.ptx.mbarrier.try_wait(acc_full.ptr_to([0]), 0)
            T.ptx.tcgen05.fence_after_thread_sync()
            _store_tile(tmem, _epilogue_registers(EPI_N, dtype), D, m0 + warp * 32 + lane, n0,
                        BN, EPI_N)

        T.ptx.tcgen05.fence_before_thread_sync()
        T.cuda.cta_sync()
        if wg == 0:
            if warp == 0:
                _release_tmem(tmem_addr, tmem_cols, 1)

    return hgemm_v5


def hgemm_v6(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, SMS=148,
             EPI_N=64):
    """Persistent, two TMEM accumulators: the epilogue of tile i overlaps the MMAs of tile
    i + 1. SMS: the number of SMs (148 on a B200)."""
    _check("hgemm_v6", M, N, K, dtype, BM, BN, BK, STAGES, EPI_N)
    tiles_m, tiles_n, k_tiles = M // BM, N // BN, math.ceil(K / BK)
    tiles = tiles_m * tiles_n
    ctas = min(SMS, tiles)
    group_m = math.gcd(GROUP_M, tiles_m)
    tmem_cols = _tmem_columns(2 * BN)
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    stage_bytes = (BM + BN) * BK * 2

    @T.prim_func
    def hgemm_v6(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([ctas])
        wg = T.warpgroup_id([2])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])

        tmem_addr, full, empty, acc_full, acc_empty, As, Bs = _stage_ring(
            T.SMEMPool(), STAGES, 2, BM, BN, BK, dtype, a_layout, b_layout)
        if wg == 0:
            if warp == 0:
                _init_ring(lane, full, empty, acc_full, acc_empty, STAGES, tmem_addr, tmem_cols,
                           1)
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        T.ptx.tcgen05.fence_after_thread_sync()

        def accumulator(b):
            """Accumulator b: BN columns from column b * BN of the allocation."""
            return _tmem_buffer(tmem_addr[0] + b * BN, BN)

        if wg == 0:
            if warp == 0:
                # --- TMA warp: the k-tiles of every tile of this CTA, through one ring ---
                if T.ptx.elect_sync():
                    it: T.int32 = 0
                    for t in T.serial(pid, tiles, ctas):
                        m0, n0 = _tile_origin(t, tiles_m, tiles_n, group_m, BM, BN)
                        for kt in T.serial(k_tiles):
                            s = it % STAGES
                            T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (it // STAGES + 1) % 2)
                            T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                            Tx.copy_async(As[s * BM:s * BM + BM, :],
                                          A[m0:m0 + BM, kt * BK:kt * BK + BK], full.ptr_to([s]))
                            Tx.copy_async(Bs[s * BN:s * BN + BN, :],
                                          B[n0:n0 + BN, kt * BK:kt * BK + BK], full.ptr_to([s]))
                            it += 1
                    _drain(empty, it, STAGES)
            if warp == 1:
                # --- MMA warp: tile i into accumulator i % 2, once the epilogue freed it ---
                if T.ptx.elect_sync():
                    it: T.int32 = 0
                    i: T.int32 = 0
                    for t in T.serial(pid, tiles, ctas):
                        b = i % 2
                        T.ptx.mbarrier.try_wait(acc_empty.ptr_to([b]), (i // 2 + 1) % 2)
                        T.ptx.tcgen05.fence_after_thread_sync()
                        for kt in T.serial(k_tiles):
                            s = it % STAGES
                            T.ptx.mbarrier.try_wait(full.ptr_to([s]), (it // STAGES) % 2)
                            Tx.gemm_async(accumulator(b), As[s * BM:s * BM + BM, :],
                                          Bs[s * BN:s * BN + BN, :], accum=(kt != 0),
                                          cta_group=1)
                            T.ptx.tcgen05.commit(empty.ptr_to([s]), cta_group=1)
                            it += 1
                        T.ptx.tcgen05.commit(acc_full.ptr_to([b]), cta_group=1)
                        i += 1
        else:
            # --- epilogue warpgroup: tile i out of accumulator i % 2 ---
            registers = _epilogue_registers(EPI_N, dtype)
            i: T.int32 = 0
            for t in T.serial(pid, tiles, ctas):
                m0, n0 = _tile_origin(t, tiles_m, tiles_n, group_m, BM, BN)
                b = i % 2
                T.ptx.mbarrier.try_wait(acc_full.ptr_to([b]), (i // 2) % 2)
                T.ptx.tcgen05.fence_after_thread_sync()
                _store_tile(accumulator(b), registers, D, m0 + warp * 32 + lane, n0, BN, EPI_N)
                # This thread's tcgen05.ld are done: hand the accumulator back to the MMA warp.
                T.ptx.tcgen05.fence_before_thread_sync()
                T.ptx.mbarrier.arrive(acc_empty.ptr_to([b]))
                i += 1

        T.ptx.tcgen05.fence_before_thread_sync()
        T.cuda.cta_sync()
        if wg == 0:
            if warp == 0:
                _release_tmem(tmem_addr, tmem_cols, 1)

    return hgemm_v6


def hgemm_v7(M, N, K, dtype="float16", BM=128, BN=256, BK=64, STAGES=4, GROUP_M=8, EPI_N=64):
    """CTA pairs (tcgen05.mma cta_group::2): a cluster of 2 CTAs computes a 2*BM x BN tile with
    one M = 2*BM MMA that the even CTA issues. Each CTA loads its BM rows of A and its BN / 2
    rows of B into its own shared memory, completing on the even CTA's `full` barrier (which
    expects both CTAs' bytes); the MMA reads both CTAs' stages and writes each CTA's BM rows of
    the accumulator into that CTA's tensor memory; its commits arrive at both CTAs' barriers
    (multicast), so each CTA frees its own stages and runs its own epilogue. Otherwise v5."""
    _check("hgemm_v7", M, N, K, dtype, BM, BN, BK, STAGES, EPI_N)
    if BN % 32:
        raise ShapeError(f"hgemm_v7: BN={BN} must be a multiple of 32 (each CTA of the pair "
                         f"holds BN / 2 rows of B, a multiple of 16)")
    if M % (2 * BM):
        raise ShapeError(f"hgemm_v7: M={M} is not a multiple of the pair's {2 * BM} rows")
    pairs_m, tiles_n, k_tiles = M // (2 * BM), N // BN, math.ceil(K / BK)
    group_m = math.gcd(GROUP_M, pairs_m)
    tmem_cols = _tmem_columns(BN)
    HALF_N = BN // 2
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * HALF_N, BK))
    pair_stage_bytes = 2 * (BM + HALF_N) * BK * 2       # both CTAs' loads of one stage

    @T.prim_func
    def hgemm_v7(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                 D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([2 * pairs_m * tiles_n])
        T.cluster_shape([2, 1, 1])
        wg = T.warpgroup_id([2])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        rank = T.cuda.cluster_ctarank()
        leader = rank - rank % 2
        m_pair, n0 = _tile_origin(pid // 2, pairs_m, tiles_n, group_m, 2 * BM, BN)
        m0 = m_pair + rank % 2 * BM                     # this CTA's rows of A and D
        nb = n0 + rank % 2 * HALF_N                     # this CTA's rows of B

        # (the even CTA's `full` barriers count both CTAs' loads)
        tmem_addr, full, empty, acc_full, _, As, Bs = _stage_ring(
            T.SMEMPool(), STAGES, 1, BM, HALF_N, BK, dtype, a_layout, b_layout)
        if wg == 0:
            if warp == 0:       # one warp of each CTA of the pair allocates, together
                _init_ring(lane, full, empty, acc_full, None, STAGES, tmem_addr, tmem_cols, 2)
        T.ptx.fence.mbarrier_init()
        T.cuda.cluster_sync()           # the peer's barriers exist before anyone signals them
        T.ptx.tcgen05.fence_after_thread_sync()
        tmem = _tmem_buffer(tmem_addr[0], tmem_cols)

        if wg == 0:
            if warp == 0:
                # --- TMA warp of each CTA: its halves, counted on the even CTA's barrier ---
                if T.ptx.elect_sync():
                    for kt in T.serial(k_tiles):
                        s = kt % STAGES
                        T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (kt // STAGES + 1) % 2)
                        if rank % 2 == 0:
                            T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), pair_stage_bytes)
                        leader_full = T.cuda.mapa(full.ptr_to([s]), leader)
                        Tx.copy_async(As[s * BM:s * BM + BM, :],
                                      A[m0:m0 + BM, kt * BK:kt * BK + BK], leader_full)
                        Tx.copy_async(Bs[s * HALF_N:s * HALF_N + HALF_N, :],
                                      B[nb:nb + HALF_N, kt * BK:kt * BK + BK], leader_full)
                    # The even CTA's commits arrive on both CTAs' `empty` barriers: each CTA
                    # drains its own, and the cluster_sync below keeps the pair together
                    # until both have.
                    _drain(empty, k_tiles, STAGES)
            if warp == 1:
                # --- MMA warp of the even CTA: M = 2 * BM, commits to both CTAs ---
                if rank % 2 == 0:
                    if T.ptx.elect_sync():
                        for kt in T.serial(k_tiles):
                            s = kt % STAGES
                            T.ptx.mbarrier.try_wait(full.ptr_to([s]), (kt // STAGES) % 2)
                            Tx.gemm_async(tmem[:, :BN], As[s * BM:s * BM + BM, :],
                                          Bs[s * HALF_N:s * HALF_N + HALF_N, :],
                                          accum=(kt != 0), cta_group=2)
                            T.ptx.tcgen05.commit(empty.ptr_to([s]), cta_group=2, multicast=0b11)
                        T.ptx.tcgen05.commit(acc_full.ptr_to([0]), cta_group=2, multicast=0b11)
        else:
            # --- epilogue warpgroup of each CTA: its BM rows, from its own tensor memory ---
            T.ptx.mbarrier.try_wait(acc_full.ptr_to([0]), 0)
            T.ptx.tcgen05.fence_after_thread_sync()
            _store_tile(tmem, _epilogue_registers(EPI_N, dtype), D, m0 + warp * 32 + lane, n0,
                        BN, EPI_N)

        T.ptx.tcgen05.fence_before_thread_sync()
        T.cuda.cluster_sync()           # neither CTA frees or exits while the pair still works
        if wg == 0:
            if warp == 0:
                _release_tmem(tmem_addr, tmem_cols, 2)

    return hgemm_v7
