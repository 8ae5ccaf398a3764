"""Run-time extents: a kernel's symbolic dims (`T.dynamic`) and expressions over them.

    M = T.dynamic("M")

    @T.prim_func
    def scale(X: T.Buffer((M, 128), "float32"), Y: T.Buffer((M, 128), "float32")):
        row = T.cta_id([T.ceildiv(M, 4)]) * 4 + T.warp_id([4])
        if row < M:
            ...

M is no Python number: it is known when the kernel is called, from the leading extent of the
arguments it sizes (X's and Y's rows here, which must agree), and is passed to the kernel as a
hidden scalar parameter. One compile serves every M. It may size the leading dim of a global
buffer (the row strides stay static), a grid extent (the runtime evaluates the expression at
each call), and be used in the body like a device value (`row < M`, `M - m0`).

Expressions combine dims and Python ints with + - * // % and T.ceildiv / T.min / T.max; they
stay symbolic (DimExpr) until the body uses them as device values. They are compared and hashed
by structure, so a kernel factory called twice with the same dims builds the same kernel (and
the compile cache answers).
"""

from __future__ import annotations

import json

from tilemlir.dsl.values import KernelError

from tilemlir.ir.kernel_abi import DIM_OPS as _OPS


class DimExpr:
    """A symbolic integer: a dim (`T.dynamic(name)`), or an operation on dims and ints."""

    __slots__ = ("op", "args")

    def __init__(self, op: str, args: tuple):
        self.op, self.args = op, args

    # ------------------------------------------------------------------ building
    @staticmethod
    def of(value) -> "DimExpr | int":
        """`value` as an operand of a dim expression: a DimExpr or an int."""
        if isinstance(value, DimExpr):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(value)
        return value

    def _combine(self, op: str, other, reverse: bool = False):
        from tilemlir.dsl.values import Scalar
        if isinstance(other, Scalar):           # a device value: the expression becomes one too
            mine = self.device_value()
            return _device_op(op, other, mine) if reverse else _device_op(op, mine, other)
        if isinstance(other, bool) or not isinstance(other, (int, DimExpr)):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        return combine(op, a, b)

    def __add__(self, o): return self._combine("add", o)
    def __radd__(self, o): return self._combine("add", o, True)
    def __sub__(self, o): return self._combine("sub", o)
    def __rsub__(self, o): return self._combine("sub", o, True)
    def __mul__(self, o): return self._combine("mul", o)
    def __rmul__(self, o): return self._combine("mul", o, True)
    def __floordiv__(self, o): return self._combine("floordiv", o)
    def __rfloordiv__(self, o): return self._combine("floordiv", o, True)
    def __mod__(self, o): return self._combine("mod", o)
    def __rmod__(self, o): return self._combine("mod", o, True)

    # Comparisons exist for device values only (`row < M` in a kernel body).
    def _compare(self, op: str, other):
        from tilemlir.dsl.values import Scalar
        if isinstance(other, (Scalar, int)) and not isinstance(other, bool):
            return getattr(self.device_value(), op)(other)
        return NotImplemented

    def __lt__(self, o): return self._compare("__lt__", o)
    def __le__(self, o): return self._compare("__le__", o)
    def __gt__(self, o): return self._compare("__gt__", o)
    def __ge__(self, o): return self._compare("__ge__", o)

    def __eq__(self, other) -> bool:
        return isinstance(other, DimExpr) and (self.op, self.args) == (other.op, other.args)

    def __hash__(self) -> int:
        return hash((self.op, self.args))

    def __bool__(self):
        raise KernelError(f"{self} is known only when the kernel runs: it has no Python truth "
                          f"value (compare it in the kernel body, where it is a device value)")

    def __index__(self):
        raise KernelError(f"{self} is known only when the kernel runs: it cannot be used where "
                          f"Python needs a number (a static shape or loop count)")

    def __repr__(self) -> str:
        if self.op == "dim":
            return self.args[0]
        sym = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}.get(self.op)
        a, b = self.args
        return f"({a} {sym} {b})" if sym else f"{self.op}({a}, {b})"

    # ------------------------------------------------------------------ reading
    def names(self) -> set[str]:
        """The dims the expression reads."""
        if self.op == "dim":
            return {self.args[0]}
        return set().union(*(a.names() for a in self.args if isinstance(a, DimExpr)))

    def evaluate(self, values: dict[str, int]) -> int:
        """The value for the dims' `values`."""
        if self.op == "dim":
            return values[self.args[0]]
        a, b = (x.evaluate(values) if isinstance(x, DimExpr) else x for x in self.args)
        return _apply(self.op, a, b)

    def to_json(self) -> str:
        """The expression as JSON, as the kernel ABI carries it (tile.extents, tile.grid_exprs)."""
        return json.dumps(self._tree(), separators=(",", ":"))

    def _tree(self):
        if self.op == "dim":
            return ["dim", self.args[0]]
        return [self.op] + [a._tree() if isinstance(a, DimExpr) else a for a in self.args]

    @staticmethod
    def from_json(text: str) -> "DimExpr | int":
        """The expression to_json wrote."""
        def build(tree):
            if isinstance(tree, int) and not isinstance(tree, bool):
                return tree
            if not isinstance(tree, list) or not tree:
                raise ValueError(f"not a dim expression: {tree!r}")
            if tree[0] == "dim" and len(tree) == 2 and isinstance(tree[1], str):
                return DimExpr("dim", (tree[1],))
            if tree[0] in _OPS and len(tree) == 3:
                return combine(tree[0], build(tree[1]), build(tree[2]))
            raise ValueError(f"not a dim expression: {tree!r}")
        return build(json.loads(text))

    # ------------------------------------------------------------------ in a kernel
    def device_value(self):
        """The expression as a device value (i32) in the kernel being built."""
        from tilemlir.dsl.builder import current
        if self.op == "dim":
            return current().dim_value(self.args[0])
        a, b = (x.device_value() if isinstance(x, DimExpr) else x for x in self.args)
        if not hasattr(a, "value"):             # an int first: make it a device value too
            from tilemlir.dsl.values import as_scalar
            from tilemlir.ir import emit
            a = as_scalar(a, emit.i32())
        return _device_op(self.op, a, b)


def dynamic(name: str) -> DimExpr:
    """A dim known only when the kernel runs (see the module docstring): the leading extent of
    the buffers it sizes, read from the arguments at each call."""
    if not isinstance(name, str) or not name.isidentifier():
        raise KernelError(f"T.dynamic takes a name (an identifier), got {name!r}")
    return DimExpr("dim", (name,))


def combine(op: str, a, b):
    """op(a, b) for dims and ints, folded where both are ints."""
    if not isinstance(a, DimExpr) and not isinstance(b, DimExpr):
        return _apply(op, a, b)
    if op in ("add", "sub") and b == 0 and not isinstance(b, DimExpr):
        return a
    if op == "mul" and (b == 1 and not isinstance(b, DimExpr)):
        return a
    if op in ("floordiv", "cdiv") and b == 1 and not isinstance(b, DimExpr):
        return a
    if op in ("floordiv", "mod", "cdiv") and not isinstance(b, DimExpr) and b <= 0:
        raise KernelError(f"{op} of a run-time dim by {b}: the divisor must be positive")
    return DimExpr(op, (a, b))


def ceildiv(a, b):
    """ceil(a / b) for ints, dims or device values (b positive)."""
    from tilemlir.dsl.values import Scalar
    if isinstance(a, Scalar) or isinstance(b, Scalar):
        return (a + b - 1) // b
    return combine("cdiv", DimExpr.of(a), DimExpr.of(b))


def minimum(a, b):
    """The smaller of two ints, dims or device values (T.min)."""
    return _extreme("min", a, b)


def maximum(a, b):
    """The larger of two ints, dims or device values (T.max)."""
    return _extreme("max", a, b)


def _extreme(op: str, a, b):
    from tilemlir.dsl.values import Scalar
    if isinstance(a, Scalar) or isinstance(b, Scalar):
        a = a.device_value() if isinstance(a, DimExpr) else a
        b = b.device_value() if isinstance(b, DimExpr) else b
        return _device_op(op, a, b)
    return combine(op, DimExpr.of(a), DimExpr.of(b))


def _apply(op: str, a: int, b: int) -> int:
    from tilemlir.ir.kernel_abi import apply_dim_op
    return apply_dim_op(op, a, b)


def _device_op(op: str, a, b):
    from mlir.dialects import arith

    from tilemlir.dsl.values import Scalar, coerce
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op == "floordiv":
        return a // b
    if op == "mod":
        return a % b
    if op == "cdiv":
        return (a + b - 1) // b
    x, y = coerce(a if isinstance(a, Scalar) else b, b if isinstance(a, Scalar) else a)
    if not isinstance(a, Scalar):
        x, y = y, x
    return Scalar((arith.minsi if op == "min" else arith.maxsi)(x.value, y.value))


def leading_dims(shape) -> tuple:
    """A buffer shape with a run-time leading extent checked: the other extents are ints."""
    if not shape:
        return shape
    for d in shape[1:]:
        if isinstance(d, DimExpr):
            raise KernelError(f"a run-time extent ({d}) may only lead a buffer's shape, whose "
                              f"row strides then stay static; got shape {tuple(shape)}")
    return shape
