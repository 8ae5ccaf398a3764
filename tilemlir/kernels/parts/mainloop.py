"""The k-loop of a warp-specialized Hopper GEMM: A and B k-tiles through the stages of a
StageRing, loaded by one producer thread with TMA, multiplied by BM / 64 consumer warpgroups
with wgmma (64 rows of A each, all BN columns of B).

The consumers keep one wgmma group in flight: after issuing k-tile kt's MMAs they wait until
only that group is pending, so k-tile kt - 1's MMAs are done and its stage is freed (one thread
per warpgroup arrives on its empty barrier). In a 2x1 cluster (rank given) each CTA loads its
own A tile and half of B (BN / 2 rows), multicast into the same stage of both CTAs; the stage's
full barrier then expects A and both halves of B.
"""

from __future__ import annotations

import tilemlir.lang as T

Tx = T.tile


class GemmStages:
    """A's BM x BK and B's BN x BK k-tiles in each stage of `ring`, allocated from `pool` from
    byte 1024 (the mbarriers sit below; 128-byte swizzled tiles start on a 1024-byte swizzle
    repeat). warp, lane: the thread's ids in its warpgroup; rank: this CTA's rank in a 2x1
    cluster that multicasts B (None: no cluster). B holds `b_dtype` (None: `dtype`), for the
    8-bit floats, which wgmma takes mixed (e4m3 x e5m2)."""

    def __init__(self, pool, ring, A, B, dtype: str, BM: int, BN: int, BK: int, warp, lane,
                 rank=None, b_dtype=None):
        stages = ring.stages
        b_dtype = dtype if b_dtype is None else b_dtype
        pool.move_base_to(1024)
        self.As = pool.alloc((stages * BM, BK), dtype,
                             layout=T.mma_shared_layout(dtype, "128B", (stages * BM, BK)))
        self.Bs = pool.alloc((stages * BN, BK), b_dtype,
                             layout=T.mma_shared_layout(b_dtype, "128B", (stages * BN, BK)))
        self.ring, self.A, self.B = ring, A, B
        self.BM, self.BN, self.BK = BM, BN, BK
        self.warp, self.lane = warp, lane
        self.rank = 0 if rank is None else rank
        self.b_rows = BN if rank is None else BN // 2      # the rows of B this CTA loads
        self.multicast = None if rank is None else 0b11
        # A and all of B land in each CTA
        self.stage_bytes = (BM * T.dtype_bits(dtype) + BN * T.dtype_bits(b_dtype)) * BK // 8

    # ---------------------------------------------------------------------------- producer
    @T.macro
    def load(self, s, kt, m0, nb):
        """k-tile kt of A's rows m0.. and of B's rows nb.. into stage s."""
        BM, BN, BK = self.BM, self.BN, self.BK
        full = self.ring.full
        Tx.copy_async(self.As[s * BM:s * BM + BM, :], self.A[m0:m0 + BM, kt * BK:kt * BK + BK],
                      full.ptr_to([s]))
        rank, rows = self.rank, self.b_rows
        Tx.copy_async(self.Bs[s * BN + rank * rows:s * BN + rank * rows + rows, :],
                      self.B[nb:nb + rows, kt * BK:kt * BK + BK], full.ptr_to([s]),
                      multicast=self.multicast)

    @T.macro
    def produce(self, it, m0, n0, k_begin, k_end):
        """The k-tiles k_begin .. k_end of the tile at (m0, n0), from ring iteration `it`;
        returns the next iteration."""
        nb = n0 + self.rank * self.b_rows
        for kt in T.serial(k_begin, k_end):
            s = self.ring.acquire(it, self.stage_bytes)
            self.load(s, kt, m0, nb)
            it += 1
        return it

    @T.macro
    def producer(self, schedule, worker, rank=0):
        """The producer thread's work in a persistent kernel: every k-tile of every unit
        `worker` (this CTA, or its cluster) takes from `schedule` (a TileSchedule), through the
        ring; the consumers walk the same units."""
        it: T.int32 = 0
        for u in schedule.walk(worker):
            t, k_begin, k_end, _ = schedule.unit(u)
            m0, n0 = schedule.origin(t, rank)
            it = self.produce(it, m0, n0, k_begin, k_end)

    # ---------------------------------------------------------------------------- consumers
    @T.macro
    def release_previous(self, it):
        """One thread of the warpgroup frees the stage of iteration it - 1."""
        if self.warp == 0:
            if self.lane == 0:
                self.ring.release((it + self.ring.stages - 1) % self.ring.stages)

    @T.macro
    def k_step(self, acc, row, kt, it, k_begin):
        """k-tile kt (ring iteration `it`) into acc, for A's rows row .. row + 64 of the tile:
        its MMAs stay in flight; the previous k-tile's are done, and their stage is freed."""
        BM, BN = self.BM, self.BN
        s = self.ring.wait(it)
        Tx.wg.gemm_async(acc, self.As[s * BM + row:s * BM + row + 64, :],
                         self.Bs[s * BN:s * BN + BN, :], accum=True)
        T.ptx.wgmma.wait_group(1)
        if kt > k_begin:
            self.release_previous(it)

    @T.macro
    def consume(self, acc, row, it, k_begin, k_end, overlap=0, between=None):
        """acc = the product over k-tiles k_begin .. k_end, from ring iteration `it`; every
        stage is freed once its MMAs are done. Returns the next iteration. overlap, between:
        after each of the first `overlap` k-tiles' MMAs are issued, between(j) runs (j = 0 ..
        overlap - 1; e.g. a store of the last tile's j-th chunk, under those MMAs)."""
        Tx.wg.fill(acc, 0.0)
        for j in T.unroll(overlap):
            if k_begin + j < k_end:
                self.k_step(acc, row, k_begin + j, it, k_begin)
                it += 1
            if between is not None:
                between(j)
        for kt in T.serial(k_begin + overlap, k_end):
            self.k_step(acc, row, kt, it, k_begin)
            it += 1
        T.ptx.wgmma.wait_group(0)
        self.release_previous(it)
        return it

    @T.macro
    def consume_units(self, schedule, worker, acc, row, write_back, split_k=None, splits=1):
        """The consumers' side of `producer`: every unit `worker` takes from `schedule` into
        acc, then write_back(m0, n0) of the unit's tile; with split_k (parts.SplitK) through
        its fix-up, where the tile's last unit to finish writes it."""
        it: T.int32 = 0
        for u in schedule.walk(worker):
            t, k_begin, k_end, _ = schedule.unit(u)
            m0, n0 = schedule.origin(t)
            it = self.consume(acc, row, it, k_begin, k_end)
            if split_k is not None:
                def tile():
                    write_back(m0, n0)
                split_k.fix_up(acc, row, u, t, splits, tile)
            else:
                write_back(m0, n0)

    @T.macro
    def promoted_step(self, acc, part, row, kt, it, promote, between=None, j=0):
        """k-tile kt (ring iteration `it`) into part, from zero, then promoted into acc (see
        consume_promoted); between(j) runs while its first MMAs do. A part narrower than the
        tile (PN = BN / 2 columns, say) takes the tile's columns PN at a time: their MMAs,
        their wait, their promotion promote.add(acc[:, c0:c0 + PN], part, kt, c0); the other
        consumer warpgroups' MMAs keep the tensor cores busy while one promotes."""
        BM, BN = self.BM, self.BN
        PN = part.shape[1]
        s = self.ring.wait(it)
        for c0 in T.unroll(0, BN, PN):
            Tx.wg.gemm_async(part, self.As[s * BM + row:s * BM + row + 64, :],
                             self.Bs[s * BN + c0:s * BN + c0 + PN, :], accum=False)
            if c0 == 0:
                promote.fetch(kt)
                if between is not None:
                    between(j)
            T.ptx.wgmma.wait_group(0)
            if c0 + PN == BN:
                self.release_previous(it + 1)    # this k-tile's stage: its MMAs are done
            promote.add(acc[:, c0:c0 + PN], part, kt, c0)

    @T.macro
    def consume_promoted(self, acc, part, row, it, k_begin, k_end, promote, overlap=0,
                         between=None):
        """acc = the sum over k-tiles k_begin .. k_end of each k-tile's product, promoted:
        two-level accumulation (DeepSeek-V3's FP8 GEMM). Each k-tile's MMAs accumulate into the
        registers `part` from zero; once they are done (and the stage freed), the hook
        promote.add(acc, part, kt, c0) adds them into acc in fp32 registers (scaled by the k-tile's
        block scales, say), so that the tensor cores' own accumulation of 8-bit products, whose
        precision is limited, spans one k-tile. promote.fetch(kt) runs between the MMAs' issue
        and their wait (global loads of the k-tile's scales), and so does between(j) for the
        first `overlap` k-tiles (j = 0 .. overlap - 1; it runs alone where K has fewer k-tiles),
        as in consume. Returns the next iteration."""
        Tx.wg.fill(acc, 0.0)
        for j in T.unroll(overlap):
            if k_begin + j < k_end:
                self.promoted_step(acc, part, row, k_begin + j, it, promote, between, j)
                it += 1
            else:
                between(j)
        for kt in T.serial(k_begin + overlap, k_end):
            self.promoted_step(acc, part, row, kt, it, promote)
            it += 1
        return it


class CpAsyncStages(GemmStages):
    """GemmStages fed without TMA: every thread of the producer warpgroup copies its share of
    each k-tile with masked cp.async (Tx.wg.copy_async with bounds: zeros past M, N and K), for
    operands whose rows are not a whole number of TMA's 16-byte units (K not a multiple of 8
    for 16-bit elements). The consumers are GemmStages' own.

    A cp.async completes in the thread that issued it, so the stage's full barrier counts the
    128 producer threads (Barriers.ring(..., producers=128)): each waits for its copies of a
    k-tile one k-tile later (wait_group 1, so that two k-tiles' copies are in flight), fences
    them for the async proxy and arrives (StageRing.fill_stage). That lag needs STAGES >= 3: the
    stage the producer waits to refill is freed by the consumers' k-step two k-tiles back.
    With 8-bit elements (K not a multiple of 16) it serves consume_promoted the same way."""

    def __init__(self, pool, ring, A, B, dtype: str, BM: int, BN: int, BK: int, warp, lane,
                 M: int, N: int, K: int, b_dtype=None):
        super().__init__(pool, ring, A, B, dtype, BM, BN, BK, warp, lane, b_dtype=b_dtype)
        self.M, self.N, self.K = M, N, K

    @T.macro
    def load(self, s, kt, m0, nb):
        """This thread's share of k-tile kt of A's rows m0.. and B's rows nb.. into stage s."""
        BM, BN, BK = self.BM, self.BN, self.BK
        k0 = kt * BK
        Tx.wg.copy_async(self.As[s * BM:s * BM + BM, :], self.A[m0:m0 + BM, k0:k0 + BK],
                         bounds=(self.M - m0, self.K - k0))
        Tx.wg.copy_async(self.Bs[s * BN:s * BN + BN, :], self.B[nb:nb + BN, k0:k0 + BK],
                         bounds=(self.N - nb, self.K - k0))

    @T.macro
    def produce(self, it, m0, n0, k_begin, k_end):
        """The k-tiles k_begin .. k_end of the tile at (m0, n0), from ring iteration `it`;
        returns the next iteration. The last one's stage is filled by finish()."""
        for kt in T.serial(k_begin, k_end):
            s = self.ring.wait_free(it)
            self.load(s, kt, m0, n0)
            T.ptx.cp_async.commit_group()
            if it > 0:
                T.ptx.cp_async.wait_group(1)        # iteration it - 1's copies are complete
                self.ring.fill_stage(it - 1)
            it += 1
        return it

    @T.macro
    def producer(self, schedule, worker, rank=0):
        """Every thread of the producer warpgroup: every k-tile of every unit `worker` takes
        from `schedule`, through the ring."""
        it: T.int32 = 0
        for u in schedule.walk(worker):
            t, k_begin, k_end, _ = schedule.unit(u)
            m0, n0 = schedule.origin(t, rank)
            it = self.produce(it, m0, n0, k_begin, k_end)
        if it > 0:
            T.ptx.cp_async.wait_group(0)
            self.ring.fill_stage(it - 1)


def k_tile_stages(barriers, pool, cp_async: bool, stages: int, consumers: int, A, B,
                  dtype: str, BM: int, BN: int, BK: int, warp, lane, extents, *, peer=None,
                  rank=None, b_dtype=None):
    """The k-tile ring and the stages in it: TMA loads issued by one thread (GemmStages, in a
    2x1 cluster with `peer` and `rank`), or with `cp_async` masked cp.async by the producer
    warpgroup's 128 threads (CpAsyncStages, bounded by `extents` = (M, N, K)). Returns
    (ring, stages)."""
    if cp_async:
        ring = barriers.ring(stages, consumers, producers=128)
        return ring, CpAsyncStages(pool, ring, A, B, dtype, BM, BN, BK, warp, lane, *extents,
                                   b_dtype=b_dtype)
    ring = barriers.ring(stages, consumers, peer=peer)
    return ring, GemmStages(pool, ring, A, B, dtype, BM, BN, BK, warp, lane, rank=rank,
                            b_dtype=b_dtype)
