"""FlashAttention forward on Hopper (sm_90a), in the kernel language.

    O = softmax(Q K^T * scale [+ causal mask]) V        per (batch, head)

Q, K, V and O are [B, H, S, D] tensors seen as (B*H*S) x D matrices. A work item is one
BQ = 128-row block of one head's output, which walks that head's keys in BKV = 128-row
blocks. The grid is persistent: one CTA per SM, each taking every SMS-th item (a head's
query blocks are consecutive items, so the CTAs at work share its K and V in L2; causal
items come longest first), so the producer loads the next item's Q and keys while the
consumers finish the last one.

- warpgroup 0 is the producer: one elected thread loads an item's Q block (once the
  consumers' last Q K^T of the previous item has read Q: Q is a stage ring of one stage), then
  K and V of each key block by TMA into STAGES-deep stage rings (tilemlir/kernels/parts/ring.py)
  that advance in step. K and V have their own `full` barriers (so Q K^T can start before V
  has landed) and their own `empty` barriers (K of a block is free as soon as Q K^T has read
  it, V only after P V), each freed by both consumers.
- warpgroups 1 and 2 are the consumers, 64 query rows each (wgmma's M). Per key block j:
    S = Q K^T                    wgmma from shared memory, fp32 in registers (64 x BKV)
    [causal, diagonal block: S = -inf where key > query]
    m' = max(m, rowmax(S) * c)   c = scale * log2(e): the softmax runs in base 2
    P = exp2(S * c - m')         ex2.approx, in the registers S came in
    l = l * exp2(m - m') + rowsum(P)
    O = O * exp2(m - m') + P V   P cast to the input type in registers, in exactly the
                                 layout wgmma reads its A operand from registers (the
                                 accumulator fragment of S is the A fragment of P V), and V
                                 read from shared memory as an MN-major (transposed) B
  and at the end O / l is cast and written to global memory.
  PIPELINE=True (the default) overlaps the two GEMMs with the softmax inside each consumer:
  block j's Q K^T and block j - 1's P V are issued together, and the softmax of block j runs
  while P V still occupies the tensor cores (O is rescaled once P V has landed).
  PINGPONG=True (the default) overlaps them across the consumers: they issue their wgmma in
  turns (bar.sync on their own named barrier, bar.arrive on the other's), so that one's
  softmax runs while the other's GEMMs do.
  Row statistics (m, l, the rescale factor) live in the accumulator's column-vector layout:
  each thread keeps the rows it holds, replicated over the four lanes of a row, so the row
  max and sum are a thread fold plus two shuffles and every broadcast stays in registers.

D is 64 or 128 (one or two 64-column, 128-byte-swizzled chunks, each its own TMA box and
its own wgmma K-chunk / N-chunk); S must be a multiple of 128. Causal attention skips the
key blocks past the diagonal and masks the diagonal block.

On the H200 (results/2026-12-01-attention/): 0.94x cuDNN's attention (torch's fastest
backend) over batch 8 x 16 heads x seq 1024-16384, D 64 / 128, causal or not; 1.00-1.03x at
D 128 without a mask from seq 4096; 1.3-1.8x FlashAttention-2. Measured and not kept:
exp2 of P in pairs of the input type (ex2.approx.f16x2, half the MUFU work), 10-17% slower at seq 4096 on the H200 (the new P needs a second register tile while
P V still reads the old one; results/2026-12-01-attention/), so the exponentials stay f32.
"""

import math
import threading

import tilemlir.lang as T
from tilemlir.kernels.parts import Barriers, Persistent, ShapeError, warp_specialized
from tilemlir.lang import wgmma_a_layout, wgmma_accumulator_layout

Tx = T.tile

_DTYPES = ("float16", "bfloat16")
BQ = 128                # query rows per CTA (two consumer warpgroups of 64)
BKV = 128               # key / value rows per block
CHUNK = 64              # head-dim columns per 128-byte swizzle row (16-bit elements)
LOG2E = 1.4426950408889634
NEG_INF = float("-inf")
M_INIT = -1.0e30        # a running max below any score, whose exp2(m - m') is 0, never NaN


def _check(B, H, S, D, dtype, STAGES):
    if dtype not in _DTYPES:
        raise ShapeError(f"flash_attention: dtype must be one of {_DTYPES}, got {dtype!r}")
    for name, value in (("B", B), ("H", H), ("S", S)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ShapeError(f"flash_attention: {name}={value!r} must be a positive integer")
    if D not in (64, 128):
        raise ShapeError(f"flash_attention: head dim D={D!r} must be 64 or 128")
    if S % BKV:
        raise ShapeError(f"flash_attention: sequence length S={S} must be a multiple of "
                         f"{BKV} (the key block)")
    if STAGES < 1:
        raise ShapeError(f"flash_attention: STAGES={STAGES} must be at least 1")
    smem = 1024 + (BQ + 2 * STAGES * BKV) * D * 2
    if smem > 227 * 1024:
        raise ShapeError(f"flash_attention: {STAGES} stages of K and V at D={D} need {smem} "
                         f"bytes of shared memory, more than a Hopper CTA's 227 KiB")


def _item(u, q_blocks: int, causal: bool):
    """(head, query block) of work item u: a head's query blocks are consecutive items (the
    CTAs working at once share its K and V in L2), longest rows of keys first when causal.
    (Rounds of one length, every head's longest block first, measured 7% slower causal at
    D = 128: results/2026-12-01-attention/.)"""
    head = u // q_blocks
    qb = u % q_blocks
    if causal:
        qb = q_blocks - 1 - qb
    return head, qb


def flash_attention(B, H, S, D, dtype="float16", causal=False, scale=None, STAGES=2,
                    PIPELINE=True, PINGPONG=True, SMS=132, PRODUCER_REGS=24,
                    CONSUMER_REGS=240, fast_exp=True):
    """The kernel for q, k, v, o of shape [B, H, S, D] (contiguous, given as (B*H*S) x D).
    scale: the softmax scale, 1 / sqrt(D) by default. SMS: the persistent grid (132 SMs on
    the H200), each CTA taking every SMS-th (head, query block) item."""
    _check(B, H, S, D, dtype, STAGES)
    if isinstance(SMS, bool) or not isinstance(SMS, int) or SMS < 1:
        raise ShapeError(f"flash_attention: SMS={SMS!r} must be a positive integer")
    if scale is None:
        scale = 1.0 / math.sqrt(D)
    c = float(scale) * LOG2E
    chunks = D // CHUNK
    heads = B * H
    q_blocks = S // BQ
    grid = Persistent(heads * q_blocks, SMS)
    rows = heads * S
    qk_layout = T.mma_shared_layout(dtype, "128B", (chunks * BQ, CHUNK))
    k_layout = T.mma_shared_layout(dtype, "128B", (STAGES * chunks * BKV, CHUNK))
    v_layout = T.mma_shared_layout(dtype, "128B", (STAGES * BKV, D))
    s_layout = wgmma_accumulator_layout(64, BKV)
    p_layout = wgmma_a_layout(64, BKV)
    stat_layout = s_layout.column_vector((64, BKV))
    kv_bytes = BKV * D * 2

    @T.prim_func
    def flash_attention(Q: T.Buffer((rows, D), dtype), K: T.Buffer((rows, D), dtype),
                        V: T.Buffer((rows, D), dtype), O: T.Buffer((rows, D), dtype)):
        pid = T.cta_id([grid.ctas])
        wg = T.warpgroup_id([3])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])

        pool = T.SMEMPool()
        barriers = Barriers(pool)
        # The item's Q (a ring of one stage): landed; both consumers' last Q K^T read it.
        q_ring = barriers.ring(1, 2)
        # K and V of a key block: each landed, each read by both consumers (K once Q K^T has
        # read it, so that its stage refills while P V still reads V).
        k_ring, v_ring = barriers.rings(2, STAGES, 2)
        pool.move_base_to(1024)
        Qs = pool.alloc((chunks * BQ, CHUNK), dtype, layout=qk_layout)
        Ks = pool.alloc((STAGES * chunks * BKV, CHUNK), dtype, layout=k_layout)
        Vs = pool.alloc((STAGES * BKV, D), dtype, layout=v_layout)
        pool.commit()
        barriers.init(wg, warp, lane)

        def producer():
            # per item, Q, then K and V of each key block through the ring
            it: T.int32 = 0                      # key blocks loaded so far
            n: T.int32 = 0                       # items so far
            for u in grid.walk(pid):
                head, qb = _item(u, q_blocks, causal)
                q0 = head * S + qb * BQ
                kv0 = head * S
                blocks = qb + 1 if causal else q_blocks
                q_ring.acquire(n, BQ * D * 2)
                for qc in T.unroll(chunks):
                    Tx.copy_async(Qs[qc * BQ:qc * BQ + BQ, :],
                                  Q[q0:q0 + BQ, qc * CHUNK:qc * CHUNK + CHUNK],
                                  q_ring.full.ptr_to([0]))
                for j in T.serial(blocks):
                    s = k_ring.stage(it)             # K's and V's, in step
                    k0 = kv0 + j * BKV
                    free = k_ring.free_phase(it)
                    k_ring.acquire_stage(s, free, kv_bytes)
                    for kc in T.unroll(chunks):
                        ks = (s * chunks + kc) * BKV
                        Tx.copy_async(Ks[ks:ks + BKV, :],
                                      K[k0:k0 + BKV, kc * CHUNK:kc * CHUNK + CHUNK],
                                      k_ring.full.ptr_to([s]))
                    v_ring.acquire_stage(s, free, kv_bytes)
                    Tx.copy_async(Vs[s * BKV:s * BKV + BKV, :], V[k0:k0 + BKV, :],
                                  v_ring.full.ptr_to([s]))
                    it += 1
                n += 1

        def consumer():
            # 64 query rows of each item each
            row = (wg - 1) * 64
            scores = T.alloc_local((64, BKV), "float32", layout=s_layout)
            probs = T.alloc_local((64, BKV), dtype, layout=p_layout)
            acc = T.alloc_local((64, D), "float32", layout=wgmma_accumulator_layout(64, D))
            out = T.alloc_local((64, D), dtype, layout=wgmma_accumulator_layout(64, D))
            m = T.alloc_local((64, 1), "float32", layout=stat_layout)
            m_new = T.alloc_local((64, 1), "float32", layout=stat_layout)
            l = T.alloc_local((64, 1), "float32", layout=stat_layout)
            rescale = T.alloc_local((64, 1), "float32", layout=stat_layout)
            if causal:
                # The diagonal block's mask from two broadcast vectors (key and query index,
                # both counted from the block's first row): 16 + 2 registers, not 2 tiles.
                key = T.alloc_local((BKV,), "int32", layout=s_layout.row_vector((64, BKV)))
                query = T.alloc_local((64, 1), "int32", layout=stat_layout)
                future = T.alloc_local((64, BKV), "bool", layout=s_layout)
                Tx.wg.iota(key, axis=0)
                Tx.wg.iota(query, axis=0, offset=row)

            def issue_scores(i):
                # scores = Q K_i^T (i counts key blocks over items: the ring's stage and
                # phase), one committed wgmma group per 64 columns of D
                s = k_ring.wait(i)
                for ch in T.unroll(chunks):
                    at = (s * chunks + ch) * BKV
                    Tx.wg.gemm_async(scores, Qs[ch * BQ + row:ch * BQ + row + 64, :],
                                     Ks[at:at + BKV, :], accum=ch > 0)

            def issue_values(i):
                # acc += P V_i: P from registers, V_i MN-major from shared memory (D in
                # 64-column chunks, one TMA box each), one committed wgmma group
                s = v_ring.wait(i)
                Tx.wg.gemm_async(acc, probs, Vs[s * BKV:s * BKV + BKV, :], accum=True,
                                 transpose_B=True)

            def take_turn():
                # PINGPONG: the consumers issue their wgmma in turns (named barriers 3 and 4),
                # so that one's softmax runs while the other's GEMMs occupy the tensor cores.
                if PINGPONG:
                    T.cuda.bar_sync(2 + wg, 256)

            def pass_turn():
                if PINGPONG:
                    T.cuda.bar_arrive(5 - wg, 256)

            def release(ring, i):
                if warp == 0:
                    if lane == 0:
                        ring.release(ring.stage(i))

            def online_softmax(last):
                # m' = max(m, rowmax(S) c); scores = exp2(S c - m'); l = l 2^(m - m') + rowsum
                if causal:
                    if last:
                        Tx.wg.compare(future, key, ">", query)
                        Tx.wg.select(scores, future, NEG_INF, scores)
                Tx.wg.max(m_new, scores, axis=1)
                Tx.wg.mul(m_new, m_new, c)
                Tx.wg.maximum(m_new, m_new, m)
                Tx.wg.sub(rescale, m, m_new)
                Tx.wg.exp2(rescale, rescale, fast=fast_exp)
                Tx.wg.maximum(m, m, m_new)
                Tx.wg.mul(scores, scores, c)            # one FFMA with the next line
                Tx.wg.sub(scores, scores, m)
                Tx.wg.exp2(scores, scores, fast=fast_exp)
                Tx.wg.sum(m_new, scores, axis=1)        # this block's row sums
                Tx.wg.mul(l, l, rescale)
                Tx.wg.add(l, l, m_new)

            it: T.int32 = 0
            n: T.int32 = 0
            if PINGPONG:
                if wg == 2:
                    T.cuda.bar_arrive(3, 256)           # consumer 1 takes the first turn
            for u in grid.walk(pid):
                head, qb = _item(u, q_blocks, causal)
                q0 = head * S + qb * BQ
                blocks = qb + 1 if causal else q_blocks
                Tx.wg.fill(m, M_INIT)
                Tx.wg.fill(l, 0.0)
                Tx.wg.fill(acc, 0.0)
                q_ring.wait(n)
                if PIPELINE:
                    # P V of block j - 1 runs on the tensor cores while the softmax of block
                    # j (whose Q K^T was issued just before it) runs on the ALUs.
                    take_turn()
                    issue_scores(it)
                    pass_turn()
                    T.ptx.wgmma.wait_group(0)
                    release(k_ring, it)
                    if blocks == 1:
                        release(q_ring, 0)              # the item's last read of Q is done
                    online_softmax(blocks == 1)
                    Tx.wg.cast(probs, scores)
                    for j in T.serial(1, blocks):
                        take_turn()
                        issue_scores(it + j)
                        issue_values(it + j - 1)
                        pass_turn()
                        T.ptx.wgmma.wait_group(1)       # Q K_j^T is done, P V_(j-1) may run
                        release(k_ring, it + j)
                        if j == blocks - 1:
                            release(q_ring, 0)
                        online_softmax(j == blocks - 1)
                        T.ptx.wgmma.wait_group(0)       # P V_(j-1) is done: rescale, new P
                        release(v_ring, it + j - 1)
                        Tx.wg.mul(acc, acc, rescale)
                        Tx.wg.cast(probs, scores)
                    take_turn()
                    issue_values(it + blocks - 1)
                    pass_turn()
                    T.ptx.wgmma.wait_group(0)
                    release(v_ring, it + blocks - 1)
                else:
                    for j in T.serial(blocks):
                        take_turn()
                        issue_scores(it + j)
                        pass_turn()
                        T.ptx.wgmma.wait_group(0)
                        release(k_ring, it + j)
                        if j == blocks - 1:
                            release(q_ring, 0)
                        online_softmax(j == blocks - 1)
                        Tx.wg.mul(acc, acc, rescale)
                        Tx.wg.cast(probs, scores)
                        take_turn()
                        issue_values(it + j)
                        pass_turn()
                        T.ptx.wgmma.wait_group(0)
                        release(v_ring, it + j)
                Tx.wg.div(l, 1.0, l)
                Tx.wg.mul(acc, acc, l)
                Tx.wg.cast(out, acc)
                Tx.wg.copy(O[q0 + row:q0 + row + 64, :], out)
                it += blocks
                n += 1
            if PINGPONG:
                if wg == 1:
                    T.cuda.bar_sync(3, 256)             # consumer 2's last pass: none pending

        warp_specialized(wg, warp, PRODUCER_REGS, CONSUMER_REGS, producer, consumer)

    return flash_attention


# ------------------------------------------------------------------------------ front door
_KERNELS: dict = {}
_KERNELS_LOCK = threading.Lock()
_TORCH_NAMES = {"torch.float16": "float16", "torch.bfloat16": "bfloat16"}


def attention_kernel(B, H, S, D, dtype="float16", causal=False, scale=None, target=None,
                     config=None):
    """flash_attention(...) compiled (once per shape, dtype, causal, scale, configuration and
    target); `config`: more keyword arguments of flash_attention (STAGES, PIPELINE, ...)."""
    config = dict(config or {})
    key = (B, H, S, D, dtype, bool(causal), scale, target, tuple(sorted(config.items())))
    with _KERNELS_LOCK:
        compiled = _KERNELS.get(key)
    if compiled is None:
        import tilemlir
        compiled = tilemlir.compile(flash_attention(B, H, S, D, dtype, bool(causal), scale,
                                                    **config), target=target)
        with _KERNELS_LOCK:
            compiled = _KERNELS.setdefault(key, compiled)
    return compiled


def attention(q, k, v, causal=False, scale=None, out=None, config=None):
    """softmax(q @ k^T * scale [causal]) @ v for torch CUDA tensors of shape [B, H, S, D]
    (float16 or bfloat16, contiguous, one shape, dtype and device), like
    torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale).
    Returns `out` (a new tensor unless given), written on the current stream. `config`: keyword
    arguments of flash_attention (STAGES, PIPELINE, ...) other than the defaults."""
    from tilemlir.runtime.args import ArgumentError
    if not isinstance(causal, bool):
        raise ArgumentError(f"attention: causal must be True or False, got {causal!r}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))
                              or not math.isfinite(scale)):
        raise ArgumentError(f"attention: scale must be None or a finite number (it is "
                            f"compiled into the kernel), got {scale!r}")
    if config is not None and not (isinstance(config, dict)
                                   and all(isinstance(key, str) for key in config)):
        raise ArgumentError(f"attention: config must be None or a dict of flash_attention's "
                            f"keyword arguments, got {config!r}")
    for name, t in (("q", q), ("k", k), ("v", v)) + ((("out", out),) if out is not None else ()):
        if not hasattr(t, "is_cuda") or not t.is_cuda:
            raise ArgumentError(f"attention: {name} must be a torch CUDA tensor, got "
                                f"{type(t).__name__}")
        if t.dim() != 4:
            raise ArgumentError(f"attention: {name} must be [B, H, S, D], got shape "
                                f"{list(t.shape)}")
        if t.shape != q.shape or t.dtype != q.dtype or t.device != q.device:
            raise ArgumentError(f"attention: {name} is {list(t.shape)} {t.dtype} on {t.device}, "
                                f"but q is {list(q.shape)} {q.dtype} on {q.device}")
        if not t.is_contiguous():
            raise ArgumentError(f"attention: {name} must be contiguous (call .contiguous())")
    dtype = _TORCH_NAMES.get(str(q.dtype))
    if dtype is None:
        raise ArgumentError(f"attention: q has dtype {q.dtype}; float16 or bfloat16 needed")
    B, H, S, D = q.shape
    try:
        kernel = attention_kernel(B, H, S, D, dtype, causal, scale, config=config)
    except (ShapeError, TypeError) as err:
        raise ArgumentError(str(err)) from None
    if out is None:
        import torch
        out = torch.empty_like(q)
    kernel(q.view(-1, D), k.view(-1, D), v.view(-1, D), out.view(-1, D))
    return out
