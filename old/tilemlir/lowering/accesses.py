"""Addresses of cooperative accesses: one thread part built once, a static part per access.

The copies that move whole rows or 16-byte chunks (ldmatrix, vector and cp.async copies) know
statically which element each thread reaches in each access. They describe it as a table of
pre-swizzle offsets, one row per access and one column per thread, and `plan_accesses` turns it
into addresses that are cheap at run time: a thread part built once from the thread index
(shared by every access and every copy op after CSE) and a static part per access that lands
in the instruction's immediate offset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, llvm

from tilemlir.analysis.alignment import dynamic_multiple, root_alignment
from tilemlir.ir import emit
from tilemlir.ir.emit import Index
from tilemlir.ir.windows import BufferRef
from tilemlir.layout import LayoutError
from tilemlir.lowering.addresses import apply_swizzle, dynamic_offset

# A cooperative access (ldmatrix row addresses, the chunk a thread copies) puts thread t at an
# offset that is, for every layout that matters, a sum of per-digit terms of t: lane bits that
# step along a row, warp bits that step over rows, ... Fitting that form once lets the address be
# built as one thread-dependent value (computed once, shared by all accesses through CSE) plus a
# static displacement per access (folded into the instruction's immediate offset).


@dataclass(frozen=True)
class DigitField:
    """((t // divisor) % extent) * weight; extent None: the top digit of t (no modulus)."""
    divisor: int
    extent: int | None
    weight: int


@dataclass(frozen=True)
class ThreadAffine:
    """value(t) - value(0) as a sum of digit fields of the thread index t."""
    fields: tuple[DigitField, ...]

    def evaluate(self, t):
        total = t * 0
        for f in self.fields:
            digit = t // f.divisor
            total = total + (digit if f.extent is None else digit % f.extent) * f.weight
        return total

    def emit(self, t: Index) -> Index:
        total: Index = 0
        for f in self.fields:
            digit = emit.div(t, f.divisor)
            if f.extent is not None:
                digit = emit.rem(digit, f.extent)
            total = emit.add(total, emit.mul(digit, f.weight))
        return total


def thread_radices(threads: int) -> list[int]:
    """The digits a thread index is split into: its binary digits, then any odd factor left."""
    radices = []
    while threads % 2 == 0 and threads > 1:
        radices.append(2)
        threads //= 2
    if threads > 1:
        radices.append(threads)
    return radices


def fit_thread_affine(values) -> ThreadAffine | None:
    """The digit fields reproducing `values[t] - values[0]` for every t, or None if there are none.

    `values` holds one integer per thread index 0..len-1. Neighbouring digits whose weights
    continue one another (weight' = radix * weight) merge into one field, so a lane stepping
    along 8 rows becomes `(t % 8) * row_stride` rather than three bit terms.
    """
    values = np.asarray(values, dtype=np.int64)
    count = len(values)
    weights = []
    divisor = 1
    for radix in thread_radices(count):
        weights.append(int(values[divisor] - values[0]))
        divisor *= radix
    fit = digit_fields(weights, count)
    if not np.array_equal(fit.evaluate(np.arange(count, dtype=np.int64)), values - values[0]):
        return None
    return fit


def digit_fields(weights: list[int], count: int) -> ThreadAffine:
    """The sum of weights[i] * (digit i of t), t in 0..count-1 split by `thread_radices(count)`,
    with neighbouring digits whose weights continue one another merged into one field."""
    fields: list[list] = []
    divisor = 1
    for radix, weight in zip(thread_radices(count), weights):
        last = fields[-1] if fields else None
        if last is not None and last[2] * last[1] == weight:
            last[1] *= radix                       # the same stride continues
        else:
            fields.append([divisor, radix, weight])
        divisor *= radix
    return ThreadAffine(tuple(DigitField(d, None if d * e == count else e, w)
                              for d, e, w in fields if w))


@dataclass(frozen=True)
class _Access:
    thread: object          # ThreadAffine: the thread part before the swizzle
    high: int               # static offset, a multiple of the swizzle period (added last)
    low: int                # static offset below the period (before the swizzle)
    mode: str               # "add": + delta after the swizzled thread part; "xor": ^ delta;
    delta: int              # "swizzle": swizzle(thread part + low) per access


class AccessPlan:
    """Addresses of a buffer's accesses: thread part once, static part per access.

    With offset(j, t) = swizzle(B + S_j + F_j(t)) for access j of thread t (B the dynamic slice
    offset, S_j static, F_j the fitted thread part) and a swizzle of period P:
      - no swizzle: ptr + (B + F_j(t)) + S_j;
      - P divides B (and S_j = H_j + L_j, P | H_j): B commutes with the swizzle, so the
        access is (B + swizzle(F_j(t))) + d_j + H_j, or (B + swizzle(F_j(t))) ^ x_j + H_j, when
        swizzle(L_j + F_j(t)) differs from swizzle(F_j(t)) by a constant d_j (or XOR x_j) for all t;
      - otherwise swizzle(B + F_j(t) + L_j) + H_j, the swizzle computed per access.
    """

    def __init__(self, ref: BufferRef, accesses: list[_Access]):
        self.ref = ref
        self.accesses = accesses

    def pointers(self, t: Index, base: ir.Value) -> list[ir.Value]:
        """One pointer per access for thread index `t`, built at the insertion point."""
        sw = self.ref.layout.swizzle
        dynamic = dynamic_offset(self.ref)
        elem = self.ref.type.elem
        parts: dict = {}

        def part(thread, swizzled: bool) -> Index:
            key = (thread, swizzled)
            if key not in parts:
                value = thread.emit(t)
                parts[key] = emit.add(dynamic, apply_swizzle(self.ref.layout, value)
                                      if swizzled else value)
            return parts[key]

        elem_bytes = max(self.ref.type.elem_bits // 8, 1)
        addresses: dict = {}

        def flipped(thread, delta: int) -> ir.Value:
            """&base[part ^ delta] as (address ^ delta bytes): one XOR per access. Exact when
            the storage is aligned past delta, so the XOR only touches the offset's bits."""
            if thread not in addresses:
                addresses[thread] = llvm.ptrtoint(emit.i64(),
                                                  emit.gep(base, elem, part(thread, True)))
            flipped = arith.xori(addresses[thread], emit.const(delta * elem_bytes, emit.i64()))
            return llvm.inttoptr(base.type, flipped)

        result = []
        for a in self.accesses:
            if a.mode == "swizzle":
                offset = apply_swizzle(self.ref.layout, emit.add(part(a.thread, False), a.low))
                pointer, static = emit.gep(base, elem, offset), a.high
            elif a.mode == "xor" and root_alignment(self.ref) > a.delta * elem_bytes:
                pointer, static = flipped(a.thread, a.delta), a.high
            elif a.mode == "xor":
                offset = emit.xor(part(a.thread, True), a.delta)
                pointer, static = emit.gep(base, elem, offset), a.high
            else:
                pointer = emit.gep(base, elem, part(a.thread, sw is not None))
                static = a.high + a.delta
            result.append(emit.gep(pointer, elem, static))
        return result


def plan_accesses(ref: BufferRef, rows: list) -> AccessPlan:
    """The AccessPlan of `rows[j][t]`, access j's pre-swizzle static offset for thread t
    (static_base included, dynamic slice offsets not); a row may be shorter than the thread
    count when only its first threads access. LayoutError when a row is not an affine function
    of the thread index."""
    sw = ref.layout.swizzle
    commutes = sw is None or dynamic_multiple(ref) % sw.period == 0
    accesses = []
    for j, row in enumerate(rows):
        row = np.asarray(row, dtype=np.int64)
        fit = fit_thread_affine(row)
        if fit is None:
            raise LayoutError(f"the threads' offsets in access {j} ({row[:8].tolist()}...) are "
                              f"not an affine function of the thread index")
        static = int(row[0])
        if sw is None:
            accesses.append(_Access(fit, static, 0, "add", 0))
            continue
        high, low = static - static % sw.period, static % sw.period
        mode, delta = "swizzle", 0
        if commutes:
            thread = fit.evaluate(np.arange(len(row), dtype=np.int64))
            plain, moved = sw.apply(thread), sw.apply(thread + low)
            if (moved - plain == moved[0] - plain[0]).all():
                mode, delta = "add", int(moved[0] - plain[0])
            elif ((moved ^ plain) == (moved[0] ^ plain[0])).all() and \
                    int(moved[0] ^ plain[0]) < sw.period:
                mode, delta = "xor", int(moved[0] ^ plain[0])
        accesses.append(_Access(fit, high, low, mode, delta))
    return AccessPlan(ref, accesses)
