"""The pipelined mma.sync GEMM (tilemlir/kernels/gemm_mma_sync.py): shape rules, code shape,
and (on a GPU) numerics against a float32 reference with NaN-poisoned outputs."""

import pytest

import tilemlir
from tilemlir.kernels.gemm_mma_sync import ShapeError, gemm_mma_sync


@pytest.mark.parametrize("shape, message", [
    ((1000, 1024, 1024), "M=1000 is not a multiple of the tile's M extent 128"),
    ((1024, 1000, 1024), "N=1000 is not a multiple of the tile's N extent 256"),
    ((1024, 1024, 1000), "K=1000 is not a multiple of the tile's K extent 64"),
])
def test_shapes_off_the_tile_are_rejected_clearly(shape, message):
    with pytest.raises(ShapeError, match=message):
        gemm_mma_sync(*shape)


def test_the_main_loop_is_built_from_the_fast_variants():
    ptx = tilemlir.compile(gemm_mma_sync(1024, 1024, 1024), target="sm_90a", cache=False).ptx
    # Per warp and 64-deep k-tile: 4 x (4 + 4) ldmatrix.x4 and 4 x 4 x 8 mma.sync; the CTA
    # copies 128 + 256 rows of 128 bytes with 16-byte cp.async; stmatrix + 16-byte stores out.
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") >= 32
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 128
    assert "cp.async.cg.shared.global" in ptx and "stmatrix.sync.aligned" in ptx
    assert "st.global.v4.b32" in ptx and "ld.local" not in ptx and "st.local" not in ptx


CASES = [((256, 512, 192), {}, "float16"), ((256, 512, 192), {}, "bfloat16"),
         ((384, 256, 448), dict(BM=128, BN=128, BK=32, STAGES=3), "float16"),
         ((512, 256, 256), dict(BM=256, BN=128, BK=128, STAGES=2), "bfloat16"),
         ((256, 256, 128), dict(EPILOGUE=0, SPREAD=0), "float16")]


@pytest.mark.gpu
@pytest.mark.parametrize("shape, params, dtype", CASES)
def test_numerics_on_the_gpu(shape, params, dtype):
    torch = pytest.importorskip("torch")
    m, n, k = shape
    t = {"float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    kernel = tilemlir.compile(gemm_mma_sync(m, n, k, dtype, **params))
    for _ in range(2):
        a = torch.randn(m, k, device="cuda", dtype=t)
        b = torch.randn(n, k, device="cuda", dtype=t)
        d = torch.full((m, n), float("nan"), device="cuda", dtype=t)
        kernel(a, b, d)
        ref = a.float() @ b.float().T
        assert not torch.isnan(d).any(), "some outputs were never written"
        assert ((d.float() - ref).norm() / ref.norm()).item() < 1e-2
