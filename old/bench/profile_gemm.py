"""Launch one GEMM a few times for a profiler (ncu):

    python bench/profile_gemm.py mma_sync 8192
    python bench/profile_gemm.py hgemm:KERNEL=hgemm_v8:SPLIT_K=4 1000x1000x8192 bfloat16
    python bench/profile_gemm.py cublas 4096x4096x14336       # torch.matmul, for comparison

NAME is anything bench/gemm.py's --kernels takes (a kernel, or a front door with parameters),
or cublas (torch.matmul); SHAPE is one size (square) or MxNxK."""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.gemm import make_callable, operands, parse_shape  # noqa: E402


def main() -> None:
    name, shape = sys.argv[1], sys.argv[2]
    dtype = sys.argv[3] if len(sys.argv) > 3 else "float16"
    m, n, k = parse_shape(shape)
    if name == "cublas":
        def gemm(a, b, d):
            torch.matmul(a, b.T, out=d)
    else:
        gemm = make_callable(name, m, n, k, dtype)
    a, b, d = operands(m, n, k, dtype)
    for _ in range(3):
        gemm(a, b, d)                   # on torch's current stream
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
