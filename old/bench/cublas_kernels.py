"""Which kernel cuBLAS runs for torch.matmul at each shape (its name gives the tile, stages and
cluster), and its time under the torch profiler (L2 warm, no spin):

    python bench/cublas_kernels.py 1000x1000x8192 4096x4096x14336 --dtype float16
"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("shapes", nargs="+", help="MxNxK; D = A @ B.T with B stored N x K")
    p.add_argument("--dtype", default="float16", choices=("float16", "bfloat16"))
    args = p.parse_args()
    dtype = getattr(torch, args.dtype)
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.lower().split("x"))
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(n, k, device="cuda", dtype=dtype)
        for _ in range(3):
            a @ b.T
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            a @ b.T
            torch.cuda.synchronize()
        for event in prof.key_averages():
            if event.device_type.name == "CUDA":
                print(f"{shape} {args.dtype} {event.key} {event.device_time_total:.1f} us")


if __name__ == "__main__":
    main()
