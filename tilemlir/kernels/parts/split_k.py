"""The split-K fix-up: the units that accumulate runs of one tile's k-tiles meet in an fp32
workspace W and a counter per tile in C.

Each consumer warpgroup publishes its fp32 partial (its 64 rows) to its unit's block of W, then
counts itself on its tile's counter: a warpgroup barrier first (so that the release covers
every thread's stores), then one thread's atom.add, acq_rel at gpu scope, whose answer (am I the
last?) bar_or hands to the whole warpgroup, after its acquire. The last to count sums the
partials in split order (so the result is the same whichever unit is last), resets the counter
to 0 for the next launch, and writes the tile. W and C are the kernel's parameters; launches
that share them must be ordered (one stream).
"""

from __future__ import annotations

import tilemlir.lang as T

Tx = T.tile

def split_k_buffers(tiles: int, splits: int, BM: int, BN: int) -> tuple[tuple, tuple]:
    """Shapes of W (float32: one BM x BN block per split of each of `tiles` tiles) and C (int32
    zeros before the first launch: one counter per tile and consumer warpgroup; the kernel
    leaves them zero)."""
    return (tiles * splits * BM, BN), (tiles * (BM // 64),)


class SplitK:
    """The fix-up of a kernel with BM-row tiles and `consumers` warpgroups over W and C. wg,
    warp, lane: the thread's warpgroup (1 .. consumers) and ids in it."""

    def __init__(self, W, C, BM: int, consumers: int, wg, warp, lane):
        self.W, self.C, self.BM, self.consumers = W, C, BM, consumers
        self.wg, self.warp, self.lane = wg, warp, lane

    @T.macro
    def count(self, tile, arrivals, piece=0, pieces=1):
        """Counts this warpgroup on `tile`'s counter (on piece `piece` of its `pieces`, where a
        tile's column ranges are counted apart) once every thread's partial is written;
        returns (whether it came last of `arrivals`, for the whole warpgroup; the counter)."""
        T.cuda.bar_sync(self.wg, 128)             # every thread's partial is written
        counter = (tile * pieces + piece) * self.consumers + self.wg - 1
        last: T.boolean = False
        if self.warp == 0:
            if self.lane == 0:
                last = T.ptx.atom_add(self.C.ptr_to([counter]), 1, sem="acq_rel",
                                      scope="gpu") == arrivals - 1
        # One thread's answer, for the warpgroup (and after its acquire).
        return T.cuda.bar_or(self.wg, 128, last), counter

    @T.macro
    def reset(self, counter):
        """The counter back to 0, for the next launch."""
        if self.warp == 0:
            if self.lane == 0:
                self.C[counter] = 0

    @T.macro
    def fix_up(self, acc, row, unit, tile, splits, then=None, arrivals=None):
        """Publishes acc (this warpgroup's rows row .. row + 64 of the tile) as W's block
        `unit`, counts it on `tile`; the last of the `splits` units sums the tile's blocks
        tile * splits .. into acc, resets the counter and runs `then` (the tile's store).
        Returns whether this unit was the last. arrivals: the units that meet on this tile
        where fewer than `splits` (the slots a tile has in W) do, a device value (stream-K's
        pieces of an item).

        A block holds each thread's accumulator registers as they are, not the tile's rows:
        register run c (four fp32 values) of thread t at (c * 128 + t) * 4, so that every
        access is one 16-byte load or store and a warp's are 512 contiguous bytes. Every unit
        of a tile runs the same thread-to-element map, so the sum needs no other layout."""
        BM, t = self.BM, self.warp * 32 + self.lane
        mine = acc.local()
        runs = mine.shape[0] // 4
        regs = mine.view(runs, 4)
        stride = BM * acc.shape[1]                      # fp32 values of a unit's block of W
        flat = self.W.view(1, self.W.shape[0] * self.W.shape[1])
        base = (unit * BM + row) * acc.shape[1] + t * 4
        for c in T.unroll(runs):
            o = base + c * 512
            Tx.copy(flat[0:1, o:o + 4], regs[c:c + 1, 0:4])
        meeting = splits if arrivals is None else arrivals
        last, counter = self.count(tile, meeting)
        if last:
            first = (tile * (splits * BM) + row) * acc.shape[1] + t * 4
            x = T.alloc_local((1, 4), "float32")
            if arrivals is None:
                for r in T.unroll(runs):
                    run = regs[r:r + 1, 0:4]
                    at = first + r * 512
                    Tx.copy(run, flat[0:1, at:at + 4])
                    for k in T.serial(1, meeting):
                        theirs = at + k * stride
                        Tx.copy(x, flat[0:1, theirs:theirs + 4])
                        Tx.add(run, run, x)
            else:
                # Slot by slot, each slot's runs loaded together (one branch a slot, not one
                # a run and slot: a loop of `arrivals` trips per run waited for each load in
                # turn: STREAM_K ran 1.15-2.15x slower so, results/2026-12-03-session10/).
                for p in T.unroll(runs):
                    mine_at = first + p * 512
                    Tx.copy(regs[p:p + 1, 0:4], flat[0:1, mine_at:mine_at + 4])
                for k in T.unroll(1, splits):
                    if k < meeting:
                        for q in T.unroll(runs):
                            theirs = first + q * 512 + k * stride
                            Tx.copy(x, flat[0:1, theirs:theirs + 4])
                            Tx.add(regs[q:q + 1, 0:4], regs[q:q + 1, 0:4], x)
            self.reset(counter)
            if then is not None:
                then()
        return last
