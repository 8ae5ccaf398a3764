"""One launch per case of the masked copies and of the GEMM front door on shapes smaller than a
tile, compared with torch: small enough for compute-sanitizer (memcheck, racecheck, synccheck).

    python bench/smoke_shapes.py

Exits 1 if any output is wrong or unwritten (outputs start as NaN)."""
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "test" / "python")]
import tilemlir  # noqa: E402
from masked_kernels import expected_seen, through_registers, through_shared  # noqa: E402
from tilemlir.kernels.gemm import hgemm  # noqa: E402

COPIES = [(through_shared, (100, 40), {}), (through_shared, (1, 13), {"fill": -1.0}),
          (through_shared, (65, 127), {"asynchronous": True}),
          (through_shared, (7, 13), {"asynchronous": True}),
          (through_registers, (100, 40), {"fill": -1.0}), (through_registers, (7, 200), {})]
GEMMS = [(1, 512, 256), (7, 1000, 512), (64, 64, 8), (33, 72, 24), (130, 200, 40),
         (130, 203, 64), (70, 136, 77), (3, 5, 7), (200, 300, 130),   # unaligned N, K
         (2000, 1000, 77),          # hgemm_v6 BM=128 with the cp.async producer: 3 warpgroups
         (300, 77, 130), (129, 1001, 64),     # odd N: the staged epilogue
         (300, 7, 130), (129, 64, 64),        # N <= 64: hgemm_decode with M and N exchanged
         (130, 202, 24)]                      # even N at K <= 64: the staged epilogue too


def copies() -> int:
    failed = 0
    for make, (m, n), kw in COPIES:
        dtype = torch.float32 if make is through_registers else torch.float16
        a = torch.randn(m, n, device="cuda").to(dtype)
        tm, tn = (m + 63) // 64, (n + 63) // 64
        d = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
        seen = torch.full((tm * tn * 64, 64), float("nan"), device="cuda", dtype=dtype)
        name = "float32" if dtype == torch.float32 else "float16"
        tilemlir.compile(make(m, n, name, **kw))(a, d, seen)
        torch.cuda.synchronize()
        ok = torch.equal(d, a) and np.array_equal(
            seen.float().cpu().numpy(), expected_seen(a.float().cpu().numpy(), m, n,
                                                      kw.get("fill", 0.0)))
        print(f"{make.__name__} {m}x{n} {kw}: {'ok' if ok else 'WRONG'}")
        failed += not ok
    return failed


def gemms() -> int:
    failed = 0
    for m, n, k in GEMMS:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16)
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        gemm = hgemm(m, n, k)
        gemm(a, b, out=d)
        torch.cuda.synchronize()
        ref = a.float() @ b.float().T
        err = ((d.float() - ref).norm() / ref.norm()).item()
        ok = not torch.isnan(d).any() and err < 1e-2
        print(f"hgemm {m}x{n}x{k} {gemm.config['KERNEL']}: {'ok' if ok else 'WRONG'} "
              f"(rel err {err:.1e})")
        failed += not ok
    return failed


if __name__ == "__main__":
    sys.exit(1 if copies() + gemms() else 0)
