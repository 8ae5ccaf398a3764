"""The TMA-store epilogue: registers -> shared memory (stmatrix) -> global memory (TMA store),
one EPI_N-column chunk at a time through a BM x EPI_N staging buffer, for each chunk:

    the storing thread waits until the previous store has read the staging buffer
        (bulk wait_group; a hook may then start a TMA load into it, e.g. a residual window)
    [the caller computes the chunk's values: a cast, or epilogue math]
    barrier; registers -> staging (stmatrix); fence.proxy.async (generic writes -> TMA reads);
    barrier; the storing thread issues the TMA store of the chunk and commits it

TMA clips the store at D's edges, so ragged M and N need no guard; but its rows must be a whole
number of 16-byte units. DirectStore, the second, stores from registers straight to D
with masked stores instead: any N (and no staging buffer), at the cost of narrower stores
(one 2-byte store an element for an odd N). StagedStore, the third, takes any N through a
padded staging buffer and stores D's rows in 16-byte units aligned to D's own. Two forms of
TmaStore:
  per warpgroup   each consumer warpgroup stages and stores its own 64 rows, synchronising on
                  its own named barrier (id wg, 128 threads);
  whole CTA       (cta_wide=True) the first thread of consumer warpgroup 1 stores all BM rows
                  and every consumer thread meets on named barrier 1: the form a TMA load into
                  the staging buffer needs, whose issuer must be one thread of the CTA.
"""

from __future__ import annotations

import tilemlir.lang as T
from tilemlir.kernels.parts.checks import STAGED_PAD

Tx = T.tile


class _Chunks:
    """What the epilogues share: a tile stored chunk by chunk, EPI_N (self.cols) columns each."""

    def _columns(self, out, c0):
        """Chunk c0's columns of `out`, which holds the chunk or the whole tile's columns."""
        return out[:, c0:c0 + self.cols] if out.shape[1] > self.cols else out

    @T.macro
    def tile(self, out, row, m0, n0):
        """Every chunk of `out`, the tile's values in the output type."""
        for c0 in T.unroll(0, out.shape[1], self.cols):
            self.chunk(out, row, m0, n0, c0)


class _StoredAtOnce(_Chunks):
    """An epilogue whose stores are done when `publish` returns (no TMA store in flight, so
    nothing to wait for before the staging buffer, if any, is written again)."""

    @T.macro
    def await_staging(self, then=None):
        """Nothing to wait for; `then` must be None (no TMA load to start)."""
        assert then is None, f"{type(self).__name__} has no TMA load to start into a buffer"

    @T.macro
    def chunk(self, out, row, m0, n0, c0):
        """Chunk c0 of `out` (the tile's values in the output type), stored."""
        self.publish(out, row, m0, n0, c0)


class TmaStore(_Chunks):
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
        self._sync()
        Tx.wg.copy(self.Cs[row:row + 64, :], self._columns(out, c0))
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


class DirectStore(_StoredAtOnce):
    """The epilogue without TMA: each thread stores the elements of the tile it holds straight
    from registers to D, masked at D's edges (Tx.wg.copy with bounds: stores past M or N are
    skipped). For a D whose rows are not a whole number of 16-byte units (N not a multiple of 8
    for 16-bit elements), which a TMA store cannot write; the stores are as wide as D's row
    alignment and the bounds allow (2 bytes each for an odd N). TmaStore's interface, with no
    staging buffer to wait for."""

    def __init__(self, D, M: int, N: int, EPI_N: int):
        self.D, self.M, self.N, self.cols = D, M, N, EPI_N

    @T.macro
    def publish(self, out, row, m0, n0, c0):
        """Stores chunk c0 (columns c0 .. c0 + EPI_N of the tile at (m0, n0)) from `out`, this
        warpgroup's 64 rows from `row`, the parts inside D only."""
        cols = self.cols
        r0 = m0 + row
        Tx.wg.copy(self.D[r0:r0 + 64, n0 + c0:n0 + c0 + cols], self._columns(out, c0),
                   bounds=(self.M - r0, self.N - n0 - c0))


RUN = 8             # 16-bit elements of one 16-byte unit of D


class StagedStore(_StoredAtOnce):
    """The epilogue for a D whose rows are not a whole number of 16-byte units (N not a
    multiple of 8), which TMA cannot store and DirectStore stores as narrowly as the rows are
    aligned (2 bytes an element for an odd N). Each consumer warpgroup, for each EPI_N-column
    chunk of its 64 rows:

        barrier (its last reads of the staging rows are done); registers -> staging; barrier
        each row segment (its columns inside D) seen in D's flat memory from the 16-byte unit
        that holds its first element: unit j holds the segment's elements 8j - lead .. + 8
          inner units (wholly inside the segment), the warpgroup's threads in turn: read
            realigned from the staging row (Tx.copy: copy/realign.py), one 16-byte store
          its two end units, a thread each: read masked, stored element by element

    so the rows leave in 16-byte stores whatever D's alignment, as the norms' shifted rows do.
    A segment of EPI_N columns spans at most EPI_N / 8 + 1 units. The staging rows are EPI_N
    + STAGED_PAD elements: 16 bytes past a multiple of 128, so the eight rows of a matrix that
    stmatrix writes fall on different banks, and an end unit's read stays in its row.
    TmaStore's interface, with no TMA store to wait for (await_staging has nothing to do)."""

    def __init__(self, pool, D, M, N, dtype: str, BM: int, EPI_N: int, wg, warp, lane):
        self.Cs = pool.alloc((BM, EPI_N + STAGED_PAD), dtype)
        self.flat = D.view(1, D.shape[0] * N)
        self.M, self.N, self.cols, self.dtype = M, N, EPI_N, dtype
        self.wg, self.warp, self.lane = wg, warp, lane
        self.inner = EPI_N // RUN - 1                   # inner units of a segment, at most
        self.rounds = -(-64 * self.inner // 128)        # (row, inner unit) pairs per thread

    @T.macro
    def publish(self, out, row, m0, n0, c0):
        """Stores chunk c0 (columns c0 .. c0 + EPI_N of the tile at (m0, n0)) from `out`, this
        warpgroup's 64 rows from `row`, the parts inside D only."""
        cols = self.cols
        T.cuda.bar_sync(self.wg, 128)
        Tx.wg.copy(self.Cs[row:row + 64, 0:cols], self._columns(out, c0))
        T.cuda.bar_sync(self.wg, 128)
        width = T.max(T.min(self.N - n0 - c0, cols), 0)     # the chunk's columns inside D
        t = self.warp * 32 + self.lane
        for i in T.unroll(self.rounds):
            pair = i * 128 + t
            if pair < 64 * self.inner:
                self._inner(row, pair // self.inner, pair % self.inner + 1, m0, n0 + c0,
                            width)
        self._end(row, t % 64, t // 64, m0, n0 + c0, width)

    def _segment(self, m, n):
        """(start, lead): the 16-byte unit of D's flat memory holding element (m, n), and the
        elements of that unit before it."""
        first = m * self.N + n
        start = first // RUN * RUN
        return start, first - start

    @T.macro
    def _inner(self, row, r, j, m0, n, width):
        # unit j of the segment of row r, stored if before its last unit (_end stores that
        # one): j < (lead + width - 1) // 8, so wholly inside the segment
        start, lead = self._segment(m0 + row + r, n)
        if m0 + row + r < self.M:
            if j * RUN + RUN < lead + width:
                x = T.alloc_local((1, RUN), self.dtype)
                c = j * RUN - lead
                Tx.copy(x, self.Cs[row + r:row + r + 1, c:c + RUN])
                Tx.copy(self.flat[0:1, start + j * RUN:start + j * RUN + RUN], x)

    @T.macro
    def _end(self, row, r, tail, m0, n, width):
        # the segment's first unit (tail = 0) or its last (1; none if it is the first)
        start, lead = self._segment(m0 + row + r, n)
        if width > 0:
            last = (lead + width - 1) // RUN
            if (tail == 0) | (last > 0):
                j = tail * last
                c = j * RUN - lead
                x = T.alloc_local((1, RUN), self.dtype)
                bounds = (self.M - (m0 + row + r), (0 - c, width - c))
                Tx.copy(x, self.Cs[row + r:row + r + 1, c:c + RUN], bounds=bounds)
                Tx.copy(self.flat[0:1, start + j * RUN:start + j * RUN + RUN], x,
                        bounds=bounds)


def epilogue_store(kind: str, pool, D, M, N, dtype: str, BM: int, EPI_N: int, wg, warp, lane,
                   consumers: int, cta_wide: bool = False):
    """The epilogue named by a kernel's EPILOGUE ("tma", "staged" or "direct"; checks.EPILOGUES),
    its staging buffer (if any) allocated from `pool`; cta_wide: TmaStore's whole-CTA form."""
    if kind == "tma":
        return TmaStore(pool, D, dtype, BM, EPI_N, wg, warp, lane, consumers, cta_wide=cta_wide)
    if kind == "staged":
        return StagedStore(pool, D, M, N, dtype, BM, EPI_N, wg, warp, lane)
    return DirectStore(D, M, N, EPI_N)
