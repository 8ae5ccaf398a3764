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


# ---- clusters, named barriers and CTA pairs (issue 24): the checks name the Python line
@T.prim_func
def cluster_pair(D: T.Buffer((8,), "int32")):
    bx = T.cta_id([8])
    T.cluster_shape([2])
    lane = T.lane_id([32])
    if lane == 0:
        D[bx] = bx


@T.prim_func
def cluster_16_allowed(D: T.Buffer((16,), "int32")):
    bx = T.cta_id([16])
    T.cluster_shape([16], non_portable=True)
    lane = T.lane_id([32])
    if lane == 0:
        D[bx] = bx


@T.prim_func
def cluster_16_not_allowed(D: T.Buffer((16,), "int32")):
    bx = T.cta_id([16])
    T.cluster_shape([16])
    T.lane_id([32])


@T.prim_func
def cluster_32_allowed(D: T.Buffer((32,), "int32")):
    bx = T.cta_id([32])
    T.cluster_shape([32], non_portable=True)
    T.lane_id([32])


@T.prim_func
def cluster_non_portable_not_bool(D: T.Buffer((8,), "int32")):
    bx = T.cta_id([8])
    T.cluster_shape([2], non_portable="yes")
    T.lane_id([32])


@T.prim_func
def cluster_ragged(D: T.Buffer((6,), "int32")):
    bx = T.cta_id([6])
    T.cluster_shape([4])
    T.lane_id([32])


@T.prim_func
def cluster_bool_extent(D: T.Buffer((8,), "int32")):
    bx = T.cta_id([8])
    T.cluster_shape([True])
    T.lane_id([32])


@T.prim_func
def barrier_id_16(D: T.Buffer((64,), "float32")):
    T.cta_id([1])
    T.thread_id([64])
    T.cuda.bar_sync(16, 64)


@T.prim_func
def barrier_id_negative(D: T.Buffer((64,), "float32")):
    T.cta_id([1])
    T.thread_id([64])
    T.cuda.bar_arrive(-1, 64)


@T.prim_func
def barrier_threads_48(D: T.Buffer((64,), "float32")):
    T.cta_id([1])
    T.thread_id([64])
    T.cuda.bar_sync(1, 48)


@T.prim_func
def barrier_threads_zero(D: T.Buffer((64,), "float32")):
    T.cta_id([1])
    T.thread_id([64])
    T.cuda.bar_or(1, 0, True)


@T.prim_func
def barrier_more_threads_than_block(D: T.Buffer((64,), "float32")):
    T.cta_id([1])
    T.thread_id([64])
    T.cuda.bar_sync(1, 128)


def _tcgen05_commit(cluster, group, multicast=None):
    @T.prim_func
    def commit(D: T.Buffer((4,), "int32")):
        T.cta_id([2, 2])
        if cluster:
            T.cluster_shape(cluster)
        T.lane_id([32])
        pool = T.SMEMPool()
        bar = pool.alloc((1,), "uint64", align=8)
        pool.commit()
        T.ptx.tcgen05.commit(bar.ptr_to([0]), cta_group=group, multicast=multicast)
    return commit


commit_mask_beyond_cluster = _tcgen05_commit([2], 1, multicast=0b100)
commit_pair_without_cluster = _tcgen05_commit(None, 2)
commit_pair_in_column_cluster = _tcgen05_commit([1, 2], 2)


@T.prim_func
def mixed_cta_groups(D: T.Buffer((4,), "int32")):
    T.cta_id([4])
    T.cluster_shape([2])
    warp = T.warp_id([1])
    T.lane_id([32])
    pool = T.SMEMPool()
    addr = pool.alloc((1,), "uint32")
    bar = pool.alloc((1,), "uint64", align=8)
    pool.commit()
    T.ptx.tcgen05.alloc(T.address_of(addr), n_cols=32, cta_group=2)
    T.ptx.tcgen05.commit(bar.ptr_to([0]), cta_group=1)


def _warp_specialized(dec: int, inc: int, consumers: int):
    @T.prim_func
    def budgets(D: T.Buffer((64,), "float32")):
        T.cta_id([1])
        wg = T.warpgroup_id([1 + consumers])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        if wg == 0:
            T.ptx.setmaxnreg(dec, increase=False)
        else:
            T.ptx.setmaxnreg(inc, increase=True)
    return budgets


# 3 warpgroups hold 168 x 384 registers from launch: 96 + 2 x 208 asks for 65536
register_budgets_over_launch = _warp_specialized(96, 208, 2)
register_budgets_at_launch = _warp_specialized(40, 232, 2)          # 64512: exactly what it holds
register_budgets_five_warpgroups = _warp_specialized(40, 112, 4)    # 40 + 4 x 112 > 5 x 96
