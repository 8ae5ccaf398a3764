"""The TMA-store epilogue: registers -> shared memory (stmatrix) -> global memory (TMA store),
one EPI_N-column chunk at a time through a BM x EPI_N staging buffer, for each chunk:

    the storing thread waits until the previous store has read the staging buffer
        (bulk wait_group; a hook may then start a TMA load into it, e.g. a residual window)
    [the caller computes the chunk's values: a cast, or epilogue math]
    barrier; registers -> staging (stmatrix); fence.proxy.async (generic writes -> TMA reads);
    barrier; the storing thread issues the TMA store of the chunk and commits it

TMA clips the store at D's edges, so ragged M and N need no guard; but its rows must be a whole
number of 16-byte units. DirectStore, the other epilogue, stores from registers straight to D
with masked stores instead: any N (and no staging buffer), at the cost of narrower stores. Two
forms of TmaStore:
  per warpgroup   each consumer warpgroup stages and stores its own 64 rows, synchronising on
                  its own named barrier (id wg, 128 threads);
  whole CTA       (cta_wide=True) the first thread of consumer warpgroup 1 stores all BM rows
                  and every consumer thread meets on named barrier 1: the form a TMA load into
                  the staging buffer needs, whose issuer must be one thread of the CTA.
"""

from __future__ import annotations

import tilemlir.lang as T

Tx = T.tile


class TmaStore:
    """The epilogue's staging buffer (BM x EPI_N, allocated from `pool`) and its stores into D.
    wg, warp, lane: the thread's warpgroup and ids in it; consumers: the consumer warpgroups
    (1 .. consumers)."""

    def __init__(self, pool, D, dtype: str, BM: int, EPI_N: int, wg, warp, lane,
                 consumers: int, cta_wide: bool = False):
        self.Cs = pool.alloc((BM, EPI_N), dtype,
                             layout=T.mma_shared_layout(dtype, "128B", (BM, EPI_N)))
        self.D, self.BM, self.cols = D, BM, EPI_N
        self.wg, self.warp, self.lane = wg, warp, lane
        self.consumers, self.cta_wide = consumers, cta_wide

    @T.macro
    def await_staging(self, then=None):
        """The storing thread waits until the previous store has read the staging buffer, then
        runs `then` (a hook, or None). Also: before exit, shared memory lives until it is read."""
        if self.cta_wide:
            if self.wg == 1:
                self._await(then)
        else:
            self._await(then)

    @T.macro
    def _await(self, then):
        if self.warp == 0:
            if self.lane == 0:
                T.ptx.bulk.wait_group(0)
                if then is not None:
                    then()

    @T.macro
    def _sync(self):
        if self.cta_wide:
            T.cuda.bar_sync(1, 128 * self.consumers)
        else:
            T.cuda.bar_sync(self.wg, 128)

    @T.macro
    def publish(self, out, row, m0, n0, c0):
        """Stores chunk c0 (columns c0 .. c0 + EPI_N of the tile at (m0, n0)) from `out`, this
        warpgroup's 64 rows from `row`: `out` holds the chunk, or the whole tile's columns."""
        cols = self.cols
        self._sync()
        Tx.wg.copy(self.Cs[row:row + 64, :], out[:, c0:c0 + cols] if out.shape[1] > cols else out)
        T.ptx.fence.proxy_async("shared::cta")      # generic writes -> the TMA store's reads
        self._sync()
        if self.cta_wide:
            if self.wg == 1:
                self._store(0, self.BM, m0, n0, c0)
        else:
            self._store(row, 64, m0, n0, c0)

    @T.macro
    def _store(self, row, rows, m0, n0, c0):
        if self.warp == 0:
            if self.lane == 0:
                Tx.copy_async(self.D[m0 + row:m0 + row + rows, n0 + c0:n0 + c0 + self.cols],
                              self.Cs[row:row + rows, :])
                T.ptx.bulk.commit_group()

    @T.macro
    def chunk(self, out, row, m0, n0, c0):
        """Chunk c0 of `out` (the tile's values in the output type): once the staging buffer
        is free, published."""
        self.await_staging()
        self.publish(out, row, m0, n0, c0)

    @T.macro
    def tile(self, out, row, m0, n0):
        """Every chunk of `out`, the tile's values in the output type."""
        for c0 in T.unroll(0, out.shape[1], self.cols):
            self.chunk(out, row, m0, n0, c0)


class DirectStore:
    """The epilogue without TMA: each thread stores the elements of the tile it holds straight
    from registers to D, masked at D's edges (Tx.wg.copy with bounds: stores past M or N are
    skipped). For a D whose rows are not a whole number of 16-byte units (N not a multiple of 8
    for 16-bit elements), which a TMA store cannot write; the stores are as wide as D's row
    alignment and the bounds allow (2 bytes each for an odd N). TmaStore's interface, with no
    staging buffer to wait for."""

    def __init__(self, D, M: int, N: int, EPI_N: int):
        self.D, self.M, self.N, self.cols = D, M, N, EPI_N

    @T.macro
    def await_staging(self, then=None):
        """Nothing to wait for (no staging buffer); `then` must be None."""
        assert then is None, "DirectStore has no staging buffer for a hook to load into"

    @T.macro
    def publish(self, out, row, m0, n0, c0):
        """Stores chunk c0 (columns c0 .. c0 + EPI_N of the tile at (m0, n0)) from `out`, this
        warpgroup's 64 rows from `row`, the parts inside D only."""
        cols = self.cols
        r0 = m0 + row
        Tx.wg.copy(self.D[r0:r0 + 64, n0 + c0:n0 + c0 + cols],
                   out[:, c0:c0 + cols] if out.shape[1] > cols else out,
                   bounds=(self.M - r0, self.N - n0 - c0))

    @T.macro
    def chunk(self, out, row, m0, n0, c0):
        """Chunk c0 of `out` (the tile's values in the output type), stored."""
        self.publish(out, row, m0, n0, c0)

    @T.macro
    def tile(self, out, row, m0, n0):
        """Every chunk of `out`, the tile's values in the output type."""
        for c0 in T.unroll(0, out.shape[1], self.cols):
            self.chunk(out, row, m0, n0, c0)
