"""FlashAttention forward on Hopper (sm_90a), in the kernel language.

    O = softmax(Q K^T * scale [+ causal mask]) V        per (batch, head)

Q and O are [B, H, Sq, D] tensors, K and V [B, Hkv, Skv, D] with H = group * Hkv (grouped-query
attention: query head h reads K/V head h // group; MQA is Hkv = 1), each contiguous and seen as
a matrix of rows (B*H*Sq x D, B*Hkv*Skv x D). A work item is one BQ = 128-row block of one query
head's output, which walks its K/V head's keys in BKV-row blocks (128; 64 at D = 256). The grid
is persistent: one CTA per SM, each taking every SMS-th item (a head's query blocks are
consecutive items, and a group's query heads consecutive heads, so the CTAs at work share their
K and V in L2; causal items come longest first, and every other round of SMS items is dealt
back to front so that the CTAs' work evens out), so the producer loads the next item's Q and
keys while the consumers finish the last one.

- warpgroup 0 is the producer: one elected thread loads an item's Q block into a stage ring
  of Q_STAGES (two where they fit, D <= 128: the next item's Q loads while this one's last key
  blocks are read; one at D = 256, which waits for the consumers' last Q K^T), then
  K and V of each key block by TMA into STAGES-deep stage rings (tilemlir/kernels/parts/ring.py)
  that advance in step. K and V have their own `full` barriers (so Q K^T can start before V
  has landed) and their own `empty` barriers (K of a block is free as soon as Q K^T has read
  it, V only after P V), each freed by both consumers.
- warpgroups 1 and 2 are the consumers, 64 query rows each (wgmma's M). Per key block j:
    S = Q K^T                    wgmma from shared memory, fp32 in registers (64 x BKV)
    [masked blocks: S = -inf at keys a row must not see]
    m' = max(m, rowmax(S) * c)   c = scale * log2(e): the softmax runs in base 2
    P = exp2(S * c - m')         ex2.approx, in the registers S came in
    l = l * exp2(m - m') + rowsum(P)
    O = O * exp2(m - m') + P V   P cast to the input type in registers, in exactly the
                                 layout wgmma reads its A operand from registers (the
                                 accumulator fragment of S is the A fragment of P V), and V
                                 read from shared memory as an MN-major (transposed) B
  and at the end O / l is cast and written to global memory, OUT_COLS (32) columns at a time,
  so that the cast needs 8 registers, not a tile of D.
  PIPELINE=True (the default) overlaps the two GEMMs with the softmax inside each consumer:
  block j's Q K^T and block j - 1's P V are issued together, and the softmax of block j runs
  while P V still occupies the tensor cores (O is rescaled once P V has landed).
  PINGPONG=True (the default) overlaps them across the consumers: they issue their wgmma in
  turns (bar.sync on their own named barrier, bar.arrive on the other's), so that one's
  softmax runs while the other's GEMMs do.
  Row statistics (m, l, the rescale factor) live in the accumulator's column-vector layout:
  each thread keeps the rows it holds, replicated over the four lanes of a row, so the row
  max and sum are a thread fold plus two shuffles and every broadcast stays in registers.

Head dims: 64 and 128 are one or two 64-column chunks with the 128-byte swizzle, each its own
TMA box and its own wgmma K-chunk / N-chunk; 96 is three 32-column chunks with the 64-byte
swizzle (no padding: Q K^T is 6 k16 steps, P V one n96 chain); 256 is four 64-column chunks
with key blocks of 64 rows (BKV), which keeps two stages of K and V beside Q in 193 KiB of
shared memory and the 64 x 256 output accumulator, S and P in a consumer's 240 registers.

Shapes (general: any Sq, Skv >= 1, each head its own):
- causal attention is aligned to the end, as FlashAttention: query i sees keys up to
  i + diagonal, diagonal = Skv - Sq (>= 0); torch's is_causal (aligned to the start) is
  diagonal = 0. A query block stops at its last visible key block; the blocks that hold keys
  past some row's diagonal are masked.
- a ragged key tail stays inside its head: the last key block is loaded shifted back to end
  at the head's last key (TMA, all BKV rows inside the head), and the keys it repeats from the
  block before are masked; a head with fewer keys than a block (Skv < BKV) is loaded by the
  producer warpgroup with masked cp.async (zeros past Skv), so no key or value of the next
  head is ever read. Masking is an iota / compare / select on the scores of the blocks that
  need it, nothing elsewhere.
- a ragged query tail reads the next rows of Q (each row's softmax is its own) and stores
  only the head's own rows (masked stores).
- run-time shapes (B = H = S = None): Q's and K's rows are run-time dims (T.dynamic) and the
  kernel takes Sq, Skv (and, causal, the diagonal) as arguments after O, so one compile
  serves every batch, head count and length; the grid is min(Q's rows, SMS) CTAs.
With B, H and S fixed, Sq = Skv a multiple of 128, D 64 or 128 and no grouping, the kernel
takes the same path as before these general shapes.

Q_STAGES and OUT_COLS against the kernel before them (one stage of Q, O cast whole), one run
(results/2026-12-03-session12/runC): 1.6% faster in the geometric mean of 12 cases at D 64 to
128 (0.9% without 8x16 x 4096 f16, 11% there), from 2.1% slower (8x16 x 1000 causal) to 4.2%
faster (2x16 x 1500 D 96 causal); D 256 2.5% faster without a mask, level causal. Measured
and not kept there: the pipeline carried across items (the next item's Q K^T beside this
one's last P V, so that no turn has one GEMM): 0.4-8% slower in all 12 cases, with more
registers live at the item boundary (`carry-v4.patch` beside the results; runB's first form,
`carry-v3.patch`, the next item's softmax beside that P V, spilled in the key-block loop and
was up to 9% slower in 8 of 12 cases).

On the H200 (results/2026-12-01-attention/, fixed shapes): 0.94x cuDNN's attention (torch's
fastest backend) over batch 8 x 16 heads x seq 1024-16384, D 64 / 128, causal or not;
1.00-1.03x at D 128 without a mask from seq 4096; 1.3-1.8x FlashAttention-2 (the general
shapes and the run-time-shape kernel: bench/attention.py --suite general, --fixed-shapes).
Measured and not kept: exp2 of P in pairs of the input type (ex2.approx.f16x2, half the MUFU
work), 10-17% slower at seq 4096 on the H200 (the new P needs a second register tile while
P V still reads the old one; results/2026-12-01-attention/), so the exponentials stay f32.
"""

import math
import sys
import threading

import tilemlir.lang as T
from tilemlir.kernels.parts import (SHARED_MEMORY_BYTES, Barriers, Persistent, ShapeError,
                                    warp_specialized)
from tilemlir.lang import wgmma_a_layout, wgmma_accumulator_layout

Tx = T.tile

_DTYPES = ("float16", "bfloat16")
HEAD_DIMS = (64, 96, 128, 256)
BQ = 128                # query rows per CTA (two consumer warpgroups of 64)
LOG2E = 1.4426950408889634
NEG_INF = float("-inf")
M_INIT = -1.0e30        # a running max below any score, whose exp2(m - m') is 0, never NaN
PRODUCER_BARRIER = 1    # named barrier of the producer warpgroup (the consumers take 3 and 4)
Q_ROWS = T.dynamic("q_rows")    # run-time shapes: B*H*Sq
KV_ROWS = T.dynamic("kv_rows")  # and B*Hkv*Skv


def key_block(D: int) -> int:
    """BKV, the key / value rows per block: 128, or 64 at D = 256 (shared memory, registers)."""
    return 64 if D == 256 else 128


def _chunk(D: int) -> tuple[int, str]:
    """(columns per chunk, swizzle) of the shared Q, K and V tiles: 64-column 128-byte rows, or
    for D = 96 32-column 64-byte rows (three chunks, no padding)."""
    return (32, "64B") if D == 96 else (64, "128B")


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ShapeError(f"flash_attention: {name}={value!r} must be a positive integer")


def _shared_bytes(D, STAGES, BKV, Q_STAGES):
    """Shared memory of the kernel: 1 KiB of barriers, Q_STAGES stages of Q, STAGES of K and V."""
    return 1024 + (Q_STAGES * BQ + 2 * STAGES * BKV) * D * 2


def q_stages(D, STAGES=2, BKV=None):
    """Stages of Q by default: two where they fit beside the K and V stages (D <= 128 with two
    of them), so that the producer loads the next item's Q while this one's last key blocks
    are read; else one."""
    BKV = key_block(D) if BKV is None else BKV
    return 2 if _shared_bytes(D, STAGES, BKV, 2) <= SHARED_MEMORY_BYTES else 1


def _check(B, H, S, D, dtype, causal, S_kv, group, STAGES, BKV, Q_STAGES, OUT_COLS):
    """Refuses what cannot be built, naming the parameter; returns Q_STAGES (its default where
    None)."""
    if dtype not in _DTYPES:
        raise ShapeError(f"flash_attention: dtype must be one of {_DTYPES}, got {dtype!r}")
    _positive("group", group)
    if (B, H, S) == (None, None, None):
        if S_kv is not None:
            raise ShapeError("flash_attention: with run-time shapes (B = H = S = None), S_kv "
                             "is a kernel argument too: leave it None")
    else:
        for name, value in (("B", B), ("H", H), ("S", S)):
            if value is None:
                raise ShapeError(f"flash_attention: {name} is None but not all of B, H, S are "
                                 f"(None for all three: shapes known at run time)")
            _positive(name, value)
        _positive("S_kv", S_kv)
        if H % group:
            raise ShapeError(f"flash_attention: H={H} query heads is not a multiple of "
                             f"group={group} (query heads per K/V head)")
        if causal and S > S_kv:
            raise ShapeError(f"flash_attention: causal attention aligned to the end needs "
                             f"S <= S_kv, got S={S} queries and S_kv={S_kv} keys")
    if D not in HEAD_DIMS:
        raise ShapeError(f"flash_attention: head dim D={D!r} must be one of {HEAD_DIMS}")
    if isinstance(STAGES, bool) or not isinstance(STAGES, int) or STAGES < 1:
        raise ShapeError(f"flash_attention: STAGES={STAGES!r} must be an integer, at least 1")
    if isinstance(BKV, bool) or not isinstance(BKV, int) or BKV % 16 or not 16 <= BKV <= 256:
        raise ShapeError(f"flash_attention: BKV={BKV!r} must be a multiple of 16 from 16 to "
                         f"256 (k16 steps of P V, one TMA box)")
    if Q_STAGES is None:
        Q_STAGES = q_stages(D, STAGES, BKV)
    if isinstance(Q_STAGES, bool) or not isinstance(Q_STAGES, int) or Q_STAGES not in (1, 2):
        raise ShapeError(f"flash_attention: Q_STAGES={Q_STAGES!r} must be 1 or 2")
    if isinstance(OUT_COLS, bool) or not isinstance(OUT_COLS, int) or OUT_COLS < 8 \
            or OUT_COLS % 8 or D % OUT_COLS:
        raise ShapeError(f"flash_attention: OUT_COLS={OUT_COLS!r} must be a multiple of 8 "
                         f"dividing D={D} (columns of O stored at a time)")
    smem = _shared_bytes(D, STAGES, BKV, Q_STAGES)
    if smem > SHARED_MEMORY_BYTES:
        raise ShapeError(f"flash_attention: {STAGES} stages of K and V at D={D} need {smem} "
                         f"bytes of shared memory with {Q_STAGES} of Q, more than a Hopper "
                         f"CTA's 227 KiB")
    return Q_STAGES


def _item(u, q_blocks, causal: bool):
    """(head, query block) of work item u: a head's query blocks are consecutive items (the
    CTAs working at once share its K and V in L2), longest rows of keys first when causal.
    (Rounds of one length, every head's longest block first, measured 7% slower causal at
    D = 128: results/2026-12-01-attention/.)"""
    head = u // q_blocks
    qb = u % q_blocks
    if causal:
        qb = q_blocks - 1 - qb
    return head, qb


def _dealt(v, ctas, units):
    """The work item of a persistent CTA's v-th slot (v = pid + i * ctas in round i): round
    by round in order, every other full round dealt back to front (CTA c takes item
    ctas - 1 - c), so that with items longest first within each head (causal) no CTA keeps
    drawing the long ones. Taking every ctas-th item instead left CTAs with 1.2-1.5 times the
    mean work at S = 1000-3000 (whenever ctas is not a multiple of the query blocks per head;
    1.07-1.10 dealt so), the shapes where causal attention trailed cuDNN most
    (results/2026-12-02-session4/runB). A partial last round keeps its order, so that the
    items stay a permutation of 0 .. units - 1. Ints or device values alike."""
    i = v // ctas
    c = v - i * ctas
    # 1 where round i is odd and full, else 0 (no select on scalars: clamped arithmetic)
    back = (i % 2) * T.min(1, T.max(0, units - (i + 1) * ctas + 1))
    return v + back * (ctas - 1 - 2 * c)


def flash_attention(B, H, S, D, dtype="float16", causal=False, scale=None, *, S_kv=None,
                    group=1, STAGES=2, BKV=None, PIPELINE=True, PINGPONG=True, SMS=132,
                    PRODUCER_REGS=24, CONSUMER_REGS=240, fast_exp=True, DEALT=True,
                    Q_STAGES=None, OUT_COLS=32):
    """The kernel for q, o of shape [B, H, S, D] and k, v of [B, H / group, S_kv, D]
    (contiguous, given as matrices of rows: (B*H*S) x D and (B*H/group*S_kv) x D).

    B, H, S: ints (the shapes fixed when compiled), or all three None: shapes known at run
    time, the kernel then taking (Q, K, V, O, Sq, Skv) and, causal, a last argument
    `diagonal` (query i sees keys up to i + diagonal: Skv - Sq aligns to the end, as
    FlashAttention, 0 to the start, as torch's is_causal; it must be >= 0). S_kv: keys per
    head (default S). group: query heads per K/V head (GQA). causal with fixed shapes is
    aligned to the end. scale: the softmax scale (> 0), 1 / sqrt(D) by default. BKV: keys
    per block (default key_block(D)). SMS: the persistent grid (132 SMs on the H200), each CTA
    taking every SMS-th (head, query block) item; causal, with DEALT, every other round of
    them dealt back to front (_dealt). Q_STAGES: stages of Q, 1 or 2 (default q_stages(D):
    two where the shared memory holds them); OUT_COLS: columns of O cast and stored at a
    time."""
    dynamic = (B, H, S) == (None, None, None)
    if not dynamic and S_kv is None:
        S_kv = S
    if BKV is None:
        BKV = key_block(D)
    Q_STAGES = _check(B, H, S, D, dtype, causal, S_kv, group, STAGES, BKV, Q_STAGES, OUT_COLS)
    if isinstance(SMS, bool) or not isinstance(SMS, int) or SMS < 1:
        raise ShapeError(f"flash_attention: SMS={SMS!r} must be a positive integer")
    if scale is None:
        scale = 1.0 / math.sqrt(D)
    if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not scale > 0 \
            or math.isinf(scale):
        raise ShapeError(f"flash_attention: scale={scale!r} must be a positive finite number")
    c = float(scale) * LOG2E
    CHUNK, swizzle = _chunk(D)
    chunks = D // CHUNK
    # the shapes before general ones: the kernel exactly as it was for them (ptx_hashes)
    simple = not dynamic and S == S_kv and S % BKV == 0 and group == 1 and D in (64, 128) \
        and BKV == BQ
    if dynamic:
        q_rows, kv_rows = Q_ROWS, KV_ROWS
        grid = None
    else:
        heads = B * H
        q_rows, kv_rows = heads * S, heads // group * S_kv
        q_blocks = -(-S // BQ)
        kv_blocks = -(-S_kv // BKV)
        grid = Persistent(heads * q_blocks, SMS)
    # which general mechanisms the kernel needs (static shapes: only those their shapes need)
    ragged_q = dynamic or S % BQ != 0
    short_kv = dynamic or S_kv < BKV            # masked cp.async of a head's few keys
    shifted_kv = dynamic or (S_kv > BKV and S_kv % BKV != 0)   # a last block shifted back
    masking = causal or dynamic or S_kv % BKV != 0
    qk_layout = T.mma_shared_layout(dtype, swizzle, (Q_STAGES * chunks * BQ, CHUNK))
    k_layout = T.mma_shared_layout(dtype, swizzle, (STAGES * chunks * BKV, CHUNK))
    v_layout = T.mma_shared_layout(dtype, swizzle, (STAGES * BKV, D))
    s_layout = wgmma_accumulator_layout(64, BKV)
    p_layout = wgmma_a_layout(64, BKV)
    stat_layout = s_layout.column_vector((64, BKV))
    kv_bytes = BKV * D * 2

    @T.prim_func
    def flash_attention(Q: T.Buffer((q_rows, D), dtype), K: T.Buffer((kv_rows, D), dtype),
                        V: T.Buffer((kv_rows, D), dtype), O: T.Buffer((q_rows, D), dtype),
                        Sq: T.int32 if dynamic else None, Skv: T.int32 if dynamic else None,
                        diagonal: T.int32 if dynamic and causal else None):
        if dynamic:
            ctas = T.min(q_rows, SMS)
            pid = T.cta_id([ctas])
            q_len, kv_len = T.max(Sq, 1), T.max(Skv, 1)     # (no division by 0 whatever comes)
            n_heads = q_rows // q_len
            n_q_blocks = T.ceildiv(q_len, BQ)
            n_kv_blocks = T.ceildiv(kv_len, BKV)
            units = n_heads * n_q_blocks
            offset = diagonal if causal else 0
        else:
            pid = T.cta_id([grid.ctas])
            q_len, kv_len, n_q_blocks, n_kv_blocks = S, S_kv, q_blocks, kv_blocks
            offset = S_kv - S
        wg = T.warpgroup_id([3])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])

        def walk():
            # the slots of this CTA (item(v) gives each one's work item)
            if dynamic:
                return T.serial(pid, units, ctas)
            return grid.walk(pid)

        def item(v):
            # (head, query block) of slot v: causal items dealt (_dealt) so that the CTAs'
            # work evens out
            if causal and DEALT:
                if dynamic:
                    return _item(_dealt(v, ctas, units), n_q_blocks, causal)
                return _item(_dealt(v, grid.workers, grid.units), n_q_blocks, causal)
            return _item(v, n_q_blocks, causal)

        def key_blocks(qb):
            # key blocks item qb walks: all, or causal up to the one holding the last row's
            # last visible key (qb * BQ + BQ - 1 + offset)
            if simple:
                return qb + 1 if causal else n_q_blocks
            if causal:
                return T.min(n_kv_blocks, (qb * BQ + BQ - 1 + offset) // BKV + 1)
            return n_kv_blocks

        def first_masked(qb):
            # the first key block that hides a key from some row: the ragged tail's block
            # (Skv // BKV; n_kv_blocks without a tail), or causal the first that holds a key
            # past the first row's diagonal
            tail = kv_len // BKV
            if causal:
                return T.min((qb * BQ + offset + 1) // BKV, tail)
            return tail

        def first_key(j):
            # the key of block j's first row: j * BKV, but the last block of a ragged tail is
            # shifted back to end at the head's last key (when the head has a block of keys)
            if shifted_kv:
                return T.min(j * BKV, T.max(kv_len - BKV, 0))
            return j * BKV

        def kv_head(head):
            return head // group if group > 1 else head

        pool = T.SMEMPool()
        barriers = Barriers(pool)
        # The item's Q (a ring of Q_STAGES): landed; both consumers' last Q K^T read it.
        q_ring = barriers.ring(Q_STAGES, 2)
        # K and V of a key block: each landed, each read by both consumers (K once Q K^T has
        # read it, so that its stage refills while P V still reads V).
        k_ring, v_ring = barriers.rings(2, STAGES, 2)
        pool.move_base_to(1024)
        Qs = pool.alloc((Q_STAGES * chunks * BQ, CHUNK), dtype, layout=qk_layout)
        Ks = pool.alloc((STAGES * chunks * BKV, CHUNK), dtype, layout=k_layout)
        Vs = pool.alloc((STAGES * BKV, D), dtype, layout=v_layout)
        pool.commit()
        barriers.init(wg, warp, lane)

        def load_q(n, q0):
            qs = q_ring.acquire(n, BQ * D * 2)
            for qc in T.unroll(chunks):
                at = (qs * chunks + qc) * BQ
                Tx.copy_async(Qs[at:at + BQ, :],
                              Q[q0:q0 + BQ, qc * CHUNK:qc * CHUNK + CHUNK],
                              q_ring.full.ptr_to([qs]))

        def load_kv(s, free, k0):
            # one thread: K and V of a key block from row k0, by TMA
            k_ring.acquire_stage(s, free, kv_bytes)
            for kc in T.unroll(chunks):
                ks = (s * chunks + kc) * BKV
                Tx.copy_async(Ks[ks:ks + BKV, :],
                              K[k0:k0 + BKV, kc * CHUNK:kc * CHUNK + CHUNK],
                              k_ring.full.ptr_to([s]))
            v_ring.acquire_stage(s, free, kv_bytes)
            Tx.copy_async(Vs[s * BKV:s * BKV + BKV, :], V[k0:k0 + BKV, :],
                          v_ring.full.ptr_to([s]))

        def load_short_kv(s, free, kv0):
            # every producer thread: a head's kv_len < BKV keys and values by masked cp.async
            # (zeros past them: nothing of the next head), then one thread fills both stages
            rows = T.min(kv_len, kv_rows - kv0)
            T.ptx.mbarrier.try_wait(k_ring.empty.ptr_to([s]), free)
            T.ptx.mbarrier.try_wait(v_ring.empty.ptr_to([s]), free)
            for kc in T.unroll(chunks):
                ks = (s * chunks + kc) * BKV
                cols = slice(kc * CHUNK, kc * CHUNK + CHUNK)
                Tx.wg.copy_async(Ks[ks:ks + BKV, :], K[kv0:kv0 + BKV, cols],
                                 bounds=(rows, CHUNK))
                Tx.wg.copy_async(Vs[s * BKV:s * BKV + BKV, cols], V[kv0:kv0 + BKV, cols],
                                 bounds=(rows, CHUNK))
            T.ptx.cp_async.commit_group()
            T.ptx.cp_async.wait_group(0)
            T.ptx.fence.proxy_async("shared::cta")
            T.cuda.bar_sync(PRODUCER_BARRIER, 128)   # every thread's copies, then one arrival
            if warp == 0:
                if lane == 0:
                    T.ptx.mbarrier.arrive(k_ring.full.ptr_to([s]))
                    T.ptx.mbarrier.arrive(v_ring.full.ptr_to([s]))

        def producer():
            # per item, Q, then K and V of each key block through the ring
            it: T.int32 = 0                      # key blocks loaded so far
            n: T.int32 = 0                       # items so far
            for u in walk():
                head, qb = item(u)
                q0 = head * q_len + qb * BQ
                kv0 = kv_head(head) * kv_len
                blocks = key_blocks(qb)
                if short_kv:
                    # every thread of the warpgroup is here, item by item together (the
                    # masked copies of a short head need them all; one thread issues TMA)
                    T.cuda.bar_sync(PRODUCER_BARRIER, 128)
                    if warp == 0:
                        if lane == 0:
                            load_q(n, q0)
                    if kv_len < BKV:                 # one block, by masked cp.async
                        load_short_kv(k_ring.stage(it), k_ring.free_phase(it), kv0)
                    else:
                        if warp == 0:
                            if lane == 0:
                                for j in T.serial(blocks):
                                    load_kv(k_ring.stage(it + j), k_ring.free_phase(it + j),
                                            kv0 + first_key(j))
                    it += blocks
                else:
                    load_q(n, q0)
                    for j in T.serial(blocks):
                        s = k_ring.stage(it)         # K's and V's, in step
                        if simple:
                            k0 = kv0 + j * BKV
                            load_kv(s, k_ring.free_phase(it), k0)
                        else:
                            load_kv(s, k_ring.free_phase(it), kv0 + first_key(j))
                        it += 1
                n += 1

        def consumer():
            # 64 query rows of each item each
            row = (wg - 1) * 64
            scores = T.alloc_local((64, BKV), "float32", layout=s_layout)
            probs = T.alloc_local((64, BKV), dtype, layout=p_layout)
            acc = T.alloc_local((64, D), "float32", layout=wgmma_accumulator_layout(64, D))
            out = T.alloc_local((64, OUT_COLS), dtype,
                                layout=wgmma_accumulator_layout(64, OUT_COLS))
            m = T.alloc_local((64, 1), "float32", layout=stat_layout)
            m_new = T.alloc_local((64, 1), "float32", layout=stat_layout)
            l = T.alloc_local((64, 1), "float32", layout=stat_layout)
            rescale = T.alloc_local((64, 1), "float32", layout=stat_layout)
            if masking:
                # Masks from two broadcast vectors (key index along a block, a per-row limit):
                # 16 + 2 registers, not 2 tiles.
                key = T.alloc_local((BKV,), "int32", layout=s_layout.row_vector((64, BKV)))
                query = T.alloc_local((64, 1), "int32", layout=stat_layout)
                hidden = T.alloc_local((64, BKV), "bool", layout=s_layout)
                Tx.wg.iota(key, axis=0)
                if simple:
                    Tx.wg.iota(query, axis=0, offset=row)

            def issue_scores(i, qs):
                # scores = Q K_i^T (i counts key blocks over items: the ring's stage and
                # phase; Q from stage qs of its ring), one committed wgmma group per chunk of D
                s = k_ring.wait(i)
                for ch in T.unroll(chunks):
                    at = (s * chunks + ch) * BKV
                    q_at = (qs * chunks + ch) * BQ + row
                    Tx.wg.gemm_async(scores, Qs[q_at:q_at + 64, :],
                                     Ks[at:at + BKV, :], accum=ch > 0)

            def issue_values(i):
                # acc += P V_i: P from registers, V_i MN-major from shared memory (D in
                # chunks, one TMA box each), one committed wgmma group
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

            def mask(j, qb):
                # scores = -inf at the keys of block j that a row must not see: past the head's
                # last key, past the row's diagonal (causal), or repeated from the block before
                # (a shifted last block)
                k0 = first_key(j)
                past = T.int32(kv_len - k0)     # columns from here on are past the last key
                if causal:
                    Tx.wg.iota(query, axis=0, offset=qb * BQ + row + offset + 1 - k0)
                    Tx.wg.minimum(query, query, past)
                    Tx.wg.compare(hidden, key, ">=", query)
                else:
                    Tx.wg.compare(hidden, key, ">=", past)
                Tx.wg.select(scores, hidden, NEG_INF, scores)
                if shifted_kv:
                    repeated = T.int32(j * BKV - k0)   # keys the block before had
                    if repeated > 0:
                        Tx.wg.compare(hidden, key, "<", repeated)
                        Tx.wg.select(scores, hidden, NEG_INF, scores)

            def online_softmax(j, masked, qb):
                # m' = max(m, rowmax(S) c); scores = exp2(S c - m'); l = l 2^(m - m') + rowsum
                if simple:
                    if causal:
                        if masked:
                            Tx.wg.compare(hidden, key, ">", query)
                            Tx.wg.select(scores, hidden, NEG_INF, scores)
                elif masking:
                    if masked:
                        mask(j, qb)
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
            for u in walk():
                head, qb = item(u)
                q0 = head * q_len + qb * BQ
                blocks = key_blocks(qb)
                first = None if simple else first_masked(qb)    # the first block to mask
                Tx.wg.fill(m, M_INIT)
                Tx.wg.fill(l, 0.0)
                Tx.wg.fill(acc, 0.0)
                qs = q_ring.wait(n)
                if PIPELINE:
                    # P V of block j - 1 runs on the tensor cores while the softmax of block
                    # j (whose Q K^T was issued just before it) runs on the ALUs.
                    take_turn()
                    issue_scores(it, qs)
                    pass_turn()
                    T.ptx.wgmma.wait_group(0)
                    release(k_ring, it)
                    if blocks == 1:
                        release(q_ring, qs)             # the item's last read of Q is done
                    online_softmax(0, blocks == 1 if simple else first <= 0, qb)
                    Tx.wg.cast(probs, scores)
                    for j in T.serial(1, blocks):
                        take_turn()
                        issue_scores(it + j, qs)
                        issue_values(it + j - 1)
                        pass_turn()
                        T.ptx.wgmma.wait_group(1)       # Q K_j^T is done, P V_(j-1) may run
                        release(k_ring, it + j)
                        if j == blocks - 1:
                            release(q_ring, qs)
                        online_softmax(j, j == blocks - 1 if simple else j >= first, qb)
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
                        issue_scores(it + j, qs)
                        pass_turn()
                        T.ptx.wgmma.wait_group(0)
                        release(k_ring, it + j)
                        if j == blocks - 1:
                            release(q_ring, qs)
                        online_softmax(j, j == blocks - 1 if simple else j >= first, qb)
                        Tx.wg.mul(acc, acc, rescale)
                        Tx.wg.cast(probs, scores)
                        take_turn()
                        issue_values(it + j)
                        pass_turn()
                        T.ptx.wgmma.wait_group(0)
                        release(v_ring, it + j)
                # O = acc / l in the input type, the head's own rows, OUT_COLS columns at a
                # time (a few registers for the cast, not a tile of D)
                Tx.wg.div(l, 1.0, l)
                for c0 in T.unroll(0, D, OUT_COLS):
                    part = acc[:, c0:c0 + OUT_COLS]
                    Tx.wg.mul(part, part, l)
                    Tx.wg.cast(out, part)
                    rows = O[q0 + row:q0 + row + 64, c0:c0 + OUT_COLS]
                    if ragged_q:                        # the head's own rows only
                        Tx.wg.copy(rows, out, bounds=(q_len - qb * BQ - row, OUT_COLS))
                    else:
                        Tx.wg.copy(rows, out)
                it += blocks
                n += 1
            if PINGPONG:
                if wg == 1:
                    T.cuda.bar_sync(3, 256)             # consumer 2's last pass: none pending

        warp_specialized(wg, warp, PRODUCER_REGS, CONSUMER_REGS, producer, consumer,
                         whole_warpgroup=short_kv)

    return flash_attention


# ------------------------------------------------------------------------------ front door
_KERNELS: dict = {}
_KERNELS_LOCK = threading.Lock()
_TORCH_NAMES = {"torch.float16": "float16", "torch.bfloat16": "bfloat16"}


def attention_kernel(D, dtype="float16", causal=False, scale=None, group=1, target=None,
                     config=None):
    """flash_attention(None, None, None, D, ...) compiled, once per head dim, dtype, causal,
    scale, group, configuration and target: every batch, head count and sequence length runs
    on it (the kernel takes Sq, Skv and, causal, the diagonal). `config`: more keyword
    arguments of flash_attention (STAGES, PIPELINE, ...)."""
    config = dict(config or {})
    key = (D, dtype, bool(causal), scale, group, target, tuple(sorted(config.items())))
    with _KERNELS_LOCK:
        compiled = _KERNELS.get(key)
    if compiled is None:
        import tilemlir
        compiled = tilemlir.compile(flash_attention(None, None, None, D, dtype, bool(causal),
                                                    scale, group=group, **config),
                                    target=target)
        with _KERNELS_LOCK:
            compiled = _KERNELS.setdefault(key, compiled)
    return compiled


def _causal_variant(attn_mask, is_causal):
    """None (no mask), "upper_left" (torch's is_causal) or "lower_right" (FlashAttention's),
    from scaled_dot_product_attention's attn_mask and is_causal."""
    from tilemlir.runtime.args import ArgumentError
    if not isinstance(is_causal, bool):
        raise ArgumentError(f"attention: is_causal must be a bool, got "
                            f"{type(is_causal).__name__}")
    if attn_mask is None:
        return "upper_left" if is_causal else None
    try:
        from torch.nn.attention.bias import CausalBias, CausalVariant
    except ImportError:        # a torch without causal biases: no mask of ours to give
        CausalBias = CausalVariant = None
    if CausalBias is None or not isinstance(attn_mask, CausalBias):
        raise ArgumentError(f"attention: attn_mask must be None or a causal bias "
                            f"(torch.nn.attention.bias.causal_upper_left / causal_lower_right); "
                            f"other masks are not supported, got {type(attn_mask).__name__}")
    if is_causal:
        raise ArgumentError("attention: attn_mask is a causal bias and is_causal=True: give "
                            "one of them (as scaled_dot_product_attention requires)")
    return "lower_right" if attn_mask.variant == CausalVariant.LOWER_RIGHT else "upper_left"


def _check_tensor(name, t, dtype=None):
    from tilemlir.runtime.args import ArgumentError
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(t, torch.Tensor):
        raise ArgumentError(f"attention: {name} must be a torch CUDA tensor, got "
                            f"{type(t).__name__}")
    if t.dim() != 4:
        raise ArgumentError(f"attention: {name} must be 4-D [batch, heads, positions, head "
                            f"dim], got shape {list(t.shape)}")
    if dtype is not None and t.dtype != dtype:
        raise ArgumentError(f"attention: {name} is {t.dtype} but query is {dtype}")


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
              enable_gqa=False, *, out=None, config=None):
    """torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask,
    dropout_p, is_causal, scale, enable_gqa) for torch CUDA tensors, float16 or bfloat16,
    any strides: query and key [B, H, Sq, D] / [B, Hkv, Skv, D], value [B, Hkv, Skv, Dv], H a
    multiple of Hkv (enable_gqa=True where they differ), any Sq and Skv >= 1. The kernels take
    D = Dv in 64, 96, 128 and 256; other head dims up to 256 (D 32, 80, 192 with Dv 128, ...)
    run on the next one, q, k and v padded with zeros (the scores and the kept columns of the
    output are unchanged; the default scale stays 1 / sqrt(D)).

    is_causal=True is torch's causal mask (query i sees keys up to i, aligned to the start);
    attn_mask=torch.nn.attention.bias.causal_lower_right(Sq, Skv) aligns it to the end, as
    FlashAttention (query i sees keys up to i + Skv - Sq; Sq <= Skv), and causal_upper_left is
    is_causal. Other masks, dropout and a scale <= 0 are refused with ArgumentError naming the
    parameter. Returns `out` (a new tensor unless given), written on the current stream. One
    compile per head dim, dtype, causal or not, scale and group size (attention_kernel): a new
    batch, head count or sequence length compiles nothing. `config`: keyword arguments of
    flash_attention (STAGES, PIPELINE, ...) other than the defaults."""
    from tilemlir.runtime.args import ArgumentError
    variant = _causal_variant(attn_mask, is_causal)
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)) or dropout_p != 0:
        raise ArgumentError(f"attention: dropout_p={dropout_p!r}: dropout is not supported "
                            f"(a forward pass without dropout: dropout_p=0.0)")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))
                              or not 0 < scale < math.inf):
        raise ArgumentError(f"attention: scale={scale!r} must be None (1 / sqrt(head dim)) or "
                            f"a positive finite number")
    if not isinstance(enable_gqa, bool):
        raise ArgumentError(f"attention: enable_gqa must be a bool, got "
                            f"{type(enable_gqa).__name__}")
    if config is not None and not (isinstance(config, dict)
                                   and all(isinstance(key, str) for key in config)):
        raise ArgumentError(f"attention: config must be None or a dict of flash_attention's "
                            f"keyword arguments, got {config!r}")
    _check_tensor("query", query)
    for name, t in (("key", key), ("value", value)):
        _check_tensor(name, t, query.dtype)
    dtype = _TORCH_NAMES.get(str(query.dtype))
    if dtype is None:
        raise ArgumentError(f"attention: query has dtype {query.dtype}; float16 or bfloat16 "
                            f"needed")
    B, H, Sq, D = query.shape
    Hkv, Skv = key.shape[1], key.shape[2]
    if key.shape[0] != B or key.shape[3] != D:
        raise ArgumentError(f"attention: key {list(key.shape)} must be [B, Hkv, Skv, D] with "
                            f"query's B={B} and D={D} (query is {list(query.shape)})")
    if value.shape[:3] != key.shape[:3]:
        raise ArgumentError(f"attention: value {list(value.shape)} must be [B, Hkv, Skv, Dv] "
                            f"with key's B, Hkv and Skv (key is {list(key.shape)})")
    Dv = value.shape[3]
    if not 1 <= D <= HEAD_DIMS[-1] or not 1 <= Dv <= HEAD_DIMS[-1]:
        raise ArgumentError(f"attention: head dims from 1 to {HEAD_DIMS[-1]} are supported, "
                            f"got {D} for query and key and {Dv} for value")
    if Hkv != H and not enable_gqa:
        raise ArgumentError(f"attention: query has {H} heads and key {Hkv}: pass "
                            f"enable_gqa=True for grouped-query attention")
    if Hkv == 0 or H % Hkv:
        raise ArgumentError(f"attention: enable_gqa needs query's {H} heads to be a multiple of "
                            f"key's {Hkv}")
    if attn_mask is not None and (attn_mask.seq_len_q, attn_mask.seq_len_kv) != (Sq, Skv):
        raise ArgumentError(f"attention: attn_mask is a causal bias for {attn_mask.seq_len_q} "
                            f"queries and {attn_mask.seq_len_kv} keys, but query has {Sq} and "
                            f"key {Skv}")
    if variant == "lower_right" and Sq > Skv:
        raise ArgumentError(f"attention: attn_mask aligns the causal mask to the end with more "
                            f"queries ({Sq}) than keys ({Skv}): the first rows would see no key "
                            f"(torch gives NaN there); not supported")
    if out is not None:
        _check_tensor("out", out, query.dtype)
        if tuple(out.shape) != (B, H, Sq, Dv):
            raise ArgumentError(f"attention: out must have shape {[B, H, Sq, Dv]} (query's, "
                                f"with value's head dim), got {list(out.shape)}")
    for name, t in (("query", query), ("key", key), ("value", value)) + \
            ((("out", out),) if out is not None else ()):
        if not t.is_cuda:
            raise ArgumentError(f"attention: {name} must be a torch CUDA tensor, got a tensor "
                                f"on {t.device}")
        if t.device != query.device:
            raise ArgumentError(f"attention: {name} is on {t.device} but query on "
                                f"{query.device}")
    if B * H * Sq and not Skv:
        raise ArgumentError("attention: key has no positions (Skv = 0): there is nothing to "
                            "attend to")
    import torch
    if out is None:
        out = query.new_empty((B, H, Sq, Dv))
    if not B * H * Sq:
        return out
    padded = D if D == Dv and D in HEAD_DIMS else next(h for h in HEAD_DIMS if h >= max(D, Dv))
    result = out
    if padded != D or padded != Dv:           # zeros: q.k and the first Dv columns unchanged
        scale = 1.0 / math.sqrt(D) if scale is None else scale
        query, key, value = (torch.nn.functional.pad(t, (0, padded - t.shape[3]))
                             for t in (query, key, value))
        result = query.new_empty((B, H, Sq, padded))
    D = padded
    try:
        kernel = attention_kernel(D, dtype, variant is not None, scale, H // Hkv, config=config)
    except (ShapeError, TypeError) as err:
        raise ArgumentError(f"attention: config: {err}") from None
    diagonal = () if variant is None else (Skv - Sq if variant == "lower_right" else 0,)
    from tilemlir.runtime.args import kernel_input, kernel_output
    query, key, value = map(kernel_input, (query, key, value))    # any strides, alignment
    target = kernel_output(result)
    kernel(query.view(-1, D), key.view(-1, D), value.view(-1, D), target.view(-1, D), Sq, Skv,
           *diagonal)
    if target is not out:
        out.copy_(target[..., :Dv])
    return out
