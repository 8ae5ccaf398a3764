"""The tile-IR verifier: what IRDL cannot say about tile ops, checked before dispatch.

IRDL checks operand and attribute kinds; it cannot check that a slice lies inside its source,
that shared memory fits the chip, or that a block has at most 1024 threads. Left unchecked,
such IR lowers to out-of-bounds accesses or a kernel that cannot launch, or makes a lowering
fail deep inside with an unreadable error. Each problem is (location, message); tile-dispatch
reports them all and dispatches nothing in that gpu.module.
"""

from __future__ import annotations

from mlir import ir

from tilemlir.layout import LayoutError
from tilemlir.ir.types import element_bits, is_buffer_type, parse_buffer_type
from tilemlir.target import Target

DYNAMIC_OFFSET = -(2 ** 63)          # tile.slice's marker for a dynamic offset
MAX_BLOCK_THREADS = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_GRID_DIMS = (2 ** 31 - 1, 65535, 65535)
TMEM_COLUMNS = (32, 64, 128, 256, 512)
# Larger buffers are no tile: evaluating their layouts would exhaust memory.
MAX_BUFFER_ELEMENTS = 2 ** 24


class _Problems(list):
    def add(self, op: ir.Operation, message: str) -> None:
        self.append((op.location, message))


def _buffer(value: ir.Value, what: str, op: ir.Operation, problems: _Problems):
    """The parsed buffer type of `value`, or None (with a problem) when it is unusable."""
    try:
        buf = parse_buffer_type(value.type)
    except (ValueError, ir.MLIRError) as err:
        problems.add(op, f"{what}: invalid tile buffer type: {err}")
        return None
    bad_dims = [d for d in buf.shape if d < 1]
    if bad_dims:
        problems.add(op, f"{what}: a tile shape holds positive extents, got {list(buf.shape)}")
        return None
    if buf.size > MAX_BUFFER_ELEMENTS:
        problems.add(op, f"{what}: {buf.describe()} has {buf.size} elements, more than a tile "
                         f"can hold ({MAX_BUFFER_ELEMENTS})")
        return None
    try:
        element_bits(buf.elem)
    except ValueError:
        problems.add(op, f"{what}: element type {buf.elem} has no bit width (use an integer "
                         f"or float type)")
        return None
    try:
        buf.layout.checked_shape(buf.shape)
    except LayoutError as err:
        problems.add(op, f"invalid tile buffer type: {err}")
        return None
    return buf


def _check_slice(op: ir.Operation, problems: _Problems) -> None:
    src = _buffer(op.operands[0], "the source of tile.slice", op, problems)
    dst = _buffer(op.results[0], "the result of tile.slice", op, problems)
    if src is None or dst is None:
        return
    offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
    if len(offsets) != len(src.shape):
        problems.add(op, f"tile.slice has {len(offsets)} static_offsets for a source of rank "
                         f"{len(src.shape)} ({src.describe()})")
        return
    dynamic = sum(1 for o in offsets if o == DYNAMIC_OFFSET)
    if dynamic != len(op.operands) - 1:
        problems.add(op, f"tile.slice has {dynamic} dynamic entries in static_offsets but "
                         f"{len(op.operands) - 1} index operands")
    if len(dst.shape) > len(src.shape):
        problems.add(op, f"tile.slice result {dst.describe()} has a higher rank than its "
                         f"source {src.describe()}")
        return
    if dst.elem != src.elem or dst.scope != src.scope:
        problems.add(op, f"tile.slice result {dst.describe()} must keep the element type and "
                         f"scope of its source {src.describe()}")
    same_rank = len(dst.shape) == len(src.shape)
    for dim, offset in enumerate(offsets):
        if offset == DYNAMIC_OFFSET:
            continue
        extent = dst.shape[dim] if same_rank else 1
        if offset < 0 or offset + extent > src.shape[dim]:
            problems.add(op, f"tile.slice window [{offset}, {offset + extent}) of dim {dim} is "
                             f"outside the source's extent {src.shape[dim]}")
    if same_rank:
        for dim, (a, b) in enumerate(zip(dst.shape, src.shape)):
            if a > b:
                problems.add(op, f"tile.slice result extent {a} of dim {dim} exceeds the "
                                 f"source's {b}")
    elif dst.size > src.size:
        problems.add(op, f"tile.slice result {dst.describe()} is larger than its source "
                         f"{src.describe()}")


def _check_view(op: ir.Operation, problems: _Problems) -> None:
    src = _buffer(op.operands[0], "the source of tile.view", op, problems)
    dst = _buffer(op.results[0], "the result of tile.view", op, problems)
    if src is None or dst is None:
        return
    if dst.scope != src.scope:
        problems.add(op, f"tile.view cannot move a buffer from {src.scope} to {dst.scope}")
    # Footprints in memory (per thread for registers): the layouts' spans, not element counts.
    dst_bytes = _footprint(dst)
    src_bytes = _footprint(src)
    if dst_bytes and src_bytes and dst_bytes > src_bytes:
        problems.add(op, f"tile.view result {dst.describe()} ({dst_bytes} bytes) is larger than "
                         f"its source {src.describe()} ({src_bytes} bytes)")


def _footprint(buf) -> int:
    return -(-buf.layout.span("m") * buf.elem_bits // 8)


def _check_alloc_shared(op: ir.Operation, target: Target, problems: _Problems) -> None:
    buf = _buffer(op.results[0], "tile.alloc_shared", op, problems)
    offset = ir.IntegerAttr(op.attributes["offset"]).value
    if offset < 0:
        problems.add(op, f"tile.alloc_shared offset {offset} is negative")
        return
    if buf is None:
        return
    end = offset + _footprint(buf)
    budget = target.shared_memory_bytes
    if end > budget:
        problems.add(op, f"tile.alloc_shared of {buf.describe()} at offset {offset} ends at byte "
                         f"{end}, beyond the {budget // 1024} KiB of shared memory a block can "
                         f"use on {target.chip}")


def _check_tmem_columns(op: ir.Operation, problems: _Problems) -> None:
    ncols = ir.IntegerAttr(op.attributes["ncols"]).value
    if ncols not in TMEM_COLUMNS:
        problems.add(op, f"{op.name} ncols must be a power of two from 32 to 512, got {ncols}")


def _check_extents(op: ir.Operation, name: str, limits, problems: _Problems) -> None:
    if name not in op.attributes:
        return
    dims = list(ir.DenseI32ArrayAttr(op.attributes[name]))
    if len(dims) != 3 or any(d < 1 for d in dims):
        problems.add(op, f"{name} must be three positive extents, got {dims}")
        return
    for axis, (d, limit) in enumerate(zip(dims, limits)):
        if d > limit:
            problems.add(op, f"{name} {'xyz'[axis]} = {d} exceeds the hardware limit {limit}")
    if name == "known_block_size" and dims[0] * dims[1] * dims[2] > MAX_BLOCK_THREADS:
        problems.add(op, f"known_block_size {dims} has {dims[0] * dims[1] * dims[2]} threads; "
                         f"a block has at most {MAX_BLOCK_THREADS}")


def verify_tile_ir(root: ir.Operation, target: Target) -> list[tuple[ir.Location, str]]:
    """Every problem of the tile ops (and kernel extents) under `root` for `target`."""
    problems = _Problems()

    def visit(op):
        name = op.name
        if name == "tile.slice":
            _check_slice(op, problems)
        elif name == "tile.view":
            _check_view(op, problems)
        elif name == "tile.alloc_shared":
            _check_alloc_shared(op, target, problems)
        elif name in ("tile.tmem_alloc", "tile.tmem_dealloc"):
            _check_tmem_columns(op, problems)
        elif name == "gpu.func":
            _check_extents(op, "known_block_size", MAX_BLOCK_DIMS, problems)
            _check_extents(op, "known_grid_size", MAX_GRID_DIMS, problems)
        elif name.startswith("tile."):
            for i, result in enumerate(op.results):
                if is_buffer_type(result.type):
                    _buffer(result, f"result {i} of {name}", op, problems)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return problems
