"""The Hopper GEMM factories (CPU): configurations they cannot build are refused up front with
the reason, and the ones they accept compile to sm_90a PTX with the tensor maps they need."""

import pytest

import tilemlir
from tilemlir.kernels.hgemm_hopper import ShapeError, hgemm_v4, hgemm_v5, hgemm_v6


@pytest.mark.parametrize("factory, args, kwargs, message", [
    (hgemm_v5, (100, 256, 64), {}, "M=100 is not a multiple of the tile's M extent 128"),
    (hgemm_v4, (128, 256, 60), {}, "K=60 must be a multiple of 8"),
    (hgemm_v5, (192, 256, 64), dict(BM=96), "BM=96 must be 64, 128, 192 or 256"),
    (hgemm_v5, (128, 512, 64), dict(BN=512), "BN=512 must be a multiple of 8 up to 256"),
    (hgemm_v5, (128, 256, 64), dict(BK=32), "BK must be 64"),
    (hgemm_v5, (128, 256, 64), dict(STAGES=5), "5 stages of 49152 bytes exceed the 227 KiB"),
    (hgemm_v5, (128, 256, 64), dict(dtype="float32"), "dtype must be one of"),
    (hgemm_v5, (256, 128, 64), dict(BM=256, BN=128, STAGES=3, CONSUMER_REGS=200),
     "register budgets 40 + 4 x 200 per thread exceed the register file"),
    (hgemm_v6, (1000, 1004, 64), {}, "N=1004 must be a multiple of 8"),
    (hgemm_v6, (128, 256, 64), dict(EPI_N=96), "EPI_N=96 must be a multiple of 64 dividing"),
    (hgemm_v6, (128, 256, 64), dict(EPI_N=256), "4 stages and a 128x256 staging buffer exceed"),
])
def test_refused_with_the_reason(factory, args, kwargs, message):
    with pytest.raises(ShapeError, match=message.replace("(", r"\(").replace("+", r"\+")):
        factory(*args, **kwargs)


def test_consumer_budget_fits_the_register_file():
    # three consumers: 40 + 3 x 152 <= 512 registers per thread of a warpgroup
    kernel = tilemlir.compile(hgemm_v5(192, 128, 64, BM=192, BN=128, STAGES=3),
                              target="sm_90a", cache=False)
    assert "setmaxnreg.inc.sync.aligned.u32 \t152;" in kernel.ptx


@pytest.mark.parametrize("factory, shape, maps", [
    (hgemm_v4, (128, 256, 64), [(0, (128, 64)), (1, (256, 64))]),
    (hgemm_v5, (128, 256, 64), [(0, (128, 64)), (1, (256, 64))]),
    (hgemm_v6, (1000, 1000, 1000), [(0, (128, 64)), (1, (256, 64)), (2, (64, 64))]),
])
def test_tensor_maps_follow_the_shared_tiles(factory, shape, maps):
    kernel = tilemlir.compile(factory(*shape), target="sm_90a", cache=False)
    got = [(r.param, r.box, r.swizzle) for r in kernel.signature.tensor_maps]
    assert got == [(p, box, 128) for p, box in maps]
    assert [r.arg for r in kernel.signature.tensor_maps] == list(range(3, 3 + len(maps)))
