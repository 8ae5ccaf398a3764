"""The configuration checks the Hopper kernels share: each refuses, before anything is built, a
shape or parameter the kernel cannot run, with a ShapeError naming the kernel and the reason."""

from __future__ import annotations

import numbers

from tilemlir.lang import dtype_bits

DTYPES = ("float16", "bfloat16")
SHARED_MEMORY_BYTES = 227 * 1024        # the most dynamic shared memory a Hopper CTA can have
BARRIER_BYTES = 1024                    # the mbarriers' room before the first swizzled tile
STAGED_PAD = 8                          # elements after each staging row of StagedStore
STAGED_MIN_N = 64                       # an odd N from which D's rows leave staged
STAGED_EVEN_MAX_K = 64                  # and an even one, up to this K (epilogue-bound)


class ShapeError(ValueError):
    """A shape or configuration a kernel factory refuses; the message names the kernel, the
    parameter and why."""


PRODUCERS = ("tma", "cp_async")         # who loads the k-tiles (GemmStages, CpAsyncStages)
EPILOGUES = ("tma", "direct", "staged")  # who stores the tiles (TmaStore, DirectStore,
                                          # StagedStore)


def check_row_stride(kernel: str, name: str, extent: int, instead: str = "",
                     bits: int = 16) -> None:
    """A row-major operand's row of `extent` `bits`-bit elements must be a whole number of
    TMA's 16-byte stride units; `instead` names the option that takes any extent."""
    unit = 128 // bits
    if extent % unit:
        raise ShapeError(f"{kernel}: {name}={extent} must be a multiple of {unit} (TMA needs "
                         f"16-byte row strides for {bits}-bit elements){instead}")


def check_epilogue_columns(kernel: str, BN: int, EPI_N: int) -> None:
    """The TMA-store epilogue writes a tile's BN columns EPI_N at a time, each a whole number
    of 64-column (128-byte swizzled) boxes."""
    if BN % EPI_N or EPI_N % 64:
        raise ShapeError(f"{kernel}: EPI_N={EPI_N} must be a multiple of 64 dividing BN={BN}")


def check_gemm(kernel: str, M, N, K, dtype, BM, BN, BK, STAGES, producer: str = "tma",
               dtypes=DTYPES, max_bn: int = 256) -> None:
    """A wgmma GEMM of BM x BN tiles (M and N whole tiles) fed by a STAGES-deep ring of BK-deep
    A and B tiles of `dtype` (one of `dtypes`), loaded by TMA (K a whole number of 16-byte
    units) or by cp.async; a k-tile's rows are one 128-byte swizzle row. BN up to max_bn: one
    wgmma along N up to 256, several above (a kernel whose B boxes and registers allow it)."""
    if dtype not in dtypes:
        raise ShapeError(f"{kernel}: dtype must be one of {dtypes}, got {dtype!r}")
    bits = dtype_bits(dtype)
    for name, value, tile in (("M", M, BM), ("N", N, BN)):
        if value % tile:
            raise ShapeError(f"{kernel}: {name}={value} is not a multiple of the tile's {name} "
                             f"extent {tile} (tile {BM}x{BN}x{BK})")
    if producer not in PRODUCERS:
        raise ShapeError(f"{kernel}: PRODUCER must be one of {PRODUCERS}, got {producer!r}")
    if producer == "tma":
        check_row_stride(kernel, "K", K, "; PRODUCER='cp_async' loads any K", bits)
    elif STAGES < 3:
        raise ShapeError(f"{kernel}: PRODUCER='cp_async' needs STAGES >= 3 (it fills a stage "
                         f"one k-tile after loading it), got {STAGES}")
    if BM % 64 or not 64 <= BM <= 256:
        raise ShapeError(f"{kernel}: BM={BM} must be 64, 128, 192 or 256 (64 rows per consumer "
                         f"warpgroup)")
    if BN % 8 or not 8 <= BN <= max_bn:
        raise ShapeError(f"{kernel}: BN={BN} must be a multiple of 8 up to {max_bn} (wgmma n"
                         + ("; above 256 several instructions along N" if max_bn > 256 else "")
                         + ")")
    if BK * bits != 1024:
        raise ShapeError(f"{kernel}: BK must be {1024 // bits} (one 128-byte swizzle row of "
                         f"{bits}-bit elements)")
    if STAGES < 2:
        raise ShapeError(f"{kernel}: STAGES={STAGES} must be at least 2")
    stage_bytes = (BM + BN) * BK * bits // 8
    if BARRIER_BYTES + STAGES * stage_bytes > SHARED_MEMORY_BYTES:
        raise ShapeError(f"{kernel}: {STAGES} stages of {stage_bytes} bytes exceed the 227 KiB "
                         f"of shared memory a Hopper CTA can have")


def check_ragged_gemm(kernel: str, M, N, K, dtype, BM, BN, BK, STAGES, producer: str = "tma",
                      epilogue: str = "tma", dtypes=DTYPES, max_bn: int = 256) -> None:
    """check_gemm for a kernel whose stores stop at the edges (TMA stores clip, direct ones are
    masked): M and N need not be whole tiles; with TMA stores, N is a row stride of D (of
    16-bit elements). M may be known only at run time (a DimExpr)."""
    whole_m = BM if not isinstance(M, int) else BM * -(-M // BM)
    check_gemm(kernel, whole_m, BN * -(-N // BN), K, dtype, BM, BN, BK, STAGES, producer,
               dtypes, max_bn)
    if epilogue not in EPILOGUES:
        raise ShapeError(f"{kernel}: EPILOGUE must be one of {EPILOGUES}, got {epilogue!r}")
    if epilogue == "tma":
        check_row_stride(kernel, "N", N, "; EPILOGUE='staged' or 'direct' stores any N")


def check_staging(kernel: str, BM, BN, BK, STAGES, EPI_N, epilogue: str = "tma",
                  in_bytes: int = 2) -> None:
    """The stages (of `in_bytes`-byte elements) and the epilogue's staging buffer fit shared
    memory."""
    staging = staging_bytes(epilogue, BM, EPI_N)
    if BARRIER_BYTES + STAGES * (BM + BN) * BK * in_bytes + staging > SHARED_MEMORY_BYTES:
        raise ShapeError(f"{kernel}: {STAGES} stages and a {BM}x{EPI_N} staging buffer exceed "
                         f"the 227 KiB of shared memory a Hopper CTA can have")


def staging_bytes(epilogue: str, BM: int, EPI_N: int) -> int:
    """Shared memory of an epilogue's staging buffer (16-bit D): TMA's BM x EPI_N, StagedStore's
    padded rows, none for DirectStore."""
    return {"tma": BM * EPI_N * 2, "staged": BM * (EPI_N + STAGED_PAD) * 2}.get(epilogue, 0)


def unaligned_epilogue(N: int, K: int | None = None) -> str:
    """The epilogue for a D whose rows are not whole 16-byte units (N not a multiple of 8, of
    16-bit elements): StagedStore's 16-byte stores from STAGED_MIN_N columns for an odd N, and
    for an even one where K is at most STAGED_EVEN_MAX_K (the stores are then most of the
    time); else DirectStore's masked stores, 4 or 8 bytes wide for an even N, few for a narrow
    one. K None: not known (an even N keeps the direct stores).

    H200, one run (results/2026-12-03-session7/runB/odd_n-staged.log): staged against direct, us:
    7181x2787x2 38 / 103, 1163x7805x32 33 / 64, 2048x50257x1024 506 / 710, 2999x8193x769
    155 / 206, 4096x4097x4096 279 / 279; but 1000x3x128 5.8 / 4.5, where the stores are few.
    An even N (results/2026-12-03-session8/runB/epilogue_k.log, three shapes, K from 2 to
    4096): staged / direct 0.47-0.95 for K up to 64, 0.69-1.19 at 256 and 1024, 1.16-1.19 at
    4096 (4096x4100x4096: 283 / 239). The FP8 front door and hgemm_fused take the same rule
    (results/2026-12-03-session8/runA/staged_defaults.log: over six odd-N shapes the staged
    stores took 0.78x the direct ones' time for FP8, 0.96x for the fused GEMM, 0.85-1.11x a
    shape)."""
    if N < STAGED_MIN_N:
        return "direct"
    if N % 2 or (K is not None and K <= STAGED_EVEN_MAX_K):
        return "staged"
    return "direct"


def check_pair(kernel: str, BN, SMS) -> None:
    """2x1 clusters whose CTAs each load half of B's BN rows (multicast into both)."""
    if BN % 16:
        raise ShapeError(f"{kernel}: BN={BN} must be a multiple of 16 (each CTA of the pair "
                         f"loads BN / 2 rows of B, whose boxes start on 1024-byte swizzle "
                         f"repeats)")
    if SMS < 2:
        raise ShapeError(f"{kernel}: SMS={SMS} leaves no room for one cluster of 2 CTAs")


def integral(value):
    """An integer of another type (numpy's) as a Python int, so that a shape read from numpy
    is taken; anything else unchanged (a run-time dim, or a value for the checks to name)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, int)):
        return int(value)
    return value


def check_splits(kernel: str, name: str, value, K: int, k_tiles: int) -> None:
    """A split count (SPLIT_K, TAIL_SPLIT): every split needs one of the k_tiles k-tiles."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= k_tiles:
        raise ShapeError(f"{kernel}: {name}={value!r} must be an integer from 1 to the "
                         f"{k_tiles} k-tiles of K={K} (every split needs a k-tile)")


# A TMA producer is one thread issuing copies; a cp.async producer warpgroup computes every
# thread's addresses and masks (below 96 ptxas spills more of them: 47 spills at 88 and 83 at
# 80 in hgemm_fused, against 37 at 96). Two consumer warpgroups then get 200 registers each.
TMA_PRODUCER_REGS = 40
CP_ASYNC_PRODUCER_REGS = 96


def producer_regs(cp_async: bool, given) -> int:
    """The producer warpgroup's setmaxnreg budget: `given`, or the default for its loads."""
    if given is not None:
        return given
    return CP_ASYNC_PRODUCER_REGS if cp_async else TMA_PRODUCER_REGS


def consumer_regs(kernel: str, consumers: int, producer: int, consumer) -> int:
    """setmaxnreg budgets of a producer warpgroup and `consumers` consumer warpgroups. The CTA
    holds registers_per_thread(threads) per thread from its launch (168 for 3 warpgroups, 248
    for 2); .dec gives registers back to the CTA's pool and .inc waits until the pool holds
    enough, so the budgets must add up to no more than the launch's, or the consumers' .inc
    waits forever. Default: the most the consumers can have, up to 232."""
    from tilemlir.target import registers_per_thread
    warpgroups = 1 + consumers
    budget = registers_per_thread(128 * warpgroups) * warpgroups    # per thread of a warpgroup
    if consumer is None:
        consumer = min(232, (budget - producer) // consumers // 8 * 8)
    if producer + consumers * consumer > budget:
        raise ShapeError(f"{kernel}: register budgets {producer} + {consumers} x {consumer} per "
                         f"thread exceed the {budget} the CTA's {warpgroups} warpgroups hold "
                         f"from launch ({budget // warpgroups} each); setmaxnreg would wait "
                         f"forever")
    return consumer
