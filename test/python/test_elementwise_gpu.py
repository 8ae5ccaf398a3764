"""GPU numerics of the elementwise and reduction primitives and of the softmax / RMSNorm
kernels, against torch in float64 (outputs poisoned with NaN, see gpu_check.py)."""

import math

import pytest

from elementwise_kernels import (C, REDUCE_CASES, R, binary_kernel, reduce_kernel,
                                 relu_kernel, unary_kernel)
from gpu_check import assert_written, check, run_poisoned

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def _inputs(fn, dtype):
    g = torch.Generator().manual_seed(hash(fn) % 1000)
    x = torch.randn(R, C, generator=g, dtype=torch.float64)
    if fn in ("log", "rsqrt", "sqrt"):
        x = torch.exp(x * 8)                     # 3e-4 .. 3e3, many binades
    elif fn in ("exp", "exp2"):
        x = x * 6
    elif fn in ("tanh", "sigmoid", "silu", "gelu_tanh", "gelu_erf"):
        x = x * 3
        x[0, :32] = torch.linspace(-0.6, 0.6, 32, dtype=torch.float64)   # tanh's two branches
    return x.to(DTYPES[dtype]).cuda()


REFERENCE = {
    "exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "rsqrt": torch.rsqrt,
    "sqrt": torch.sqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "silu": torch.nn.functional.silu, "neg": torch.neg, "abs": torch.abs,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "gelu_erf": lambda x: torch.nn.functional.gelu(x),
}
# (rtol, atol) of the precise f32 functions; the fast ones and f16 / bf16 results are judged by
# their own bounds below
PRECISE_F32 = {"exp": (3e-6, 0), "exp2": (3e-6, 0), "log": (3e-6, 1e-7), "rsqrt": (2e-7, 0),
               "sqrt": (2e-7, 0), "tanh": (3e-6, 1e-7), "sigmoid": (3e-6, 1e-8),
               "silu": (3e-6, 1e-8), "gelu_tanh": (5e-6, 1e-7), "gelu_erf": (5e-6, 1e-7),
               "neg": (0, 0), "abs": (0, 0)}
FAST_F32 = {"exp": (2e-5, 0), "exp2": (3e-6, 0), "log": (2e-6, 2e-6), "rsqrt": (1e-6, 0),
            "sqrt": (1e-6, 0), "tanh": (0, 1.5e-3), "sigmoid": (2e-5, 1e-7),
            "silu": (2e-5, 1e-6), "gelu_tanh": (2e-3, 6e-3), "gelu_erf": (2e-5, 1e-6)}
HALF_TOLERANCE = {"float16": (2e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5)}
# ex2.approx.f16x2 / tanh.approx.f16x2 compute in half precision
FAST_HALF = {"exp2": {"float16": (3e-3, 1e-5), "bfloat16": (2e-2, 1e-5)},
             "tanh": {"float16": (0, 3e-3), "bfloat16": (0, 1.6e-2)}}


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("fn", sorted(REFERENCE))
def test_unary(fn, dtype, fast):
    if fast and fn in ("neg", "abs"):
        pytest.skip("exact, no fast form")
    x = _inputs(fn, dtype)
    ref = REFERENCE[fn](x.double())
    if dtype == "float32":
        rtol, atol = (FAST_F32 if fast else PRECISE_F32)[fn]
    else:
        rtol, atol = FAST_HALF.get(fn, {}).get(dtype, HALF_TOLERANCE[dtype]) if fast \
            else HALF_TOLERANCE[dtype]
    out = check(unary_kernel(fn, dtype, fast), [x], ref.to(DTYPES[dtype]), DTYPES[dtype],
                rtol=rtol, atol=atol) if rtol or atol else None
    if out is None:                              # exact functions
        (out,) = run_poisoned(unary_kernel(fn, dtype, fast), [x], [(ref.shape, DTYPES[dtype])])
        assert torch.equal(out, ref.to(DTYPES[dtype]))


def test_precise_special_values():
    specials = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-40, -1.0, 100.0, -110.0, 88.7,
                1.0, 0.5, 2.0 ** -130]
    x = torch.tensor((specials * 100)[:R * C], dtype=torch.float32).reshape(R, C).cuda()
    for fn in ("exp", "log", "tanh", "rsqrt", "sigmoid", "exp2"):
        (out,) = run_poisoned(unary_kernel(fn, "float32", False), [x], [(x.shape,
                                                                       torch.float32)])
        ref = REFERENCE[fn](x.double()).float()
        torch.testing.assert_close(out, ref, rtol=3e-6, atol=0, equal_nan=True,
                                   msg=lambda m: f"{fn}: {m}")


def test_precise_exp_at_the_ends_of_its_range():
    """Where exp's 2^n stops at 2^-126 / 2^126 and the rest goes through ex2: results near
    FLT_MAX and overflowing, near the smallest normal, subnormal (within one subnormal step of
    the correctly rounded value) and underflowing to 0."""
    edges = [88.72, 88.7228, 88.73, 87.34, 87.35, -87.33, -87.34, -87.5, -88.0, -95.0, -100.0,
             -103.0, -103.97, -104.0, -150.0, 126 * math.log(2), -126 * math.log(2), 1e-30,
             -1e-30]
    x = torch.tensor((edges * 200)[:R * C], dtype=torch.float32).reshape(R, C).cuda()
    (out,) = run_poisoned(unary_kernel("exp", "float32", False), [x], [(x.shape, torch.float32)])
    torch.testing.assert_close(out, torch.exp(x.double()).float(), rtol=3e-6, atol=2.0 ** -149)


BINARY_REF = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
          "maximum": torch.maximum, "minimum": torch.minimum}


@pytest.mark.parametrize("rhs_kind", ["tile", "rows", "columns", "scalar"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("fn", sorted(BINARY_REF))
def test_binary_broadcast(fn, dtype, rhs_kind):
    t = DTYPES[dtype]
    x = torch.randn(R, C, dtype=t).cuda()
    shape = {"tile": (R, C), "rows": (R, 1), "columns": (C,), "scalar": (1,)}[rhs_kind]
    b = (torch.rand(shape, dtype=torch.float32) + 0.5).to(t).cuda()
    rhs = torch.tensor(1.5, dtype=torch.float64) if rhs_kind == "scalar" else b.double()
    ref = BINARY_REF[fn](x.double(), rhs.cuda()).to(t)
    # one rounding of the exact result: what f32 math rounded to f16 / bf16 gives too
    tol = {"float32": (2e-7, 0), "float16": (1e-3, 0), "bfloat16": (8e-3, 0)}[dtype]
    check(binary_kernel(fn, dtype, rhs_kind), [x, b], ref, t, rtol=tol[0], atol=tol[1])


def test_compare_and_select_make_relu():
    x = torch.randn(R, C, device="cuda")
    check(relu_kernel(), [x], torch.relu(x), torch.float32)


# ---------------------------------------------------------------------------- reductions
REDUCE = {"sum": lambda x, a: x.sum(a, keepdim=True),
          "max": lambda x, a: x.amax(a, keepdim=True),
          "min": lambda x, a: x.amin(a, keepdim=True)}

@pytest.mark.parametrize("fn", sorted(REDUCE))
@pytest.mark.parametrize("case", sorted(REDUCE_CASES))
def test_reduce(case, fn):
    shape, axis = REDUCE_CASES[case][0], REDUCE_CASES[case][5]
    x = torch.randn(shape, device="cuda")
    kernel = reduce_kernel(fn, case)
    ref = REDUCE[fn](x.double(), axis).float()
    check(kernel, [x], ref, torch.float32, rtol=1e-5, atol=1e-5)


def test_row_softmax_in_the_wgmma_accumulator_layout():
    from elementwise_kernels import accumulator_softmax_kernel
    x = torch.randn(64, 64, device="cuda") * 4
    e = torch.exp(x.double() - x.double().amax(1, keepdim=True))
    ref = (e / e.sum(1, keepdim=True)).float()
    check(accumulator_softmax_kernel(), [x], ref, torch.float32, rtol=1e-5, atol=1e-6)


def test_reduce_sums_f16_into_f32():
    shape = REDUCE_CASES["cross_warp"][0]
    x = torch.randn(shape, device="cuda", dtype=torch.float16)
    kernel = reduce_kernel("sum", "cross_warp", src_dtype="float16")
    check(kernel, [x], x.double().sum(1, keepdim=True).float(), torch.float32, rtol=1e-5,
          atol=1e-5)


# ---------------------------------------------------------------------------- the kernels
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("M,N", [(1, 4096), (37, 4096), (300, 8192), (5, 16384)])
def test_softmax(M, N, dtype):
    from tilemlir.kernels.norms import softmax
    t = DTYPES[dtype]
    x = (torch.randn(M, N, device="cuda") * 4).to(t)
    ref = torch.softmax(x.double(), dim=-1).to(t)
    out = check(softmax(M, N, dtype), [x], ref, t, rtol=HALF_TOLERANCE[dtype][0], atol=1e-6)
    assert torch.allclose(out.double().sum(-1), torch.ones(M, dtype=torch.float64,
                                                           device="cuda"), atol=2e-2)


def test_softmax_fast_exp():
    from tilemlir.kernels.norms import softmax
    x = (torch.randn(33, 4096, device="cuda") * 4).half()
    ref = torch.softmax(x.double(), dim=-1).half()
    check(softmax(33, 4096, "float16", fast=True), [x], ref, torch.float16, rtol=2e-3, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("M,N", [(1, 4096), (37, 4096), (300, 8192), (5, 16384)])
def test_rms_norm(M, N, dtype):
    from tilemlir.kernels.norms import rms_norm
    t = DTYPES[dtype]
    x = torch.randn(M, N, device="cuda").to(t)
    w = (torch.rand(N, device="cuda") + 0.5).to(t)
    xd = x.double()
    ref = (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()).to(t)
    out = check(rms_norm(M, N, dtype), [x, w], ref, t, rtol=HALF_TOLERANCE[dtype][0], atol=1e-5)
    assert_written(out)


# Two warpgroups of one CTA each sum and max their own 2 rows, spread over their 4 warps, at
# once (scope "warpgroup": named barrier 15 - wg, 128 and a window of scratch per warpgroup);
# "with_producer" adds a third warpgroup (warpgroup 0) that only syncs on its own barrier 1, as
# the producer of a warp-specialized kernel would. The sum is compared with float64 within the
# error bound of a pairwise f32 sum (f16 inputs are summed in f32: 11 levels for 2048, each
# rounding by at most 2^-24 of the sum of magnitudes below it), the max exactly.
@pytest.mark.parametrize("producer", [False, True], ids=["two_warpgroups", "with_producer"])
@pytest.mark.parametrize("src_dtype", ["float32", "float16"])
@pytest.mark.parametrize("cols", [512, 1024, 2048])
def test_warpgroup_reduce(cols, src_dtype, producer):
    from elementwise_kernels import WG_ROWS, warpgroup_reduce_kernel
    rows = 2 * WG_ROWS
    g = torch.Generator().manual_seed(cols + producer)
    x = (torch.randn(rows, cols, generator=g, dtype=torch.float64) * 4).to(DTYPES[src_dtype])
    x = x.cuda()
    total, peak = run_poisoned(warpgroup_reduce_kernel(cols, src_dtype, producer), [x],
                               [((rows, 1), torch.float32), ((rows, 1), torch.float32)])
    assert_written(total)
    assert_written(peak)
    wide = x.double()
    error = (total.double() - wide.sum(1, keepdim=True)).abs()
    assert (error <= 2e-6 * wide.abs().sum(1, keepdim=True)).all(), error.max()
    assert torch.equal(peak, wide.amax(1, keepdim=True).float())
