"""How many threads of a CTA reach an op: proving that exactly one thread issues it.

tcgen05.mma is issued by a single thread; when several threads reach the op, each issues the
whole MMA chain (with accumulation on, D receives the product several times). The enclosing
branches' *granularity* (tilemlir.dispatch.threads) says that a condition varies between
single threads, not that only one thread passes it: `tid < 64` and a bare `elect_sync` in a
128-thread block both have granularity 1 yet let 64 and 4 threads through.

Here each condition of an enclosing `scf.if` then-region is evaluated on every thread of the
block (known_block_size), interpreting the integer ops it is built from (thread ids, lane id,
constants, arith add/sub/mul/div/rem/shift/and/or/xor, casts and comparisons). A condition
that cannot be evaluated exactly is bounded as (threads per warp, warps):

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

from tilemlir.dispatch.threads import UNIFORM, block_size, enclosing, granularity

_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
         5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}
_CMPI_EQ = 0
_BINARY = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
           "arith.divui": np.floor_divide, "arith.remui": np.remainder,
           "arith.shrui": np.right_shift, "arith.shli": np.left_shift,
           "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or,
           "arith.xori": np.bitwise_xor}
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi",
          "arith.trunci")
_ELECT = ("tile.elect_sync", "nvvm.elect.sync")


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


class _Block:
    """The threads of a block, linear index t = x + bx * (y + by * z)."""

    def __init__(self, size: tuple[int, int, int]):
        self.size = size
        self.t = np.arange(size[0] * size[1] * size[2], dtype=np.int64)

    def thread_id(self, dim: str) -> np.ndarray:
        bx, by, _ = self.size
        return {"x": self.t % bx, "y": (self.t // bx) % by, "z": self.t // (bx * by)}[dim]

    def values(self, v: ir.Value, depth: int = 0):
        """The integer `v` on every thread (an int64 array), or None when not computable."""
        owner = v.owner
        if depth > 32 or isinstance(owner, ir.Block):
            return None
        name = owner.name
        if name == "arith.constant":
            attr = owner.attributes["value"]
            if not isinstance(attr, ir.IntegerAttr):
                return None
            return _wrap(np.full(self.t.shape, ir.IntegerAttr(attr).value, dtype=np.int64), v.type)
        if name in ("gpu.thread_id", "nvvm.read.ptx.sreg.tid.x"):
            dim = str(owner.attributes["dimension"])[-2] if "dimension" in owner.attributes else "x"
            return self.thread_id(dim)
        if name in ("gpu.lane_id", "nvvm.read.ptx.sreg.laneid"):
            return self.t % 32
        if name in _CASTS:
            return self.values(owner.operands[0], depth + 1)
        if name in _BINARY or name == "arith.cmpi":
            lhs = self.values(owner.operands[0], depth + 1)
            rhs = self.values(owner.operands[1], depth + 1)
            if lhs is None or rhs is None:
                return None
            if name == "arith.cmpi":
                pred = ir.IntegerAttr(owner.attributes["predicate"]).value
                return _CMPI[pred](lhs, rhs).astype(np.int64)
            if name in ("arith.divui", "arith.remui") and (rhs == 0).any():
                return None
            return _wrap(_BINARY[name](lhs, rhs), v.type)
        return None

    def bound(self, cond: ir.Value) -> Bound:
        """A bound on the threads for which the i1 `cond` holds."""
        values = self.values(cond)
        if values is not None:
            return Bound.of_mask(values != 0)
        owner = cond.owner
        everyone = Bound(32, math.ceil(self.t.size / 32))
        if isinstance(owner, ir.Block):
            return everyone
        if owner.name in _ELECT:
            return Bound(1, everyone.warps)
        if owner.name == "arith.andi":
            return self.bound(owner.operands[0]).meet(self.bound(owner.operands[1]))
        if owner.name == "arith.cmpi" and \
                ir.IntegerAttr(owner.attributes["predicate"]).value == _CMPI_EQ:
            lhs, rhs = owner.operands
            for expr, other in ((lhs, rhs), (rhs, lhs)):
                values = self.values(expr)
                if values is not None and granularity(other) == UNIFORM:
                    return self._worst_value(values)
        return everyone

    @staticmethod
    def _worst_value(values: np.ndarray) -> Bound:
        """The bound of `values == u` for an unknown uniform u: the worst value's."""
        lanes = warps = 0
        for v in np.unique(values):
            b = Bound.of_mask(values == v)
            lanes, warps = max(lanes, b.lanes), max(warps, b.warps)
        return Bound(lanes, warps)


def _wrap(values: np.ndarray, type_: ir.Type) -> np.ndarray:
    """i1 values as 0 / 1 (an i1 `true` constant reads -1, and xor with it must flip one bit)."""
    if isinstance(type_, ir.IntegerType) and ir.IntegerType(type_).width == 1:
        return values & 1
    return values


def single_issuer_reason(op: ir.Operation, instruction: str = "tcgen05.mma") -> str | None:
    """None when at most one thread of the CTA reaches `op`, else why that is not proven."""
    size = block_size(enclosing(op, "gpu.func"))
    if size is None:
        return ("the enclosing gpu.func declares no known_block_size, so one issuing thread "
                "cannot be proven")
    block = _Block(size)
    reach = Bound(32, math.ceil(block.t.size / 32))
    # Exactly evaluable conditions are intersected thread by thread (wg == 0 and warp == 0
    # keep one warp, which separate bounds would not see); the others bound the count.
    exact = np.ones(block.t.shape, dtype=bool)
    child, parent = op, op.parent
    while parent is not None and parent.name not in ("gpu.func", "func.func", "builtin.module"):
        if parent.name == "scf.if" and child.block == parent.regions[0].blocks[0]:
            values = block.values(parent.operands[0])
            if values is not None:
                exact &= values != 0
            else:
                reach = reach.meet(block.bound(parent.operands[0]))
        child, parent = parent, parent.parent
    reach = reach.meet(Bound.of_mask(exact))
    if reach.threads <= 1:
        return None
    return (f"up to {int(reach.threads)} threads of the {block.t.size}-thread block reach the "
            f"op, but {instruction} is issued by one thread: put it under branches that keep "
            f"one (e.g. warp index == 0, then tile.elect_sync; or threadIdx.x == 0)")
