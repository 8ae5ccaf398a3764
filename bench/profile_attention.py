"""Launch the FlashAttention kernel a few times for a profiler (ncu):

    python bench/profile_attention.py 8 16 4096 64 [causal] [bfloat16]
    python bench/profile_attention.py 2 32 4096 128 bfloat16 hkv=4        # GQA: 4 K/V heads
    python bench/profile_attention.py 2 32 4096 128 bfloat16 hkv=4 cudnn  # torch SDPA (cuDNN)

hkv=N gives K and V N heads (H a multiple of N; the default H); cudnn runs torch's
scaled_dot_product_attention under its cuDNN backend on the same tensors instead of ours."""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tilemlir.kernels.attention import attention  # noqa: E402


def main() -> None:
    B, H, S, D = (int(x) for x in sys.argv[1:5])
    flags = sys.argv[5:]
    causal = "causal" in flags
    dtype = torch.bfloat16 if "bfloat16" in flags else torch.float16
    hkv = next((int(f.split("=", 1)[1]) for f in flags if f.startswith("hkv=")), H)
    if H % hkv:
        sys.exit(f"profile_attention: H={H} is not a multiple of hkv={hkv}")
    q = torch.randn(B, H, S, D, device="cuda", dtype=dtype)
    k, v = (torch.randn(B, hkv, S, D, device="cuda", dtype=dtype) for _ in range(2))
    gqa = hkv != H
    if "cudnn" in flags:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            for _ in range(3):
                torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                 enable_gqa=gqa)
    else:
        out = torch.empty_like(q)
        for _ in range(3):
            attention(q, k, v, is_causal=causal, enable_gqa=gqa, out=out)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
