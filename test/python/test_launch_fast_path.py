"""The launch's torch fast path (CPU: the launch itself is replaced by a recorder).

CUDA torch tensors of exactly the parameters' dtypes and shapes and in-range Python scalars
launch without the checked path; anything else falls back to it, which names the problem.
Scalars are range-checked on both paths (ctypes would truncate them silently)."""

import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.runtime.args import ArgumentError

torch = pytest.importorskip("torch")


@T.prim_func
def scaled(X: T.Buffer((4, 8), "float16"), Y: T.Buffer((4, 8), "float16"), n: T.int32,
           alpha: T.float32):
    T.cta_id([1])
    tid = T.thread_id([32])
    if tid < n:
        Y[0, tid % 8] = X[0, tid % 8]


class FakeCuda:
    """Stands in for a CUDA torch.Tensor: the attributes the fast path reads."""

    def __init__(self, dtype=torch.float16, shape=(4, 8), device=0, address=0x1000,
                 contiguous=True):
        self.dtype, self.shape, self.is_cuda = dtype, torch.Size(shape), True
        self._device, self._address, self._contiguous = device, address, contiguous

    def get_device(self):
        return self._device

    def data_ptr(self):
        return self._address

    def is_contiguous(self):
        return self._contiguous


@pytest.fixture
def kernel(monkeypatch):
    k = tilemlir.compile(scaled, target="sm_90a", cache=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 0xABC + device,
                        raising=False)            # CPU builds of torch lack it
    assert k._call_with_torch(()) is False        # builds the expectations
    launches = []
    k._torch_args = [(FakeCuda, k._torch_args[0][1])] + k._torch_args[1:]
    monkeypatch.setattr(k, "_start", lambda block, grid, stream, device: launches.append(
        ([s.value for s in block.slots], stream, device)))
    return k, launches


def test_matching_arguments_launch_on_the_tensors_device_and_stream(kernel):
    k, launches = kernel
    assert k._call_with_torch((FakeCuda(address=16), FakeCuda(address=32), 7, 0.5))
    assert k._call_with_torch((FakeCuda(device=1, address=48), FakeCuda(device=1, address=64),
                               -3, 2.0))
    assert launches == [([16, 32, 7, 0.5], 0xABC, 0), ([48, 64, -3, 2.0], 0xABD, 1)]


@pytest.mark.parametrize("args", [
    (FakeCuda(dtype=torch.float32), FakeCuda(), 1, 1.0),          # dtype
    (FakeCuda(), FakeCuda(shape=(8, 4)), 1, 1.0),                 # shape
    (FakeCuda(), FakeCuda(contiguous=False), 1, 1.0),             # layout
    (FakeCuda(), FakeCuda(device=1), 1, 1.0),                     # two devices
    (FakeCuda(), FakeCuda(address=0), 1, 1.0),                    # NULL
    (FakeCuda(), FakeCuda(), 2**31, 1.0),                         # i32 range
    (FakeCuda(), FakeCuda(), True, 1.0),                          # bool is not an int here
    (FakeCuda(), FakeCuda(), 1, 1),                               # int for f32: checked path
    (FakeCuda(), FakeCuda(), 1),                                  # count
])
def test_anything_else_takes_the_checked_path(kernel, args):
    k, launches = kernel
    assert k._call_with_torch(args) is False
    assert launches == []


@pytest.mark.parametrize("value", [2**31, -2**31 - 1, 10**30])
def test_out_of_range_int32_scalars_are_refused_by_name(value):
    k = tilemlir.compile(scaled, target="sm_90a", cache=False)
    x = torch.zeros(4, 8, dtype=torch.float16).numpy()
    with pytest.raises(ArgumentError, match=r"argument 'n' is i32: .* is outside "
                                            r"\[-2147483648, 2147483647\]"):
        k(x, x.copy(), value, 1.0)
