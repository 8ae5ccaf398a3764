"""tile-dispatch throughput on a large module: N tile.cast ops (f32 -> f16 over the mma
accumulator layout) in one kernel, dispatched for sm_80 in this process.

    python bench/dispatch_speed.py [N ...]      # default 500 2000 8000
"""

from __future__ import annotations

import sys
import time

from mlir import ir

from tilemlir.ir.context import make_context
from tilemlir.pipeline import build_pass_manager

LAYOUT = '#tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">'


def module_text(n: int) -> str:
    lines = [f'!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", {LAYOUT}>',
             f'!D16 = !tile.buf<array<i64: 16, 8>, f16, "local", {LAYOUT}>',
             "gpu.module @m {",
             "  gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {",
             '    %s = "tile.alloc_local"() : () -> !D32',
             '    %d = "tile.alloc_local"() : () -> !D16']
    lines += ['    "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()'] * n
    lines += ["    gpu.return", "  }", "}"]
    return "\n".join(lines)


def ops_per_second(n: int) -> float:
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(module_text(n))
        pm = build_pass_manager("builtin.module(tile-dispatch{chip=sm_80})", ctx)
        began = time.perf_counter()
        pm.run(module.operation)
        return n / (time.perf_counter() - began)


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [500, 2000, 8000]:
        print(f"{n:6d} tile.cast ops: {ops_per_second(n):7.0f} ops/s")
