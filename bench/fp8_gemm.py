"""FP8 GEMM benchmark: tilemlir's scaled_mm (tilemlir/kernels/scaled_mm.py, the fp8_gemm
kernel) against torch._scaled_mm (cuBLASLt) with the same kind of scales, same process, same
inputs.

    python bench/fp8_gemm.py --out results/2026-12-02-fp8/fp8-gemm-sweep.md
    python bench/fp8_gemm.py --shapes 8192x8192x8192 --scalings block --accum promoted
    python bench/fp8_gemm.py --shapes 4096x4096x4096 --config BM=128:BN=256:CLUSTER=0

D = (scale_a . A) @ (scale_b . B)^T, A M x K and B N x K of float8_e4m3fn (random normal data
quantized per the kind of scales: tilemlir.kernels.scaled_mm.quantize), D bfloat16. Kinds of
scales: "tensor" (one each), "row" (A per row, B per column), "block" (A per 1 x 128, B per
128 x 128: DeepSeek-V3's); accumulation: "promoted" (each k-tile's 128 products promoted into
fp32 registers; torch._scaled_mm's default, use_fast_accum=False) and "fast"
(use_fast_accum=True; ours then sums all of K on the tensor cores); block scales are always
promoted. For every (shape, scales, accumulation):
  1. ours and torch's outputs against the float32 product of the dequantized operands
     (relative Frobenius error; ours NaN-poisoned, every element written);
  2. timing: tilemlir.testing.do_bench_alternating (input sets rotated, L2 flushed before each
     launch, medians of CUDA-event timings, the two in alternating blocks).
TFLOP/s = 2 M N K / t; "vs torch" = torch's time / ours. torch._scaled_mm needs K and N
multiples of 16 and, for block scales, cuBLAS 12.9+ (its row is "n/a" otherwise).
Every configuration is compiled first, in parallel processes (--jobs; the compile cache then
answers the run), so that the GPU time goes to the measurements.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.report import environment, heading, publish  # noqa: E402
from tilemlir.kernels.scaled_mm import (choose_config, dequantize, fp8_kernel,  # noqa: E402
                                        quantize, scaled_mm)
from tilemlir.testing import do_bench_alternating  # noqa: E402

# The four anchors, one shape not a multiple of the tiles, and LLM projections
# (Llama-3 8B: QKV 4096 -> 6144, MLP down 14336 -> 4096; 70B: MLP up 8192 -> 28672, down
# 28672 -> 8192) at 8-16k tokens, and a 1024-token prefill.
DEFAULT_SHAPES = ["8192x8192x8192", "4096x4096x4096", "4096x14336x4096", "2048x2048x2048",
                  "4000x4000x4000", "16384x6144x4096", "16384x4096x14336", "8192x28672x8192",
                  "8192x8192x28672", "1024x8192x8192"]
SCALINGS = ("tensor", "row", "block")
ACCUMULATIONS = ("promoted", "fast")


def cases(shapes, scalings, accumulations):
    """(M, N, K, scaling, use_fast_accum) for every run (block scales: promoted only)."""
    for shape in shapes:
        M, N, K = (int(v) for v in shape.lower().split("x"))
        for scaling in scalings:
            for accum in accumulations:
                if scaling == "block" and accum == "fast":
                    continue
                yield M, N, K, scaling, accum == "fast"


def _precompile(job) -> str:
    N, K, scaling, config = job
    fp8_kernel(N, K, "float8_e4m3fn", "float8_e4m3fn", "bfloat16", scaling, config,
               target="sm_90a")
    return f"{N}x{K} {scaling} {config}"


def precompile(runs, config_override, jobs: int) -> None:
    wanted = {(N, K, scaling, tuple(sorted(
        (config_override or choose_config(M, N, K, scaling, fast)).items())))
        for M, N, K, scaling, fast in runs}
    todo = [(N, K, s, dict(c)) for N, K, s, c in sorted(wanted)]
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, min(jobs, len(todo)))) as pool:
        for done in pool.map(_precompile, todo):
            print(f"compiled {done}", flush=True)


def torch_scaled_mm(a8, b8, sa, sb, scaling, use_fast_accum=False):
    """A callable running torch._scaled_mm(a8, b8.T) with the same scales in the layouts it
    takes, or None where this torch (or its cuBLAS) refuses them."""
    if scaling == "tensor":
        scales = (sa.reshape(()), sb.reshape(()))
    elif scaling == "row":
        scales = (sa.reshape(-1, 1), sb.reshape(1, -1))
    else:
        # 1 x 128 (A): (M, K/128) outer-dim major; 128 x 128 (B): (K/128 padded to a multiple
        # of 4, N/128), K-major (cuBLAS's layouts)
        k_blocks = sb.shape[1]
        padded = torch.nn.functional.pad(sb, (0, -k_blocks % 4))
        scales = (sa.t().contiguous().t(), padded.t())

    def run():
        return torch._scaled_mm(a8, b8.t(), *scales, out_dtype=torch.bfloat16,
                                use_fast_accum=use_fast_accum)
    try:
        run()
    except (RuntimeError, TypeError, ValueError):
        return None
    return run


def rel_error(x, ref) -> float:
    return ((x.float() - ref).norm() / ref.norm()).item()


def run_case(M, N, K, scaling, fast, config, sets: int, rep_ms: float) -> dict:
    inputs = []
    for _ in range(sets):
        a8, sa = quantize(torch.randn(M, K, device="cuda"), scaling, "a")
        b8, sb = quantize(torch.randn(N, K, device="cuda"), scaling, "b")
        inputs.append((a8, b8, sa, sb))
    a8, b8, sa, sb = inputs[0]
    ref = dequantize(a8, sa, scaling, "a") @ dequantize(b8, sb, scaling, "b").T
    d = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    scaled_mm(a8, b8, sa, sb, torch.bfloat16, fast, out=d, config=config)
    torch.cuda.synchronize()
    assert not torch.isnan(d).any(), f"{M}x{N}x{K} {scaling}: outputs never written"
    err = rel_error(d, ref)
    assert err < 2e-2, f"{M}x{N}x{K} {scaling}: relative error {err:.2e}"
    outs = [torch.empty((M, N), device="cuda", dtype=torch.bfloat16) for _ in inputs]
    ours = [lambda i=i: scaled_mm(*inputs[i], torch.bfloat16, fast, out=outs[i], config=config)
            for i in range(sets)]
    theirs = [torch_scaled_mm(*x, scaling, fast) for x in inputs]
    row = dict(shape=f"{M}x{N}x{K}", scaling=scaling, accum="fast" if fast else "promoted",
               config=config or choose_config(M, N, K, scaling, fast), err=err,
               peer_err=rel_error(theirs[0](), ref) if theirs[0] else float("nan"))
    fns = [_rotate(ours)] + ([_rotate(theirs)] if theirs[0] else [])
    timings = do_bench_alternating(fns, rep_ms=rep_ms)
    flops = 2.0 * M * N * K
    row["ms"] = [t.median for t in timings] + [float("nan")] * (2 - len(timings))
    row["tflops"] = [flops / (ms * 1e-3) / 1e12 for ms in row["ms"]]
    return row


def _rotate(fns):
    """One callable taking the input sets in turn (each call a fresh set's data)."""
    state = {"i": 0}

    def call():
        fns[state["i"] % len(fns)]()
        state["i"] += 1
    return call


def markdown(env, rows, args) -> str:
    lines = heading("FP8 GEMM: tilemlir's scaled_mm vs torch._scaled_mm", env) + [
        f"- D = (scale_a . A) @ (scale_b . B)^T, e4m3 inputs (random normal, quantized per the "
        f"kind of scales), bf16 out; ours: tilemlir.kernels.scaled_mm (fp8_gemm; its "
        f"configuration in the last column); torch: `torch._scaled_mm(a, b.t(), ...)` with the "
        f"same scales and use_fast_accum; medians of CUDA-event timings (do_bench_alternating, "
        f"L2 flushed, {args.sets} input sets rotated); TFLOP/s = 2 M N K / t; rel. error: "
        f"Frobenius norm against the float32 product of the dequantized operands", "",
        "| M x N x K | scales | accumulation | ours TFLOP/s | torch TFLOP/s | vs torch | "
        "ours rel. err | torch rel. err | ours ms | torch ms | configuration |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios = {}
    for r in rows:
        (ours, theirs), (ms, peer_ms) = r["tflops"], r["ms"]
        ratio = peer_ms / ms
        if not math.isnan(ratio):
            ratios.setdefault((r["scaling"], r["accum"]), []).append(ratio)
        config = " ".join(f"{k}={v}" for k, v in r["config"].items())
        lines.append(f"| {r['shape']} | {r['scaling']} | {r['accum']} | {ours:.0f} | "
                     + ("n/a | n/a" if math.isnan(theirs) else f"{theirs:.0f} | {ratio:.2f}x")
                     + f" | {r['err']:.1e} | {r['peer_err']:.1e} | {ms:.3f} | {peer_ms:.3f} | "
                     f"{config} |")
    lines += ["", "| scales | accumulation | shapes | geometric mean vs torch |",
              "|---|---|---|---|"]
    for (scaling, accum), values in ratios.items():
        mean = math.exp(sum(math.log(v) for v in values) / len(values))
        lines.append(f"| {scaling} | {accum} | {len(values)} | {mean:.3f}x |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), type=lambda s: s.split(","))
    p.add_argument("--scalings", default=",".join(SCALINGS), type=lambda s: s.split(","))
    p.add_argument("--accum", default=",".join(ACCUMULATIONS), type=lambda s: s.split(","))
    p.add_argument("--config", default=None, help="fp8_gemm parameters for every case, e.g. "
                   "BM=128:BN=256:CLUSTER=0 (default: the front door's choice per shape)")
    p.add_argument("--sets", type=int, default=2, help="input sets rotated while timing")
    p.add_argument("--rep-ms", type=float, default=60.0)
    p.add_argument("--jobs", type=int, default=16, help="processes compiling in parallel")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    config = None
    if args.config:
        config = {k: int(v) if v.lstrip("-").isdigit() else v
                  for k, v in (item.split("=") for item in args.config.split(":"))}
        config = {k: bool(v) if k in ("CLUSTER", "PROMOTE", "OVERLAP_EPILOGUE") else v
                  for k, v in config.items()}
    runs = list(cases(args.shapes, args.scalings, args.accum))
    precompile(runs, config, args.jobs)
    rows = []
    for M, N, K, scaling, fast in runs:
        row = run_case(M, N, K, scaling, fast, config, args.sets, args.rep_ms)
        rows.append(row)
        (ours, theirs), (ms, peer_ms) = row["tflops"], row["ms"]
        print(f"{row['shape']:>17} {scaling:>6} {row['accum']:>8}: {ours:5.0f} TFLOP/s, torch "
              f"{theirs:5.0f} ({peer_ms / ms:.2f}x), err {row['err']:.1e} / "
              f"{row['peer_err']:.1e}", flush=True)
    publish(markdown(environment(), rows, args), args.out)


if __name__ == "__main__":
    main()
