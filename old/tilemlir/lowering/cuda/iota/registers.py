"""iota on register tiles: each thread writes the coordinates of the elements it holds.

Before (the column index of each element of a warpgroup's 64x16 wgmma accumulator, shifted by
the tile's first column %n0):

    "tile.iota"(%cols, %n0) {axis = 1 : i64, scope = "warpgroup"}
        : (!tile.buf<[64, 16], f32, "local",
                     S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]>, f32) -> ()

The layout, evaluated for every thread t of its period (the thread index modulo what its
thread axes repeat with: 1 when it names none, 32 for laneid, the 128 threads of a warpgroup
for wid_in_wg / tid_in_wg, the CTA for warpid / wgid / tx) and every register slot s, gives a
table coordinate[t, s]. It must be base[s] + f(t), with f a sum of fields of the digits of t
(lane bits, warp bits: accesses.digit_fields), checked on every element the threads hold; a
layout that is not of that form is refused with the first element that breaks it. Here
column = 2 (t % 4) + 0, 1, 0, 1, 8, 9, 8, 9 for slots 0..7 (slots 2, 3 and 6, 7 hold the row
8 further down), so:

    %t = gpu.thread_id x                      (remui %t, 128 in a CTA of several warpgroups)
    %f = arith.muli (arith.remui %t, 4), 2    ->  %g = arith.addf (arith.sitofp %f), %n0
    slots 0, 2: %g     slots 1, 3: %g + 1.0     slots 4, 6: %g + 8.0     slots 5, 7: %g + 9.0

f and the offset are computed once per op, then one add per slot. A replicated layout (a row
vector broadcast over an accumulator's rows) gives each holder of a copy its coordinate. dst
holds f32 (exact up to 2**24) or i32: compare and select consume both. Each thread writes only
its own registers, so the scope changes nothing computed; as for the other register
primitives, every thread of a warp / warpgroup / CTA scope must reach the op.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.ir.types import BufferType
from tilemlir.lowering import addresses
from tilemlir.lowering.accesses import ThreadAffine, digit_fields, thread_radices
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.copy.registers import scope_reaches
from tilemlir.lowering.cuda.threads import THREAD_AXES

ELEMENT_TYPES = ("f32", "i32")


@predicate("registers")
def registers(ctx):
    scope = ctx.buffer("dst").scope
    if scope == "local":
        return None
    return f"fills register tiles; dst is in {scope} (iota into registers, then copy)"


@predicate("element_type")
def element_type(ctx):
    elem = str(ctx.buffer("dst").elem)
    if elem in ELEMENT_TYPES:
        return None
    return (f"dst holds {elem}; iota writes f32 (exact up to 2**24) or i32 tiles (iota into "
            f"f32, then tile.cast)")


@predicate("offset_type")
def offset_type(ctx):
    offset, elem = ctx.operand("offset"), ctx.buffer("dst").elem
    if offset is None or offset.type == elem:
        return None
    return f"offset is {offset.type} but dst holds {elem}"


@predicate("axis")
def axis_in_range(ctx):
    axis, rank = ctx.attr("axis"), len(ctx.buffer("dst").shape)
    if 0 <= axis < rank:
        return None
    return f"axis {axis} is out of dst's {rank} dims"


@dataclass(frozen=True)
class IotaPlan:
    period: int                          # f reads the thread index modulo this
    thread: ThreadAffine                 # f(t)
    slots: tuple[tuple[int, int], ...]   # (register slot, base coordinate) per slot in use


def _period(buf: BufferType, block: tuple[int, int, int] | None) -> int:
    """How many threads the layout's thread axes take to repeat."""
    layout = buf.layout
    axes = ({it.axis for it in layout.shard + layout.replica} | set(layout.offset)) - {"m"}
    other = sorted(a for a in axes if a not in THREAD_AXES)
    if other:
        raise Reject(f"dst's layout {layout} places elements on {', '.join(other)}, not in "
                     f"registers")
    period = 1
    for axis in axes:
        divisor, modulus = THREAD_AXES[axis]
        if modulus is None:
            if block is None:
                raise Reject(f"dst's layout {layout} names {axis}, which counts the threads "
                             f"of the whole CTA, but the enclosing gpu.func declares no "
                             f"known_block_size")
            return block[0] * block[1] * block[2]
        period = max(period, divisor * modulus)
    return period


def coordinate_table(buf: BufferType, axis: int, period: int) -> tuple[np.ndarray, np.ndarray]:
    """(coordinate, held), both (period, slots): the coordinate along `axis` of the element
    thread t keeps in register slot s, where `held`. Thread t's axis values are those the
    lowerings compute (laneid = t % 32, wid_in_wg = t / 32 % 4, ...); each copy of a
    replicated layout is held too."""
    layout, shape = buf.layout, tuple(buf.shape)
    values = layout.evaluate_all(shape)
    coords = np.indices(shape)[axis].reshape(-1)
    slots = np.asarray(values.get("m", np.zeros(shape, np.int64))).reshape(-1)
    axes = sorted(a for a in values if a != "m")
    t = np.arange(period, dtype=np.int64)
    own = {}
    for a in axes:
        divisor, modulus = THREAD_AXES[a]
        own[a] = t // divisor if modulus is None else t // divisor % modulus
    nslots = int(slots.max()) + 1 if slots.size else 0
    coordinate = np.zeros((period, nslots), np.int64)
    held = np.zeros((period, nslots), bool)
    for digits in itertools.product(*(range(it.extent) for it in layout.replica)):
        shift = {}
        for it, d in zip(layout.replica, digits):
            shift[it.axis] = shift.get(it.axis, 0) + d * it.stride
        # one integer key per holder (its axis values), matched against each thread's
        key_e, key_t, scale = np.zeros(len(coords), np.int64), np.zeros(period, np.int64), 1
        for a in axes:
            holder = values[a].reshape(-1) + shift.get(a, 0)
            key_e, key_t = key_e + holder * scale, key_t + own[a] * scale
            scale *= int(max(holder.max(), own[a].max())) + 1
        order = np.argsort(key_e, kind="stable")
        ordered = key_e[order]
        lo, hi = np.searchsorted(ordered, key_t, "left"), np.searchsorted(ordered, key_t, "right")
        for thread in range(period):
            mine = order[lo[thread]:hi[thread]]
            s, c = slots[mine], coords[mine]
            clash = held[thread, s] & (coordinate[thread, s] != c)
            if clash.any() or len(np.unique(s)) < len(s):
                raise Reject(f"dst's layout {layout} gives thread {thread} two elements in one "
                             f"register slot")
            held[thread, s] = True
            coordinate[thread, s] = c
    return coordinate, held


def fit_coordinates(coordinate: np.ndarray, held: np.ndarray) -> tuple[ThreadAffine, np.ndarray]:
    """f (digit fields of the thread index) and base (per slot) with coordinate[t, s] =
    base[s] + f(t) wherever held, or raises Reject naming the first element that breaks it.
    A digit's weight is read off any two threads that differ only in that digit (0 and 1) and
    hold a common slot; a digit no such pair shows is left out (no holder depends on it)."""
    period = coordinate.shape[0]
    t = np.arange(period, dtype=np.int64)
    weights = []
    divisor = 1
    for radix in thread_radices(period):
        low = t[(t // divisor % radix == 0) & (t + divisor < period)]
        pairs = np.argwhere(held[low] & held[low + divisor])
        if len(pairs):
            i, s = pairs[0]
            weights.append(int(coordinate[low[i] + divisor, s] - coordinate[low[i], s]))
        else:
            weights.append(0)
        divisor *= radix
    thread = digit_fields(weights, period)
    f = thread.evaluate(t)
    first = np.argmax(held, axis=0)                         # a holder of each slot
    base = coordinate[first, np.arange(coordinate.shape[1])] - f[first]
    wrong = np.argwhere(held & (coordinate != base[None, :] + f[:, None]))
    if len(wrong):
        bad_t, bad_s = (int(x) for x in wrong[0])
        raise Reject(f"is not a per-slot constant plus a sum of fields of the thread index: "
                     f"thread {bad_t} (of the {period} it repeats over) holds coordinate "
                     f"{int(coordinate[bad_t, bad_s])} in slot "
                     f"{bad_s}, where the fit from the other threads gives "
                     f"{int(base[bad_s] + f[bad_t])}")
    return thread, base


@functools.lru_cache(maxsize=256)
def plan_iota(buf: BufferType, axis: int, block: tuple[int, int, int] | None) -> IotaPlan:
    period = _period(buf, block)
    coordinate, held = coordinate_table(buf, axis, period)
    try:
        thread, base = fit_coordinates(coordinate, held)
    except Reject as err:
        raise Reject(f"the coordinate along axis {axis} of dst's layout {buf.layout} "
                     f"{err.reason}") from None
    used = np.flatnonzero(held.any(axis=0))
    return IotaPlan(period, thread, tuple((int(s), int(base[s])) for s in used))


def _add(a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.addf(a, b) if isinstance(a.type, ir.FloatType) else arith.addi(a, b)


def _emit(ctx, p: IotaPlan) -> None:
    dst = windows.resolve(ctx.operand("dst"))
    elem = dst.type.elem
    storage = addresses.storage(dst)
    part = None                  # f(t) + offset, in dst's element type; None: zero
    if p.thread.fields:
        tid = emit.thread_id_x()
        block = ctx.block_size
        t = tid if block is not None and block[0] <= p.period else emit.rem(tid, p.period)
        f = emit.to_i32(p.thread.emit(t))
        part = arith.sitofp(elem, f) if isinstance(elem, ir.FloatType) else f
    offset = ctx.operand("offset")
    if offset is not None:
        part = offset if part is None else _add(part, offset)
    for slot, base in p.slots:
        if part is None:
            value = emit.const(base, elem)
        else:
            value = part if base == 0 else _add(part, emit.const(base, elem))
        emit.store(value, addresses.slot_pointer(dst, slot, storage))


@register("iota", name="registers", priority=0,
          when=[registers, element_type, offset_type, axis_in_range, scope_reaches])
def lower_iota(ctx):
    """Each thread: f(thread index) + offset once, then one add per register slot."""
    dst = fragments.register_ref(ctx, "dst").type
    p = plan_iota(dst, ctx.attr("axis"), ctx.block_size)
    return lambda: _emit(ctx, p)
