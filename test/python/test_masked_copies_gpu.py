"""Masked copies on the GPU: ragged tiles through shared memory (plain and cp.async) and
registers, against numpy, with NaN-poisoned outputs (so nothing out of range may be written and
nothing in range skipped) and the fill value where the tile hangs past the edge."""

import numpy as np
import pytest

import tilemlir
from masked_kernels import expected_seen, through_registers, through_shared

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

SHAPES = [(64, 64), (100, 40), (1, 1), (1, 13), (65, 127), (200, 8), (130, 3), (7, 200)]
DTYPES = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}


def _run(kernel, M, N, dtype):
    torch_dtype = DTYPES[dtype]
    a = torch.randn(M, N, device="cuda").to(torch_dtype)
    tm, tn = (M + 63) // 64, (N + 63) // 64
    d = torch.full((M, N), float("nan"), device="cuda", dtype=torch_dtype)
    seen = torch.full((tm * tn * 64, 64), float("nan"), device="cuda", dtype=torch_dtype)
    tilemlir.compile(kernel, target="sm_90a")(a, d, seen)
    torch.cuda.synchronize()
    return a.float().cpu().numpy(), d.float().cpu().numpy(), seen.float().cpu().numpy()


@pytest.mark.parametrize("M,N", SHAPES)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("fill", [0.0, -3.0])
def test_through_shared(M, N, dtype, fill):
    a, d, seen = _run(through_shared(M, N, dtype, fill), M, N, dtype)
    np.testing.assert_array_equal(d, a)
    np.testing.assert_array_equal(seen, expected_seen(a, M, N, fill))


@pytest.mark.parametrize("M,N", SHAPES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_through_shared_by_cp_async(M, N, dtype):
    a, d, seen = _run(through_shared(M, N, dtype, asynchronous=True), M, N, dtype)
    np.testing.assert_array_equal(d, a)
    np.testing.assert_array_equal(seen, expected_seen(a, M, N, 0.0))


@pytest.mark.parametrize("M,N", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("fill", [0.0, float("-inf")])
def test_through_registers(M, N, dtype, fill):
    a, d, seen = _run(through_registers(M, N, dtype, fill), M, N, dtype)
    np.testing.assert_array_equal(d, a)
    np.testing.assert_array_equal(seen, expected_seen(a, M, N, fill))


@pytest.mark.parametrize("M,N", [(9, 301), (5, 1), (17, 1030), (3, 8), (33, 4097)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_shifted_rows(M, N, dtype):
    """Rows read and written from the 16-byte boundary below each row's start, lower and upper
    bounds cutting the 16-byte runs at the row's ends (split element by element), and the
    weight read realigned through a window that starts before it: against numpy, outputs
    NaN-poisoned."""
    from masked_kernels import expected_shifted, shifted_rows
    t = DTYPES[dtype]
    x = torch.randn(M, N, device="cuda").to(t)
    w = torch.randn(N, device="cuda").to(t)
    width = -(-(N + 7) // 256) * 256
    y = torch.full((M, N), float("nan"), device="cuda", dtype=t)
    seen, v = (torch.full((M, width), float("nan"), device="cuda", dtype=t) for _ in range(2))
    tilemlir.compile(shifted_rows(M, N, dtype, -2.0), target="sm_90a")(x, w, y, seen, v)
    torch.cuda.synchronize()
    want_seen, want_v = expected_shifted(x.float().cpu().numpy(), w.float().cpu().numpy(), -2.0)
    np.testing.assert_array_equal(y.float().cpu().numpy(), x.float().cpu().numpy())
    np.testing.assert_array_equal(seen.float().cpu().numpy(), want_seen)
    np.testing.assert_array_equal(v.float().cpu().numpy(), want_v)
