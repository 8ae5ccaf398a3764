"""Seed 001 numerics on the GPU: tile.gemm -> mma.sync over 9 tilings x 4 (dtype, beta) modes and
the 4 transpose combinations x 2 dtypes, against a float64 reference, outputs poisoned first."""

import pytest

from tilemlir.kernels.warp_gemm import warp_gemm

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from gpu_check import check  # noqa: E402  (needs torch)

TILINGS = [
    (16, 8, 16),     # single tile
    (32, 8, 16),     # multi-tile along M
    (16, 32, 16),    # along N
    (16, 8, 64),     # along K
    (32, 16, 32),    # along all
    (64, 8, 16),     # M = 64
    (64, 32, 64),    # larger in every dim
    (16, 8, 8),      # a k8 case (one register group per K step)
    (16, 8, 24),     # K = 24: k16 cannot tile it, k8 is chosen
]
MODES = [("float16", 0.0), ("float16", 1.0), ("bfloat16", 0.0), ("bfloat16", 1.0)]
TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _run(M, N, K, dtype, beta, ta=False, tb=False):
    kernel = warp_gemm(M, N, K, dtype, beta, ta, tb)
    a = torch.randn(M, K, device="cuda", dtype=TORCH[dtype])
    b = torch.randn(K, N, device="cuda", dtype=TORCH[dtype])
    c = torch.randn(M, N, device="cuda", dtype=torch.float32)
    ref = a.double() @ b.double() + (c.double() if beta == 1.0 else 0)
    check(kernel, [a.t().contiguous() if ta else a, b.t().contiguous() if tb else b, c], ref,
          torch.float32, rel_error=1e-5)


@pytest.mark.parametrize("dtype, beta", MODES)
@pytest.mark.parametrize("M, N, K", TILINGS)
def test_tiled(M, N, K, dtype, beta):
    _run(M, N, K, dtype, beta)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)])
def test_transposes(ta, tb, dtype):
    _run(32, 16, 32, dtype, 0.0, ta, tb)
