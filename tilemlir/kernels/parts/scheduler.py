"""The persistent tile scheduler: which output tiles each CTA (or 2-CTA cluster) computes, in
which order, split how, and what that costs in waves.

A persistent kernel launches at most one worker (a CTA, or a cluster of 2) per SM's share and
lets each walk the work units, taking every `workers`-th: the kernel then lasts about `waves`
unit times. The units are output tiles (or pairs of vertically adjacent tiles, for 2x1
clusters), visited in grouped order so that the CTAs at work at once share A and B in L2; with
split-K a tile is several units, each a contiguous run of its k-tiles.

M may be known only at run time (`T.dynamic("M")`): the tile rows, the units and the grid are
then expressions the runtime evaluates at each call, and the last group of tile rows may be
shorter than group_m (Triton's grouped order), where a static M takes the largest group size
dividing the tile rows. With split-K:

    split_k    every tile is split_k units (for shapes with fewer tiles than SMs)
    tail_split the tiles of the whole waves run as one unit each, those of the partial last
               wave as tail_split units each (that wave then takes a fraction of a tile's time)
    stream_k   the whole waves as with tail_split, then the k-tiles of the items left (with
               the last whole wave, when fewer than half a wave are left) dealt out evenly as
               contiguous runs, one per worker: a run may end inside an item and the next
               begin there (stream-K, as CUTLASS's and Triton's persistent kernels). A run
               is `segments` units (its pieces of items; missing ones empty), an item at most
               `splits` pieces (its slots in the fix-up's workspace); an item in one piece
               needs no fix-up.

The host side (gemm.py's cost model) reads the same object for its waves, so that the kernels
and the model count work the same way.
"""

from __future__ import annotations

import math

import tilemlir.lang as T

# stream_k's bounds (see TileSchedule): the items a worker's run holds pieces of, and the pieces
# an item is run in (its slots in the fix-up's workspace), at most
STREAM_K_SEGMENTS = 3
STREAM_K_PIECES = 4


def tile_origin(t, tiles_m: int, tiles_n: int, group_m: int, BM: int, BN: int):
    """(m0, n0) of tile `t` in grouped order: group_m tile rows swept column by column."""
    in_group = t % (group_m * tiles_n)
    m0 = (t // (group_m * tiles_n) * group_m + in_group % group_m) * BM
    n0 = in_group // group_m * BN
    return m0, n0


def ragged_tile_origin(t, tiles_m, tiles_n: int, group_m: int, BM: int, BN: int):
    """tile_origin for tile rows known only at run time: groups of group_m tile rows, the last
    one of the rows that are left."""
    first = t // (group_m * tiles_n) * group_m
    rows = T.min(tiles_m - first, group_m)
    in_group = t % (group_m * tiles_n)
    return (first + in_group % rows) * BM, in_group // rows * BN


def _ceil_div(a, b):
    return T.ceildiv(a, b) if isinstance(a, T.DimExpr) else math.ceil(a / b)


class Persistent:
    """`units` work units over at most sms // cluster workers (CTAs, or clusters of `cluster`
    CTAs), each taking every `workers`-th unit from its own index."""

    def __init__(self, units: int, sms: int, cluster: int = 1):
        self.units = units
        self.cluster = cluster
        self.capacity = sms // cluster                # the workers that fit at once
        self.workers = T.min(self.capacity, units) if isinstance(units, T.DimExpr) \
            else min(self.capacity, units)
        self.ctas = self.workers * cluster            # the grid

    @property
    def waves(self) -> int:
        return math.ceil(self.units / self.capacity)

    def balanced_workers(self) -> int:
        """The fewest workers that still run `waves` waves, each taking the same number of
        units (4096^3 in pairs: 64 clusters of 4 pairs each, not 66 of which 8 sit out the last
        wave): the same time on fewer SMs, which the power limit rewards."""
        return math.ceil(self.units / self.waves)

    def walk(self, worker):
        """The units of worker `worker` (a device value): `for u in schedule.walk(w)`."""
        return T.serial(worker, self.units, self.workers)


class TileSchedule(Persistent):
    """The BM x BN output tiles of an M x N GEMM as persistent work units: single tiles, or with
    pairs=True pairs of vertically adjacent tiles for 2x1 clusters (a pair's second tile lies
    past M where the tile rows are odd). group_m: the tile rows a group sweeps (in pairs of
    rows with pairs=True: group_m // 2 of them). split_k / tail_split: see the module
    docstring; at most one of them above 1."""

    def __init__(self, M: int, N: int, BM: int, BN: int, *, sms: int, k_tiles: int = 1,
                 group_m: int = 8, split_k: int = 1, tail_split: int = 1, pairs: bool = False,
                 stream_k: bool = False):
        self.BM, self.BN, self.k_tiles = BM, BN, k_tiles
        self.tiles_m, self.tiles_n = _ceil_div(M, BM), math.ceil(N / BN)
        self.pairs = pairs
        self.rows = _ceil_div(self.tiles_m, 2) if pairs else self.tiles_m
        self.items = self.rows * self.tiles_n           # tiles, or pairs of tiles
        group = max(1, group_m // 2) if pairs else group_m
        self.ragged = isinstance(self.rows, T.DimExpr)  # M known only at run time
        self.group_m = group if self.ragged else math.gcd(group, self.rows)
        capacity = sms // 2 if pairs else sms
        self.stream = stream_k
        if stream_k:
            # Ints, or expressions of a run-time M: the last whole wave joins a tail of under
            # half a wave (so that the region holds half a wave to 1.5 waves of items), and a
            # run is at least a third of an item's k-tiles (where the items are few): a run then
            # holds pieces of at most STREAM_K_SEGMENTS items, an item at most
            # STREAM_K_PIECES pieces, whatever M.
            whole = self.items // capacity * capacity
            short = T.min(1, T.max(0, capacity - 2 * (self.items - whole)))
            whole = whole - capacity * short * T.min(1, whole // capacity)
            self.whole = whole
            self.stream_iters = (self.items - whole) * k_tiles
            self.per = T.max(_ceil_div(self.stream_iters, capacity), -(-k_tiles // 3))
            self.splits, self.segments = STREAM_K_PIECES, STREAM_K_SEGMENTS
            super().__init__(whole + capacity * self.segments, sms, 2 if pairs else 1)
            self.tail = True                            # the fix-up's slots, as tail_split's
            return
        self.tail = tail_split > 1
        if self.tail:                                   # the whole waves' items run whole
            self.whole, self.splits = self.items // capacity * capacity, tail_split
        elif split_k > 1:
            self.whole, self.splits = 0, split_k
        else:
            self.whole, self.splits = self.items, 1
        units = self.whole + (self.items - self.whole) * self.splits if self.tail \
            else self.items * self.splits
        super().__init__(units, sms, 2 if pairs else 1)

    @property
    def whole_waves(self) -> int:
        """Waves of items that run whole (with tail_split: before the split last wave)."""
        return self.whole // self.capacity

    @property
    def split_waves(self) -> int:
        """Waves of split units (with tail_split: the last wave's items, split)."""
        return math.ceil((self.units - self.whole) / self.capacity)

    @property
    def split_tiles(self) -> int:
        """The tiles whose splits meet in a split-K fix-up (each has a slot in the workspace
        and a counter): every tile with split_k, those of the split last wave with
        tail_split."""
        if self.tail:
            return (self.items - self.whole) * (2 if self.pairs else 1)
        return self.tiles_m * self.tiles_n if self.splits > 1 else 0

    @T.macro
    def unit(self, u):
        """(item, first k-tile, end k-tile, split index) of work unit u: the `whole` first
        units are whole items; each later item is `splits` consecutive units, the s-th
        accumulating the s-th contiguous run of about k_tiles / splits k-tiles. With stream_k,
        unit whole + i * workers + w is the i-th piece of worker w's run, empty (first == end
        k-tile) where the run has fewer pieces, and its index the piece's among the item's."""
        k_tiles, splits = self.k_tiles, self.splits
        if self.tail:                   # tail_split or stream_k
            t: T.int32 = u
            k_begin: T.int32 = 0
            k_end: T.int32 = k_tiles
            part: T.int32 = 0
            if u >= self.whole:
                if self.stream:
                    v = u - self.whole
                    w = v % self.workers
                    begin = w * self.per
                    end = T.min(begin + self.per, self.stream_iters)
                    item = begin // k_tiles + v // self.workers     # relative to the region
                    start = item * k_tiles
                    first = T.max(begin, start)
                    part = w - start // self.per    # assigned in the order the else arm does
                    t = self.whole + item
                    k_begin = first - start
                    k_end = T.max(T.min(end, start + k_tiles), first) - start
                else:
                    part = (u - self.whole) % splits
                    t = self.whole + (u - self.whole) // splits
                    k_begin = part * k_tiles // splits
                    k_end = (part + 1) * k_tiles // splits
            return t, k_begin, k_end, part
        if splits == 1:
            return u, 0, k_tiles, 0
        s = u % splits
        return u // splits, s * k_tiles // splits, (s + 1) * k_tiles // splits, s

    def pieces(self, t):
        """With stream_k: the pieces item t (in the stream-K region) is run in, 1 to `splits`
        (the workers whose runs hold any of its k-tiles); t an int or a device value."""
        start = (t - self.whole) * self.k_tiles
        return (start + self.k_tiles - 1) // self.per - start // self.per + 1

    @T.macro
    def origin(self, t, rank=0):
        """(m0, n0) of item t's tile; with pairs, of the pair's tile of cluster rank `rank`."""
        origin = ragged_tile_origin if self.ragged else tile_origin
        if self.pairs:
            m_pair, n0 = origin(t, self.rows, self.tiles_n, self.group_m, 2 * self.BM, self.BN)
            return m_pair + rank * self.BM, n0
        return origin(t, self.rows, self.tiles_n, self.group_m, self.BM, self.BN)
