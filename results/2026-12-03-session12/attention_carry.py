"""The pipeline carried across items (CARRY, the default where two stages of Q fit: D <= 128)
against the per-item pipeline (CARRY=False), and that with one stage of Q and O stored at once
(the kernel before), through the front door (`attention`, run-time
shapes), with cuDNN's SDPA on the same tensors, in one process: the cases below 0.95x cuDNN
(issues 22, 23) and more short and causal ones. D 256 (one stage of Q) tries CARRY=True.
Each configuration is checked against cuDNN's output (NaN-poisoned, relative Frobenius error)
before it is timed with do_bench_alternating (L2 flushed, 50 us spin, medians of 20 in 2
blocks). Run from the tree's root: python results/2026-12-03-session12/attention_carry.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from tilemlir.kernels.attention import attention  # noqa: E402
from tilemlir.testing import do_bench_alternating  # noqa: E402

# (B, H, Hkv, S, D, causal, dtype): each case with the default, CARRY=False (two stages of Q
# where they fit, O stored 32 columns at a time), one stage of Q, and the whole of O at once
# (with one stage of Q: the kernel before this session, bar one bar.sync's place in the PTX)
def configs(D):
    if D == 256:            # one stage of Q by default
        return [{}, {"CARRY": True}, {"OUT_COLS": 256}]
    return [{}, {"CARRY": False}, {"CARRY": False, "Q_STAGES": 1},
            {"CARRY": False, "Q_STAGES": 1, "OUT_COLS": D}]


CASES = [(case, configs(case[4])) for case in [
    (2, 32, 4, 4096, 128, False, torch.bfloat16),
    (4, 32, 8, 2048, 128, True, torch.bfloat16),
    (8, 16, 16, 1000, 128, True, torch.bfloat16),
    (8, 16, 16, 4096, 128, False, torch.float16),
    (4, 32, 8, 3000, 128, True, torch.float16),
    (1, 8, 8, 512, 128, False, torch.float16),
    (1, 8, 8, 512, 128, True, torch.float16),
    (16, 8, 8, 1024, 64, False, torch.bfloat16),
    (4, 32, 32, 2048, 128, True, torch.float16),
    (2, 16, 16, 1500, 96, True, torch.bfloat16),
    (8, 16, 1, 2048, 64, False, torch.bfloat16),
    (8, 16, 16, 4096, 64, True, torch.float16),
    (8, 16, 16, 4096, 256, False, torch.bfloat16),
    (8, 16, 16, 4096, 256, True, torch.float16)]]


def label(c):
    return ",".join(f"{k}={v}" for k, v in c.items()) or "default"


def main():
    print("| B x H/Hkv x S x D | dtype | causal | cuDNN TFLOP/s | configuration: ours / cuDNN |")
    print("|---|---|---|---:|---|")
    for (B, H, Hkv, S, D, causal, dtype), configs in CASES:
        gen = torch.Generator(device="cuda").manual_seed(S + D)
        q = torch.randn(B, H, S, D, device="cuda", dtype=dtype, generator=gen)
        k, v = (torch.randn(B, Hkv, S, D, device="cuda", dtype=dtype, generator=gen)
                for _ in range(2))
        gqa = H != Hkv

        def cudnn(q=q, k=k, v=v):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, enable_gqa=gqa)
        ref = cudnn().float()
        fns, names = [cudnn], ["cudnn"]
        for c in configs:
            out = torch.full_like(q, float("nan"))
            try:
                attention(q, k, v, is_causal=causal, enable_gqa=gqa, out=out, config=c)
                torch.cuda.synchronize()
            except Exception as err:        # noqa: BLE001  a refusal is a cell, not a stop
                print(f"REFUSED {label(c)}: {type(err).__name__}: {str(err)[:150]}", flush=True)
                continue
            err = ((out.float() - ref).norm() / ref.norm()).item()
            if not err < 1e-2:
                print(f"WRONG {B}x{H}/{Hkv}x{S}x{D} {label(c)}: {err}", flush=True)
                continue
            fns.append(lambda c=c, out=out: attention(q, k, v, is_causal=causal,
                                                      enable_gqa=gqa, out=out, config=c))
            names.append(label(c))
        times = [t.median for t in do_bench_alternating(fns, blocks=2, reps=20, warmup_ms=60,
                                                        spin_us=50)]
        pairs = S * (S + 1) // 2 if causal else S * S
        tflops = 4 * B * H * D * pairs / (times[0] * 1e-3) / 1e12
        cells = ", ".join(f"{n} {times[0] / t:.3f}" for n, t in zip(names[1:], times[1:]))
        print(f"| {B}x{H}/{Hkv}x{S}x{D} | {str(dtype)[6:]} | {causal} | {tflops:.0f} | {cells} |",
              flush=True)


if __name__ == "__main__":
    main()
