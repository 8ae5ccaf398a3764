"""Host microseconds per call of the front doors (attention, scaled_mm, matmul_nt) against
torch's, 300 calls back to back without a sync (median of 5 batches), and a cProfile of 2000
calls of each of ours (the top 25 functions by their own time)."""
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tilemlir.kernels.attention import attention  # noqa: E402
from tilemlir.kernels.gemm import matmul_nt  # noqa: E402
from tilemlir.kernels.scaled_mm import quantize, scaled_mm  # noqa: E402


def host_us(fn):
    fn(); torch.cuda.synchronize()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(300):
            fn()
        times.append((time.perf_counter() - t) / 300 * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


cases = {}
q = torch.randn(1, 8, 512, 128, device="cuda", dtype=torch.float16)
k, v = torch.randn_like(q), torch.randn_like(q)
o = torch.empty_like(q)
cases["attention 1x8x512x128"] = (lambda: attention(q, k, v, out=o),
                                  lambda: F.scaled_dot_product_attention(q, k, v))
a8, sa = quantize(torch.randn(2048, 2048, device="cuda"), "tensor", "a")
b8, sb = quantize(torch.randn(2048, 2048, device="cuda"), "tensor", "b")
d = torch.empty(2048, 2048, device="cuda", dtype=torch.bfloat16)
cases["scaled_mm 2048^3 tensor fast"] = (
    lambda: scaled_mm(a8, b8, sa, sb, torch.bfloat16, True, out=d),
    lambda: torch._scaled_mm(a8, b8.t(), sa.reshape(()), sb.reshape(()),
                             out_dtype=torch.bfloat16, use_fast_accum=True))
x = torch.randn(1, 4096, device="cuda", dtype=torch.float16)
w = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
y = torch.empty(1, 4096, device="cuda", dtype=torch.float16)
cases["matmul_nt 1x4096x4096"] = (lambda: matmul_nt(x, w, out=y), lambda: x @ w.t())
for name, (ours, theirs) in cases.items():
    print(f"{name}: ours {host_us(ours):.1f} us, torch {host_us(theirs):.1f} us", flush=True)
for name, (ours, _) in cases.items():
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(2000):
        ours()
    prof.disable()
    torch.cuda.synchronize()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
    print(f"===== {name}\n" + s.getvalue(), flush=True)
