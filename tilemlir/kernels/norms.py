"""Row-wise softmax and RMSNorm over the last axis, in the kernel language.

One CTA per row: the row is loaded once into registers with 16-byte loads (8 fp16 / bf16 per
lane, lanes then warps along the row, so each load instruction of a warp reads 512
consecutive bytes), widened to f32, reduced across the CTA (shuffles in each warp, then the
warps' partials through a few words of shared memory), normalised, narrowed and stored with
16-byte stores. Rows are independent CTAs, so any row count M works; the row length N must be
a multiple of 256 (8 elements x 32 lanes).

    softmax(M, N):   Y = exp(X - max(X)) / sum(exp(X - max(X)))           (rows of X)
    rms_norm(M, N):  Y = X * rsqrt(mean(X^2) + eps) * weight
"""

import math

import tilemlir.lang as T

Tx = T.tile

VECTOR = 8                  # elements per 16-byte access (fp16 / bf16)
PER_THREAD = 32             # elements each thread keeps (4 accesses): enough bytes in flight
SOFTMAX_MAX_WARPS = 8       # softmax's rows take at most this many warps by default (see below)


def row_tiling(N: int, per_thread: int = PER_THREAD) -> tuple[int, int]:
    """(warps per CTA, 16-byte chunks per thread) for rows of N elements, about `per_thread`
    elements a thread."""
    if N % (VECTOR * 32):
        raise ValueError(f"N={N}: rows must be a multiple of {VECTOR * 32} elements "
                         f"({VECTOR} per 16-byte load x 32 lanes)")
    if per_thread not in (8, 16, 32, 64, 128):
        raise ValueError(f"per_thread={per_thread!r} must be 8, 16, 32, 64 or 128")
    warps = max(1, min(32, N // (per_thread * 32)))
    while N % (VECTOR * 32 * warps):
        warps -= 1
    return warps, N // (VECTOR * 32 * warps)


def row_layout(N: int, warps: int, chunks: int, rows: bool = True) -> T.TileLayout:
    """Chunk j of thread (warp w, lane l) holds elements 8 (j * 32 warps + w * 32 + l) .. + 7:
    a warp's lanes cover 256 consecutive elements per access."""
    inner = (chunks, warps, 32, VECTOR)
    strides = (VECTOR, 1 @ T.warpid, 1 @ T.laneid, 1)
    if rows:
        return T.TileLayout(T.S[(1,) + inner:(1,) + strides])
    return T.TileLayout(T.S[inner:strides])


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


MAX_ROWS = 2 ** 31 - 1     # one CTA per row: the grid's x extent


def _check(kernel: str, M, N, dtype: str) -> None:
    """ValueError naming the argument unless M and N are positive integers (M rows: one CTA
    each) and dtype a 16-bit float."""
    for name, value, limit in (("M", M, MAX_ROWS), ("N", N, None)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{kernel}: {name} must be a positive integer, got {value!r}")
        if limit is not None and value > limit:
            raise ValueError(f"{kernel}: {name}={value} rows exceed {limit}, the CTAs a grid "
                             f"can have (one per row)")
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"{kernel}: dtype must be 'float16' or 'bfloat16', got {dtype!r}")



def softmax(M: int, N: int, dtype: str = "float16", fast: bool = False,
            per_thread: int | None = None):
    """Softmax over the last axis of an M x N tensor; fast=True uses ex2.approx.ftz for exp.
    per_thread: elements each thread keeps (None: softmax_per_thread(N))."""
    _check("softmax", M, N, dtype)
    if not isinstance(fast, bool):
        raise ValueError(f"softmax: fast must be True or False, got {fast!r}")
    warps, chunks = row_tiling(N, softmax_per_thread(N) if per_thread is None else per_thread)
    layout = row_layout(N, warps, chunks)

    @T.prim_func
    def softmax(X: T.Buffer((M, N), dtype), Y: T.Buffer((M, N), dtype)):
        row = T.cta_id([M])
        T.warp_id([warps])
        T.lane_id([32])
        pool = T.SMEMPool()
        scratch = pool.alloc((warps,), "float32")
        pool.commit()
        x = T.alloc_local((1, N), dtype, layout=layout)
        xf = T.alloc_local((1, N), "float32", layout=layout)
        peak = T.alloc_local((1, 1), "float32", layout=STAT)
        total = T.alloc_local((1, 1), "float32", layout=STAT)
        Tx.cta.copy(x, X[row:row + 1, :])
        Tx.cta.cast(xf, x)
        Tx.cta.max(peak, xf, axis=1, scratch=scratch)
        Tx.cta.sub(xf, xf, peak)
        Tx.cta.exp(xf, xf, fast=fast)
        Tx.cta.sum(total, xf, axis=1, scratch=scratch)
        Tx.cta.div(total, 1.0, total)
        Tx.cta.mul(xf, xf, total)
        Tx.cta.cast(x, xf)
        Tx.cta.copy(Y[row:row + 1, :], x)

    return softmax


def rms_norm(M: int, N: int, dtype: str = "float16", eps: float = 1e-6,
             per_thread: int = PER_THREAD):
    """torch.nn.functional.rms_norm(X, (N,), weight, eps) over the last axis, f32 math."""
    _check("rms_norm", M, N, dtype)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) \
            or eps < 0:
        raise ValueError(f"rms_norm: eps must be a finite number >= 0 (it is compiled into "
                         f"the kernel), got {eps!r}")
    warps, chunks = row_tiling(N, per_thread)
    layout = row_layout(N, warps, chunks)
    w_layout = row_layout(N, warps, chunks, rows=False)

    @T.prim_func
    def rms_norm(X: T.Buffer((M, N), dtype), W: T.Buffer((N,), dtype),
                 Y: T.Buffer((M, N), dtype)):
        row = T.cta_id([M])
        T.warp_id([warps])
        T.lane_id([32])
        pool = T.SMEMPool()
        scratch = pool.alloc((warps,), "float32")
        pool.commit()
        x = T.alloc_local((1, N), dtype, layout=layout)
        xf = T.alloc_local((1, N), "float32", layout=layout)
        sq = T.alloc_local((1, N), "float32", layout=layout)
        w = T.alloc_local((N,), dtype, layout=w_layout)
        wf = T.alloc_local((N,), "float32", layout=w_layout)
        scale = T.alloc_local((1, 1), "float32", layout=STAT)
        Tx.cta.copy(x, X[row:row + 1, :])
        Tx.cta.copy(w, W)
        Tx.cta.cast(xf, x)
        Tx.cta.mul(sq, xf, xf)
        Tx.cta.sum(scale, sq, axis=1, scratch=scratch)
        Tx.cta.mul(scale, scale, 1.0 / N)
        Tx.cta.add(scale, scale, float(eps))
        Tx.cta.rsqrt(scale, scale)
        Tx.cta.mul(xf, xf, scale)
        Tx.cta.cast(wf, w)
        Tx.cta.mul(xf, xf, wf)
        Tx.cta.cast(x, xf)
        Tx.cta.copy(Y[row:row + 1, :], x)

    return rms_norm
