"""The GEMM front door on the shapes real models have, against cuBLAS and Triton in one run.

    python bench/gemm_shapes.py --suite random --count 300 --out results/gemm-random.md
    python bench/gemm_shapes.py --suite decode --out results/gemm-decode.md
    python bench/gemm_shapes.py --suite unaligned,midsize --out results/gemm-shapes.md

Suites (float16 and bfloat16 unless --dtypes says otherwise):
  random     --count shapes, M, N and K each drawn from 1..8192 with no alignment (half of the
             draws uniform, half log-uniform, so that decode-sized and K < 64 extents are
             common), seeded by --seed: every one checked, every one timed briefly
  decode     M in {1, 2, 4, 8, 16, 32, 64} x (N, K) in {(4096, 4096), (14336, 4096),
             (4096, 14336), (128256, 4096)}: also the bandwidth of reading B against a device
             copy measured in the same run
  unaligned  ten shapes with N or K not a multiple of 8 (3333x4444x5552 among them)
  midsize    M from 256 to 3072 by 256, (N, K) in {(4096, 4096), (8192, 2048)}
  aligned    the 10 shapes of bench/gemm.py
  given      the shapes of --shapes MxNxK,MxNxK,... (a list to look at closer)

Every case: the front door's own choice (hgemm), its output NaN-poisoned and checked against a
float32 reference on fresh random-normal inputs by bench/gemm.py's check (relative Frobenius
error below --tolerance, every element written); then ours, torch.matmul (cuBLAS) and the
masked Triton kernel of bench/triton_matmul.py timed on the same inputs by
tilemlir.testing.do_bench_alternating (input sets rotated, L2 flushed before each timed
launch, a GPU spin before each so the events time kernels). The random suite times Triton in
one fixed configuration (128x128x64 tiles, 4 stages, 8 warps): autotuning hundreds of shapes
would take longer than the sweep. --candidates N also times the first N of candidate_configs
of each case (what tuned_hgemm chooses from) and reports the best beside the heuristic's.

The configurations are compiled ahead of the cases, side by side in --workers processes, into
the disk cache (TILEMLIR_CACHE_DIR), and each case runs once its compile is done, hitting the
cache (--compile-first: once every compile is done, so that none runs beside a timing). The results file is rewritten after every case, so a run cut short keeps its rows; a
case that takes longer than --case-timeout is written down as hung and the run exits (3).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing
import os
import random
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

DECODE_M = (1, 2, 4, 8, 16, 32, 64)
DECODE_NK = ((4096, 4096), (14336, 4096), (4096, 14336), (128256, 4096))
UNALIGNED = [(3333, 4444, 5552), (2999, 8193, 769), (1785, 4444, 4095), (1000, 3000, 1001),
             (4096, 4097, 4096), (8192, 1785, 4099), (777, 11007, 4096), (4096, 4096, 4100),
             (2048, 50257, 1024), (1000, 3, 128)]
MIDSIZE = [(m, n, k) for n, k in ((4096, 4096), (8192, 2048)) for m in range(256, 3073, 256)]
ALIGNED = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (4096, 4096, 512),
           (16384, 1024, 4096), (4096, 28672, 4096), (4096, 4096, 14336), (4000, 4000, 4000),
           (3000, 5120, 2056), (1000, 1000, 8192)]
SUITES = ("random", "decode", "unaligned", "midsize", "aligned", "given")


def random_shapes(count: int, seed: int) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)

    def extent() -> int:
        if rng.random() < 0.5:
            return rng.randint(1, 8192)
        return min(8192, int(math.exp(rng.uniform(0.0, math.log(8192.0)))))
    return [(extent(), extent(), extent()) for _ in range(count)]


def cases(args) -> list[tuple[str, tuple[int, int, int], str]]:
    """(suite, (M, N, K), dtype) of every case, in the order they run."""
    out = []
    for suite in args.suite:
        shapes = {"random": lambda: random_shapes(args.count, args.seed),
                  "decode": lambda: [(m, n, k) for n, k in DECODE_NK for m in DECODE_M],
                  "unaligned": lambda: UNALIGNED, "midsize": lambda: MIDSIZE,
                  "aligned": lambda: ALIGNED, "given": lambda: args.shapes}[suite]()
        out += [(suite, shape, dtype) for shape in shapes for dtype in args.dtypes]
    return out


def compile_case(case, candidates: int = 0) -> str:
    """Compiles the front door's kernel for one shape, and its first `candidates` candidate
    configurations, into the disk cache (a worker process); '' or the refusal."""
    _, (m, n, k), dtype = case
    try:
        from tilemlir.kernels.gemm import Gemm, hgemm
        hgemm(m, n, k, dtype).kernel
        for config in candidates_of(m, n, k, candidates):
            Gemm(m, n, k, dtype, config).kernel
        return ""
    except Exception as err:  # reported again, and counted, by the timed process
        return f"{type(err).__name__}: {err}"


def label(config: dict) -> str:
    """A configuration in a few characters: v7 128x256 s2 t3 g16 sms96 cp pad direct."""
    kernel = config.get("KERNEL", "hgemm_v6").replace("hgemm_", "")
    if kernel == "decode":
        text = f"decode BN{config['BN']} s{config.get('SPLIT_K', 1)}"
        if config.get("SWAP"):
            text += " swap"
    else:
        text = f"{kernel} {config['BM']}x{config['BN']} s{config.get('SPLIT_K', 1)}"
        if config.get("TAIL_SPLIT", 1) > 1:
            text += f" t{config['TAIL_SPLIT']}"
        text += f" g{config.get('GROUP_M', 8)}"
        if "SMS" in config:
            text += f" sms{config['SMS']}"
    for key, short in (("PRODUCER", "cp"), ("PAD_K", "pad"), ("EPILOGUE", "direct")):
        if config.get(key):
            text += f" {short}"
    return text


def candidates_of(m: int, n: int, k: int, count: int) -> list[dict]:
    """The first `count` of candidate_configs (what tuned_hgemm would time)."""
    from tilemlir.kernels.gemm import candidate_configs
    return candidate_configs(m, n, k)[:count] if count else []


def copy_bandwidth(torch, do_bench) -> float:
    """GB/s of a device-to-device copy of 1 GiB (bytes read + bytes written)."""
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    t = do_bench([lambda: dst.copy_(src)], blocks=2, reps=20, warmup_ms=50)[0].median
    return 2 * src.numel() / t / 1e6


def run_case(case, args, torch, do_bench, triton_fixed, triton_tuned, copy_gbs) -> dict:
    suite, (m, n, k), dtype_name = case
    from tilemlir.kernels.gemm import hgemm
    from bench.gemm import check, operands
    row = dict(suite=suite, shape=f"{m}x{n}x{k}", dtype=dtype_name)
    gemm = hgemm(m, n, k, dtype_name)
    row["config"] = ":".join(f"{key}={value}" for key, value in gemm.config.items())
    try:                                     # fresh inputs, NaN-poisoned output, float32 ref
        row["rel_err"] = check(gemm, m, n, k, getattr(torch, dtype_name), args.tolerance)
    except AssertionError as err:
        row["wrong"] = str(err)
        return row
    if args.no_timing:
        return row
    triton = triton_fixed if suite == "random" else triton_tuned
    sets = [operands(m, n, k, dtype_name) for _ in range(args.sets)]
    triton(*sets[0])                                         # autotune outside the timings
    fns = [lambda a, b, d: gemm(a, b, out=d), lambda a, b, d: torch.matmul(a, b.T, out=d),
           triton]
    reps, warmup = (args.random_reps, args.random_warmup_ms) if suite == "random" else \
        (args.reps, args.warmup_ms)
    ours, cublas, tri = (t.median for t in do_bench(fns, blocks=2, reps=reps,
                                                      warmup_ms=warmup, args=sets,
                                                      spin_us=args.spin_us,
                                                      flush_l2=args.flush))
    flops = 2.0 * m * n * k
    row.update(ours_tflops=flops / ours / 1e9, cublas_tflops=flops / cublas / 1e9,
               triton_tflops=flops / tri / 1e9, vs_cublas=cublas / ours, vs_triton=tri / ours,
               ours_us=ours * 1e3)
    if args.candidates:                  # what tuning would find, timed beside cuBLAS again
        from tilemlir.kernels.gemm import Gemm
        configs = candidates_of(m, n, k, args.candidates)
        gemms = [Gemm(m, n, k, dtype_name, c) for c in configs]
        fns = [lambda a, b, d, g=g: g(a, b, out=d) for g in gemms]
        times = [t.median for t in do_bench(fns + [lambda a, b, d: torch.matmul(a, b.T, out=d)],
                                            blocks=2, reps=reps, warmup_ms=warmup, args=sets,
                                            spin_us=args.spin_us, flush_l2=args.flush)]
        best = min(range(len(configs)), key=times.__getitem__)
        row["candidates"] = [(label(c), times[i] / times[best]) for i, c in enumerate(configs)]
        row.update(best_vs_cublas=times[-1] / times[best], best_rank=best,
                   heuristic_of_best=times[best] / times[configs.index(gemm.config)]
                   if gemm.config in configs else float("nan"),
                   best_config=":".join(f"{key}={value}" for key, value in configs[best].items()))
    if suite == "decode":
        b_bytes = n * k * sets[0][1].element_size()
        row.update(b_gbs=b_bytes / ours / 1e6, cublas_b_gbs=b_bytes / cublas / 1e6)
        row["of_copy"] = row["b_gbs"] / copy_gbs
        if args.candidates:
            row["best_of_copy"] = row["of_copy"] * row["best_vs_cublas"] / row["vs_cublas"]
    return row


def geomean(xs) -> float:
    xs = list(xs)
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summary(rows: list[dict], total: int, copy_gbs: float | None) -> list[str]:
    lines = []
    for suite in SUITES:
        mine = [r for r in rows if r["suite"] == suite]
        if not mine:
            continue
        timed = [r for r in mine if "vs_cublas" in r]
        bad = [r for r in mine if "wrong" in r or "refused" in r or "error" in r]
        line = (f"- **{suite}**: {len(mine)} cases, {len(mine) - len(bad)} correct, "
                f"{sum('refused' in r for r in mine)} refused, {sum('wrong' in r for r in mine)} "
                f"wrong, {sum('error' in r for r in mine)} failed")
        if timed:
            line += (f"; geometric mean {geomean(r['vs_cublas'] for r in timed):.3f}x cuBLAS "
                     f"(lowest {min(r['vs_cublas'] for r in timed):.3f}x), "
                     f"{geomean(r['vs_triton'] for r in timed):.3f}x Triton (lowest "
                     f"{min(r['vs_triton'] for r in timed):.3f}x)")
        tuned = [r for r in timed if "best_vs_cublas" in r]
        if tuned:
            best = [r["best_vs_cublas"] for r in tuned]
            line += (f"; the best of the candidates timed: {geomean(best):.3f}x cuBLAS "
                     f"(lowest {min(best):.3f}x)")
        if suite == "decode" and timed and copy_gbs:
            line += (f"; B read at {min(r['of_copy'] for r in timed):.0%} to "
                     f"{max(r['of_copy'] for r in timed):.0%} of the copy's {copy_gbs:.0f} GB/s")
        lines.append(line)
    if len(rows) < total:
        lines.append(f"- cut short: {len(rows)} of {total} cases ran")
    return lines


def write(path: Path | None, env: dict, args, rows: list[dict], total: int,
          copy_gbs: float | None) -> None:
    if path is None:
        return
    from bench.report import heading
    lines = heading("The GEMM front door on general shapes, against cuBLAS and Triton", env)
    if args.no_timing:
        lines.append("- timing: none (--no-timing): every case checked, none timed")
    lines += [
              f"- suites: {', '.join(args.suite)}; dtypes {', '.join(args.dtypes)}; random: "
              f"{args.count} shapes, seed {args.seed}; tolerance {args.tolerance} (relative "
              f"Frobenius error against float32, NaN-poisoned output)",
              f"- timing: do_bench_alternating, {args.sets} input sets, L2 flushed "
              f"({'reading' if args.flush == 'read' else 'overwriting'} 256 MiB), "
              f"{args.spin_us:g} us spin; medians of {args.reps} launches after "
              f"{args.warmup_ms:g} ms warm-up (random: {args.random_reps} after "
              f"{args.random_warmup_ms:g} ms, Triton in one fixed configuration)"]
    if copy_gbs:
        lines.append(f"- device copy (1 GiB, read + write): {copy_gbs:.0f} GB/s")
    lines += ["", "## Summary", ""] + summary(rows, total, copy_gbs) + [
        "", "## Cases", "",
        "| suite | M x N x K | dtype | ours TFLOP/s | cuBLAS | Triton | vs cuBLAS | vs Triton | "
        "ours us | B GB/s (of copy) | rel. error | config |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        head = f"| {r['suite']} | {r['shape']} | {r['dtype']} |"
        problem = r.get("wrong") or r.get("refused") or r.get("error")
        if problem:
            kind = "WRONG" if "wrong" in r else "REFUSED" if "refused" in r else "FAILED"
            lines.append(f"{head} {kind}: {problem[:200]} | | | | | | | | {r.get('config', '')} |")
            continue
        if "ours_tflops" not in r:                      # --no-timing
            lines.append(f"{head} | | | | | | | {r['rel_err']:.1e} | {r['config']} |")
            continue
        bw = f"{r['b_gbs']:.0f} ({r['of_copy']:.0%})" if "b_gbs" in r else ""
        lines.append(f"{head} {r['ours_tflops']:.1f} | {r['cublas_tflops']:.1f} | "
                     f"{r['triton_tflops']:.1f} | {r['vs_cublas']:.3f} | {r['vs_triton']:.3f} | "
                     f"{r['ours_us']:.1f} | {bw} | {r['rel_err']:.1e} | {r['config']} |")
    tuned = [r for r in rows if "best_vs_cublas" in r]
    if tuned:
        lines += ["", "## The best candidate of each case (--candidates)", "",
                  "| suite | M x N x K | dtype | heuristic vs cuBLAS | best vs cuBLAS | "
                  "heuristic's time / best's | rank | best B of copy | best config |",
                  "|---|---|---|---:|---:|---:|---:|---:|---|"]
        for r in tuned:
            copy = f"{r['best_of_copy']:.0%}" if "best_of_copy" in r else ""
            lines.append(f"| {r['suite']} | {r['shape']} | {r['dtype']} | {r['vs_cublas']:.3f} | "
                         f"{r['best_vs_cublas']:.3f} | {1 / r['heuristic_of_best']:.3f} | "
                         f"{r['best_rank']} | {copy} | {r['best_config']} |")
        lines += ["", "## Every candidate's time over the best's, in the heuristic's order", ""]
        for r in tuned:
            lines.append(f"- {r['shape']} {r['dtype']}: " + "; ".join(
                f"{name} {ratio:.3f}" for name, ratio in r["candidates"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)


def hung(case, args, env, rows, total, copy_gbs) -> None:
    """The watchdog: a case past --case-timeout (a kernel that never returns cannot be
    interrupted) is written down as hung, and the process exits with what it has."""
    suite, (m, n, k), dtype = case
    rows.append(dict(suite=suite, shape=f"{m}x{n}x{k}", dtype=dtype,
                     error=f"hung: no result after {args.case_timeout:g} s"))
    write(args.out, env, args, rows, total, copy_gbs)
    print(f"HUNG: {suite} {m}x{n}x{k} {dtype} after {args.case_timeout:g} s", flush=True)
    os._exit(3)


def shape_list(text: str) -> list[tuple[int, int, int]]:
    """'1x4096x4095,516x1x5323' -> [(1, 4096, 4095), (516, 1, 5323)]."""
    try:
        shapes = [tuple(int(x) for x in item.split("x")) for item in text.split(",") if item]
    except ValueError:
        shapes = []
    if not shapes or any(len(s) != 3 or min(s) < 1 for s in shapes):
        raise argparse.ArgumentTypeError(f"--shapes: expected MxNxK[,MxNxK...], got {text!r}")
    return shapes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="random", type=lambda s: s.split(","))
    p.add_argument("--shapes", default=[], type=shape_list,
                   help="the 'given' suite's shapes: MxNxK,MxNxK,...")
    p.add_argument("--count", type=int, default=300, help="random shapes (each in every dtype)")
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--dtypes", default="float16,bfloat16", type=lambda s: s.split(","))
    p.add_argument("--reps", type=int, default=20, help="timed launches per kernel")
    p.add_argument("--warmup-ms", type=float, default=100.0)
    p.add_argument("--random-reps", type=int, default=6)
    p.add_argument("--random-warmup-ms", type=float, default=5.0)
    p.add_argument("--spin-us", type=float, default=50.0)
    p.add_argument("--sets", type=int, default=3)
    p.add_argument("--flush", choices=("write", "read"), default="write",
                   help="L2 flush before each timed call: overwrite a buffer (its dirty lines "
                        "are written back during the call) or read one (clean lines)")
    p.add_argument("--tolerance", type=float, default=1e-2)
    p.add_argument("--no-timing", action="store_true",
                   help="check every case, time none (beside other GPU work)")
    p.add_argument("--workers", type=int, default=12, help="compile processes (0: none)")
    p.add_argument("--compile-first", action="store_true",
                   help="compile every case before timing any (the workers' compiles then "
                        "take no CPU from the host-bound small cases' launches)")
    p.add_argument("--case-timeout", type=float, default=120.0,
                   help="seconds one case may take before the run stops, calling it hung")
    p.add_argument("--candidates", type=int, default=0,
                   help="also time the first N candidate configurations of each case")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    unknown = [s for s in args.suite if s not in SUITES]
    if unknown:
        p.error(f"unknown suite {unknown[0]}; known: {', '.join(SUITES)}")
    if "given" in args.suite and not args.shapes:
        p.error("the 'given' suite runs the shapes of --shapes, and none were given")
    todo = cases(args)
    import torch
    from bench.report import environment
    from tilemlir.testing import do_bench_alternating
    from triton_matmul import matmul_nt, matmul_nt_fixed
    env = environment()
    copy_gbs = copy_bandwidth(torch, do_bench_alternating) if "decode" in args.suite else None
    rows = []
    with contextlib.ExitStack() as stack:
        compiled = iter(lambda: "", None)                 # no workers: compile in the loop
        if args.workers:
            pool = stack.enter_context(ProcessPoolExecutor(
                args.workers, mp_context=multiprocessing.get_context("spawn")))
            compiled = pool.map(compile_case, todo, [args.candidates] * len(todo),
                                chunksize=2)                # in order, as they finish
            if args.compile_first:      # no compile beside the timings (host-bound cases)
                compiled = list(compiled)
        for case, _ in zip(todo, compiled):
            watchdog = threading.Timer(args.case_timeout, hung, (case, args, env, rows,
                                                                  len(todo), copy_gbs))
            watchdog.start()
            try:
                row = run_case(case, args, torch, do_bench_alternating, matmul_nt_fixed,
                               matmul_nt, copy_gbs)
            except Exception as err:  # one case must not hide the others
                suite, (m, n, k), dtype = case
                key = "refused" if type(err).__name__ in ("ShapeError", "TargetError") \
                    else "error"
                row = dict(suite=suite, shape=f"{m}x{n}x{k}", dtype=dtype,
                           **{key: f"{type(err).__name__}: {err}"[:300]})
            watchdog.cancel()
            rows.append(row)
            print({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in row.items()},
                  flush=True)
            write(args.out, env, args, rows, len(todo), copy_gbs)
    print("\n".join(summary(rows, len(todo), copy_gbs)))


if __name__ == "__main__":
    main()
