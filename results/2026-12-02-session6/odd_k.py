"""Times the GEMM front door on shapes whose K is odd (rows of 2-byte alignment: the masked
producer) against torch.matmul (cuBLAS) in one process: random normal f16, output checked
against torch in float32 first, tilemlir.testing.do_bench (L2 flushed, median). Run from a
tree's root (it imports that tree's tilemlir)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm import hgemm  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402

SHAPES = [(1, 4610, 5313), (17, 4354, 1529), (16, 14336, 4095), (1, 4096, 4095),
          (64, 4096, 4097), (333, 444, 555), (1785, 131, 77), (2999, 8193, 769)]
for m, n, k in SHAPES:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    g = hgemm(m, n, k)
    d = g(a, b)
    ref = a.float() @ b.float().T
    err = ((d.float() - ref).norm() / ref.norm()).item()
    ours = do_bench(lambda: g(a, b), rep_ms=30)
    cublas = do_bench(lambda: a @ b.T, rep_ms=30)
    print(f"{m}x{n}x{k}: ours {ours * 1e3:8.1f} us  cuBLAS {cublas * 1e3:8.1f} us  "
          f"{cublas / ours:5.2f}x  rel err {err:.1e}", flush=True)
