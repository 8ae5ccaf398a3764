"""The GEMM front door: the shipped Hopper kernel and configuration for a shape.

    from tilemlir.kernels.gemm import hgemm
    gemm = hgemm(1000, 1000, 8192, "float16")       # heuristic choice, compiled once per shape
    d = gemm(a, b)                                  # torch CUDA tensors: d = a @ b.T
    gemm(a, b, out=d)                               # into an existing tensor

    tuned = tuned_hgemm(M, N, K, "float16")         # the fastest candidate, timed (autotune)

D[m, n] = sum_k A[m, k] * B[n, k] (A is M x K, B is N x K, D is M x N, all in `dtype`, fp32
accumulation). A configuration is a dict of keyword arguments of `gemm_kernel`: KERNEL names
the shipped kernel (hgemm_v6: persistent, split-K; hgemm_v7: v6 in 2x1 clusters with B
multicast; hgemm_v8: split-K in 2-CTA clusters that share the fix-up), the rest are that
kernel's parameters.

The choice is about wave quantization. hgemm_v6 runs min(units, SMS) CTAs, each taking every
SMS-th unit, so the kernel lasts about ceil(units / SMS) unit times: 32 output tiles of
128 x 256 (1000 x 1000) keep 32 of the 132 SMs busy for all of K while 100 idle. Two knobs
change the units:
  - smaller tiles (128 x 128): twice the units, each half the work, a little less efficient
    per SM (wgmma n = 128 instead of 256, the same A tile loaded for half the MMAs);
  - split-K (SPLIT_K = s): s units per tile, each 1/s of K, plus a fix-up per tile (every unit
    writes its fp32 partial tile, the last sums s of them).
hgemm_v7 hands out pairs of vertically adjacent 128 x 256 tiles to clusters of 2 CTAs (half
of B's traffic from L2); its waves count pairs over SMS / 2 clusters. hgemm_v8 runs the 2 or 4
units of a tile as clusters of 2 that share the fix-up (each SM writes and reads half a
partial tile, and half again with 4 units, instead of one SM reading all of them). hgemm_v7
with TAIL_SPLIT = s runs the pairs of the whole waves unsplit and splits only the partial last
wave's pairs s ways: that wave then takes a fraction of a pair's time. Where v7's pairs take
2 to 4 waves, it is given only the clusters those waves need (v7_balanced_sms): the same waves
on fewer SMs, which the power limit rewards. Where 128 x 256 pairs leave a partial last wave,
v7 is also tried with 128 x 192 and 128 x 320 tiles (V7_WIDTHS), which often make whole waves
instead (1280 x 4096: 130 tiles of 320 in one wave, cuBLAS's own tile there).
On other targets the front door takes the kernel the chip has: sm_100a (tcgen05) the persistent
Blackwell kernel (hgemm_blackwell.hgemm_v6, compiled and assembled here but not yet run on a
GPU), sm_80 and other chips with mma.sync (sm_86, sm_89, sm_90, sm_120...) gemm_mma_sync, with
tiles and stages that fit the chip's shared memory; elsewhere a TargetError says which targets
have a kernel.

`estimate` models a configuration's time in units of one 128 x 256 x 64 k-tile step of one SM:

    waves * (k-tiles per unit * cost per k-tile + per-unit overhead + fix-up),
    waves = ceil(units / SMS)

with the costs below, and `choose_config` takes the cheapest candidate, preferring fewer
splits and bigger tiles on a tie. The costs are first estimates (from the tile shapes' MMA and
byte counts and the sweep results in results/2026-11-30-hopper/ and 2026-12-01-hopper/), not
yet fitted to timings of each configuration: `candidate_configs` lists the configurations
worth timing, for tilemlir.autotune(gemm_kernel, ...) (GROUP_M variants included), and
`tuned_hgemm` times them; a sweep of them is what should set the constants.
"""

from __future__ import annotations

import math
import threading

from tilemlir.kernels import hgemm_blackwell
from tilemlir.kernels.gemm_decode import decode_candidates, hgemm_decode
from tilemlir.kernels.gemm_mma_sync import gemm_mma_sync
from tilemlir.kernels.hgemm_hopper import V8_STEP_N, hgemm_v6, hgemm_v7, hgemm_v8
from tilemlir.kernels.parts import (ShapeError, TileSchedule, integral,
                                    unaligned_epilogue)
from tilemlir.target import Target, TargetError

SMS = 132                       # streaming multiprocessors of the H200 (and H100 SXM)
BK = 64
# hgemm_v7's tile widths besides 256, for shapes whose 128 x 256 pairs leave a partial last
# wave: 128 x 192 (4 stages) and 128 x 320 (3 stages, two wgmma n160 along N) tiles fill the
# waves where 256 does not (768 x 4096: 132 tiles of 192 in one wave against 96 of 256; 1280 x
# 4096: 130 of 320, cuBLAS's own tile there). Their k-tile step against 128 x 256's, on the H200
# in whole waves (results/2026-12-03-session9/runB/midsize-tiles.md: 0.692 us for 192 at 768 x
# 4096 x 4096, 1.164 for 320 at 1280 and 2560 x 4096 x 4096, 0.908 for 256 at 2048 x 4096 x
# 4096): about the work's ratio, 2% over it (KTILE_COST; their stages: STAGES).
V7_WIDTHS = (192, 256, 320)
# ... tried from this many k-tiles: timed at K >= 2048 only, and below it the epilogue (stored
# in 64-column chunks under the next tile's first k-tiles) is a growing part of the time.
V7_WIDTH_MIN_K_TILES = 16
V6_WIDE_SPLITS = (2, 3)
# Cost of one k-tile step of a BM x BN unit, relative to 128 x 256 (per SM: fewer MMAs per
# byte loaded, and BM = 64 has one consumer warpgroup instead of two).
KTILE_COST = {(128, 256): 1.0, (128, 128): 0.7, (64, 128): 0.35, (64, 64): 0.2,
              # v7's other widths, fitted (V7_WIDTHS; v6 takes 128 x 192 split too)
              (128, 192): 0.76, (128, 320): 1.28}
# Where all units fit one wave, smaller tiles cost less. 64 x 128: fitted to 1000 x 1000 x 8192
# on the H200 once ptxas stopped serializing their wgmma (.maxnreg): 128 tiles, 1.06x cuBLAS;
# over many waves they lose to 128 x 256 (8192^3 0.82x, 3000 x 5120 x 2056 0.55x cuBLAS),
# which the cost above keeps (results/2026-12-01-cluster-splitk/). 128 x 128: 0.55 was fitted
# on one-wave split-K; over 3-5 waves (2048 x 5120 x 2048, 1536 x 4096 x 4096, 3072 x 2048 x
# 2048) they ran 5-10% slower than 128 x 256 tiles, 0.66-0.72 of a 128 x 256 k-tile step
# (results/2026-12-01-parity/multiwave-128x128.md).
ONE_WAVE_KTILE_COST = {(64, 128): 0.25, (128, 128): 0.55}
# 64 x 128 tiles keep that cost over two waves where TMA loads and stores them: 512 x 4096 x
# 4096 (256 tiles) ran 29.8 us against 36.1 for hgemm_v8's split pairs, 256 x 8192 x 2048 17.7
# against 19.0 for one wave of 128 x 128 (results/2026-12-03-session9/runB/midsize-tiles.md,
# again in runC/pick-ab-*.md). With the cp.async producer, the staged / direct stores or
# padded K they do not: 31 such shapes ran 1.14x slower on them (runC/pick-ab-*.md). Up to four
# waves they cost a little more (0.27-0.28 a k-tile at 3 waves: 384 x 8192 x 2048, 192 x 14336
# x 4096, where 128 x 256 pairs left half a pair of tiles idle; 0.32 at 7 waves, 256 x 28672 x
# 4096: runF/small-m-split.md). {tile: ((up to this many waves, cost), ...)}.
FEW_WAVES = {(64, 128): ((2, 0.25), (4, 0.28))}
# Per-unit cost outside the k-loop (pipeline fill, epilogue not hidden behind a next tile).
UNIT_OVERHEAD = {(128, 256): 2.0, (128, 128): 1.2, (64, 128): 1.0, (64, 64): 0.8,
                 (128, 192): 1.6, (128, 320): 2.5}
# Split-K fix-up per unit: write one fp32 partial tile, and for the last unit read SPLIT_K of
# them back (a 128 x 256 fp32 tile through one SM's share of L2 is ~1.3 k-tile steps).
PARTIAL_COST = {(128, 256): 1.3, (128, 128): 0.65, (64, 128): 0.33, (64, 64): 0.17,
                (128, 192): 1.0}
# Tile shapes, biggest first. A tile may hang past M and N (TMA reads zeros there and clips the
# stores), so every shape has one.
TILES = ((128, 256), (128, 128), (64, 128), (64, 64))
MAX_SPLIT_K = 8
# Splits are tried while units stay within this many waves (past that, more splits only add
# fix-ups without evening out the last wave).
SPLIT_WAVES = 2
# As many stages as shared memory holds next to the epilogue's staging buffer.
STAGES = {(128, 256): 4, (128, 128): 6, (64, 128): 8, (64, 64): 8, (128, 192): 4,
          (128, 320): 3}


# Grouped rasterization: GROUP_M tile rows swept column by column (L2 reuse of A and B across
# the CTAs of a wave). The model does not see it; 16 is a candidate for autotune where there
# are several waves (results/2026-12-01-hopper/v6-configs*.md: within noise of 8 at 4096^3).
GROUP_M = 8
GROUP_M_CANDIDATES = (8, 16)


# hgemm_v7 (128 x 256 tiles only here): a k-tile step costs this much of v6's, B's L2 traffic
# halved by the multicast (results/2026-12-01-hopper/v7-first.md: 591 against 549-565 TFLOP/s
# for v6 at 4096^3, even at 8192^3), at its own defaults (GROUP_M=16, CTA-scope hand-off).
V7_KTILE_FACTOR = 0.95
V7_GROUP_M = 16
# hgemm_v8 (split-K in clusters of 2 CTAs, one or two clusters per tile): its fix-up is shared
# by the pair, each SM writing and reading half a partial tile (and half again where two
# clusters share the tile); a candidate where tiles x SPLIT_K fit the SMs (one wave).
V8_SPLITS = (2, 4)
# hgemm_v7's last-wave splits, tried where the pairs leave a partial last wave after at most
# TAIL_WHOLE_WAVES whole ones: past that the modelled gain (a fraction of one wave in many) is
# within the model's error, and the fix-up's L2 traffic is not modelled.
TAIL_SPLITS = (2, 3, 4)
TAIL_WHOLE_WAVES = 2
# A last-wave split's fix-up per partial tile: every SM of that wave writes and reads partial
# tiles at once. 20-34 k-tile steps for TAIL_SPLIT 2-4 with the fix-up's 8-byte row pairs
# (results/2026-12-01-parity/tail-split.md). With each thread's registers in 16-byte runs
# (10535ab) a partial costs 0-4 steps on five mid-size rows, but the plain kernel's balanced
# waves also run faster than the model counts them (2816 x 4096 x 4096: TAIL_SPLIT=3 0.93x
# cuBLAS, plain on 118 SMs 0.95x), and 128 x 192 or 128 x 320 tiles beat the split wherever
# it was timed but one row (results/2026-12-03-session9/runB/midsize-tiles.md): the price stays.
TAIL_PARTIAL_COST = 8.0
# hgemm_v7 over 2 to BALANCED_WAVES waves of pairs: only as many clusters as those waves need,
# each then taking the same number of pairs (4096^3: 64 clusters with 4 pairs each, not 66 of
# which 8 sit out the last wave). The same waves on fewer SMs, under the power limit: +1.3 to
# +4.3% at five 4-wave shapes, -2.2 to +0.7% at 16 and 28 waves (8192^3, 4096 x 28672 x
# 4096), so not there (results/2026-12-01-parity/ab-sms128.md, ab-sms120.md).
BALANCED_WAVES = 4
KERNELS = {"hgemm_v6": hgemm_v6, "hgemm_v7": hgemm_v7, "hgemm_v8": hgemm_v8,
           "hgemm_decode": hgemm_decode,
           "blackwell_v6": hgemm_blackwell.hgemm_v6, "blackwell_v7": hgemm_blackwell.hgemm_v7,
           "gemm_mma_sync": gemm_mma_sync}
# What each kernel needs of the target (hgemm_v* and hgemm_decode: wgmma and TMA on sm_90a;
# blackwell_v*: tcgen05; gemm_mma_sync: mma.sync and cp.async).
KERNEL_FEATURES = {"hgemm_v6": "wgmma", "hgemm_v7": "wgmma", "hgemm_v8": "wgmma",
                   "hgemm_decode": "wgmma", "blackwell_v6": "tcgen05", "blackwell_v7": "tcgen05",
                   "gemm_mma_sync": "mma_sync_f16"}
# M up to this takes hgemm_decode (D^T = B A^T: B's rows fill wgmma's 64-row side).
DECODE_M = 64
# The extents every kernel can address: TMA coordinates and loop counters are 32-bit.
MAX_EXTENT = 2 ** 31 - 1
# K not a multiple of 8 (rows of A and B not whole 16-byte units), above DECODE_M rows: the
# front door can pad A's and B's rows with zeros to a multiple of PAD_K_MULTIPLE (PAD_K) and
# run the TMA kernels, or load the rows as they are with the masked cp.async producer. Odd K
# leaves rows on 2 bytes, which cp.async cannot copy (one ld.global + st.shared per element):
# there padding ran up to 11x faster on random shapes (1432x2893x8167: 3,038 -> 263 us), and
# 0.34-0.48x -> 0.91-2.72x cuBLAS on four unaligned-suite shapes. Even K copies in 4 or 8
# bytes, within 0.6-1.3x of padding on shapes both ran, and lost more where N is small (the
# copy of A then costs more than the product): cp.async stays first there. Below both sizes
# here the problem is launch-bound and the two copies' launches cost more than they save
# (83x4051x9, 917x94x1, 1385x724x29: 0.1-0.7x). results/2026-12-02-session3/README.md.
# Decode shapes keep cp.async: there B is the traffic, and a copy would triple it.
PAD_K_MIN_WORK = 2 ** 25                # M x N x K
PAD_K_MIN_ELEMENTS = 2 ** 19            # (M + N) x K: the elements the copies move
PAD_K_MULTIPLE = 8


def gemm_kernel(M: int, N: int, K: int, dtype: str = "float16", KERNEL: str = "hgemm_v6",
                PAD_K: bool = False, **config):
    """The kernel of one front-door configuration: KERNEL (a KERNELS key) built with the rest
    of `config` as its parameters. The factory tilemlir.autotune tunes over.

    PAD_K=True builds it for K rounded up to a multiple of PAD_K_MULTIPLE (padded_k): the
    front door (Gemm) hands it A and B copied into rows padded with zeros, which TMA loads."""
    factory = KERNELS.get(KERNEL)
    if factory is None:
        raise ShapeError(f"hgemm: KERNEL must be one of {', '.join(KERNELS)}, got {KERNEL!r}")
    if not isinstance(PAD_K, bool):
        raise ShapeError(f"hgemm: PAD_K must be True or False, got {PAD_K!r}")
    if PAD_K:
        K = padded_k(K)
    try:
        return factory(M, N, K, dtype, **config)
    except TypeError as err:        # a parameter the factory does not take
        raise ShapeError(f"hgemm: config {config} does not fit {KERNEL}: {err}") from None
    except ValueError as err:       # the factory's own ShapeError
        if isinstance(err, ShapeError):
            raise
        raise ShapeError(f"hgemm: {err}") from None


def padded_k(K: int) -> int:
    """K rounded up to whole 16-byte units of 16-bit elements: the K a PAD_K kernel runs."""
    return -(-K // PAD_K_MULTIPLE) * PAD_K_MULTIPLE


def _epi_n(BN: int) -> int:
    """The epilogue's chunk: 128 columns where they divide the tile's BN, else 64."""
    return 128 if BN % 128 == 0 else 64


def _config(BM: int, BN: int, split_k: int, group_m: int = GROUP_M) -> dict:
    return dict(KERNEL="hgemm_v6", BM=BM, BN=BN, STAGES=STAGES[(BM, BN)], EPI_N=_epi_n(BN),
                GROUP_M=group_m, SPLIT_K=split_k)


def _v7_config(split_k: int = 1, tail_split: int = 1, sms: int = SMS, BN: int = 256) -> dict:
    config = dict(KERNEL="hgemm_v7", BM=128, BN=BN, STAGES=STAGES[(128, BN)], EPI_N=_epi_n(BN),
                  GROUP_M=V7_GROUP_M, SPLIT_K=split_k)
    if tail_split > 1:
        config["TAIL_SPLIT"] = tail_split
    if sms != SMS:
        config["SMS"] = sms
    return config


def v7_balanced_sms(M: int, N: int, sms: int = SMS, BN: int = 256) -> int:
    """The SMs hgemm_v7 (128 x BN tiles) is given on M x N: where its pairs take 2 to
    BALANCED_WAVES waves of the sms / 2 clusters, twice the clusters that run the same waves
    with an equal number of pairs each; else all of them."""
    pairs = TileSchedule(M, N, 128, BN, sms=sms, pairs=True)
    if not 2 <= pairs.waves <= BALANCED_WAVES:
        return sms
    return 2 * pairs.balanced_workers()


def _v8_config(BM: int, BN: int, split_k: int) -> dict:
    return dict(KERNEL="hgemm_v8", BM=BM, BN=BN, STAGES=STAGES[(BM, BN)], GROUP_M=GROUP_M,
                SPLIT_K=split_k)


def estimate(M: int, N: int, K: int, config: dict, sms: int = SMS,
             few_waves: bool = True) -> float:
    """The modelled time of `config` on M x N x K, in 128 x 256 k-tile steps of one SM.
    few_waves=False leaves out FEW_WAVES' prices (timed on the 16-bit kernels only; the FP8
    front door's model, which borrows this one, keeps one-wave prices alone)."""
    tile = (config["BM"], config["BN"])
    split = config.get("SPLIT_K", 1)
    k_tiles = math.ceil(K / BK)
    cost = KTILE_COST[tile]
    if config.get("KERNEL") == "hgemm_v7":
        cost *= V7_KTILE_FACTOR
        tail_split = config.get("TAIL_SPLIT", 1)
        schedule = TileSchedule(M, N, *tile, sms=config.get("SMS", sms), split_k=split,
                                tail_split=tail_split, pairs=True)
        if tail_split > 1:                 # whole waves unsplit, then the split last wave
            return (schedule.whole_waves * (k_tiles * cost + UNIT_OVERHEAD[tile])
                    + schedule.split_waves * (math.ceil(k_tiles / tail_split) * cost
                                              + UNIT_OVERHEAD[tile]
                                              + (1 + tail_split) * TAIL_PARTIAL_COST))
        waves = schedule.waves
    else:
        waves = TileSchedule(M, N, *tile, sms=sms, split_k=split).waves
        all_tma = not any(key in config for key in ("PRODUCER", "EPILOGUE", "PAD_K"))
        if waves == 1:
            cost = ONE_WAVE_KTILE_COST.get(tile, cost)
        elif all_tma and few_waves:
            cost = next((c for most, c in FEW_WAVES.get(tile, ()) if waves <= most), cost)
    if config.get("KERNEL") == "hgemm_v8":
        # write and read half a partial tile in the pair; where two clusters share the tile,
        # half again plus the counter's round trip, which together cost about twice that
        # (fitted: at 1000 x 1000 x 8192, SPLIT_K=4 on 128 x 256 tiles ran 2-5% slower than
        # SPLIT_K=2 on 128 x 128, results/2026-12-01-cluster-splitk/)
        fixup = (1 + 2 * (split == 4)) * PARTIAL_COST[tile]
    else:
        fixup = (1 + split) * PARTIAL_COST[tile] if split > 1 else 0.0
    return waves * (math.ceil(k_tiles / split) * cost + UNIT_OVERHEAD[tile] + fixup)


def candidate_configs(M: int, N: int, K: int, sms: int = SMS) -> list[dict]:
    """Configurations worth trying for this shape, best modelled first: for each tile shape
    that fits in M x N, hgemm_v6 without split-K and with every SPLIT_K (at most MAX_SPLIT_K,
    one k-tile per split at least) whose units stay within SPLIT_WAVES waves of SMs, and
    hgemm_v7 likewise for the 128 x 256 tiles, and with TAIL_SPLIT 2, 3 and 4 where its
    pairs leave a partial last wave; hgemm_v8 with SPLIT_K 2 and 4 where its
    slices are whole 64-column steps and tiles x SPLIT_K CTAs fit the SMs (one wave).

    Rows that are not a whole number of 16-byte units rule TMA out where they are. K not a
    multiple of 8 (A's and B's rows): every candidate with PAD_K (A and B copied into padded
    rows by the front door) and hgemm_v6 with PRODUCER="cp_async" (loads the rows as they
    are), the padded ones first where pads_k says so. N not a multiple of 8 (D's rows):
    hgemm_v6 and v7 with EPILOGUE="staged" or "direct" (_unaligned).

    M up to DECODE_M takes hgemm_decode (gemm_decode.decode_candidates); N up to DECODE_M (M
    above it) takes it first with M and N exchanged (SWAP=True)."""
    check_extents("candidate_configs", M, N, K)
    if isinstance(sms, bool) or not isinstance(sms, int) or sms < 2:
        raise ShapeError(f"candidate_configs: sms must be an integer of at least 2 (SMs that "
                         f"run the kernels), got {sms!r}")
    k_tiles = math.ceil(K / BK)
    if M <= DECODE_M:
        return decode_candidates(M, N, K, sms)
    # N <= DECODE_M: first hgemm_decode with M and N exchanged (A's rows fill wgmma's 64-row
    # side, K split to fill the SMs), then the tiled kernels
    swapped = [dict(c, SWAP=True) for c in decode_candidates(N, M, K, sms)] \
        if N <= DECODE_M else []
    configs = [c for c in _aligned_candidates(M, N, K, k_tiles, sms)
               if N % 8 == 0 or c["KERNEL"] != "hgemm_v8"]
    if not K % 8:
        return swapped + _ordered(M, N, K, [_unaligned(c, K, N) for c in configs], sms)
    K_padded = padded_k(K)
    padded = _ordered(M, N, K_padded, [dict(_unaligned(c, K_padded, N), PAD_K=True)
                                       for c in configs], sms)
    cp_async = _ordered(M, N, K, [_unaligned(c, K, N) for c in configs
                                  if c["KERNEL"] == "hgemm_v6"], sms)
    return swapped + (padded + cp_async if pads_k(M, N, K) else cp_async + padded)


def pads_k(M: int, N: int, K: int) -> bool:
    """Whether the front door's choice for M x N x K (M > DECODE_M) pads A's and B's rows
    (PAD_K) rather than loading them by cp.async: odd K, above a launch-bound size."""
    return K % 2 == 1 and (M * N * K >= PAD_K_MIN_WORK or (M + N) * K >= PAD_K_MIN_ELEMENTS)


def _ordered(M: int, N: int, K: int, configs: list[dict], sms: int) -> list[dict]:
    """`configs`, best modelled first; on a tie fewer splits, bigger tiles, v6, GROUP_M."""
    return sorted(configs, key=lambda c: (estimate(M, N, K, c, sms),
                                          c.get("SPLIT_K", 1) * c.get("TAIL_SPLIT", 1),
                                          -c["BM"] * c["BN"], c["KERNEL"] != "hgemm_v6",
                                          c["GROUP_M"] != GROUP_M))


def _unaligned(config: dict, K: int, N: int) -> dict:
    """`config` with cp.async loads where K rules TMA loads out, and the epilogue of
    parts.unaligned_epilogue where N rules TMA stores out (unchanged for aligned shapes)."""
    config = dict(config)
    if K % 8:
        config["PRODUCER"] = "cp_async"
    if N % 8:
        config["EPILOGUE"] = unaligned_epilogue(N, K)
    return config


def _aligned_candidates(M: int, N: int, K: int, k_tiles: int, sms: int) -> list[dict]:
    configs = []
    for BM, BN in TILES:
        if BM > 64 and BM >= 2 * M or BN > 64 and BN >= 2 * N:
            continue            # a smaller tile covers M x N with as few tiles
        tiles = math.ceil(M / BM) * math.ceil(N / BN)
        configs.append(_config(BM, BN, 1))
        if (BM, BN) == (128, 256):
            configs.append(_v7_config(sms=v7_balanced_sms(M, N, sms)))
            pairs = TileSchedule(M, N, BM, BN, sms=sms, pairs=True)
            if pairs.items % pairs.capacity and pairs.whole_waves <= TAIL_WHOLE_WAVES:
                configs += [_v7_config(tail_split=s) for s in TAIL_SPLITS if s <= k_tiles]
                # the other widths, where 256 leaves a partial wave and they have columns
                configs += [_v7_config(sms=v7_balanced_sms(M, N, sms, width), BN=width)
                            for width in V7_WIDTHS if width != 256 and N > width
                            and k_tiles >= V7_WIDTH_MIN_K_TILES]
        if tiles > sms:
            configs += [_config(BM, BN, 1, g) for g in GROUP_M_CANDIDATES if g != GROUP_M]
        for split in range(2, min(MAX_SPLIT_K, k_tiles) + 1):
            if tiles * split <= SPLIT_WAVES * sms:
                configs.append(_config(BM, BN, split))
                if (BM, BN) == (128, 256):
                    configs.append(_v7_config(split))
        configs += [_v8_config(BM, BN, split) for split in V8_SPLITS
                    if BN % (2 * V8_STEP_N) == 0 and split <= k_tiles
                    and tiles * split <= sms]
    # hgemm_v6's 128 x 192 tiles split 2 or 3 ways where that makes one wave, for few tile rows
    # and long K (320 x 4096 x 11008: 66 tiles x 2, 0.86-0.88x cuBLAS against 0.58-0.65x for
    # the other candidates, runF/small-m-split.md); timed on TMA shapes only (N, K % 8 = 0)
    tiles = math.ceil(M / 128) * math.ceil(N / 192)
    if not (N % 8 or K % 8) and N > 192 and k_tiles >= V7_WIDTH_MIN_K_TILES:
        configs += [_config(128, 192, split) for split in V6_WIDE_SPLITS
                    if tiles * split <= sms]
    return configs


def choose_config(M: int, N: int, K: int, dtype: str = "float16", sms: int = SMS,
                  target=None) -> dict:
    """The configuration for this shape on `target` (default: sm_90a's heuristic, see the
    module docstring; a chip name or Target routes to the kernel family the chip has)."""
    M, N, K = _check_shape(M, N, K, dtype)
    family = _family(_target(target))
    if family == "hopper":
        return candidate_configs(M, N, K, sms)[0]
    if family == "blackwell":
        return _blackwell_config(M, N)
    return _mma_sync_config(M, N, K, _target(target))


def _target(target) -> Target:
    """`target` as a Target (None: the GPU's chip, else sm_90a)."""
    from tilemlir.runtime.compiler import resolve_target
    return resolve_target(target)


def _family(target: Target) -> str:
    """Which kernels `target` has: "hopper" (sm_90a: wgmma, TMA), "blackwell" (sm_100a:
    tcgen05) or "mma_sync" (sm_80 and newer), else a TargetError naming the targets that
    have one."""
    if target.supports("wgmma"):
        return "hopper"
    if target.supports("tcgen05"):
        return "blackwell"
    if target.supports("mma_sync_f16") and target.supports("cp_async"):
        return "mma_sync"
    raise TargetError(f"hgemm has no kernel for {target.chip}: it runs on sm_80 and newer "
                      f"(mma.sync on sm_80, sm_86, sm_89, sm_90, sm_120; wgmma on sm_90a; "
                      f"tcgen05 on sm_100a)")


def _divisor(extent: int, choices, what: str, target: Target) -> int:
    for tile in choices:
        if extent % tile == 0:
            return tile
    raise ShapeError(f"hgemm on {target.chip}: {what}={extent} must be a multiple of "
                     f"{choices[-1]} (its kernel's smallest tile)")


def _blackwell_config(M: int, N: int) -> dict:
    """The persistent Blackwell kernel with the widest tile N divides (M in 128-row tiles)."""
    target = Target("sm_100a")
    _divisor(M, (128,), "M", target)
    BN = _divisor(N, (256, 128, 64, 32, 16), "N", target)
    return dict(KERNEL="blackwell_v6", BN=BN, STAGES=4, EPI_N=min(64, BN))


def _mma_sync_config(M: int, N: int, K: int, target: Target) -> dict:
    """gemm_mma_sync with the largest tile M and N divide and as many stages (4 at most) as
    the chip's shared memory holds; the epilogue stages through stmatrix from sm_90 on."""
    BM = _divisor(M, (128, 64), "M", target)
    BN = _divisor(N, (256, 128, 64), "N", target)
    _divisor(K, (64,), "K", target)
    stages = next((s for s in (4, 3, 2) if s * (BM + BN) * 64 * 2 <= target.shared_memory_bytes),
                  None)
    while stages is None:                   # a small shared memory: narrower tiles
        BN //= 2
        stages = next((s for s in (4, 3, 2)
                       if s * (BM + BN) * 64 * 2 <= target.shared_memory_bytes), None)
    return dict(KERNEL="gemm_mma_sync", BM=BM, BN=BN, STAGES=stages,
                WM=64 if BM >= 64 else BM, WN=64, EPILOGUE=int(target.supports("stmatrix")))


def check_extents(kernel: str, M, N, K) -> None:
    """ShapeError naming the extent unless M, N and K are positive integers the GEMM kernels
    can address (M may be a run-time dim, T.dynamic, whose value the launch checks)."""
    from tilemlir.dsl.dims import DimExpr
    for name, value in (("M", M), ("N", N), ("K", K)):
        if name == "M" and isinstance(value, DimExpr):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ShapeError(f"{kernel}: {name} must be a positive integer, got {value!r}")
        if value > MAX_EXTENT:
            raise ShapeError(f"{kernel}: {name}={value} exceeds {MAX_EXTENT}, the largest "
                             f"extent the kernels address (32-bit TMA coordinates and "
                             f"counters)")


def _check_shape(M, N, K, dtype) -> tuple:
    """(M, N, K) as Python ints (numpy's integers taken), after the checks."""
    M, N, K = (integral(v) for v in (M, N, K))
    check_extents("hgemm", M, N, K)
    # The kernels check the rest (N and K multiples of 8) when they build.
    if dtype not in ("float16", "bfloat16"):
        raise ShapeError(f"hgemm: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    return M, N, K


_TORCH_DTYPES = {"float16": "float16", "bfloat16": "bfloat16"}


def split_k_buffers(kernel, device, M: int | None = None) -> tuple:
    """The buffers a compiled front-door kernel takes after (A, B, D), as its signature says:
    with SPLIT_K > 1 the fp32 workspace (W) and the zeroed int32 counters (C);
    none otherwise. M: the rows of this call, for a kernel compiled for a run-time M (whose
    W and C grow with it)."""
    from tilemlir.ir.kernel_abi import evaluate_extent
    from tilemlir.runtime.cuda import require_torch
    torch = require_torch("hgemm")
    dtypes = {"f32": torch.float32, "i32": torch.int32}

    def shape(p):
        if not p.leading:
            return p.shape
        return (evaluate_extent(p.leading, {"M": M}),) + tuple(p.shape[1:])
    return tuple(torch.zeros(shape(p), dtype=dtypes[p.dtype], device=device) if p.name == "C"
                 else torch.empty(shape(p), dtype=dtypes[p.dtype], device=device)
                 for p in kernel.signature.params[3:])


# The kernels hgemm_v6 and v7 are compiled for a run-time M: one compile serves every M of a
# configuration (the persistent schedule and the grid follow M at each call).
RUN_TIME_M_KERNELS = ("hgemm_v6", "hgemm_v7", "hgemm_decode")
_COMPILED: dict = {}            # (N, K, dtype, configuration, target) -> compiled kernel
_COMPILED_LOCK = threading.Lock()


class Gemm:
    """The kernel of one configuration (gemm_kernel), compiled for one shape and dtype and
    called on torch tensors.

    gemm(a, b) -> d (allocated), gemm(a, b, out=d) or gemm(a, b, d) (written in place). With
    SPLIT_K > 1 it owns the fp32 workspace and the counters per device (allocated at the first
    call there, counters zeroed; the kernel leaves them zero). Calls that share them must be
    ordered on one stream, as calls of one torch module are.

    fixed_m=True compiles the kernel for this M alone, even where the configuration's kernel
    takes a run-time M (a compile per M, the per-tile arithmetic of M folded into constants)."""

    def __init__(self, M: int, N: int, K: int, dtype: str = "float16", config: dict | None = None,
                 target: str | None = None, *, fixed_m: bool = False):
        M, N, K = _check_shape(M, N, K, dtype)
        self.shape = (M, N, K)
        self.dtype = dtype
        resolved = _target(target)
        self.config = _check_config(config, resolved) if config is not None else \
            choose_config(M, N, K, dtype, target=resolved)
        self.target = target
        self._kernel = None
        self._workspaces: dict = {}
        self._lock = threading.Lock()
        self.run_time_m = not fixed_m and self.config.get("KERNEL", "hgemm_v6") in \
            RUN_TIME_M_KERNELS
        if self.run_time_m:
            import tilemlir.lang as T
            gemm_kernel(M, N, K, dtype, **self.config)       # refuses this M, if it must
            self.factory_kernel = gemm_kernel(T.dynamic("M"), N, K, dtype, **self.config)
        else:
            self.factory_kernel = gemm_kernel(M, N, K, dtype, **self.config)  # or ShapeError

    @property
    def kernel(self):
        """The compiled kernel (compiled at the first use; with a run-time M, shared by every
        M of this configuration)."""
        if self._kernel is None:
            import tilemlir
            if not self.run_time_m:
                self._kernel = tilemlir.compile(self.factory_kernel, target=self.target)
                return self._kernel
            _, N, K = self.shape
            key = (N, K, self.dtype, tuple(sorted(self.config.items())), self.target)
            with _COMPILED_LOCK:
                compiled = _COMPILED.get(key)
            if compiled is None:
                compiled = tilemlir.compile(self.factory_kernel, target=self.target)
                with _COMPILED_LOCK:
                    compiled = _COMPILED.setdefault(key, compiled)
            self._kernel = compiled
        return self._kernel

    @property
    def compile_info(self):
        return self.kernel.compile_info

    def _workspace(self, device) -> tuple:
        with self._lock:
            spaces = self._workspaces.get(device)
            if spaces is None:
                spaces = self._workspaces[device] = split_k_buffers(self.kernel, device,
                                                                    self.shape[0])
            return spaces

    def __call__(self, a, b, out=None):
        from tilemlir.runtime.args import (ArgumentError, kernel_input, kernel_input_padded,
                                           kernel_output)
        from tilemlir.runtime.cuda import require_torch
        torch = require_torch("hgemm")
        M, N, K = self.shape
        for name, t in (("a", a), ("b", b)) + ((("out", out),) if out is not None else ()):
            if not isinstance(t, torch.Tensor) or not t.is_cuda:
                raise ArgumentError(f"hgemm: {name} must be a torch CUDA tensor, got "
                                    f"{type(t).__name__}"
                                    + (f" on {t.device}" if isinstance(t, torch.Tensor) else ""))
        kernel = self.kernel
        if out is None:
            out = torch.empty((M, N), dtype=getattr(torch, _TORCH_DTYPES[self.dtype]),
                              device=a.device)
        kernel_k = padded_k(K) if self.config.get("PAD_K") else K
        if kernel_k != K:                   # rows padded to the kernel's K
            for name, t, rows in (("a", a, M), ("b", b, N)):
                if tuple(t.shape) != (rows, K):
                    raise ArgumentError(f"hgemm: {name} must be {rows} x {K}, got "
                                        f"{list(t.shape)}")
            a, b = (kernel_input_padded(t, kernel_k) for t in (a, b))
        else:                               # any strides and alignment: through dense copies
            a, b = kernel_input(a), kernel_input(b)
        target = kernel_output(out)
        kernel(a, b, target, *self._workspace(a.device))
        if target is not out:
            out.copy_(target)
        return out

    def __repr__(self) -> str:
        M, N, K = self.shape
        return f"Gemm({M}x{N}x{K}, {self.dtype}, {self.config})"


_GEMMS: dict = {}
_GEMMS_LOCK = threading.Lock()


def _check_config(config, target: Target) -> dict:
    """A configuration given by the caller: a dict whose KERNEL runs on `target`."""
    if not isinstance(config, dict):
        raise ShapeError(f"hgemm: config must be a dict of gemm_kernel's keyword arguments "
                         f"(KERNEL=..., BM=..., ...), got {type(config).__name__}")
    kernel = config.get("KERNEL", "hgemm_v6")
    feature = KERNEL_FEATURES.get(kernel)
    if feature is None:
        raise ShapeError(f"hgemm: KERNEL must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if not target.supports(feature):
        raise TargetError(f"hgemm: config's KERNEL {kernel} does not run on {target.chip} "
                          f"({target.require(feature)})")
    return dict(config)


def hgemm(M: int, N: int, K: int, dtype: str = "float16", config: dict | None = None,
          target: str | None = None) -> Gemm:
    """The GEMM callable for this shape and dtype (the heuristic's configuration for the
    target's kernel family unless `config` names one), cached per (shape, dtype,
    configuration, target)."""
    # The heuristic's choice is remembered with the shape (a call per step of a server asks
    # again and again: choosing is many times the launch's cost). The extents are checked
    # first: True would otherwise find the Gemm remembered for 1.
    M, N, K = _check_shape(M, N, K, dtype)
    try:
        asked = (M, N, K, dtype, None if config is None else tuple(sorted(config.items())),
                 target)
        gemm = _GEMMS.get(asked)
    except (TypeError, AttributeError):     # not hashable, or no dict: the checks below say
        asked, gemm = None, None
    if gemm is not None:
        return gemm
    resolved = _target(target)
    chosen = _check_config(config, resolved) if config is not None else \
        choose_config(M, N, K, dtype, target=resolved)
    key = (M, N, K, dtype, tuple(sorted(chosen.items())), target)
    with _GEMMS_LOCK:
        gemm = _GEMMS.get(key)
        if gemm is None:
            gemm = _GEMMS[key] = Gemm(M, N, K, dtype, chosen, target)
        if asked is not None:
            _GEMMS[asked] = gemm
    return gemm


def tuned_hgemm(M: int, N: int, K: int, dtype: str = "float16", inputs=None,
                target: str | None = None) -> Gemm:
    """The GEMM callable with the fastest of candidate_configs(M, N, K), timed on `inputs`
    ((a, b) torch CUDA tensors; random ones if None) by tilemlir.autotune, which remembers the
    choice in memory and under the compile cache (a later process times nothing)."""
    import tilemlir
    from tilemlir.runtime.cuda import require_torch_cuda
    from tilemlir.runtime.tuning import do_bench
    M, N, K = _check_shape(M, N, K, dtype)
    if _family(_target(target)) != "hopper":
        raise TargetError(f"tuned_hgemm tunes the sm_90a kernels; on "
                          f"{_target(target).chip} use hgemm (one configuration per shape)")
    torch = require_torch_cuda("tuned_hgemm")
    torch_dtype = getattr(torch, _TORCH_DTYPES[dtype])
    if inputs is None:
        inputs = (torch.randn(M, K, device="cuda", dtype=torch_dtype),
                  torch.randn(N, K, device="cuda", dtype=torch_dtype))
    a, b = inputs
    d = torch.empty((M, N), device=a.device, dtype=torch_dtype)

    def bench(kernel, args):                  # split-K configurations take W and C as well
        extra = split_k_buffers(kernel, a.device)
        kernel_k = kernel.signature.params[0].shape[1]
        if kernel_k != K:                     # PAD_K: the front door's copies, timed with it
            from tilemlir.runtime.args import kernel_input_padded

            def call():
                kernel(kernel_input_padded(a, kernel_k), kernel_input_padded(b, kernel_k),
                       d, *extra)
            return do_bench(call)
        return do_bench(lambda: kernel(*args, *extra))
    tuner = tilemlir.autotune(gemm_kernel, configs=candidate_configs(M, N, K), target=target,
                              bench=bench)
    return hgemm(M, N, K, dtype, tuner.choose(M, N, K, dtype, args=(a, b, d)), target)


def matmul_nt(a, b, out=None):
    """a @ b.T for torch CUDA tensors a (M x K) and b (N x K), both float16 or both bfloat16,
    on the current stream: a new M x N tensor, or written into `out`. Any M, N, K (K = 0 gives
    zeros, M or N = 0 an empty result), any strides and alignment (non-contiguous or misaligned
    operands go through contiguous copies). A wrong argument is an ArgumentError naming it."""
    from tilemlir.runtime.args import ArgumentError
    from tilemlir.runtime.cuda import require_torch
    torch = require_torch("matmul_nt")
    for name, t in (("a", a), ("b", b)) + ((("out", out),) if out is not None else ()):
        if not isinstance(t, torch.Tensor):
            raise ArgumentError(f"matmul_nt: {name} must be a torch tensor, got "
                                f"{type(t).__name__}")
        if t.dim() != 2:
            raise ArgumentError(f"matmul_nt: {name} must be 2-D, got shape {list(t.shape)}")
    dtype = _TORCH_DTYPES.get(str(a.dtype).removeprefix("torch."))
    if dtype is None:
        raise ArgumentError(f"matmul_nt: a has dtype {a.dtype}; float16 or bfloat16 needed")
    (M, K), (N, Kb) = a.shape, b.shape
    if b.dtype != a.dtype:
        raise ArgumentError(f"matmul_nt: b is {b.dtype} but a is {a.dtype}")
    if Kb != K:
        raise ArgumentError(f"matmul_nt: b {list(b.shape)} must be N x K with a's K={K} "
                            f"(a is {list(a.shape)})")
    if out is not None and (tuple(out.shape) != (M, N) or out.dtype != a.dtype):
        raise ArgumentError(f"matmul_nt: out must be a {M} x {N} {a.dtype} tensor, got "
                            f"{list(out.shape)} {out.dtype}")
    for name, t in (("a", a), ("b", b)) + ((("out", out),) if out is not None else ()):
        if not t.is_cuda or t.device != a.device:
            raise ArgumentError(f"matmul_nt: {name} must be a CUDA tensor on a's device "
                                f"({a.device}), got one on {t.device}")
    if out is None:
        out = a.new_empty((M, N))
    if not M * N:
        return out
    if not K:
        return out.zero_()
    return hgemm(M, N, K, dtype)(a, b, out)
