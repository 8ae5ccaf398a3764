"""tile-dispatch throughput on large modules, and where tile-to-ptx spends its time on them.

    python bench/dispatch_speed.py [N ...]                 # default 2000 8000 32000
    python bench/dispatch_speed.py --kinds mixed 8000      # one workload only
    python bench/dispatch_speed.py --pipeline 8000         # tile-to-ptx, time per pass

Two workloads, each one kernel of N dispatched ops, dispatched for sm_80 in this process:

  casts   N identical tile.cast ops (f32 -> f16 over the mma accumulator layout) on one pair
          of register tiles: the best case for anything that decides an op once.
  mixed   the seed-001 step repeated: a warp copies its A and B fragments from its own rows of
          global memory (tile.slice at a dynamic, warp-dependent offset), zeroes an accumulator
          (tile.fill), multiplies (tile.gemm, mma.sync), narrows it (tile.cast) and stores it
          back (tile.copy). Every step works on its own fragments and windows (new values, the
          same types), and every fourth step sits under a warp-uniform scf.if: nothing is
          identical op for op, as in an unrolled kernel.

The time is pm.run of `tile-dispatch` alone (it runs tile-verify first), parsing excluded, as
wall time and as this process's CPU time, after a small warm-up module (the first dispatch in a
process imports every variant module).
--pipeline runs the whole tile-to-ptx on the mixed module instead and prints each pass's share
(the passes run one by one, so each time is that pass's own).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlir import ir  # noqa: E402

from tilemlir.ir.context import make_context  # noqa: E402
from tilemlir.pipeline import (PipelineOptions, build_pass_manager, dispatch_pass,  # noqa: E402
                               tile_to_ptx)
from tilemlir.target import Target  # noqa: E402
from tilemlir.tools.pass_pipeline import _split_top  # noqa: E402

CHIP = "sm_80"
ACC = '#tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">'


def casts_text(n: int) -> str:
    lines = [f'!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", {ACC}>',
             f'!D16 = !tile.buf<array<i64: 16, 8>, f16, "local", {ACC}>',
             "gpu.module @m {",
             "  gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {",
             '    %s = "tile.alloc_local"() : () -> !D32',
             '    %d = "tile.alloc_local"() : () -> !D16']
    lines += ['    "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()'] * n
    lines += ["    gpu.return", "  }", "}"]
    return "\n".join(lines)


MIXED_TYPES = f"""\
!A = !tile.buf<array<i64: 64, 16>, f16, "global", #tile.layout<"S[(64, 16):(16, 1)]">>
!B = !tile.buf<array<i64: 64, 8>, f16, "global", #tile.layout<"S[(64, 8):(8, 1)]">>
!D = !tile.buf<array<i64: 64, 8>, f32, "global", #tile.layout<"S[(64, 8):(8, 1)]">>
!Aw = !tile.buf<array<i64: 16, 16>, f16, "global", #tile.layout<"S[(16, 16):(16, 1)]">>
!Bw = !tile.buf<array<i64: 16, 8>, f16, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
!Dw = !tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", {ACC}>
!Hf = !tile.buf<array<i64: 16, 8>, f16, "local", {ACC}>
"""
DYN = "-9223372036854775808"


def _mixed_step(i: int, indent: str) -> list[str]:
    """One seed-001 step (6 dispatched ops) on its own windows and fragments."""
    s = [f'%aw{i} = "tile.slice"(%a, %row) {{static_offsets = array<i64: {DYN}, 0>}} : (!A, index) -> !Aw',
         f'%bw{i} = "tile.slice"(%b, %row) {{static_offsets = array<i64: {DYN}, 0>}} : (!B, index) -> !Bw',
         f'%dw{i} = "tile.slice"(%d, %row) {{static_offsets = array<i64: {DYN}, 0>}} : (!D, index) -> !Dw',
         f'%af{i} = "tile.alloc_local"() : () -> !Af',
         f'%bf{i} = "tile.alloc_local"() : () -> !Bf',
         f'%df{i} = "tile.alloc_local"() : () -> !Df',
         f'%hf{i} = "tile.alloc_local"() : () -> !Hf',
         f'"tile.copy"(%af{i}, %aw{i}) {{scope = "warp"}} : (!Af, !Aw) -> ()',
         f'"tile.copy"(%bf{i}, %bw{i}) {{scope = "warp"}} : (!Bf, !Bw) -> ()',
         f'"tile.fill"(%df{i}, %zero) {{scope = "warp"}} : (!Df, f32) -> ()',
         f'"tile.gemm"(%df{i}, %af{i}, %bf{i}, %df{i}) {{alpha = 1.0 : f32, beta = 1.0 : f32, '
         f'scope = "warp", transpose_a = false, transpose_b = false}} : (!Df, !Af, !Bf, !Df) -> ()',
         f'"tile.cast"(%hf{i}, %df{i}) {{scope = "warp"}} : (!Hf, !Df) -> ()',
         f'"tile.copy"(%dw{i}, %df{i}) {{scope = "warp"}} : (!Dw, !Df) -> ()']
    return [indent + line for line in s]


MIXED_OPS_PER_STEP = 6


def mixed_text(n: int) -> str:
    """About n dispatched ops (a whole number of steps)."""
    lines = [MIXED_TYPES,
             "gpu.module @m {",
             "  gpu.func @k(%pa: !llvm.ptr, %pb: !llvm.ptr, %pd: !llvm.ptr) kernel "
             "attributes {known_block_size = array<i32: 128, 1, 1>} {",
             "    %zero = arith.constant 0.0 : f32",
             "    %c16 = arith.constant 16 : index",
             "    %c32 = arith.constant 32 : index",
             "    %c0 = arith.constant 0 : index",
             "    %tid = gpu.thread_id x",
             "    %warp = arith.divui %tid, %c32 : index",
             "    %row = arith.muli %warp, %c16 : index",
             "    %first = arith.cmpi eq, %warp, %c0 : index",
             '    %a = "tile.global"(%pa) : (!llvm.ptr) -> !A',
             '    %b = "tile.global"(%pb) : (!llvm.ptr) -> !B',
             '    %d = "tile.global"(%pd) : (!llvm.ptr) -> !D']
    for i in range(max(n // MIXED_OPS_PER_STEP, 1)):
        if i % 4 == 3:
            lines.append("    scf.if %first {")
            lines += _mixed_step(i, "      ")
            lines.append("    }")
        else:
            lines += _mixed_step(i, "    ")
    lines += ["    gpu.return", "  }", "}"]
    return "\n".join(lines)


WORKLOADS = {"casts": (casts_text, lambda n: n),
             "mixed": (mixed_text, lambda n: max(n // MIXED_OPS_PER_STEP, 1) * MIXED_OPS_PER_STEP)}


def ops_per_second(kind: str, n: int) -> tuple[int, float, float]:
    """(ops dispatched, ops per second of wall time, ops per second of this process's CPU time)
    of tile-dispatch on the `kind` module of about n ops. On a machine other jobs load, the CPU
    time is the steadier number."""
    text, count = WORKLOADS[kind]
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(text(n))
        pm = build_pass_manager(dispatch_pass(Target(CHIP)), ctx)
        wall, cpu = time.perf_counter(), time.process_time()
        pm.run(module.operation)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return count(n), count(n) / wall, count(n) / cpu


def _one_pass_each(steps):
    """The steps with every upstream pass list split into single passes (a nested
    `gpu.module(a, b)` into `gpu.module(a)`, `gpu.module(b)`): the same passes in the same order."""
    for kind, step in steps:
        if kind == "py":
            yield kind, step
            continue
        for element in _split_top(step):
            nested = re.fullmatch(r"([\w.]+)\((.*)\)", element, re.S)
            if nested and "{" not in nested.group(1):
                for inner in _split_top(nested.group(2)):
                    yield "mlir", f"{nested.group(1)}({inner})"
            else:
                yield "mlir", element


def pipeline_profile(n: int) -> list[tuple[str, float]]:
    """(pass, seconds) for each pass of tile-to-ptx on the mixed module, run one at a time."""
    ctx = make_context()
    steps = list(_one_pass_each(tile_to_ptx(PipelineOptions(Target(CHIP)))))
    times = []
    with ctx:
        module = ir.Module.parse(mixed_text(n))
        for kind, step in steps:
            from mlir.passmanager import PassManager
            pm = PassManager("builtin.module", context=ctx)
            if kind == "py":
                name = step.__name__.replace("_", "-")
                pm.add(step, name=name, argument=name)
            else:
                name = step
                pm.add(step)
            began = time.perf_counter()
            pm.run(module.operation)
            times.append((name, time.perf_counter() - began))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int)
    parser.add_argument("--kinds", default="casts,mixed", help="comma-separated: casts, mixed")
    parser.add_argument("--pipeline", action="store_true",
                        help="time each pass of tile-to-ptx on the mixed module instead")
    args = parser.parse_args()
    sizes = args.sizes or [2000, 8000, 32000]
    if args.pipeline:
        for n in sizes:
            times = pipeline_profile(n)
            total = sum(t for _, t in times)
            ops = WORKLOADS["mixed"][1](n)
            print(f"tile-to-ptx, mixed module of {ops} ops: {total:.2f} s")
            for name, t in times:
                if t >= 0.01 * total:
                    print(f"  {t:8.3f} s  {100 * t / total:5.1f} %  {name[:90]}")
            print(f"  {sum(t for _, t in times if t < 0.01 * total):8.3f} s  the other "
                  f"{sum(1 for _, t in times if t < 0.01 * total)} passes (< 1 % each)")
        return
    for kind in args.kinds.split(","):
        ops_per_second(kind, 12)    # warm up: imports the variants, fills the layout caches
        for n in sizes:
            ops, wall, cpu = ops_per_second(kind, n)
            print(f"{kind:6s} {ops:6d} ops: {wall:7.0f} ops/s ({cpu:7.0f} ops per CPU second)",
                  flush=True)


if __name__ == "__main__":
    main()
