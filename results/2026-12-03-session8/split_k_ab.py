"""Split-K fix-ups timed: configurations whose units meet in the fp32 workspace (hgemm_v6
SPLIT_K, hgemm_v7 TAIL_SPLIT, hgemm_decode SPLIT_K, swapped or not), each checked against torch
(fp32 reference, NaN-poisoned output) and timed with cuBLAS beside it (do_bench: L2 flushed,
median, us). Run it from two trees (this one and one with next-split-k-v4.patch applied) in
the same session and compare the columns. Run from the tree's root."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm import Gemm  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402

V7 = dict(KERNEL="hgemm_v7", BM=128, BN=256, STAGES=4, EPI_N=128, GROUP_M=16)
CASES = [
    ((1280, 4096, 4096), dict(V7, TAIL_SPLIT=2)), ((1280, 4096, 4096), dict(V7, TAIL_SPLIT=4)),
    ((2304, 4096, 4096), dict(V7, TAIL_SPLIT=3)), ((768, 8192, 2048), dict(V7, TAIL_SPLIT=2)),
    ((1000, 1000, 8192), dict(KERNEL="hgemm_v6", BM=128, BN=128, STAGES=6, EPI_N=128,
                              SPLIT_K=2)),
    ((512, 512, 16384), dict(KERNEL="hgemm_v6", BM=128, BN=256, STAGES=4, EPI_N=128,
                             SPLIT_K=4)),
    ((1, 4096, 4096), dict(KERNEL="hgemm_decode", MPAD=8, BN=128, SPLIT_K=2, STAGES=8)),
    ((1, 4096, 4096), dict(KERNEL="hgemm_decode", MPAD=8, BN=128, SPLIT_K=4, STAGES=8)),
    ((64, 4096, 14336), dict(KERNEL="hgemm_decode", MPAD=64, BN=64, SPLIT_K=2, STAGES=12)),
    ((516, 1, 5323), dict(KERNEL="hgemm_decode", MPAD=8, BN=64, SPLIT_K=14, STAGES=12,
                          PRODUCER="cp_async", SWAP=True)),
    ((1000, 1, 4096), dict(KERNEL="hgemm_decode", MPAD=8, BN=64, SPLIT_K=8, STAGES=12,
                           SWAP=True)),
]
print("| shape | config | us | cuBLAS us | vs cuBLAS | err |")
print("|---|---|---:|---:|---:|---:|")
for (m, n, k), config in CASES:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float().T
    g = Gemm(m, n, k, "float16", config)
    d = g(a, b, out=torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16))
    err = ((d.float() - ref).norm() / ref.norm()).item()
    assert not torch.isnan(d).any() and err < 1e-2, (m, n, k, config, err)
    ours = do_bench(lambda: g(a, b), rep_ms=40) * 1e3
    cublas = do_bench(lambda: a @ b.T, rep_ms=40) * 1e3
    short = ":".join(f"{x}={v}" for x, v in config.items()
                     if x in ("KERNEL", "BN", "SPLIT_K", "TAIL_SPLIT", "SWAP"))
    print(f"| {m}x{n}x{k} | {short} | {ours:.1f} | {cublas:.1f} | {cublas / ours:.3f} | "
          f"{err:.1e} |", flush=True)
