"""One launch per case of softmax_rows, rms_norm_rows and layer_norm_rows at row lengths that
take every path of tilemlir/kernels/norms.py with ragged tails (rows sharing a warp, a warp
per row, several warps, long rows through shared memory, staged or read twice), compared with
torch in float32: small enough for compute-sanitizer (memcheck, racecheck, synccheck). The
dtypes alternate by case; the last cases split each row over a cluster (48 kernels to
compile).

    python bench/smoke_norms.py

Exits 1 if any output is wrong or unwritten (outputs start as NaN)."""
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
from tilemlir.kernels import norms  # noqa: E402

CASES = [(37, 3), (130, 31), (9, 100), (5, 257), (6, 1000), (3, 4097), (3, 4100), (2, 16385),
         (2, 50257), (3, 50258), (2, 131073)]      # (M, N): 131073 reads 5 of 17 tiles twice
# (N not a multiple of 8 from 4097 on: rows held shifted, from the 16-byte boundary below)
# (M, N, CTAs per row): rows split over clusters, the last part shorter than the others
CLUSTER_CASES = [(3, 8200, 2), (2, 32000, 4), (2, 128256, 8), (2, 151936, 16), (3, 50257, 4)]
EPS = {"rms_norm": 1e-6, "layer_norm": 1e-5}


def main() -> int:
    F = torch.nn.functional
    failed = 0
    for i, (M, N, c) in enumerate([(m, n, 1) for m, n in CASES] + CLUSTER_CASES):
        dtype = (torch.float16, torch.bfloat16)[i % 2]
        x = torch.randn(M, N, device="cuda").to(dtype)
        w = (torch.rand(N, device="cuda") + 0.5).to(dtype)
        b = torch.randn(N, device="cuda").to(dtype)
        rms, layer = EPS["rms_norm"], EPS["layer_norm"]
        calls = {"softmax": (lambda y: norms.softmax_rows(x, out=y, cluster=c),
                             torch.softmax(x.float(), -1)),
                 "rms_norm": (lambda y: norms.rms_norm_rows(x, w, rms, out=y, cluster=c),
                              F.rms_norm(x.float(), (N,), w.float(), rms)),
                 "layer_norm": (lambda y: norms.layer_norm_rows(x, w, b, layer, out=y,
                                                                cluster=c),
                                F.layer_norm(x.float(), (N,), w.float(), b.float(), layer))}
        for op, (call, ref) in calls.items():
            y = torch.full_like(x, float("nan"))
            call(y)
            torch.cuda.synchronize()
            tol = 2e-3 if dtype == torch.float16 else 1.6e-2
            ok = bool(((y.float() - ref).abs() <= tol * (ref.abs() + 1)).all())
            print(f"{op} {M}x{N} cluster={c} {dtype}: {'ok' if ok else 'WRONG'}")
            failed += not ok
    return failed


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
