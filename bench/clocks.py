"""Sustained-load clocks: run one GEMM back to back for a few seconds while sampling the SM clock
and power with nvidia-smi, for our kernel and for torch.matmul, to see whether power limits differ.

    python bench/clocks.py mma_sync 8192

Not a timing of single launches (that is tilemlir.testing.do_bench's job, in bench/gemm.py): the
point here is seconds of uninterrupted back-to-back load, no L2 flush or spin between launches,
while nvidia-smi samples the clock; the TFLOP/s printed is that sustained rate.
"""

import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from bench.gemm import make_kernel  # noqa: E402


def sustained(fn, seconds: float) -> dict:
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "100"], stdout=subprocess.PIPE, text=True)
    start, n = time.time(), 0
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    while time.time() - start < seconds:
        for _ in range(20):
            fn()
        n += 20
        torch.cuda.synchronize()
    end.record()
    end.synchronize()
    smi.terminate()
    samples = [tuple(float(x) for x in line.split(",")) for line in smi.communicate()[0].split("\n")
               if line.strip()][3:]  # the first samples precede the load
    return dict(ms=begin.elapsed_time(end) / n, clock=statistics.median(s[0] for s in samples),
                power=statistics.median(s[1] for s in samples))


def main() -> None:
    name, size = sys.argv[1], int(sys.argv[2])
    kernel = tilemlir.compile(make_kernel(name, size, size, size, "float16"))
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    d = torch.empty(size, size, device="cuda", dtype=torch.float16)
    stream = torch.cuda.current_stream().cuda_stream
    flops = 2.0 * size ** 3
    for label, fn in (("ours", lambda: kernel.launch(a, b, d, stream=stream)),
                      ("cuBLAS", lambda: torch.matmul(a, b.T, out=d))):
        r = sustained(fn, 4.0)
        print(f"{label:7s} {flops / r['ms'] / 1e9:7.1f} TFLOP/s sustained, SM clock {r['clock']:.0f} MHz, "
              f"power {r['power']:.0f} W")
        time.sleep(2)


if __name__ == "__main__":
    main()
