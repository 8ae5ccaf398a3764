"""One launch per case of the FP8 GEMM front door (scaled_mm) on small shapes, each kind of
scales, each producer and epilogue, compared with the float32 product of the dequantized
operands: small enough for compute-sanitizer (memcheck, racecheck, synccheck).

    python bench/smoke_fp8.py

Exits 1 if any output is wrong or unwritten (outputs start as NaN)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tilemlir.kernels.scaled_mm import dequantize, quantize, scaled_mm  # noqa: E402

CASES = [  # (M, N, K), scaling, use_fast_accum
    ((300, 520, 384), "tensor", True), ((300, 520, 384), "row", False),
    ((300, 520, 400), "block", False), ((70, 100, 1000), "block", False),   # cp.async, direct
    ((130, 203, 64), "tensor", False), ((1, 8, 16), "row", True)]


def main() -> int:
    failed = 0
    for (M, N, K), scaling, fast in CASES:
        a8, sa = quantize(torch.randn(M, K, device="cuda"), scaling, "a")
        b8, sb = quantize(torch.randn(N, K, device="cuda"), scaling, "b")
        ref = dequantize(a8, sa, scaling, "a") @ dequantize(b8, sb, scaling, "b").T
        out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        scaled_mm(a8, b8, sa, sb, torch.bfloat16, fast, out=out)
        torch.cuda.synchronize()
        err = ((out.float() - ref).norm() / ref.norm()).item()
        ok = not torch.isnan(out).any().item() and err < 6e-3
        failed += not ok
        print(f"{M}x{N}x{K} {scaling} {'fast' if fast else 'promoted'}: "
              f"{'ok' if ok else 'WRONG'} (relative error {err:.1e})", flush=True)
    print(f"{len(CASES) - failed} of {len(CASES)} cases right")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
