"""Quick GPU smoke check of the Hopper kernels: one small launch each, compared with torch."""
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from tilemlir.kernels.hgemm_hopper import hgemm_v4, hgemm_v5  # noqa: E402

for factory, (m, n, k) in ((hgemm_v5, (128, 256, 64)), (hgemm_v4, (128, 256, 64)),
                           (hgemm_v5, (1024, 1024, 1024)), (hgemm_v4, (1024, 1024, 1024))):
    kernel = tilemlir.compile(factory(m, n, k))
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    start = time.perf_counter()
    kernel(a, b, d)
    torch.cuda.synchronize()
    ref = a.float() @ b.float().T
    err = ((d.float() - ref).norm() / ref.norm()).item()
    print(f"{factory.__name__} {m}x{n}x{k}: rel err {err:.2e}, nan {int(torch.isnan(d).sum())}, "
          f"{(time.perf_counter() - start) * 1e3:.1f} ms", flush=True)
