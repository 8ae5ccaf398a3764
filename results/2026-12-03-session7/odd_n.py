"""What the epilogue costs where N is not a multiple of 8: the front door at N (direct,
masked stores from registers; staged, 16-byte stores realigned from padded staging rows) against the same configuration at N rounded up to a multiple of
8 with the TMA epilogue and with the direct one, cuBLAS and the masked Triton kernel at N, in
one process (random normal f16, checked against torch first, do_bench: L2 flushed, median)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm import choose_config, hgemm  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402
sys.path.insert(0, str(Path.cwd() / "bench"))
from triton_matmul import matmul_nt  # noqa: E402

SHAPES = [(2048, 50257, 1024), (4096, 4097, 4096), (7181, 2787, 2), (3731, 7100, 5),
          (1163, 7805, 32), (5518, 6246, 20), (2999, 8193, 769), (8192, 1785, 4099),
          (777, 11007, 4096), (1000, 3, 128), (4096, 4100, 4096)]
print("| shape | config | direct at N | staged at N | tma at N8 | direct at N8 | cuBLAS | Triton | err direct | err staged |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for m, n, k in SHAPES:
    n8 = -(-n // 8) * 8
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n8, k, device="cuda", dtype=torch.float16)
    bn = b[:n]
    cfg = choose_config(m, n, k)
    g = hgemm(m, n, k, config=cfg)
    d = g(a, bn)
    ref = a.float() @ bn.float().T
    dt = torch.empty(m, n, device="cuda", dtype=torch.float16)
    err = ((d.float() - ref).norm() / ref.norm()).item()
    staged = dict(cfg, EPILOGUE="staged")
    g_st = hgemm(m, n, k, config=staged)
    d2 = g_st(a, bn)
    err2 = ((d2.float() - ref).norm() / ref.norm()).item()
    aligned = {x: v for x, v in cfg.items() if x != "EPILOGUE"}
    g_tma = hgemm(m, n8, k, config=aligned)
    g_dir = hgemm(m, n8, k, config=dict(aligned, EPILOGUE="direct"))
    t = [do_bench(f, rep_ms=40) * 1e3 for f in
         (lambda: g(a, bn), lambda: g_st(a, bn), lambda: g_tma(a, b), lambda: g_dir(a, b), lambda: a @ bn.T,
          lambda: matmul_nt(a, bn, dt))]
    short = ":".join(f"{x}={v}" for x, v in cfg.items() if x in ("KERNEL", "BM", "BN", "SPLIT_K", "PAD_K"))
    print(f"| {m}x{n}x{k} | {short} | " + " | ".join(f"{x:.1f}" for x in t) + f" | {err:.1e} | {err2:.1e} |",
          flush=True)
