"""A Hopper GEMM with a fused epilogue: D = act(alpha * (A @ B^T) + bias) + residual.

hgemm_fused is hgemm_v7 (tilemlir/kernels/hgemm_hopper.py: persistent, 2x1 clusters, B
multicast across the pair, stmatrix -> shared -> TMA store) whose consumers, once a tile's
fp32 accumulator is complete, apply the epilogue in registers before the cast and the store:

    acc *= alpha                                  (when alpha != 1)
    acc += bias[n]                                (Bias: N values, broadcast along the rows)
    acc = act(acc)                                (gelu / gelu_tanh / silu / relu)
    acc += residual[m, n]                         (Residual: M x N, the input type)
    D = cast(acc)                                 (the input type)

all in fp32, as torch computes `act(alpha * a @ b.T + bias) + residual` in float32. The math
runs on EPI_SUB-column windows of the accumulator, so that the bias and residual registers
stay few next to the accumulator's 128 per thread.

Bias: a register vector in the accumulator's column layout (`row_vector`: each thread holds
only the columns of the accumulator it holds, replicated over the lanes and warps that hold
the other rows), loaded from global memory by each thread. The tile's last columns may lie
past N (ragged N): the load then goes 8 columns at a time, those past N left at 0 (N is a
multiple of 8, so 8 columns are in or out together). The TMA store clips those columns.

Residual: the tile's BM x EPI_N window comes into the staging buffer Cs by a TMA load
(zero-filled past M and N, so ragged edges need no guard) completing on an mbarrier, is read
into registers (ldmatrix) and added; Cs is then overwritten with the result and stored. One
thread (consumer warpgroup 1's first) issues both the load and the store of the whole BM rows,
since a TMA load's issuer must be provably one thread of the CTA (the tma variant's rule) and
only the thread that committed a bulk group can wait for it: it waits until the previous store has read Cs (bulk wait_group) before loading,
and a barrier of all consumer threads keeps every residual read before any write of Cs. The
consumers' epilogues thus run in step (v7's run each warpgroup's on its own), which costs
little: both wait on the same stages.
"""

import math

import tilemlir.lang as T
from tilemlir.kernels.hgemm_hopper import (ShapeError, _check, _check_epilogue_columns,
                                           _check_row_stride, _consumer_regs, _tile_origin)
from tilemlir.lang import wgmma_accumulator_layout

Tx = T.tile

ACTIVATIONS = ("gelu", "gelu_tanh", "silu", "relu", None)
BIAS_GROUP = 8              # columns of a guarded bias load at the right edge (N % 8 == 0)


def _apply_activation(activation, x, fast: bool) -> None:
    """x = activation(x), in place, on a register window of the accumulator."""
    if activation == "gelu":
        Tx.wg.gelu(x, x, approximate="none", fast=fast)
    elif activation == "gelu_tanh":
        Tx.wg.gelu(x, x, approximate="tanh", fast=fast)
    elif activation == "silu":
        Tx.wg.silu(x, x, fast=fast)
    elif activation == "relu":
        Tx.wg.maximum(x, x, 0.0)


def hgemm_fused(M, N, K, dtype="float16", bias=True, activation="gelu_tanh", residual=False,
                alpha=1.0, fast_math=False, BM=128, BN=256, BK=64, STAGES=4, GROUP_M=16,
                SMS=132, EPI_N=128, EPI_SUB=32, PRODUCER_REGS=40, CONSUMER_REGS=None):
    """D = act(alpha * (A @ B^T) + Bias) + Residual; A is M x K, B is N x K, Bias N, Residual
    and D M x N, all in `dtype`, fp32 math. The kernel's parameters are (A, B[, Bias]
    [, Residual], D). activation: "gelu" (erf, torch's default), "gelu_tanh" (torch's
    approximate="tanh"), "silu", "relu" or None; fast_math: the .approx instructions for tanh /
    exp inside the activation. The rest as hgemm_v7; EPI_SUB: the columns the epilogue math
    works on at a time (a multiple of 8 dividing EPI_N)."""
    kernel = "hgemm_fused"
    from tilemlir.kernels.gemm import check_extents
    check_extents(kernel, M, N, K)
    for name, value in (("BM", BM), ("BN", BN), ("BK", BK), ("STAGES", STAGES),
                        ("GROUP_M", GROUP_M), ("SMS", SMS), ("EPI_N", EPI_N),
                        ("EPI_SUB", EPI_SUB), ("PRODUCER_REGS", PRODUCER_REGS)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ShapeError(f"{kernel}: {name} must be a positive integer, got {value!r}")
    if activation not in ACTIVATIONS:
        raise ShapeError(f"{kernel}: activation must be one of {ACTIVATIONS}, got "
                         f"{activation!r}")
    for name, value in (("bias", bias), ("residual", residual), ("fast_math", fast_math)):
        if not isinstance(value, bool):
            raise ShapeError(f"{kernel}: {name} must be True or False, got {value!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha):
        raise ShapeError(f"{kernel}: alpha must be a finite number, got {alpha!r}")
    _check(kernel, BM * math.ceil(M / BM), BN * math.ceil(N / BN), K, dtype, BM, BN, BK, STAGES)
    _check_row_stride(kernel, "N", N)
    if BN % 16:
        raise ShapeError(f"{kernel}: BN={BN} must be a multiple of 16 (each CTA of the pair "
                         f"loads BN / 2 rows of B)")
    _check_epilogue_columns(kernel, BN, EPI_N)
    if EPI_N % EPI_SUB or EPI_SUB % BIAS_GROUP:
        raise ShapeError(f"{kernel}: EPI_SUB={EPI_SUB} must be a multiple of {BIAS_GROUP} "
                         f"dividing EPI_N={EPI_N}")
    if 1024 + STAGES * (BM + BN) * BK * 2 + BM * EPI_N * 2 > 227 * 1024:
        raise ShapeError(f"{kernel}: {STAGES} stages and a {BM}x{EPI_N} staging buffer exceed "
                         f"the 227 KiB of shared memory a Hopper CTA can have")
    if SMS < 2:
        raise ShapeError(f"{kernel}: SMS={SMS} leaves no room for one cluster of 2 CTAs")
    consumers = BM // 64
    CONSUMER_REGS = _consumer_regs(kernel, consumers, PRODUCER_REGS, CONSUMER_REGS)
    tiles_m, tiles_n, k_tiles = math.ceil(M / BM), math.ceil(N / BN), math.ceil(K / BK)
    pairs_m = math.ceil(tiles_m / 2)
    pairs = pairs_m * tiles_n
    clusters = min(SMS // 2, pairs)
    group_m = math.gcd(max(1, GROUP_M // 2), pairs_m)
    HALF_N = BN // 2
    a_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BM, BK))
    b_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BN, BK))
    c_layout = T.mma_shared_layout(dtype, "128B", (BM, EPI_N))
    acc_layout = wgmma_accumulator_layout(64, BN)
    sub_layout = wgmma_accumulator_layout(64, EPI_SUB)          # a window of EPI_SUB columns
    bias_layout = sub_layout.row_vector((64, EPI_SUB))
    stage_bytes = (BM + BN) * BK * 2
    residual_bytes = BM * EPI_N * 2
    scale = float(alpha)

    @T.prim_func
    def hgemm_fused(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                    Bias: T.Buffer((N,), dtype) if bias else None,
                    Residual: T.Buffer((M, N), dtype) if residual else None,
                    D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([2 * clusters])
        T.cluster_shape([2, 1, 1])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        rank = T.cuda.cluster_ctarank()
        peer = rank ^ 1
        cluster = pid // 2

        pool = T.SMEMPool()
        full = pool.alloc((STAGES,), "uint64", align=8)      # this CTA's stage has landed
        empty = pool.alloc((STAGES,), "uint64", align=8)     # both CTAs' consumers are done
        loaded = pool.alloc((1,), "uint64", align=8)         # a residual window has landed
        pool.move_base_to(1024)
        As = pool.alloc((STAGES * BM, BK), dtype, layout=a_layout)
        Bs = pool.alloc((STAGES * BN, BK), dtype, layout=b_layout)
        Cs = pool.alloc((BM, EPI_N), dtype, layout=c_layout)
        pool.commit()

        if wg == 0:
            if warp == 0:
                if lane == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init(empty.ptr_to([s]), 2 * consumers)
                    T.ptx.mbarrier.init(loaded.ptr_to([0]), 1)
        T.ptx.fence.mbarrier_init()
        T.cuda.cluster_sync()           # the peer's barriers exist before anyone signals them

        if wg == 0:
            # --- producer: as hgemm_v7's ---
            T.ptx.setmaxnreg(PRODUCER_REGS, increase=False)
            if warp == 0:
                if T.ptx.elect_sync():
                    it: T.int32 = 0
                    for t in T.serial(cluster, pairs, clusters):
                        m_pair, n0 = _tile_origin(t, pairs_m, tiles_n, group_m, 2 * BM, BN)
                        m0 = m_pair + rank * BM
                        nb = n0 + rank * HALF_N
                        for kt in T.serial(k_tiles):
                            s = it % STAGES
                            T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (it // STAGES + 1) % 2)
                            T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                            Tx.copy_async(As[s * BM:s * BM + BM, :],
                                          A[m0:m0 + BM, kt * BK:kt * BK + BK], full.ptr_to([s]))
                            Tx.copy_async(Bs[s * BN + rank * HALF_N:
                                             s * BN + rank * HALF_N + HALF_N, :],
                                          B[nb:nb + HALF_N, kt * BK:kt * BK + BK],
                                          full.ptr_to([s]), multicast=0b11)
                            it += 1
        else:
            # --- consumers: hgemm_v7's main loop, then the fused epilogue ---
            T.ptx.setmaxnreg(CONSUMER_REGS, increase=True)
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            out = T.alloc_local((64, EPI_N), dtype, layout=wgmma_accumulator_layout(64, EPI_N))
            bias_h = T.alloc_local((EPI_SUB,), dtype, layout=bias_layout)
            bias_f = T.alloc_local((EPI_SUB,), "float32", layout=bias_layout)
            res = T.alloc_local((64, EPI_SUB), dtype, layout=sub_layout)
            res_f = T.alloc_local((64, EPI_SUB), "float32", layout=sub_layout)

            def epilogue(x, n_sub, Rs):
                """x (64 x EPI_SUB of the accumulator) = act(alpha x + bias) + residual; n_sub:
                its first column in D; Rs: its residual, in this warpgroup's rows of Cs."""
                if scale != 1.0:
                    Tx.wg.mul(x, x, scale)
                if bias:
                    if n_sub + EPI_SUB <= N:
                        Tx.wg.copy(bias_h, Bias[n_sub:n_sub + EPI_SUB])
                    else:                       # the right edge: 8 columns at a time, up to N
                        Tx.wg.fill(bias_h, 0.0)
                        for g in T.unroll(0, EPI_SUB, BIAS_GROUP):
                            if n_sub + g < N:
                                Tx.wg.copy(bias_h[g:g + BIAS_GROUP],
                                           Bias[n_sub + g:n_sub + g + BIAS_GROUP])
                    Tx.wg.cast(bias_f, bias_h)
                    Tx.wg.add(x, x, bias_f)
                _apply_activation(activation, x, fast_math)
                if residual:
                    Tx.wg.copy(res, Rs)
                    Tx.wg.cast(res_f, res)
                    Tx.wg.add(x, x, res_f)

            def release(s):
                T.ptx.mbarrier.arrive(empty.ptr_to([s]))
                T.ptx.mbarrier.arrive(T.cuda.mapa(empty.ptr_to([s]), peer))

            it: T.int32 = 0
            chunk: T.int32 = 0            # residual windows loaded so far (the barrier's phase)
            for t in T.serial(cluster, pairs, clusters):
                m_pair, n0 = _tile_origin(t, pairs_m, tiles_n, group_m, 2 * BM, BN)
                m0 = m_pair + rank * BM
                Tx.wg.fill(acc, 0.0)
                for kt in T.serial(k_tiles):
                    s = it % STAGES
                    T.ptx.mbarrier.try_wait(full.ptr_to([s]), (it // STAGES) % 2)
                    Tx.wg.gemm_async(acc, As[s * BM + row:s * BM + row + 64, :],
                                     Bs[s * BN:s * BN + BN, :], accum=True)
                    T.ptx.wgmma.wait_group(1)
                    if kt > 0:
                        if warp == 0:
                            if lane == 0:
                                release((it + STAGES - 1) % STAGES)
                    it += 1
                T.ptx.wgmma.wait_group(0)
                if warp == 0:
                    if lane == 0:
                        release((it + STAGES - 1) % STAGES)
                if m0 < M:                  # the odd pair's second tile stores nothing
                    for c0 in T.unroll(0, BN, EPI_N):
                        # The previous store has read Cs; with a residual, this chunk's
                        # window of it comes into Cs (zero-filled past M and N).
                        if wg == 1:
                            if warp == 0:
                                if lane == 0:
                                    T.ptx.bulk.wait_group(0)
                                    if residual:
                                        T.ptx.mbarrier.arrive_expect_tx(loaded.ptr_to([0]),
                                                                        residual_bytes)
                                        Tx.copy_async(Cs, Residual[m0:m0 + BM,
                                                                   n0 + c0:n0 + c0 + EPI_N],
                                                      loaded.ptr_to([0]))
                        if residual:
                            T.ptx.mbarrier.try_wait(loaded.ptr_to([0]), chunk % 2)
                            chunk += 1
                        for s0 in T.unroll(0, EPI_N, EPI_SUB):
                            x = acc[:, c0 + s0:c0 + s0 + EPI_SUB]
                            epilogue(x, n0 + c0 + s0, Cs[row:row + 64, s0:s0 + EPI_SUB])
                            Tx.wg.cast(out[:, s0:s0 + EPI_SUB], x)
                        # Every consumer has read its residual, and the previous store has
                        # read Cs, before Cs is overwritten.
                        T.cuda.bar_sync(1, 128 * consumers)
                        Tx.wg.copy(Cs[row:row + 64, :], out)
                        T.ptx.fence.proxy_async("shared::cta")  # generic writes -> TMA reads
                        T.cuda.bar_sync(1, 128 * consumers)
                        if wg == 1:
                            if warp == 0:
                                if lane == 0:
                                    Tx.copy_async(D[m0:m0 + BM, n0 + c0:n0 + c0 + EPI_N], Cs)
                                    T.ptx.bulk.commit_group()
            if wg == 1:
                if warp == 0:
                    if lane == 0:
                        T.ptx.bulk.wait_group(0)   # shared memory lives until it is read

        T.cuda.cluster_sync()           # no CTA exits while its peer may still signal or write it

    return hgemm_fused
