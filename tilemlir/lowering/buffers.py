"""From a tile buffer value to addresses: the storage behind it and where each element lives.

A `!tile.buf` value is a window into the storage of a *root* buffer (tile.global,
tile.alloc_shared, tile.alloc_local, tile.tmem). tile.slice narrows the window (its static
offsets are already folded into the result type's layout; its dynamic offsets add to a linear
base offset on the memory axis), tile.view re-reads the same storage with another shape and
layout. `resolve` walks that chain without building IR; the emitters below build the address
arithmetic at the current insertion point.

Storage is an LLVM pointer (global: !llvm.ptr<1>, shared: !llvm.ptr<3>, registers: the
function's alloca) or, for tensor memory, the i32 TMEM address. A memory offset is counted in
elements; the layout's swizzle applies to the whole (base + layout) offset, because the hardware
swizzles absolute shared-memory addresses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from mlir import ir
from mlir.dialects import arith, llvm

from tilemlir.analysis.values import ValueAnalysis
from tilemlir.ir import emit
from tilemlir.ir.dialect import DYNAMIC_OFFSET
from tilemlir.ir.types import BufferType, parse_buffer_type
from tilemlir.layout import LayoutError, TileLayout
from tilemlir.ir.emit import Index

ROOT_OPS = ("tile.global", "tile.alloc_shared", "tile.alloc_local", "tile.tmem")
ADDRESS_SPACE = {"global": 1, "shared": 3, "local": 0}


@dataclass
class BufferRef:
    """A buffer value with the chain that leads to its storage."""
    value: ir.Value
    type: BufferType
    root: ir.Value
    # Dynamic contributions to the linear memory offset: (source buffer type, dim, index value)
    # for each dynamic tile.slice offset, plus static memory offsets a view drops.
    dynamic: list[tuple[BufferType, int, ir.Value]] = field(default_factory=list)
    static_base: int = 0

    @property
    def scope(self) -> str:
        return self.type.scope

    @property
    def layout(self) -> TileLayout:
        return self.type.layout

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def has_dynamic_offset(self) -> bool:
        return bool(self.dynamic)


def resolve(value: ir.Value) -> BufferRef:
    """Follows tile.slice / tile.view back to the root buffer (no IR is built)."""
    chain = []
    v = value
    while True:
        owner = v.owner
        if isinstance(owner, ir.Block):
            raise LayoutError("a tile buffer passed as a block argument has no known storage")
        if owner.name in ROOT_OPS:
            break
        if owner.name not in ("tile.slice", "tile.view"):
            raise LayoutError(f"a tile buffer defined by '{owner.name}' has no known storage")
        chain.append(owner)
        v = owner.operands[0]
    ref = BufferRef(value, parse_buffer_type(value.type), v)
    for op in chain:
        if op.name == "tile.view":
            # The view's layout is relative to its source window: keep the source's static
            # memory offset, which the new layout does not carry.
            src = parse_buffer_type(op.operands[0].type)
            ref.static_base += src.layout.offset.get("m", 0)
        else:
            src = parse_buffer_type(op.operands[0].type)
            offsets = ir.DenseI64ArrayAttr(op.attributes["static_offsets"])
            dyn = iter(list(op.operands)[1:])
            for dim in range(len(offsets)):
                if offsets[dim] == DYNAMIC_OFFSET:
                    ref.dynamic.append((src, dim, next(dyn)))
    return ref


# ------------------------------------------------------------------------------ layout arithmetic
def _dim_groups(layout: TileLayout, shape) -> list:
    return layout.group(tuple(shape))


def axis_values(layout: TileLayout, shape, coord: list[Index], swizzle: bool = True) -> dict:
    """The axis values (Index per axis) of the element at `coord`, offsets included.

    Each coordinate is decomposed over the iterators of its own dimension, so static
    coordinates give static values and dynamic ones give a short div/rem chain.
    """
    values: dict[str, Index] = {}
    for x, group in zip(coord, _dim_groups(layout, shape)):
        inner = 1
        for it in reversed(group):
            c = emit.rem(emit.div(x, inner), it.extent)
            values[it.axis] = emit.add(values.get(it.axis, 0), emit.mul(c, it.stride))
            inner *= it.extent
    for axis, off in layout.offset.items():
        values[axis] = emit.add(values.get(axis, 0), off)
    if swizzle and layout.swizzle is not None and "m" in values:
        values["m"] = apply_swizzle(layout, values["m"])
    return values


def apply_swizzle(layout: TileLayout, m: Index) -> Index:
    sw = layout.swizzle
    if sw is None:
        return m
    mask = ((1 << sw.bits) - 1) << (sw.base + sw.shift)
    return emit.xor(m, emit.shr(emit.band(m, mask), sw.shift))


def base_offset(ref: BufferRef) -> Index:
    """The linear (pre-swizzle) memory offset the slices/views add to the layout's own."""
    total: Index = ref.static_base
    for src, dim, value in ref.dynamic:
        coord: list[Index] = [0] * len(src.shape)
        coord[dim] = value
        linear = axis_values(src.layout.replace(offset={}), src.shape, coord, swizzle=False)
        total = emit.add(total, linear.get("m", 0))
    return total


def memory_offset(ref: BufferRef, coord: list[Index]) -> Index:
    """The element offset of `coord` (in ref's own coordinates) in the root storage."""
    linear = axis_values(ref.layout, ref.shape, coord, swizzle=False).get("m", 0)
    return apply_swizzle(ref.layout, emit.add(base_offset(ref), linear))


# ------------------------------------------------------------------------------ storage
def storage(ref: BufferRef) -> ir.Value:
    """`tile.storage` of the root buffer (replaced by real storage in tile-materialize)."""
    root_type = parse_buffer_type(ref.root.type)
    if root_type.scope == "tmem":
        result = emit.i32()
    else:
        result = emit.ptr(ADDRESS_SPACE[root_type.scope])
    return ir.Operation.create("tile.storage", results=[result], operands=[ref.root]).result


def element_pointer(ref: BufferRef, coord: list[Index], base: ir.Value | None = None) -> ir.Value:
    """&element[coord] in global, shared or register storage."""
    if ref.scope == "tmem":
        raise LayoutError("tensor memory has no pointers; use tcgen05 loads and stores")
    base = storage(ref) if base is None else base
    return emit.gep(base, ref.type.elem, memory_offset(ref, coord))


def slot_pointer(ref: BufferRef, slot: Index, base: ir.Value | None = None) -> ir.Value:
    """&storage[slot] of a register buffer (a slot is a memory-axis value)."""
    base = storage(ref) if base is None else base
    return emit.gep(base, ref.type.elem, emit.add(ref.static_base, slot))


# ------------------------------------------------------------------------------ window chains
def _window_ops(value: ir.Value):
    """The tile.slice / tile.view ops from `value` back to its root buffer, nearest first."""
    v = value
    while not isinstance(v.owner, ir.Block) and v.owner.name in ("tile.slice", "tile.view"):
        yield v.owner
        v = v.owner.operands[0]


def view_offsets(ref: BufferRef) -> dict[str, int]:
    """Per axis, the static offsets of the windows that tile.view ops re-read with a new layout.

    A view's layout is relative to its source window, so the source's offsets (a static slice
    start, say) are not in the view's layout; `resolve` keeps the memory-axis part as
    `static_base`, this gives every axis (TLane / TCol for tensor memory).
    """
    total: dict[str, int] = {}
    for op in _window_ops(ref.value):
        if op.name == "tile.view":
            for axis, off in parse_buffer_type(op.operands[0].type).layout.offset.items():
                total[axis] = total.get(axis, 0) + off
    return total


def dynamic_axis_offset(ref: BufferRef, axis: str) -> Index:
    """What the dynamic tile.slice offsets of `ref` add on `axis` (base_offset, for any axis)."""
    total: Index = 0
    for src, dim, value in ref.dynamic:
        coord: list[Index] = [0] * len(src.shape)
        coord[dim] = value
        linear = axis_values(src.layout.replace(offset={}), src.shape, coord, swizzle=False)
        total = emit.add(total, linear.get(axis, 0))
    return total


def dynamic_offset_choices(value: ir.Value, axis: str) -> list[list[int]]:
    """For each dynamic tile.slice offset behind `value`: every value it can add on `axis`.

    A dynamic start is taken to be a multiple of the window's extent along its dim (a window
    that covers whole layout iterators can only start there); when the slice drops the dim,
    any start in the source dim counts. Pure analysis, no IR is built.
    """
    choices = []
    for op in _window_ops(value):
        if op.name != "tile.slice":
            continue
        src = parse_buffer_type(op.operands[0].type)
        result = parse_buffer_type(op.results[0].type)
        offsets = ir.DenseI64ArrayAttr(op.attributes["static_offsets"])
        linear = src.layout.replace(offset={}, swizzle=None)
        for dim in range(len(offsets)):
            if offsets[dim] != DYNAMIC_OFFSET:
                continue
            step = result.shape[dim] if len(result.shape) == len(src.shape) else 1
            values = []
            for start in range(0, src.shape[dim], step):
                coord = [0] * len(src.shape)
                coord[dim] = start
                values.append(linear.evaluate_coord(coord, src.shape).get(axis, 0))
            choices.append(values)
    return choices


# ------------------------------------------------------------------------------ tensor memory
def tmem_address(ref: BufferRef, coord: list[Index], base: ir.Value | None = None) -> ir.Value:
    """The i32 TMEM address (lane << 16 | column) of element `coord` of a tensor-memory buffer.

    The root's address (what tcgen05.alloc returned) plus the element's TLane and TCol: its
    layout's values, the offsets views dropped and the dynamic slice offsets.
    """
    if ref.scope != "tmem":
        raise LayoutError(f"a {ref.scope} buffer has no tensor-memory address")
    values = axis_values(ref.layout, ref.shape, coord)
    dropped = view_offsets(ref)
    lane = emit.add(emit.add(values.get("TLane", 0), dropped.get("TLane", 0)),
                    dynamic_axis_offset(ref, "TLane"))
    col = emit.add(emit.add(values.get("TCol", 0), dropped.get("TCol", 0)),
                   dynamic_axis_offset(ref, "TCol"))
    offset = emit.add(emit.mul(lane, 1 << 16), col)
    base = storage(ref) if base is None else base
    if isinstance(offset, int) and offset == 0:
        return base
    return arith.addi(base, emit.to_i32(offset))


# ------------------------------------------------------------------------------ access planning
# The copies that move whole rows or 16-byte chunks (ldmatrix, vector and cp.async copies) know
# statically which element each thread reaches in each access. They describe it as a table of
# pre-swizzle offsets, one row per access and one column per thread, and `plan_accesses` turns it
# into addresses that are cheap at run time: a thread part built once from the thread index
# (shared by every access and every copy op after CSE) and a static part per access that lands
# in the instruction's immediate offset.

GLOBAL_ALIGNMENT = 16  # bytes; tile.global pointers are assumed 16-byte aligned (cudaMalloc: 256)
SMEM_ALIGN = 1024      # bytes; tile-materialize aligns the shared pool tile.alloc_shared counts from


def _dynamic_terms(ref: BufferRef):
    """Per dynamic slice offset: ([(extent, stride)] of its dim's memory iterators, value)."""
    for src, dim, value in ref.dynamic:
        group = src.layout.replace(offset={}).group(src.shape)[dim]
        yield [(it.extent, it.stride) for it in group if it.axis == "m"], value


def dynamic_multiple(ref: BufferRef) -> int:
    """A number the dynamic part of ref's base offset is known to be a multiple of (0: none)."""
    total = 0
    analysis = ValueAnalysis()
    for iters, value in _dynamic_terms(ref):
        mult = analysis.multiple(value)
        inner = math.prod(e for e, _ in iters[1:])
        if len(iters) == 1:
            term = mult * iters[0][1]
        elif mult % inner == 0:           # only the outermost digit moves
            term = mult // inner * iters[0][1]
        else:
            term = math.gcd(*(s for _, s in iters))
        total = math.gcd(total, term)
    return total


def dynamic_offset(ref: BufferRef) -> Index:
    """The dynamic part of ref's (pre-swizzle) base offset, in elements.

    Like `base_offset` without the static part, and without reducing the outermost digit of a
    slice offset modulo its extent: a slice offset is in range by construction.
    """
    total: Index = 0
    for iters, value in _dynamic_terms(ref):
        x: Index = value
        inner = 1
        for k, (extent, stride) in enumerate(reversed(iters)):
            digit = emit.div(x, inner)
            if k < len(iters) - 1:
                digit = emit.rem(digit, extent)
            total = emit.add(total, emit.mul(digit, stride))
            inner *= extent
    return total


def static_offsets(ref: BufferRef) -> np.ndarray:
    """Each element's pre-swizzle offset in the root storage, dynamic slice offsets left out."""
    values = ref.layout.replace(swizzle=None).evaluate_all(ref.shape)
    return values.get("m", np.zeros(ref.shape, dtype=np.int64)) + ref.static_base


def root_alignment(ref: BufferRef) -> int:
    """The byte alignment of the root storage's first element."""
    owner = ref.root.owner
    if owner.name == "tile.alloc_shared":
        offset = ir.IntegerAttr(owner.attributes["offset"]).value
        return min(SMEM_ALIGN, offset & -offset) if offset else SMEM_ALIGN
    return GLOBAL_ALIGNMENT


def vector_limit(ref: BufferRef, max_bytes: int = 16) -> tuple[int, str | None]:
    """(n, why): the most elements (a power of two, n * elem <= max_bytes) one aligned vector
    access may move through `ref` as far as its base and swizzle allow, and what stops it from
    moving more (None when only `max_bytes` does). Whether the elements are contiguous is the
    caller's business (see `static_offsets`)."""
    elem_bytes = max(ref.type.elem_bits // 8, 1)
    n, why = max(max_bytes // elem_bytes, 1), None
    limits = [(root_alignment(ref) // elem_bytes, f"its storage is {root_alignment(ref)}-byte "
                                                  f"aligned")]
    sw = ref.layout.swizzle
    if sw is not None:
        limits.append((1 << sw.base, f"its swizzle {sw} permutes {1 << sw.base}-element groups"))
    mult = dynamic_multiple(ref)
    if mult:
        limits.append((mult & -mult, f"its dynamic offset is only known to be a multiple of "
                                     f"{mult & -mult} elements"))
    for limit, reason in limits:
        if limit < n:
            n, why = max(limit, 1), reason
    return n, why


@dataclass(frozen=True)
class _Access:
    thread: object          # threads.ThreadAffine: the thread part before the swizzle
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
    from tilemlir.lowering.cuda.threads import fit_thread_affine
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
