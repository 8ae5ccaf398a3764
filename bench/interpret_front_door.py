"""The GEMM front door at random shapes in the CPU interpreter (tilemlir.interpret), against
numpy: no GPU needed.

    python bench/interpret_front_door.py --count 400 --seed 8 --out results/interpret-gemm.md

Each case draws M, N and K from 1..400 (half of them from 1..70: decode's swap-AB, one k-tile,
masked edges), with no alignment (cp.async producers, direct stores, split-K), takes the front
door's own configuration for the shape with 2 to 4 persistent workers (so that CTAs take
several units and the stage rings wrap), builds the kernel as the front door compiles it (for a
run-time M), runs it on NaN-poisoned output and compares with numpy in float32 (relative
Frobenius error below 1e-2, every element written). test_reference_interpreter.py runs 24 of
these in CI.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from tilemlir.reference.memory import bf16_bits  # noqa: E402


def cases(count: int, seed: int) -> list[tuple[int, int, int, str, int]]:
    """(M, N, K, dtype, SMS) at random, the dtypes in turn."""
    rng = np.random.default_rng(seed)
    return [(*(int(rng.choice([rng.integers(1, 71), rng.integers(1, 401)])) for _ in range(3)),
             ("float16", "bfloat16")[i % 2], int(rng.integers(2, 5))) for i in range(count)]


def run_case(M: int, N: int, K: int, dtype: str, SMS: int):
    """(ours, numpy's, configuration) of one case, both float32 arrays."""
    from tilemlir.ir.kernel_abi import evaluate_extent
    from tilemlir.kernels.gemm import Gemm, choose_config
    config = dict(choose_config(M, N, K, dtype, target="sm_90a"))
    config["SMS"] = SMS if config["KERNEL"] != "hgemm_v7" else 2 * SMS      # v7: pairs
    kernel = Gemm(M, N, K, dtype, config, target="sm_90a").factory_kernel
    rng = np.random.default_rng(M * N * K)
    a, b = rng.standard_normal((M, K)), rng.standard_normal((N, K))
    if dtype == "bfloat16":
        A, B, D = bf16_bits(a), bf16_bits(b), np.full((M, N), 0x7FC0, np.uint16)  # NaN bits
        widen = lambda x: (x.astype(np.uint32) << 16).view(np.float32)      # noqa: E731
    else:
        A, B, D = a.astype(np.float16), b.astype(np.float16), np.full((M, N), np.nan, np.float16)
        widen = lambda x: x.astype(np.float32)                              # noqa: E731
    extra = []
    if config.get("SPLIT_K", 1) > 1:          # the workspace and counters, as the door sizes them
        for p in tilemlir.compile(kernel, target="sm_90a").signature.params[3:]:
            shape = (evaluate_extent(p.leading, {"M": M}), *p.shape[1:]) if p.leading \
                else p.shape
            extra.append(np.zeros(shape, np.float32 if p.dtype == "f32" else np.int32))
    tilemlir.interpret(kernel, A, B, D, *extra)
    return widen(D), widen(A) @ widen(B).T, config


def problem(got: np.ndarray, ref: np.ndarray) -> str | None:
    """Why `got` is wrong, or None."""
    unwritten = int(np.isnan(got).sum())
    if unwritten:
        return f"{unwritten} outputs unwritten"
    err = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30))
    return None if err < 1e-2 else f"relative error {err:.2e}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    start, wrong, kernels = time.perf_counter(), [], {}
    todo = cases(args.count, args.seed)
    for M, N, K, dtype, sms in todo:
        try:
            got, ref, config = run_case(M, N, K, dtype, sms)
            why = problem(got, ref)
            kernels[config["KERNEL"]] = kernels.get(config["KERNEL"], 0) + 1
        except Exception as err:  # one case must not hide the others
            config, why = {}, f"{type(err).__name__}: {err}"[:300]
        if why:
            wrong.append(f"- {M}x{N}x{K} {dtype} SMS={sms} {config}: {why}")
            print(wrong[-1], flush=True)
    seconds = time.perf_counter() - start
    text = "\n".join([
        "# The GEMM front door at random shapes in the CPU interpreter", "",
        f"- command: `python {' '.join(sys.argv)}`",
        f"- {len(todo)} cases (seed {args.seed}), {len(todo) - len(wrong)} correct, "
        f"{len(wrong)} wrong or failed, {seconds:.0f} s",
        f"- kernels chosen: {', '.join(f'{k} {n}' for k, n in sorted(kernels.items()))}",
        *([""] + wrong if wrong else [])]) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
