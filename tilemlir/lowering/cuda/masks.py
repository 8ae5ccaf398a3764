"""Masks of the masked copies (copy_masked, copy_async_masked): which accesses of a window lie
inside its bounds, and the values that stand in for those that do not.

A masked copy carries one bound per dim of its window, and optionally a lower bound per dim
after them (operands dst, src, bounds..., lower bounds...); element i is in range when
lower[d] <= i[d] < bounds[d] for every d (lower[d] = 0 without lower bounds). The variants move
the window in accesses of n elements along its last dim (a 16-byte chunk, a run of register
slots); an access is either wholly in range or wholly out, which holds when n divides the last
dim's bounds (`last_dim_width` narrows n until the value analysis proves it), or the access is
split at the edge (`in_range(..., last_span=n)` tests a run of register slots whole; one that
straddles a bound goes element by element: copy_masked/registers.py). A dim whose bound is a constant at least its extent (and whose lower
bound is a constant at most 0) needs no test: with every bound so, the masked variants emit
what the unmasked ones do.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, llvm

from tilemlir.analysis.values import ValueAnalysis
from tilemlir.dispatch.registry import predicate
from tilemlir.ir import emit
from tilemlir.ir.emit import Index
from tilemlir.ir.types import f8_bits, is_f8, llvm_type


def _rank(ctx) -> int:
    return len(ctx.buffer("dst").shape)


def bound_values(ctx) -> list[ir.Value]:
    """The `bounds` operands (after dst and src): the extent in range along each dim."""
    return list(ctx.op.operands)[2:2 + _rank(ctx)]


def lower_values(ctx) -> list[ir.Value] | None:
    """The lower bounds (after the bounds), or None: every dim in range from 0."""
    lower = list(ctx.op.operands)[2 + _rank(ctx):]
    return lower or None


@predicate("bounds_per_dim")
def bounds_per_dim(ctx):
    """One bound per dim of the window (and, if any, one lower bound per dim)."""
    rank, given = _rank(ctx), len(ctx.op.operands) - 2
    if given in (rank, 2 * rank):
        return None
    return f"the window has {rank} dims but the op has {given} bounds"


def tested_dims(ctx) -> list[int]:
    """The dims whose bound may cut the window from above (all but those with a constant bound
    at least the extent)."""
    shape = ctx.buffer("dst").shape
    out = []
    for d, value in enumerate(bound_values(ctx)):
        b = emit.int_constant(value)
        if b is None or b < shape[d]:
            out.append(d)
    return out


def tested_lower_dims(ctx) -> list[int]:
    """The dims whose lower bound may cut the window (all but those with a constant lower bound
    at most 0)."""
    lower = lower_values(ctx) or []
    out = []
    for d, value in enumerate(lower):
        b = emit.int_constant(value)
        if b is None or b > 0:
            out.append(d)
    return out


def last_dim_width(ctx, n: int) -> int:
    """The largest power of two up to n that divides the last dim's bounds (as far as the value
    analysis knows them), so that an access of that many elements is wholly in or out."""
    last = _rank(ctx) - 1
    values = []
    if last in tested_dims(ctx):
        values.append(bound_values(ctx)[last])
    if last in tested_lower_dims(ctx):
        values.append(lower_values(ctx)[last])
    for value in values:
        multiple = ValueAnalysis().multiple(value)
        if multiple != 0:                  # (a bound of 0 cuts nothing partially)
            n = min(n, multiple & -multiple)
    return n


def unravel(flat: Index, shape) -> list[Index]:
    """The coordinates of row-major element `flat` of `shape` (index values or ints)."""
    coords = []
    for d in range(len(shape)):
        inner = math.prod(shape[d + 1:])
        c = emit.div(flat, inner) if inner > 1 else flat
        coords.append(emit.rem(c, shape[d]) if d > 0 else c)
    return coords


def in_range(ctx, coords: list[Index], last_span: int = 1,
             skip_last: bool = False) -> ir.Value | None:
    """i1: the element at `coords` (of the window) is in range, and with last_span > 1 so are
    the last_span - 1 after it along the last dim (skip_last: the last dim is not tested, its
    coordinate unused); None when no dim is tested."""
    bounds, lower = bound_values(ctx), lower_values(ctx)
    last = _rank(ctx) - 1
    tests = []
    for d in tested_lower_dims(ctx):
        if not (skip_last and d == last):
            tests.append(arith.cmpi(arith.CmpIPredicate.sge, emit.as_index(coords[d]),
                                    lower[d]))
    for d in tested_dims(ctx):
        if skip_last and d == last:
            continue
        c = coords[d] if d != last or last_span == 1 else emit.add(coords[d], last_span - 1)
        tests.append(arith.cmpi(arith.CmpIPredicate.slt, emit.as_index(c), bounds[d]))
    result = None
    for test in tests:
        result = test if result is None else arith.andi(result, test)
    return result


def fill_value(ctx, type_: ir.Type) -> ir.Value:
    """The `fill` attribute (0 without one) as a value of `type_` (a scalar or a vector)."""
    elem = ir.VectorType(type_).element_type if isinstance(type_, ir.VectorType) else type_
    attr = ctx.op.attributes["fill"] if "fill" in ctx.op.attributes else None
    if is_f8(elem):                       # its bits, as the i8 the loads give
        bits = f8_bits(ir.FloatAttr(attr).value if attr is not None else 0.0, elem)
        type_, elem = llvm_type(type_), ir.IntegerType.get_signless(8)
        scalar = ir.IntegerAttr.get(elem, bits)
    elif isinstance(elem, ir.IntegerType):
        value = ir.IntegerAttr(attr).value if attr is not None else 0
        scalar = ir.IntegerAttr.get(elem, value)
    else:
        value = ir.FloatAttr(attr).value if attr is not None else 0.0
        scalar = ir.FloatAttr.get(elem, value)
    if isinstance(type_, ir.VectorType):
        return arith.constant(type_, ir.DenseElementsAttr.get_splat(type_, scalar))
    return arith.constant(type_, scalar)


def guarded_load(type_: ir.Type, pointer: ir.Value, safe: ir.Value, valid: ir.Value | None,
                 fill: ir.Value, align: int) -> ir.Value:
    """load(pointer) where `valid`, else `fill`; the load itself reads `safe` (an address known
    to be readable: the buffer's first element) when not valid, so that it never faults."""
    if valid is None:
        return emit.load(type_, pointer, align=align)
    address = llvm.select(valid, pointer, safe)
    return arith.select(valid, emit.load(type_, address, align=align), fill)
