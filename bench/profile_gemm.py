"""Launch one GEMM kernel a few times for a profiler (ncu): python bench/profile_gemm.py mma_sync 8192."""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from bench.gemm import make_kernel  # noqa: E402


def main() -> None:
    name, size = sys.argv[1], int(sys.argv[2])
    dtype = sys.argv[3] if len(sys.argv) > 3 else "float16"
    kernel = tilemlir.compile(make_kernel(name, size, size, size, dtype))
    t = {"float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    a = torch.randn(size, size, device="cuda", dtype=t)
    b = torch.randn(size, size, device="cuda", dtype=t)
    d = torch.empty(size, size, device="cuda", dtype=t)
    stream = torch.cuda.current_stream().cuda_stream
    for _ in range(3):
        kernel.launch(a, b, d, stream=stream)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
