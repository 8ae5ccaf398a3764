"""GEMM + bias + GELU: tilemlir's fused Hopper kernel (tilemlir/kernels/gemm_epilogue.py,
hgemm_fused) against torch doing the same in separate kernels, same process, same inputs.

    python bench/gemm_epilogue.py --out results/gemm-epilogue.md
    python bench/gemm_epilogue.py --shapes 8192x8192x8192 --dtypes bfloat16 --fast-math
    python bench/gemm_epilogue.py --activation gelu --residual

D = gelu(A @ B^T + bias) (approximate="tanh" by default), A M x K, B N x K, bias N, all in the
input type; fp32 accumulation and epilogue math. Peers, on the same tensors:
  - torch:  torch.nn.functional.gelu(torch.matmul(a, b.T) + bias, approximate="tanh")
            (cuBLAS, then torch's bias add and GELU kernels)
  - addmm:  torch.nn.functional.gelu(torch.addmm(bias, a, b.T), approximate="tanh")
            (cuBLAS with the bias in its epilogue, then GELU)
(with --residual, `+ residual` after the GELU for every one of them).
For every (shape, dtype): the fused kernel's output is checked first (NaN-poisoned, against
the float32 reference), then each is timed with tilemlir.testing.do_bench (CUDA events, L2
flushed before each call, median). TFLOP/s = 2 M N K / t (the epilogue's flops not counted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from bench.report import environment, heading, publish  # noqa: E402
from tilemlir.kernels.gemm_epilogue import hgemm_fused  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402

DEFAULT_SHAPES = ["8192x8192x8192", "4096x4096x4096"]
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
TORCH_APPROX = {"gelu_tanh": "tanh", "gelu": "none"}


def run_case(M, N, K, dtype, activation, residual, fast_math, rep_ms) -> dict:
    t = TORCH_DTYPES[dtype]
    approx = TORCH_APPROX[activation]
    a = (torch.randn(M, K, device="cuda") / K ** 0.25).to(t)
    b = (torch.randn(N, K, device="cuda") / K ** 0.25).to(t)
    bias = torch.randn(N, device="cuda").to(t)
    res = torch.randn(M, N, device="cuda").to(t) if residual else None
    d = torch.full((M, N), float("nan"), device="cuda", dtype=t)
    kernel = tilemlir.compile(hgemm_fused(M, N, K, dtype, activation=activation,
                                          residual=residual, fast_math=fast_math))
    args = [a, b, bias] + ([res] if residual else []) + [d]
    ours = lambda: kernel(*args)                                                    # noqa: E731

    def torch_matmul():
        y = F.gelu(torch.matmul(a, b.T) + bias, approximate=approx)
        return y + res if residual else y

    def torch_addmm():
        y = F.gelu(torch.addmm(bias, a, b.T), approximate=approx)
        return y + res if residual else y

    ours()
    torch.cuda.synchronize()
    assert not torch.isnan(d).any(), f"{M}x{N}x{K} {dtype}: outputs never written"
    ref = F.gelu(a.float() @ b.float().T + bias.float(), approximate=approx)
    if residual:
        ref = ref + res.float()
    err = ((d.float() - ref).norm() / ref.norm()).item()
    peer_err = ((torch_matmul().float() - ref).norm() / ref.norm()).item()
    assert err < 2e-2, f"{M}x{N}x{K} {dtype}: relative error {err:.2e}"
    # Two rounds in alternating order, each one's better median kept: the power-limited clock
    # drifts over a run, and no kernel should always come first or last.
    peers = (("tilemlir", ours), ("torch", torch_matmul), ("addmm", torch_addmm))
    times = {name: float("inf") for name, _ in peers}
    for _ in range(2):
        for name, fn in peers:
            times[name] = min(times[name], do_bench(fn, rep_ms=rep_ms))
    flops = 2.0 * M * N * K
    return dict(shape=f"{M}x{N}x{K}", dtype=dtype, err=err, peer_err=peer_err, ms=times,
                tflops={k: flops / (v * 1e-3) / 1e12 for k, v in times.items()})


def markdown(env: dict, rows: list[dict], args) -> str:
    act = f"gelu(approximate=\"{TORCH_APPROX[args.activation]}\")"
    what = f"{act}(A @ B^T + bias)" + (" + residual" if args.residual else "")
    lines = heading("GEMM + bias + GELU: tilemlir's fused kernel vs torch", env) + [
             f"- D = {what}; ours: hgemm_fused (hgemm_v7 with the epilogue on the fp32 "
             f"accumulator, fast_math={args.fast_math}); torch: `F.gelu(torch.matmul(a, b.T) + "
             f"bias)`; addmm: `F.gelu(torch.addmm(bias, a, b.T))`; median of CUDA-event "
             f"timings (tilemlir.testing.do_bench, L2 flushed, {args.rep_ms:.0f} ms per "
             f"kernel, two rounds in turn, each one's better kept); TFLOP/s = "
             f"2 M N K / t; rel. error: Frobenius norm against the float32 reference", "",
             "| M x N x K | dtype | ours ms | torch ms | addmm ms | ours TFLOP/s | "
             "torch TFLOP/s | addmm TFLOP/s | vs torch | vs addmm | ours rel. err | "
             "torch rel. err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ms, tf = r["ms"], r["tflops"]
        lines.append(f"| {r['shape']} | {r['dtype']} | {ms['tilemlir']:.3f} | {ms['torch']:.3f} | "
                     f"{ms['addmm']:.3f} | {tf['tilemlir']:.0f} | {tf['torch']:.0f} | "
                     f"{tf['addmm']:.0f} | {ms['torch'] / ms['tilemlir']:.2f}x | "
                     f"{ms['addmm'] / ms['tilemlir']:.2f}x | {r['err']:.1e} | "
                     f"{r['peer_err']:.1e} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default=",".join(DEFAULT_SHAPES), type=lambda s: s.split(","))
    p.add_argument("--dtypes", default="float16,bfloat16", type=lambda s: s.split(","))
    p.add_argument("--activation", default="gelu_tanh", choices=sorted(TORCH_APPROX))
    p.add_argument("--residual", action="store_true", help="add a residual after the GELU")
    p.add_argument("--fast-math", action="store_true", help="tanh.approx / ex2.approx in GELU")
    p.add_argument("--rep-ms", type=float, default=200.0)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    rows = []
    for shape in args.shapes:
        M, N, K = (int(v) for v in shape.lower().split("x"))
        for dtype in args.dtypes:
            row = run_case(M, N, K, dtype, args.activation, args.residual, args.fast_math,
                           args.rep_ms)
            rows.append(row)
            print(f"{row['shape']:>15} {dtype:>8}: {row['tflops']['tilemlir']:5.0f} TFLOP/s, "
                  f"{row['ms']['torch'] / row['ms']['tilemlir']:.2f}x torch, "
                  f"{row['ms']['addmm'] / row['ms']['tilemlir']:.2f}x addmm", flush=True)
    text = markdown(environment(), rows, args)
    publish(text, args.out)


if __name__ == "__main__":
    main()
