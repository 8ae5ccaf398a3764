"""Softmax, RMSNorm and LayerNorm over the last axis: tilemlir's front doors
(tilemlir/kernels/norms.py: softmax_rows, rms_norm_rows, layer_norm_rows, compiled for a
run-time M) against torch.softmax, torch.nn.functional.rms_norm / layer_norm and, as the
bandwidth reference, a device-to-device copy of the same bytes (read M x N, write M x N), in
the same process.

    python bench/norms.py --out results/norms.md
    python bench/norms.py --lengths 32000,50257 --dtypes bfloat16 --ops layer_norm
    python bench/norms.py --shapes 4096x4096,1000x8192 --ops softmax --per-thread 32,64
    python bench/norms.py --lengths 32000,128256 --clusters 1,2,4,8     # rows over clusters
    python bench/norms.py --lengths 50257,128256 --stage-kib 48,96,192 --stage-warps 8,16

By default each row length N of --lengths (1024, 4096, 32000, 50257, 128256) runs with
M = ceil(--elements / N) rows (2^26 elements: a 128 MiB tensor in 16 bits, well past the L2).
For each (op, shape, dtype): the output is checked first (NaN-poisoned, against torch in
float64), then tilemlir, torch and the copy are timed with tilemlir.testing.do_bench (CUDA
events, L2 flushed, median). GB/s counts the bytes that must move: the input read once and
the output written once (the norms' weight and bias, N elements each, are left out: they stay
in L2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
import tilemlir.lang as T  # noqa: E402
from bench.report import environment, heading, publish  # noqa: E402
from tilemlir.kernels import norms  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402

DEFAULT_LENGTHS = [1024, 4096, 32000, 50257, 128256]
DEFAULT_ELEMENTS = 1 << 26
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
EPS = {"rms_norm": 1e-6, "layer_norm": 1e-5}
# |ours - float64| <= ATOL + RTOL |reference| per element: RTOL is one unit in the last place of
# the output type (LayerNorm's w x + b reaches 10 and more, where a correctly rounded bfloat16
# is already 0.03 off), ATOL covers outputs near zero.
ATOL = {"float16": 4e-3, "bfloat16": 2e-2, "float32": 1e-5}
RTOL = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -20}


def reference(op, x, w, b):
    xd, N = x.double(), x.shape[-1]
    if op == "softmax":
        return torch.softmax(xd, dim=-1)
    if op == "rms_norm":
        return xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + EPS[op]) * w.double()
    return torch.nn.functional.layer_norm(xd, (N,), w.double(), b.double(), EPS[op])


def ours_and_peer(op, x, w, b, y, dtype, fast, per_thread, cluster=1, staging=None):
    """(tilemlir's call, torch's call) writing / returning op(x). per_thread or `staging`
    (row_plan's stage_bytes / stage_warps): the factory's kernel, else the front door."""
    N = x.shape[-1]
    F = torch.nn.functional
    peer = {"softmax": lambda: torch.softmax(x, dim=-1),
            "rms_norm": lambda: F.rms_norm(x, (N,), w, EPS["rms_norm"]),
            "layer_norm": lambda: F.layer_norm(x, (N,), w, b, EPS["layer_norm"])}[op]
    staging = staging or {}
    if per_thread is None and not staging:                      # the front door
        c = cluster
        ours = {"softmax": lambda: norms.softmax_rows(x, out=y, fast=fast, cluster=c),
                "rms_norm": lambda: norms.rms_norm_rows(x, w, EPS[op], out=y, cluster=c),
                "layer_norm": lambda: norms.layer_norm_rows(x, w, b, EPS[op], out=y,
                                                            cluster=c)}[op]
        return ours, peer
    options = {"fast": fast} if op == "softmax" else {"eps": EPS[op]}
    kernel = tilemlir.compile(getattr(norms, op)(T.dynamic("M"), N, dtype, per_thread=per_thread,
                                                 **staging, **options))
    args = {"softmax": (x, y), "rms_norm": (x, w, y), "layer_norm": (x, w, b, y)}[op]
    return (lambda: kernel(*args)), peer


def run_case(op, M, N, dtype, fast, rep_ms, per_thread=None, cluster=1, staging=None) -> dict:
    t = TORCH_DTYPES[dtype]
    x = (torch.randn(M, N, device="cuda") * (4.0 if op == "softmax" else 1.0)).to(t)
    w = (torch.rand(N, device="cuda") + 0.5).to(t)
    b = torch.randn(N, device="cuda").to(t)
    y = torch.full_like(x, float("nan"))
    ours, peer = ours_and_peer(op, x, w, b, y, dtype, fast, per_thread, cluster, staging)
    ours()
    torch.cuda.synchronize()
    assert not torch.isnan(y).any(), f"{op} {M}x{N} {dtype}: outputs never written"
    ref = reference(op, x, w, b)
    diff = (y.double() - ref).abs()
    err = diff.max().item()
    worst = (diff / (ATOL[dtype] + RTOL[dtype] * ref.abs())).max().item()
    assert worst <= 1.0, (f"{op} {M}x{N} {dtype}: max abs error {err:.3g}, {worst:.2f}x the "
                          f"tolerance")
    copy_dst = torch.empty_like(x)
    copy = lambda: copy_dst.copy_(x)                                       # noqa: E731
    nbytes = 2 * x.numel() * x.element_size()
    times = {name: do_bench(fn, rep_ms=rep_ms) for name, fn in
             (("tilemlir", ours), ("torch", peer), ("copy", copy))}
    gbps = {name: nbytes / (ms * 1e-3) / 1e9 for name, ms in times.items()}
    label = op + (" (fast exp)" if fast and op == "softmax" else "") + \
        (f" ({per_thread} per thread)" if per_thread is not None else "") + \
        (f" ({cluster} CTAs per row)" if cluster != 1 else "") + \
        "".join(f" ({k}={v})" for k, v in (staging or {}).items())
    return dict(op=label, shape=f"{M}x{N}",
                dtype=dtype, err=err, ms=times, gbps=gbps,
                of_copy=gbps["tilemlir"] / gbps["copy"], vs_torch=times["torch"] / times["tilemlir"])


def fits(op: str, N: int, dtype: str, cluster: int) -> bool:
    """Whether rows of N split over `cluster` CTAs (norms.cluster_plan)."""
    try:
        norms.cluster_plan(N, dtype, cluster, op=op)
        return True
    except ValueError:
        return False


def markdown(env: dict, rows: list[dict]) -> str:
    lines = heading("Softmax, RMSNorm and LayerNorm over the last axis: tilemlir vs torch, and "
                    "a D2D copy", env) + [
             "- GB/s = (input read + output written) / median time (tilemlir.testing.do_bench, "
             "L2 flushed); copy = `dst.copy_(x)` of the same tensor; tilemlir through the front "
             "doors (one kernel per N for every M)", "",
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


def shapes(args) -> list[tuple[int, int]]:
    if args.shapes:
        return [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes]
    return [(-(-args.elements // N), N) for N in args.lengths]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", default=",".join(norms.OPS), type=lambda s: s.split(","))
    p.add_argument("--lengths", default=DEFAULT_LENGTHS,
                   type=lambda s: [int(v) for v in s.split(",")],
                   help="row lengths N, each with M = ceil(ELEMENTS / N) rows")
    p.add_argument("--elements", type=int, default=DEFAULT_ELEMENTS)
    p.add_argument("--shapes", default=None, type=lambda s: s.split(","),
                   help="MxN,... instead of --lengths")
    p.add_argument("--dtypes", default="float16,bfloat16", type=lambda s: s.split(","))
    p.add_argument("--fast-exp", action="store_true", help="softmax with ex2.approx.ftz")
    p.add_argument("--per-thread", default=[None],
                   type=lambda s: [int(v) for v in s.split(",")],
                   help="elements per thread (rows in registers) or per thread and tile (long "
                        "rows), e.g. 16,32; default: the front doors' own choice")
    p.add_argument("--clusters", default=[1], type=lambda s: [int(v) for v in s.split(",")],
                   help="CTAs per row through the front doors' cluster= (e.g. 1,4,8; a "
                        "shape the split does not fit is skipped)")
    p.add_argument("--stage-kib", default=[None],
                   type=lambda s: [None] + [int(v) for v in s.split(",")],
                   help="long rows: also KiB of shared memory for staged tiles (row_plan's "
                        "stage_bytes), e.g. 0,48,96 (the default's row is kept)")
    p.add_argument("--stage-warps", default=[None],
                   type=lambda s: [None] + [int(v) for v in s.split(",")],
                   help="long rows: also warps per CTA (row_plan's stage_warps), e.g. 8")
    p.add_argument("--rep-ms", type=float, default=100.0)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    rows, wrong = [], []
    for op in args.ops:
        for M, N in shapes(args):
            for dtype in args.dtypes:
                for per_thread, cluster, kib, warps in (
                        (t, c, k, w) for t in args.per_thread for c in args.clusters
                        for k in args.stage_kib for w in args.stage_warps):
                    staging = {key: value for key, value in (("stage_bytes", kib),
                                                              ("stage_warps", warps))
                               if value is not None}
                    if "stage_bytes" in staging:
                        staging["stage_bytes"] *= 1024
                    if cluster != 1 and (per_thread is not None or staging
                                         or not fits(op, N, dtype, cluster)):
                        continue
                    if staging and N <= norms.REGISTER_ROW_MAX:
                        continue                    # rows in registers stage nothing
                    try:
                        row = run_case(op, M, N, dtype, args.fast_exp, args.rep_ms, per_thread,
                                       cluster, staging)
                    except AssertionError as err:      # the other cases still run
                        wrong.append(str(err))
                        print(f"WRONG: {err}", flush=True)
                        continue
                    rows.append(row)
                    print(f"{row['op']:>22} {row['shape']:>12} {dtype:>8}: "
                          f"{row['gbps']['tilemlir']:6.0f} GB/s ({row['of_copy']:.0%} of copy), "
                          f"{row['vs_torch']:.2f}x torch", flush=True)
    text = markdown(environment(), rows)
    if wrong:
        text += "\nWrong, not timed:\n" + "".join(f"- {w}\n" for w in wrong)
    publish(text, args.out)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
