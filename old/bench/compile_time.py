"""Compile time of every shipped kernel: Python -> tile IR -> PTX -> cubin, cold and cached.

    python bench/compile_time.py --out results/compile-time.md

For each kernel (and the chip it targets), the median of --runs runs of:
  build   Python kernel -> tile IR (the language interpreter)
  ptx     tile IR -> PTX (tilemlir.compile with the cache off: dispatch, materialize, the upstream
          NVVM pipeline, LLVM's NVPTX back end)
  cubin   ptxas on that PTX
  disk    tilemlir.compile in a fresh process state on a warm disk cache (the kernel is traced
          and hashed, the entry read back and checked)
  memory  tilemlir.compile of the same kernel again in the same process (in-memory cache)
and, once, what starting the compiler process costs the first compile of a process that
misses the caches (tilemlir.runtime.compile_worker). No GPU is needed.

Timed with time.perf_counter, not tilemlir.testing.do_bench: compiling is host work (nothing
runs on a GPU), and CUDA events time only GPU work.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tilemlir  # noqa: E402
from tilemlir.runtime.compiler import clear_memory_cache  # noqa: E402
from tilemlir.target.ptx import assemble, find_ptxas  # noqa: E402


def shipped_kernels():
    """(label, chip, kernel) for every kernel under tilemlir/kernels that compiles today."""
    from tilemlir.kernels import gemm_mma_sync, hgemm_tcgen05, mma_demo
    out = [("mma_demo (seed 001)", "sm_90a", mma_demo.gemm_16x8x16),
           ("gemm_mma_sync 4096^3 f16", "sm_90a", gemm_mma_sync.gemm_mma_sync(4096, 4096, 4096)),
           ("hgemm_v1 (tcgen05)", "sm_100a", hgemm_tcgen05.hgemm_v1(128, 128, 64)),
           ("hgemm_v2 (tcgen05)", "sm_100a", hgemm_tcgen05.hgemm_v2(128, 128, 1024)),
           ("hgemm_v3 (tcgen05)", "sm_100a", hgemm_tcgen05.hgemm_v3(4096, 4096, 4096))]
    try:
        from tilemlir.kernels import hgemm_wgmma
        out += [(f"hgemm_wgmma_v{i} (Hopper twin)", "sm_90a",
                 getattr(hgemm_wgmma, f"hgemm_wgmma_v{i}")(*shape))
                for i, shape in ((1, (128, 128, 64)), (2, (128, 128, 1024)), (3, (4096, 4096, 4096)))]
    except ImportError:
        pass
    from tilemlir.kernels import hgemm_hopper
    out += [(f"hgemm_v{i} 8192^3 (Hopper, TMA)", "sm_90a",
             getattr(hgemm_hopper, f"hgemm_v{i}")(8192, 8192, 8192)) for i in (4, 5, 6, 7)]
    out += [("hgemm_v8 1000x1000x8192 split 4 (Hopper)", "sm_90a",
             hgemm_hopper.hgemm_v8(1000, 1000, 8192, SPLIT_K=4))]
    from tilemlir.kernels import attention, gemm_epilogue, norms
    out += [("hgemm_fused 8192^3 bias+gelu", "sm_90a",
             gemm_epilogue.hgemm_fused(8192, 8192, 8192)),
            ("softmax 4096x16384", "sm_90a", norms.softmax(4096, 16384)),
            ("flash_attention 8x16x4096x128", "sm_90a",
             attention.flash_attention(8, 16, 4096, 128)),
            ("flash_attention 8x16x4096x64 causal", "sm_90a",
             attention.flash_attention(8, 16, 4096, 64, causal=True))]
    return out


def _median(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, result


def measure(label, chip, kernel, runs: int, has_ptxas: bool) -> dict:
    build_ms, _ = _median(kernel.build, runs)
    ptx_ms, compiled = _median(lambda: tilemlir.compile(kernel, target=chip, cache=False), runs)
    cubin_ms = _median(lambda: assemble(compiled.ptx, chip), runs)[0] if has_ptxas else None
    tilemlir.compile(kernel, target=chip)                      # fill the cache

    def from_disk():
        clear_memory_cache()
        return tilemlir.compile(kernel, target=chip)
    disk_ms, hit = _median(from_disk, runs)
    assert hit.compile_info.cache_hit
    memory_ms, _ = _median(lambda: tilemlir.compile(kernel, target=chip), runs)
    return dict(label=label, chip=chip, build=build_ms, ptx=ptx_ms, cubin=cubin_ms,
                disk=disk_ms, memory=memory_ms, ptx_lines=compiled.ptx.count("\n"))


def worker_start_ms(runs: int) -> float:
    """The first cold compile's extra time for starting the compiler process: a compile with a
    new worker minus one with a running worker (the seed-001 demo, cache off)."""
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    from tilemlir.runtime import compile_worker

    def cold():
        compile_worker._worker.close()
        return tilemlir.compile(gemm_16x8x16, target="sm_90a", cache=False)
    started = _median(cold, runs)[0]
    warm = _median(lambda: tilemlir.compile(gemm_16x8x16, target="sm_90a", cache=False), runs)[0]
    return started - warm


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    os.environ["TILEMLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilemlir-bench-cache-")
    has_ptxas = find_ptxas() is not None
    rows = []
    for label, chip, kernel in shipped_kernels():
        try:
            rows.append(measure(label, chip, kernel, args.runs, has_ptxas))
        except Exception as err:  # a kernel whose lowering is missing must not hide the others
            rows.append(dict(label=label, chip=chip, error=f"{type(err).__name__}: {err}"[:200]))
        print(rows[-1], flush=True)
    header = ("| kernel | chip | Python -> tile IR ms | tile IR -> PTX ms | ptxas ms | "
              "disk cache hit ms | memory cache hit ms | PTX lines |")
    table = [header, "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            table.append(f"| {r['label']} | {r['chip']} | failed: {r['error']} | | | | | |")
        else:
            cubin = f"{r['cubin']:.1f}" if r["cubin"] is not None else "n/a"
            table.append(f"| {r['label']} | {r['chip']} | {r['build']:.1f} | {r['ptx']:.1f} | "
                         f"{cubin} | {r['disk']:.1f} | {r['memory']:.3f} | {r['ptx_lines']} |")
    start_ms = worker_start_ms(args.runs)
    table += ["", f"Starting the compiler process adds {start_ms:.0f} ms to the first compile of a "
                  f"process that misses both caches (once per process)."]
    print("\n".join(table))
    if args.out:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        lines = ["# Compile time of the shipped kernels", "", f"- date: {now}",
                 f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
                 f"{platform.python_version()} (no GPU needed)",
                 f"- command: `python {' '.join(sys.argv)}`",
                 f"- median of {args.runs} runs each; 'tile IR -> PTX' is tilemlir.compile with the "
                 f"cache off (dispatch, materialize, upstream NVVM pipeline, NVPTX back end); "
                 f"'disk cache hit': tilemlir.compile after clearing the in-memory cache, on a "
                 f"warm on-disk cache (the kernel is traced and hashed, the entry read back and "
                 f"checked); 'memory cache hit': the same call again in the same process",
                 ""] + table
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
