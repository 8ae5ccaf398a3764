"""Sustained-load clocks: run each GEMM back to back for a few seconds while sampling the SM clock
and power with nvidia-smi, for our kernels (any names bench/gemm.py's --kernels takes, comma
separated) and for torch.matmul, to see whether power limits differ.

    python bench/clocks.py mma_sync 8192
    python bench/clocks.py hgemm,hgemm:GROUP_M=8 4096x4096x14336 bfloat16

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
from bench.gemm import make_callable, operands, parse_shape  # noqa: E402


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
    names, shape = sys.argv[1].split(","), sys.argv[2]
    dtype = sys.argv[3] if len(sys.argv) > 3 else "float16"
    m, n, k = parse_shape(shape)
    a, b, d = operands(m, n, k, dtype)
    flops = 2.0 * m * n * k
    fns = [(name, make_callable(name, m, n, k, dtype)) for name in names]
    fns.append(("cuBLAS", lambda a, b, d: torch.matmul(a, b.T, out=d)))
    for label, fn in fns:
        fn(a, b, d)                       # compiled and loaded before the clock starts
        torch.cuda.synchronize()
        r = sustained(lambda: fn(a, b, d), 4.0)
        print(f"{label:24s} {shape} {dtype}: {flops / r['ms'] / 1e9:7.1f} TFLOP/s sustained, "
              f"SM clock {r['clock']:.0f} MHz, power {r['power']:.0f} W", flush=True)
        time.sleep(2)


if __name__ == "__main__":
    main()
