"""The Hopper twins of seed 000's kernels on the H200, against torch in float32."""

import pytest

from tilemlir.kernels.hgemm_wgmma import hgemm_wgmma_v1, hgemm_wgmma_v2, hgemm_wgmma_v3

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from gpu_check import check  # noqa: E402  (needs torch)

CASES = [
    (hgemm_wgmma_v1, (128, 128, 64)),
    (hgemm_wgmma_v2, (128, 128, 64)),
    (hgemm_wgmma_v2, (128, 128, 1024)),
    (hgemm_wgmma_v3, (128, 128, 64)),
    (hgemm_wgmma_v3, (128, 128, 1024)),
    (hgemm_wgmma_v3, (256, 256, 256)),
    (hgemm_wgmma_v3, (4096, 4096, 4096)),
]


@pytest.fixture(autouse=True)
def _sm90():
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("wgmma needs an sm_90a GPU (Hopper)")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("factory, shape", CASES, ids=[f"{f.__name__}-{'x'.join(map(str, s))}"
                                                       for f, s in CASES])
def test_twin_matches_torch(factory, shape, dtype):
    m, n, k = shape
    kernel = factory(m, n, k, "float16" if dtype == torch.float16 else "bfloat16")
    for _ in range(2):                      # fresh inputs each time
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(n, k, device="cuda", dtype=dtype)
        check(kernel, [a, b], a.float() @ b.float().T, dtype, rtol=2e-2, atol=1e-2)
