"""The Triton peer of bench/gemm.py: D = A . B^T (B stored N x K), written as well as a Triton
user would: grouped tile order for L2 reuse, autotuned over the configurations that do well on
Hopper (wgmma tiles of 128 x 128 / 128 x 256, 3-5 stages, 4 or 8 warps), fp32 accumulation.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

_CONFIGS = [
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=8),
    triton.Config({"BM": 256, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
    triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=5, num_warps=8),
    triton.Config({"BM": 64, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
]


@triton.autotune(configs=_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul_nt(a_ptr, b_ptr, d_ptr, M, N, K, stride_am, stride_bn, stride_dm,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    group = GROUP_M * tiles_n
    first_m = (pid // group) * GROUP_M
    size_m = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b = b_ptr + rn[None, :] * stride_bn + rk[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kmask = rk < K - k * BK
        x = tl.load(a, mask=(rm[:, None] < M) & kmask[None, :], other=0.0)
        y = tl.load(b, mask=(rn[None, :] < N) & kmask[:, None], other=0.0)
        acc = tl.dot(x, y, acc)
        a += BK
        b += BK
    d = d_ptr + rm[:, None] * stride_dm + rn[None, :]
    tl.store(d, acc.to(d_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_nt(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """d = a @ b.T for row-major a (M x K), b (N x K), d (M x N)."""
    M, K = a.shape
    N = b.shape[0]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _matmul_nt[grid](a, b, d, M, N, K, a.stride(0), b.stride(0), d.stride(0))
    return d


def matmul_nt_fixed(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """matmul_nt in one configuration (128 x 128 x 64 tiles, 4 stages, 8 warps), not autotuned:
    for sweeps over hundreds of shapes, where autotuning each would outlast the sweep."""
    M, K = a.shape
    N = b.shape[0]
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
    _matmul_nt.fn[grid](a, b, d, M, N, K, a.stride(0), b.stride(0), d.stride(0),
                        BM=128, BN=128, BK=64, GROUP_M=8, num_stages=4, num_warps=8)
    return d
