"""flash_attention on the CPU: what it cannot build is refused up front with the reason; what it
builds compiles to sm_90a PTX that ptxas assembles without spills, with the softmax between the
two wgmma chains and P V reading P from registers and V transposed from shared memory."""

import os
import re
import subprocess
import tempfile
import warnings

import numpy as np
import pytest

import tilemlir
from tilemlir.kernels.attention import ShapeError, attention, flash_attention, q_stages
from tilemlir.runtime.args import ArgumentError
from tilemlir.target.ptx import find_ptxas


def ptxas_warnings(ptx: str) -> str:
    """ptxas -v's messages for sm_90a ('' without ptxas)."""
    ptxas = find_ptxas()
    if ptxas is None:
        return ""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        done = subprocess.run([ptxas, "-arch=sm_90a", "-v", path, "-o", path + ".cubin"],
                              capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stderr


def compiled(*args, **kwargs):
    return tilemlir.compile(flash_attention(*args, **kwargs), target="sm_90a", cache=False)


@pytest.mark.parametrize("args, kwargs, message", [
    ((1, 1, 256, 80), {}, "head dim D=80 must be one of (64, 96, 128, 256)"),
    ((1, 1, 256, 64), dict(dtype="float32"), "dtype must be one of"),
    ((0, 1, 256, 64), {}, "B=0 must be a positive integer"),
    ((1, 1, 256, 64), dict(S_kv=0), "S_kv=0 must be a positive integer"),
    ((1, 6, 256, 64), dict(group=4), "H=6 query heads is not a multiple of group=4"),
    ((1, 2, 256, 64), dict(group=0), "group=0 must be a positive integer"),
    ((1, 1, 300, 64), dict(S_kv=200, causal=True), "needs S <= S_kv, got S=300"),
    ((None, 1, 256, 64), {}, "B is None but not all of B, H, S are"),
    ((None, None, None, 64), dict(S_kv=128), "S_kv is a kernel argument too"),
    ((1, 1, 256, 64), dict(scale=0.0), "scale=0.0 must be a positive finite number"),
    ((1, 1, 256, 128), dict(STAGES=4), "4 stages of K and V at D=128 need"),
    ((1, 1, 256, 256), dict(STAGES=3), "3 stages of K and V at D=256 need"),
    ((1, 1, 256, 64), dict(STAGES=0), "STAGES=0 must be an integer, at least 1"),
    ((1, 1, 256, 64), dict(STAGES="2"), "STAGES='2' must be an integer, at least 1"),
    ((1, 1, 256, 64), dict(Q_STAGES=2.0), "Q_STAGES=2.0 must be 1 or 2"),
    ((1, 1, 256, 64), dict(BKV=72), "BKV=72 must be a multiple of 16 from 16 to 256"),
    ((1, 1, 256, 64), dict(BKV="64"), "BKV='64' must be a multiple of 16 from 16 to 256"),
    ((1, 1, 256, 64), dict(SMS=0), "SMS=0 must be a positive integer"),
    ((1, 1, 256, 256), dict(Q_STAGES=2), "need 263168 bytes of shared memory with 2 of Q"),
    ((1, 1, 256, 64), dict(Q_STAGES=3), "Q_STAGES=3 must be 1 or 2"),
    ((1, 1, 256, 64), dict(Q_STAGES=True), "Q_STAGES=True must be 1 or 2"),
    ((1, 1, 256, 64), dict(OUT_COLS=True), "OUT_COLS=True must be a multiple of 8"),
    ((1, 1, 256, 96), dict(OUT_COLS=64), "OUT_COLS=64 must be a multiple of 8 dividing D=96"),
])
def test_refused_with_the_reason(args, kwargs, message):
    with pytest.raises(ShapeError, match=re.escape(message)):
        flash_attention(*args, **kwargs)


# (D, key block, Q / K / V tensor-map boxes, swizzle bytes, Q K^T k16 steps per block)
HEAD_DIMS = {64: (128, [(128, 64)] * 3, 128, 4), 96: (128, [(128, 32)] * 3, 64, 6),
             128: (128, [(128, 64)] * 3, 128, 8), 256: (64, [(128, 64), (64, 64), (64, 64)], 128, 16)}


@pytest.mark.parametrize("shapes", ["fixed", "run_time"])
@pytest.mark.parametrize("D", sorted(HEAD_DIMS))
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_compiles_to_wgmma_chains_around_the_softmax(D, causal, shapes):
    dtype = "bfloat16" if D in (96, 256) else "float16"
    if shapes == "fixed":
        kernel = compiled(2, 3, 512, D, dtype, causal=causal)
    else:
        kernel = compiled(None, None, None, D, dtype, causal=causal)
    ptx = kernel.ptx
    bkv, boxes, swizzle, k_steps = HEAD_DIMS[D]
    elem = "f16" if dtype == "float16" else "bf16"
    # Q K^T: 64 x BKV from shared memory, k16 steps over D; P V: 64 x D with A (P) in
    # registers ("{...}" operand list), BKV / 16 k16 steps. Each appears twice: the pipelined
    # loop and its prologue (Q K^T of block 0) or tail (P V of the last block).
    wgmma = rf"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.{elem}\.{elem}\s+\{{[^}}]*\}},\s*"
    ss = re.findall(wgmma + r"%rd", ptx)
    rs = re.findall(wgmma + r"\{", ptx)
    assert ss == [str(bkv)] * (2 * k_steps)
    assert rs == [str(D)] * (2 * bkv // 16)
    # the exponentials in base 2 (fast), row max and sum by two butterflies each
    assert ptx.count("ex2.approx") >= bkv // 2
    assert len(re.findall(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, [12], 31, -1", ptx)) >= 8
    if causal or shapes == "run_time":
        assert "selp" in ptx or "setp" in ptx
    # TMA for Q, K and V: one tensor map each, 64- or 32-column boxes of the swizzle's rows
    maps = [(r.param, r.box, r.swizzle) for r in kernel.signature.tensor_maps]
    assert maps == [(i, box, swizzle) for i, box in enumerate(boxes)]
    warnings = ptxas_warnings(ptx)
    assert "C7514" not in warnings    # no wgmma serialised by register reads


def test_q_has_two_stages_where_they_fit():
    """Two stages of Q (the next item's Q loads while this one's last key blocks are read)
    beside two of K and V at D <= 128; one at D = 256, whose two stages of K and V and one of Q
    take 193 KiB of the 227."""
    assert [q_stages(D) for D in (64, 96, 128, 256)] == [2, 2, 2, 1]
    assert q_stages(128, STAGES=3) == 1
    # 1 KiB of barriers, then Q twice and K and V twice each
    assert compiled(None, None, None, 128).shared_bytes == 1024 + (2 + 4) * 128 * 128 * 2
    assert compiled(None, None, None, 128, Q_STAGES=1).shared_bytes == \
        1024 + (1 + 4) * 128 * 128 * 2


@pytest.mark.parametrize("B, H, S, grid", [(2, 3, 512, 24), (8, 16, 4096, 132)])
def test_the_grid_is_persistent(B, H, S, grid):
    # one CTA per SM at most, each taking every grid-th (head, query block) item
    assert compiled(B, H, S, 64).signature.grid == (grid, 1, 1)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_run_time_shapes_are_kernel_arguments(causal):
    """One kernel for every batch, head count and length: Q's and K's rows are run-time dims,
    the lengths (and the causal diagonal) arguments, the grid min(Q's rows, SMS)."""
    kernel = compiled(None, None, None, 128, causal=causal, group=4)
    sig = kernel.signature
    names = [p.name for p in sig.params]
    assert names == ["Q", "K", "V", "O", "Sq", "Skv"] + (["diagonal"] if causal else [])
    assert sig.dims == ("q_rows", "kv_rows")
    assert [p.leading for p in sig.params[:4]] == ['["dim","q_rows"]', '["dim","kv_rows"]',
                                                   '["dim","kv_rows"]', '["dim","q_rows"]']
    assert sig.grid_exprs[0] == '["min",["dim","q_rows"],132]'
    assert kernel.n_spills < 40         # item-level scalars only (none in the block loop)


@pytest.mark.parametrize("D", [64, 96, 256])
def test_short_heads_load_without_bank_conflicts(D):
    # the masked cp.async of a head shorter than a key block, into the swizzled K and V stages
    report = tilemlir.check_banks(flash_attention(None, None, None, D, causal=True),
                                  target="sm_90a")
    assert len(report) == 2 and report.conflicts == 0, str(report)


def test_front_door_names_the_bad_argument():
    torch = pytest.importorskip("torch")
    q = torch.zeros(1, 4, 128, 64, dtype=torch.float16)
    kv = torch.zeros(1, 2, 128, 64, dtype=torch.float16)
    with pytest.raises(ArgumentError, match="query must be a torch CUDA tensor, got a tensor on cpu"):
        attention(q, q, q)
    with pytest.raises(ArgumentError, match="query must be a torch CUDA tensor, got ndarray"):
        attention(q.numpy(), q, q)
    cases = [
        (dict(dropout_p=0.1), "dropout_p=0.1: dropout is not supported"),
        (dict(attn_mask=torch.ones(128, 128, dtype=torch.bool)), "attn_mask must be None or a causal bias"),
        (dict(scale=-1.0), "scale=-1.0 must be None"),
        (dict(is_causal=1), "is_causal must be a bool"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ArgumentError, match=re.escape(message)):
            attention(q, q, q, **kwargs)
    with pytest.raises(ArgumentError, match="pass enable_gqa=True"):
        attention(q, kv, kv)
    with pytest.raises(ArgumentError, match="query has dtype torch.float32; float16 or bfloat16"):
        attention(q.float(), q.float(), q.float())
    with pytest.raises(ArgumentError, match="key is torch.bfloat16 but query is torch.float16"):
        attention(q, q.bfloat16(), q)
    with pytest.raises(ArgumentError, match=re.escape(
            "value [1, 2, 64, 64] must be [B, Hkv, Skv, Dv] with key's B, Hkv and Skv")):
        attention(q, kv, kv[:, :, :64].contiguous(), enable_gqa=True)
    with pytest.raises(ArgumentError, match="head dims from 1 to 256 are supported, got 300 "
                                            "for query and key and 300 for value"):
        attention(*(torch.zeros(1, 1, 8, 300, dtype=torch.float16),) * 3)
    with pytest.raises(ArgumentError, match=re.escape("out must have shape [1, 4, 128, 32]")):
        attention(q, q, q[..., :32].contiguous(), out=q)
    with pytest.raises(ArgumentError, match="query's 4 heads to be a multiple of key's 3"):
        attention(q, *(torch.zeros(1, 3, 128, 64, dtype=torch.float16),) * 2, enable_gqa=True)
    with pytest.raises(ArgumentError, match="query must be a torch CUDA tensor, got a tensor on cpu"):
        attention(q.transpose(2, 3).contiguous().transpose(2, 3), q, q)    # strided: taken


def test_front_door_takes_torch_causal_biases():
    torch = pytest.importorskip("torch")
    bias = pytest.importorskip("torch.nn.attention.bias")
    q = torch.zeros(1, 1, 300, 64, dtype=torch.float16)
    k = torch.zeros(1, 1, 200, 64, dtype=torch.float16)
    with warnings.catch_warnings():           # torch warns of that bias's NaN rows too
        warnings.simplefilter("ignore")
        lower_right = bias.causal_lower_right(300, 200)
    with pytest.raises(ArgumentError, match=r"more queries \(300\) than keys \(200\)"):
        attention(q, k, k, attn_mask=lower_right)
    with pytest.raises(ArgumentError, match="causal bias for 300 queries and 100 keys"):
        attention(q, k, k, attn_mask=bias.causal_upper_left(300, 100))
    with pytest.raises(ArgumentError, match="give one of them"):
        attention(q, k, k, attn_mask=bias.causal_upper_left(300, 200), is_causal=True)
    # the biases the kernel serves pass every check up to the device's
    with pytest.raises(ArgumentError, match="query must be a torch CUDA tensor"):
        attention(q, k, k, attn_mask=bias.causal_upper_left(300, 200))


def _reference(q, k, v, causal, diagonal, scale):
    """float32 attention of [B, H, Sq, D] q against [B, Hkv, Skv, D] k, v (query heads in
    groups of H / Hkv per K/V head); causal: query i sees keys up to i + diagonal."""
    group = q.shape[1] // k.shape[1]
    k, v = (np.repeat(t.astype(np.float32), group, axis=1) for t in (k, v))
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float32), k) * scale
    if causal:
        i, j = np.arange(q.shape[2])[:, None], np.arange(k.shape[2])[None, :]
        s = np.where(j <= i + diagonal, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", p / p.sum(axis=-1, keepdims=True), v)


# (B, H, Hkv, Sq, Skv, D, causal, diagonal or None for the end)
GENERAL = [
    (1, 2, 2, 1, 1, 64, False, None),          # one query, one key
    (1, 2, 1, 7, 7, 64, True, None),           # shorter than a block: masked cp.async keys
    (1, 1, 1, 129, 129, 64, True, None),       # one row past a block, a shifted key block
    (2, 1, 1, 300, 300, 64, False, None),      # ragged, several blocks, two batches
    (1, 4, 2, 100, 300, 64, True, None),       # GQA 2, Sq < Skv aligned to the end
    (1, 4, 1, 70, 200, 128, False, None),      # GQA 4 (MQA), Sq != Skv
    (1, 4, 1, 300, 130, 64, True, 0),          # Sq > Skv, aligned to the start (is_causal)
    (1, 2, 1, 130, 200, 96, True, None),       # D 96: 64-byte swizzle, three chunks
    (1, 2, 2, 129, 129, 256, True, None),      # D 256: 64-row key blocks
    (1, 1, 1, 50, 50, 256, False, None),       # D 256 shorter than a key block
]


@pytest.mark.parametrize("case", GENERAL, ids=["B{}H{}Hkv{}Sq{}Skv{}D{}{}".format(
    *c[:6], "causal" if c[6] else "") for c in GENERAL])
def test_general_shapes_match_numpy(case):
    """The run-time-shape kernel in the interpreter against float32 numpy: ragged tails, GQA,
    Sq != Skv, D 96 and 256. K, V and O have NaN rows past their last head, which no key
    block may read (a key tail that reached them would make its rows NaN) and no store write."""
    _check_general(case)


def _check_general(case, **options):
    B, H, Hkv, Sq, Skv, D, causal, diagonal = case
    diagonal = Skv - Sq if diagonal is None else diagonal
    rng = np.random.default_rng(Sq * 1000 + Skv)
    q = rng.standard_normal((B, H, Sq, D)).astype(np.float16)
    k, v = (rng.standard_normal((B, Hkv, Skv, D)).astype(np.float16) for _ in range(2))
    def padded(x, rows, fill=np.nan):
        return np.concatenate([x.reshape(-1, D), np.full((rows, D), fill, np.float16)])
    q_pad = min(5, Sq - 1)                  # fewer rows than a head's: the head count stays
    o = padded(np.full_like(q, np.nan), q_pad)
    args = (Sq, Skv) + ((diagonal,) if causal else ())
    kernel = flash_attention(None, None, None, D, causal=causal, group=H // Hkv, **options)
    # (Q's rows past the last head are read, by a ragged last query block, and not stored;
    # finite there: the interpreter's wgmma takes NaN in a shared operand for a race)
    tilemlir.interpret(kernel, padded(q, q_pad, 1.0), padded(k, 5), padded(v, 5), o, *args)
    rows = B * H * Sq
    assert np.isnan(o[rows:]).all()                 # nothing written past the last head
    got = o[:rows].reshape(B, H, Sq, D)
    assert not np.isnan(got).any()
    ref = _reference(q, k, v, causal, diagonal, 1 / np.sqrt(D))
    assert np.abs(got - ref).max() < 4e-3


@pytest.mark.parametrize("units, ctas", [(12, 5), (10, 5), (11, 5), (4, 5), (1, 1),
                                         (3072, 132), (2048, 132), (7, 2)])
def test_dealt_items_are_a_permutation(units, ctas):
    """Every other full round back to front, a partial last round in order: each item once."""
    from tilemlir.kernels.attention import _dealt
    slots = [pid + i * ctas for pid in range(ctas) for i in range(-(-units // ctas))
             if pid + i * ctas < units]
    assert sorted(_dealt(v, ctas, units) for v in slots) == list(range(units))
    if units >= 2 * ctas:                           # round 1 is dealt back to front
        assert [_dealt(ctas + c, ctas, units) for c in range(ctas)] == \
            list(range(2 * ctas - 1, ctas - 1, -1))


def test_dealt_causal_items_even_out_the_ctas_work():
    """Causal B4 H32 S3000 on 132 CTAs (24 query blocks a head, 132 not a multiple): the CTA
    with the most key blocks has 1.45 times the mean taking every 132nd item, 1.07 dealt."""
    from tilemlir.kernels.attention import _dealt, _item
    blocks, units, ctas = 24, 4 * 32 * 24, 132

    def worst(order):
        work = [0] * ctas
        for v in range(units):
            work[v % ctas] += _item(order(v), blocks, True)[1] + 2    # key blocks, and Q
        return max(work) / (sum(work) / ctas)
    assert worst(lambda v: v) > 1.4
    assert worst(lambda v: _dealt(v, ctas, units)) < 1.1


@pytest.mark.parametrize("case", [(1, 4, 2, 300, 300, 64, True, None),
                                  (2, 3, 3, 257, 257, 128, True, None),
                                  (1, 4, 4, 200, 330, 64, True, None)],
                         ids=["GQA-ragged", "B2H3", "Sq<Skv"])
def test_causal_items_dealt_over_few_ctas(case):
    """A grid of 5 CTAs over 12 to 18 causal items: rounds dealt back to front, a partial last
    round, in the interpreter against numpy."""
    _check_general(case, SMS=5)


@pytest.mark.parametrize("case, options", [
    ((2, 2, 1, 200, 200, 96, False, None), dict(SMS=3)),
    ((1, 3, 3, 260, 300, 128, True, None), dict(SMS=2, Q_STAGES=1)),
    ((1, 2, 2, 130, 130, 256, True, None), dict(SMS=2)),
], ids=["D96-two-stages", "D128-one-stage", "D256-one-stage"])
def test_q_stages_over_several_items_a_cta(case, options):
    """Q's ring over 2 to 5 items a CTA: two stages taken in turn (D 96), one stage reused item
    after item (D 128 with Q_STAGES=1, and D 256, which has room for one), in the interpreter
    against numpy."""
    _check_general(case, **options)


@pytest.mark.parametrize("pingpong", [True, False])
def test_consumers_take_turns_issuing_their_wgmma(pingpong):
    ptx = compiled(1, 2, 512, 64, PINGPONG=pingpong).ptx
    turns = re.findall(r"bar\.sync\s+%r\d+, 256;", ptx)
    # pipelined: a turn for the first Q K^T, for each loop step and for the last P V
    assert len(turns) == (3 if pingpong else 0)
    assert ("bar.arrive" in ptx) == pingpong
