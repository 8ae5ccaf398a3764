"""The driver-API path (cuda-python's cuda.bindings) that serves every device but the one MLIR's
runtime is bound to, exercised on one GPU by loading kernels through it on the runtime's own
device: module load, a plain launch, a cluster launch, a TMA kernel with more than 48 KiB of
shared memory, each in the device's primary context with the caller's context left as it was.
Then the views: streams given as torch, cuda.core and cuda-python objects, and tensors seen only
through DLPack or only through the CUDA Array Interface (cuda.core's StridedMemoryView)."""

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

import tilemlir  # noqa: E402

from cluster_kernels import cluster_ranks  # noqa: E402
from gpu_check import assert_matches, assert_written  # noqa: E402  (needs torch)


def _through_the_driver(kernel, device: int = 0):
    """`kernel` runs on `device` through cuda.DriverFunction instead of MLIR's runtime."""
    from tilemlir.runtime import cuda
    kernel._functions[device] = cuda.DriverFunction(kernel.ptx, kernel.name, device)
    kernel._launchers.clear()
    return kernel


def _current_context():
    from tilemlir.runtime.cuda import check, driver
    return int(check("cuCtxGetCurrent", driver().cuCtxGetCurrent()) or 0)


def _demo_inputs():
    a = torch.randn(16, 16, device="cuda", dtype=torch.float16)
    b = torch.randn(16, 8, device="cuda", dtype=torch.float16)
    d = torch.full((16, 8), float("nan"), device="cuda", dtype=torch.float32)
    return a, b, d


def test_a_plain_kernel_through_the_driver_leaves_the_callers_context():
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    kernel = _through_the_driver(tilemlir.compile(gemm_16x8x16, cache=False))
    a, b, d = _demo_inputs()
    device, context = torch.cuda.current_device(), _current_context()
    kernel(a, b, d)
    kernel.launch(a, b, d, stream=torch.cuda.current_stream())      # the checked path too
    torch.cuda.synchronize()
    assert (torch.cuda.current_device(), _current_context()) == (device, context)
    assert_written(d)
    assert_matches(d, a.double() @ b.double(), rel_error=1e-5)


def test_a_cluster_kernel_through_the_driver():
    kernel = _through_the_driver(tilemlir.compile(cluster_ranks, target="sm_90a", cache=False))
    d = torch.full((8,), -1, device="cuda", dtype=torch.int32)
    kernel(d)
    assert d.tolist() == [0, 1] * 4


def _hgemm(M=256, N=512, K=256):
    from tilemlir.kernels.hgemm_hopper import hgemm_v6
    return tilemlir.compile(hgemm_v6(M, N, K), cache=False)


def _ordered_on(kernel, make_stream_arg, M=256, N=512, K=256):
    """The kernel's input is written by a copy queued behind a long matmul on a side stream;
    the kernel is called with `stream=make_stream_arg(side)` and must read the copy's result."""
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()
    for _ in range(3):
        src = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(N, K, device="cuda", dtype=torch.float16)
        a = torch.zeros(M, K, device="cuda", dtype=torch.float16)
        d = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            big @ big                       # keeps the stream busy for a while
            a.copy_(src)
        kernel(a, b, d, stream=make_stream_arg(side))
        side.synchronize()
        assert_written(d)
        assert_matches(d, src.double() @ b.double().T, rel_error=1e-2)


def test_a_tma_kernel_with_large_shared_memory_through_the_driver():
    _ordered_on(_through_the_driver(_hgemm()), lambda side: side)


def _core():
    try:
        import cuda.core as core
        core.Stream
    except (ImportError, AttributeError):
        import cuda.core.experimental as core
    return core


@pytest.mark.parametrize("kind", ["torch", "cuda.core", "CUstream", "int"])
def test_streams_of_every_kind(kind):
    from cuda.bindings import driver

    def as_kind(side):
        if kind == "torch":
            return side
        if kind == "cuda.core":
            return _core().Stream.from_handle(side.cuda_stream)
        if kind == "CUstream":
            return driver.CUstream(side.cuda_stream)
        return side.cuda_stream
    _ordered_on(_hgemm(), as_kind)


class DLPackOnly:
    """A tensor seen only through DLPack (as a framework other than torch exports it)."""

    def __init__(self, t):
        self._t = t

    def __dlpack__(self, **kwargs):
        return self._t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()


class ArrayInterfaceOnly:
    """A tensor seen only through the CUDA Array Interface (numba, older cupy)."""

    def __init__(self, t):
        self._t = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


@pytest.mark.parametrize("wrap", [DLPackOnly, ArrayInterfaceOnly])
def test_tensors_through_dlpack_or_the_cuda_array_interface(wrap):
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    kernel = tilemlir.compile(gemm_16x8x16)
    a, b, d = _demo_inputs()
    kernel(wrap(a), wrap(b), wrap(d), stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert_written(d)
    assert_matches(d, a.double() @ b.double(), rel_error=1e-5)


def test_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    kernel = tilemlir.compile(gemm_16x8x16)
    a = cupy.random.standard_normal((16, 16)).astype(cupy.float16)
    b = cupy.random.standard_normal((16, 8)).astype(cupy.float16)
    d = cupy.full((16, 8), cupy.nan, dtype=cupy.float32)
    kernel(a, b, d)                     # on cupy's current stream
    cupy.cuda.get_current_stream().synchronize()
    ref = a.astype(cupy.float64) @ b.astype(cupy.float64)
    assert float(cupy.linalg.norm(d - ref) / cupy.linalg.norm(ref)) < 1e-5
