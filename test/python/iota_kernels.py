"""Small kernels exercising tile.iota on the register layouts used in practice, shared by the
CPU tests (compiled, assembled, interpreted) and the GPU tests (run against torch.arange).

Each writes its iota tiles out to global memory, so that every element's value shows which
coordinate its holder computed; offsets come from the CTA and thread ids (device values) so
that every warpgroup, warp, CTA or thread writes different numbers."""

import tilemlir.lang as T
from tilemlir.kernels.norms import row_plan

Tx = T.tile

WG_ROWS, WG_COLS = 64, 64             # a warpgroup's wgmma accumulator (m64n64)
WG_GRID, WG_PER_CTA = 2, 2            # CTAs, warpgroups per CTA: 256 rows in all
MMA_ROWS, MMA_COLS, WARPS = 32, 16, 4  # a warp's mma.sync accumulator tile (2 x 2 m16n8 atoms)
ROW_M, ROW_N = 4, 2048                # norms' CTA-wide row layout, one row per CTA
THREAD_ROWS, THREAD_COLS = 4, 8       # a thread's private tile (no thread axis)
COLUMN_OFFSET = 5                     # a static offset along the columns


def wgmma_iota_kernel(axis: int, dtype: str = "float32"):
    """Each warpgroup of each CTA: its m64n64 accumulator's coordinates along `axis`, rows
    offset by its first row in Out (a device value), columns by COLUMN_OFFSET."""
    layout = T.wgmma_accumulator_layout(WG_ROWS, WG_COLS)
    rows = WG_GRID * WG_PER_CTA * WG_ROWS

    @T.prim_func
    def wgmma_iota(Out: T.Buffer((rows, WG_COLS), dtype)):
        bx = T.cta_id([WG_GRID])
        wg = T.warpgroup_id([WG_PER_CTA])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        row0 = bx * (WG_PER_CTA * WG_ROWS) + wg * WG_ROWS
        x = T.alloc_local((WG_ROWS, WG_COLS), dtype, layout=layout)
        if axis == 0:
            Tx.wg.iota(x, 0, offset=row0)
        else:
            Tx.wg.iota(x, 1, offset=COLUMN_OFFSET)
        Tx.wg.copy(Out[row0:row0 + WG_ROWS, :], x)

    return wgmma_iota


def mma_sync_iota_kernel(axis: int, dtype: str = "float32"):
    """Each warp: its mma.sync accumulator tile's coordinates along `axis`, rows offset by
    the warp's first row in Out."""
    _, _, layout = T.MmaSync(16).fragments(MMA_ROWS, MMA_COLS, 16)

    @T.prim_func
    def mma_sync_iota(Out: T.Buffer((WARPS * MMA_ROWS, MMA_COLS), dtype)):
        T.cta_id([1])
        warp = T.warp_id([WARPS])
        T.lane_id([32])
        row0 = warp * MMA_ROWS
        x = T.alloc_local((MMA_ROWS, MMA_COLS), dtype, layout=layout)
        if axis == 0:
            Tx.warp.iota(x, 0, offset=row0)
        else:
            Tx.warp.iota(x, axis)
        Tx.warp.copy(Out[row0:row0 + MMA_ROWS, :], x)

    return mma_sync_iota


def row_iota_kernel(dtype: str = "float32"):
    """One CTA per row, norms.py's row layout (lanes then warps along the row): each element's
    flat index in Out, as row * N + column."""
    plan = row_plan(ROW_N, op="rms_norm")
    warps, layout = plan.warps, plan.layout()

    @T.prim_func
    def row_iota(Out: T.Buffer((ROW_M, ROW_N), dtype)):
        row = T.cta_id([ROW_M])
        T.warp_id([warps])
        T.lane_id([32])
        x = T.alloc_local((1, ROW_N), dtype, layout=layout)
        Tx.cta.iota(x, 1, offset=row * ROW_N)
        Tx.cta.copy(Out[row:row + 1, :], x)

    return row_iota


def thread_iota_kernel(axis: int, dtype: str = "float32"):
    """Each of 32 threads: a private 4 x 8 tile (its layout names no thread), rows offset by
    the thread's first row in Out."""
    layout = T.TileLayout(T.S[(THREAD_ROWS, THREAD_COLS):(THREAD_COLS, 1)])

    @T.prim_func
    def thread_iota(Out: T.Buffer((32 * THREAD_ROWS, THREAD_COLS), dtype)):
        T.cta_id([1])
        tid = T.thread_id([32])
        row0 = tid * THREAD_ROWS
        x = T.alloc_local((THREAD_ROWS, THREAD_COLS), dtype, layout=layout)
        Tx.iota(x, axis, offset=row0 if axis == 0 else 0)
        Tx.copy(Out[row0:row0 + THREAD_ROWS, :], x)

    return thread_iota


def column_vector_kernel():
    """A replicated column-index vector (the accumulator's row_vector layout: each column's
    holders over all rows keep a copy), broadcast into a zeroed accumulator: Out[i, j] = j +
    COLUMN_OFFSET, written by every holder of the copies."""
    layout = T.wgmma_accumulator_layout(WG_ROWS, WG_COLS)
    vector = layout.row_vector((WG_ROWS, WG_COLS))

    @T.prim_func
    def column_vector(Out: T.Buffer((WG_ROWS, WG_COLS), "float32")):
        T.cta_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        cols = T.alloc_local((WG_COLS,), "float32", layout=vector)
        acc = T.alloc_local((WG_ROWS, WG_COLS), "float32", layout=layout)
        Tx.wg.iota(cols, 0, offset=COLUMN_OFFSET)
        Tx.wg.fill(acc, 0.0)
        Tx.wg.add(acc, acc, cols)
        Tx.wg.copy(Out, acc)

    return column_vector


def causal_mask_kernel(M: int, N: int, dtype: str = "float32"):
    """FlashAttention's causal mask on a score tile: each warpgroup's m64n64 accumulator S of
    X (rows r0.., columns c0..) gets -inf where column > row; the coordinates are `dtype`
    (float32 or int32) iota tiles, compared, then selected."""
    layout = T.wgmma_accumulator_layout(WG_ROWS, WG_COLS)
    per_cta = WG_PER_CTA * WG_ROWS

    @T.prim_func
    def causal_mask(X: T.Buffer((M, N), "float32"), Y: T.Buffer((M, N), "float32")):
        bx, by = T.cta_id([M // per_cta, N // WG_COLS])
        wg = T.warpgroup_id([WG_PER_CTA])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        r0 = bx * per_cta + wg * WG_ROWS
        c0 = by * WG_COLS
        s = T.alloc_local((WG_ROWS, WG_COLS), "float32", layout=layout)
        rows = T.alloc_local((WG_ROWS, WG_COLS), dtype, layout=layout)
        cols = T.alloc_local((WG_ROWS, WG_COLS), dtype, layout=layout)
        mask = T.alloc_local((WG_ROWS, WG_COLS), "bool", layout=layout)
        Tx.wg.copy(s, X[r0:r0 + WG_ROWS, c0:c0 + WG_COLS])
        Tx.wg.iota(cols, axis=1, offset=c0)
        Tx.wg.iota(rows, axis=0, offset=r0)
        Tx.wg.compare(mask, cols, ">", rows)
        Tx.wg.select(s, mask, float("-inf"), s)
        Tx.wg.copy(Y[r0:r0 + WG_ROWS, c0:c0 + WG_COLS], s)

    return causal_mask


def causal_mask_vectors_kernel(M: int, N: int):
    """The causal mask from two broadcast vectors instead of two whole tiles: the column index
    in the accumulator's row_vector layout ((64,): 16 registers a thread), the row index in its
    column_vector layout ((64, 1): 2 registers), compared into the full mask."""
    layout = T.wgmma_accumulator_layout(WG_ROWS, WG_COLS)
    per_cta = WG_PER_CTA * WG_ROWS

    @T.prim_func
    def causal_mask_vectors(X: T.Buffer((M, N), "float32"), Y: T.Buffer((M, N), "float32")):
        bx, by = T.cta_id([M // per_cta, N // WG_COLS])
        wg = T.warpgroup_id([WG_PER_CTA])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        r0 = bx * per_cta + wg * WG_ROWS
        c0 = by * WG_COLS
        s = T.alloc_local((WG_ROWS, WG_COLS), "float32", layout=layout)
        cols = T.alloc_local((WG_COLS,), "float32",
                             layout=layout.row_vector((WG_ROWS, WG_COLS)))
        rows = T.alloc_local((WG_ROWS, 1), "float32",
                             layout=layout.column_vector((WG_ROWS, WG_COLS)))
        mask = T.alloc_local((WG_ROWS, WG_COLS), "bool", layout=layout)
        Tx.wg.copy(s, X[r0:r0 + WG_ROWS, c0:c0 + WG_COLS])
        Tx.wg.iota(cols, axis=0, offset=c0)
        Tx.wg.iota(rows, axis=0, offset=r0)
        Tx.wg.compare(mask, cols, ">", rows)
        Tx.wg.select(s, mask, float("-inf"), s)
        Tx.wg.copy(Y[r0:r0 + WG_ROWS, c0:c0 + WG_COLS], s)

    return causal_mask_vectors


def signed_offset_kernel(dtype: str = "float32"):
    """A warp's lane-spread 4 x 32 tile (lane l holds column l), rows offset by each lane's own
    100 l - 7: negative for lane 0, so the integer offset must convert as signed."""
    layout = T.TileLayout(T.S[(4, 32):(1, 1 @ T.laneid)])

    @T.prim_func
    def signed_offset(Out: T.Buffer((4, 32), dtype)):
        T.cta_id([1])
        lane = T.lane_id([32])
        x = T.alloc_local((4, 32), dtype, layout=layout)
        Tx.warp.iota(x, 0, offset=lane * 100 - 7)
        Tx.warp.copy(Out, x)

    return signed_offset


WINDOW_COLS = (16, 32)                # the columns of the accumulator window_kernel fills


def window_kernel():
    """A window of a warpgroup's accumulator (columns 16..31 of 64): its coordinates are the
    window's own (column - 16), plus 100; the rest of the tile keeps the -1 filled first."""
    layout = T.wgmma_accumulator_layout(WG_ROWS, WG_COLS)
    lo, hi = WINDOW_COLS

    @T.prim_func
    def window(Out: T.Buffer((WG_ROWS, WG_COLS), "float32")):
        T.cta_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        acc = T.alloc_local((WG_ROWS, WG_COLS), "float32", layout=layout)
        Tx.wg.fill(acc, -1.0)
        Tx.wg.iota(acc[:, lo:hi], 1, offset=100)
        Tx.wg.copy(Out, acc)

    return window
