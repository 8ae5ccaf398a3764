"""Tensors that do not start on 16 bytes (a contiguous view into another tensor's storage):
the kernels are compiled for aligned buffers (TMA and vector accesses need them), so a
compiled kernel refuses such an argument by name, before anything reaches the GPU, and the
front doors (GEMM, FP8 scaled_mm, the norms, attention) take it through aligned copies and
get the right answer, outputs included."""

import pytest

import tilemlir
from run_time_dims_kernels import scale_rows
from tilemlir.kernels import attention, norms
from tilemlir.kernels.gemm import hgemm
from tilemlir.runtime.args import ArgumentError

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


def shifted(shape, dtype=torch.float16, fill=None):
    """A contiguous tensor of `shape` starting one element into a fresh allocation (2 or 4
    bytes past 16-byte alignment)."""
    n = 1
    for extent in shape:
        n *= extent
    flat = torch.randn(n + 1, device="cuda").to(dtype) if fill is None else \
        torch.full((n + 1,), fill, device="cuda", dtype=dtype)
    view = flat[1:].view(shape)
    assert view.data_ptr() % 16
    return view


def test_a_compiled_kernel_refuses_a_misaligned_argument_by_name():
    kernel = tilemlir.compile(scale_rows())
    x, y = shifted((64, 128), torch.float32), torch.empty(64, 128, device="cuda")
    for call in (lambda: kernel(x, y), lambda: kernel.launch(x, y)):
        with pytest.raises(ArgumentError, match="argument 'X' starts at 0x[0-9a-f]+, which is "
                                                "not 16-byte aligned"):
            call()
    torch.cuda.synchronize()                      # nothing faulted: the context still works
    kernel(x.clone(), y)
    torch.cuda.synchronize()
    assert torch.equal(y, 2 * x)


@pytest.mark.parametrize("shape", [(300, 264, 4000), (7, 4096, 1001), (1, 4096, 4096)])
def test_the_gemm_front_door_takes_misaligned_views(shape):
    M, N, K = shape
    a, b = shifted((M, K)), shifted((N, K))
    out = shifted((M, N), fill=float("nan"))
    hgemm(M, N, K)(a, b, out=out)
    ref = a.float() @ b.float().T
    torch.cuda.synchronize()
    assert not out.isnan().any()
    assert ((out.float() - ref).norm() / ref.norm()).item() < 1e-2


def test_the_norms_and_attention_take_misaligned_views():
    x, weight = shifted((37, 4096)), shifted((4096,), fill=1.5)
    y = shifted((37, 4096), fill=float("nan"))
    norms.rms_norm_rows(x, weight, 1e-6, out=y)
    ref = torch.nn.functional.rms_norm(x.float(), (4096,), weight.float(), 1e-6)
    q, k, v = (shifted((1, 4, 200, 64)) for _ in range(3))
    o = attention.attention(q, k, v, is_causal=True)
    expected = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                                 is_causal=True)
    torch.cuda.synchronize()
    assert not y.isnan().any() and (y.float() - ref).abs().max().item() < 2e-2
    assert (o.float() - expected).abs().max().item() < 3e-3
