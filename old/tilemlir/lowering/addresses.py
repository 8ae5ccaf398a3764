"""Addresses of buffer elements, built at the insertion point: the storage behind a window
(tilemlir.ir.windows) plus the offset of an element in it.

Storage is an LLVM pointer (global: !llvm.ptr<1>, shared: !llvm.ptr<3>, registers: the
function's alloca) or, for tensor memory, the i32 TMEM address. A memory offset is counted in
elements; the layout's swizzle applies to the whole (base + layout) offset, because the hardware
swizzles absolute shared-memory addresses.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from tilemlir.ir import emit
from tilemlir.ir.dialect import build
from tilemlir.ir.emit import Index
from tilemlir.ir.types import parse_buffer_type
from tilemlir.ir.windows import BufferRef, view_offsets
from tilemlir.layout import LayoutError, TileLayout

ADDRESS_SPACE = {"global": 1, "shared": 3, "local": 0}


# ------------------------------------------------------------------------------ layout arithmetic
def axis_values(layout: TileLayout, shape, coord: list[Index], swizzle: bool = True) -> dict:
    """The axis values (Index per axis) of the element at `coord`, offsets included.

    Each coordinate is decomposed over the iterators of its own dimension, so static
    coordinates give static values and dynamic ones give a short div/rem chain.
    """
    values: dict[str, Index] = {}
    for x, group in zip(coord, layout.group(tuple(shape))):
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


def dynamic_axis_offset(ref: BufferRef, axis: str) -> Index:
    """What the dynamic tile.slice offsets of `ref` add on `axis` (base_offset, for any axis)."""
    total: Index = 0
    for src, dim, value in ref.dynamic:
        coord: list[Index] = [0] * len(src.shape)
        coord[dim] = value
        linear = axis_values(src.layout.replace(offset={}), src.shape, coord, swizzle=False)
        total = emit.add(total, linear.get(axis, 0))
    return total


def dynamic_offset(ref: BufferRef) -> Index:
    """The dynamic part of ref's (pre-swizzle) base offset, in elements.

    Like `base_offset` without the static part, and without reducing the outermost digit of a
    slice offset modulo its extent: a slice offset is in range by construction.
    """
    total: Index = 0
    for iters, value in ref.dynamic_terms():
        x: Index = value
        inner = 1
        for k, (extent, stride) in enumerate(reversed(iters)):
            digit = emit.div(x, inner)
            if k < len(iters) - 1:
                digit = emit.rem(digit, extent)
            total = emit.add(total, emit.mul(digit, stride))
            inner *= extent
    return total


# ------------------------------------------------------------------------------ storage
def storage(ref: BufferRef) -> ir.Value:
    """`tile.storage` of the root buffer (replaced by real storage in tile-materialize)."""
    root_type = parse_buffer_type(ref.root.type)
    if root_type.scope == "tmem":
        result = emit.i32()
    else:
        result = emit.ptr(ADDRESS_SPACE[root_type.scope])
    return build("storage", {"source": ref.root}, results=[result]).result


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
