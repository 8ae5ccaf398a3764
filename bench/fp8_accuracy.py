"""FP8 GEMM accuracy by kind of scales, on inputs with outliers: how far (scale_a . a8) @
(scale_b . b8)^T lands from the exact product of the unquantized inputs, for tensor, row and
block (1 x 128 / 128 x 128) scales, and what the kernel returns.

    python bench/fp8_accuracy.py --out results/2026-12-02-fp8/accuracy-cpu.md   # interpreter
    python bench/fp8_accuracy.py --gpu --out results/2026-12-02-fp8/accuracy-gpu.md

Inputs (A: M tokens x K channels, B: N x K weights), four families:
  normal      N(0, 1) entries;
  spread      rows of different magnitudes, as tokens and weight rows have: A's rows times
              exp(3 z), B's times exp(1.5 z), z ~ N(0, 1);
  channels    4 of A's K channels 100 times larger (LLM activation outliers);
  both        spread (exp(2 z)) and channels 1000 times larger.
Quantization: tilemlir.kernels.scaled_mm.quantize (e4m3, each scale the amax of what it covers
over 448). Errors: the relative Frobenius error of the whole product, and per output row (each
row's error over its norm: small rows count as much as large ones) the mean and the largest.

On the CPU the kernel runs in tilemlir.interpret, whose wgmma sums in float32 (the tensor
cores' own FP8 accumulation, with fewer bits, is not modelled): the table shows the
quantization error of each kind of scales, and that the kernel computes the dequantized product
(its bf16 output adds about 1e-3). On the GPU the same inputs go through scaled_mm (promoted,
and with use_fast_accum) and torch._scaled_mm with the same scales where it has them.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from tilemlir.kernels.scaled_mm import SCALINGS, dequantize, quantize  # noqa: E402

FAMILIES = ("normal", "spread", "channels", "both")


def inputs(M, N, K, family: str, seed: int = 0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    a, b = torch.randn(M, K, generator=g), torch.randn(N, K, generator=g)
    spread = {"spread": 3.0, "both": 2.0}.get(family, 0.0)
    a *= torch.exp(spread * torch.randn(M, 1, generator=g))
    b *= torch.exp(spread / 2 * torch.randn(N, 1, generator=g))
    if family in ("channels", "both"):
        a[:, torch.randperm(K, generator=g)[:4]] *= 100.0 if family == "channels" else 1000.0
    return a.to(device), b.to(device)


def errors(x, exact) -> tuple[float, float, float]:
    """(relative Frobenius error, mean and largest relative error of a row)."""
    diff = x.double() - exact
    rows = diff.norm(dim=1) / exact.norm(dim=1)
    return (diff.norm() / exact.norm()).item(), rows.mean().item(), rows.max().item()


def quantized(a, b, scaling):
    a8, sa = quantize(a, scaling, "a")
    b8, sb = quantize(b, scaling, "b")
    return a8, sa, b8, sb


def interpreted(a8, sa, b8, sb, scaling):
    """fp8_gemm in tilemlir.interpret, as a float32 tensor."""
    import tilemlir
    from tilemlir.kernels.fp8_gemm import fp8_gemm
    (M, K), N = a8.shape, b8.shape[0]
    d = np.zeros((M, N), np.uint16)
    tilemlir.interpret(fp8_gemm(M, N, K, scaling=scaling, SMS=8),
                       a8.view(torch.uint8).numpy(), b8.view(torch.uint8).numpy(),
                       sa.reshape(M, 1).numpy() if scaling == "row" else sa.numpy(),
                       sb.numpy(), d)
    return torch.from_numpy((d.astype(np.uint32) << 16).view(np.float32))


def cpu_table(M, N, K) -> list[str]:
    lines = [f"FP8 (e4m3) GEMM, {M} x {N} x {K}: errors against the exact product of the "
             f"unquantized inputs (relative Frobenius / mean per-row / largest per-row), of the "
             f"float32 product of the dequantized operands and of fp8_gemm (tilemlir.interpret, "
             f"bf16 out).", "",
             "| inputs | scales | dequantized product | fp8_gemm (interpreted) |",
             "|---|---|---|---|"]
    for family in FAMILIES:
        a, b = inputs(M, N, K, family)
        exact = a.double() @ b.double().T
        for scaling in SCALINGS:
            a8, sa, b8, sb = quantized(a, b, scaling)
            deq = dequantize(a8, sa, scaling, "a") @ dequantize(b8, sb, scaling, "b").T
            ours = interpreted(a8, sa, b8, sb, scaling)
            lines.append(f"| {family} | {scaling} | {_fmt(errors(deq, exact))} | "
                         f"{_fmt(errors(ours, exact))} |")
    return lines


def gpu_table(M, N, K) -> list[str]:
    from fp8_gemm import torch_scaled_mm
    from tilemlir.kernels.scaled_mm import scaled_mm
    lines = [f"FP8 (e4m3) GEMM on the GPU, {M} x {N} x {K}, bf16 out: errors against the "
             f"exact product of the unquantized inputs (relative Frobenius / mean per-row / "
             f"largest per-row).", "",
             "| inputs | scales | ours (promoted) | ours (use_fast_accum) | torch._scaled_mm | "
             "torch._scaled_mm (use_fast_accum) |", "|---|---|---|---|---|---|"]
    for family in FAMILIES:
        a, b = inputs(M, N, K, family, device="cuda")
        exact = a.double() @ b.double().T
        for scaling in SCALINGS:
            a8, sa, b8, sb = quantized(a, b, scaling)
            cells = [_fmt(errors(scaled_mm(a8, b8, sa, sb, torch.bfloat16, fast), exact))
                     for fast in (False, True)]
            for fast in (False, True):
                theirs = torch_scaled_mm(a8, b8, sa, sb, scaling, fast)
                cells.append(_fmt(errors(theirs(), exact)) if theirs else "n/a")
            lines.append(f"| {family} | {scaling} | " + " | ".join(cells) + " |")
    return lines


def _fmt(errs) -> str:
    return " / ".join(f"{e:.1e}" for e in errs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", action="store_true", help="run on the GPU (scaled_mm, torch)")
    parser.add_argument("--shape", type=int, nargs=3, default=None, metavar=("M", "N", "K"))
    parser.add_argument("--out", type=Path, default=None, help="write the table (markdown)")
    args = parser.parse_args()
    title = "FP8 GEMM accuracy by kind of scales"
    if args.gpu:
        from bench.report import environment, heading
        lines = heading(title, environment()) + [""] + \
            gpu_table(*(args.shape or (4096, 4096, 4096)))
    else:
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        lines = [f"# {title}", "", f"- date: {date}, on the CPU (tilemlir.interpret)",
                 f"- command: `python {' '.join(sys.argv)}`", ""] + \
            cpu_table(*(args.shape or (256, 256, 1024)))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
