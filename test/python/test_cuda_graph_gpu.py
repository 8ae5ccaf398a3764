"""CUDA graphs (H200): several launches of the shipped kernels (the GEMM front door with and
without split-K, softmax, RMSNorm, attention) captured in one torch.cuda.graph and replayed
with new inputs copied into the captured tensors. Each replay must compute on the new inputs:
outputs are NaN-poisoned before every replay and compared with torch each time."""

import pytest

import tilemlir
from tilemlir.kernels.attention import attention
from tilemlir.kernels.gemm import candidate_configs, hgemm
from tilemlir.kernels.norms import rms_norm, softmax

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from gpu_check import assert_matches, assert_written  # noqa: E402

REPLAYS = 5


@pytest.fixture(autouse=True)
def _sm90():
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the shipped GEMM and attention kernels need an sm_90a GPU (Hopper)")


def test_a_graph_of_gemm_norms_and_attention_replays_on_new_inputs():
    h = torch.float16
    # GEMMs: one plain, one whose front-door configuration splits K (workspace + counters,
    # which the kernel leaves zeroed for the next replay).
    gemm = hgemm(1024, 1024, 1024)
    split = hgemm(1000, 1000, 8192, config=next(c for c in candidate_configs(1000, 1000, 8192)
                                                 if c.get("SPLIT_K", 1) > 1))
    a, b = torch.randn(1024, 1024, device="cuda", dtype=h), torch.randn(1024, 1024, device="cuda", dtype=h)
    a2, b2 = torch.randn(1000, 8192, device="cuda", dtype=h), torch.randn(1000, 8192, device="cuda", dtype=h)
    d, d2 = torch.empty(1024, 1024, device="cuda", dtype=h), torch.empty(1000, 1000, device="cuda", dtype=h)
    # norms over rows of 4096
    sm = tilemlir.compile(softmax(512, 4096))
    rn = tilemlir.compile(rms_norm(512, 4096, eps=1e-6))
    x = torch.randn(512, 4096, device="cuda", dtype=h)
    w = torch.randn(4096, device="cuda", dtype=h)
    y_sm, y_rn = torch.empty_like(x), torch.empty_like(x)
    # attention, causal, 2 heads of 512 x 64
    q, k, v = (torch.randn(1, 2, 512, 64, device="cuda", dtype=h) for _ in range(3))
    o = torch.empty_like(q)

    def launches():
        gemm(a, b, out=d)
        split(a2, b2, out=d2)
        sm(x, y_sm)
        rn(x, w, y_rn)
        attention(q, k, v, is_causal=True, out=o)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launches()                  # compiles, loads, allocates workspaces: outside the capture
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launches()

    for _ in range(REPLAYS):
        for t in (a, b, a2, b2, x, w, q, k, v):
            t.copy_(torch.randn_like(t))
        for t in (d, d2, y_sm, y_rn, o):
            t.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for t in (d, d2, y_sm, y_rn, o):
            assert_written(t)
        assert_matches(d.double(), a.double() @ b.double().T, rel_error=1e-2)
        assert_matches(d2.double(), a2.double() @ b2.double().T, rel_error=1e-2)
        assert_matches(y_sm.float(), torch.softmax(x.float(), dim=-1), rtol=1e-2, atol=1e-3)
        ref_rn = torch.nn.functional.rms_norm(x.float(), (4096,), w.float(), 1e-6)
        assert_matches(y_rn.float(), ref_rn, rtol=2e-2, atol=2e-2)
        ref_o = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                                 is_causal=True)
        assert_matches(o.float(), ref_o, rtol=2e-2, atol=2e-2)
