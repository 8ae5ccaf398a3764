"""Row-wise softmax, RMSNorm and LayerNorm over the last axis, in the kernel language.

    softmax(M, N):     Y = exp(X - max(X)) / sum(exp(X - max(X)))            (rows of X)
    rms_norm(M, N):    Y = X * rsqrt(mean(X^2) + eps) * W
    layer_norm(M, N):  Y = (X - mean(X)) * rsqrt(var(X) + eps) * W + B       (var biased)

Any row length N >= 1, float16, bfloat16 or float32 in and out, float32 math. M is an int or a
run-time dim (`T.dynamic("M")`: one compile serves every M; the front doors below compile
so). Rows are independent: a CTA takes one row, or several short ones.

How a row is held (`row_plan`):

- **in registers** (N <= REGISTER_ROW_MAX): the row is loaded once with accesses of `vector`
  elements (16 bytes when N is a multiple of 8; the largest power of two dividing N otherwise,
  so that each row starts on an access), lanes then warps along the row, so that each load
  instruction of a warp reads consecutive bytes; widened to f32, reduced across the threads
  holding it (shuffles, then the warps' partials through a few words of shared memory),
  normalised, narrowed and stored. Rows of up to 32 accesses take part of a warp (a warp holds
  32 / lanes rows) and rows of up to 32 x per_thread elements a whole warp; ROW_WARPS warps of
  such rows share a CTA, so that short rows do not leave it empty. The last accesses of a row
  whose length is not a whole number of them are masked: loads read `fill` there (-inf before
  softmax's max, 0 before a sum), stores skip them; rows past M likewise.
- **through shared memory in tiles** (longer rows): a CTA of STAGE_WARPS warps takes the row in
  tiles of `width` elements (STAGE_PER_THREAD a thread; twice that for a row that keeps an SM
  to itself, ONE_CTA_ROW_BYTES). Up to STAGE_BYTES of the row are copied to shared memory at
  once by cp.async (every tile in flight before the first is used); the rest, if any, is read
  from global memory in the first pass and again in the second (from L2, in practice). A row
  that does not start on 16 bytes is held shifted (RowPlan.shifted): tiled from the 16-byte
  boundary below its start through a flat view of X and Y, its `lead` elements before it and
  those past its end masked (bounds with a lower bound), so that every access is 16 bytes
  wide but at the row's two ends (split there element by element), and its weight and bias
  are read realigned (aligned 4-byte words shifted into place). Each thread keeps statistics of
  its own elements over the tiles (a running max and a sum rescaled by exp(old max - new max)
  for softmax: online softmax; a sum of squares for RMSNorm; for LayerNorm the sums of the
  deviations from tile 0's mean and of their squares, one pass as well), which one CTA
  reduction combines; a last pass normalises the tiles and stores them. The factories'
  stage_bytes and stage_warps set the shared memory and the warps (less of both fits more
  rows on an SM, at the cost of reading the unstaged tiles in each pass). Measured and not
  kept (results/2026-12-03-session11, bfloat16): 32 warps for rows that keep an SM (runC,
  N = 65536 to 151936: softmax and RMSNorm 8 points lower to 2 higher, LayerNorm 8-14
  lower); the unstaged tiles first in the first pass, their loads in flight beside the
  cp.async (runD, N = 100000 to 151936: 0-13 points lower, softmax 128256 81% -> 68%).

- **split over a cluster** (`cluster=C`, 2, 4, 8 or 16; opt-in): CTA r of a cluster of C
  holds columns r * part .. of the row in registers (cluster_plan), reduces them, and the C
  CTAs combine their statistics through an fp32 workspace in global memory, ordered by
  barrier.cluster (release / acquire at cluster scope); each then normalises its part. On the
  H200 it is slower than one CTA per row at every width timed (N = 4096 to 128256, C = 2 to
  8: 28-79% of a copy's bandwidth against 54-98%, results/2026-12-02-session4/runA), and
  still with softmax's 2-instruction exp (N = 65536 to 151936, C = 4 to 16, bfloat16: 38-76%
  against 73-88%, results/2026-12-03-session11/runC), so it is not the default.

Front doors for torch tensors [..., N]: softmax_rows, rms_norm_rows, layer_norm_rows (one
compile per (op, N, dtype, eps) through row_kernel, for every M).
"""

import math
import threading
from dataclasses import dataclass

import tilemlir.lang as T
from tilemlir.kernels.parts import integral

Tx = T.tile

VECTOR = 8                  # elements per 16-byte access (fp16 / bf16)
PER_THREAD = 32             # elements each thread keeps (4 accesses): enough bytes in flight
SOFTMAX_MAX_WARPS = 8       # softmax's rows take at most this many warps by default (see below)
ROW_WARPS = 4               # warps of a CTA of short rows (each warp its own rows)
REGISTER_ROW_MAX = 16384    # longer rows go through shared memory in tiles
STAGE_WARPS = 16            # a CTA of long rows
STAGE_PER_THREAD = 16       # elements a thread takes from each tile of a long row
STAGE_BYTES = 192 * 1024    # shared memory for a long row's tiles (the rest is read twice)
MAX_STAGE_BYTES = 200 * 1024    # what a CTA may stage (the H200's 227 KiB less the rest)
SM_SHARED_BYTES = 228 * 1024    # shared memory of an H100 / H200 SM, for all its CTAs
CTA_RESERVED_BYTES = 1024       # of which the driver keeps this much per CTA
SM_THREADS = 2048
# Long rows of more bytes than this stage so much that one CTA keeps an SM to itself; those of
# 16-bit elements that start on 16 bytes take tiles of twice the width (32 elements a thread a
# tile; up to 128 registers, which one CTA of 16 warps an SM has): one run, bfloat16
# (results/2026-12-02-session6/runH), RMSNorm 68% -> 86% of a copy's bandwidth at N = 100000,
# 81% -> 85% at 128256, 74% -> 80% at 151936; LayerNorm 63% -> 79%, 71% -> 78%, 65% -> 74%;
# softmax 68% -> 71% at 128256, 56% -> 59% at 151936, level at 65536 and 100000.
ONE_CTA_ROW_BYTES = (SM_SHARED_BYTES // 2 - CTA_RESERVED_BYTES) // 1024 * 1024
UNROLLED_TILES = 32         # longer rows loop over their unstaged tiles
OPS = ("softmax", "rms_norm", "layer_norm")
DTYPES = ("float16", "bfloat16", "float32")
LOWEST = -3.0e38            # a running max before any element (finite: exp(LOWEST - m) is 0)

STAT = T.TileLayout(T.S[(1, 1):(1, 1)])      # one value per row, every thread its own copy


def softmax_per_thread(N: int) -> int:
    """Elements a thread keeps in softmax by default: PER_THREAD, doubled (up to 128) while a
    row would take more than SOFTMAX_MAX_WARPS warps. A row lives in registers from its load
    to its store, so the rows an SM holds at once are what keeps its loads in flight: at
    N = 16384 on the H200, 16 warps of 32 elements (64 registers, 2 rows per SM) reach 81-88%
    of a copy's bandwidth, 8 warps of 64 (80 registers, 3 rows per SM) 96-97%
    (results/2026-12-01-softmax-exp)."""
    per_thread = PER_THREAD
    while N > per_thread * 32 * SOFTMAX_MAX_WARPS and per_thread < 128:
        per_thread *= 2
    return per_thread


@dataclass(frozen=True)
class RowPlan:
    """How a kernel holds its rows; see the module docstring."""
    N: int
    vector: int             # elements per access: a power of two dividing N, at most 16 bytes
    lanes: int              # lanes along a row (a warp holds 32 // lanes rows)
    warps: int              # warps along a row
    row_warps: int          # warps side by side, each with rows of its own
    chunks: int             # accesses of a thread per tile
    tiles: int = 1          # tiles of a row (1: the row is in registers)
    staged: int = 0         # tiles kept in shared memory
    shifted: bool = False   # held from the 16-byte boundary at or below the row's start

    @property
    def rows(self) -> int:
        """Rows per CTA."""
        return self.row_warps * (32 // self.lanes)

    @property
    def width(self) -> int:
        """Elements of a row a CTA holds in registers at once (at least N in registers)."""
        return self.chunks * self.warps * self.lanes * self.vector

    @property
    def threads(self) -> int:
        return 32 * self.warps * self.row_warps

    @property
    def in_registers(self) -> bool:
        return self.tiles == 1

    def layout(self) -> T.TileLayout:
        """The (rows, width) register tile: access j of the thread at (warp w, lane l) holds
        elements vector * (j * warps * lanes + w * lanes + l) .. + vector - 1 of its row, so a
        warp's lanes read consecutive bytes per access."""
        cols = ((self.chunks, self.warps, self.lanes, self.vector),
                (self.vector, 1 @ T.warpid, 1 @ T.laneid, 1))
        if self.rows == 1:
            return T.TileLayout(T.S[(1,) + cols[0]:(1,) + cols[1]])
        lane_rows = 32 // self.lanes
        return T.TileLayout(T.S[(self.row_warps, lane_rows) + cols[0]:
                                (1 @ T.warpid, self.lanes @ T.laneid) + cols[1]])

    def vector_layout(self) -> T.TileLayout:
        """A (width,) vector (the norms' weight and bias) where each thread holds its columns."""
        if self.rows == 1:
            return T.TileLayout(T.S[(self.chunks, self.warps, self.lanes, self.vector):
                                    (self.vector, 1 @ T.warpid, 1 @ T.laneid, 1)])
        return self.layout().row_vector((self.rows, self.width))

    def stat_layout(self) -> T.TileLayout:
        """A (rows, 1) statistic, in every thread holding its row."""
        if self.rows == 1:
            return STAT
        return self.layout().column_vector((self.rows, self.width))

    def thread_view(self) -> T.TileLayout:
        """The (1, width) tile seen as (threads, elements per thread): each thread's row its
        own slots, for statistics a thread keeps of its own elements (long rows)."""
        return T.TileLayout(T.S[(self.warps, self.lanes, self.chunks, self.vector):
                                (1 @ T.warpid, 1 @ T.laneid, self.vector, 1)])

    def thread_stat_layout(self) -> T.TileLayout:
        """One value per thread: (threads, 1)."""
        return T.TileLayout(T.S[(self.warps, self.lanes, 1):(1 @ T.warpid, 1 @ T.laneid, 1)])

    def partials_layout(self) -> T.TileLayout:
        """The threads' values as one row of a (1, threads) tile, to reduce across the CTA."""
        return T.TileLayout(T.S[(1, self.warps, self.lanes):(1, 1 @ T.warpid, 1 @ T.laneid)])


def _elem_bytes(dtype: str) -> int:
    return 4 if dtype == "float32" else 2


def row_plan(N: int, dtype: str = "float16", per_thread: int | None = None,
             op: str = "softmax", stage_bytes: int | None = None,
             stage_warps: int | None = None, max_vector: int = VECTOR) -> RowPlan:
    """How rows of N elements are held (see the module docstring). per_thread: the elements a
    thread keeps (in registers: of the row; long rows: of each tile); None: the default (softmax
    in registers: softmax_per_thread(N); else PER_THREAD, or STAGE_PER_THREAD for long rows).
    stage_bytes, stage_warps: long rows' shared memory for staged tiles and warps per CTA
    (None: STAGE_BYTES, STAGE_WARPS); less shared memory and fewer warps fit more rows on an
    SM, the unstaged tiles read twice. max_vector: the widest access (a power of two; a row
    that starts on fewer bytes than N's own alignment gives, as a cluster's parts do)."""
    if isinstance(N, bool) or not isinstance(N, int) or N < 1:
        raise ValueError(f"N={N!r}: the row length must be a positive integer")
    if per_thread is not None and per_thread not in (8, 16, 32, 64, 128):
        raise ValueError(f"per_thread={per_thread!r} must be 8, 16, 32, 64 or 128")
    stage_bytes = STAGE_BYTES if stage_bytes is None else stage_bytes
    stage_warps = STAGE_WARPS if stage_warps is None else stage_warps
    if isinstance(stage_bytes, bool) or not isinstance(stage_bytes, int) \
            or not 0 <= stage_bytes <= MAX_STAGE_BYTES:
        raise ValueError(f"stage_bytes={stage_bytes!r} must be an integer from 0 to "
                         f"{MAX_STAGE_BYTES} (shared memory for a long row's tiles)")
    if stage_warps not in (4, 8, 16, 32) or isinstance(stage_warps, bool):
        raise ValueError(f"stage_warps={stage_warps!r} must be 4, 8, 16 or 32 (warps of a CTA "
                         f"of long rows)")
    vector = min(VECTOR, N & -N, max_vector)
    # A long row whose accesses would be narrower than 16 bytes is held shifted: from the
    # VECTOR-aligned element at or below its start (its `lead` elements before it, up to
    # VECTOR - 1 more after it, masked), so that its accesses stay 16 bytes wide but for the
    # two ends, and its weight and bias load realigned (copy/realign.py). Against the 2-byte
    # path at 1336 x 50257 (results/2026-12-02-session6, runC and runG): softmax 85% / 79% of
    # a copy's bandwidth against 71% / 70%, RMSNorm 86% against 64%, LayerNorm 68% / 67%
    # against 54%. Rows held in registers lost when shifted (softmax 70% against 84% at 4097,
    # RMSNorm 59% against 85% at 1025, runC): they keep 2-byte accesses.
    shift = VECTOR - 1 if vector * _elem_bytes(dtype) < 16 and max_vector >= VECTOR \
        and N > REGISTER_ROW_MAX else 0
    accesses = -(-N // vector)
    if N > REGISTER_ROW_MAX:
        vector = VECTOR if shift else vector
        per = STAGE_PER_THREAD if per_thread is None else per_thread
        if per_thread is None and N * _elem_bytes(dtype) > ONE_CTA_ROW_BYTES \
                and _elem_bytes(dtype) == 2 and not shift:
            per *= 2                # wider tiles for a row that keeps an SM to itself
        elif per_thread is None and shift and op == "layer_norm":
            per //= 2               # the shifted weight and bias in 64 registers
        chunks = max(1, per // vector)
        width = chunks * stage_warps * 32 * vector
        tiles = -(-(N + shift) // width)
        staged = min(tiles, stage_bytes // (width * _elem_bytes(dtype)))
        return RowPlan(N, vector, 32, stage_warps, 1, chunks, tiles, staged, bool(shift))
    if per_thread is None:
        per_thread = softmax_per_thread(N) if op == "softmax" else PER_THREAD
    if accesses <= 32:                                  # a warp holds 32 // lanes rows
        lanes = 1 << (accesses - 1).bit_length()
        return RowPlan(N, vector, lanes, 1, ROW_WARPS, 1)
    if N <= 32 * max(per_thread, vector):               # a warp per row
        return RowPlan(N, vector, 32, 1, ROW_WARPS, -(-accesses // 32))
    # several warps per row, about per_thread elements a thread, the fewest padded accesses
    least = min(32, -(-N // (32 * per_thread)))
    warps = min(range(least, min(32, 2 * least) + 1),
                key=lambda w: (w * 32 * -(-accesses // (w * 32)), w))
    return RowPlan(N, vector, 32, warps, 1, -(-accesses // (warps * 32)))


MAX_ROWS = 2 ** 31 - 1      # a kernel's rows are counted in 32 bits (its run-time M, its grid)


def _check(kernel: str, M, N, dtype: str) -> tuple:
    """(M, N), numpy's integers as Python ints; ValueError naming the argument unless M is a
    positive integer up to MAX_ROWS or a run-time dim, N a positive integer and dtype one of
    DTYPES."""
    M, N = integral(M), integral(N)
    if not isinstance(M, T.DimExpr):
        if isinstance(M, bool) or not isinstance(M, int) or M < 1:
            raise ValueError(f"{kernel}: M must be a positive integer, got {M!r}")
        if M > MAX_ROWS:
            raise ValueError(f"{kernel}: M={M} rows exceed {MAX_ROWS}, the rows a kernel can "
                             f"take (a 32-bit count)")
    if isinstance(N, bool) or not isinstance(N, int) or N < 1:
        raise ValueError(f"{kernel}: N must be a positive integer, got {N!r}")
    if dtype not in DTYPES:
        raise ValueError(f"{kernel}: dtype must be 'float16', 'bfloat16' or 'float32', got "
                         f"{dtype!r}")
    return M, N


def _check_eps(kernel: str, eps) -> None:
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) \
            or eps < 0:
        raise ValueError(f"{kernel}: eps must be a finite number >= 0 (it is compiled into "
                         f"the kernel), got {eps!r}")


def _grid(M, rows: int):
    if rows == 1:
        return M
    return -(-M // rows) if isinstance(M, int) else T.ceildiv(M, rows)


def _rows_bound(M, row, rows: int):
    """The rows of a CTA's (rows, width) window that lie inside the M rows (a constant when
    every CTA's window is whole)."""
    if isinstance(M, int) and M % rows == 0:
        return rows
    return M - row


def _shift(N: int, row):
    """(start, lead) of a shifted row (RowPlan.shifted): its first element in a flat view of
    the rows rounded down to a multiple of VECTOR, and the elements of the rows before it
    there."""
    start = row * N // VECTOR * VECTOR
    return start, row * N - start


def _flat(A, N: int, start, c0: int, width: int):
    """Elements start + c0 .. + width of A (rows of N) seen as one row: a shifted row's tile."""
    return A.view(1, A.shape[0] * N)[0:1, start + c0:start + c0 + width]


def _shifted_bounds(N: int, lead, c0: int = 0, head: bool = True):
    """The bounds of a shifted row's tile at c0 (its columns lead - c0 .. lead + N - c0);
    head: the tile may start before the row (else only its end is tested)."""
    end = lead + N - c0
    return (1, (lead - c0, end)) if head else (1, end)


def _row_tiles(plan: RowPlan, M, dtype: str):
    """The start of a kernel holding rows in registers (called in its body): the grid and the
    threads, scratch for the warps' partials (None: a row within a warp), and the CTA's first
    row; returns (row, scratch, the row tile in dtype, the row tile in float32)."""
    R, warps = plan.rows, plan.warps
    cta = T.cta_id([_grid(M, R)])
    T.warp_id([warps * plan.row_warps])
    T.lane_id([32])
    pool = T.SMEMPool()
    scratch = pool.alloc((R * warps,), "float32")
    pool.commit()
    x = T.alloc_local((R, plan.width), dtype, layout=plan.layout())
    xf = T.alloc_local((R, plan.width), "float32", layout=plan.layout())
    return cta * R, scratch if warps > 1 else None, x, xf


def softmax_fast_exp(dtype: str, fast: bool = False) -> bool:
    """Whether softmax of `dtype` rows takes exp as ex2.approx.ftz((x - max) log2 e): two
    instructions, against eight for the exp within ~2 ulp of fp32 (elementwise_math.exp). Its
    relative error is about 2^-22 (the approximation) plus |x - max| 2^-23 (the roundings of
    x - max and of the product; independent of the max itself): under 2^-19 where
    x - max > -10, under 2^-16 wherever the result is a normal float, against half an ulp of
    a float16 output, 2^-11, and of a bfloat16, 2^-8; what it flushes to 0 (below 2^-126) is
    0 in float16 and under 2^-126 in bfloat16. So 16-bit rows always take it, and float32
    rows where `fast` asks. Rows through shared memory compute exp twice an element (the
    online sum, then the output) and were issue-bound on it: one run, M = 2^26 / N
    (results/2026-12-03-session11/runB), of a copy's bandwidth, bfloat16 / float16, from the
    8-instruction exp to this one:
    N = 32000 88% / 93% -> 100% / 99%, 50257 80% / 85% -> 94% / 94%, 65536 70% / 73% -> 84% /
    88%, 128256 71% / 74% -> 82% / 84%, 151936 62% / 66% -> 75% / 76%; rows in registers
    (16384) level."""
    return bool(fast) or dtype != "float32"


def softmax(M, N: int, dtype: str = "float16", fast: bool = False,
            per_thread: int | None = None, cluster: int = 1, stage_bytes: int | None = None,
            stage_warps: int | None = None):
    """Softmax over the last axis of an M x N tensor (M an int or a run-time dim). exp is
    ex2.approx.ftz((x - max) log2 e) for 16-bit rows, and for float32 rows with fast=True
    (softmax_fast_exp); float32 rows otherwise take the 8-instruction exp, within ~2 ulp of
    fp32. per_thread, stage_bytes, stage_warps: as row_plan's; cluster: as cluster_plan's."""
    M, N = _check("softmax", M, N, dtype)
    if not isinstance(fast, bool):
        raise ValueError(f"softmax: fast must be True or False, got {fast!r}")
    fast = softmax_fast_exp(dtype, fast)
    if cluster != 1 or not _is_cluster(cluster):
        return _cluster_rows("softmax", M, N, dtype,
                             cluster_plan(N, dtype, cluster, per_thread, "softmax"), cluster,
                             fast=fast)
    plan = row_plan(N, dtype, per_thread, "softmax", stage_bytes, stage_warps)
    if not plan.in_registers:
        return _long_rows("softmax", M, N, dtype, plan, fast=fast)
    R, width = plan.rows, plan.width
    stat = plan.stat_layout()
    masked = R > 1 or width > N

    @T.prim_func
    def softmax(X: T.Buffer((M, N), dtype), Y: T.Buffer((M, N), dtype)):
        row, red, x, xf = _row_tiles(plan, M, dtype)
        peak = T.alloc_local((R, 1), "float32", layout=stat)
        total = T.alloc_local((R, 1), "float32", layout=stat)
        bounds = (_rows_bound(M, row, R), N)
        if masked:
            Tx.cta.copy(x, X[row:row + R, 0:width], bounds=bounds, fill=float("-inf"))
        else:
            Tx.cta.copy(x, X[row:row + 1, :])
        Tx.cta.cast(xf, x)
        Tx.cta.max(peak, xf, axis=1, scratch=red)
        Tx.cta.sub(xf, xf, peak)
        Tx.cta.exp(xf, xf, fast=fast)
        Tx.cta.sum(total, xf, axis=1, scratch=red)
        Tx.cta.div(total, 1.0, total)
        Tx.cta.mul(xf, xf, total)
        Tx.cta.cast(x, xf)
        if masked:
            Tx.cta.copy(Y[row:row + R, 0:width], x, bounds=bounds)
        else:
            Tx.cta.copy(Y[row:row + 1, :], x)

    return softmax


def rms_norm(M, N: int, dtype: str = "float16", eps: float = 1e-6,
             per_thread: int | None = None, cluster: int = 1, stage_bytes: int | None = None,
             stage_warps: int | None = None):
    """torch.nn.functional.rms_norm(X, (N,), W, eps) over the last axis of an M x N tensor
    (M an int or a run-time dim), f32 math. per_thread, stage_bytes, stage_warps: as
    row_plan's; cluster: as cluster_plan's."""
    M, N = _check("rms_norm", M, N, dtype)
    _check_eps("rms_norm", eps)
    if cluster != 1 or not _is_cluster(cluster):
        return _cluster_rows("rms_norm", M, N, dtype,
                             cluster_plan(N, dtype, cluster, per_thread, "rms_norm"), cluster,
                             eps=eps)
    plan = row_plan(N, dtype, per_thread, "rms_norm", stage_bytes, stage_warps)
    if not plan.in_registers:
        return _long_rows("rms_norm", M, N, dtype, plan, eps=eps)
    R, width = plan.rows, plan.width
    layout, w_layout, stat = plan.layout(), plan.vector_layout(), plan.stat_layout()
    masked = R > 1 or width > N

    @T.prim_func
    def rms_norm(X: T.Buffer((M, N), dtype), W: T.Buffer((N,), dtype),
                 Y: T.Buffer((M, N), dtype)):
        row, red, x, xf = _row_tiles(plan, M, dtype)
        sq = T.alloc_local((R, width), "float32", layout=layout)
        w = T.alloc_local((width,), dtype, layout=w_layout)
        wf = T.alloc_local((width,), "float32", layout=w_layout)
        scale = T.alloc_local((R, 1), "float32", layout=stat)
        bounds = (_rows_bound(M, row, R), N)
        if masked:
            Tx.cta.copy(x, X[row:row + R, 0:width], bounds=bounds)
            Tx.cta.copy(w, W[0:width], bounds=(N,))
        else:
            Tx.cta.copy(x, X[row:row + 1, :])
            Tx.cta.copy(w, W)
        Tx.cta.cast(xf, x)
        Tx.cta.mul(sq, xf, xf)
        Tx.cta.sum(scale, sq, axis=1, scratch=red)
        Tx.cta.mul(scale, scale, 1.0 / N)
        Tx.cta.add(scale, scale, float(eps))
        Tx.cta.rsqrt(scale, scale)
        Tx.cta.mul(xf, xf, scale)
        Tx.cta.cast(wf, w)
        Tx.cta.mul(xf, xf, wf)
        Tx.cta.cast(x, xf)
        if masked:
            Tx.cta.copy(Y[row:row + R, 0:width], x, bounds=bounds)
        else:
            Tx.cta.copy(Y[row:row + 1, :], x)

    return rms_norm


def layer_norm(M, N: int, dtype: str = "float16", eps: float = 1e-5,
               per_thread: int | None = None, cluster: int = 1, stage_bytes: int | None = None,
               stage_warps: int | None = None):
    """torch.nn.functional.layer_norm(X, (N,), W, B, eps) over the last axis of an M x N
    tensor (M an int or a run-time dim), f32 math without cancellation: rows in registers
    take the mean, then the mean of the squared deviations from it; long rows the deviations
    from their first tile's mean in one pass (_long_rows). per_thread, stage_bytes,
    stage_warps: as row_plan's; cluster: as cluster_plan's."""
    M, N = _check("layer_norm", M, N, dtype)
    _check_eps("layer_norm", eps)
    if cluster != 1 or not _is_cluster(cluster):
        return _cluster_rows("layer_norm", M, N, dtype,
                             cluster_plan(N, dtype, cluster, per_thread, "layer_norm"),
                             cluster, eps=eps)
    plan = row_plan(N, dtype, per_thread, "layer_norm", stage_bytes, stage_warps)
    if not plan.in_registers:
        return _long_rows("layer_norm", M, N, dtype, plan, eps=eps)
    R, width = plan.rows, plan.width
    layout, v_layout, stat = plan.layout(), plan.vector_layout(), plan.stat_layout()
    padded = width > N

    @T.prim_func
    def layer_norm(X: T.Buffer((M, N), dtype), W: T.Buffer((N,), dtype),
                   B: T.Buffer((N,), dtype), Y: T.Buffer((M, N), dtype)):
        row, red, x, xf = _row_tiles(plan, M, dtype)
        sq = T.alloc_local((R, width), "float32", layout=layout)
        w = T.alloc_local((width,), dtype, layout=v_layout)
        wf = T.alloc_local((width,), "float32", layout=v_layout)
        mean = T.alloc_local((R, 1), "float32", layout=stat)
        rstd = T.alloc_local((R, 1), "float32", layout=stat)
        bounds = (_rows_bound(M, row, R), N)
        Tx.cta.copy(x, X[row:row + R, 0:width], bounds=bounds)
        Tx.cta.cast(xf, x)
        Tx.cta.sum(mean, xf, axis=1, scratch=red)
        Tx.cta.mul(mean, mean, 1.0 / N)
        Tx.cta.sub(xf, xf, mean)
        if padded:                      # the columns past N read 0: no deviation there
            cols = T.alloc_local((R, width), "int32", layout=layout)
            inside = T.alloc_local((R, width), "bool", layout=layout)
            Tx.cta.iota(cols, 1)
            Tx.cta.compare(inside, cols, "<", N)
            Tx.cta.select(xf, inside, xf, 0.0)
        Tx.cta.mul(sq, xf, xf)
        Tx.cta.sum(rstd, sq, axis=1, scratch=red)
        Tx.cta.mul(rstd, rstd, 1.0 / N)
        Tx.cta.add(rstd, rstd, float(eps))
        Tx.cta.rsqrt(rstd, rstd)
        Tx.cta.mul(xf, xf, rstd)
        Tx.cta.copy(w, W[0:width], bounds=(N,))
        Tx.cta.cast(wf, w)
        Tx.cta.mul(xf, xf, wf)
        Tx.cta.copy(w, B[0:width], bounds=(N,))
        Tx.cta.cast(wf, w)
        Tx.cta.add(xf, xf, wf)
        Tx.cta.cast(x, xf)
        Tx.cta.copy(Y[row:row + R, 0:width], x, bounds=bounds)

    return layer_norm


def _long_rows(op: str, M, N: int, dtype: str, plan: RowPlan, eps: float = 0.0,
               fast: bool = False):
    """A kernel for rows too long for registers: one CTA per row, tiles of plan.width (see
    the module docstring)."""
    width, warps, threads = plan.width, plan.warps, plan.threads
    tiles, staged = plan.tiles, plan.staged
    full = N // width                         # tiles wholly inside the row
    layout, v_layout = plan.layout(), plan.vector_layout()
    tview, tstat, partials = plan.thread_view(), plan.thread_stat_layout(), plan.partials_layout()
    per = plan.chunks * plan.vector
    is_softmax, is_layer = op == "softmax", op == "layer_norm"
    # A shifted row (RowPlan.shifted: it does not start on 16 bytes) is tiled from the 16-byte
    # boundary below its start, through a flat view of X and Y; it starts `lead` elements into
    # its first tile, which is masked below it (the neighbours' elements there are only read,
    # into shared memory by cp.async 16 bytes at a time).
    shifted = plan.shifted
    span = staged * width
    # where each tile comes from: staged tiles from shared memory, the others from global
    # memory; the last one may be partial, and a shifted row's first one (masked). Tiles are
    # unrolled (so that ptxas can issue the global loads of several at once: a pass keeps no
    # data exchange between them) unless there are more than UNROLLED_TILES, when the whole
    # unstaged ones go in a loop.
    kinds = [("shared" if k < staged else "global")
             + ("_tail" if (k + 1) * width > N or (shifted and k == 0) else "")
             for k in range(tiles)]
    looped = list(range(max(staged, int(shifted)), full)) if tiles > UNROLLED_TILES else []
    # A shifted row's LayerNorm is held to the registers that let two CTAs share an SM where
    # their shared memory does (ptxas took up to 128 a thread for its weight and bias loads,
    # and then fit one; one CTA an SM leaves the memory idle while it normalises and
    # stores). Softmax and RMSNorm stay within 64 as they are.
    ctas = min(2, SM_SHARED_BYTES // (max(span, VECTOR) * _elem_bytes(dtype)
                                      + warps * 4 + CTA_RESERVED_BYTES),
               SM_THREADS // threads)
    looped_past_first = [k for k in looped if k > 0]
    unrolled = [k for k in range(tiles) if k not in looped]

    def long_rows(X: T.Buffer((M, N), dtype),
                  W: T.Buffer((N,), dtype) if not is_softmax else None,
                  B: T.Buffer((N,), dtype) if is_layer else None,
                  Y: T.Buffer((M, N), dtype)):
        row = T.cta_id([M])
        T.warp_id([warps])
        T.lane_id([32])
        if shifted and is_layer and ctas > 1:
            T.min_ctas_per_sm(ctas)
        pool = T.SMEMPool()
        S = pool.alloc((1, max(span, VECTOR)), dtype)      # (unused where nothing is staged)
        scratch = pool.alloc((warps,), "float32")
        pool.commit()
        x = T.alloc_local((1, width), dtype, layout=layout)
        xf = T.alloc_local((1, width), "float32", layout=layout)
        xv = xf.view(threads, per, layout=tview)           # each thread's elements: a row
        acc = T.alloc_local((threads, 1), "float32", layout=tstat)
        part = T.alloc_local((threads, 1), "float32", layout=tstat)
        run = T.alloc_local((threads, 1), "float32", layout=tstat)
        stat = T.alloc_local((1, 1), "float32", layout=STAT)
        center = T.alloc_local((1, 1), "float32", layout=STAT)   # the max, or the mean
        xs = [x, T.alloc_local((1, width), dtype, layout=layout)]     # double-buffered
        ws = [T.alloc_local((width,), dtype, layout=v_layout) for _ in range(2)]
        bs = [T.alloc_local((width,), dtype, layout=v_layout) for _ in range(2)]
        wf = T.alloc_local((width,), "float32", layout=v_layout)
        cols = T.alloc_local((1, width), "int32", layout=layout)
        inside = T.alloc_local((1, width), "bool", layout=layout)
        if is_layer:
            acc2 = T.alloc_local((threads, 1), "float32", layout=tstat)
            shift = T.alloc_local((1, 1), "float32", layout=STAT)

        def tile_bounds(k):
            """The bounds of (masked) tile k of the row."""
            if shifted:
                return _shifted_bounds(N, lead, k * width, head=k == 0)
            return (1, N - k * width)

        def x_tile(A, k):
            """Tile k of the row in A (X or Y)."""
            t0 = k * width
            if shifted:
                return _flat(A, N, start, t0, width)
            return A[row:row + 1, t0:t0 + width]

        def v_tile(V, k):
            """The weight's or bias's elements for tile k (a shifted row starts lead elements
            into its first tile)."""
            v0 = k * width - lead if shifted else k * width
            return V[v0:v0 + width]

        # every staged tile in flight at once, one cp.async group each (zeros past N)
        if shifted:
            flat = X.view(1, X.shape[0] * N)
            start, lead = _shift(N, row)

            def stage_span(limit):
                """The span's tiles, each a cp.async group; `limit`: the elements of the span
                inside X (a constant past the span: no test, 16 bytes a chunk)."""
                for k in T.unroll(staged):
                    c0 = k * width
                    Tx.cta.copy_async(S[0:1, c0:c0 + width],
                                      flat[0:1, start + c0:start + c0 + width],
                                      bounds=(1, limit - c0))
                    T.ptx.cp_async.commit_group()

            if span <= 2 * N and row + 1 < M:       # the span ends in the next row of X
                stage_span(span)
            else:
                stage_span(M * N - start)
        else:
            lead = 0
            for k in T.unroll(staged):
                Tx.cta.copy_async(S[0:1, k * width:(k + 1) * width],
                                  X[row:row + 1, k * width:(k + 1) * width],
                                  bounds=(1, N - k * width))
                T.ptx.cp_async.commit_group()

        def load(k, kind, fill, first):
            """Tile k into xf: a staged one from shared memory (on the first pass once every
            thread's cp.async group of it is complete), another from global memory."""
            if kind == "shared" or kind == "shared_tail":
                if first:
                    T.ptx.cp_async.wait_group(staged - 1 - k)
                    T.cuda.cta_sync()
                staged_tile(x, k, kind, fill)
            elif kind == "global_tail":
                Tx.cta.copy(x, x_tile(X, k), bounds=tile_bounds(k), fill=fill)
            else:
                Tx.cta.copy(x, x_tile(X, k))
            Tx.cta.cast(xf, x)

        def each_tile(visit, past_first=False):
            """visit(k, kind) for every tile (past_first: but tile 0), in order (k an int where
            unrolled)."""
            for k in unrolled[:staged]:
                if k > 0 or not past_first:
                    visit(k, kinds[k])
            rest = looped_past_first if past_first else looped
            if len(rest) > 0:
                for k in T.serial(rest[0], rest[-1] + 1):
                    visit(k, "global")
            for k in unrolled[staged:]:
                if k > 0 or not past_first:
                    visit(k, kinds[k])

        def combine_sum(values):
            """stat = the sum over the CTA of each thread's value (threads, 1)."""
            Tx.cta.sum(stat, values.view(1, threads, layout=partials), axis=1, scratch=scratch)

        def online_softmax(k, kind):
            load(k, kind, float("-inf"), True)
            Tx.cta.max(part, xv, axis=1)                 # this tile's max, per thread
            Tx.cta.maximum(part, part, run)              # the new running max
            Tx.cta.sub(run, run, part)
            Tx.cta.exp(run, run, fast=fast)              # rescales the sum so far
            Tx.cta.mul(acc, acc, run)
            Tx.cta.maximum(run, part, part)
            Tx.cta.sub(xv, xv, part)
            Tx.cta.exp(xv, xv, fast=fast)
            Tx.cta.sum(part, xv, axis=1)
            Tx.cta.add(acc, acc, part)

        def sum_squares(k, kind):
            load(k, kind, 0.0, True)
            Tx.cta.mul(xv, xv, xv)
            Tx.cta.sum(part, xv, axis=1)
            Tx.cta.add(acc, acc, part)

        def shifted_sums(k, kind):
            load(k, kind, 0.0, True)
            deviation_sums(k, kind)

        def deviation_sums(k, kind):
            """acc += this thread's sum of (x - center) over tile k (in xf), acc2 += of their
            squares (nothing past N)."""
            Tx.cta.sub(xf, xf, center)
            if kind == "shared_tail" or kind == "global_tail":     # none outside the row
                Tx.cta.iota(cols, 1, offset=k * width - lead)
                if shifted and k == 0:
                    Tx.cta.compare(inside, cols, ">=", 0)
                    Tx.cta.select(xf, inside, xf, 0.0)
                Tx.cta.compare(inside, cols, "<", N)
                Tx.cta.select(xf, inside, xf, 0.0)
            Tx.cta.sum(part, xv, axis=1)
            Tx.cta.add(acc, acc, part)
            Tx.cta.mul(xv, xv, xv)
            Tx.cta.sum(part, xv, axis=1)
            Tx.cta.add(acc2, acc2, part)

        def staged_tile(dst, k, kind, fill):
            """dst = staged tile k."""
            at = k * width
            if kind == "shared_tail":
                Tx.cta.copy(dst, S[0:1, at:at + width], bounds=tile_bounds(k), fill=fill)
            else:
                Tx.cta.copy(dst, S[0:1, at:at + width])

        def fetch(k, kind, slot):
            """The global loads of tile k's last pass into buffer set `slot`: the row's tile
            if it is not staged, the weight and the bias. Issued a tile ahead of their use,
            since they cannot pass the stores before them (the buffers may alias for all the
            compiler knows). A shifted row's bias too (read as five 4-byte words for each
            16 bytes, copy/realign.py): at 64 registers that costs one 4-byte spill outside
            the tile loop, and reading it when its tile is normalised left LayerNorm stalled
            on it (67-68% of copy against 68-70% at 1336x50257, 49% against 57% at
            672x100003; results/2026-12-03-session13/run1)."""
            if kind == "global_tail":
                Tx.cta.copy(xs[slot], x_tile(X, k), bounds=tile_bounds(k))
            elif kind == "global":
                Tx.cta.copy(xs[slot], x_tile(X, k))
            if not is_softmax:
                fetch_vector(W, ws[slot], k, kind)
            if is_layer:
                fetch_vector(B, bs[slot], k, kind)

        def fetch_vector(V, dst, k, kind):
            if kind == "shared_tail" or kind == "global_tail":
                Tx.cta.copy(dst, v_tile(V, k), bounds=tile_bounds(k)[1:])
            else:
                Tx.cta.copy(dst, v_tile(V, k))

        def normalize(k, kind, slot):
            if kind == "shared_tail" or kind == "shared":
                staged_tile(xs[slot], k, kind, 0.0)
            Tx.cta.cast(xf, xs[slot])
            if is_softmax:
                Tx.cta.sub(xf, xf, center)
                Tx.cta.exp(xf, xf, fast=fast)
                Tx.cta.mul(xf, xf, stat)
            else:
                if is_layer:
                    Tx.cta.sub(xf, xf, center)
                Tx.cta.mul(xf, xf, stat)
                Tx.cta.cast(wf, ws[slot])
                Tx.cta.mul(xf, xf, wf)
                if is_layer:
                    Tx.cta.cast(wf, bs[slot])
                    Tx.cta.add(xf, xf, wf)
            Tx.cta.cast(xs[slot], xf)
            if kind == "shared_tail" or kind == "global_tail":
                Tx.cta.copy(x_tile(Y, k), xs[slot], bounds=tile_bounds(k))
            else:
                Tx.cta.copy(x_tile(Y, k), xs[slot])

        def pipelined(seq):
            """normalize the unrolled tiles `seq`, fetching each one's global data while the
            one before it is done."""
            if len(seq) > 0:
                fetch(seq[0], kinds[seq[0]], 0)
            for i in range(len(seq)):
                if i + 1 < len(seq):
                    fetch(seq[i + 1], kinds[seq[i + 1]], (i + 1) % 2)
                normalize(seq[i], kinds[seq[i]], i % 2)

        def last_pass():
            pipelined(unrolled[:staged])
            if len(looped) > 0:
                for k in T.serial(looped[0], looped[-1] + 1):
                    fetch(k, "global", 0)
                    normalize(k, "global", 0)
            pipelined(unrolled[staged:])

        Tx.cta.fill(acc, 0.0)
        if is_softmax:
            Tx.cta.fill(run, LOWEST)
            each_tile(online_softmax)
            Tx.cta.max(center, run.view(1, threads, layout=partials), axis=1, scratch=scratch)
            Tx.cta.sub(run, run, center)
            Tx.cta.exp(run, run, fast=fast)
            Tx.cta.mul(acc, acc, run)                    # each thread's sum, rescaled to it
            combine_sum(acc)
            Tx.cta.div(stat, 1.0, stat)
        elif is_layer:
            # One pass: the sums of x - s and of (x - s)^2 about a shift s, the mean of tile 0
            # (whole: a long row is longer than a tile); then mean = s + d, var = E[(x - s)^2]
            # - d^2 with d = E[x - s]. The cancellation is bounded: tile 0's elements are part
            # of the row, so d^2 <= var (N - width) / width, about 15 var at N = 128256, and
            # the variance keeps all but 4 of fp32's 24 bits. (Two passes, the mean then the
            # deviations from it, read every tile twice: 54% of a copy's bandwidth where
            # RMSNorm's one pass reached 64%, results/2026-12-02-session4/runE.)
            load(0, kinds[0], 0.0, True)
            Tx.cta.sum(part, xv, axis=1)
            combine_sum(part)
            Tx.cta.mul(center, stat, 1.0 / width)         # the shift
            Tx.cta.fill(acc2, 0.0)
            deviation_sums(0, kinds[0])
            each_tile(shifted_sums, True)
            combine_sum(acc)
            Tx.cta.mul(shift, stat, 1.0 / N)              # d = mean - s
            combine_sum(acc2)
            Tx.cta.mul(stat, stat, 1.0 / N)               # E[(x - s)^2]
            Tx.cta.add(center, center, shift)             # the mean
            Tx.cta.mul(shift, shift, shift)
            Tx.cta.sub(stat, stat, shift)                 # the variance
            Tx.cta.maximum(stat, stat, 0.0)               # (never below 0 by rounding)
            Tx.cta.add(stat, stat, float(eps))
            Tx.cta.rsqrt(stat, stat)
        else:
            each_tile(sum_squares)
            combine_sum(acc)
            Tx.cta.mul(stat, stat, 1.0 / N)
            Tx.cta.add(stat, stat, float(eps))
            Tx.cta.rsqrt(stat, stat)
        last_pass()

    long_rows.__name__ = long_rows.__qualname__ = op
    return T.prim_func(long_rows)


# CTAs a row may be split over: CUDA's portable cluster sizes, and 16, non-portable (Hopper
# takes it; rows of 131072 to 262144 elements then fit the CTAs' registers)
CLUSTERS = (1, 2, 4, 8, 16)


def _is_cluster(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value in CLUSTERS


def cluster_plan(N: int, dtype: str, cluster: int, per_thread: int | None = None,
                 op: str = "softmax") -> RowPlan:
    """The plan of one CTA's part of a row split over a cluster of `cluster` CTAs: a
    register row_plan of part_width(N, cluster) elements (CTA r of the cluster: columns
    r * part .. (r + 1) * part, the last CTA what is left), its accesses as wide as the row's
    alignment allows (16 bytes where N is a multiple of 8, 2 where N is odd). ValueError
    unless the parts fit in registers and fill a CTA (one row of several warps)."""
    if not _is_cluster(cluster) or cluster == 1:
        raise ValueError(f"cluster={cluster!r} must be one of {CLUSTERS} (CTAs a row is split "
                         f"over)")
    part = part_width(N, cluster)
    plan = row_plan(part, dtype, per_thread, op, max_vector=N & -N)
    if not plan.in_registers or plan.rows != 1 or plan.warps < 2:
        raise ValueError(f"cluster={cluster}: parts of N={N} / {cluster} elements must take "
                         f"a CTA of several warps and fit its registers (up to "
                         f"{REGISTER_ROW_MAX}); use fewer or more CTAs per row")
    # every CTA has a part: a part of several warps' accesses is over 256 elements, and so
    # (cluster - 1) parts, each at most 7 past N / cluster, stay short of N
    return plan


def part_width(N: int, cluster: int) -> int:
    """The columns of a row each CTA of a cluster takes (the last: what is left): N / cluster
    rounded up to whole accesses of the row's own alignment (16 bytes where N is a multiple of
    8: every part then starts as the row does). The CTA's register tile (its plan's width)
    may be wider; the columns past its part are masked."""
    step = min(VECTOR, N & -N)
    return -(-(-(-N // cluster)) // step) * step


def check_cluster_grid(op: str, rows: int, cluster: int) -> None:
    """ValueError unless `rows` rows over clusters of `cluster` CTAs fit a grid's CTAs."""
    if rows * cluster > MAX_ROWS:
        raise ValueError(f"{op}: M={rows} rows over clusters of {cluster} CTAs exceed the "
                         f"{MAX_ROWS} CTAs of a grid; use fewer CTAs per row")


def _cluster_rows(op: str, M, N: int, dtype: str, plan: RowPlan, C: int, eps: float = 0.0,
                  fast: bool = False):
    """A kernel whose rows are each split over a cluster of C CTAs (cluster_plan): CTA r of
    row m's cluster holds columns r * part .. (r + 1) * part in registers (part_width; the last
    CTA what is left), reduces them as a row of its own,
    and writes its statistics to the fp32 workspace P[m] (C maxima and C sums for softmax,
    C sums of squares for RMSNorm, C sums and then C sums of squared deviations from the
    mean for LayerNorm). barrier.cluster (arrive.release, wait.acquire) makes them visible to
    the cluster's other CTAs, each of which combines the C values itself, then normalises and
    stores its part. Meant to keep more of a long row's bytes in flight on more SMs than one
    CTA per row does; measured slower on the H200 (the module docstring)."""
    if isinstance(M, int):
        check_cluster_grid(op, M, C)
    width, part = plan.width, part_width(N, C)
    layout, v_layout = plan.layout(), plan.vector_layout()
    is_softmax, is_layer = op == "softmax", op == "layer_norm"
    fill = float("-inf") if is_softmax else 0.0
    slots = workspace_slots(op, C)

    def cluster_rows(X: T.Buffer((M, N), dtype),
                     W: T.Buffer((N,), dtype) if not is_softmax else None,
                     B: T.Buffer((N,), dtype) if is_layer else None,
                     Y: T.Buffer((M, N), dtype),
                     P: T.Buffer((M, slots), "float32")):
        cta = T.cta_id([M * C])
        T.cluster_shape([C, 1, 1], non_portable=C > 8)
        warp = T.warp_id([plan.warps])
        lane = T.lane_id([32])
        pool = T.SMEMPool()
        red = pool.alloc((plan.warps,), "float32")
        pool.commit()
        row = cta // C
        rank = T.cuda.cluster_ctarank()
        c0 = rank * part
        valid = T.min(part, N - c0)             # this part's columns, from c0
        x = T.alloc_local((1, width), dtype, layout=layout)
        xf = T.alloc_local((1, width), "float32", layout=layout)
        stat = T.alloc_local((1, 1), "float32", layout=STAT)
        other = T.alloc_local((1, 1), "float32", layout=STAT)
        parts = T.alloc_local((1, C), "float32")         # the cluster's C values, every thread
        w = T.alloc_local((width,), dtype, layout=v_layout)
        wf = T.alloc_local((width,), "float32", layout=v_layout)

        def publish(values):
            """P[row, slot0 + rank] = value for each (value, slot0) of `values` (one thread),
            then every CTA of the cluster waits for every other's: the values are visible
            (release / acquire at cluster scope)."""
            for value, slot0 in values:
                if warp == 0:
                    if lane == 0:
                        P[row, slot0 + rank] = value[0, 0]
            T.cuda.cluster_sync()

        def gather(slot0):
            Tx.cta.copy(parts, P[row:row + 1, slot0:slot0 + C])

        def row_sum(slot0):
            """stat = the row's sum of what the C CTAs published at slot0."""
            publish([(stat, slot0)])
            gather(slot0)
            Tx.cta.sum(stat, parts, axis=1)

        Tx.cta.copy(x, X[row:row + 1, c0:c0 + width], bounds=(1, valid), fill=fill)
        Tx.cta.cast(xf, x)
        if is_softmax:
            Tx.cta.max(other, xf, axis=1, scratch=red)       # this part's max, finite even
            Tx.cta.maximum(other, other, LOWEST)             # where the part is all -inf
            Tx.cta.sub(xf, xf, other)
            Tx.cta.exp(xf, xf, fast=fast)
            Tx.cta.sum(stat, xf, axis=1, scratch=red)        # its sum, relative to its max
            publish([(other, 0), (stat, C)])
            gather(0)
            Tx.cta.max(stat, parts, axis=1)                  # the row's max
            Tx.cta.sub(parts, parts, stat)
            Tx.cta.exp(parts, parts, fast=fast)              # each part's sum rescaled by
            Tx.cta.sub(other, other, stat)                   # exp(its max - the row's)
            Tx.cta.exp(other, other, fast=fast)
            sums = T.alloc_local((1, C), "float32")
            Tx.cta.copy(sums, P[row:row + 1, C:2 * C])
            Tx.cta.mul(parts, parts, sums)
            Tx.cta.sum(stat, parts, axis=1)
            Tx.cta.div(other, other, stat)                   # this part's factor
            Tx.cta.mul(xf, xf, other)
        else:
            if is_layer:
                Tx.cta.sum(stat, xf, axis=1, scratch=red)
                row_sum(0)
                Tx.cta.mul(stat, stat, 1.0 / N)              # the row's mean
                Tx.cta.sub(xf, xf, stat)
                cols = T.alloc_local((1, width), "int32", layout=layout)
                inside = T.alloc_local((1, width), "bool", layout=layout)
                Tx.cta.iota(cols, 1)
                Tx.cta.compare(inside, cols, "<", valid)      # no deviation past N
                Tx.cta.select(xf, inside, xf, 0.0)
            sq = T.alloc_local((1, width), "float32", layout=layout)
            Tx.cta.mul(sq, xf, xf)
            Tx.cta.sum(stat, sq, axis=1, scratch=red)
            row_sum(C if is_layer else 0)                    # the deviations, or the squares
            Tx.cta.mul(stat, stat, 1.0 / N)
            Tx.cta.add(stat, stat, float(eps))
            Tx.cta.rsqrt(stat, stat)
            Tx.cta.mul(xf, xf, stat)
            Tx.cta.copy(w, W[c0:c0 + width], bounds=(valid,))
            Tx.cta.cast(wf, w)
            Tx.cta.mul(xf, xf, wf)
            if is_layer:
                Tx.cta.copy(w, B[c0:c0 + width], bounds=(valid,))
                Tx.cta.cast(wf, w)
                Tx.cta.add(xf, xf, wf)
        Tx.cta.cast(x, xf)
        Tx.cta.copy(Y[row:row + 1, c0:c0 + width], x, bounds=(1, valid))

    cluster_rows.__name__ = cluster_rows.__qualname__ = op
    return T.prim_func(cluster_rows)


def workspace_slots(op: str, cluster: int) -> int:
    """fp32 values per row of a cluster kernel's workspace P (0: no workspace)."""
    if cluster == 1:
        return 0
    return cluster if op == "rms_norm" else 2 * cluster


# ------------------------------------------------------------------------------ front doors
_KERNELS: dict = {}
_KERNELS_LOCK = threading.Lock()
_CONSTANTS: dict = {}                   # (value, N, dtype, device) -> a tensor of N values
_TORCH_NAMES = {"torch.float16": "float16", "torch.bfloat16": "bfloat16",
                "torch.float32": "float32"}
_FACTORIES = {"softmax": softmax, "rms_norm": rms_norm, "layer_norm": layer_norm}


def row_kernel(op: str, N: int, dtype: str = "float16", eps: float | None = None,
               fast: bool = False, target: str | None = None, cluster: int = 1):
    """`op`'s kernel ("softmax", "rms_norm" or "layer_norm") for rows of N elements and a
    run-time M, compiled once per (op, N, dtype, eps, fast, target, cluster) and kept: a new
    number of rows compiles nothing. eps: the norms' (None: their factory's default); fast:
    softmax's; cluster: CTAs per row (cluster_plan; its kernel takes the fp32 workspace P of
    workspace_slots(op, cluster) values per row after Y)."""
    if op not in _FACTORIES:
        raise ValueError(f"op must be one of {', '.join(OPS)}, got {op!r}")
    options = {"fast": softmax_fast_exp(dtype, fast)} if op == "softmax" else \
        ({} if eps is None else {"eps": float(eps)})
    if cluster != 1:
        options["cluster"] = cluster
    key = (op, N, dtype, tuple(sorted(options.items())), target)
    with _KERNELS_LOCK:
        compiled = _KERNELS.get(key)
    if compiled is None:
        import tilemlir
        compiled = tilemlir.compile(_FACTORIES[op](T.dynamic("M"), N, dtype, **options),
                                    target=target)
        with _KERNELS_LOCK:
            compiled = _KERNELS.setdefault(key, compiled)
    return compiled


def _argument_error(message: str):
    from tilemlir.runtime.args import ArgumentError
    return ArgumentError(message)


def _rows_of(fn: str, x, out):
    """(dtype name, N, rows) of `x`, an f16 / bf16 torch CUDA tensor [..., N] (any strides:
    _run gives the kernel dense copies); `out`, if given, must be alike."""
    if not getattr(x, "is_cuda", False) or not hasattr(x, "dim"):
        raise _argument_error(f"{fn}: x must be a torch CUDA tensor, got {type(x).__name__}"
                              + (f" on {x.device}" if hasattr(x, "device") else ""))
    dtype = _TORCH_NAMES.get(str(x.dtype))
    if dtype is None:
        raise _argument_error(f"{fn}: x has dtype {x.dtype}; float16, bfloat16 or float32 "
                              f"needed")
    if x.dim() < 1:
        raise _argument_error(f"{fn}: x must have at least one dim (rows of its last), got a "
                              f"scalar")
    if out is not None:
        _like(fn, "out", out, x, tuple(x.shape))
    N = x.shape[-1]
    return dtype, N, (x.numel() // N if N else 0)


def _like(fn: str, name: str, t, x, shape: tuple) -> None:
    """`t` is a torch CUDA tensor of `shape` with x's dtype and device."""
    if not getattr(t, "is_cuda", False) or not hasattr(t, "dim"):
        raise _argument_error(f"{fn}: {name} must be a torch CUDA tensor, got "
                              f"{type(t).__name__}")
    if tuple(t.shape) != shape or t.dtype != x.dtype or t.device != x.device:
        raise _argument_error(f"{fn}: {name} is {list(t.shape)} {t.dtype} on {t.device}; "
                              f"{list(shape)} {x.dtype} on {x.device} needed")


def _vector(fn: str, name: str, t, x, N: int, default: float):
    """The norms' weight or bias: `t` checked, or N copies of `default` (made once per N,
    dtype and device)."""
    if t is not None:
        _like(fn, name, t, x, (N,))
        return t
    key = (default, N, x.dtype, x.device)
    with _KERNELS_LOCK:
        found = _CONSTANTS.get(key)
    if found is None:
        import torch
        found = torch.full((N,), default, dtype=x.dtype, device=x.device)
        with _KERNELS_LOCK:
            found = _CONSTANTS.setdefault(key, found)
    return found


def _cluster(cluster) -> int:
    """A front door's `cluster`, checked (before anything is allocated)."""
    if not _is_cluster(cluster):
        raise _argument_error(f"cluster must be one of {CLUSTERS} (CTAs per row), got "
                              f"{cluster!r}")
    return cluster


def _eps(fn: str, eps) -> float:
    try:
        _check_eps(fn, eps)
    except ValueError as err:
        raise _argument_error(str(err)) from None
    return float(eps)


def _run(op: str, N: int, dtype: str, rows: int, x, vectors, out, cluster=1, **options):
    """The kernel on x and out (a new tensor if None) seen as [rows, N], with the weight and
    bias `vectors` (and, with rows split over a cluster, a workspace)."""
    try:
        if cluster != 1:
            check_cluster_grid(op, rows, cluster)
        if rows:
            kernel = row_kernel(op, N, dtype, cluster=cluster, **options)
        elif cluster != 1:              # no kernel to build: refuse what it would refuse
            cluster_plan(N, dtype, cluster, op=op)
    except ValueError as err:
        raise _argument_error(str(err)) from None
    import torch
    if out is None:
        out = torch.empty_like(x)
    if rows == 0:
        return out
    from tilemlir.runtime.args import kernel_input, kernel_output
    target = kernel_output(out)              # any strides and alignment: through dense copies
    workspace = [torch.empty((rows, workspace_slots(op, cluster)), dtype=torch.float32,
                             device=x.device)] if cluster != 1 else []
    kernel(kernel_input(x).view(rows, N), *map(kernel_input, vectors), target.view(rows, N),
           *workspace)
    if target is not out:
        out.copy_(target)
    return out


def softmax_rows(x, out=None, fast: bool = False, cluster: int = 1):
    """torch.softmax(x, dim=-1) for a torch CUDA tensor x of shape [..., N] (float16,
    bfloat16 or float32, any strides), in f32 math; returns `out` (a new tensor unless given),
    written on the current stream. Compiles once per (N, dtype); exp is ex2.approx.ftz for
    16-bit x, and for float32 x with fast=True (softmax_fast_exp).
    cluster: CTAs each row is split over (1, 2, 4, 8 or 16; parts of at most
    REGISTER_ROW_MAX elements; slower than the default, one CTA per row, wherever timed: see
    the module docstring)."""
    dtype, N, rows = _rows_of("softmax_rows", x, out)
    return _run("softmax", N, dtype, rows, x, (), out, _cluster(cluster), fast=fast)


def rms_norm_rows(x, weight=None, eps: float | None = None, out=None, cluster: int = 1):
    """torch.nn.functional.rms_norm(x, (N,), weight, eps) for a torch CUDA tensor x of shape
    [..., N] (float16, bfloat16 or float32, any strides; weight [N] of x's dtype, None: ones),
    in f32 math. eps None: torch.finfo(x.dtype).eps, as torch. Returns `out` (a new tensor unless
    given), written on the current stream. Compiles once per (N, dtype, eps).
    cluster: CTAs each row is split over (1, 2, 4, 8 or 16; parts of at most
    REGISTER_ROW_MAX elements; slower than the default, one CTA per row, wherever timed: see
    the module docstring)."""
    dtype, N, rows = _rows_of("rms_norm_rows", x, out)
    cluster = _cluster(cluster)
    if eps is None:
        import torch
        eps = torch.finfo(x.dtype).eps
    eps = _eps("rms_norm_rows", eps)
    w = _vector("rms_norm_rows", "weight", weight, x, N, 1.0)
    return _run("rms_norm", N, dtype, rows, x, (w,), out, cluster, eps=eps)


def layer_norm_rows(x, weight=None, bias=None, eps: float = 1e-5, out=None,
                    cluster: int = 1):
    """torch.nn.functional.layer_norm(x, (N,), weight, bias, eps) for a torch CUDA tensor x of
    shape [..., N] (float16, bfloat16 or float32, any strides; weight and bias [N] of x's
    dtype, None: ones and zeros), in f32 math. Returns `out` (a new tensor unless given),
    written on the current stream. Compiles once per (N, dtype, eps).
    cluster: CTAs each row is split over (1, 2, 4, 8 or 16; parts of at most
    REGISTER_ROW_MAX elements; slower than the default, one CTA per row, wherever timed: see
    the module docstring)."""
    dtype, N, rows = _rows_of("layer_norm_rows", x, out)
    cluster = _cluster(cluster)
    eps = _eps("layer_norm_rows", eps)
    w = _vector("layer_norm_rows", "weight", weight, x, N, 1.0)
    b = _vector("layer_norm_rows", "bias", bias, x, N, 0.0)
    return _run("layer_norm", N, dtype, rows, x, (w, b), out, cluster, eps=eps)
