"""Host microseconds per call of the FP8 front door (scaled_mm; also choosing its
configuration at every call, as before 2026-12-03) and torch._scaled_mm, 300
calls back to back without a sync (the GPU trails), median of 5 batches; and the GPU time per
call of each, from CUDA events around a batch queued behind a 20 ms spin (so the host is
never what the GPU waits for)."""
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import tilemlir.kernels.scaled_mm as front  # noqa: E402
from tilemlir.kernels.scaled_mm import quantize, scaled_mm  # noqa: E402

for M, N, K, scaling, fast in [(2048, 2048, 2048, "tensor", True),
                               (2048, 2048, 2048, "row", False),
                               (4096, 4096, 4096, "tensor", False)]:
    a8, sa = quantize(torch.randn(M, K, device="cuda"), scaling, "a")
    b8, sb = quantize(torch.randn(N, K, device="cuda"), scaling, "b")
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    scales = (sa.reshape(()), sb.reshape(())) if scaling == "tensor" else \
        (sa.reshape(M, 1), sb.reshape(1, N))
    fns = {"ours": lambda: scaled_mm(a8, b8, sa, sb, torch.bfloat16, fast, out=out),
           # the front door before this change: the configuration chosen at every call
           "ours choosing": lambda: (front._CALLS.clear(),
                                     scaled_mm(a8, b8, sa, sb, torch.bfloat16, fast, out=out)),
           "torch": lambda: torch._scaled_mm(a8, b8.t(), *scales, out_dtype=torch.bfloat16,
                                             use_fast_accum=fast)}
    row = []
    for name, fn in fns.items():
        fn(); torch.cuda.synchronize()
        host = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(300):
                fn()
            host.append((time.perf_counter() - t) / 300 * 1e6)
            torch.cuda.synchronize()
        gpu = []
        for _ in range(5):
            torch.cuda._sleep(40_000_000)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(100):
                fn()
            e1.record(); torch.cuda.synchronize()
            gpu.append(e0.elapsed_time(e1) / 100 * 1e3)
        row.append(f"{name} host {statistics.median(host):6.1f} us, GPU {statistics.median(gpu):6.1f} us")
    print(f"{M}x{N}x{K} {scaling} {'fast' if fast else 'promoted'}: " + "; ".join(row), flush=True)
