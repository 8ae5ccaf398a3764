"""Kernels with a run-time dim (T.dynamic), for test_run_time_dims.py and its GPU twin."""

import tilemlir.lang as T

M = T.dynamic("M")


def scale_rows(N=128):
    """Y = 2 X, one warp per row, M rows known at launch."""
    @T.prim_func
    def scale_rows(X: T.Buffer((M, N), "float32"), Y: T.Buffer((M, N), "float32")):
        bx = T.cta_id([T.ceildiv(M, 4)])
        w = T.warp_id([4])
        lane = T.lane_id([32])
        row = bx * 4 + w
        if row < M:
            for c in T.unroll(0, N, 32):
                Y[row, c + lane] = X[row, c + lane] * 2.0
    return scale_rows


def stats(N=64):
    """S[2 r] = S[2 r + 1] = the sum of X's row r: S's rows are an expression of M."""
    @T.prim_func
    def stats(X: T.Buffer((M, N), "float32"), S: T.Buffer((M * 2, 1), "float32")):
        row = T.cta_id([M])
        T.thread_id([1])
        total: T.float32 = 0.0
        for c in T.serial(N):
            total = total + X[row, c]
        S[2 * row, 0] = total
        S[2 * row + 1, 0] = total
    return stats
