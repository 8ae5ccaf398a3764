"""The shared parts of the Hopper kernels (tilemlir/kernels/parts), on their own: the tile
scheduler's counts (which the GEMM front door's cost model reads too) and the stage ring's
device code, including the producer tail no shipped kernel calls. That the kernels built from
the parts emit what they wrote inline before is bench/ptx_hashes.py's check."""

import re

import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.kernels.parts import Barriers, Persistent, TileSchedule, split_k_buffers


def test_a_schedule_of_pairs_counts_units_waves_and_balanced_clusters():
    # 4096^3 in 128 x 256 tiles: 32 x 16 tiles, 16 x 16 pairs over 66 clusters
    pairs = TileSchedule(4096, 4096, 128, 256, sms=132, pairs=True)
    assert (pairs.items, pairs.units, pairs.workers, pairs.ctas) == (256, 256, 66, 132)
    assert pairs.waves == 4 and pairs.balanced_workers() == 64      # 4 pairs each, not 3.9
    # the last wave's pairs split in two: 198 pairs run whole (3 waves), 58 as 116 units
    tail = TileSchedule(4096, 4096, 128, 256, sms=132, pairs=True, tail_split=2)
    assert (tail.whole, tail.units, tail.whole_waves, tail.split_waves) == (198, 314, 3, 2)
    assert tail.split_tiles == 116                                # both tiles of each split pair


def test_a_split_k_schedule_gives_every_tile_a_slot():
    # 1000 x 1000 in 128 x 256 tiles: 8 x 4 tiles, each 3 units
    split = TileSchedule(1000, 1000, 128, 256, sms=132, split_k=3)
    assert (split.units, split.ctas, split.waves, split.split_tiles) == (96, 96, 1, 32)
    assert split_k_buffers(split.split_tiles, 3, 128, 256) == ((32 * 3 * 128, 256), (64,))
    assert TileSchedule(1000, 1000, 128, 256, sms=132).split_tiles == 0
    assert Persistent(300, 132).waves == 3 and Persistent(300, 132).ctas == 132


def _ring_kernel(stages, tail):
    @T.prim_func
    def ring_kernel(out: T.Buffer((1,), "int32")):
        wg = T.warpgroup_id([2])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        pool = T.SMEMPool()
        barriers = Barriers(pool)
        ring = barriers.ring(stages, 1)
        pool.commit()
        barriers.init(wg, warp, lane)
        if wg == 0:
            if warp == 0:
                if lane == 0:
                    it: T.int32 = 0
                    for _ in T.serial(5):
                        ring.acquire(it, 0)
                        it += 1
                    if tail:
                        ring.producer_tail(it)
        else:
            if warp == 0:
                if lane == 0:
                    for i in T.serial(5):
                        ring.release(ring.wait(i))
    return ring_kernel


def test_a_one_stage_ring_needs_no_stage_arithmetic():
    text = str(_ring_kernel(1, False).build())
    assert text.count('"tile.mbarrier_wait"') == 2
    assert not re.search(r"arith\.(remui|divui) %\w+, %c1(_i32)?(_\d+)? :", text)
    assert len(re.findall(r"arith\.remui %\w+, %c2", text)) == 2     # (it + 1) % 2, i % 2


@pytest.mark.parametrize("stages", [1, 3])
def test_the_producer_tail_waits_out_every_stage(stages):
    plain = str(_ring_kernel(stages, False).build())
    tail = str(_ring_kernel(stages, True).build())
    assert tail.count('"tile.mbarrier_wait"') == plain.count('"tile.mbarrier_wait"') + stages
    ptx = tilemlir.compile(_ring_kernel(stages, True), target="sm_90a", cache=False).ptx
    assert ptx.count("mbarrier.try_wait.parity") >= 2 + stages
