"""Session 5: the GEMM front door's host time per call (enqueue, back to back, no
synchronisation inside the loop) against the kernel called directly, Triton's masked matmul
(bench/triton_matmul.py) and torch.matmul, same run, same inputs; with --profile, a cProfile of
the front door's calls."""
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from tilemlir.kernels.gemm import hgemm  # noqa: E402
from triton_matmul import matmul_nt as triton_matmul  # noqa: E402

SHAPES = [(1, 4096, 4096), (16, 4096, 4096), (101, 8, 6080), (516, 1, 5323), (352, 7048, 7),
          (1000, 1000, 1000), (4096, 4096, 4096)]


def per_call_us(fn, calls=200, repeats=5):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    loops = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        loops.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return sorted(loops)[len(loops) // 2]


def main():
    import tilemlir
    print(f"tilemlir from {tilemlir.__file__}")
    rows = ["| shape | front door us | kernel alone us | Triton us | torch.matmul us | config |",
            "|---|---:|---:|---:|---:|---|"]
    for m, n, k in SHAPES:
        g = hgemm(m, n, k)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16)
        d = torch.empty(m, n, device="cuda", dtype=torch.float16)
        kernel, spaces = g.kernel, g._workspace(a.device)
        direct = None if g.config.get("PAD_K") else (lambda: kernel(a, b, d, *spaces))
        times = [per_call_us(lambda: g(a, b, out=d)),
                 per_call_us(direct) if direct else float("nan"),
                 per_call_us(lambda: triton_matmul(a, b, d)),
                 per_call_us(lambda: torch.matmul(a, b.T, out=d))]
        config = ":".join(f"{key}={v}" for key, v in g.config.items())
        rows.append(f"| {m}x{n}x{k} | " + " | ".join(f"{t:.1f}" for t in times) + f" | {config} |")
        print(rows[-1], flush=True)
        if "--profile" in sys.argv:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(200):
                g(a, b, out=d)
            prof.disable()
            torch.cuda.synchronize()
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(14)
            print(s.getvalue())
    print("\n".join(rows))


if __name__ == "__main__":
    main()
