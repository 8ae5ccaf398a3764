"""Launch the FlashAttention kernel a few times for a profiler (ncu):

    python bench/profile_attention.py 8 16 4096 64 [causal] [bfloat16]"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tilemlir.kernels.attention import attention  # noqa: E402


def main() -> None:
    B, H, S, D = (int(x) for x in sys.argv[1:5])
    causal = "causal" in sys.argv[5:]
    dtype = torch.bfloat16 if "bfloat16" in sys.argv[5:] else torch.float16
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dtype) for _ in range(3))
    out = torch.empty_like(q)
    for _ in range(3):
        attention(q, k, v, is_causal=causal, out=out)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
