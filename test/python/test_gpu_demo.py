"""The seed-001 demo on a GPU: D[16,8] = A[16,16] . B[16,8], one warp, one mma.sync."""

import numpy as np
import pytest

from tilemlir.runtime import Executable

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def kernel():
    from pathlib import Path

    from tilemlir.runtime.cuda import device_chip
    text = (Path(__file__).resolve().parents[2] / "examples" / "mma_demo.mlir").read_text()
    return Executable.from_text(text, device_chip()).kernel("gemm_16x8x16")


def _reference(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_demo_matches_float32_reference_numpy(kernel, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    d = np.full((16, 8), np.nan, np.float32)          # poison: every element must be written
    kernel(a, b, d)
    assert not np.isnan(d).any()
    ref = _reference(a, b)
    assert np.linalg.norm(d - ref) / np.linalg.norm(ref) < 1e-5


def test_demo_on_torch_cuda_tensors(kernel):
    torch = pytest.importorskip("torch")
    a = torch.randn(16, 16, device="cuda", dtype=torch.float16)
    b = torch.randn(16, 8, device="cuda", dtype=torch.float16)
    d = torch.full((16, 8), float("nan"), device="cuda", dtype=torch.float32)
    kernel(a, b, d)
    ref = a.float() @ b.float()
    assert not torch.isnan(d).any()
    assert ((d - ref).norm() / ref.norm()).item() < 1e-5
    d.fill_(float("nan"))
    kernel.launch(a, b, d, stream=torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    assert ((d - ref).norm() / ref.norm()).item() < 1e-5


def test_demo_on_cupy_arrays(kernel):
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(7)
    a = cp.asarray(rng.standard_normal((16, 16)).astype(np.float16))
    b = cp.asarray(rng.standard_normal((16, 8)).astype(np.float16))
    d = cp.full((16, 8), cp.nan, dtype=cp.float32)
    kernel(a, b, d)
    ref = _reference(cp.asnumpy(a), cp.asnumpy(b))
    out = cp.asnumpy(d)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-5


def test_numpy_arrays_in_a_process_that_never_touched_cuda():
    """Only tilemlir uses CUDA here: the copies in and out must still find a context."""
    import subprocess
    import sys
    code = ("import numpy as np\n"
            "from tilemlir.kernels.mma_demo import gemm_16x8x16\n"
            "rng = np.random.default_rng(0)\n"
            "a = rng.standard_normal((16, 16)).astype(np.float16)\n"
            "b = rng.standard_normal((16, 8)).astype(np.float16)\n"
            "d = np.full((16, 8), np.nan, np.float32)\n"
            "gemm_16x8x16(a, b, d)\n"
            "ref = a.astype(np.float64) @ b.astype(np.float64)\n"
            "assert np.linalg.norm(d - ref) / np.linalg.norm(ref) < 1e-5, d\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
