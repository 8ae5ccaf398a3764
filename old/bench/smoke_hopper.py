"""Quick GPU check of the Hopper kernels: one launch per case, compared with torch.

    python bench/smoke_hopper.py            # a few shapes, with timings
    python bench/smoke_hopper.py --small    # tiny shapes, for compute-sanitizer (no timings)
    python bench/smoke_hopper.py --small --kernel hgemm_v7    # one kernel's cases only

Exits 1 if any output is wrong or unwritten. Timings: tilemlir.testing.do_bench (median of
CUDA-event timings, L2 flushed, each call behind a 50 us GPU spin), only after a correct output;
--small times nothing, so that compute-sanitizer sees one launch per case."""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from tilemlir.kernels.hgemm_hopper import (hgemm_v4, hgemm_v5, hgemm_v6, hgemm_v7,  # noqa: E402
                                           hgemm_v8)
from tilemlir.testing import do_bench  # noqa: E402

CASES = [(hgemm_v7, (384, 768, 320), {}), (hgemm_v7, (1000, 1000, 512), {}),
         (hgemm_v6, (128, 256, 64), {}), (hgemm_v6, (1000, 1000, 1000), {}),
         (hgemm_v5, (1024, 1024, 1024), {}), (hgemm_v4, (1024, 1024, 1024), {})]
SMALL = [(hgemm_v4, (128, 256, 256), {}), (hgemm_v5, (128, 256, 256), {}),
         (hgemm_v6, (200, 136, 200), dict(BM=64, BN=128, SMS=2)),   # ragged, ring wraps
         (hgemm_v6, (256, 256, 128), dict(SMS=1)),
         (hgemm_v7, (384, 256, 128), dict(SMS=2)),      # one cluster: 2 pairs, odd tile rows
         (hgemm_v7, (136, 200, 72), dict(BM=64, BN=128, SMS=2)),    # ragged, ring wraps
         (hgemm_v7, (384, 256, 128), dict(SMS=2, CLUSTER_RELEASE=True)),
         (hgemm_v6, (200, 136, 512), dict(BM=64, BN=128, SMS=3, SPLIT_K=3)),  # split-K fix-up
         (hgemm_v7, (384, 256, 512), dict(SMS=2, SPLIT_K=2)),   # per-pair split-K, odd pair
         (hgemm_v7, (384, 768, 320), dict(SMS=8, TAIL_SPLIT=2)),    # last wave split, odd pair
         (hgemm_v7, (200, 520, 64), dict(SMS=2)),       # 3 tiles per CTA, one k-tile each
         (hgemm_v8, (200, 296, 512), dict(SPLIT_K=4)),  # two clusters a tile, a half past N
         (hgemm_v8, (200, 296, 512), dict(SPLIT_K=2)),  # one cluster a tile
         (hgemm_v8, (136, 200, 200), dict(BM=64, BN=128, SPLIT_K=4))]   # ragged K


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--small", action="store_true")
    p.add_argument("--kernel", action="append",
                   help="only this kernel's cases (e.g. hgemm_v7); repeatable")
    args = p.parse_args()
    small = args.small
    cases = [c for c in (SMALL if small else CASES)
             if not args.kernel or c[0].__name__ in args.kernel]
    if not cases:
        p.error(f"--kernel: no case runs {args.kernel}")
    failed = 0
    for factory, (m, n, k), config in cases:
        kernel = tilemlir.compile(factory(m, n, k, **config))
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16)
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        # split-K's workspace and counters (zero; the kernel leaves them zero)
        extra = [torch.empty(p.shape, device="cuda", dtype=torch.float32) if p.dtype == "f32"
                 else torch.zeros(p.shape, device="cuda", dtype=torch.int32)
                 for p in kernel.signature.params[3:]]
        kernel(a, b, d, *extra)
        torch.cuda.synchronize()
        ref = a.float() @ b.float().T
        err = ((d.float() - ref).norm() / ref.norm()).item()
        nan = int(torch.isnan(d).sum())
        ok = nan == 0 and err < 1e-2
        failed += not ok
        timed = ""
        if ok and not small:
            ms = do_bench(lambda: kernel(a, b, d, *extra), spin_us=50)
            timed = f", {ms * 1e3:.1f} us ({2 * m * n * k / ms / 1e9:.0f} TFLOP/s)"
        print(f"{factory.__name__} {m}x{n}x{k} {config}: rel err {err:.2e}, unwritten {nan}"
              f"{timed}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
