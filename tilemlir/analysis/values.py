"""Facts about the integer values of a kernel: one analysis, a rule per op (Triton's AxisInfo
is the model), shared by dispatch and lowering.

For an SSA value v the analysis answers three questions:

    granularity(v)  the size of the aligned groups of consecutive threads (x-major thread order)
                    guaranteed to see one value of v: UNIFORM for a constant, 1 for threadIdx.x
                    and elect_sync, 32 for threadIdx.x / 32 (the warp index)
    multiple(v)     a number v is known to be a multiple of (0: v is zero; 1: nothing known)
    values(v)       v on every thread of the block (an int64 array, thread t = x + bx * (y +
                    by * z)), or None when it cannot be computed exactly

and two that the rules need on the way: thread_period(v) (v is the thread index modulo p, so
v / c is c-granular when c divides p) and elected(v) (v holds on one lane of each warp).

Each op's rule derives its result's facts from its operands' facts; an op without a rule knows
nothing (granularity: the finest of its operands'). Block arguments ask the rule of the op that
owns their region. Answers are memoized per value, so one analysis is built per query and
dropped before the IR changes.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

UNIFORM = math.inf
# Deeper chains of ops get the unknown answer (a bound on recursion, never optimistic).
MAX_DEPTH = 64
_UNKNOWN = {"granularity": 1, "thread_period": None, "elected": False, "multiple": 1,
            "values": None}


class ValueAnalysis:
    """The facts of the values of one gpu.func whose block has `block` threads (None: unknown,
    then per-thread values are unknown and threadIdx.y / z count as varying per thread)."""

    def __init__(self, block: tuple[int, int, int] | None = None):
        self.block = block
        self.threads = np.arange(math.prod(block), dtype=np.int64) if block else None
        self._memo: dict = {}
        self._depth = 0

    def granularity(self, v: ir.Value) -> float:
        return self._fact("granularity", v)

    def thread_period(self, v: ir.Value) -> float | None:
        """p when v is the linear thread index modulo p (math.inf: the index itself), else None:
        v / c, for a c that divides p, is constant on aligned groups of c threads."""
        return self._fact("thread_period", v)

    def elected(self, v: ir.Value) -> bool:
        """v (an i1) holds on at most one lane of each warp."""
        return self._fact("elected", v)

    def multiple(self, v: ir.Value) -> int:
        return self._fact("multiple", v)

    def values(self, v: ir.Value) -> np.ndarray | None:
        return self._fact("values", v) if self.block else None

    def constant(self, v: ir.Value) -> int | None:
        """The integer an arith.constant defines, else None."""
        owner = v.owner
        if isinstance(owner, ir.Block) or owner.name != "arith.constant":
            return None
        attr = owner.attributes["value"]
        return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None

    def thread_id(self, dim: str) -> np.ndarray:
        bx, by, _ = self.block
        t = self.threads
        return {"x": t % bx, "y": (t // bx) % by, "z": t // (bx * by)}[dim]

    def _fact(self, fact: str, v: ir.Value):
        key = (fact, v)
        if key in self._memo:
            return self._memo[key]
        if self._depth >= MAX_DEPTH:
            return _UNKNOWN[fact]
        self._depth += 1
        try:
            owner = v.owner
            if isinstance(owner, ir.Block):
                parent = owner.owner
                rule = RULES.get(parent.name, DEFAULT) if parent is not None else DEFAULT
                result = getattr(rule, f"argument_{fact}")(v, owner, self)
            else:
                rule = RULES.get(owner.name, DEFAULT)
                of_result = getattr(rule, f"result_{fact}", None)     # ops of several results
                result = of_result(v, owner, self) if of_result is not None \
                    else getattr(rule, fact)(owner, self)
        finally:
            self._depth -= 1
        self._memo[key] = result
        return result


# ------------------------------------------------------------------------------ rules
class Rule:
    """What an op's result is, from its operands. The defaults know nothing."""

    def granularity(self, op, a: ValueAnalysis) -> float:
        return min((a.granularity(o) for o in op.operands), default=1)

    def thread_period(self, op, a: ValueAnalysis) -> float | None:
        return None

    def elected(self, op, a: ValueAnalysis) -> bool:
        return False

    def multiple(self, op, a: ValueAnalysis) -> int:
        return 1

    def values(self, op, a: ValueAnalysis):
        return None

    # Block arguments of the op's regions: function arguments are uniform.
    def argument_granularity(self, v, block, a: ValueAnalysis) -> float:
        return UNIFORM

    def argument_thread_period(self, v, block, a: ValueAnalysis) -> float | None:
        return None

    def argument_elected(self, v, block, a: ValueAnalysis) -> bool:
        return False

    def argument_multiple(self, v, block, a: ValueAnalysis) -> int:
        return 1

    def argument_values(self, v, block, a: ValueAnalysis):
        return None


DEFAULT = Rule()


def _wrap(values: np.ndarray, type_: ir.Type) -> np.ndarray:
    """i1 values as 0 / 1 (an i1 `true` constant reads -1, and xor with it must flip one bit)."""
    if isinstance(type_, ir.IntegerType) and ir.IntegerType(type_).width == 1:
        return values & 1
    return values


class Constant(Rule):
    def granularity(self, op, a):
        return UNIFORM

    def multiple(self, op, a):
        value = a.constant(op.result)
        return abs(value) if value is not None else 1

    def values(self, op, a):
        value = a.constant(op.result)
        if value is None:
            return None
        return _wrap(np.full(a.threads.shape, value, dtype=np.int64), op.result.type)


class Uniform(Rule):
    """Block and grid indices and sizes: the same on every thread of the block."""

    def granularity(self, op, a):
        return UNIFORM


class ThreadId(Rule):
    @staticmethod
    def _dim(op) -> str:
        return str(op.attributes["dimension"])[-2] if "dimension" in op.attributes else "x"

    def granularity(self, op, a):
        if self._dim(op) == "x":
            return 1
        return a.block[0] if a.block else 1

    def thread_period(self, op, a):
        if self._dim(op) != "x":
            return None
        # threadIdx.x is the linear index modulo the block's x extent when y or z > 1
        return a.block[0] if a.block and a.block[1] * a.block[2] > 1 else math.inf

    def values(self, op, a):
        return a.thread_id(self._dim(op))


class LaneId(Rule):
    def granularity(self, op, a):
        return 1

    def thread_period(self, op, a):
        return 32

    def values(self, op, a):
        return a.threads % 32


class SingleThread(Rule):
    """elect_sync: true on one thread of each warp."""

    def granularity(self, op, a):
        return 1

    def elected(self, op, a):
        return True


class Binary(Rule):
    """An integer op of two operands, evaluated thread by thread with `ufunc`."""

    def __init__(self, ufunc=None, multiple=None, divides=False):
        self.ufunc = ufunc
        self.multiple_of = multiple
        self.divides = divides

    def multiple(self, op, a):
        if self.multiple_of is None:
            return 1
        return self.multiple_of(op, a)

    def values(self, op, a):
        if self.ufunc is None:
            return None
        lhs, rhs = a.values(op.operands[0]), a.values(op.operands[1])
        if lhs is None or rhs is None or (self.divides and (rhs == 0).any()):
            return None
        return _wrap(self.ufunc(lhs, rhs), op.result.type)


def _divides(c: int, period: float | None) -> bool:
    return period is not None and (period == math.inf or period % c == 0)


class Modulo(Binary):
    """x % c and x & (c - 1): the thread index modulo p, reduced modulo a c dividing p, is the
    thread index modulo c."""

    def __init__(self, ufunc, mask=False):
        super().__init__(ufunc, divides=not mask)
        self.mask = mask

    def thread_period(self, op, a):
        c = a.constant(op.operands[1])
        if c is None or c < 0:
            return None
        if self.mask:
            c = c + 1 if c & (c + 1) == 0 else 0      # only a mask of low bits is a modulo
        return c if c > 0 and _divides(c, a.thread_period(op.operands[0])) else None


class Division(Binary):
    """x / c and x >> c: the thread index modulo a multiple of c, divided by c, is constant on
    aligned groups of c."""

    def __init__(self, ufunc=None, shift=False):
        super().__init__(ufunc, divides=not shift)
        self.shift = shift

    def granularity(self, op, a):
        base = super().granularity(op, a)
        c = a.constant(op.operands[1])
        if c is None or c <= 0:
            return base
        factor = 1 << c if self.shift else c
        return max(base, factor) if _divides(factor, a.thread_period(op.operands[0])) else base


class Compare(Rule):
    PREDICATES = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
                  5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater,
                  9: np.greater_equal}

    def values(self, op, a):
        lhs, rhs = a.values(op.operands[0]), a.values(op.operands[1])
        if lhs is None or rhs is None:
            return None
        pred = ir.IntegerAttr(op.attributes["predicate"]).value
        return self.PREDICATES[pred](lhs, rhs).astype(np.int64)


class Cast(Rule):
    def __init__(self, keeps_thread_period=False, keeps_multiple=True):
        self.keeps_thread_period = keeps_thread_period
        self.keeps_multiple = keeps_multiple

    def thread_period(self, op, a):
        return a.thread_period(op.operands[0]) if self.keeps_thread_period else None

    def multiple(self, op, a):
        return a.multiple(op.operands[0]) if self.keeps_multiple else 1

    def values(self, op, a):
        return a.values(op.operands[0])


class Broadcast(Rule):
    """gpu.shuffle idx from lane 0 of 32 (emit.warp_uniform): where its value is already the
    same on every lane of a warp (granularity a multiple of 32), the result is that value,
    with all its facts; else nothing is known."""

    @staticmethod
    def _same(op, a) -> bool:
        if str(op.attributes["mode"]) != "#gpu<shuffle_mode idx>":
            return False
        if (a.constant(op.operands[1]), a.constant(op.operands[2])) != (0, 32):
            return False
        g = a.granularity(op.operands[0])
        return g == UNIFORM or g % 32 == 0

    def result_granularity(self, v, op, a):
        if v.result_number == 0 and self._same(op, a):
            return a.granularity(op.operands[0])
        return 1

    def result_thread_period(self, v, op, a):
        return None

    def result_elected(self, v, op, a):
        return False

    def result_multiple(self, v, op, a):
        return a.multiple(op.operands[0]) if v.result_number == 0 and self._same(op, a) else 1

    def result_values(self, v, op, a):
        return a.values(op.operands[0]) if v.result_number == 0 and self._same(op, a) \
            else None


class Select(Rule):
    def multiple(self, op, a):
        return math.gcd(a.multiple(op.operands[1]), a.multiple(op.operands[2]))


BAR_RED_OR = "llvm.nvvm.barrier.cta.red.or.aligned.count"


def _intrinsic(op) -> str | None:
    attr = op.attributes["intrin"] if "intrin" in op.attributes else None
    return ir.StringAttr(attr).value if attr is not None else None


class BarrierOr(Rule):
    """tile.barrier_or: every thread of one barrier instance gets the same value. An instance
    is the threads with one value of the barrier id; when those are aligned groups of
    `threads` consecutive threads (id = tid / 128 with threads = 128, say), the result is
    `threads`-granular, else only a warp's (whole warps take part in a barrier)."""

    def granularity(self, op, a):
        if op.name == "tile.barrier_or":
            barrier, threads = op.operands[0], ir.IntegerAttr(op.attributes["threads"]).value
        else:       # the intrinsic tile.barrier_or lowers to: (id, threads, pred)
            if _intrinsic(op) != BAR_RED_OR:
                return super().granularity(op, a)
            barrier, threads = op.operands[0], a.constant(op.operands[1])
        ids = a.values(barrier)
        if ids is None or not threads or threads <= 0 or len(ids) % threads:
            return 32
        groups = ids.reshape(-1, threads)
        if (groups == groups[:, :1]).all() and len(np.unique(groups[:, 0])) == len(groups):
            return threads
        return 32


class ForLoop(Rule):
    """scf.for: its body's arguments vary no finer than the bounds, and the induction variable
    is a multiple of what both the lower bound and the step are multiples of. A loop-carried
    value is a multiple of what its initial value and every value the body yields for it are
    (a persistent kernel's tile origin carried to the next tile's epilogue, say)."""

    def argument_granularity(self, v, block, a):
        return min([a.granularity(o) for o in block.owner.operands[:3]] + [UNIFORM])

    def argument_multiple(self, v, block, a):
        loop = block.owner
        if v == block.arguments[0]:
            lower, step = loop.operands[0], loop.operands[2]
            return math.gcd(a.multiple(lower), a.multiple(step))
        index = list(block.arguments).index(v) - 1
        init = loop.operands[3 + index]
        yielded = list(block.operations)[-1].operands[index]
        # Optimistic: assume the initial value's multiple while the yield is evaluated (it may
        # read v), then narrow until it holds for both; a few rounds settle (gcd only shrinks).
        key = ("multiple", v)
        guess = a.multiple(init)
        for _ in range(4):
            known = set(a._memo)
            a._memo[key] = guess
            narrowed = math.gcd(guess, a.multiple(yielded))
            if narrowed == guess:
                return guess
            guess = narrowed
            for stale in set(a._memo) - known:      # facts computed from the old guess
                del a._memo[stale]
        return 1

    def result_multiple(self, v, op, a):
        """A result is the last value carried through the loop (or its initial value)."""
        index = list(op.results).index(v)
        return a.multiple(op.regions[0].blocks[0].arguments[index + 1])


class IfElse(Rule):
    """scf.if: a result is a multiple of what the value each branch yields for it is."""

    def result_multiple(self, v, op, a):
        index = list(op.results).index(v)
        total = 0
        for region in op.regions:
            if len(region.blocks):
                total = math.gcd(total, a.multiple(list(region.blocks[0].operations)[-1]
                                                   .operands[index]))
        return total if total else 1


def _gcd(op, a):
    return math.gcd(a.multiple(op.operands[0]), a.multiple(op.operands[1]))


def _product(op, a):
    return a.multiple(op.operands[0]) * a.multiple(op.operands[1])


def _shifted(op, a):
    shift = a.constant(op.operands[1])
    base = a.multiple(op.operands[0])
    return base << shift if shift is not None else base


RULES: dict[str, Rule] = {
    "arith.constant": Constant(),
    **dict.fromkeys(("gpu.block_id", "gpu.grid_dim", "gpu.block_dim", "gpu.cluster_id",
                     "gpu.cluster_block_id", "nvvm.read.ptx.sreg.ctaid.x",
                     "nvvm.read.ptx.sreg.ctaid.y", "nvvm.read.ptx.sreg.ctaid.z",
                     "tile.cluster_ctarank", "nvvm.read.ptx.sreg.cluster.ctarank"), Uniform()),
    "gpu.thread_id": ThreadId(),
    "nvvm.read.ptx.sreg.tid.x": ThreadId(),
    "gpu.lane_id": LaneId(),
    "nvvm.read.ptx.sreg.laneid": LaneId(),
    "tile.elect_sync": SingleThread(),
    "nvvm.elect.sync": SingleThread(),
    "arith.addi": Binary(np.add, _gcd),
    "arith.subi": Binary(np.subtract, _gcd),
    "arith.muli": Binary(np.multiply, _product),
    "arith.shli": Binary(np.left_shift, _shifted),
    "arith.remui": Modulo(np.remainder),
    "arith.andi": Modulo(np.bitwise_and, mask=True),
    "arith.ori": Binary(np.bitwise_or),
    "arith.xori": Binary(np.bitwise_xor),
    "arith.divui": Division(np.floor_divide),
    "arith.shrui": Division(np.right_shift, shift=True),
    "arith.divsi": Division(),
    "arith.shrsi": Division(shift=True),
    "arith.cmpi": Compare(),
    "arith.index_cast": Cast(keeps_thread_period=True),
    "arith.index_castui": Cast(keeps_thread_period=True),
    "arith.extui": Cast(),
    "arith.extsi": Cast(),
    "arith.trunci": Cast(keeps_multiple=False),
    "arith.select": Select(),
    "gpu.shuffle": Broadcast(),
    # min and max are one operand or the other: a multiple of what both are multiples of
    "arith.minsi": Binary(np.minimum, _gcd),
    "arith.maxsi": Binary(np.maximum, _gcd),
    "scf.for": ForLoop(),
    "scf.if": IfElse(),
    "tile.barrier_or": BarrierOr(),
    "llvm.call_intrinsic": BarrierOr(),
}
