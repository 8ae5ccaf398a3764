"""Host time per call of a tiny kernel: ours (`kernel(...)` and `kernel.launch(...)`, torch
tensors, torch's current stream) against a Triton kernel and torch.add on tiny tensors, same run.

    python bench/launch_overhead.py [--calls 20000] [--out results/.../launch-overhead.md]

Each variant is called back to back --calls times after a warm-up (the GPU work is tiny, so the
loop measures what the host spends per call: argument checks, stream lookup, the launch); the
median of --repeats such loops is reported in microseconds per call.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tilemlir  # noqa: E402
from tilemlir.kernels.mma_demo import gemm_16x8x16  # noqa: E402


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def per_call_us(fn, calls: int, repeats: int) -> float:
    # Host wall-clock time on purpose, not tilemlir.testing.do_bench: what is measured is the
    # host's work per call (the GPU work is tiny and runs behind it); CUDA events would time
    # the GPU, which do_bench's spin_us option exists precisely to keep this overhead out of.
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    loops = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        loops.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(loops)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    kernel = tilemlir.compile(gemm_16x8x16)
    a = torch.randn(16, 16, device="cuda", dtype=torch.float16)
    b = torch.randn(16, 8, device="cuda", dtype=torch.float16)
    d = torch.zeros(16, 8, device="cuda", dtype=torch.float32)
    x = torch.randn(128, device="cuda")
    y = torch.randn(128, device="cuda")
    out = torch.empty_like(x)
    # The path of every device but the one MLIR's runtime serves (cuda-python's driver
    # bindings), measured on this device by loading the kernel through it.
    from tilemlir.runtime.cuda import DriverFunction
    through_driver = tilemlir.compile(gemm_16x8x16, cache=False)
    through_driver._functions[a.device.index] = DriverFunction(
        through_driver.ptx, through_driver.name, a.device.index)
    # The GEMM front door at a run-time M (a new M each call, cycling through 8: each compiles
    # nothing after the first of its configuration) against Triton's autotuned matmul.
    from tilemlir.kernels.gemm import matmul_nt
    from triton_matmul import matmul_nt as triton_matmul
    ms = [1, 3, 5, 8]
    ga = {m: torch.randn(m, 256, device="cuda", dtype=torch.float16) for m in ms}
    gb = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    gd = {m: torch.empty(m, 512, device="cuda", dtype=torch.float16) for m in ms}
    ours_m, triton_m = itertools.cycle(ms), itertools.cycle(ms)     # one each: no row runs dry
    for m in ms:
        matmul_nt(ga[m], gb, gd[m])
        triton_matmul(ga[m], gb, gd[m])
    rows = [
        ("tilemlir GEMM front door matmul_nt(a, b, d), M in 1..8 (decode)",
         lambda: (lambda m: matmul_nt(ga[m], gb, gd[m]))(next(ours_m))),
        ("Triton matmul_nt(a, b, d) (bench/triton_matmul.py), M in 1..8",
         lambda: (lambda m: triton_matmul(ga[m], gb, gd[m]))(next(triton_m))),
        ("tilemlir kernel(a, b, d)", lambda: kernel(a, b, d)),
        ("tilemlir kernel(a, b, d), driver-API path (other devices)",
         lambda: through_driver(a, b, d)),
        ("tilemlir kernel.launch(a, b, d)", lambda: kernel.launch(a, b, d)),
        ("tilemlir.compile(k)(a, b, d) (memory cache)",
         lambda: tilemlir.compile(gemm_16x8x16)(a, b, d)),
        ("Triton add[(1,)](x, y, out, 128)", lambda: _add[(1,)](x, y, out, 128, BLOCK=128)),
        ("torch.add(x, y, out=out)", lambda: torch.add(x, y, out=out)),
    ]
    results = [(label, per_call_us(fn, args.calls, args.repeats)) for label, fn in rows]
    table = ["| call | host us per call |", "|---|---:|"] + \
            [f"| {label} | {us:.2f} |" for label, us in results]
    text = "\n".join(table)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(f"# Launch overhead (python {' '.join(sys.argv)})\n\n"
                            f"- GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
                            f"triton {triton.__version__}\n- {args.calls} calls per loop, median "
                            f"of {args.repeats} loops\n\n{text}\n")


if __name__ == "__main__":
    main()
