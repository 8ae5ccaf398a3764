"""The named barriers a kernel uses: which id, how many threads, and which threads may reach
each use, so that a variant taking named barriers of its own can refuse ids the kernel uses
for other threads (tile.reduce's cross_warp at warpgroup scope takes id 15 - warpgroup).

A named barrier (bar.sync / bar.arrive / bar.red id, count) completes when `count` threads have
arrived on `id`; two groups of threads that use one id at once mix their arrivals. Uses are read
in both forms dispatch sees, since ops before the one being dispatched are already lowered:

    tile.named_barrier, tile.barrier_arrive, tile.barrier_or    (id, threads attribute)
    tile.cta_sync, nvvm.barrier0                                (id 0, the whole block)
    nvvm.barrier, nvvm.barrier.arrive                           (barrierId, numberOfThreads)
    llvm.call_intrinsic bar.red.or                              (id, threads, pred)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from tilemlir.analysis.threads import reaching_mask
from tilemlir.analysis.values import BAR_RED_OR, ValueAnalysis

_TILE_NAMED = ("tile.named_barrier", "tile.barrier_arrive", "tile.barrier_or")
_WHOLE_BLOCK = ("tile.cta_sync", "nvvm.barrier0")
_NVVM_NAMED = ("nvvm.barrier", "nvvm.barrier.arrive")


@dataclass
class BarrierUse:
    op: ir.Operation
    ids: np.ndarray | None        # the id on every thread of the block (None: not computable)
    threads: int | None           # the arrival count (None: not a known constant)
    reach: np.ndarray             # the threads that may reach the op


def _use(op: ir.Operation, analysis: ValueAnalysis) -> BarrierUse | None:
    name = op.name
    everyone = int(analysis.threads.size)
    if name in _WHOLE_BLOCK:
        return BarrierUse(op, np.zeros(everyone, np.int64), everyone,
                          reaching_mask(op, analysis))
    if name in _TILE_NAMED:
        id_value, threads = op.operands[0], ir.IntegerAttr(op.attributes["threads"]).value
    elif name in _NVVM_NAMED:
        view = op.opview
        id_value = view.barrierId
        count = view.numberOfThreads
        if id_value is None:                     # barrier 0
            ids = np.zeros(everyone, np.int64)
            return BarrierUse(op, ids, everyone if count is None else analysis.constant(count),
                              reaching_mask(op, analysis))
        threads = everyone if count is None else analysis.constant(count)
    elif name == "llvm.call_intrinsic" and "intrin" in op.attributes and \
            ir.StringAttr(op.attributes["intrin"]).value == BAR_RED_OR:
        id_value, threads = op.operands[0], analysis.constant(op.operands[1])
    else:
        return None
    return BarrierUse(op, analysis.values(id_value), threads, reaching_mask(op, analysis))


def named_barrier_uses(func: ir.Operation, analysis: ValueAnalysis) -> list[BarrierUse]:
    """Every barrier use in `func` (a gpu.func whose block size `analysis` knows)."""
    uses = []

    def visit(op):
        use = _use(op.operation, analysis)
        if use is not None:
            uses.append(use)
        return ir.WalkResult.ADVANCE
    func.operation.walk(visit)
    return uses


def clashes(ids: np.ndarray, reach: np.ndarray, group: int, uses: list[BarrierUse]) -> list[str]:
    """Why the named barriers `ids` (per thread; each aligned group of `group` threads that may
    reach, `reach`, uses its own id with a count of `group`) could mix arrivals with `uses`:
    another use of one of those ids by a thread outside the group, or with another count, or
    whose id cannot be computed. Empty when they cannot."""
    taken = {int(i): g for g, i in enumerate(ids[::group]) if reach[g * group:(g + 1) * group].any()}
    problems = []
    for use in uses:
        where = str(use.op.location)
        if use.ids is None:
            problems.append(f"{use.op.name} at {where} uses a barrier id that cannot be computed "
                            f"per thread, so it may be one of {sorted(taken)}")
            continue
        threads = np.flatnonzero(use.reach)
        for b, g in sorted(taken.items()):
            users = threads[use.ids[threads] == b]
            if not len(users):
                continue
            outside = users[users // group != g]
            if len(outside):
                problems.append(f"{use.op.name} at {where} uses barrier {b} on thread "
                                f"{int(outside[0])}, outside the {group} threads "
                                f"{g * group}..{(g + 1) * group - 1} that take it")
            elif use.threads != group:
                problems.append(f"{use.op.name} at {where} uses barrier {b} with a count of "
                                f"{use.threads if use.threads is not None else 'unknown'}, "
                                f"not {group}")
    return problems
