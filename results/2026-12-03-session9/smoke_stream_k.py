"""hgemm_v7 STREAM_K on small shapes, for compute-sanitizer: runs that stop inside a pair, pairs
in two to four pieces, the odd pair's second tile past M, ragged N; each against fp32 with the
output NaN-poisoned. Run from the tree's root."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm import Gemm  # noqa: E402

V7 = dict(KERNEL="hgemm_v7", STREAM_K=True)
CASES = [((640, 384, 320), dict(V7, BN=128, EPI_N=64, SMS=8)),
         ((256, 256, 448), dict(V7, BN=128, EPI_N=64, SMS=10)),
         ((600, 376, 320), dict(V7, BN=128, EPI_N=64, SMS=8, OVERLAP_EPILOGUE=False)),
         ((640, 640, 192), dict(V7, BN=320, STAGES=3, EPI_N=64, SMS=8)),
         ((700, 777, 256), dict(V7, BN=128, EPI_N=64, SMS=10, EPILOGUE="staged"))]
for (m, n, k), config in CASES:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    g = Gemm(m, n, k, "float16", config)
    for _ in range(2):                  # twice: the counters must come back to zero
        d = g(a, b, out=torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16))
        ref = a.float() @ b.float().T
        err = ((d.float() - ref).norm() / ref.norm()).item()
        print(f"{m}x{n}x{k} {config}: {'ok' if err < 1e-2 and not d.isnan().any() else 'WRONG'} "
              f"{err:.1e}", flush=True)
