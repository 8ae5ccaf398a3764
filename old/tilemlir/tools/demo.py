"""tilemlir-demo: the main job. Compiles the seed-001 demo (one warp, one mma.sync; the kernel
language version shipped in the package, tilemlir.kernels.mma_demo) for each target, assembles
the PTX with ptxas where one is installed, and runs it when a GPU is present.

Exit status 0 when every step that could run passed.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import tilemlir
from tilemlir.kernels.mma_demo import gemm_16x8x16
from tilemlir.runtime.cuda import _driver_problem, device_chip
from tilemlir.target.ptx import PtxasError, assemble, find_ptxas

CHIPS = ("sm_80", "sm_90a", "sm_100a")


def main() -> None:
    ok = True
    ptxas = find_ptxas()
    for chip in CHIPS:
        start = time.perf_counter()
        kernel = tilemlir.compile(gemm_16x8x16, target=chip, cache=False)
        ms = (time.perf_counter() - start) * 1e3
        count = kernel.ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
        line = f"{chip:8s} kernel -> tile IR -> PTX in {ms:6.1f} ms, {count} mma.sync"
        if ptxas:
            try:
                assemble(kernel.ptx, chip)
                line += ", ptxas OK"
            except PtxasError as err:
                line += f", ptxas FAILED: {err}"
                ok = False
        print(line)
        ok &= count == 1
    if not ptxas:
        print("ptxas not found: PTX not assembled")
    problem = _driver_problem()
    if problem:
        print(f"no run: {problem}")
    else:
        chip = device_chip()
        kernel = tilemlir.compile(gemm_16x8x16, target=chip)
        rng = np.random.default_rng(0)
        a = rng.standard_normal((16, 16)).astype(np.float16)
        b = rng.standard_normal((16, 8)).astype(np.float16)
        d = np.full((16, 8), np.nan, np.float32)
        kernel(a, b, d)
        ref = a.astype(np.float32) @ b.astype(np.float32)
        err = float(np.linalg.norm(d - ref) / np.linalg.norm(ref))
        passed = not np.isnan(d).any() and err < 1e-5
        print(f"ran on {chip}: relative error {err:.2e} vs float32 numpy: "
              f"{'PASS' if passed else 'FAIL'}")
        ok &= passed
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
