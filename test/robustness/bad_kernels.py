"""Kernels with language mistakes, for test_language.py (the kernel language reads their
source, so they live in a file)."""

import tilemlir.lang as T


@T.prim_func
def unroll_ten_million(D: T.Buffer((16,), "float32")):
    T.cta_id([1])
    T.lane_id([32])
    for i in T.unroll(10 ** 7):
        D[0] = D[0]


@T.prim_func
def unroll_step_zero(D: T.Buffer((16,), "float32")):
    T.cta_id([1])
    T.lane_id([32])
    for i in T.unroll(0, 16, 0):
        D[0] = D[0]


@T.prim_func
def unroll_float_bound(D: T.Buffer((16,), "float32")):
    T.cta_id([1])
    T.lane_id([32])
    for i in T.unroll(4.0):
        D[0] = D[0]


@T.prim_func
def serial_step_zero(D: T.Buffer((16,), "float32")):
    T.cta_id([1])
    T.lane_id([32])
    for i in T.serial(0, 16, 0):
        D[0] = D[0]


@T.prim_func
def star_args(*buffers):
    T.cta_id([1])


@T.prim_func
def keyword_only(D: T.Buffer((16,), "float32"), *, n: T.int32):
    T.cta_id([1])


@T.prim_func
def recursive_helper(D: T.Buffer((16,), "float32")):
    T.cta_id([1])
    T.lane_id([32])

    def again(x):
        return again(x)

    again(1)


@T.prim_func
def unroll_4096_is_fine(D: T.Buffer((16,), "float32")):
    T.cta_id([1])
    lane = T.lane_id([32])
    for i in T.unroll(4096):
        pass
    D[lane % 16] = D[lane % 16]


@T.prim_func
def grid_too_tall(D: T.Buffer((16,), "float32")):
    T.cta_id([1, 70000])
    T.lane_id([32])
