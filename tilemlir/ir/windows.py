"""Windows of tile buffers: from a `!tile.buf` value to the root buffer whose storage it reads.

A `!tile.buf` value is a window into the storage of a *root* buffer (tile.global,
tile.alloc_shared, tile.alloc_local, tile.tmem). tile.slice narrows the window (its static
offsets are already folded into the result type's layout; its dynamic offsets add to a linear
base offset on the memory axis), tile.view re-reads the same storage with another shape and
layout. `resolve` walks that chain; nothing here builds IR (lowering/addresses.py does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from tilemlir.ir.dialect import DYNAMIC_OFFSET, OPS
from tilemlir.ir.types import BufferType, parse_buffer_type
from tilemlir.layout import LayoutError, TileLayout

# The ops that make a buffer with its own storage, and those that make windows of a buffer.
ROOT_OPS = tuple(OPS[n].full_name for n in ("global", "alloc_shared", "alloc_local", "tmem"))
WINDOW_OPS = (OPS["slice"].full_name, OPS["view"].full_name)


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

    def dynamic_terms(self):
        """Per dynamic slice offset: ([(extent, stride)] of its dim's memory iterators, value).
        Iterators of extent 1 move nothing (and grouping may file one under a neighbouring
        dim); a dim of extent 1 keeps its own iterator's stride: its only offset in range is 0,
        but a masked window may start before or past its buffer (a row of one element read
        from the 16-byte boundary below it), and the interpreter counts that offset too."""
        for src, dim, value in self.dynamic:
            group = src.layout.replace(offset={}).group(src.shape)[dim]
            iters = [(it.extent, it.stride) for it in group if it.axis == "m" and it.extent > 1]
            if not iters and src.shape[dim] == 1:
                iters = [(1, it.stride) for it in group if it.axis == "m"][:1]
            if iters:
                yield iters, value


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
        if owner.name not in WINDOW_OPS:
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


def window_ops(value: ir.Value):
    """The tile.slice / tile.view ops from `value` back to its root buffer, nearest first."""
    v = value
    while not isinstance(v.owner, ir.Block) and v.owner.name in WINDOW_OPS:
        yield v.owner
        v = v.owner.operands[0]


def overhang(value: ir.Value) -> str | None:
    """Where the window `value` hangs past the edge of its global buffer (a slice wider than
    its source, or one at a static offset whose end lies past the source's extent: only masked
    copies and TMA may touch it), or None."""
    for op in window_ops(value):
        if op.name != "tile.slice":
            continue
        source = parse_buffer_type(op.operands[0].type)
        result = parse_buffer_type(op.results[0].type)
        if len(result.shape) != len(source.shape):
            continue
        offsets = ir.DenseI64ArrayAttr(op.attributes["static_offsets"])
        for d, (start, size, extent) in enumerate(zip(offsets, result.shape, source.shape)):
            if size > extent or start != DYNAMIC_OFFSET and start + size > extent:
                where = f"[{start}, {start + size})" if start != DYNAMIC_OFFSET else \
                    f"{size} elements"
                return f"{where} of dim {d}, whose extent is {extent}"
    return None


def view_offsets(ref: BufferRef) -> dict[str, int]:
    """Per axis, the static offsets of the windows that tile.view ops re-read with a new layout.

    A view's layout is relative to its source window, so the source's offsets (a static slice
    start, say) are not in the view's layout; `resolve` keeps the memory-axis part as
    `static_base`, this gives every axis (TLane / TCol for tensor memory).
    """
    total: dict[str, int] = {}
    for op in window_ops(ref.value):
        if op.name == "tile.view":
            for axis, off in parse_buffer_type(op.operands[0].type).layout.offset.items():
                total[axis] = total.get(axis, 0) + off
    return total


def dynamic_offset_choices(value: ir.Value, axis: str) -> list[list[int]]:
    """For each dynamic tile.slice offset behind `value`: every value it can add on `axis`.

    A dynamic start is taken to be a multiple of the window's extent along its dim (a window
    that covers whole layout iterators can only start there); when the slice drops the dim,
    any start in the source dim counts. Pure analysis, no IR is built.
    """
    choices = []
    for op in window_ops(value):
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


def static_offsets(ref: BufferRef) -> np.ndarray:
    """Each element's pre-swizzle offset in the root storage, dynamic slice offsets left out."""
    values = ref.layout.replace(swizzle=None).evaluate_all(ref.shape)
    return values.get("m", np.zeros(ref.shape, dtype=np.int64)) + ref.static_base


def dynamic_offset_values(ref: BufferRef, values_of) -> np.ndarray | None:
    """What lowering/addresses.dynamic_offset computes, on every thread at once: `values_of(v)`
    gives a dynamic slice offset's value per thread (None when unknown, then so is this)."""
    total = 0
    for iters, value in ref.dynamic_terms():
        x = values_of(value)
        if x is None:
            return None
        inner = 1
        for k, (extent, stride) in enumerate(reversed(iters)):
            digit = x // inner
            if k < len(iters) - 1:
                digit = digit % extent
            total = total + digit * stride
            inner *= extent
    return total
