"""The Python API: compiling a module, kernel signatures, argument checks, no-driver behaviour."""

import numpy as np
import pytest

from tilemlir.runtime import ArgumentError, CudaUnavailable, Executable, driver_available


@pytest.fixture(scope="module")
def demo_kernel():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "examples" / "mma_demo.mlir").read_text()
    return Executable.from_text(text, "sm_90a").kernel("gemm_16x8x16")


def test_signature_is_read_from_the_tile_ir(demo_kernel):
    sig = demo_kernel.signature
    assert [(p.kind, p.dtype, p.shape) for p in sig.params] == [
        ("buffer", "f16", (16, 16)), ("buffer", "f16", (16, 8)), ("buffer", "f32", (16, 8))]
    assert sig.block == (32, 1, 1) and sig.grid == (1, 1, 1) and sig.shared_memory == 0


def test_ptx_holds_one_mma_sync(demo_kernel):
    assert demo_kernel.ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 1


def _args():
    return [np.zeros((16, 16), np.float16), np.zeros((16, 8), np.float16),
            np.zeros((16, 8), np.float32)]


@pytest.mark.parametrize("index, bad, message", [
    (0, np.zeros((16, 16), np.float32), "argument 'arg0' must hold f16, got f32"),
    (1, np.zeros((8, 16), np.float16), r"argument 'arg1' must have shape \[16, 8\], got \[8, 16\]"),
    (2, np.zeros((8, 16), np.float32).T, "argument 'arg2' must be contiguous"),
    (2, [[0.0] * 8] * 16, "argument 'arg2' must be a numpy array or a CUDA tensor, got list"),
])
def test_argument_errors_name_the_parameter(demo_kernel, index, bad, message):
    args = _args()
    args[index] = bad
    with pytest.raises(ArgumentError, match=message):
        demo_kernel(*args)


def test_argument_count_is_checked(demo_kernel):
    with pytest.raises(ArgumentError, match=r"takes 3 arguments \(arg0: 16x16xf16"):
        demo_kernel(*_args()[:2])


@pytest.mark.skipif(driver_available(), reason="checks the behaviour without a CUDA driver")
def test_without_a_driver_a_call_raises_instead_of_aborting(demo_kernel):
    with pytest.raises(CudaUnavailable, match="libcuda|driver|GPU"):
        demo_kernel(*_args())


class _FakeDevice:
    """The runtime's copies and launch, in host memory: the "kernel" adds 1 to every byte of
    the buffers named in `writes` (CPU-only: the host-array path's bookkeeping)."""

    def __init__(self, kernel, writes):
        self.memory, self.kernel, self.writes = {}, kernel, writes

    def copy_to_device(self, array):
        address = len(self.memory) + 1
        self.memory[address] = bytearray(array.tobytes())
        return address

    def copy_back_and_free(self, array, address):
        array[...] = np.frombuffer(bytes(self.memory.pop(address)), array.dtype).reshape(array.shape)

    def launch(self, grid, stream, addresses, scalars, device, *rest):
        for i, address in addresses.items():
            if self.kernel.signature.params[i].name in self.writes:
                self.memory[address] = bytearray((b + 1) % 256 for b in self.memory[address])


@pytest.fixture
def fake_device(demo_kernel, monkeypatch):
    from tilemlir.runtime import launch
    fake = _FakeDevice(demo_kernel, {"arg2"})
    monkeypatch.setattr(launch, "copy_to_device", fake.copy_to_device)
    monkeypatch.setattr(launch, "copy_back_and_free", fake.copy_back_and_free)
    monkeypatch.setattr(launch, "bound_device", lambda: 0)
    monkeypatch.setattr(type(demo_kernel), "_launch", lambda self, *a: fake.launch(*a))
    return fake


def test_read_only_inputs_are_not_written(demo_kernel, fake_device):
    a = np.frombuffer(bytes(16 * 16 * 2), np.float16).reshape(16, 16)     # immutable memory
    b = np.zeros((16, 8), np.float16)
    b.flags.writeable = False
    d = np.zeros((16, 8), np.float32)
    demo_kernel(a, b, d)
    assert not a.any() and not b.any() and d.any()          # only the output came back


@pytest.mark.parametrize("make", [
    lambda: np.frombuffer(bytes(16 * 8 * 4), np.float32).reshape(16, 8),
    lambda: np.zeros((16, 8), np.float32).view(),
], ids=["over-immutable-bytes", "flagged-read-only"])
def test_a_read_only_output_is_refused_and_left_unchanged(demo_kernel, fake_device, make):
    d = make()
    d.flags.writeable = False
    with pytest.raises(ArgumentError, match="gemm_16x8x16 wrote argument 'arg2', a read-only "
                                            "array .*which was left unchanged"):
        demo_kernel(np.zeros((16, 16), np.float16), np.zeros((16, 8), np.float16), d)
    assert not d.any()
