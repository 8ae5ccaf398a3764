"""Split-K (CPU): hgemm_v6 with SPLIT_K > 1 compiled and assembled, its refusals, and the GEMM
front door's heuristic and configurations. The numerics run on the H200 in
test_gemm_splitk_gpu.py; the language pieces split-K needs are tested in
test_atomics_language.py."""

import math
import re

import numpy as np
import pytest

import tilemlir
from bench import interpret_sweep
from tilemlir.kernels import gemm
from tilemlir.kernels.gemm_decode import mpad_for
from tilemlir.kernels.hgemm_hopper import (ShapeError, hgemm_v6, hgemm_v7, split_k_counters_shape,
                                           split_k_workspace_shape, v7_split_buffers_shapes)
from tilemlir.target.ptx import assemble, find_ptxas

# ------------------------------------------------------------------------------ hgemm_v6 SPLIT_K
@pytest.mark.parametrize("shape, config", [
    ((200, 296, 4096), dict(SPLIT_K=3)),
    ((520, 520, 2048), dict(BM=128, BN=128, STAGES=6, SPLIT_K=2)),
    ((1000, 1000, 8192), dict(BM=64, BN=64, STAGES=8, EPI_N=64, SPLIT_K=8)),
])
def test_split_k_compiles_and_assembles(shape, config):
    M, N, K = shape
    kernel = tilemlir.compile(hgemm_v6(M, N, K, **config), target="sm_90a", cache=False)
    BM, BN = config.get("BM", 128), config.get("BN", 256)
    split = config["SPLIT_K"]
    params = kernel.signature.params
    assert [(p.name, p.dtype, p.shape) for p in params[3:]] == [
        ("W", "f32", split_k_workspace_shape(M, N, BM, BN, split)),
        ("C", "i32", split_k_counters_shape(M, N, BM, BN))]
    tiles = math.ceil(M / BM) * math.ceil(N / BN)
    assert kernel.signature.grid == (min(132, tiles * split), 1, 1)
    ptx = kernel.ptx
    # publish (a thread's fp32 registers as they are, in 16-byte stores: BN / 2 values, BN / 8
    # stores), count (release / acquire at gpu scope), decide for the warpgroup, sum (16-byte
    # loads of the first block, then of each other in the loop, which LLVM may unroll), reset
    # the counter
    assert len(re.findall(r"st\.global\.v4\.(b32|f32)", ptx)) == BN // 8
    loads = len(re.findall(r"ld\.global\.v4\.(b32|f32)", ptx))
    assert loads >= 2 * (BN // 8) and loads % (BN // 8) == 0
    assert not re.search(r"(st|ld)\.global\.v2\.(b32|f32)", ptx)
    assert re.search(r"fence\.acq_rel\.gpu;\s+atom\.global\.add\.u32[^\n]*, 1;\s+"
                     r"fence\.acq_rel\.gpu;", ptx)
    assert re.search(r"bar\.red\.or\.pred\s+%p\d+, (%r\d+|\d+), 128, %p\d+;", ptx)
    adds = ptx.count("add.f32")              # the loop over splits 1.. holds BN / 2 adds
    assert adds >= BN // 2 and adds % (BN // 2) == 0
    assert re.search(r"st\.global\.b32\s+\[%rd\d+(\+-?\d+)?\], 0;", ptx)
    if find_ptxas():
        assemble(ptx, "sm_90a")


def test_split_k_one_is_the_plain_kernel():
    """SPLIT_K=1 builds today's kernel (bench/ptx_hashes.py checks its PTX byte for byte)."""
    assert hgemm_v6(1000, 1000, 1000).ir() == hgemm_v6(1000, 1000, 1000, SPLIT_K=1).ir()
    assert "atomic_add" not in hgemm_v6(1000, 1000, 1000).ir()


@pytest.mark.parametrize("kwargs, message", [
    (dict(SPLIT_K=0), "SPLIT_K=0 must be an integer from 1 to the 16 k-tiles of K=1000"),
    (dict(SPLIT_K=17), "SPLIT_K=17 must be an integer from 1 to the 16 k-tiles"),
    (dict(SPLIT_K=2.0), "SPLIT_K=2.0 must be an integer"),
    (dict(SPLIT_K=True), "SPLIT_K=True must be an integer"),
    (dict(BN=136, EPI_N=64, SPLIT_K=2), "EPI_N=64 must be a multiple of 64 dividing BN=136"),
    (dict(BN=192, EPI_N=64, SPLIT_K=2), None),
])
def test_split_k_refusals(kwargs, message):
    if message is None:
        hgemm_v6(1000, 1000, 1000, **kwargs)
        return
    with pytest.raises(ShapeError, match=re.escape(message)):
        hgemm_v6(1000, 1000, 1000, **kwargs)


# ------------------------------------------------------------------------------ front door
SWEEP = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (4096, 4096, 512),
         (16384, 1024, 4096), (4096, 28672, 4096), (4096, 4096, 14336), (4000, 4000, 4000),
         (3000, 5120, 2056), (1000, 1000, 8192)]


def test_heuristic_fills_the_sms():
    # Enough 128 x 256 tiles: no split, the biggest tile, in 2x1 clusters (v7, its defaults).
    v7 = dict(KERNEL="hgemm_v7", BM=128, BN=256, STAGES=4, EPI_N=128, GROUP_M=16, SPLIT_K=1)
    for shape in [(8192, 8192, 8192), (4096, 28672, 4096)]:     # 16 and 28 waves: every SM
        assert gemm.choose_config(*shape) == v7
    # 4096^3: 256 pairs take 4 waves of 66 clusters; 64 clusters run them with 4 pairs each.
    assert gemm.choose_config(4096, 4096, 4096) == dict(v7, SMS=128)
    # 3000 x 5120 x 2056: 12 x 20 = 240 pairs, 4 waves of 60 clusters.
    assert gemm.choose_config(3000, 5120, 2056) == dict(v7, SMS=120)
    # 1000 x 1000 x 8192: 32 tiles of 128 x 256 for 132 SMs and 128 k-tiles; 64 x 128 tiles
    # fill one wave (128 of them) without split-K.
    config = gemm.choose_config(1000, 1000, 8192)
    assert config == dict(KERNEL="hgemm_v6", BM=64, BN=128, STAGES=8, EPI_N=128, GROUP_M=8,
                          SPLIT_K=1)
    tiles = math.ceil(1000 / config["BM"]) * math.ceil(1000 / config["BN"])
    assert tiles <= gemm.SMS
    assert gemm.estimate(1000, 1000, 8192, config) < \
        gemm.estimate(1000, 1000, 8192, dict(BM=128, BN=256, SPLIT_K=1)) / 2
    # Fewer tiles than that: split-K, the units within one wave.
    config = gemm.choose_config(500, 504, 8192)
    tiles = math.ceil(500 / config["BM"]) * math.ceil(504 / config["BN"])
    assert config["SPLIT_K"] > 1 and tiles * config["SPLIT_K"] <= gemm.SMS
    # Short K: a split's fix-up costs more than the idle SMs.
    assert gemm.choose_config(1000, 1000, 256)["SPLIT_K"] == 1
    # Smaller than the big tiles: smaller tiles (after the swapped decode kernel, for N <= 64).
    tiled = [c for c in gemm.candidate_configs(100, 64, 4096) if not c.get("SWAP")]
    assert (tiled[0]["BM"], tiled[0]["BN"]) == (64, 64)


@pytest.mark.parametrize("shape", [(516, 1, 5323), (1000, 64, 4096), (65, 13, 64),
                                   (100, 65, 4096), (64, 1, 64)])
def test_narrow_n_takes_the_decode_kernel_with_m_and_n_exchanged(shape):
    """N up to DECODE_M (M above it): hgemm_decode with SWAP=True first (MPAD holds N; cp.async
    for odd K), then the tiled kernels; wider N, or M up to DECODE_M, as before."""
    M, N, K = shape
    configs = gemm.candidate_configs(*shape)
    swapped = [c for c in configs if c.get("SWAP")]
    if N <= gemm.DECODE_M < M:
        assert configs[0] is swapped[0] and configs[0]["KERNEL"] == "hgemm_decode"
        assert all(c["MPAD"] == mpad_for(N) for c in swapped)
        assert all(c.get("PRODUCER") == ("cp_async" if K % 8 else None) for c in swapped)
        assert any(c["KERNEL"] == "hgemm_v6" for c in configs)
    else:
        assert not swapped


def test_balanced_clusters_keep_the_waves():
    for M, N in [(4096, 4096), (3000, 5120), (2048, 5120), (1536, 6144), (2048, 4096),
                 (8192, 8192), (4096, 28672), (2048, 2048), (1000, 1000)]:
        pairs = math.ceil(math.ceil(M / 128) / 2) * math.ceil(N / 256)
        sms = gemm.v7_balanced_sms(M, N)
        waves = math.ceil(pairs / (gemm.SMS // 2))
        assert sms % 2 == 0 and sms <= gemm.SMS
        assert math.ceil(pairs / (sms // 2)) == waves            # never another wave
        if 2 <= waves <= gemm.BALANCED_WAVES:
            # the last wave leaves fewer than `waves` clusters idle
            assert pairs <= sms // 2 * waves < pairs + waves
        else:
            assert sms == gemm.SMS
    assert gemm.estimate(4096, 4096, 4096, gemm.choose_config(4096, 4096, 4096)) == \
        gemm.estimate(4096, 4096, 4096, dict(gemm.choose_config(4096, 4096, 4096), SMS=132))


def test_the_model_counts_waves():
    one = dict(BM=128, BN=256, SPLIT_K=1)
    # 132 tiles are one wave, 133 two.
    assert gemm.estimate(128 * 132, 256, 4096, one) * 2 == gemm.estimate(128 * 133, 256, 4096, one)
    # v7 counts pairs of tile rows over 66 clusters: 3 tile rows take 2 pairs.
    v7 = dict(KERNEL="hgemm_v7", BM=128, BN=256)
    assert gemm.estimate(128 * 3, 256 * 33, 4096, v7) == gemm.estimate(128 * 4, 256 * 33, 4096, v7)
    assert gemm.estimate(128 * 4, 256 * 33, 4096, v7) * 2 == \
        gemm.estimate(128 * 4, 256 * 34, 4096, v7)


@pytest.mark.parametrize("shape", SWEEP, ids=["x".join(map(str, s)) for s in SWEEP])
def test_every_candidate_builds(shape):
    configs = gemm.candidate_configs(*shape)
    assert configs[0] == gemm.choose_config(*shape)
    assert len({tuple(sorted(c.items())) for c in configs}) == len(configs)
    assert {c["KERNEL"] for c in configs} <= {"hgemm_v6", "hgemm_v7", "hgemm_v8"}
    assert {"hgemm_v6", "hgemm_v7"} <= {c["KERNEL"] for c in configs}
    for config in configs:
        gemm.gemm_kernel(*shape, "bfloat16", **config)      # raises ShapeError if refused


def test_tiles_may_hang_past_small_shapes():
    """Shapes smaller than a tile take the smallest tiles that cover them (the windows hang
    past the edges: TMA reads zeros there and clips the stores); M up to 64 takes
    hgemm_decode, whose A tile is M rows padded to a multiple of 8."""
    for shape in [(1, 4096, 4096), (32, 256, 256), (7, 1000, 512), (64, 64, 8), (2192, 4296, 40),
                  (100, 100, 8)]:
        config = gemm.choose_config(*shape)
        if shape[0] <= gemm.DECODE_M:
            assert config["KERNEL"] == "hgemm_decode" and config["MPAD"] >= shape[0]
        else:
            assert config["BM"] == 64 or shape[0] > 64
        gemm.gemm_kernel(*shape, "float16", **config).build()


@pytest.mark.parametrize("shape,unaligned_k,epilogue", [
    ((3333, 4444, 5552), False, "direct"), ((1000, 3, 128), False, "direct"),
    ((333, 444, 555), True, "direct"), ((100, 4096, 4095), True, None),
    ((65, 300, 3), True, "staged"), ((4096, 4096, 4100), True, None),
    ((4096, 4096, 4096), False, None),
    ((2999, 8193, 769), True, "staged"), ((300, 65, 320), False, "staged"),
    ((1000, 63, 128), False, "direct"),
    ((5518, 6246, 20), True, "staged"), ((2048, 4100, 64), False, "staged"),   # even N, small K
    ((2048, 4100, 72), False, "direct"), ((65, 300, 66), True, "direct")])
def test_unaligned_rows_pad_k_or_cp_async_and_direct_stores(shape, unaligned_k, epilogue):
    """K not a multiple of 8 rules out TMA loads of A's and B's rows as they are: the padded
    candidates (PAD_K: the front door copies them into rows of a multiple of 8, TMA loads
    those, any kernel) and hgemm_v6 with cp.async, the padded first where pads_k says (odd K,
    not launch-bound); N not a multiple of 8 rules out TMA stores: staged 16-byte stores for
    an odd N from STAGED_MIN_N and an even one up to STAGED_EVEN_MAX_K, masked stores from the
    registers otherwise.
    Aligned shapes keep their configurations."""
    M, N, K = shape
    configs = [c for c in gemm.candidate_configs(*shape) if not c.get("SWAP")]
    padded = [c for c in configs if c.get("PAD_K")]
    assert bool(padded) == unaligned_k
    for config in configs:
        assert config.get("EPILOGUE") == epilogue
        assert config.get("PRODUCER") == ("cp_async" if unaligned_k and not config.get("PAD_K")
                                          else None)
        if config.get("PRODUCER"):
            assert config["KERNEL"] == "hgemm_v6"
        if epilogue:
            assert config["KERNEL"] != "hgemm_v8"
    if unaligned_k:
        cp_async = [c for c in configs if not c.get("PAD_K")]
        assert cp_async, "both kinds stay candidates, for autotune"
        first, second = (padded, cp_async) if gemm.pads_k(M, N, K) else (cp_async, padded)
        assert configs == first + second
        assert {c["KERNEL"] for c in padded} >= {"hgemm_v6"}
        from tilemlir.runtime.signature import kernels
        module = gemm.gemm_kernel(*shape, "float16", **padded[0]).build()
        assert kernels(module)[0].params[0].shape == (M, gemm.padded_k(K))
    gemm.gemm_kernel(*shape, "float16", **configs[0]).build()


def test_pads_k_for_odd_k_above_launch_bound_sizes():
    """Odd K leaves rows on 2 bytes (no cp.async): padded, unless the problem is launch-bound;
    even K copies by 4 or 8 bytes: cp.async."""
    assert gemm.pads_k(1785, 4444, 4095) and gemm.pads_k(516, 1, 5323)
    assert gemm.pads_k(333, 444, 555)
    assert not gemm.pads_k(4096, 4096, 4100) and not gemm.pads_k(830, 2129, 4342)
    assert not gemm.pads_k(83, 4051, 9) and not gemm.pads_k(1385, 724, 29)
    assert not gemm.pads_k(4096, 4096, 4096)


def test_pad_k_refusal():
    with pytest.raises(ShapeError, match="PAD_K must be True or False, got 8"):
        gemm.gemm_kernel(100, 100, 100, PAD_K=8)


def test_front_door_refusals():
    with pytest.raises(ShapeError, match="dtype must be 'float16' or 'bfloat16', got 'float32'"):
        gemm.hgemm(256, 256, 256, "float32")
    with pytest.raises(ShapeError, match="K must be a positive integer, got 0"):
        gemm.hgemm(256, 256, 0)
    with pytest.raises(ShapeError, match="N=1004 must be a multiple of 8 .*; "
                                         "EPILOGUE='staged' or 'direct' stores any N"):
        gemm.hgemm(1000, 1004, 8192, config=dict(KERNEL="hgemm_v6"))
    with pytest.raises(ShapeError, match="K=1001 must be a multiple of 8 .*; PRODUCER='cp_async' "
                                         "loads any K"):
        gemm.hgemm(1000, 1000, 1001, config=dict(KERNEL="hgemm_v7"))
    with pytest.raises(ShapeError, match="PRODUCER='cp_async' needs STAGES >= 3"):
        gemm.hgemm(1000, 1000, 1001, config=dict(KERNEL="hgemm_v6", PRODUCER="cp_async",
                                                 STAGES=2))
    with pytest.raises(ShapeError, match="hgemm_v7: SPLIT_K=65 must be an integer from 1 to "
                                         "the 64 k-tiles"):
        gemm.hgemm(4096, 4096, 4096, config=dict(KERNEL="hgemm_v7", SPLIT_K=65))
    with pytest.raises(ShapeError, match="KERNEL must be one of hgemm_v6, hgemm_v7, hgemm_v8, "
                                         "hgemm_decode, blackwell_v6, blackwell_v7, "
                                         "gemm_mma_sync, got 'v10'"):
        gemm.hgemm(4096, 4096, 4096, config=dict(KERNEL="v10"))


def test_front_door_caches_per_shape_and_config():
    a = gemm.hgemm(1000, 1000, 8192, "float16")
    assert gemm.hgemm(1000, 1000, 8192, "float16") is a
    assert gemm.hgemm(1000, 1000, 8192, "bfloat16") is not a
    other = gemm.hgemm(1000, 1000, 8192, "float16", config=dict(BM=128, BN=256, SPLIT_K=4))
    assert other is not a and other.config["SPLIT_K"] == 4
    assert a.config == gemm.choose_config(1000, 1000, 8192)
    assert [p.name for p in a.kernel.signature.params] == ["A", "B", "D"]     # no split
    assert [p.name for p in other.kernel.signature.params] == ["A", "B", "D", "W", "C"]


def test_autotune_tunes_over_the_candidates(isolated_cache):
    """tilemlir.autotune takes the front door's candidates as they are (gemm_kernel keywords)."""
    configs = gemm.candidate_configs(1000, 1000, 8192)[:3]
    timed = []

    def bench(kernel, args):                      # the last candidate is the fastest
        timed.append(kernel)
        return float(len(configs) - len(timed))
    tuner = tilemlir.autotune(gemm.gemm_kernel, configs=configs, target="sm_90a", bench=bench)
    assert tuner.choose(1000, 1000, 8192, "float16", args=("a", "b", "d")) == configs[-1]
    assert len(timed) == len(configs)
    kernel = tuner(1000, 1000, 8192, "float16")   # known now: compiled, nothing timed
    assert kernel.signature == timed[-1].signature and len(timed) == len(configs)


def test_front_door_workspace_follows_the_configuration():
    torch = pytest.importorskip("torch")
    door = gemm.Gemm(1000, 1000, 8192, "float16", dict(SPLIT_K=4), target="sm_90a")
    w, c = door._workspace(torch.device("cpu"))                         # v6's default tiles
    assert w.shape == (4 * 4 * 8 * 128, 256) and w.dtype == torch.float32
    assert c.shape == (4 * 8 * 2,) and c.dtype == torch.int32 and not c.any()
    assert door._workspace(torch.device("cpu"))[0] is w                 # kept per device

    plain = gemm.Gemm(1000, 1000, 8192, "float16", dict(SPLIT_K=1), target="sm_90a")
    assert plain._workspace(torch.device("cpu")) == ()


# ------------------------------------------------------------------------------ hgemm_v8
def test_v8_candidates_fit_one_wave_in_whole_halves():
    """v8 is offered where its tiles x SPLIT_K CTAs fit the SMs and each CTA's half of BN is
    whole 64-column steps; its fix-up is modelled below v6's serial one."""
    for shape in [(1000, 1000, 8192), (1000, 1000, 1000), (500, 504, 8192), (4096, 4096, 512)]:
        for config in gemm.candidate_configs(*shape):
            if config["KERNEL"] != "hgemm_v8":
                continue
            tiles = math.ceil(shape[0] / config["BM"]) * math.ceil(shape[1] / config["BN"])
            assert tiles * config["SPLIT_K"] <= gemm.SMS and config["BN"] % 128 == 0
            assert config["SPLIT_K"] in (2, 4)
    v6 = dict(BM=128, BN=128, SPLIT_K=2)
    v8 = dict(KERNEL="hgemm_v8", **v6)
    assert gemm.estimate(1000, 1000, 8192, v8) < gemm.estimate(1000, 1000, 8192, v6)
    assert not any(c["KERNEL"] == "hgemm_v8" for c in gemm.candidate_configs(4096, 4096, 512))


def test_small_tiles_are_cheap_only_in_few_waves():
    """64 x 128 tiles were measured fast where one or two waves hold them all and slow over
    many waves; the model prices them so, and keeps 128 x 256 for the big sweep shapes."""
    small = dict(BM=64, BN=128, SPLIT_K=1)
    one_wave = gemm.estimate(1000, 1000, 8192, small)                 # 128 tiles
    assert one_wave == 128 * gemm.ONE_WAVE_KTILE_COST[(64, 128)] + gemm.UNIT_OVERHEAD[(64, 128)]
    two_waves = gemm.estimate(1000, 1064, 8192, small)                # 16 x 9 = 144 tiles
    assert two_waves == 2 * (128 * gemm.ONE_WAVE_KTILE_COST[(64, 128)]
                             + gemm.UNIT_OVERHEAD[(64, 128)])
    three_waves = gemm.estimate(1000, 3000, 8192, small)              # 16 x 24 = 384 tiles
    assert three_waves == 3 * (128 * 0.28 + gemm.UNIT_OVERHEAD[(64, 128)])
    eight_waves = gemm.estimate(1000, 8192, 8192, small)              # 16 x 64 = 1024 tiles
    assert eight_waves == 8 * (128 * gemm.KTILE_COST[(64, 128)] + gemm.UNIT_OVERHEAD[(64, 128)])
    for shape in SWEEP[:-1]:
        assert gemm.choose_config(*shape)["BM"] == 128


def test_128x128_tiles_lose_to_128x256_over_several_waves():
    """Over 3-5 waves 128 x 128 tiles ran 5-10% slower than 128 x 256 ones on six mid-size
    shapes (results/2026-12-01-parity/multiwave-128x128.md); in one wave (split-K units) they
    keep their cheaper price."""
    for shape in ((2048, 5120, 2048), (1536, 4096, 4096), (3072, 2048, 2048),
                  (512, 11008, 4096), (1536, 6144, 2048)):
        config = gemm.choose_config(*shape)
        assert config["BM"] == 128 and config["BN"] >= 192, (shape, config)
    unit = dict(BM=128, BN=128, SPLIT_K=2)
    one_wave = gemm.estimate(1000, 1000, 8192, unit)                  # 64 tiles x 2 splits
    assert one_wave == (64 * gemm.ONE_WAVE_KTILE_COST[(128, 128)] + gemm.UNIT_OVERHEAD[(128, 128)]
                        + 3 * gemm.PARTIAL_COST[(128, 128)])


# ------------------------------------------------------------------------------ hgemm_v7 TAIL_SPLIT
@pytest.mark.parametrize("shape, config, whole, slots", [
    ((1536, 4096, 4096), dict(TAIL_SPLIT=2), 66, 60),      # 96 pairs: 66 whole, 30 split
    ((1024, 5120, 4096), dict(TAIL_SPLIT=4), 66, 28),      # 80 pairs: 66 whole, 14 split
    ((1000, 1000, 2000), dict(TAIL_SPLIT=3, SMS=20), 10, 12),
])
def test_tail_split_compiles_and_assembles(shape, config, whole, slots):
    M, N, K = shape
    kernel = tilemlir.compile(hgemm_v7(M, N, K, **config), target="sm_90a", cache=False)
    split = config["TAIL_SPLIT"]
    w_shape, c_shape = v7_split_buffers_shapes(M, N, SMS=config.get("SMS", 132),
                                               TAIL_SPLIT=split)
    assert w_shape == (slots * split * 128, 256) and c_shape == (slots * 2,)
    assert [(p.name, p.shape) for p in kernel.signature.params[3:]] == [("W", w_shape),
                                                                          ("C", c_shape)]
    pairs = math.ceil(math.ceil(M / 128) / 2) * math.ceil(N / 256)
    units = whole + (pairs - whole) * split
    assert kernel.signature.grid == (2 * min(config.get("SMS", 132) // 2, units), 1, 1)
    ptx = kernel.ptx
    assert re.search(r"fence\.acq_rel\.gpu;\s+atom\.global\.add\.u32[^\n]*, 1;\s+"
                     r"fence\.acq_rel\.gpu;", ptx)
    assert re.search(r"st\.global\.b32\s+\[%rd\d+(\+-?\d+)?\], 0;", ptx)   # counter reset
    if find_ptxas():
        assemble(ptx, "sm_90a")


@pytest.mark.parametrize("shape, kwargs, message", [
    ((1536, 4096, 4096), dict(SPLIT_K=2, TAIL_SPLIT=2), "give one of them"),
    ((1024, 1024, 1024), dict(TAIL_SPLIT=2, SMS=32), "no last wave is left to split"),
    ((1024, 1024, 1024), dict(TAIL_SPLIT=17), "TAIL_SPLIT=17 must be an integer from 1 to the 16"),
    ((1024, 1024, 1024), dict(TAIL_SPLIT=2.0), "TAIL_SPLIT=2.0 must be an integer"),
])
def test_tail_split_refusals(shape, kwargs, message):
    with pytest.raises(ShapeError, match=re.escape(message)):
        hgemm_v7(*shape, **kwargs)


def test_tail_split_one_is_the_plain_kernel():
    assert hgemm_v7(1536, 4096, 4096).ir() == hgemm_v7(1536, 4096, 4096, TAIL_SPLIT=1).ir()


def test_front_door_splits_the_last_wave_of_mid_size_shapes():
    """1.2-2.5 waves of pairs: the whole waves run unsplit and the last is split, so the
    kernel ends a fraction of a wave after the whole ones instead of a whole wave."""
    configs = gemm.candidate_configs(1536, 4096, 4096)         # 96 pairs over 66 clusters
    split = next(c for c in configs if c.get("TAIL_SPLIT") == 2)
    plain = next(c for c in configs if c["KERNEL"] == "hgemm_v7" and c["BN"] == 256
                 and c.get("TAIL_SPLIT", 1) == 1 and c["SPLIT_K"] == 1)
    assert gemm.estimate(1536, 4096, 4096, split) < gemm.estimate(1536, 4096, 4096, plain)
    assert configs.index(split) < configs.index(plain)
    # ... but 128 x 192 tiles fill two whole waves (264 tiles) and ran faster still
    assert gemm.choose_config(1536, 4096, 4096)["BN"] == 192
    assert "TAIL_SPLIT" not in gemm.choose_config(4096, 4096, 4096)    # tail of 58/66: no gain


def test_front_door_fills_the_waves_with_192_or_320_wide_tiles():
    """Where 128 x 256 pairs leave a partial wave, hgemm_v7's 128 x 192 or 128 x 320 tiles fill
    whole ones (results/2026-12-03-session9/runB, runC): 768 x 4096 makes 132 tiles of 192,
    1280 x 4096 130 of 320 (cuBLAS's own tile there); a shape of whole 256 waves keeps 256, and
    K below V7_WIDTH_MIN_K_TILES k-tiles (untimed) keeps the old candidates."""
    for shape, width in (((768, 4096, 4096), 192), ((1536, 4096, 4096), 192),
                         ((2304, 4096, 4096), 192), ((1280, 4096, 4096), 320),
                         ((2560, 4096, 4096), 320), ((1280, 8192, 2048), 320),
                         ((4096, 4096, 4096), 256), ((8192, 8192, 8192), 256)):
        config = gemm.choose_config(*shape)
        assert (config["KERNEL"], config["BN"]) == ("hgemm_v7", width), (shape, config)
        assert config["STAGES"] == gemm.STAGES[(128, width)]
    assert not any(c.get("BN") in (192, 320) for c in gemm.candidate_configs(1280, 4096, 960))


def test_64x128_tiles_are_cheap_over_two_waves_only_with_tma():
    """Two waves of 64 x 128 tiles ran faster than hgemm_v8's split pairs at 512 x 4096 x 4096
    and than one wave of 128 x 128 at 256 x 8192 x 2048, but slower on 31 shapes with the
    cp.async producer, staged / direct stores or padded K (runC/pick-ab-*.md)."""
    for shape in ((512, 4096, 4096), (256, 8192, 2048)):
        config = gemm.choose_config(*shape)
        assert (config["KERNEL"], config["BM"], config["BN"]) == ("hgemm_v6", 64, 128), config
    config = gemm.choose_config(462, 4121, 2556)                    # cp.async, staged stores
    assert (config["BM"], config["BN"]) == (128, 128), config


def test_few_tile_rows_take_64x128_or_split_128x192_tiles():
    """Shapes of two or three tile rows (runF/small-m-split.md): 64 x 128 tiles over three
    waves where 128 x 256 pairs would leave half a pair idle, and 128 x 192 tiles split two ways
    into one wave of 132 units where K is long; many waves keep 128 x 256 pairs."""
    for shape, want in (((384, 8192, 2048), ("hgemm_v6", 64, 128, 1)),
                        ((192, 14336, 4096), ("hgemm_v6", 64, 128, 1)),
                        ((320, 4096, 11008), ("hgemm_v6", 128, 192, 2)),
                        ((384, 4096, 4096), ("hgemm_v6", 128, 192, 2)),
                        ((256, 28672, 4096), ("hgemm_v7", 128, 256, 1))):
        c = gemm.choose_config(*shape)
        assert (c["KERNEL"], c["BM"], c["BN"], c["SPLIT_K"]) == want, (shape, c)
    assert gemm.choose_config(320, 4096, 11008)["EPI_N"] == 64          # 192 = 3 x 64 columns
    # timed on TMA shapes only: an unaligned K keeps the old candidates
    assert not any(c["BN"] == 192 and c["KERNEL"] == "hgemm_v6"
                   for c in gemm.candidate_configs(320, 4096, 11007))


@pytest.mark.parametrize("M, N, K, config", [
    # 9 pairs over 4 clusters: the last whole wave joins the 1 pair left (5 pairs of 5 k-tiles
    # in runs of 7: pairs in 2 pieces, a run in 3), the odd pair's second tile past M
    (640, 384, 320, dict(BN=128, EPI_N=64, SMS=8)),
    (600, 376, 320, dict(BN=128, EPI_N=64, SMS=8, OVERLAP_EPILOGUE=False)),   # ragged M, N
    (640, 640, 192, dict(BN=320, STAGES=3, EPI_N=64, SMS=8)),                 # two n160
    (256, 256, 448, dict(BN=128, EPI_N=64, SMS=10)),    # 2 pairs of 7 k-tiles in runs of 3:
])                                                      # 3 pieces each, runs across pairs
def test_stream_k_deals_the_last_waves_k_tiles_out(M, N, K, config):
    """hgemm_v7 STREAM_K: every k-tile of every pair exactly once (the sums would be off
    otherwise), pairs in several pieces fixed up in the workspace, the counters left zero."""
    kernel = hgemm_v7(M, N, K, STREAM_K=True, **config)
    w, c = interpret_sweep.split_k_arrays(kernel, M)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    d = np.full((M, N), np.nan, np.float16)
    tilemlir.interpret(kernel, a, b, d, w, c)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    assert not np.isnan(d).any()
    assert np.linalg.norm(d.astype(np.float32) - ref) / np.linalg.norm(ref) < 1e-3
    assert not c.any()


def test_stream_k_takes_a_run_time_m():
    """One STREAM_K kernel for every M: the region, the runs and the pieces follow M at run
    time (here 3, 6 and 9 pairs over 4 clusters: runs of 4 k-tiles of all 3 pairs, of 3
    past a whole wave, of 7 over the 5 pairs left once the whole wave joins them), within its
    bounds of 3 pairs a run and 4 pieces a pair."""
    kernel = hgemm_v7(tilemlir.lang.dynamic("M"), 384, 320, BN=128, EPI_N=64, SMS=8,
                      STREAM_K=True)
    rng = np.random.default_rng(6)
    b = rng.standard_normal((384, 320)).astype(np.float16)
    for M in (100, 384, 640):
        w, c = interpret_sweep.split_k_arrays(kernel, M)
        a = rng.standard_normal((M, 320)).astype(np.float16)
        d = np.full((M, 384), np.nan, np.float16)
        tilemlir.interpret(kernel, a, b, d, w, c)
        ref = a.astype(np.float32) @ b.astype(np.float32).T
        assert not np.isnan(d).any(), M
        assert np.linalg.norm(d.astype(np.float32) - ref) / np.linalg.norm(ref) < 1e-3, M
        assert not c.any()


def test_stream_k_fix_up_loads_each_slot_at_once():
    """With a run-time M a pair's pieces are a run-time count; the sum over them still loads
    each slot's runs together: between branches only whole slots of 16-byte loads (a loop of
    `pieces` trips per run waited for each load in turn, 1.15-2.15x slower on the H200, and a
    select over every slot spilled: results/2026-12-03-session10/)."""
    ptx = tilemlir.compile(hgemm_v7(tilemlir.lang.dynamic("M"), 8192, 2048, STREAM_K=True),
                           target="sm_90a").ptx
    lines = ptx.splitlines()
    loads = [i for i, line in enumerate(lines) if "ld.global.v4.b32" in line]
    runs, slots = 64 * 256 // 128 // 4, 4          # 16-byte runs a thread holds, W's slots
    assert len(loads) == runs * slots
    cuts = [i for i in range(loads[0], loads[-1])
            if re.match(r"\s*(@!?%p\d+\s+)?bra\b|\$L", lines[i])]
    bounds = [loads[0], *cuts, loads[-1] + 1]
    groups = [sum(a <= i < b for i in loads) for a, b in zip(bounds, bounds[1:])]
    assert all(g % runs == 0 for g in groups) and len(cuts) <= 2 * (slots - 1), groups


def test_stream_k_is_one_schedule_of_three():
    with pytest.raises(ShapeError, match="give one of them"):
        hgemm_v7(1280, 4096, 4096, STREAM_K=True, TAIL_SPLIT=2)
