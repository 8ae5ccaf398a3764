"""Small kernels exercising the elementwise and reduction primitives, shared by the CPU
tests (compiled and assembled) and the GPU tests (run against torch)."""

import tilemlir.lang as T

Tx = T.tile

R, C = 4, 256
# a warp holds a [4, 256] tile: lane l keeps columns 8l..8l+7 of every row (16-byte runs)
WARP_TILE = T.TileLayout(T.S[(R, 32, 8):(8, 1 @ T.laneid, 1)])
ROW_STAT = T.TileLayout(T.S[(R, 1):(1, 1)])             # one value per row, in every lane
COLUMNS = T.TileLayout(T.S[(32, 8):(1 @ T.laneid, 1)])  # a [256] vector, as WARP_TILE's columns
UNARY = ("abs", "exp", "exp2", "gelu_erf", "gelu_tanh", "log", "neg", "rsqrt", "sigmoid", "silu",
         "sqrt", "tanh")
BINARY = ("add", "div", "maximum", "minimum", "mul", "sub")


def unary_kernel(fn, dtype, fast):
    @T.prim_func
    def unary(X: T.Buffer((R, C), dtype), Y: T.Buffer((R, C), dtype)):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((R, C), dtype, layout=WARP_TILE)
        Tx.warp.copy(x, X)
        if fn in ("neg", "abs"):
            getattr(Tx.warp, fn)(x, x)
        elif fn.startswith("gelu"):
            Tx.warp.gelu(x, x, approximate="tanh" if fn == "gelu_tanh" else "none", fast=fast)
        else:
            getattr(Tx.warp, fn)(x, x, fast=fast)
        Tx.warp.copy(Y, x)
    return unary


RHS = {"tile": ((R, C), WARP_TILE), "rows": ((R, 1), ROW_STAT), "columns": ((C,), COLUMNS),
       "scalar": ((1,), None)}


def binary_kernel(fn, dtype, rhs_kind):
    shape, layout = RHS[rhs_kind]

    @T.prim_func
    def binary(X: T.Buffer((R, C), dtype), B: T.Buffer(shape, dtype),
               Y: T.Buffer((R, C), dtype)):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((R, C), dtype, layout=WARP_TILE)
        Tx.warp.copy(x, X)
        if rhs_kind == "scalar":
            getattr(Tx.warp, fn)(x, x, 1.5)
        else:
            b = T.alloc_local(shape, dtype, layout=layout)
            Tx.warp.copy(b, B)
            getattr(Tx.warp, fn)(x, x, b)
        Tx.warp.copy(Y, x)
    return binary


def relu_kernel():
    @T.prim_func
    def relu(X: T.Buffer((R, C), "float32"), Y: T.Buffer((R, C), "float32")):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((R, C), "float32", layout=WARP_TILE)
        positive = T.alloc_local((R, C), "bool", layout=WARP_TILE)
        Tx.warp.copy(x, X)
        Tx.warp.compare(positive, x, ">", 0.0)
        Tx.warp.select(x, positive, x, 0.0)
        Tx.warp.copy(Y, x)
    return relu


# name: (src shape, src layout, dst shape, dst layout, warps, axis, scratch elements, scope,
#        the variant the layouts should pick)
REDUCE_CASES = {
    # every lane holds whole columns: axis 0 folds in each thread
    "thread": ((R, C), WARP_TILE, (1, C), T.TileLayout(T.S[(1, 32, 8):(1, 1 @ T.laneid, 1)]),
               1, 0, 0, "warp", "thread"),
    # rows over all 32 lanes: 5 butterfly steps
    "warp_32_lanes": ((R, C), WARP_TILE, (R, 1), ROW_STAT, 1, 1, 0, "warp", "warp_shuffle"),
    # two rows of 1024 over 4 warps: shuffles, then 4 partials per row through shared memory
    "cross_warp": ((2, 1024), T.TileLayout(T.S[(2, 4, 32, 8):(8, 1 @ T.warpid, 1 @ T.laneid, 1)]),
                   (2, 1), T.TileLayout(T.S[(2, 1):(1, 1)]), 4, 1, 8, "cta", "cross_warp"),
}


def reduce_kernel(fn, case, src_dtype="float32"):
    shape, src_layout, dst_shape, dst_layout, warps, axis, scratch, scope, _ = REDUCE_CASES[case]
    lanes_named = any(it.axis == "laneid" for it in dst_layout.shard)

    @T.prim_func
    def reduce(X: T.Buffer(shape, src_dtype), Y: T.Buffer(dst_shape, "float32")):
        T.cta_id([1])
        warp = T.warp_id([warps])
        lane = T.lane_id([32])
        pool = T.SMEMPool()
        buf = pool.alloc((max(scratch, 1),), "float32")
        pool.commit()
        x = T.alloc_local(shape, src_dtype, layout=src_layout)
        y = T.alloc_local(dst_shape, "float32", layout=dst_layout)
        s = getattr(Tx, scope)
        s.copy(x, X)
        getattr(s, fn)(y, x, axis=axis, scratch=buf if scratch else None)
        if lanes_named:
            Tx.warp.copy(Y, y)
        elif warp == 0:
            if lane == 0:
                Tx.thread.copy(Y, y)            # every thread holds the result: one writes it
    return reduce


def accumulator_softmax_kernel(N=64):
    """Softmax along the rows of a 64 x N f32 tile in a warpgroup's wgmma accumulator layout,
    with the row statistics in its column_vector layout (replicated over each row's 4 lanes):
    FlashAttention's online-softmax step."""
    layout = T.wgmma_accumulator_layout(64, N)
    stat = layout.column_vector((64, N))

    @T.prim_func
    def accumulator_softmax(X: T.Buffer((64, N), "float32"), Y: T.Buffer((64, N), "float32")):
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        x = T.alloc_local((64, N), "float32", layout=layout)
        peak = T.alloc_local((64, 1), "float32", layout=stat)
        total = T.alloc_local((64, 1), "float32", layout=stat)
        Tx.wg.copy(x, X)
        Tx.wg.max(peak, x, axis=1)
        Tx.wg.sub(x, x, peak)
        Tx.wg.exp(x, x)
        Tx.wg.sum(total, x, axis=1)
        Tx.wg.sqrt(total, total)          # unary math on the replicated statistic
        Tx.wg.div(x, x, total)
        Tx.wg.div(x, x, total)
        Tx.wg.copy(Y, x)
    return accumulator_softmax


def warpgroup_rows_layout(rows, cols):
    """A warpgroup's [rows, cols] tile (cols a multiple of 512), each row spread over its 4
    warps: thread (warp w, lane l) keeps runs of 8 consecutive columns (4 when cols is 512), run
    k of a row at columns run * (128 k + 32 w + l)."""
    run = min(8, cols // 128)
    runs = cols // (128 * run)
    return T.TileLayout(T.S[(rows, runs, 4, 32, run):(run * runs, run, 1 @ T.wid_in_wg,
                                                       1 @ T.laneid, 1)])


WG_ROWS = 2                 # rows each warpgroup reduces


def warpgroup_reduce_kernel(cols, src_dtype="float32", producer=False):
    """Two warpgroups each sum and max their own WG_ROWS rows of `cols` elements, each row
    spread over the warpgroup's 4 warps (scope "warpgroup": cross_warp with a named barrier
    per warpgroup and each warpgroup's own window of one scratch buffer). With `producer`, a
    third warpgroup (warpgroup 0, the producer of a warp-specialized kernel) takes no part: it
    syncs on its own named barrier 1 (bar.sync 1, 128) and leaves, as the consumers reduce."""
    consumers = 2
    groups = consumers + (1 if producer else 0)
    rows = consumers * WG_ROWS
    layout = warpgroup_rows_layout(WG_ROWS, cols)
    stat = T.TileLayout(T.S[(WG_ROWS, 1):(1, 1)])        # each row's result in every thread

    @T.prim_func
    def warpgroup_reduce(X: T.Buffer((rows, cols), src_dtype), S: T.Buffer((rows, 1), "float32"),
                         M: T.Buffer((rows, 1), "float32")):
        T.cta_id([1])
        wg = T.warpgroup_id([groups])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        pool = T.SMEMPool()
        red = pool.alloc((consumers, WG_ROWS * 4), "float32")
        pool.commit()
        x = T.alloc_local((WG_ROWS, cols), src_dtype, layout=layout)
        total = T.alloc_local((WG_ROWS, 1), "float32", layout=stat)
        peak = T.alloc_local((WG_ROWS, 1), "float32", layout=stat)

        def reduce_rows(c):
            """Consumer c sums and maxes its rows through its window of `red`."""
            Tx.wg.copy(x, X[c * WG_ROWS:(c + 1) * WG_ROWS, :])
            Tx.wg.sum(total, x, axis=1, scratch=red[c, :])
            Tx.wg.max(peak, x, axis=1, scratch=red[c, :])
            if warp == 0:
                if lane == 0:                   # every thread holds the results: one stores
                    Tx.thread.copy(S[c * WG_ROWS:(c + 1) * WG_ROWS, :], total)
                    Tx.thread.copy(M[c * WG_ROWS:(c + 1) * WG_ROWS, :], peak)

        if producer:
            if wg == 0:
                T.cuda.bar_sync(1, 128)
            else:
                reduce_rows(wg - 1)
        else:
            reduce_rows(wg)
    return warpgroup_reduce
