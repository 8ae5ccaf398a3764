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

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith

from tilemlir.ir.types import BufferType, parse_buffer_type
from tilemlir.layout import LayoutError, TileLayout
from tilemlir.lowering import emit
from tilemlir.lowering.emit import Index

ROOT_OPS = ("tile.global", "tile.alloc_shared", "tile.alloc_local", "tile.tmem")
DYNAMIC_OFFSET = -9223372036854775808  # tile.slice's marker for a dynamic offset
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
