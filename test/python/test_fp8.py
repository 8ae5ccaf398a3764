"""The 8-bit floats on the CPU: their names in the language, the casts (interpreted against
ml_dtypes, saturating as cvt.rn.satfinite does), wgmma kind f8, and the FP8 GEMM (fp8_gemm):
its numbers in the interpreter against a float32 product of the dequantized operands for the
three kinds of scales, ragged shapes included; its PTX (ptxas, no spills); what it refuses;
and the front door's choices and argument checks (scaled_mm)."""

import ml_dtypes
import numpy as np
import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.kernels.fp8_gemm import fp8_gemm, scale_shapes
from tilemlir.kernels.parts import ShapeError
from tilemlir.target import Target
from tilemlir.target.ptx import assemble, find_ptxas

Tx = T.tile
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found")
E4M3, E5M2 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)
NUMPY = {"float8_e4m3fn": E4M3, "float8_e5m2": E5M2}


# ------------------------------------------------------------------------------ the language
def test_dtype_names():
    assert T.dtype_bits("float8_e4m3fn") == T.dtype_bits("f8E5M2") == 8
    assert T.dtype_bits("bfloat16") == 16
    assert str(T.mma_shared_layout("float8_e4m3fn", "128B", (64, 128))) == \
        "S[(64, 128):(128, 1)] o Sw<3,4,3>"


def cast_round_trip(wide: str, narrow: str):
    layout = T.wgmma_accumulator_layout(64, 16)

    @T.prim_func
    def round_trip(X: T.Buffer((64, 16), wide), Q: T.Buffer((64, 16), narrow),
                   Y: T.Buffer((64, 16), wide)):
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        x = T.alloc_local((64, 16), wide, layout=layout)
        q = T.alloc_local((64, 16), narrow, layout=layout)
        Tx.wg.copy(x, X[:, :])
        Tx.wg.cast(q, x)
        Tx.wg.copy(Q[:, :], q)
        Tx.wg.cast(x, q)
        Tx.wg.copy(Y[:, :], x)
    return round_trip


@pytest.mark.parametrize("narrow", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("wide", ["float32", "float16"])
def test_casts_round_to_nearest_and_saturate(wide, narrow):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((64, 16)) * 50).astype(wide)
    x[0, :5] = [6e4, -6e4, np.inf, -np.inf, np.nan]     # past both formats' largest
    q, y = np.zeros((64, 16), NUMPY[narrow]), np.zeros_like(x)
    tilemlir.interpret(cast_round_trip(wide, narrow), x, q, y)
    largest = float(ml_dtypes.finfo(NUMPY[narrow]).max)
    expected = np.clip(x.astype(np.float32), -largest, largest).astype(NUMPY[narrow])
    assert np.array_equal(q.astype(np.float32), expected.astype(np.float32), equal_nan=True)
    assert np.array_equal(y, expected.astype(wide), equal_nan=True)
    assert list(y[0, :4]) == [largest, -largest, largest, -largest]


@needs_ptxas
def test_casts_assemble_and_pair_up():
    text = tilemlir.compile(cast_round_trip("bfloat16", "float8_e5m2"), target="sm_90a",
                            cache=False).ptx
    assemble(text, "sm_90a")
    # 8 register pairs per thread each way: bf16 widened to f32 for the f32x2 form
    assert text.count("cvt.rn.satfinite.e5m2x2.f32") == 4
    assert text.count("cvt.rn.f16x2.e5m2x2") == 4


def test_casts_need_sm_90_or_sm_89_with_ptx_81():
    with pytest.raises(Exception, match="f8 \\(e4m3/e5m2\\) conversions .* is not available on "
                                        "sm_80"):
        tilemlir.compile(cast_round_trip("float32", "float8_e4m3fn"), target="sm_80",
                         cache=False)
    tilemlir.compile(cast_round_trip("float32", "float8_e4m3fn"),
                     target=Target("sm_89", 81), cache=False)


def fill_and_add(add: bool):
    layout = T.wgmma_accumulator_layout(64, 16)

    @T.prim_func
    def fill_and_add(Y: T.Buffer((64, 16), "float8_e5m2"), Z: T.Buffer((64, 128), "float8_e5m2")):
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        pool = T.SMEMPool()
        Zs = pool.alloc((64, 128), "float8_e5m2")
        pool.commit()
        q = T.alloc_local((64, 16), "float8_e5m2", layout=layout)
        Tx.wg.fill(q, -3.0)
        Tx.wg.fill(Zs, 1000.0)                 # rounds to 1024 in e5m2
        if add:
            Tx.wg.add(q, q, q)
        Tx.wg.copy(Y[:, :], q)
        T.cuda.cta_sync()
        Tx.wg.copy(Z[:, :], Zs)
    return fill_and_add


def test_fill_stores_the_constants_bits():
    y, z = np.zeros((64, 16), E5M2), np.zeros((64, 128), E5M2)
    tilemlir.interpret(fill_and_add(False), y, z)
    assert (y.astype(np.float32) == -3.0).all() and (z.astype(np.float32) == 1024.0).all()
    text = tilemlir.compile(fill_and_add(False), target="sm_90a", cache=False).ptx
    assert "{194, 194}" in text             # -3.0 in e5m2: 0xC2, a pair per store
    assert "1684300900" in text             # 1024: 0x64, four to a word of a 16-byte store


def test_math_on_8_bit_floats_is_refused_with_the_reason():
    with pytest.raises(Exception, match="8-bit floats are only moved, cast and multiplied by "
                                        "wgmma \\(tile.cast them to f16 or f32 first\\)"):
        tilemlir.compile(fill_and_add(True), target="sm_90a", cache=False)


# ------------------------------------------------------------------------------ wgmma kind f8
def wgmma_f8(M, N, K, a_dtype, b_dtype):
    @T.prim_func
    def wgmma_f8(A: T.Buffer((M, K), a_dtype), B: T.Buffer((N, K), b_dtype),
                 D: T.Buffer((M, N), "float32")):
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        pool = T.SMEMPool()
        As = pool.alloc((M, K), a_dtype, layout=T.mma_shared_layout(a_dtype, "128B", (M, K)))
        Bs = pool.alloc((N, K), b_dtype, layout=T.mma_shared_layout(b_dtype, "128B", (N, K)))
        pool.commit()
        Tx.wg.copy(As, A[:, :])
        Tx.wg.copy(Bs, B[:, :])
        T.ptx.fence.proxy_async("shared::cta")
        T.cuda.cta_sync()
        acc = T.alloc_local((M, N), "float32", layout=T.wgmma_accumulator_layout(M, N))
        Tx.wg.gemm_async(acc, As, Bs, accum=False)
        T.ptx.wgmma.wait_group(0)
        Tx.wg.copy(D[:, :], acc)
    return wgmma_f8


@pytest.mark.parametrize("a_dtype, b_dtype", [("float8_e4m3fn", "float8_e4m3fn"),
                                              ("float8_e5m2", "float8_e4m3fn")])
def test_wgmma_kind_f8(a_dtype, b_dtype):
    M, N, K = 128, 64, 256
    kernel = wgmma_f8(M, N, K, a_dtype, b_dtype)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((M, K)).astype(NUMPY[a_dtype])
    b = rng.standard_normal((N, K)).astype(NUMPY[b_dtype])
    d = np.zeros((M, N), np.float32)
    tilemlir.interpret(kernel, a, b, d)
    np.testing.assert_allclose(d, a.astype(np.float32) @ b.astype(np.float32).T, rtol=1e-5,
                               atol=1e-4)
    if find_ptxas() is not None:
        text = tilemlir.compile(kernel, target="sm_90a", cache=False).ptx
        assemble(text, "sm_90a")
        kinds = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
        name = f"wgmma.mma_async.sync.aligned.m64n64k32.f32.{kinds[a_dtype]}.{kinds[b_dtype]}"
        assert text.count(name) == (M // 64) * (K // 32)


# ------------------------------------------------------------------------------ fp8_gemm
def quantized(rng, rows, k, dtype):
    return rng.standard_normal((rows, k)).astype(NUMPY[dtype])


def dequantized_product(a, b, sa, sb, scaling):
    """float32 (scale_a . A) @ (scale_b . B)^T, the reference the kernel must meet."""
    A, B = a.astype(np.float32), b.astype(np.float32)
    M, K = A.shape
    N = B.shape[0]
    if scaling == "tensor":
        return sa[0] * sb[0] * (A @ B.T)
    if scaling == "row":
        return sa.reshape(M, 1) * (A @ B.T) * sb.reshape(1, N)
    A = A * np.repeat(sa, 128, axis=1)[:, :K]
    B = B * np.repeat(np.repeat(sb, 128, axis=0), 128, axis=1)[:N, :K]
    return A @ B.T


def run_fp8_gemm(M, N, K, scaling, a_dtype="float8_e4m3fn", b_dtype="float8_e4m3fn",
                 out_dtype="bfloat16", run_time_m=False, **config):
    rng = np.random.default_rng(3)
    a, b = quantized(rng, M, K, a_dtype), quantized(rng, N, K, b_dtype)
    sa_shape, sb_shape = scale_shapes(M, N, K, scaling)
    sa = rng.uniform(0.25, 4, sa_shape).astype(np.float32)
    sb = rng.uniform(0.25, 4, sb_shape).astype(np.float32)
    out = np.full((M, N), np.nan, np.float16) if out_dtype == "float16" else \
        np.full((M, N), 0x7FC0, np.uint16)                      # NaN: never written
    kernel = fp8_gemm(T.dynamic("M") if run_time_m else M, N, K, a_dtype, b_dtype, out_dtype,
                      scaling, **config)
    tilemlir.interpret(kernel, a, b, sa, sb, out)
    got = out.astype(np.float32) if out_dtype == "float16" else \
        (out.astype(np.uint32) << 16).view(np.float32)
    return got, dequantized_product(a, b, sa, sb, scaling)


CASES = [
    # (M, N, K), scaling, configuration: ragged M, N and K, odd pairs of tile rows, several
    # tiles per CTA (SMS), each producer and epilogue, mixed formats, f16 output
    ((300, 520, 384), "tensor", dict(SMS=8)),
    ((300, 520, 384), "row", dict(SMS=8)),
    ((300, 520, 384), "tensor", dict(SMS=8, PROMOTE=True)),
    ((200, 264, 272), "row", dict(CLUSTER=False, SMS=3, PROMOTE=True)),
    ((300, 520, 400), "block", dict(SMS=8)),
    ((200, 264, 272), "row", dict(CLUSTER=False, OVERLAP_EPILOGUE=False, SMS=3)),
    ((130, 136, 144), "block", dict(EPILOGUE="direct", BM=64, CLUSTER=False, SMS=2)),
    ((130, 137, 144), "block", dict(EPILOGUE="staged", BM=64, CLUSTER=False, SMS=2)),
    ((200, 263, 272), "row", dict(EPILOGUE="staged", SMS=4)),
    ((70, 100, 1000), "block", dict(PRODUCER="cp_async", EPILOGUE="direct", CLUSTER=False,
                                    BM=64, SMS=3)),
    ((100, 136, 208), "tensor", dict(BM=64, BN=128, SMS=4, a_dtype="float8_e5m2",
                                     out_dtype="float16")),
    ((200, 136, 256), "block", dict(BM=64, SMS=4, b_dtype="float8_e5m2", run_time_m=True)),
    # promotion 128 columns at a time: 256-wide tiles in halves, the second half's B scale
    # block clamped to the last where the tile runs past N; 128-wide tiles whole
    ((100, 104, 304), "block", dict(BM=64, BN=256, CLUSTER=False, SMS=2)),
    ((200, 264, 272), "block", dict(BN=256, SMS=3)),
    ((130, 296, 160), "row", dict(PROMOTE=True, OVERLAP_EPILOGUE=True, SMS=3)),
]


@pytest.mark.parametrize("shape, scaling, config", CASES,
                         ids=[f"{s}-{'x'.join(map(str, m))}-{i}"
                              for i, (m, s, _) in enumerate(CASES)])
def test_fp8_gemm_matches_the_dequantized_product(shape, scaling, config):
    got, ref = run_fp8_gemm(*shape, scaling, **config)
    assert not np.isnan(got).any(), "some outputs were never written"
    # the output's rounding (bf16: 2^-9 relative; f16: 2^-12), against float32 sums
    np.testing.assert_allclose(got, ref, rtol=2 ** -8, atol=2 ** -8 * np.abs(ref).max())


@needs_ptxas
@pytest.mark.parametrize("scaling, promote, instruction", [
    ("tensor", False, "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"),
    ("row", False, "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"),
    # promoted 256-wide tiles: each k-tile's MMAs in two 128-column halves
    ("tensor", True, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"),
    ("block", True, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3")])
def test_fp8_gemm_assembles_without_spills(scaling, promote, instruction):
    kernel = tilemlir.compile(fp8_gemm(T.dynamic("M"), 4096, 4096, scaling=scaling,
                                       PROMOTE=promote), target="sm_90a", cache=False)
    text = kernel.ptx
    assert text.count(instruction) > 0 and "cp.async.bulk.tensor" in text
    assert kernel.n_spills == 0
    if scaling == "block":
        # the promotion: part x (SA . SB) + acc, one FMA per accumulator element
        assert text.count("fma.rn.f32") >= 64
    if scaling == "tensor" and promote:
        assert text.count(instruction) == 2 * 4         # two halves of four k32 steps


@pytest.mark.parametrize("kwargs, message", [
    (dict(scaling="block", BN=64), "promotion takes BN=128 or 256"),
    (dict(scaling="block", PROMOTE=False), "block scales act at the promotion"),
    (dict(a_dtype="float16"), "a_dtype must be one of"),
    (dict(scaling="channel"), "scaling must be one of"),
    (dict(PRODUCER="cp_async"), "PRODUCER='cp_async' runs without clusters"),
    (dict(BM=128, BN=256, STAGES=5), "exceed the 227 KiB"),
])
def test_fp8_gemm_refuses(kwargs, message):
    with pytest.raises(ShapeError, match=message):
        fp8_gemm(1024, 1024, 1024, **kwargs)


def test_fp8_gemm_needs_whole_16_byte_rows_for_tma():
    with pytest.raises(ShapeError, match="K=1000 must be a multiple of 16 .* PRODUCER='cp_async'"):
        fp8_gemm(1024, 1024, 1000)


# ------------------------------------------------------------------------------ front door
def test_configurations():
    from tilemlir.kernels.scaled_mm import choose_config
    # as torch._scaled_mm: each k-tile promoted unless use_fast_accum
    assert choose_config(8192, 8192, 8192, "tensor") == dict(BM=128, BN=256, CLUSTER=True,
                                                              PROMOTE=True)
    assert choose_config(8192, 8192, 8192, "tensor", use_fast_accum=True) == \
        dict(BM=128, BN=256, CLUSTER=True)
    assert choose_config(8192, 8192, 8192, "block", use_fast_accum=True) == \
        dict(BM=128, BN=128, CLUSTER=True)
    unaligned = choose_config(1000, 1001, 1003, "row")
    assert unaligned["PRODUCER"] == "cp_async" and unaligned["EPILOGUE"] == "staged"
    assert not unaligned["CLUSTER"]
    # an even or narrow N keeps the masked stores (4 or 8 bytes wide, or few)
    assert choose_config(1000, 1002, 1024, "tensor")["EPILOGUE"] == "direct"
    assert choose_config(1000, 63, 1024, "tensor")["EPILOGUE"] == "direct"
    assert "EPILOGUE" not in choose_config(1000, 1000, 1024, "tensor")
    # the GEMM model's few-wave price of 64 x 128 tiles was timed on 16-bit kernels only: FP8
    # keeps its one-wave prices (these took 64 x 128 tiles when the price leaked in)
    for shape in ((462, 4121, 2556), (202, 7601, 3643), (251, 6166, 4272)):
        assert choose_config(*shape, "tensor")["BM"] == 128, shape
    # promotion keeps two consumer warpgroups (one promotes while the other's MMAs run)
    # unless M fits 64 rows
    for shape in ((16384, 4096, 14336), (8192, 8192, 28672), (100, 4096, 4096)):
        for scaling in ("block", "tensor", "row"):
            assert choose_config(*shape, scaling)["BM"] == 128, (shape, scaling)
    assert choose_config(48, 4096, 4096, "block")["BM"] == 64


@pytest.mark.parametrize("sa, sb, kind", [
    ((1,), (1, 1), "tensor"), ((), (), "tensor"), ((300, 1), (520,), "row"),
    ((300,), (1, 520), "row"), ((300, 4), (5, 4), "block"), ((300, 4), (520,), None)])
def test_scale_shapes_say_their_kind(sa, sb, kind):
    from tilemlir.kernels.scaled_mm import infer_scaling
    assert infer_scaling(300, 520, 400, sa, sb) == kind


def test_quantize_round_trips():
    torch = pytest.importorskip("torch")
    from tilemlir.kernels.scaled_mm import dequantize, quantize
    x = torch.randn(300, 520)
    for scaling in ("tensor", "row", "block"):
        for operand in "ab":
            x8, scale = quantize(x, scaling, operand)
            assert x8.dtype == torch.float8_e4m3fn
            err = (dequantize(x8, scale, scaling, operand) - x).norm() / x.norm()
            assert err < 0.04           # e4m3: 3 mantissa bits


def test_front_door_argument_errors():
    torch = pytest.importorskip("torch")
    from tilemlir.kernels.scaled_mm import scaled_mm
    from tilemlir.runtime.args import ArgumentError
    a = torch.zeros(64, 128, dtype=torch.float8_e4m3fn)
    one = torch.ones(1)
    with pytest.raises(ArgumentError, match="scaled_mm: a must be a torch CUDA tensor, got "
                                            "Tensor on cpu"):
        scaled_mm(a, a, one, one)
    with pytest.raises(ArgumentError, match="scaled_mm: a must be a torch CUDA tensor, got "
                                            "ndarray$"):
        scaled_mm(np.zeros(3), a, one, one)


def test_custom_op_fake_and_tracing():
    torch = pytest.importorskip("torch")
    from tilemlir.kernels.scaled_mm import scaled_mm_op
    op = scaled_mm_op()
    assert scaled_mm_op() is op
    a = torch.empty(300, 512, dtype=torch.float8_e4m3fn, device="meta")
    b = torch.empty(520, 512, dtype=torch.float8_e5m2, device="meta")
    s = torch.empty(1, device="meta")
    d = op(a, b, s, s, torch.float16, True)
    assert (d.shape, d.dtype) == ((300, 520), torch.float16)
    explained = torch._dynamo.explain(lambda a, b: op(a, b, s, s, torch.bfloat16).float() * 2)(
        a, b)
    assert explained.graph_break_count == 0 and explained.graph_count == 1


# ------------------------------------------------------------------------------ interpreter
def test_tma_box_starting_past_the_edge_stores_nothing():
    """A ragged tile's TMA-store chunk can start wholly past N (128 x 264: tile 1's second
    chunk starts at column 384); the interpreter clipped it from its linear offset before,
    writing into the next rows."""
    from tilemlir.kernels.hgemm_hopper import hgemm_v6
    M, N, K = 128, 264, 64
    rng = np.random.default_rng(4)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    d = np.zeros((M, N), np.float16)
    tilemlir.interpret(hgemm_v6(M, N, K, SMS=16), a, b, d)
    np.testing.assert_allclose(d, a.astype(np.float32) @ b.astype(np.float32).T, rtol=1e-2,
                               atol=1e-1)


def test_block_scales_beat_tensor_scales_on_outliers():
    """Rows of different magnitudes (exp(3 z) for A's tokens, exp(1.5 z) for B's) and 100x
    outlier channels: a per-tensor scale flushes the small rows to e4m3's subnormals and
    zeros (about 100% error on the worst row), 1 x 128 / 128 x 128 blocks keep every row near
    e4m3's own precision (the kernel's output, interpreted, against the exact product)."""
    torch = pytest.importorskip("torch")
    from tilemlir.kernels.scaled_mm import quantize
    g = torch.Generator().manual_seed(0)
    M, N, K = 128, 128, 512
    a = torch.randn(M, K, generator=g) * torch.exp(3 * torch.randn(M, 1, generator=g))
    b = torch.randn(N, K, generator=g) * torch.exp(1.5 * torch.randn(N, 1, generator=g))
    a[:, torch.randperm(K, generator=g)[:4]] *= 100.0
    exact = a.double() @ b.double().T
    worst = {}
    for scaling in ("tensor", "block"):
        a8, sa = quantize(a, scaling, "a")
        b8, sb = quantize(b, scaling, "b")
        d = np.zeros((M, N), np.uint16)
        tilemlir.interpret(fp8_gemm(M, N, K, scaling=scaling, SMS=2),
                           a8.view(torch.uint8).numpy(), b8.view(torch.uint8).numpy(),
                           sa.numpy(), sb.numpy(), d)
        out = torch.from_numpy((d.astype(np.uint32) << 16).view(np.float32)).double()
        worst[scaling] = ((out - exact).norm(dim=1) / exact.norm(dim=1)).max().item()
    assert worst["block"] < 0.08 and worst["tensor"] > 0.5, worst
