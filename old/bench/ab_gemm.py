"""Head-to-head of GEMM configurations: two or more of ours, and cuBLAS, timed in one alternation
per shape, so that their ratio is not blurred by the clock drifting between rows.

    python bench/ab_gemm.py --kernels hgemm,hgemm:KERNEL=hgemm_v7:OVERLAP_EPILOGUE=0 \\
        --shapes 4096,2048x2048x2048 --dtypes float16 --blocks 8 --out results/ab.md

bench/gemm.py times each of our kernels against cuBLAS and Triton in its own row; two of our
configurations compared across rows differ by the GPU's drift (+-2% between rows on the
power-limited H200). Here every configuration of a shape (and torch.matmul, for scale) runs in
--blocks alternating blocks (A, B, .., cuBLAS, A, B, .., cuBLAS, ...), each block after
--warmup-ms of back-to-back launches of that kernel, the same inputs for all. Reported: each
configuration's median TFLOP/s, its speed relative to the first configuration and to cuBLAS,
and the spread of the per-block ratio to the first (min..max over blocks). Kernel names are
bench/gemm.py's. Each configuration's output is checked once against float32 first.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench.gemm import (FRONT_DOORS, KERNELS, TORCH_DTYPES, check, describe,  # noqa: E402
                        make_callable, operands, parse_shape, settle)
from bench.report import environment, heading  # noqa: E402
from tilemlir.testing import do_bench_blocks  # noqa: E402


def head_to_head(names, shape, dtype_name, args) -> dict:
    m, n, k = shape
    kernels = [make_callable(name, m, n, k, dtype_name) for name in names]
    errors = [check(kernel, m, n, k, TORCH_DTYPES[dtype_name], args.tolerance)
              for kernel in kernels]
    sets = [operands(m, n, k, dtype_name) for _ in range(args.sets)]
    fns = kernels + [lambda a, b, d: torch.matmul(a, b.T, out=d)]
    runs = do_bench_blocks(fns, blocks=args.blocks, reps=args.reps, warmup_ms=args.warmup_ms,
                           args=sets, spin_us=args.spin_us)
    blocks = [[run[b].median for run in runs] for b in range(args.blocks)]   # per block, per fn
    medians = [sorted(b[i] for b in blocks)[len(blocks) // 2] for i in range(len(fns))]
    flops = 2.0 * m * n * k
    rows = []
    for i, name in enumerate(names):
        per_block_ratio = [b[0] / b[i] for b in blocks]
        rows.append(dict(kernel=name, tflops=flops / medians[i] / 1e9,
                         vs_first=medians[0] / medians[i], vs_cublas=medians[-1] / medians[i],
                         spread=(min(per_block_ratio), max(per_block_ratio)),
                         rel_err=errors[i], config=describe(kernels[i])))
    return dict(shape=f"{m}x{n}x{k}", dtype=dtype_name, cublas_tflops=flops / medians[-1] / 1e9,
                rows=rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", required=True, type=lambda s: s.split(","),
                   help="two or more bench/gemm.py kernel names; the first is the baseline")
    p.add_argument("--shapes", required=True, type=lambda s: s.split(","))
    p.add_argument("--dtypes", default="float16", type=lambda s: s.split(","))
    p.add_argument("--blocks", type=int, default=8)
    p.add_argument("--reps", type=int, default=80, help="timed launches per kernel, in all")
    p.add_argument("--warmup-ms", type=float, default=300.0)
    p.add_argument("--spin-us", type=float, default=50.0)
    p.add_argument("--settle-s", type=float, default=3.0)
    p.add_argument("--sets", type=int, default=4)
    p.add_argument("--tolerance", type=float, default=1e-2)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    if len(args.kernels) < 2:
        p.error("--kernels: give at least two configurations to compare")
    for name in args.kernels:
        if name.split(":")[0] not in {**KERNELS, **FRONT_DOORS}:
            p.error(f"--kernels: unknown kernel {name}; known: "
                    f"{', '.join({**KERNELS, **FRONT_DOORS})}")
    if args.blocks < 1:
        p.error(f"--blocks must be at least 1, got {args.blocks}")
    env = environment()
    settle(args.settle_s)
    results = []
    for shape in args.shapes:
        for dtype in args.dtypes:
            try:
                results.append(head_to_head(args.kernels, parse_shape(shape), dtype, args))
            except Exception as err:  # one failing shape must not hide the others
                results.append(dict(shape=shape, dtype=dtype,
                                    error=f"{type(err).__name__}: {err}"[:300]))
            print(results[-1], flush=True)
    lines = ["| M x N x K | dtype | kernel | TFLOP/s | vs first | per-block vs first | "
             "vs cuBLAS (its TFLOP/s) | rel. error | config |",
             "|---|---|---|---:|---:|---|---:|---:|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['shape']} | {r['dtype']} | FAILED: {r['error']} | | | | | | |")
            continue
        for row in r["rows"]:
            lo, hi = row["spread"]
            lines.append(f"| {r['shape']} | {r['dtype']} | {row['kernel']} | {row['tflops']:.1f} | "
                         f"{row['vs_first']:.3f} | {lo:.3f}..{hi:.3f} | {row['vs_cublas']:.3f} "
                         f"({r['cublas_tflops']:.1f}) | {row['rel_err']:.2e} | {row['config']} |")
    ok = [r for r in results if "error" not in r]
    summary = []
    for i, name in enumerate(args.kernels):
        ratios = [r["rows"][i]["vs_first"] for r in ok]
        if ratios:
            geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            summary.append(f"- {name}: geometric mean {geo:.3f}x the first over {len(ratios)} "
                           f"shapes")
    print("\n".join(lines + [""] + summary))
    if args.out:
        text = heading(f"GEMM head-to-head: {', '.join(args.kernels)}", env) + [
            f"- method: bench/ab_gemm.py; per shape, every configuration and torch.matmul in "
            f"{args.blocks} alternating blocks of {max(1, args.reps // args.blocks)} timed "
            f"launches (median of CUDA-event timings, each launch behind a {args.spin_us:g} us "
            f"GPU spin, {args.sets} input sets rotated, L2 flushed), each block after "
            f"{args.warmup_ms:.0f} ms of back-to-back launches of that kernel; {args.settle_s:g} s "
            f"of cuBLAS before the first shape; outputs checked once against float32", ""]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(text + lines + [""] + summary) + "\n")


if __name__ == "__main__":
    main()
