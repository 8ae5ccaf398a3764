"""flash_attention on the H200 against float32 attention in torch: NaN-poisoned outputs, fresh
random inputs, head dims 64 and 128, causal and not, several heads and batches (each CTA's
rows of Q, K and V start at its head's offset), sequences of one and several key blocks and
more blocks than stages (the ring's phases wrap), and persistent CTAs taking several items.

General shapes through the front door (the run-time-shape kernel): a sweep of 128 random
shapes against torch's scaled_dot_product_attention in float32 (S from 1 to 8192, head dims 64,
96, 128 and 256, GQA groups 1, 2, 4 and 8, no mask, is_causal and causal_lower_right, float16
and bfloat16), with NaN past the end of K, V and the output (nothing may read or write there);
the run-time kernel's configurations on ragged shapes; and no compile for a new shape.

    python -m pytest -q test/python/test_attention_gpu.py -k "sweep or run_time or recompiles"
"""

import math
import random

import pytest

from tilemlir.kernels import attention as attention_module
from tilemlir.kernels.attention import HEAD_DIMS, attention, flash_attention

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
    out = attention(q, k, v, is_causal=True, scale=0.05)
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


# ------------------------------------------------------------------------------ general shapes
def _length(rng) -> int:
    """1 to 8192, log-uniform; a quarter of them whole 128-row blocks."""
    n = int(math.exp(rng.uniform(0, math.log(8192))))
    return n if rng.random() < 0.75 else max(128, n // 128 * 128)


def _sweep(n: int = 128) -> list[tuple]:
    """(B, H, Hkv, Sq, Skv, D, mask, dtype): every head dim, group 1 / 2 / 4 / 8, no mask /
    is_causal / causal_lower_right and both dtypes in turn (float16 with groups 1 and 4,
    bfloat16 with 2 and 8: 32 kernels to compile), lengths at random (and the extremes), at
    most 2^31 scores a case."""
    rng = random.Random(22)
    cases = [(1, 1, 1, 1, 1, 64, None, "float16"), (1, 8, 1, 1, 8192, 128, None, "bfloat16"),
             (1, 4, 4, 8192, 8192, 128, "is_causal", "float16"),
             (1, 8, 2, 8192, 8192, 64, "lower_right", "bfloat16")]
    for i in range(len(cases), n):
        D = HEAD_DIMS[i % 4]
        group = (1, 2, 4, 8)[i // 4 % 4]
        mask = (None, "is_causal", "lower_right")[i // 16 % 3]
        dtype = ("float16", "bfloat16")[i // 4 % 2]       # with the group: 32 kernels
        Sq, Skv = _length(rng), _length(rng)
        if mask == "lower_right" and Sq > Skv:
            Sq, Skv = Skv, Sq
        B, Hkv = rng.choice((1, 2, 3)), rng.choice((1, 2, 4))
        while B * Hkv * group * Sq * Skv > 2 ** 31 and (B > 1 or Hkv > 1):
            B, Hkv = (B - 1, Hkv) if B > 1 else (B, Hkv // 2)
        cases.append((B, Hkv * group, Hkv, Sq, Skv, D, mask, dtype))
    return cases


SWEEP = _sweep()


def _sdpa_reference(q, k, v, mask):
    """torch's scaled_dot_product_attention in float32 (no TF32), a batch element at a time,
    K and V repeated over each group of query heads."""
    from torch.nn.attention.bias import causal_lower_right
    group = q.shape[1] // k.shape[1]
    Sq, Skv = q.shape[2], k.shape[2]
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        out = []
        for b in range(q.shape[0]):
            qb, kb, vb = (t[b:b + 1].float() for t in (q, k, v))
            kb, vb = (t.repeat_interleave(group, dim=1) for t in (kb, vb))
            kwargs = dict(is_causal=True) if mask == "is_causal" else \
                dict(attn_mask=causal_lower_right(Sq, Skv)) if mask == "lower_right" else {}
            out.append(torch.nn.functional.scaled_dot_product_attention(qb, kb, vb, **kwargs))
        return torch.cat(out)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32


def _inside_nan(shape, dtype, pad=1024):
    """A tensor of `shape` at the start of a NaN-filled buffer `pad` elements longer, and the
    buffer: what lies past the tensor must stay NaN and must not be read."""
    n = math.prod(shape)
    buffer = torch.full((n + pad,), float("nan"), device="cuda", dtype=dtype)
    return buffer[:n].view(shape), buffer


@pytest.mark.parametrize("case", SWEEP, ids=["B{}H{}Hkv{}Sq{}Skv{}D{}-{}-{}".format(*c)
                                             for c in SWEEP])
def test_sweep_matches_sdpa(case):
    B, H, Hkv, Sq, Skv, D, mask, dtype = case
    t = getattr(torch, dtype)
    from torch.nn.attention.bias import causal_lower_right
    q = torch.randn(B, H, Sq, D, device="cuda", dtype=t)
    k, k_buffer = _inside_nan((B, Hkv, Skv, D), t)
    v, v_buffer = _inside_nan((B, Hkv, Skv, D), t)
    k.copy_(torch.randn_like(k))
    v.copy_(torch.randn_like(v))
    out, out_buffer = _inside_nan((B, H, Sq, D), t)
    kwargs = dict(is_causal=True) if mask == "is_causal" else \
        dict(attn_mask=causal_lower_right(Sq, Skv)) if mask == "lower_right" else {}
    attention(q, k, v, enable_gqa=H != Hkv, out=out, **kwargs)
    torch.cuda.synchronize()
    assert_written(out)
    assert torch.isnan(out_buffer[out.numel():]).all(), "written past the output's end"
    assert_matches(out.float(), _sdpa_reference(q, k, v, mask),
                   rel_error=1e-2 if dtype == "bfloat16" else 3e-3)


# the run-time kernel's configurations on ragged shapes: fewer CTAs than items (phases carry
# over), the plain loop, three stages, no ping-pong, 64-row key blocks
RUN_TIME_CONFIGS = [("few_ctas", dict(SMS=3), 64, True),
                    ("plain", dict(PIPELINE=False, SMS=5), 96, False),
                    ("3_stages", dict(STAGES=3, SMS=2), 64, False),
                    ("no_pingpong", dict(PINGPONG=False), 96, True),
                    ("bkv_64", dict(BKV=64, SMS=7), 128, True)]


@pytest.mark.parametrize("name, config, D, causal", RUN_TIME_CONFIGS,
                         ids=[c[0] for c in RUN_TIME_CONFIGS])
def test_run_time_kernel_configurations(name, config, D, causal):
    kernel = attention_module.attention_kernel(D, "float16", causal, None, 2, config=config)
    for B, H, Sq, Skv in ((2, 4, 300, 700), (1, 2, 77, 77), (3, 2, 1, 129)):
        q = torch.randn(B, H, Sq, D, device="cuda", dtype=torch.float16)
        k, v = (torch.randn(B, H // 2, Skv, D, device="cuda", dtype=torch.float16)
                for _ in range(2))
        o = torch.full((B * H * Sq, D), float("nan"), device="cuda", dtype=torch.float16)
        # Sq, Skv and (causal, aligned to the end) the diagonal follow O
        kernel(q.view(-1, D), k.view(-1, D), v.view(-1, D), o, Sq, Skv,
               *((Skv - Sq,) if causal else ()))
        torch.cuda.synchronize()
        assert_written(o)
        ref = _sdpa_reference(q, k, v, "lower_right" if causal else None)
        assert_matches(o.view(B, H, Sq, D).float(), ref, rel_error=3e-3)


def test_a_new_shape_recompiles_nothing(monkeypatch):
    """One compile per head dim, dtype, causal and group: new batches, head counts and lengths
    hit the front door's kernel."""
    import tilemlir
    compiles = []
    real = tilemlir.compile
    monkeypatch.setattr(tilemlir, "compile", lambda *a, **k: compiles.append(1) or real(*a, **k))
    monkeypatch.setattr(attention_module, "_KERNELS", {})
    for B, H, Hkv, Sq, Skv in ((1, 8, 2, 128, 128), (2, 12, 3, 1000, 1000), (3, 4, 1, 1, 4097)):
        q = torch.randn(B, H, Sq, 128, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(B, Hkv, Skv, 128, device="cuda", dtype=torch.bfloat16)
                for _ in range(2))
        out = attention(q, k, v, enable_gqa=True)
        assert_matches(out.float(), _sdpa_reference(q, k, v, None), rel_error=1e-2)
    assert len(compiles) == 1 and len(attention_module._KERNELS) == 1


@pytest.mark.parametrize("D, Dv, mask", [(32, 32, None), (80, 80, "is_causal"), (192, 128, None),
                                         (16, 64, "is_causal"), (100, 100, None)])
def test_the_front_door_pads_other_head_dims(D, Dv, mask):
    """Head dims the kernels do not take run on the next one, q, k and v padded with zeros:
    the same scores (the scale stays 1 / sqrt(D)), the first Dv columns of the output."""
    B, H, Sq, Skv = 2, 4, 150, 333
    q = torch.randn(B, H, Sq, D, device="cuda", dtype=torch.float16)
    k = torch.randn(B, H, Skv, D, device="cuda", dtype=torch.float16)
    v = torch.randn(B, H, Skv, Dv, device="cuda", dtype=torch.float16)
    out = attention_module.attention(q, k, v, is_causal=mask == "is_causal")
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                           is_causal=mask == "is_causal")
    torch.cuda.synchronize()
    assert out.shape == (B, H, Sq, Dv)
    assert (out.float() - ref).abs().max().item() < 3e-3
