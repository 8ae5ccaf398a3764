"""A Hopper GEMM with a fused epilogue: D = act(alpha * (A @ B^T) + bias) + residual.

hgemm_fused is hgemm_v7 (tilemlir/kernels/hgemm_hopper.py: persistent, 2x1 clusters, B
multicast across the pair, stmatrix -> shared -> TMA store), built from the same parts
(tilemlir/kernels/parts), whose consumers, once a tile's fp32 accumulator is complete, apply the
epilogue in registers before the cast and the store:

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
into registers (ldmatrix) and added; Cs is then overwritten with the result and stored. The
epilogue is the TMA store's whole-CTA form (parts.epilogue): one thread (consumer warpgroup 1's
first) issues both the load and the store of the whole BM rows, since a TMA load's issuer must
be provably one thread of the CTA (the tma variant's rule) and only the thread that committed a
bulk group can wait for it: it waits until the previous store has read Cs (bulk wait_group)
before loading, and a barrier of all consumer threads keeps every residual read before any
write of Cs. The consumers' epilogues thus run in step (v7's run each warpgroup's on its own),
which costs little: both wait on the same stages.
"""

import math

import tilemlir.lang as T
from tilemlir.kernels.parts import (Barriers, ClusterPair, CpAsyncStages, GemmStages,
                                    ShapeError, TileSchedule, check_epilogue_columns,
                                    check_pair, check_ragged_gemm, check_staging,
                                    consumer_regs, epilogue_store, producer_regs,
                                    unaligned_epilogue, warp_specialized)
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
                SMS=132, EPI_N=128, EPI_SUB=32, PRODUCER_REGS=None, CONSUMER_REGS=None,
                PRODUCER=None, EPILOGUE=None):
    """D = act(alpha * (A @ B^T) + Bias) + Residual; A is M x K, B is N x K, Bias N, Residual
    and D M x N, all in `dtype`, fp32 math. The kernel's parameters are (A, B[, Bias]
    [, Residual], D). activation: "gelu" (erf, torch's default), "gelu_tanh" (torch's
    approximate="tanh"), "silu", "relu" or None; fast_math: the .approx instructions for tanh /
    exp inside the activation. The rest as hgemm_v7; EPI_SUB: the columns the epilogue math
    works on at a time (a multiple of 8 dividing EPI_N).

    Any shape: M may be a run-time dim (T.dynamic); rows that are not a whole number of 16-byte
    units take PRODUCER="cp_async" (K not a multiple of 8: the producer warpgroup's masked
    cp.async, without clusters, whose multicast is TMA's) and EPILOGUE="direct" (N not a
    multiple of 8: bias and residual read by masked loads into registers, D written by masked
    stores) or "staged" (the same loads, D written through staging rows in 16-byte stores:
    parts.StagedStore). None (the default) picks them from K and N (parts.unaligned_epilogue
    for N, as the plain GEMM)."""
    kernel = "hgemm_fused"
    from tilemlir.kernels.gemm import check_extents
    check_extents(kernel, M, N, K)
    for name, value in (("BM", BM), ("BN", BN), ("BK", BK), ("STAGES", STAGES),
                        ("GROUP_M", GROUP_M), ("SMS", SMS), ("EPI_N", EPI_N),
                        ("EPI_SUB", EPI_SUB)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ShapeError(f"{kernel}: {name} must be a positive integer, got {value!r}")
    if PRODUCER is None:
        PRODUCER = "cp_async" if isinstance(K, int) and K % 8 else "tma"
    if EPILOGUE is None:
        EPILOGUE = unaligned_epilogue(N, K if isinstance(K, int) else None) \
            if isinstance(N, int) and N % 8 else "tma"
    if activation not in ACTIVATIONS:
        raise ShapeError(f"{kernel}: activation must be one of {ACTIVATIONS}, got "
                         f"{activation!r}")
    for name, value in (("bias", bias), ("residual", residual), ("fast_math", fast_math)):
        if not isinstance(value, bool):
            raise ShapeError(f"{kernel}: {name} must be True or False, got {value!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha):
        raise ShapeError(f"{kernel}: alpha must be a finite number, got {alpha!r}")
    check_ragged_gemm(kernel, M, N, K, dtype, BM, BN, BK, STAGES, PRODUCER, EPILOGUE)
    pairs = PRODUCER == "tma"               # 2x1 clusters multicast B by TMA
    tma_store = EPILOGUE == "tma"           # else bias and residual by masked loads
    if pairs:
        check_pair(kernel, BN, SMS)
    check_epilogue_columns(kernel, BN, EPI_N)
    if EPI_N % EPI_SUB or EPI_SUB % BIAS_GROUP:
        raise ShapeError(f"{kernel}: EPI_SUB={EPI_SUB} must be a multiple of {BIAS_GROUP} "
                         f"dividing EPI_N={EPI_N}")
    check_staging(kernel, BM, BN, BK, STAGES, EPI_N, EPILOGUE)
    consumers = BM // 64
    PRODUCER_REGS = producer_regs(not pairs, PRODUCER_REGS)
    CONSUMER_REGS = consumer_regs(kernel, consumers, PRODUCER_REGS, CONSUMER_REGS)
    k_tiles = math.ceil(K / BK)
    schedule = TileSchedule(M, N, BM, BN, sms=SMS, k_tiles=k_tiles, group_m=GROUP_M,
                            pairs=pairs)
    acc_layout = wgmma_accumulator_layout(64, BN)
    sub_layout = wgmma_accumulator_layout(64, EPI_SUB)          # a window of EPI_SUB columns
    bias_layout = sub_layout.row_vector((64, EPI_SUB))
    residual_bytes = BM * EPI_N * 2
    scale = float(alpha)

    @T.prim_func
    def hgemm_fused(A: T.Buffer((M, K), dtype), B: T.Buffer((N, K), dtype),
                    Bias: T.Buffer((N,), dtype) if bias else None,
                    Residual: T.Buffer((M, N), dtype) if residual else None,
                    D: T.Buffer((M, N), dtype)):
        pid = T.cta_id([schedule.ctas])
        wg = T.warpgroup_id([1 + consumers])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        if pairs:
            pair = ClusterPair(pid)
            worker, rank = pair.cluster, pair.rank
        else:
            worker, rank = pid, 0

        pool = T.SMEMPool()
        barriers = Barriers(pool)
        if pairs:
            ring = barriers.ring(STAGES, consumers, peer=pair.peer)  # freed in both CTAs
        else:
            ring = barriers.ring(STAGES, consumers, producers=128)
        if tma_store:
            loaded = barriers.alloc(1)                          # a residual window has landed
        if pairs:
            stages = GemmStages(pool, ring, A, B, dtype, BM, BN, BK, warp, lane,
                                rank=pair.rank)
        else:
            stages = CpAsyncStages(pool, ring, A, B, dtype, BM, BN, BK, warp, lane, M, N, K)
        store = epilogue_store(EPILOGUE, pool, D, M, N, dtype, BM, EPI_N, wg, warp, lane,
                               consumers, cta_wide=True)
        pool.commit()
        barriers.init(wg, warp, lane, cluster=pairs)

        def producer():
            # as hgemm_v7's (or, with cp.async, hgemm_v6's)
            stages.producer(schedule, worker, rank)

        def consumer():
            # hgemm_v7's k-loop, then the fused epilogue
            row = (wg - 1) * 64
            acc = T.alloc_local((64, BN), "float32", layout=acc_layout)
            out = T.alloc_local((64, EPI_N), dtype, layout=wgmma_accumulator_layout(64, EPI_N))
            bias_h = T.alloc_local((EPI_SUB,), dtype, layout=bias_layout)
            bias_f = T.alloc_local((EPI_SUB,), "float32", layout=bias_layout)
            res = T.alloc_local((64, EPI_SUB), dtype, layout=sub_layout)
            res_f = T.alloc_local((64, EPI_SUB), "float32", layout=sub_layout)

            def epilogue(x, n_sub, Rs, r0):
                """x (64 x EPI_SUB of the accumulator) = act(alpha x + bias) + residual; n_sub:
                its first column in D; Rs: its residual, in this warpgroup's rows of Cs (None:
                read from Residual's rows r0 .. with masked loads)."""
                if scale != 1.0:
                    Tx.wg.mul(x, x, scale)
                if bias and not tma_store:      # any N: a masked load, zeros past N
                    Tx.wg.copy(bias_h, Bias[n_sub:n_sub + EPI_SUB], bounds=(N - n_sub,))
                    Tx.wg.cast(bias_f, bias_h)
                    Tx.wg.add(x, x, bias_f)
                elif bias:
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
                    if not tma_store:
                        Tx.wg.copy(res, Residual[r0:r0 + 64, n_sub:n_sub + EPI_SUB],
                                   bounds=(M - r0, N - n_sub))
                    else:
                        Tx.wg.copy(res, Rs)
                    Tx.wg.cast(res_f, res)
                    Tx.wg.add(x, x, res_f)

            def load_residual():
                # chunk c0's window of the residual into Cs (zero-filled past M and N)
                if residual:
                    T.ptx.mbarrier.arrive_expect_tx(loaded.ptr_to([0]), residual_bytes)
                    Tx.copy_async(store.Cs, Residual[m0:m0 + BM, n0 + c0:n0 + c0 + EPI_N],
                                  loaded.ptr_to([0]))

            it: T.int32 = 0
            chunk: T.int32 = 0            # residual windows loaded so far (the barrier's phase)
            for t in schedule.walk(worker):
                m0, n0 = schedule.origin(t, rank)
                it = stages.consume(acc, row, it, 0, k_tiles)
                if m0 < M:                  # the odd pair's second tile stores nothing
                    for c0 in T.unroll(0, BN, EPI_N):
                        if tma_store:
                            # The previous store has read Cs; with a residual, this chunk's
                            # window of it comes into Cs.
                            store.await_staging(load_residual)
                            if residual:
                                T.ptx.mbarrier.try_wait(loaded.ptr_to([0]), chunk % 2)
                                chunk += 1
                        for s0 in T.unroll(0, EPI_N, EPI_SUB):
                            x = acc[:, c0 + s0:c0 + s0 + EPI_SUB]
                            rs = store.Cs[row:row + 64, s0:s0 + EPI_SUB] if tma_store else None
                            epilogue(x, n0 + c0 + s0, rs, m0 + row)
                            Tx.wg.cast(out[:, s0:s0 + EPI_SUB], x)
                        # (publish's first barrier: every consumer has read its residual, and
                        # the previous store has read Cs, before Cs is overwritten)
                        store.publish(out, row, m0, n0, c0)
            if tma_store:
                store.await_staging()

        warp_specialized(wg, warp, PRODUCER_REGS, CONSUMER_REGS, producer, consumer,
                         whole_warpgroup=not pairs)

        if pairs:
            T.cuda.cluster_sync()       # no CTA exits while its peer may still signal or write it

    return hgemm_fused
