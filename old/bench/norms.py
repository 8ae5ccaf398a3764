"""Softmax and RMSNorm over the last axis: tilemlir's kernels (tilemlir/kernels/norms.py)
against torch.softmax, torch.nn.functional.rms_norm and, as the bandwidth reference, a
device-to-device copy of the same bytes (read M x N, write M x N), in the same process.

    python bench/norms.py --out results/norms.md
    python bench/norms.py --shapes 4096x4096,8192x16384 --dtypes bfloat16 --ops softmax

For each (op, shape, dtype): the kernel's output is checked first (NaN-poisoned, against torch
in float64), then tilemlir, torch and the copy are timed with tilemlir.testing.do_bench (CUDA
events, L2 flushed, median). GB/s counts the bytes that must move: the input read once and the
output written once (RMSNorm's weight, N elements, is left out: it stays in L2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from bench.report import environment, heading, publish  # noqa: E402
from tilemlir.kernels.norms import rms_norm, softmax  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402

DEFAULT_SHAPES = ["4096x4096", "8192x8192", "4096x16384", "16384x8192", "1000x8192"]
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
EPS = 1e-6


def reference(op, x, w):
    xd = x.double()
    if op == "softmax":
        return torch.softmax(xd, dim=-1)
    return xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + EPS) * w.double()


def run_case(op, M, N, dtype, fast, rep_ms, per_thread=None) -> dict:
    t = TORCH_DTYPES[dtype]
    x = torch.randn(M, N, device="cuda").to(t)
    w = (torch.rand(N, device="cuda") + 0.5).to(t)
    y = torch.full_like(x, float("nan"))
    tiling = {} if per_thread is None else {"per_thread": per_thread}     # None: the kernel's
    if op == "softmax":
        kernel = tilemlir.compile(softmax(M, N, dtype, fast=fast, **tiling))
        ours = lambda: kernel(x, y)                                       # noqa: E731
        peer = lambda: torch.softmax(x, dim=-1)                           # noqa: E731
    else:
        kernel = tilemlir.compile(rms_norm(M, N, dtype, eps=EPS, **tiling))
        ours = lambda: kernel(x, w, y)                                    # noqa: E731
        peer = lambda: torch.nn.functional.rms_norm(x, (N,), w, EPS)      # noqa: E731
    ours()
    torch.cuda.synchronize()
    assert not torch.isnan(y).any(), f"{op} {M}x{N} {dtype}: outputs never written"
    err = ((y.double() - reference(op, x, w)).abs().max()).item()
    assert err < (2e-2 if dtype == "bfloat16" else 4e-3), f"{op} {M}x{N} {dtype}: max error {err}"
    copy_dst = torch.empty_like(x)
    copy = lambda: copy_dst.copy_(x)                                       # noqa: E731
    nbytes = 2 * x.numel() * x.element_size()
    times = {name: do_bench(fn, rep_ms=rep_ms) for name, fn in
             (("tilemlir", ours), ("torch", peer), ("copy", copy))}
    gbps = {name: nbytes / (ms * 1e-3) / 1e9 for name, ms in times.items()}
    label = op + (" (fast exp)" if fast and op == "softmax" else "") + \
        (f" ({per_thread} per thread)" if per_thread is not None else "")
    return dict(op=label, shape=f"{M}x{N}",
                dtype=dtype, err=err, ms=times, gbps=gbps,
                of_copy=gbps["tilemlir"] / gbps["copy"], vs_torch=times["torch"] / times["tilemlir"])


def markdown(env: dict, rows: list[dict]) -> str:
    lines = heading("Softmax and RMSNorm over the last axis: tilemlir vs torch, and a D2D copy",
                    env) + [
             "- GB/s = (input read + output written) / median time (tilemlir.testing.do_bench, "
             "L2 flushed); copy = `dst.copy_(x)` of the same tensor", "",
             "| op | M x N | dtype | tilemlir ms | torch ms | copy ms | tilemlir GB/s | "
             "torch GB/s | copy GB/s | tilemlir / copy | speed-up vs torch | max abs err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ms, gb = r["ms"], r["gbps"]
        lines.append(f"| {r['op']} | {r['shape']} | {r['dtype']} | {ms['tilemlir']:.4f} | "
                     f"{ms['torch']:.4f} | {ms['copy']:.4f} | {gb['tilemlir']:.0f} | "
                     f"{gb['torch']:.0f} | {gb['copy']:.0f} | {r['of_copy']:.0%} | "
                     f"{r['vs_torch']:.2f}x | {r['err']:.1e} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", default="softmax,rms_norm", type=lambda s: s.split(","))
    p.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), type=lambda s: s.split(","))
    p.add_argument("--dtypes", default="float16,bfloat16", type=lambda s: s.split(","))
    p.add_argument("--fast-exp", action="store_true", help="softmax with ex2.approx.ftz")
    p.add_argument("--per-thread", default=[None],
                   type=lambda s: [int(v) for v in s.split(",")],
                   help="elements per thread (the CTA's width follows), e.g. 32,64; default: "
                        "each kernel's own choice")
    p.add_argument("--rep-ms", type=float, default=100.0)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    rows = []
    for op in args.ops:
        for shape in args.shapes:
            M, N = (int(v) for v in shape.lower().split("x"))
            for dtype in args.dtypes:
                for per_thread in args.per_thread:
                    row = run_case(op, M, N, dtype, args.fast_exp, args.rep_ms, per_thread)
                    rows.append(row)
                    print(f"{row['op']:>22} {row['shape']:>11} {dtype:>8}: "
                          f"{row['gbps']['tilemlir']:6.0f} GB/s ({row['of_copy']:.0%} of copy), "
                          f"{row['vs_torch']:.2f}x torch", flush=True)
    text = markdown(environment(), rows)
    publish(text, args.out)


if __name__ == "__main__":
    main()
