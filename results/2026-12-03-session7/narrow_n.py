"""GEMMs with few columns (N <= 64, M above 64: matrix-vector products, MoE routers' logits):
the tiled kernels' best modelled configuration (hgemm_v6, 64 x 64 tiles: the front door's
choice before SWAP) against hgemm_decode with M and N
exchanged (SWAP=True: A's rows on wgmma's 64-row side, split K) and cuBLAS, in one process
(random normal f16, each checked against torch in float32 first; do_bench: L2 flushed,
median). Run from the tree's root."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm import Gemm, candidate_configs  # noqa: E402
from tilemlir.kernels.gemm_decode import decode_candidates  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402

SHAPES = [(516, 1, 5323), (4300, 41, 347), (664, 62, 5507), (837, 5, 8051), (6665, 1, 8152),
          (6603, 9, 1674), (4096, 8, 4096), (16384, 64, 4096), (8192, 16, 7168)]
print("| shape | tiled us | swapped us (config) | 2nd swapped us | cuBLAS us | swapped / tiled | err |")
print("|---|---:|---|---:|---:|---:|---:|")
for m, n, k in SHAPES:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float().T
    tiled = next(c for c in candidate_configs(m, n, k) if c["KERNEL"] != "hgemm_decode")
    door = Gemm(m, n, k, "float16", tiled)
    cands = [dict(c, SWAP=True) for c in decode_candidates(n, m, k)[:1]]
    swapped = [Gemm(m, n, k, "float16", c) for c in cands]
    errs = []
    for g in [door] + swapped:
        d = g(a, b, out=torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16))
        errs.append(((d.float() - ref).norm() / ref.norm()).item())
    t = [do_bench(lambda g=g: g(a, b), rep_ms=10) * 1e3 for g in [door] + swapped]
    t.append(do_bench(lambda: a @ b.T, rep_ms=10) * 1e3)
    c = cands[0]
    short = f"BN={c['BN']} SPLIT_K={c['SPLIT_K']}"
    second = f"{t[2]:.1f}" if len(swapped) > 1 else "-"
    print(f"| {m}x{n}x{k} | {t[0]:.1f} | {t[1]:.1f} ({short}) | {second} | {t[-1]:.1f} | "
          f"{t[0] / t[1]:.2f} | {max(errs):.1e} |", flush=True)
