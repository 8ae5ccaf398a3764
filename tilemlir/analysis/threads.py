"""Which threads of a block reach an op: the launch shape and the thread-dependent branches
around it, from the value analysis (tilemlir.analysis.values).

Warp-collective instructions (mma.sync, ldmatrix, wgmma ...) are undefined when some threads
of the warp (or warpgroup) do not reach them: the dispatcher asks how coarse each enclosing
`scf.if` condition is (its granularity). A warp-scope op is fully active when every enclosing
condition has granularity >= 32; a warpgroup-scope op needs >= 128; a CTA-scope op needs
uniform conditions.

Single-issuer instructions (tcgen05.mma, TMA copies) need the converse: that only one thread
passes. Granularity cannot say so (`tid < 64` and a bare elect_sync in a 128-thread block both
have granularity 1 yet let 64 and 4 threads through), so each condition of an enclosing then-
region is evaluated on every thread of the block. A condition that cannot be evaluated exactly
is bounded as (threads per warp, warps):

    elect_sync                                        (1, every warp)
    expr == u, u uniform but unknown (an argument)    the most threads sharing one value of expr
    a & b                                             the smaller bound of each component
    anything else                                     no bound

The op has one issuer when the conditions together admit one thread. Else-regions (negated
conditions) give no bound: the proof is conservative, never optimistic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mlir import ir

from tilemlir.analysis.values import UNIFORM, ValueAnalysis
from tilemlir.ir.kernel_abi import block_size

SCOPE_THREADS = {"thread": 1, "warp": 32, "warpgroup": 128}
_FUNCTION_OPS = ("gpu.func", "func.func", "builtin.module")
_CMPI_EQ = 0


def enclosing(op, name: str):
    """The nearest ancestor operation called `name`, or None."""
    parent = op.parent
    while parent is not None:
        if parent.name == name:
            return parent
        parent = parent.parent
    return None


def analysis_of(op: ir.Operation) -> ValueAnalysis:
    """A value analysis of the gpu.func around `op`."""
    return ValueAnalysis(block_size(enclosing(op, "gpu.func")))


def scope_threads(scope: str, block: tuple[int, int, int] | None) -> int | None:
    """How many threads a scope spans (None for a CTA scope without a known block size)."""
    if scope in SCOPE_THREADS:
        return SCOPE_THREADS[scope]
    if scope == "cta" and block is not None:
        return block[0] * block[1] * block[2]
    return None


# ------------------------------------------------------------------------------ all threads reach
@dataclass(frozen=True)
class Branch:
    """An enclosing thread-dependent branch and how coarse its condition is."""
    location: str
    granularity: float


def thread_dependent_branches(op: ir.Operation) -> list[Branch]:
    """The scf.if ancestors of `op` (up to its gpu.func) whose conditions depend on the thread."""
    analysis = analysis_of(op)
    found = []
    parent = op.parent
    while parent is not None and parent.name not in _FUNCTION_OPS:
        if parent.name == "scf.if":
            g = analysis.granularity(parent.operands[0])
            if g != UNIFORM:
                found.append(Branch(str(parent.location), g))
        parent = parent.parent
    return found


def reaching_mask(op: ir.Operation, analysis: ValueAnalysis) -> np.ndarray:
    """The threads of the block (analysis.block must be known) that may reach `op`: each
    enclosing scf.if whose condition the analysis evaluates per thread keeps the threads for
    which it holds (then-region) or fails (else-region); one it cannot evaluate keeps every
    thread. An over-approximation: a thread outside the mask never reaches the op."""
    mask = np.ones(analysis.threads.shape, dtype=bool)
    child, parent = op, op.parent
    while parent is not None and parent.name not in _FUNCTION_OPS:
        if parent.name == "scf.if":
            values = analysis.values(parent.operands[0])
            if values is not None:
                taken = child.block == parent.regions[0].blocks[0]
                mask &= (values != 0) if taken else (values == 0)
        child, parent = parent, parent.parent
    return mask


# ------------------------------------------------------------------------------ one thread reaches
@dataclass(frozen=True)
class Bound:
    """At most `lanes` threads in each of at most `warps` warps."""
    lanes: float
    warps: float

    def meet(self, other: "Bound") -> "Bound":
        return Bound(min(self.lanes, other.lanes), min(self.warps, other.warps))

    @property
    def threads(self) -> float:
        return self.lanes * self.warps

    @staticmethod
    def of_mask(mask: np.ndarray) -> "Bound":
        per_warp = np.add.reduceat(mask.astype(np.int64), np.arange(0, mask.size, 32))
        return Bound(int(per_warp.max(initial=0)), int((per_warp > 0).sum()))

    @staticmethod
    def worst_value(values: np.ndarray) -> "Bound":
        """The bound of `values == u` for an unknown uniform u: the worst value's."""
        lanes = warps = 0
        for v in np.unique(values):
            b = Bound.of_mask(values == v)
            lanes, warps = max(lanes, b.lanes), max(warps, b.warps)
        return Bound(lanes, warps)


def bound(analysis: ValueAnalysis, cond: ir.Value) -> Bound:
    """A bound on the threads for which the i1 `cond` holds."""
    values = analysis.values(cond)
    if values is not None:
        return Bound.of_mask(values != 0)
    owner = cond.owner
    everyone = Bound(32, math.ceil(analysis.threads.size / 32))
    if isinstance(owner, ir.Block):
        return everyone
    if analysis.elected(cond):
        return Bound(1, everyone.warps)
    if owner.name == "arith.andi":
        return bound(analysis, owner.operands[0]).meet(bound(analysis, owner.operands[1]))
    if owner.name == "arith.cmpi" and \
            ir.IntegerAttr(owner.attributes["predicate"]).value == _CMPI_EQ:
        lhs, rhs = owner.operands
        for expr, other in ((lhs, rhs), (rhs, lhs)):
            values = analysis.values(expr)
            if values is not None and analysis.granularity(other) == UNIFORM:
                return Bound.worst_value(values)
    return everyone


def single_issuer_reason(op: ir.Operation, instruction: str = "tcgen05.mma") -> str | None:
    """None when at most one thread of the CTA reaches `op`, else why that is not proven."""
    analysis = analysis_of(op)
    if analysis.block is None:
        return ("the enclosing gpu.func declares no known_block_size, so one issuing thread "
                "cannot be proven")
    reach = Bound(32, math.ceil(analysis.threads.size / 32))
    # Exactly evaluable conditions are intersected thread by thread (wg == 0 and warp == 0
    # keep one warp, which separate bounds would not see); the others bound the count.
    exact = np.ones(analysis.threads.shape, dtype=bool)
    child, parent = op, op.parent
    while parent is not None and parent.name not in _FUNCTION_OPS:
        if parent.name == "scf.if" and child.block == parent.regions[0].blocks[0]:
            values = analysis.values(parent.operands[0])
            if values is not None:
                exact &= values != 0
            else:
                reach = reach.meet(bound(analysis, parent.operands[0]))
        child, parent = parent, parent.parent
    reach = reach.meet(Bound.of_mask(exact))
    if reach.threads <= 1:
        return None
    return (f"up to {int(reach.threads)} threads of the {analysis.threads.size}-thread block "
            f"reach the op, but {instruction} is issued by one thread: put it under branches "
            f"that keep one (e.g. warp index == 0, then tile.elect_sync; or threadIdx.x == 0)")
