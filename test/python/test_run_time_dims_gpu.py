"""Run-time dims on the GPU: one compiled kernel called at many M through the torch fast path
and the checked numpy path, the GEMM front door at many M (NaN-poisoned, against fp32), and an
argument whose rows disagree refused by name."""

import numpy as np
import pytest

import tilemlir
from run_time_dims_kernels import scale_rows
from tilemlir.kernels.gemm import hgemm
from tilemlir.runtime.args import ArgumentError

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


def test_one_kernel_at_every_m_through_torch_and_numpy():
    kernel = tilemlir.compile(scale_rows())
    for rows in (1, 3, 64, 1000, 4099):
        x = torch.randn(rows, 128, device="cuda")
        y = torch.full_like(x, float("nan"))
        kernel(x, y)
        torch.cuda.synchronize()
        assert torch.equal(y, 2 * x)
    xn = np.random.rand(37, 128).astype(np.float32)
    yn = np.full_like(xn, np.nan)
    kernel(xn, yn)
    np.testing.assert_array_equal(yn, 2 * xn)
    with pytest.raises(ArgumentError, match="argument 'Y' has 9 rows but 'X' has 10"):
        kernel(torch.randn(10, 128, device="cuda"), torch.empty(9, 128, device="cuda"))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
def test_the_front_door_at_many_m(dtype):
    n, k = 1024, 512
    b = torch.randn(n, k, device="cuda", dtype=dtype)
    compiled = set()
    for rows in (1, 7, 64, 100, 129, 1000, 3000, 4097):
        a = torch.randn(rows, k, device="cuda", dtype=dtype)
        gemm = hgemm(rows, n, k, str(dtype).removeprefix("torch."))
        d = torch.full((rows, n), float("nan"), device="cuda", dtype=dtype)
        gemm(a, b, out=d)
        torch.cuda.synchronize()
        ref = a.float() @ b.float().T
        assert not torch.isnan(d).any()
        assert ((d.float() - ref).norm() / ref.norm()).item() < 1e-2
        compiled.add(id(gemm.kernel))
    assert len(compiled) < 8               # Ms of one configuration share one compiled kernel
