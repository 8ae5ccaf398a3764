"""The seed-001 demo written in the language, run on the GPU from one Python call."""

import pytest

pytestmark = pytest.mark.gpu


def test_demo_kernel_runs_from_one_call_with_torch_tensors():
    torch = pytest.importorskip("torch")
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    for _ in range(3):
        a = torch.randn(16, 16, device="cuda", dtype=torch.float16)
        b = torch.randn(16, 8, device="cuda", dtype=torch.float16)
        d = torch.full((16, 8), float("nan"), device="cuda", dtype=torch.float32)
        gemm_16x8x16(a, b, d)
        ref = a.double() @ b.double()
        assert not torch.isnan(d).any()
        assert ((d.double() - ref).norm() / ref.norm()).item() < 1e-5
