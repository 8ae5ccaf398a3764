"""flash_attention on the H200 against float32 attention in torch: NaN-poisoned outputs, fresh
random inputs, head dims 64 and 128, causal and not, several heads and batches (each CTA's
rows of Q, K and V start at its head's offset), sequences of one and several key blocks and
more blocks than stages (the ring's phases wrap), and persistent CTAs taking several items."""

import math

import pytest

from tilemlir.kernels.attention import attention, flash_attention

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from gpu_check import assert_matches, assert_written, run_poisoned  # noqa: E402

SHAPES = [(1, 1, 128, 64), (1, 2, 256, 128), (2, 3, 640, 64), (1, 2, 1024, 128)]


@pytest.fixture(autouse=True)
def _sm90():
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("TMA + wgmma kernels need an sm_90a GPU (Hopper)")


def reference(q, k, v, causal, scale):
    s = (q.float() @ k.float().transpose(-1, -2)) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, device=s.device, dtype=torch.bool).triu(1),
                          float("-inf"))
    return torch.softmax(s, dim=-1) @ v.float()


# few_ctas: each CTA of the persistent grid takes several items (the Q barriers' phases and
# the ring's stage count carry over from item to item)
CONFIGS = {"pipelined": {}, "plain": dict(PIPELINE=False), "few_ctas": dict(SMS=3),
           "few_ctas_3_stages": dict(SMS=2, STAGES=3, PIPELINE=False),
           "no_pingpong": dict(SMS=5, PINGPONG=False)}


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_matches_float32_attention(shape, causal, dtype, config):
    B, H, S, D = shape
    name = "float16" if dtype == torch.float16 else "bfloat16"
    kernel = flash_attention(B, H, S, D, name, causal=causal, **CONFIGS[config])
    for _ in range(2):                          # fresh inputs each time
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dtype) for _ in range(3))
        (o,) = run_poisoned(kernel, [q.view(-1, D), k.view(-1, D), v.view(-1, D)],
                            [((B * H * S, D), dtype)])
        assert_written(o)
        ref = reference(q, k, v, causal, 1.0 / math.sqrt(D))
        assert_matches(o.view(B, H, S, D).float(), ref,
                       rel_error=1e-2 if dtype == torch.bfloat16 else 3e-3)


def test_front_door_matches_sdpa_with_a_scale():
    q, k, v = (torch.randn(2, 4, 512, 128, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    out = attention(q, k, v, causal=True, scale=0.05)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                           is_causal=True, scale=0.05)
    assert_matches(out.float(), ref, rel_error=1e-2)


def test_front_door_orders_on_the_current_stream():
    side = torch.cuda.Stream()
    q, k, v = (torch.randn(1, 2, 1024, 64, device="cuda", dtype=torch.float16)
               for _ in range(3))
    with torch.cuda.stream(side):
        side.wait_stream(torch.cuda.current_stream())
        q2 = q * 2                                  # written on the side stream
        out = attention(q2, k, v)                   # must read the side stream's q2
        ref = reference(q2, k, v, False, 1 / 8)
    torch.cuda.synchronize()
    assert_matches(out.float(), ref, rel_error=3e-3)
