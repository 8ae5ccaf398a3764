"""hgemm_v7's 128 x 192 and 128 x 320 tiles on small ragged shapes, for compute-sanitizer:
each against fp32 with the output NaN-poisoned. Run from the tree's root."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm import Gemm  # noqa: E402

V7 = dict(KERNEL="hgemm_v7", BM=128, GROUP_M=16)
CASES = [((300, 696, 192), dict(V7, BN=320, STAGES=3, EPI_N=64)),
         ((300, 696, 192), dict(V7, BN=320, STAGES=3, EPI_N=64, OVERLAP_EPILOGUE=False)),
         ((1000, 1000, 320), dict(V7, BN=192, STAGES=5, EPI_N=64)),
         ((1000, 2000, 320), dict(V7, BN=320, STAGES=3, EPI_N=64, SMS=10, TAIL_SPLIT=2)),
         ((333, 701, 128), dict(V7, BN=320, STAGES=3, EPI_N=64, EPILOGUE="staged"))]
for (m, n, k), config in CASES:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, device="cuda", dtype=torch.float16)
    d = Gemm(m, n, k, "float16", config)(a, b, out=torch.full((m, n), float("nan"),
                                                                device="cuda",
                                                                dtype=torch.float16))
    ref = a.float() @ b.float().T
    err = ((d.float() - ref).norm() / ref.norm()).item()
    print(f"{m}x{n}x{k} {config}: {'ok' if err < 1e-2 and not d.isnan().any() else 'WRONG'} "
          f"{err:.1e}", flush=True)
