"""Seed 000's roadmap on Hopper (TMA pipeline, warp specialization, persistent tiles with TMA
stores, 2x1 clusters with B multicast) on the H200, against torch
in float32, with NaN-poisoned outputs and fresh inputs, including K that is not a multiple of
the 64-wide k-tile (TMA zero-fills the edge) and, for v6 and v7, ragged M and N (TMA stores
clip); for v7 also an odd number of tile rows (a pair's second tile lies past M), and
several tiles per CTA with fewer k-tiles than epilogue chunks (the previous tile's chunks are
stored under the next tile's first k-tiles, the rest after them)."""

import pytest

from tilemlir.kernels.hgemm_hopper import hgemm_v4, hgemm_v5, hgemm_v6, hgemm_v7

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from gpu_check import check  # noqa: E402  (needs torch)

CASES = [
    (hgemm_v4, (128, 256, 64), {}),
    (hgemm_v4, (256, 512, 1024), {}),
    (hgemm_v4, (1024, 1024, 1000), {}),            # ragged K
    (hgemm_v4, (512, 256, 512), dict(BM=64, BN=128, STAGES=3)),
    (hgemm_v5, (128, 256, 64), {}),
    (hgemm_v5, (256, 512, 1024), {}),
    (hgemm_v5, (1024, 1024, 1000), {}),            # ragged K
    (hgemm_v5, (512, 256, 512), dict(BM=64, BN=128, STAGES=3)),
    (hgemm_v5, (576, 512, 320), dict(BM=192, BN=128, STAGES=3)),
    (hgemm_v5, (4096, 4096, 4096), {}),
    (hgemm_v6, (128, 256, 64), {}),
    (hgemm_v6, (1024, 1024, 1024), {}),
    (hgemm_v6, (1024, 1024, 1024), dict(SMS=5)),   # several tiles per CTA, ring wraps
    (hgemm_v6, (1000, 1000, 1000), {}),            # ragged M, N, K: TMA clips and zero-fills
    (hgemm_v6, (3000, 5120, 2056), {}),
    (hgemm_v6, (200, 136, 72), dict(BM=64, BN=128)),
    (hgemm_v6, (4096, 4096, 4096), {}),
    (hgemm_v7, (256, 512, 256), {}),
    (hgemm_v7, (384, 768, 320), {}),              # 3 tile rows: the odd pair's second tile
    (hgemm_v7, (1000, 1000, 512), {}),            # ragged M, N
    (hgemm_v7, (1024, 1024, 1000), dict(SMS=4)),  # 2 clusters, 8 pairs each, ring wraps
    (hgemm_v7, (136, 200, 72), dict(BM=64, BN=128)),
    (hgemm_v7, (3000, 5120, 2056), {}),
    (hgemm_v7, (4096, 4096, 4096), {}),
    (hgemm_v7, (384, 768, 320), dict(CLUSTER_RELEASE=True)),
    (hgemm_v7, (1024, 1024, 1000), dict(SMS=4, CLUSTER_RELEASE=True)),
    # one k-tile per tile, two epilogue chunks: the second stored with no MMA over it
    (hgemm_v7, (1000, 1000, 64), dict(SMS=2)),
    (hgemm_v7, (1000, 1000, 1000), dict(SMS=4, OVERLAP_EPILOGUE=False)),
    # 128 x 192 and 128 x 320 tiles (two wgmma n160 along N): ragged, several pairs a cluster
    (hgemm_v7, (1000, 1000, 1000), dict(BN=192, STAGES=4, EPI_N=64, SMS=4)),
    (hgemm_v7, (1000, 1000, 1000), dict(BN=320, STAGES=3, EPI_N=64, SMS=4)),
    (hgemm_v7, (1280, 4096, 4096), dict(BN=320, STAGES=3, EPI_N=64)),
]


@pytest.fixture(autouse=True)
def _sm90():
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("TMA + wgmma kernels need an sm_90a GPU (Hopper)")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("factory, shape, config", CASES,
                         ids=[f"{f.__name__}-{'x'.join(map(str, s))}-{i}"
                              for i, (f, s, _) in enumerate(CASES)])
def test_matches_torch(factory, shape, config, dtype):
    m, n, k = shape
    kernel = factory(m, n, k, "float16" if dtype == torch.float16 else "bfloat16", **config)
    for _ in range(2):                      # fresh inputs each time
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(n, k, device="cuda", dtype=dtype)
        check(kernel, [a, b], a.float() @ b.float().T, dtype, rtol=2e-2, atol=2e-2 * k ** 0.5)
