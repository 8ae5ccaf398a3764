"""Several GPUs in one process: a call runs on its tensors' device (MLIR's CUDA runtime serves the
first device used, the driver API any other), in that device's current stream; tensors on two
devices are refused. Needs two GPUs."""

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if torch.cuda.is_available() and torch.cuda.device_count() < 2:
    pytestmark = [pytest.mark.gpu, pytest.mark.skip(reason="needs two GPUs")]

import tilemlir  # noqa: E402
from tilemlir.runtime.args import ArgumentError  # noqa: E402

from cluster_kernels import cluster_ranks  # noqa: E402
from gpu_check import assert_matches, assert_written  # noqa: E402  (needs torch)


def _demo(device):
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    a = torch.randn(16, 16, device=device, dtype=torch.float16)
    b = torch.randn(16, 8, device=device, dtype=torch.float16)
    d = torch.full((16, 8), float("nan"), device=device, dtype=torch.float32)
    gemm_16x8x16(a, b, d)
    assert_written(d)
    assert_matches(d, a.double() @ b.double(), rel_error=1e-5)


def test_each_call_runs_on_its_tensors_device():
    for device in ("cuda:0", "cuda:1", "cuda:0", "cuda:1"):
        _demo(device)


def test_the_first_device_may_be_the_second_gpu():
    """The runtime bound to cuda:1 (first call there), cuda:0 through the driver API."""
    code = textwrap.dedent("""
        import torch
        from tilemlir.kernels.mma_demo import gemm_16x8x16
        from tilemlir.runtime import launch
        for device in ("cuda:1", "cuda:0", "cuda:1"):
            a = torch.randn(16, 16, device=device, dtype=torch.float16)
            b = torch.randn(16, 8, device=device, dtype=torch.float16)
            d = torch.full((16, 8), float("nan"), device=device, dtype=torch.float32)
            gemm_16x8x16(a, b, d)
            ref = a.double() @ b.double()
            err = ((d.double() - ref).norm() / ref.norm()).item()
            assert err < 1e-5, (device, err)
        assert launch.bound_device() == 1
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


def test_mixed_devices_are_refused_by_name():
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    a = torch.randn(16, 16, device="cuda:0", dtype=torch.float16)
    b = torch.randn(16, 8, device="cuda:1", dtype=torch.float16)
    d = torch.zeros(16, 8, device="cuda:0", dtype=torch.float32)
    with pytest.raises(ArgumentError, match="argument 'B_g' is on cuda:1 but earlier arguments "
                                            "are on cuda:0"):
        gemm_16x8x16(a, b, d)


def test_tma_kernel_on_the_second_gpu_is_ordered_on_its_side_stream():
    """hgemm_v6 (TMA tensor maps, > 48 KiB of shared memory) on cuda:1, input produced by a copy
    queued behind a long matmul on a side stream of cuda:1: no stale reads."""
    from tilemlir.kernels.hgemm_hopper import hgemm_v6
    M, N, K = 256, 512, 256
    kernel = tilemlir.compile(hgemm_v6(M, N, K))
    dev = torch.device("cuda:1")
    big = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    side = torch.cuda.Stream(device=dev)
    for _ in range(5):
        src = torch.randn(M, K, device=dev, dtype=torch.float16)
        b = torch.randn(N, K, device=dev, dtype=torch.float16)
        a = torch.zeros(M, K, device=dev, dtype=torch.float16)
        d = torch.full((M, N), float("nan"), device=dev, dtype=torch.float16)
        torch.cuda.synchronize(dev)
        with torch.cuda.stream(side):
            big @ big                       # keeps the stream busy for a while
            a.copy_(src)
            kernel(a, b, d)
        side.synchronize()
        assert_written(d)
        assert_matches(d, src.double() @ b.double().T, rel_error=1e-2)


def test_cluster_kernel_on_the_driver_path():
    """A cluster launch (cuLaunchKernelEx) on whichever GPU the runtime does not serve."""
    from tilemlir.runtime import launch

    kernel = tilemlir.compile(cluster_ranks, target="sm_90a")
    _demo("cuda:0")                                    # the runtime has its device by now
    other = 1 - launch.bound_device()
    for device in (other, launch.bound_device()):
        d = torch.full((8,), -1, device=f"cuda:{device}", dtype=torch.int32)
        kernel(d)
        assert d.tolist() == [0, 1] * 4, device
