"""The mid-size rows (issue 21: M 256-3072 by 256, (N, K) in {(4096, 4096), (8192, 2048)}) with
hgemm_v7's new tile widths beside the front door's choice and cuBLAS, in one process on the same
inputs: BN = 192 (4 or 5 stages) and BN = 320 (two wgmma n160 along N, 3 stages, with and without
the overlapped epilogue), 128 x 256 whole or with TAIL_SPLIT 2-4 (the fix-up now in 16-byte runs),
and v6 64 x 128. Each checked against fp32 (NaN-poisoned), then timed with
do_bench_alternating (3 input sets, L2 flushed by reads, 50 us spin, medians of 20).
Run from the tree's root: python results/2026-12-03-session9/midsize_tiles.py [f16|bf16|both]"""
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

V7 = dict(KERNEL="hgemm_v7", BM=128, GROUP_M=16)
CONFIGS = {
    "v7-256": dict(V7, BN=256, STAGES=4, EPI_N=128),
    "v7-256-t2": dict(V7, BN=256, STAGES=4, EPI_N=128, TAIL_SPLIT=2),
    "v7-256-t3": dict(V7, BN=256, STAGES=4, EPI_N=128, TAIL_SPLIT=3),
    "v7-256-t4": dict(V7, BN=256, STAGES=4, EPI_N=128, TAIL_SPLIT=4),
    "v7-192-s4": dict(V7, BN=192, STAGES=4, EPI_N=64),
    "v7-192-s5": dict(V7, BN=192, STAGES=5, EPI_N=64),
    "v7-320": dict(V7, BN=320, STAGES=3, EPI_N=64),
    "v7-320-noov": dict(V7, BN=320, STAGES=3, EPI_N=64, OVERLAP_EPILOGUE=False),
    "v6-64x128": dict(KERNEL="hgemm_v6", BM=64, BN=128, STAGES=8, EPI_N=128, GROUP_M=16),
}
SHAPES = [(m, n, k) for n, k in ((4096, 4096), (8192, 2048)) for m in range(256, 3072 + 1, 256)]
# MIDSIZE_SET=small (the environment, so that the compile workers see it too): 64 x 256 tiles
# (one consumer warpgroup, v6 alone or v7 in pairs) against 64 x 128 on shapes of few tile rows
if os.environ.get("MIDSIZE_SET") == "small":
    CONFIGS = {
        "v6-64x128": CONFIGS["v6-64x128"],
        "v6-64x128-g8": dict(CONFIGS["v6-64x128"], GROUP_M=8),
        "v6-64x256": dict(KERNEL="hgemm_v6", BM=64, BN=256, STAGES=5, EPI_N=128, GROUP_M=16),
        "v7-64x256": dict(V7, BM=64, BN=256, STAGES=5, EPI_N=128),
        "v7-64x128": dict(V7, BM=64, BN=128, STAGES=8, EPI_N=128),
        "v7-256": CONFIGS["v7-256"],
    }
    SHAPES = [(256, 4096, 4096), (512, 4096, 4096), (384, 4096, 4096), (256, 8192, 2048),
              (512, 8192, 2048), (384, 8192, 2048), (128, 8192, 8192), (192, 14336, 4096),
              (320, 4096, 11008), (448, 5120, 5120), (256, 28672, 4096), (512, 1024, 8192)]
# MIDSIZE_SET=stream: hgemm_v7 STREAM_K (the last waves' k-tiles in even runs) against the
# widths and TAIL_SPLIT, on the mid-size rows below 0.95x and the few-tile-row shapes
if os.environ.get("MIDSIZE_SET") == "stream":
    CONFIGS = {
        "v7-256-sk": dict(V7, BN=256, STAGES=4, EPI_N=128, STREAM_K=True),
        "v7-192-sk": dict(V7, BN=192, STAGES=4, EPI_N=64, STREAM_K=True),
        "v7-320-sk": dict(V7, BN=320, STAGES=3, EPI_N=64, STREAM_K=True),
        "v7-256-t2": CONFIGS["v7-256-t2"],
        "v7-192-s4": CONFIGS["v7-192-s4"],
        "v7-320": CONFIGS["v7-320"],
        "v6-64x128": CONFIGS["v6-64x128"],
    }
    SHAPES = [(512, 4096, 4096), (1280, 4096, 4096), (1792, 4096, 4096), (2816, 4096, 4096),
              (256, 8192, 2048), (1280, 8192, 2048), (1792, 8192, 2048), (2304, 8192, 2048),
              (448, 5120, 5120), (320, 4096, 11008), (384, 4096, 4096), (512, 1024, 8192)]
# MIDSIZE_SET=split: the same shapes with split-K (the fix-up in 16-byte runs since 10535ab)
if os.environ.get("MIDSIZE_SET") == "split":
    V6 = dict(KERNEL="hgemm_v6", BM=128, GROUP_M=8)
    CONFIGS = {
        "v6-64x128": CONFIGS["v6-64x128"],
        "v6-256-s2": dict(V6, BN=256, STAGES=4, EPI_N=128, SPLIT_K=2),
        "v6-256-s3": dict(V6, BN=256, STAGES=4, EPI_N=128, SPLIT_K=3),
        "v6-192-s2": dict(V6, BN=192, STAGES=4, EPI_N=64, SPLIT_K=2),
        "v6-192-s3": dict(V6, BN=192, STAGES=4, EPI_N=64, SPLIT_K=3),
        "v7-192-s2": dict(V7, BN=192, STAGES=4, EPI_N=64, SPLIT_K=2),
        "v8-s2": dict(KERNEL="hgemm_v8", BM=128, BN=256, STAGES=4, GROUP_M=8, SPLIT_K=2),
        "v8-s4": dict(KERNEL="hgemm_v8", BM=128, BN=256, STAGES=4, GROUP_M=8, SPLIT_K=4),
    }
    SHAPES = [(256, 4096, 4096), (512, 4096, 4096), (384, 4096, 4096), (256, 8192, 2048),
              (512, 8192, 2048), (384, 8192, 2048), (128, 8192, 8192), (192, 14336, 4096),
              (320, 4096, 11008), (448, 5120, 5120), (256, 28672, 4096), (512, 1024, 8192)]


def build(case):
    """Compiles one (shape, dtype, name) into the disk cache; returns the refusal, if any."""
    from tilemlir.kernels.gemm import Gemm
    (m, n, k), dtype, name = case
    try:
        Gemm(m, n, k, dtype, CONFIGS[name] if name else None).kernel
    except Exception as err:            # noqa: BLE001  a refusal is a row, not a stop
        return f"{type(err).__name__}: {str(err)[:120]}"
    return None


def main():
    import torch
    from tilemlir.kernels.gemm import Gemm
    from tilemlir.testing import do_bench_alternating
    which = sys.argv[1] if len(sys.argv) > 1 else "f16"
    dtypes = {"f16": ["float16"], "bf16": ["bfloat16"], "both": ["float16", "bfloat16"]}[which]
    cases = [(s, d, name) for s in SHAPES for d in dtypes for name in [None, *CONFIGS]]
    with ProcessPoolExecutor(15, mp_context=multiprocessing.get_context("spawn")) as pool:
        refused = dict(zip(cases, pool.map(build, cases, chunksize=4)))
    names = ["heuristic", *CONFIGS]
    print("| M x N x K | dtype | cuBLAS us | " + " | ".join(names) + " | best | heuristic config |")
    print("|---|---|---:|" + "---:|" * len(names) + "---|---|")
    for (m, n, k) in SHAPES:
        for dtype in dtypes:
            tdtype = getattr(torch, dtype)
            sets = [(torch.randn(m, k, device="cuda", dtype=tdtype),
                     torch.randn(n, k, device="cuda", dtype=tdtype),
                     torch.empty(m, n, device="cuda", dtype=tdtype)) for _ in range(3)]
            a, b, _ = sets[0]
            ref = a.float() @ b.float().T
            fns, labels, heuristic = [lambda a, b, d: torch.matmul(a, b.T, out=d)], ["cublas"], ""
            for name in [None, *CONFIGS]:
                if refused[((m, n, k), dtype, name)]:
                    continue
                g = Gemm(m, n, k, dtype, CONFIGS[name] if name else None)
                if name is None:
                    heuristic = ":".join(f"{x}={v}" for x, v in g.config.items()
                                         if x not in ("KERNEL", "BM", "GROUP_M"))
                d = g(a, b, out=torch.full((m, n), float("nan"), device="cuda", dtype=tdtype))
                err = ((d.float() - ref).norm() / ref.norm()).item()
                if not (err < 1e-2) or torch.isnan(d).any():
                    print(f"WRONG {m}x{n}x{k} {dtype} {name}: {err}", flush=True)
                    continue
                fns.append(lambda a, b, d, g=g: g(a, b, out=d))
                labels.append(name or "heuristic")
            times = [t.median * 1e3 for t in do_bench_alternating(
                fns, blocks=2, reps=20, warmup_ms=60, args=sets, spin_us=50, flush_l2="read")]
            us = dict(zip(labels, times))
            cublas = us["cublas"]
            best = min((x for x in labels if x != "cublas"), key=us.__getitem__)
            cells = [f"{cublas / us[x]:.3f}" if x in us else "-" for x in names]
            print(f"| {m}x{n}x{k} | {dtype} | {cublas:.1f} | " + " | ".join(cells)
                  + f" | {best} {cublas / us[best]:.3f} | {heuristic} |", flush=True)


if __name__ == "__main__":
    main()
