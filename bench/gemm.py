"""GEMM benchmark: tilemlir kernels against torch.matmul (cuBLAS) and a Triton matmul
(bench/triton_matmul.py), same process, same inputs.

    python bench/gemm.py --kernels mma_sync --out results/gemm-mma-sync.md
    python bench/gemm.py --kernels hgemm_wgmma_v3 --shapes 4096x4096x4096 --dtypes float16
    python bench/gemm.py --kernels mma_sync:BK=32,mma_sync:BN=128:STAGES=3 --shapes 8192x8192x8192
    python bench/gemm.py --kernels hgemm_wgmma_v1@128x128x64,hgemm_wgmma_v3   # a kernel's own shape
    python bench/gemm.py --kernels hgemm,hgemm_v6     # the GEMM front door: its choice per shape
    python bench/gemm.py --kernels hgemm_tuned        # the front door's candidates, all timed
    python bench/gemm.py --kernels hgemm:BM=128:BN=128:STAGES=6:SPLIT_K=2 --shapes 1000x1000x8192
    python bench/gemm.py --kernels hgemm:KERNEL=hgemm_v6:GROUP_M=16 --shapes 4096x4096x4096

D[m, n] = sum_k A[m, k] * B[n, k] (B stored N x K, as in the seeds), fp32 accumulation, output
in the input type. For every (kernel, shape, dtype):
  1. correctness: fresh random-normal inputs, output poisoned with NaN, every element written,
     relative error against a float32 reference (torch on the GPU) below --tolerance;
  2. timing (tilemlir.testing.do_bench_alternating, the same for all three): several input
     sets rotated and L2 flushed before each timed launch, then the median of --reps CUDA-event
     timings of single launches, each queued behind a GPU spin, for our kernel (launched
     through MLIR's CUDA runtime on torch's current stream), torch.matmul(a, b.T) and the
     Triton kernel on the same tensors, in alternating blocks each preceded by --warmup-ms of
     back-to-back launches of that kernel.
TFLOP/s = 2 M N K / t. A Markdown results file gets the date, GPU, driver, command and table.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tilemlir  # noqa: E402
from bench.report import environment, heading  # noqa: E402
from tilemlir.testing import do_bench_alternating  # noqa: E402

DEFAULT_SHAPES = ["8192x8192x8192", "4096x4096x4096", "2048x2048x2048", "4096x4096x512",
                  "16384x1024x4096", "4096x28672x4096", "4096x4096x14336", "4000x4000x4000",
                  "3000x5120x2056", "1000x1000x8192"]
# name -> (module, factory); the factory takes (M, N, K, dtype) and returns a @T.prim_func.
KERNELS = {
    "mma_sync": ("tilemlir.kernels.gemm_mma_sync", "gemm_mma_sync"),
    "hgemm_wgmma_v1": ("tilemlir.kernels.hgemm_wgmma", "hgemm_wgmma_v1"),
    "hgemm_wgmma_v2": ("tilemlir.kernels.hgemm_wgmma", "hgemm_wgmma_v2"),
    "hgemm_wgmma_v3": ("tilemlir.kernels.hgemm_wgmma", "hgemm_wgmma_v3"),
    "hgemm_v4": ("tilemlir.kernels.hgemm_hopper", "hgemm_v4"),
    "hgemm_v5": ("tilemlir.kernels.hgemm_hopper", "hgemm_v5"),
    "hgemm_v6": ("tilemlir.kernels.hgemm_hopper", "hgemm_v6"),
    "hgemm_v7": ("tilemlir.kernels.hgemm_hopper", "hgemm_v7"),
}
# name -> (module, function): the function takes (M, N, K, dtype, **config) and returns a
# ready callable f(a, b, d) that picks its own kernel and configuration for the shape (and
# allocates what it needs besides), e.g. the GEMM front door.
FRONT_DOORS = {
    "hgemm": ("tilemlir.kernels.gemm", "hgemm"),                  # the heuristic's choice
    "hgemm_tuned": ("tilemlir.kernels.gemm", "tuned_hgemm"),      # every candidate timed
    "hgemm_fixed_m": ("bench.gemm", "fixed_m_hgemm"),              # the choice, for this M only
}
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def parse_shape(text: str) -> tuple[int, int, int]:
    """MxNxK, or one size for a cube."""
    if "x" not in text.lower():
        return (int(text),) * 3
    m, n, k = (int(x) for x in text.lower().split("x"))
    return m, n, k


def operands(m: int, n: int, k: int, dtype: str) -> tuple:
    """Fresh random-normal A (m x k) and B (n x k) and an empty D (m x n) on the GPU."""
    t = TORCH_DTYPES[dtype]
    return (torch.randn(m, k, device="cuda", dtype=t), torch.randn(n, k, device="cuda", dtype=t),
            torch.empty(m, n, device="cuda", dtype=t))


def fixed_m_hgemm(m: int, n: int, k: int, dtype: str, config: dict | None = None):
    """The front door's configuration compiled for this M alone (as before the kernels took a
    run-time M): bench/ab_gemm.py's partner of `hgemm`, to price the run-time M."""
    from tilemlir.kernels.gemm import Gemm, choose_config
    return Gemm(m, n, k, dtype, config or choose_config(m, n, k, dtype), fixed_m=True)


def make_kernel(name: str, m: int, n: int, k: int, dtype: str):
    """`name` is a KERNELS key, optionally with factory parameters: mma_sync:BK=32:STAGES=3."""
    base, *params = name.split(":")
    module, factory = KERNELS[base]
    kwargs = {key: int(value) for key, value in (p.split("=") for p in params)}
    return getattr(importlib.import_module(module), factory)(m, n, k, dtype, **kwargs)


def make_callable(name: str, m: int, n: int, k: int, dtype: str):
    """f(a, b, d) for `name`: a KERNELS key (the kernel, compiled) or a FRONT_DOORS key, whose
    parameters override the front door's choice (hgemm:SPLIT_K=2), or, with KERNEL, replace it
    (hgemm:KERNEL=hgemm_v8:SPLIT_K=4: that kernel's defaults and these parameters)."""
    base, *params = name.split(":")
    if base not in FRONT_DOORS:
        return tilemlir.compile(make_kernel(name, m, n, k, dtype))
    kwargs = {key: int(value) if value.lstrip("-").isdigit() else value
              for key, value in (p.split("=") for p in params)}
    module, function = FRONT_DOORS[base]
    door = importlib.import_module(module)
    if not kwargs:
        return getattr(door, function)(m, n, k, dtype)
    # A named KERNEL starts from its own defaults; otherwise override the heuristic's choice.
    base_config = {} if "KERNEL" in kwargs else door.choose_config(m, n, k, dtype)
    return getattr(door, function)(m, n, k, dtype, config={**base_config, **kwargs})


def describe(kernel) -> str:
    """The configuration a front door chose ('' for a plain kernel)."""
    config = getattr(kernel, "config", None)
    return ":".join(f"{k}={v}" for k, v in config.items()) if config else ""


BLOCKS = 2       # timed blocks per kernel, the kernels alternating block by block


def median_times_ms(fns, input_sets, reps: int, warmup_ms: float, spin_us: float) -> list[float]:
    """Median CUDA-event time of single launches of each function, every one timed the same way
    by tilemlir.testing.do_bench_alternating.

    The GPU is power-limited under sustained GEMM load and its clock settles at a different
    value for each kernel (measured: ours ~1635 MHz, cuBLAS ~1410 MHz at 8192^3). So each
    function is timed in its own blocks, each block preceded by `warmup_ms` of back-to-back
    launches of that function (the clock settles for it), the functions alternating block by
    block; the reps are split across the blocks, the input sets rotate and L2 is flushed
    before each timed launch.

    Each timed launch is queued behind a GPU spin of about `spin_us` microseconds, so the GPU is
    still busy while the host queues the start event, the launch and the end event: the
    events then bracket the kernel's GPU time only, not the host's launch overhead (which
    differs per library and is measured on its own by bench/launch_overhead.py). Without it a
    40 us GEMM also timed the Python launch path.
    """
    timings = do_bench_alternating(fns, blocks=BLOCKS, reps=reps, warmup_ms=warmup_ms,
                                   args=input_sets, spin_us=spin_us)
    return [t.median for t in timings]


def settle(seconds: float) -> None:
    """Back-to-back cuBLAS GEMMs for `seconds` before the first row, so that the first row, like
    the others, runs on a GPU already at its loaded temperature and power-limited clock (a fresh
    machine's first row read 0.76x cuBLAS where the same kernel read 0.99x a row later)."""
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            torch.matmul(a, a)
        torch.cuda.synchronize()


def check(kernel, m, n, k, dtype, tolerance: float) -> float:
    """Relative error against float32 on fresh inputs (raises on NaN / unwritten output)."""
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(n, k, device="cuda", dtype=dtype)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    kernel(a, b, d)
    torch.cuda.synchronize()
    if torch.isnan(d).any():
        raise AssertionError(f"{int(torch.isnan(d).sum())} outputs were never written")
    ref = a.float() @ b.float().T
    err = ((d.float() - ref).norm() / ref.norm()).item()
    if not err < tolerance:
        raise AssertionError(f"relative error {err:.3e} >= {tolerance}")
    return err


def run_one(name, shape, dtype_name, args) -> dict:
    m, n, k = shape
    dtype = TORCH_DTYPES[dtype_name]
    start = time.perf_counter()
    kernel = make_callable(name, m, n, k, dtype_name)
    kernel.compile_info                                   # a front door compiles when asked
    compile_s = time.perf_counter() - start
    errors = [check(kernel, m, n, k, dtype, args.tolerance) for _ in range(args.checks)]
    sets = [operands(m, n, k, dtype_name) for _ in range(args.sets)]
    from triton_matmul import matmul_nt
    matmul_nt(*sets[0])                                    # autotune outside the timings
    ours, peer, tri = median_times_ms([kernel, lambda a, b, d: torch.matmul(a, b.T, out=d),
                                       matmul_nt], sets, args.reps, args.warmup_ms,
                                      args.spin_us)
    flops = 2.0 * m * n * k
    return dict(kernel=name, shape=f"{m}x{n}x{k}", dtype=dtype_name,
                ours_tflops=flops / ours / 1e9, cublas_tflops=flops / peer / 1e9,
                triton_tflops=flops / tri / 1e9, ratio=peer / ours, triton_ratio=tri / ours,
                ours_ms=ours, cublas_ms=peer, triton_ms=tri,
                max_rel_err=max(errors, default=float("nan")),       # nan: --checks 0
                compile_s=compile_s, cache_hit=kernel.compile_info.cache_hit,
                config=describe(kernel))


def write_markdown(path: Path, env: dict, rows: list[dict], args) -> None:
    lines = heading(f"GEMM benchmark: {', '.join(args.kernels)} vs torch.matmul (cuBLAS) and "
                    f"Triton", env) + [
             f"- method: D = A.B^T (B stored N x K); timed by tilemlir.testing.do_bench_alternating, "
             f"the same for every kernel: {args.sets} input sets rotated, L2 flushed (256 MiB "
             f"overwritten) before each timed launch; median of "
             f"{args.reps} CUDA-event timings of single launches per kernel, each queued behind a "
             f"{args.spin_us:g} us GPU spin so that the events time the kernel, not the host's launch "
             f"overhead (bench/launch_overhead.py measures that), after {args.settle_s:g} s of "
             f"back-to-back cuBLAS GEMMs before the first row, taken in {BLOCKS} blocks per "
             f"kernel (ours, cuBLAS, Triton, ours, cuBLAS, Triton), each block after "
             f"{args.warmup_ms:.0f} ms of back-to-back warm-up launches of that kernel (the "
             f"power-limited clock settles per kernel); ours launched through MLIR's CUDA runtime "
             f"on torch's current stream; Triton: bench/triton_matmul.py, autotuned; correctness "
             f"checked {args.checks}x on fresh random-normal inputs with NaN-poisoned outputs "
             f"against a float32 reference (tolerance {args.tolerance})", "",
             "| kernel | M x N x K | dtype | ours TFLOP/s | cuBLAS TFLOP/s | Triton TFLOP/s | "
             "vs cuBLAS | vs Triton | ours ms | rel. error | compile s | chosen config |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['kernel']} | {r['shape']} | {r['dtype']} | FAILED: {r['error']} "
                         f"| | | | | | | | |")
            continue
        lines.append(f"| {r['kernel']} | {r['shape']} | {r['dtype']} | {r['ours_tflops']:.1f} | "
                     f"{r['cublas_tflops']:.1f} | {r['triton_tflops']:.1f} | {r['ratio']:.3f} | "
                     f"{r['triton_ratio']:.3f} | {r['ours_ms']:.3f} | {r['max_rel_err']:.2e} | "
                     f"{r['compile_s']:.2f} | {r['config']} |")
    ok = [r for r in rows if "error" not in r]
    if ok:
        geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))  # noqa: E731
        lines += ["", f"Geometric mean over {len(ok)} rows: {geo([r['ratio'] for r in ok]):.3f}x "
                      f"cuBLAS, {geo([r['triton_ratio'] for r in ok]):.3f}x Triton; lowest: "
                      f"{min(r['ratio'] for r in ok):.3f}x cuBLAS."]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", default="mma_sync", type=lambda s: s.split(","))
    p.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), type=lambda s: s.split(","))
    p.add_argument("--dtypes", default="float16,bfloat16", type=lambda s: s.split(","))
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--warmup-ms", type=float, default=1000.0,
                   help="back-to-back launches before each timed block, in milliseconds")
    p.add_argument("--spin-us", type=float, default=50.0,
                   help="GPU spin queued before each timed launch (0: none), microseconds")
    p.add_argument("--settle-s", type=float, default=5.0,
                   help="seconds of back-to-back cuBLAS GEMMs before the first row")
    p.add_argument("--sets", type=int, default=4)
    p.add_argument("--checks", type=int, default=2,
                   help="correctness checks per row on fresh inputs (0: none, for timing only)")
    p.add_argument("--tolerance", type=float, default=1e-2)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    for name in args.kernels:
        if name.split(":")[0].split("@")[0] not in {**KERNELS, **FRONT_DOORS}:
            p.error(f"unknown kernel {name}; known: {', '.join({**KERNELS, **FRONT_DOORS})}")
    env = environment()
    settle(args.settle_s)
    rows = []
    for spec in args.kernels:
        name, _, own_shape = spec.partition("@")
        for shape in ([own_shape] if own_shape else args.shapes):
            for dtype in args.dtypes:
                try:
                    row = run_one(name, parse_shape(shape), dtype, args)
                except Exception as err:  # one failing configuration must not hide the others
                    row = dict(kernel=name, shape=shape, dtype=dtype,
                               error=f"{type(err).__name__}: {err}"[:300])
                rows.append(row)
                print(row, flush=True)
    print(f"\n{'kernel':24s} {'shape':16s} {'dtype':9s} {'ours':>7s} {'cuBLAS':>7s} "
          f"{'Triton':>7s} {'xcuBLAS':>7s} {'xTriton':>7s}")
    for r in rows:
        if "error" in r:
            print(f"{r['kernel']:24s} {r['shape']:16s} {r['dtype']:9s} FAILED {r['error'][:80]}")
        else:
            print(f"{r['kernel']:24s} {r['shape']:16s} {r['dtype']:9s} {r['ours_tflops']:7.1f} "
                  f"{r['cublas_tflops']:7.1f} {r['triton_tflops']:7.1f} {r['ratio']:7.3f} "
                  f"{r['triton_ratio']:7.3f} {r['config']}")
    if args.out:
        write_markdown(args.out, env, rows, args)


if __name__ == "__main__":
    main()
