"""hgemm_decode (a small M: D^T = B A^T, B's rows on wgmma's 64-row side) without a GPU: the
interpreter against numpy at M below and at its padding, ragged N, split K, cp.async for K not a
multiple of 8 and a run-time M; the transposed store in the IR; ptxas; the front door's
choice; refusals."""

import numpy as np
import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.kernels import gemm
from tilemlir.kernels.gemm_decode import decode_buffers_shapes, hgemm_decode, mpad_for
from tilemlir.kernels.parts import ShapeError
from tilemlir.target.ptx import assemble, find_ptxas


def _run(kernel, m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    d = np.full((m, n), np.nan, np.float16)
    sig = tilemlir.compile(kernel, target="sm_90a").signature
    extra = [np.zeros(p.shape, np.float32 if p.dtype == "f32" else np.int32)
             for p in sig.params[3:]]
    tilemlir.interpret(kernel, a, b, d, *extra)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(d.astype(np.float32), ref, atol=0.05, rtol=0.01)


@pytest.mark.parametrize("shape,config", [
    ((1, 256, 256), dict(SMS=2)), ((7, 300, 130), dict(SMS=3, BN=64, PRODUCER="cp_async")),
    ((16, 256, 512), dict(SMS=4, SPLIT_K=2)), ((64, 192, 256), dict(SMS=3, SPLIT_K=3, BN=64)),
    ((3, 200, 77), dict(SMS=2, SPLIT_K=2, PRODUCER="cp_async")), ((40, 131, 64), dict(SMS=2))])
def test_decode_matches_numpy(shape, config):
    _run(hgemm_decode(*shape, **config), *shape)


def test_one_kernel_for_every_m_up_to_its_padding():
    kernel = hgemm_decode(T.dynamic("M"), 256, 128, MPAD=16, SMS=2)
    for m in (1, 9, 16):
        _run(kernel, m, 256, 128, seed=m)


def test_the_epilogue_stores_the_accumulator_transposed_and_ptxas_takes_it():
    kernel = hgemm_decode(1, 4096, 4096, SPLIT_K=2, BN=64)
    ptx = tilemlir.compile(kernel, target="sm_90a", cache=False, line_info=False).ptx
    assert "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16" in ptx
    assert "st.global.b16" in ptx and "stmatrix" not in ptx
    if find_ptxas():
        assemble(ptx, "sm_90a")
    assert decode_buffers_shapes(4096, BN=64, MPAD=8, SPLIT_K=2) == ((64 * 2 * 64, 8), (64,))


def test_the_front_door_takes_decode_for_small_m():
    for m in (1, 8, 9, 33, 64):
        config = gemm.choose_config(m, 4096, 4096)
        assert config["KERNEL"] == "hgemm_decode" and config["MPAD"] == mpad_for(m)
    assert gemm.choose_config(65, 4096, 4096)["KERNEL"] != "hgemm_decode"
    one, two = gemm.hgemm(3, 4096, 4096, target="sm_90a"), gemm.hgemm(5, 4096, 4096,
                                                                      target="sm_90a")
    assert one.config == two.config and one.kernel is two.kernel    # M is a run-time dim


@pytest.mark.parametrize("call,message", [
    (lambda: hgemm_decode(65, 256, 256), "M=65 must be an integer from 1 to 64"),
    (lambda: hgemm_decode(9, 256, 256, MPAD=8), "MPAD=8 must be one of .* and hold M=9"),
    (lambda: hgemm_decode(T.dynamic("M"), 256, 256), "a run-time M needs MPAD"),
    (lambda: hgemm_decode(1, 256, 255), "K=255 must be a multiple of 8 .*PRODUCER='cp_async'"),
    (lambda: hgemm_decode(1, 256, 256, SPLIT_K=5), "SPLIT_K=5 must be an integer from 1 to "
                                                   "the 4 k-tiles"),
])
def test_refusals_name_the_parameter(call, message):
    with pytest.raises(ShapeError, match=message):
        call()


@pytest.mark.parametrize("shape, bn, least_units", [
    ((1, 4096, 4095), 128, 128), ((8, 4096, 14335), 128, 128), ((32, 1000, 777), 64, 64),
    ((516, 1, 5323), 64, 120), ((837, 5, 8051), 64, 120), ((2000, 16, 4095), 64, 128),
    ((1000, 1, 4096), 64, 64), ((300, 16, 8192), 64, 40)])
def test_few_tiles_split_k_until_the_sms_read(shape, bn, least_units):
    """The model's pick spreads K over enough CTAs (in one wave): the realigned producer (odd
    K) streams slowly per CTA and needs every SM, and a narrow-N shape (M and N exchanged) has
    few tiles. Near each one timed best on the H200 (results/2026-12-03-session8/
    decode-candidates.md)."""
    M, N, K = shape
    config = gemm.choose_config(*shape)
    assert config["KERNEL"] == "hgemm_decode" and config["MPAD"] == mpad_for(min(M, N))
    assert config.get("SWAP", False) == (N < M) and config["BN"] == bn
    tiles = -(-max(M, N) // bn)
    assert least_units <= tiles * config["SPLIT_K"] <= 132


@pytest.mark.parametrize("M", [1, 2, 4, 8, 16, 32, 64])
def test_the_decode_suite_keeps_its_fitted_splits(M):
    """K a multiple of 8 (the TMA producer) with many tiles: the splits fitted in session 3
    (results/2026-12-02-session3/run3/decode.md) stand: 4096 x 4096 split in two, 14336 and
    128256 rows unsplit."""
    assert gemm.choose_config(M, 4096, 4096)["SPLIT_K"] == 2
    assert gemm.choose_config(M, 14336, 4096)["SPLIT_K"] == 1
    assert gemm.choose_config(M, 128256, 4096)["SPLIT_K"] == 1
