"""Thread-axis values of the executing thread, and the elements a register layout gives it.

Register layouts name their holders on thread axes. To move a fragment between registers and
memory, each thread needs the inverse: for each of its register slots, which logical element
it holds. For the iterators on memory ("m") the digits are enumerated statically (one unrolled
access per slot); for the iterators on thread axes the digits are read off the thread's own
axis values, which requires those iterators to form an exact mixed radix on their axis
(strides 1, e1, e1*e2, ...), as every hardware fragment does.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu

from tilemlir.ir import emit
from tilemlir.layout import LayoutError, TileLayout
from tilemlir.ir.emit import Index

# Thread axes as (divisor, modulus) of the linear thread index in the CTA (None: unbounded).
THREAD_AXES = {"laneid": (1, 32), "wid_in_wg": (32, 4), "tid_in_wg": (1, 128), "wgid": (128, None),
               "warpid": (32, None), "tx": (1, None)}


class ThreadEnv:
    """Lazily built thread-axis values of the current thread (at the insertion point)."""

    def __init__(self):
        self._tid = None
        self._values: dict[str, Index] = {}

    def axis(self, name: str) -> Index:
        if name not in THREAD_AXES:
            raise LayoutError(f"axis '{name}' is not a thread axis")
        if name not in self._values:
            if self._tid is None:
                self._tid = emit.thread_id_x()
            div, mod = THREAD_AXES[name]
            v = emit.div(self._tid, div)
            self._values[name] = emit.rem(v, mod) if mod else v
        return self._values[name]


@dataclass
class OwnedElement:
    slot: int                 # memory-axis value (register slot), static
    coord: list[Index]        # the logical coordinate this thread holds in that slot


@dataclass
class Ownership:
    elements: list[OwnedElement]
    guard: ir.Value | None    # i1: this thread holds elements at all (None: every thread does)


def thread_iterators(layout: TileLayout, replicas: bool = False) -> dict[str, list]:
    """The layout's iterators per thread axis, checked to be exact mixed radices (no IR built).
    With `replicas`, a replicated layout is accepted and its replica iterators (which move a
    copy to other threads) count in the radix too."""
    if layout.is_replicated() and not replicas:
        raise LayoutError(f"{layout}: replicated register layouts are not supported here")
    if layout.swizzle is not None:
        raise LayoutError(f"{layout}: register layouts cannot be swizzled")
    by_axis: dict[str, list] = {}
    for it in layout.shard + (layout.replica if replicas else ()):
        if it.axis in THREAD_AXES:
            by_axis.setdefault(it.axis, []).append(it)
        elif it.axis != "m":
            raise LayoutError(f"{layout}: axis {it.axis} cannot be held in registers")
    for axis, iters in by_axis.items():
        expected = 1
        for it in sorted(iters, key=lambda i: i.stride):
            if it.stride != expected:
                raise LayoutError(f"{layout}: the {axis} iterators are not an exact mixed radix "
                                  f"(stride {it.stride} where {expected} was needed)")
            expected *= it.extent
    return by_axis


def _thread_digits(layout: TileLayout, env: ThreadEnv, replicas: bool = False):
    """Digit values of the thread-axis iterators for this thread, and a range guard (replica
    iterators, with `replicas`, widen the range: every copy's holder takes part)."""
    digits = {}
    guards = []
    for axis, iters in thread_iterators(layout, replicas).items():
        span = 1
        for it in iters:
            span *= it.extent
        offset = layout.offset.get(axis, 0)
        value = emit.add(env.axis(axis), -offset) if offset else env.axis(axis)
        for it in iters:
            digits[id(it)] = emit.rem(emit.div(value, it.stride), it.extent)
        bound = THREAD_AXES[axis][1]
        if offset or bound is None or span < bound:
            # Threads outside [offset, offset + span) hold nothing.
            guards.append(arith.cmpi(arith.CmpIPredicate.ult, emit.as_index(value),
                                     emit.const_index(span)))
    guard = None
    for g in guards:
        guard = g if guard is None else arith.andi(guard, g)
    return digits, guard


def owned_elements(layout: TileLayout, shape, env: ThreadEnv,
                   replicas: bool = False) -> Ownership:
    """The (slot, coordinate) pairs the current thread holds, slot-ordered; with `replicas`, a
    replicated layout's copies too (each holder of a copy gets the element's coordinate)."""
    groups = layout.group(tuple(shape))
    digits, guard = _thread_digits(layout, env, replicas)
    memory_iters = [it for g in groups for it in g if it.axis == "m"]
    elements = []
    for combo in itertools.product(*(range(it.extent) for it in memory_iters)):
        chosen = {id(it): c for it, c in zip(memory_iters, combo)}
        slot = layout.offset.get("m", 0) + sum(c * it.stride for it, c in zip(memory_iters, combo))
        coord: list[Index] = []
        for g in groups:
            x: Index = 0
            inner = 1
            for it in reversed(g):
                d = chosen[id(it)] if it.axis == "m" else digits[id(it)]
                x = emit.add(x, emit.mul(d, inner))
                inner *= it.extent
            coord.append(x)
        elements.append(OwnedElement(slot, coord))
    elements.sort(key=lambda e: e.slot)
    return Ownership(elements, guard)


def linear_thread_index(block: tuple[int, int, int]) -> Index:
    """The calling thread's linear index in the block (x fastest)."""
    bx, by, bz = block
    tid: Index = emit.thread_id_x()
    if by * bz > 1:
        tid = emit.add(tid, emit.mul(gpu.thread_id(gpu.Dimension.y), bx))
        if bz > 1:
            tid = emit.add(tid, emit.mul(gpu.thread_id(gpu.Dimension.z), bx * by))
    return tid


def scope_thread_index(threads: int, block: tuple[int, int, int]) -> Index:
    """The calling thread's index in its scope of `threads` consecutive threads (the linear
    thread index in the block, modulo `threads`)."""
    tid = linear_thread_index(block)
    return tid if block[0] * block[1] * block[2] == threads else emit.rem(tid, threads)


def scope_index(threads: int, block: tuple[int, int, int]) -> Index:
    """Which scope of `threads` consecutive threads the calling thread is in (its warpgroup,
    for 128): the linear thread index divided by `threads`; 0 when the block is one scope."""
    if block[0] * block[1] * block[2] == threads:
        return 0
    return emit.div(linear_thread_index(block), threads)
