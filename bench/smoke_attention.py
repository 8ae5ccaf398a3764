"""Tiny FlashAttention cases, one launch each, compared with float32 attention in torch: for
compute-sanitizer (memcheck, racecheck, synccheck), which makes anything bigger too slow.

    compute-sanitizer --tool racecheck python bench/smoke_attention.py

Exits 1 if any output is wrong or unwritten. The cases cover the persistent grid taking
several items per CTA (SMS=2), the pipelined and plain loops, the consumers' turns and the
causal mask, for head dims 64 and 128; then the front door's general shapes (the run-time-shape
kernel): ragged query and key tails (a shifted last key block, a head shorter than a block
loaded by masked cp.async), GQA, fewer queries than keys with the mask aligned to the end, and
head dims 96 and 256."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from bench.attention import errors, reference, sdpa_masking  # noqa: E402
from tilemlir.kernels.attention import attention, flash_attention  # noqa: E402

CASES = [((1, 2, 256, 64), dict(SMS=2)),
         ((1, 2, 256, 128), dict(SMS=2, causal=True)),
         ((1, 1, 384, 64), dict(SMS=2, PIPELINE=False, causal=True)),
         ((1, 1, 384, 128), dict(SMS=1, PINGPONG=False, STAGES=3))]
# (B, H, Hkv, Sq, Skv, D, mask[, config]) through the front door; SMS=2: several items a CTA
# (Q's two stages in turn) over ragged tails and GQA
GENERAL = [(1, 4, 2, 300, 300, 64, None), (2, 2, 1, 77, 77, 128, "is_causal"),
           (1, 8, 2, 1, 129, 64, None), (1, 4, 1, 200, 700, 96, "lower_right"),
           (1, 2, 2, 130, 130, 256, "is_causal"),
           (1, 4, 2, 300, 300, 128, "is_causal", dict(SMS=2)),
           (2, 2, 1, 200, 330, 96, None, dict(SMS=2))]


def main() -> None:
    failed = 0
    for (B, H, S, D), config in CASES:
        kernel = tilemlir.compile(flash_attention(B, H, S, D, "float16", **config))
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.full_like(q, float("nan"))
        kernel(q.view(-1, D), k.view(-1, D), v.view(-1, D), o.view(-1, D))
        torch.cuda.synchronize()
        ref = reference(q, k, v, "is_causal" if config.get("causal") else None)
        err = errors(o, ref)["rel"]
        ok = not torch.isnan(o).any().item() and err < 3e-3
        failed += not ok
        print(f"{B}x{H}x{S}x{D} {config}: {'ok' if ok else 'WRONG'} (relative error {err:.1e})",
              flush=True)
    for B, H, Hkv, Sq, Skv, D, mask, *config in GENERAL:
        q = torch.randn(B, H, Sq, D, device="cuda", dtype=torch.float16)
        k, v = (torch.randn(B, Hkv, Skv, D, device="cuda", dtype=torch.float16) for _ in range(2))
        o = torch.full_like(q, float("nan"))
        attention(q, k, v, enable_gqa=H != Hkv, out=o, config=config[0] if config else None,
                  **sdpa_masking(mask, Sq, Skv))
        torch.cuda.synchronize()
        err = errors(o, reference(q, k, v, mask))["rel"]
        ok = not torch.isnan(o).any().item() and err < 3e-3
        failed += not ok
        print(f"{B}x{H}/{Hkv}x{Sq}/{Skv}x{D} {mask} {config}: {'ok' if ok else 'WRONG'} "
              f"(relative error {err:.1e})", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
