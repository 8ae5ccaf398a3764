"""CUDA tensors of any framework, read through cuda.core's StridedMemoryView (CPU: exporters of
DLPack capsules that describe CUDA memory nobody touches stand in for torch / cupy tensors)."""

import numpy as np
import pytest

from fake_cuda import (KDL_BFLOAT, KDL_CPU, KDL_CUDA_HOST, KDL_CUDA_MANAGED, KDL_INT,
                       FakeDLPackTensor)
from tilemlir.runtime.args import (ArgumentError, check_device_tensor, is_device_tensor,
                                   view_tensor)
from tilemlir.runtime.signature import Param

A = Param("A", "buffer", "f16", (4, 8))


def test_a_dlpack_tensor_is_described():
    t = view_tensor(FakeDLPackTensor((4, 8), device_id=1, address=0x7000_0000, byte_offset=64))
    assert (t.address, t.dtype, t.shape, t.contiguous, t.device) == (
        0x7000_0040, "f16", (4, 8), True, 1)


@pytest.mark.parametrize("code, bits, dtype", [(KDL_BFLOAT, 16, "bf16"), (KDL_INT, 8, "i8"),
                                               (KDL_INT, 32, "i32"), (2, 32, "f32")])
def test_element_types(code, bits, dtype):
    assert view_tensor(FakeDLPackTensor((2,), code=code, bits=bits)).dtype == dtype


def test_managed_memory_is_a_cuda_tensor():
    assert view_tensor(FakeDLPackTensor((2,), device=KDL_CUDA_MANAGED)).device == 0


@pytest.mark.parametrize("strides, contiguous", [(None, True), ((8, 1), True), ((1, 4), False),
                                                 ((16, 1), False)])
def test_contiguity(strides, contiguous):
    assert view_tensor(FakeDLPackTensor((4, 8), strides=strides)).contiguous is contiguous


def test_dimensions_of_extent_one_may_have_any_stride():
    assert view_tensor(FakeDLPackTensor((4, 1), strides=(1, 99))).contiguous


@pytest.mark.parametrize("value, message", [
    (FakeDLPackTensor((4, 8), device=KDL_CPU), "argument 'A' must be a CUDA tensor"),
    (FakeDLPackTensor((4, 8), device=KDL_CUDA_HOST), "argument 'A' must be a CUDA tensor"),
    (object(), "argument 'A' must be a CUDA tensor"),
    (FakeDLPackTensor((4, 8), code=2, bits=32), "argument 'A' must hold f16, got f32"),
    (FakeDLPackTensor((4, 8), lanes=2), "must hold f16, got an unsupported dtype"),
    (FakeDLPackTensor((8, 4)), r"must have shape \[4, 8\], got \[8, 4\]"),
    (FakeDLPackTensor((4, 8), strides=(1, 4)), "must be contiguous"),
    (FakeDLPackTensor((4, 8), address=0), "NULL data pointer"),
    (FakeDLPackTensor((4, 8), address=0x7000_0002),
     "argument 'A' starts at 0x70000002, which is not 16-byte aligned: kernels are compiled"),
    (FakeDLPackTensor((4, 8), address=0x7000_0000, byte_offset=8), "starts at 0x70000008"),
])
def test_mismatches_name_the_parameter(value, message):
    with pytest.raises(ArgumentError, match=message):
        check_device_tensor(A, value)


def test_which_arguments_are_device_tensors():
    class ArrayInterfaceOnly:          # numba, older cupy: the CUDA Array Interface alone
        __cuda_array_interface__ = {"shape": (4, 8), "typestr": "<f2", "data": (0x1000, False),
                                    "version": 3}
    assert is_device_tensor(FakeDLPackTensor((4, 8)))
    assert is_device_tensor(ArrayInterfaceOnly())
    assert not is_device_tensor(FakeDLPackTensor((4, 8), device=KDL_CPU))
    assert not is_device_tensor(np.zeros((4, 8), np.float16))
    assert not is_device_tensor(object())


def test_a_call_with_dlpack_tensors_launches_on_their_device_and_the_given_stream():
    import tilemlir.lang as T
    from tilemlir.runtime.compiler import compile

    @T.prim_func
    def copy(X: T.Buffer((4, 8), "float16"), Y: T.Buffer((4, 8), "float16")):
        T.cta_id([1])
        tid = T.thread_id([32])
        Y[tid // 8, tid % 8] = X[tid // 8, tid % 8]

    kernel = compile(copy, target="sm_90a", cache=False)
    started = []
    kernel._start = lambda block, grid, stream, device: started.append(
        ([slot.value for slot in block.slots], stream, device))

    class Stream:
        def __cuda_stream__(self):
            return (0, 0xBEEF)

    x = FakeDLPackTensor((4, 8), device_id=1, address=0x1000)
    y = FakeDLPackTensor((4, 8), device_id=1, address=0x2000)
    kernel(x, y, stream=Stream())
    assert started == [([0x1000, 0x2000], 0xBEEF, 1)]
    with pytest.raises(ArgumentError, match="argument 'Y' is on cuda:0 but earlier arguments "
                                            "are on cuda:1"):
        kernel(x, FakeDLPackTensor((4, 8), device_id=0), stream=Stream())


def test_an_array_interface_before_version_3_is_seen_as_version_3():
    """cuda.core's view takes version 3 of the CUDA Array Interface only; torch exports
    version 2 (no stream field: what version 3's "stream": None says)."""
    from tilemlir.runtime.args import _cai_v3

    class Version2:
        __cuda_array_interface__ = {"shape": (4, 8), "typestr": "<f2", "data": (0x1000, False),
                                    "version": 2, "strides": None}

    seen = _cai_v3(Version2()).__cuda_array_interface__
    assert seen["version"] == 3 and seen["stream"] is None and seen["data"] == (0x1000, False)
    version3 = Version2()
    version3.__cuda_array_interface__ = dict(Version2.__cuda_array_interface__, version=3)
    assert _cai_v3(version3) is version3
    dlpack = FakeDLPackTensor((4, 8))
    assert _cai_v3(dlpack) is dlpack


def test_front_doors_take_strided_and_misaligned_views_through_dense_copies():
    """kernel_input copies a view that is strided or does not start on 16 bytes (and only
    that); kernel_output gives a dense scratch tensor to write in its stead."""
    torch = pytest.importorskip("torch")
    from tilemlir.runtime.args import kernel_input, kernel_output
    flat = torch.arange(33, dtype=torch.float16)
    dense, shifted, strided = flat[:32].view(4, 8), flat[1:].view(4, 8), flat[:32].view(8, 4).T
    assert kernel_input(dense) is dense and kernel_output(dense) is dense
    for view in (shifted, strided):
        copy, scratch = kernel_input(view), kernel_output(view)
        assert copy.is_contiguous() and copy.data_ptr() % 16 == 0 and torch.equal(copy, view)
        assert scratch.is_contiguous() and scratch.data_ptr() % 16 == 0
        assert scratch.shape == view.shape
    assert kernel_input(flat[1:1]).numel() == 0          # nothing to move: left alone
