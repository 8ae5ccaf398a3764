"""Where the staged stores beat the direct ones for an even N that is not a multiple of 8 (the
direct stores are 4 bytes wide there): the front door's configuration at N with
EPILOGUE="direct" and "staged", and at N rounded up to 8 with TMA stores, over K from 2 to
4096 (the smaller K, the more of the time is the epilogue's), with cuBLAS, in one process
(random normal f16, each output checked against torch first; do_bench: L2 flushed, median,
us). Run from the tree's root."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm import choose_config, hgemm  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402

SHAPES = [(m, n, k) for m, n in ((5518, 6246), (2048, 4100), (777, 11010))
          for k in (2, 16, 64, 256, 1024, 4096)]
print("| shape | config | direct | staged | tma at N8 | cuBLAS | staged / direct | err direct | err staged |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for m, n, k in SHAPES:
    n8 = -(-n // 8) * 8
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n8, k, device="cuda", dtype=torch.float16)
    bn = b[:n]
    ref = a.float() @ bn.float().T
    cfg = choose_config(m, n, k)
    kernels = [hgemm(m, n, k, config=dict(cfg, EPILOGUE=e)) for e in ("direct", "staged")]
    errs = [((g(a, bn).float() - ref).norm() / ref.norm()).item() for g in kernels]
    aligned = hgemm(m, n8, k, config={x: v for x, v in cfg.items() if x != "EPILOGUE"})
    t = [do_bench(f, rep_ms=30) * 1e3 for f in
         (lambda: kernels[0](a, bn), lambda: kernels[1](a, bn), lambda: aligned(a, b),
          lambda: a @ bn.T)]
    short = ":".join(f"{x}={v}" for x, v in cfg.items() if x in ("KERNEL", "BM", "BN", "SPLIT_K", "PAD_K", "PRODUCER"))
    print(f"| {m}x{n}x{k} | {short} | " + " | ".join(f"{x:.1f}" for x in t) +
          f" | {t[1] / t[0]:.2f} | {errs[0]:.1e} | {errs[1]:.1e} |", flush=True)
