"""A compiled kernel as a torch custom op (tilemlir.torch_op): registration, the fake
implementation torch.compile traces with, no graph breaks, and (GPU) the numbers."""

import pytest

import tilemlir
from tilemlir.kernels.hgemm_hopper import hgemm_v6
from tilemlir.runtime.args import ArgumentError

torch = pytest.importorskip("torch")

M, N, K = 256, 256, 128


@pytest.fixture(scope="module")
def gemm():
    kernel = tilemlir.compile(hgemm_v6(M, N, K), target="sm_90a")
    return tilemlir.torch_op(kernel, "tilemlir_tests::gemm", outputs=["D"])


def test_fake_implementation_gives_the_outputs(gemm):
    a = torch.empty(M, K, dtype=torch.float16, device="meta")
    b = torch.empty(N, K, dtype=torch.float16, device="meta")
    d = gemm(a, b)
    assert (d.shape, d.dtype, d.device.type) == ((M, N), torch.float16, "meta")


def test_compiles_without_graph_breaks(gemm):
    def f(a, b):
        return (gemm(a, b) * 2).relu()
    a = torch.empty(M, K, dtype=torch.float16, device="meta")
    b = torch.empty(N, K, dtype=torch.float16, device="meta")
    explained = torch._dynamo.explain(f)(a, b)
    assert explained.graph_break_count == 0 and explained.graph_count == 1


@pytest.mark.parametrize("outputs, name, message", [
    (["E"], "lib::op", "outputs must name buffer parameters"),
    ([], "lib::op", "outputs must name buffer parameters"),
    (["D"], "no_namespace", "name must be 'namespace::op'"),
])
def test_bad_registrations_name_the_argument(outputs, name, message):
    kernel = tilemlir.compile(hgemm_v6(M, N, K), target="sm_90a")
    with pytest.raises(ArgumentError, match=message):
        tilemlir.torch_op(kernel, name, outputs=outputs)


@pytest.mark.gpu
def test_inside_torch_compile_fullgraph(gemm):
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("hgemm_v6 needs an sm_90a GPU (Hopper)")
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(N, K, dtype=torch.float16, device="cuda")
    f = torch.compile(lambda a, b: gemm(a, b).float() * 2, fullgraph=True)
    torch.testing.assert_close(f(a, b), (a.float() @ b.float().T) * 2, rtol=2e-2, atol=1e-1)
