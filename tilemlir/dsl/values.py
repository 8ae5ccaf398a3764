"""Device scalars in the kernel language: an MLIR Value with Python operators.

Arithmetic between a device scalar and a Python number turns the number into a constant of the
scalar's type. Index values (thread ids, loop counters) and i32 values mix: the i32 side is
widened to index. Comparisons give i1 values, usable as `if` conditions.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from tilemlir.ir import emit

DTYPES = {
    "float16": "f16", "f16": "f16", "half": "f16", "bfloat16": "bf16", "bf16": "bf16",
    "float32": "f32", "f32": "f32", "float": "f32", "float64": "f64", "f64": "f64",
    "int8": "i8", "i8": "i8", "uint8": "i8", "int16": "i16", "i16": "i16", "int32": "i32",
    "i32": "i32", "uint32": "i32", "int64": "i64", "i64": "i64", "uint64": "i64", "bool": "i1",
    "index": "index",
    # 8-bit floats (torch's names, and MLIR's): e4m3 without infinities, e5m2 with them
    "float8_e4m3fn": "f8E4M3FN", "f8E4M3FN": "f8E4M3FN",
    "float8_e5m2": "f8E5M2", "f8E5M2": "f8E5M2",
}


def dtype_bits(dtype) -> int:
    """Bit width of a dtype name ('float16', 'bf16', 'uint32' ...), without an MLIR context."""
    name = DTYPES.get(str(dtype))
    if name is None:
        raise KernelError(f"unknown dtype '{dtype}'; known: {', '.join(sorted(DTYPES))}")
    if name == "index":
        return 64
    if name == "i1":
        return 1
    if name.startswith("f8"):
        return 8
    return int(name[2:] if name[:2] == "bf" else name[1:])


class KernelError(Exception):
    """An error in a kernel body; the message starts with the Python file and line."""


def mlir_type(dtype) -> ir.Type:
    """An MLIR element type from 'float16', 'f16', 'uint32', an ir.Type ..."""
    if isinstance(dtype, ir.Type):
        return dtype
    name = DTYPES.get(str(dtype))
    if name is None:
        raise KernelError(f"unknown dtype '{dtype}'; known: {', '.join(sorted(DTYPES))}")
    return ir.Type.parse(name)


def _is_int(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.IndexType))


class Scalar:
    """A device scalar (index, iN or floating point).

    Integer scalars also carry an affine form (sum of coeff * opaque value, plus a constant) so
    that `A[m:m + 128]` or `B[i * 64:(i + 1) * 64]` have a static extent.
    """

    __slots__ = ("value", "type", "affine")

    def __init__(self, value: ir.Value, affine=None):
        self.value = value
        self.type: ir.Type = value.type     # read once: each Value.type makes a new Type object
        if affine is None and _is_int(self.type):
            affine = ((value, 1),), 0
        self.affine = affine

    def __repr__(self) -> str:
        return f"Scalar({self.type})"

    def __bool__(self):
        raise KernelError("a device value has no Python truth value here; use it in an `if` "
                          "statement of the kernel (it becomes scf.if) or compare it explicitly")

    def __index__(self):
        raise KernelError("a device value cannot be used where Python needs a static integer")

    # -- arithmetic
    def _binary(self, other, int_op: str, float_op: str | None, reverse=False):
        """arith.`int_op` or arith.`float_op` of both operands, in their common type."""
        a, b = coerce(self, other)
        if reverse:
            a, b = b, a
        if _is_int(a.type):
            return Scalar(emit.generic(f"arith.{int_op}", [a.value, b.value], a.type),
                          _affine_of(int_op, a, b))
        if float_op is None:
            raise KernelError(f"operator not defined for {a.type}")
        return Scalar(emit.generic(f"arith.{float_op}", [a.value, b.value], a.type))

    def _identity(self, other, neutral) -> bool:
        """x + 0, x - 0, x * 1 ... are x itself (keeps the IR short)."""
        return isinstance(other, int) and not isinstance(other, bool) and other == neutral

    def __add__(self, o): return self if self._identity(o, 0) else self._binary(o, "addi", "addf")
    def __radd__(self, o): return self if self._identity(o, 0) else self._binary(o, "addi", "addf", True)
    def __sub__(self, o): return self if self._identity(o, 0) else self._binary(o, "subi", "subf")
    def __rsub__(self, o): return self._binary(o, "subi", "subf", True)
    def __mul__(self, o): return self if self._identity(o, 1) else self._binary(o, "muli", "mulf")
    def __rmul__(self, o): return self if self._identity(o, 1) else self._binary(o, "muli", "mulf", True)
    def __floordiv__(self, o): return self._binary(o, "divui", None)
    def __rfloordiv__(self, o): return self._binary(o, "divui", None, True)
    def __truediv__(self, o): return self._binary(o, "divui", "divf")
    def __mod__(self, o): return self._binary(o, "remui", "remf")
    def __rmod__(self, o): return self._binary(o, "remui", "remf", True)
    def __xor__(self, o): return self._binary(o, "xori", None)
    def __rxor__(self, o): return self._binary(o, "xori", None, True)
    def __and__(self, o): return self._binary(o, "andi", None)
    def __rand__(self, o): return self._binary(o, "andi", None, True)
    def __or__(self, o): return self._binary(o, "ori", None)
    def __ror__(self, o): return self._binary(o, "ori", None, True)
    def __lshift__(self, o): return self._binary(o, "shli", None)
    def __rshift__(self, o): return self._binary(o, "shrui", None)

    def __neg__(self):
        return Scalar(emit.const(0, self.type)) - self

    # -- comparisons (unsigned for integers: thread ids and offsets are never negative)
    def _compare(self, other, ipred, fpred):
        a, b = coerce(self, other)
        name, predicate = ("arith.cmpi", ipred) if _is_int(a.type) else ("arith.cmpf", fpred)
        return Scalar(emit.generic(name, [a.value, b.value], emit.i1(),
                                   {"predicate": ir.IntegerAttr.get(emit.i64(), int(predicate))}))

    def __eq__(self, o): return self._compare(o, arith.CmpIPredicate.eq, arith.CmpFPredicate.OEQ)
    def __ne__(self, o): return self._compare(o, arith.CmpIPredicate.ne, arith.CmpFPredicate.UNE)
    def __lt__(self, o): return self._compare(o, arith.CmpIPredicate.ult, arith.CmpFPredicate.OLT)
    def __le__(self, o): return self._compare(o, arith.CmpIPredicate.ule, arith.CmpFPredicate.OLE)
    def __gt__(self, o): return self._compare(o, arith.CmpIPredicate.ugt, arith.CmpFPredicate.OGT)
    def __ge__(self, o): return self._compare(o, arith.CmpIPredicate.uge, arith.CmpFPredicate.OGE)

    __hash__ = None


def constant(value, type_: ir.Type) -> Scalar:
    if isinstance(value, bool):
        value = int(value)
    if not _is_int(type_):
        return Scalar(emit.const(value, type_))
    if not float(value).is_integer():
        raise KernelError(f"{value!r} is not an integer of type {type_}")
    return Scalar(emit.const(value, type_), ((), int(value)))


def _affine_of(op: str, a: Scalar, b: Scalar):
    """The affine form of a + b, a - b or a * constant (op "addi", "subi", "muli"); None when
    not affine."""
    if a.affine is None or b.affine is None:
        return None
    (ta, ca), (tb, cb) = a.affine, b.affine
    if op in ("addi", "subi"):
        sign = 1 if op == "addi" else -1
        terms = dict(ta)
        for v, k in tb:
            terms[v] = terms.get(v, 0) + sign * k
        return tuple((v, k) for v, k in terms.items() if k), ca + sign * cb
    if op == "muli" and (not ta or not tb):
        (terms, c), k = (b.affine, ca) if not ta else (a.affine, cb)
        return tuple((v, x * k) for v, x in terms if x * k), c * k
    return None


def static_difference(stop, start) -> int | None:
    """stop - start when it does not depend on any device value, else None."""
    if isinstance(stop, int) and isinstance(start, int):
        return stop - start
    fa = ((), stop) if isinstance(stop, int) else getattr(stop, "affine", None)
    fb = ((), start) if isinstance(start, int) else getattr(start, "affine", None)
    if fa is None or fb is None:
        return None
    terms = dict(fa[0])
    for v, k in fb[0]:
        terms[v] = terms.get(v, 0) - k
    if any(terms.values()):
        return None
    return fa[1] - fb[1]


def cast_to(s: Scalar, type_: ir.Type) -> Scalar:
    """Integer width changes (index <-> iN) and int -> float; the value's type otherwise."""
    t = s.type
    if t == type_:
        return s
    if _is_int(t) and _is_int(type_):
        if isinstance(t, ir.IndexType) or isinstance(type_, ir.IndexType):
            return Scalar(arith.index_cast(type_, s.value), s.affine)
        tw, uw = ir.IntegerType(t).width, ir.IntegerType(type_).width
        if tw < uw:
            return Scalar(arith.extui(type_, s.value))
        return Scalar(arith.trunci(type_, s.value))
    if _is_int(t) and isinstance(type_, ir.FloatType):
        return Scalar(arith.uitofp(type_, cast_to(s, ir.IntegerType.get_signless(64)).value))
    if isinstance(t, ir.FloatType) and isinstance(type_, ir.FloatType):
        if ir.FloatType(t).width < ir.FloatType(type_).width:
            return Scalar(arith.extf(type_, s.value))
        return Scalar(arith.truncf(type_, s.value))
    raise KernelError(f"cannot convert {t} to {type_}")


def coerce(a, b) -> tuple[Scalar, Scalar]:
    """Both operands as Scalars of one type."""
    if not isinstance(a, Scalar):
        a, b = b, a
        swapped = True
    else:
        swapped = False
    if not isinstance(b, Scalar) and hasattr(b, "device_value"):     # a run-time dim
        b = b.device_value()
    if not isinstance(b, Scalar):
        if not isinstance(b, (int, float, bool)):
            raise KernelError(f"cannot combine a device value with {type(b).__name__}")
        b = constant(b, a.type)
    elif a.type != b.type:
        ta, tb = a.type, b.type
        if isinstance(tb, ir.IndexType) and _is_int(ta):
            a = cast_to(a, tb)
        elif isinstance(ta, ir.IndexType) and _is_int(tb):
            b = cast_to(b, ta)
        elif _is_int(ta) and _is_int(tb):
            wide = ta if ir.IntegerType(ta).width >= ir.IntegerType(tb).width else tb
            a, b = cast_to(a, wide), cast_to(b, wide)
        else:
            raise KernelError(f"cannot combine {ta} and {tb} values; convert one explicitly")
    return (b, a) if swapped else (a, b)


def as_scalar(v, type_: ir.Type | None = None) -> Scalar:
    """A Scalar from a Scalar or a Python number (index by default)."""
    if not isinstance(v, Scalar) and hasattr(v, "device_value"):     # a run-time dim
        v = v.device_value()
    if isinstance(v, Scalar):
        return cast_to(v, type_) if type_ is not None else v
    if isinstance(v, (bool, int, float)):
        return constant(v, type_ or (ir.IndexType.get() if isinstance(v, int) else ir.F32Type.get()))
    raise KernelError(f"expected a number or a device value, got {type(v).__name__}")


def index_of(v) -> int | ir.Value:
    """An index for address arithmetic: a Python int stays static."""
    if isinstance(v, bool):
        raise KernelError("a boolean is not an index")
    if isinstance(v, int):
        return v
    if not isinstance(v, Scalar) and hasattr(v, "device_value"):     # a run-time dim
        v = v.device_value()
    if isinstance(v, Scalar):
        return cast_to(v, ir.IndexType.get()).value
    raise KernelError(f"expected an index, got {type(v).__name__}")
