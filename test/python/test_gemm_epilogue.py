"""hgemm_fused on the CPU: what it cannot build is refused up front with the reason; what it
builds compiles to sm_90a PTX that ptxas assembles, takes only the operands it uses, and
applies the epilogue to the fp32 accumulator between the last wgmma and the TMA store."""

import re

import pytest

import tilemlir
from tilemlir.kernels.gemm_epilogue import ShapeError, hgemm_fused
from tilemlir.target.ptx import assemble, find_ptxas


def compiled(*args, **kwargs):
    kernel = tilemlir.compile(hgemm_fused(*args, **kwargs), target="sm_90a", cache=False)
    if find_ptxas() is not None:
        assemble(kernel.ptx, "sm_90a")
    return kernel


def epilogue_of(ptx: str) -> str:
    """The PTX from the consumers' last wgmma wait to the first TMA store."""
    start = ptx.index("wgmma.wait_group.sync.aligned \t0;")
    end = ptx.index("cp.async.bulk.tensor.2d.global.shared::cta", start)
    return ptx[start:end]


@pytest.mark.parametrize("args, kwargs, message", [
    ((256, 256, 64), dict(activation="gelu_erf"), "activation must be one of"),
    ((256, 256, 64), dict(bias=1), "bias must be True or False, got 1"),
    ((256, 256, 64), dict(residual="yes"), "residual must be True or False"),
    ((256, 256, 64), dict(alpha=float("inf")), "alpha must be a finite number, got inf"),
    ((256, 256, 64), dict(alpha=True), "alpha must be a finite number, got True"),
    ((256, 256, 64), dict(dtype="float32"), "dtype must be one of"),
    ((1000, 1004, 64), dict(EPILOGUE="tma"), "N=1004 must be a multiple of 8"),
    ((256, 256, 60), dict(PRODUCER="tma"), "K=60 must be a multiple of 8"),
    ((256, 256, 60), dict(PRODUCER="tma_or_not"), "PRODUCER must be one of"),
    ((256, 256, 64), dict(EPI_SUB=24), "EPI_SUB=24 must be a multiple of 8 dividing EPI_N=128"),
    ((256, 256, 64), dict(EPI_N=96), "EPI_N=96 must be a multiple of 64 dividing BN=256"),
    ((256, 256, 64), dict(EPI_N=256), "4 stages and a 128x256 staging buffer exceed"),
    ((256, 256, 64), dict(SMS=1), "SMS=1 leaves no room for one cluster of 2 CTAs"),
])
def test_refused_with_the_reason(args, kwargs, message):
    with pytest.raises(ShapeError, match="hgemm_fused: " + re.escape(message)):
        hgemm_fused(*args, **kwargs)


@pytest.mark.parametrize("kwargs, names", [
    (dict(), ["A", "B", "Bias", "D"]),
    (dict(residual=True), ["A", "B", "Bias", "Residual", "D"]),
    (dict(bias=False, residual=True), ["A", "B", "Residual", "D"]),
    (dict(bias=False, activation=None), ["A", "B", "D"]),
])
def test_the_kernel_takes_only_the_operands_it_uses(kwargs, names):
    kernel = compiled(1000, 1000, 512, **kwargs)
    assert [p.name for p in kernel.signature.params] == names
    # TMA maps: A, B (half a tile each CTA), D's store box and, with a residual, its load box
    boxes = [r.box for r in kernel.signature.tensor_maps]
    assert boxes == [(128, 64)] * (4 if kwargs.get("residual") else 3)
    assert kernel.signature.cluster == (2, 1, 1)


def test_bias_and_gelu_tanh_run_on_the_accumulator_before_the_store():
    ptx = compiled(1000, 1000, 512, activation="gelu_tanh", fast_math=True).ptx
    epilogue = epilogue_of(ptx)
    # the bias columns this thread holds (pairs of neighbours: one 4-byte load each; 16 for
    # the first 128 columns), widened to f32 and added
    assert len(re.findall(r"ld\.global\.v2\.b16", epilogue)) == 16
    assert "cvt.f32.f16" in epilogue and "add.f32" in epilogue
    # gelu's tanh on f32 (fast: tanh.approx), then the cast to f16 pairs and stmatrix to Cs
    assert epilogue.count("tanh.approx.f32") >= 64
    tail = epilogue[epilogue.rindex("tanh.approx.f32"):]
    assert "cvt.rn.f16x2.f32" in tail and "stmatrix" in tail
    assert "fence.proxy.async.shared::cta" in tail


@pytest.mark.parametrize("activation, instruction", [
    ("gelu_tanh", "ex2.approx"),            # precise tanh: through e^2x
    ("gelu", "fma.rn.f32"),                 # erf's polynomial
    ("silu", "ex2.approx"),
    ("relu", "max.NaN.f32"),
])
def test_each_activation_lands_in_the_epilogue(activation, instruction):
    epilogue = epilogue_of(compiled(384, 768, 320, activation=activation, bias=False).ptx)
    assert instruction in epilogue
    assert "ld.global" not in epilogue                     # no bias: nothing to load


def test_no_epilogue_math_without_bias_activation_or_scale():
    epilogue = epilogue_of(compiled(384, 768, 320, activation=None, bias=False).ptx)
    assert not re.search(r"(add|mul|fma)\.rn\.f32|ex2|tanh|ld\.global", epilogue)


def test_alpha_scales_the_accumulator():
    epilogue = epilogue_of(compiled(384, 768, 320, activation=None, bias=False, alpha=0.5).ptx)
    # the first 128-column chunk: 64 x 128 elements over a warpgroup's 128 threads
    assert epilogue.count("mul.f32") == 64 and "0f3F000000" in epilogue


def test_residual_comes_through_shared_memory_by_tma():
    ptx = compiled(1000, 1000, 512, residual=True, bias=False, activation=None).ptx
    epilogue = epilogue_of(ptx)
    # one thread loads the residual window into Cs (a complete_tx barrier), everyone waits on
    # it, reads it with ldmatrix, adds it in f32 and overwrites Cs with the result
    load = epilogue.index("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::")
    wait = epilogue.index("mbarrier.try_wait.parity.shared.b64", load)
    read = epilogue.index("ldmatrix.sync.aligned", wait)
    add = epilogue.index("add.f32", read)
    write = epilogue.index("stmatrix.sync.aligned", add)
    assert epilogue.index("bar.sync", add) < write       # all residual reads before the writes


def test_ragged_n_guards_the_bias_load_in_groups_of_8():
    """N = 1000: the one 32-column window that crosses N (columns 992..1023 of the last tile)
    has a second, guarded path that loads 8 columns at a time, where a tile inside N has only
    the whole-window loads (4 pairs a thread per window, 32 in all)."""
    inner = len(re.findall(r"ld\.global\.", compiled(512, 512, 64).ptx))
    ragged = len(re.findall(r"ld\.global\.", compiled(512, 1000, 64).ptx))
    assert inner == 32 and ragged > inner


@pytest.mark.parametrize("shape, config", [
    ((200, 256, 128), dict(SMS=4)), ((130, 203, 64), dict(SMS=3)),
    ((100, 136, 77), dict(SMS=2)), ((70, 131, 50), dict(SMS=2, residual=True)),
    ((33, 256, 64), dict(SMS=2, residual=True, activation="silu", alpha=0.5)),
    ((130, 202, 40), dict(SMS=2, residual=True))])     # even N at K <= 64: staged stores
def test_any_shape_in_the_interpreter(shape, config):
    """Rows that are not whole 16-byte units (N 203, 136, 131, 202; K 77, 50, 40) take masked
    cp.async loads without clusters, D's stores through staging rows (odd N; 202 at K 40) or
    masked (N = 136 at K 77), bias and residual read by masked loads; against numpy."""
    import math

    import numpy as np
    m, n, k = shape
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    bias = rng.standard_normal((n,)).astype(np.float16)
    args = [a, b, bias]
    x = config.get("alpha", 1.0) * (a.astype(np.float32) @ b.astype(np.float32).T) + bias
    if config.get("activation") == "silu":
        ref = x / (1 + np.exp(-x))
    else:
        ref = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if config.get("residual"):
        r = rng.standard_normal((m, n)).astype(np.float16)
        args.append(r)
        ref = ref + r.astype(np.float32)
    d = np.full((m, n), np.nan, np.float16)
    tilemlir.interpret(hgemm_fused(*shape, **config), *args, d)
    np.testing.assert_allclose(d.astype(np.float32), ref, atol=0.05, rtol=0.02)


def test_a_run_time_m():
    import numpy as np

    import tilemlir.lang as T
    kernel = hgemm_fused(T.dynamic("M"), 256, 64, SMS=2, activation=None)
    for m in (1, 130):
        rng = np.random.default_rng(m)
        a = rng.standard_normal((m, 64)).astype(np.float16)
        b = rng.standard_normal((256, 64)).astype(np.float16)
        bias = rng.standard_normal((256,)).astype(np.float16)
        d = np.full((m, 256), np.nan, np.float16)
        tilemlir.interpret(kernel, a, b, bias, d)
        ref = a.astype(np.float32) @ b.astype(np.float32).T + bias
        np.testing.assert_allclose(d.astype(np.float32), ref, atol=0.05, rtol=0.02)


@pytest.mark.parametrize("n, expected", [(1001, "staged"), (1002, "direct"), (63, "direct"),
                                         (1000, "tma")])
def test_the_default_epilogue_follows_the_plain_gemm(n, expected):
    """EPILOGUE=None builds what parts.unaligned_epilogue picks for N (the plain GEMM's rule:
    staged 16-byte stores for an odd N from 64 columns), TMA stores for whole 16-byte rows."""
    default = tilemlir.compile(hgemm_fused(300, n, 256), target="sm_90a", cache=False).ptx
    chosen = tilemlir.compile(hgemm_fused(300, n, 256, EPILOGUE=expected), target="sm_90a",
                              cache=False).ptx
    assert default == chosen
