"""The tile-IR verifier: what IRDL cannot say about tile ops, checked before dispatch.

IRDL checks operand and attribute kinds; it cannot check that a slice lies inside its source,
that shared memory fits the chip, or that a block has at most 1024 threads. Left unchecked,
such IR lowers to out-of-bounds accesses or a kernel that cannot launch, or makes a lowering
fail deep inside with an unreadable error. Each problem is (location, message); tile-dispatch
reports them all and dispatches nothing in that gpu.module.
"""

from __future__ import annotations

import functools

import numpy as np
from mlir import ir

from tilemlir.ir import emit, kernel_abi
from tilemlir.ir.dialect import DYNAMIC_OFFSET
from tilemlir.ir.types import element_bits, is_buffer_type, parse_buffer_type
from tilemlir.ir.windows import overhang
from tilemlir.layout import LayoutError
from tilemlir.target import Target

MAX_BLOCK_THREADS = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_GRID_DIMS = (2 ** 31 - 1, 65535, 65535)
TMEM_COLUMNS = (32, 64, 128, 256, 512)
# The memory each root op's buffer lives in (its result type must say the same).
ROOT_SCOPES = {"tile.global": "global", "tile.alloc_shared": "shared",
               "tile.alloc_local": "local", "tile.tmem": "tmem"}
# Primitives whose operand 0 is written: two elements landing on one place would race.
WRITING_OPS = ("tile.copy", "tile.copy_async", "tile.copy_async_multicast", "tile.fill",
               "tile.cast", "tile.gemm", "tile.gemm_async", "tile.copy_masked",
               "tile.copy_async_masked")
# ... of which these skip what lies past a global buffer's edge (masks; a TMA store clips), so a
# global window hanging past it (whose layout repeats elements there) is theirs to write.
MASKED_OPS = ("tile.copy_masked", "tile.copy_async_masked", "tile.copy_async")
# Larger buffers are no tile: evaluating their layouts would exhaust memory.
MAX_BUFFER_ELEMENTS = 2 ** 24
# Layout strides and offsets of on-chip buffers become i32 address arithmetic, global ones i64:
# keep them far from overflow.
MAX_LAYOUT_VALUE = 2 ** 31 - 1
MAX_GLOBAL_LAYOUT_VALUE = kernel_abi.MAX_GLOBAL_ELEMENTS
# Injectivity is checked by enumerating every element: affordable up to this many.
MAX_INJECTIVITY_ELEMENTS = 2 ** 20
MAX_LOCAL_BYTES = 512 * 1024           # local memory per thread (CUDA's limit)
MAX_SWIZZLE_BITS = 24                   # far beyond the 128-byte swizzles the hardware knows
MAX_CLUSTER_CTAS = kernel_abi.PORTABLE_CLUSTER_CTAS
MAX_NON_PORTABLE_CLUSTER_CTAS = 16      # with tile.cluster_non_portable (sm_90, sm_100)
NAMED_BARRIERS = 16                     # bar.sync / bar.arrive / bar.red ids 0..15
# Ops that take a named barrier's id (operand 0) and thread count (`threads`).
NAMED_BARRIER_OPS = ("tile.named_barrier", "tile.barrier_arrive", "tile.barrier_or")
# Attributes of tile ops that are counts, sizes or indices: an i1 one (`1 : i1`) is a BoolAttr,
# which lowerings would read as True or False.
INTEGER_ATTRIBUTES = ("axis", "offset", "ncols", "cta_group", "threads", "pending", "count")
# tcgen05 ops whose cta_group must agree within a kernel (ptxas rejects a mix).
CTA_GROUP_OPS = ("tile.tmem_alloc", "tile.tmem_relinquish", "tile.tmem_dealloc",
                 "tile.tcgen05_commit", "tile.gemm_async")


@functools.lru_cache(maxsize=4096)
def _text(type_: ir.Type) -> str:
    """A type's printed form, printed once per (uniqued) type: printing a !tile.buf with its
    layout is most of the cost of checking a big kernel's buffers."""
    return str(type_)


class _Problems(list):
    def add(self, op: ir.Operation, message: str) -> None:
        self.append((op.location, message))


def _buffer(value: ir.Value, what: str, op: ir.Operation, problems: _Problems):
    """The parsed buffer type of `value`, or None (with a problem) when it is unusable."""
    problem = _buffer_type_problem(_text(value.type), value.type)
    if problem:
        problems.add(op, f"{what}: {problem}")
        return None
    return parse_buffer_type(value.type)


_TYPE_PROBLEMS: dict[str, str | None] = {}
_TYPE_PROBLEMS_KEPT = 4096


def _buffer_type_problem(text: str, type_: ir.Type) -> str | None:
    """What is wrong with a !tile.buf type, or None (cached: kernels reuse few types)."""
    if text not in _TYPE_PROBLEMS:
        if len(_TYPE_PROBLEMS) >= _TYPE_PROBLEMS_KEPT:   # a long-lived process: stay bounded
            _TYPE_PROBLEMS.clear()
        _TYPE_PROBLEMS[text] = _find_type_problem(type_)
    return _TYPE_PROBLEMS[text]


def _find_type_problem(type_: ir.Type) -> str | None:
    try:
        buf = parse_buffer_type(type_)
    except (ValueError, LayoutError, ir.MLIRError) as err:
        return f"invalid tile buffer type: {err} (the shape is an array<i64: ...>)"
    if any(d < 1 for d in buf.shape):
        return f"a tile shape holds positive extents, got {list(buf.shape)}"
    if buf.scope != "global" and buf.size > MAX_BUFFER_ELEMENTS:   # tensors are not tiles
        return (f"{buf.describe()} has {buf.size} elements, more than a tile can hold "
                f"({MAX_BUFFER_ELEMENTS})")
    try:
        element_bits(buf.elem)
    except ValueError:
        return f"element type {buf.elem} has no bit width (use an integer or float type)"
    layout = buf.layout
    swizzle = layout.swizzle
    if swizzle is not None and swizzle.base + swizzle.shift + swizzle.bits > MAX_SWIZZLE_BITS:
        return f"swizzle {swizzle} reaches beyond bit {MAX_SWIZZLE_BITS} of the address"
    values = [abs(it.stride) * it.extent for it in layout.shard + layout.replica]
    values += [abs(v) for v in layout.offset.values()]
    limit = MAX_GLOBAL_LAYOUT_VALUE if buf.scope == "global" else MAX_LAYOUT_VALUE
    if any(v > limit for v in values):
        return f"layout {layout} reaches beyond {limit} (strides, offsets)"
    try:
        layout.checked_shape(buf.shape)
    except LayoutError as err:
        return f"invalid tile buffer type: {err}"
    if buf.scope == "local" and _footprint(buf) > MAX_LOCAL_BYTES:
        return (f"{buf.describe()} needs {_footprint(buf)} bytes per thread; local memory holds "
                f"{MAX_LOCAL_BYTES}")
    return None


def _check_slice(op: ir.Operation, problems: _Problems) -> None:
    src = _buffer(op.operands[0], "the source of tile.slice", op, problems)
    dst = _buffer(op.results[0], "the result of tile.slice", op, problems)
    if src is None or dst is None:
        return
    attr = op.attributes["static_offsets"]
    if not isinstance(attr, ir.DenseI64ArrayAttr):
        problems.add(op, f"tile.slice static_offsets must be an array<i64: ...>, got {attr}")
        return
    offsets = list(ir.DenseI64ArrayAttr(attr))
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
    # A window of a global buffer may hang past its edge (masked copies and TMA accept it;
    # tile-dispatch refuses it to the other copies): it must start inside the buffer.
    overhang = src.scope == "global"
    for dim, offset in enumerate(offsets):
        if offset == DYNAMIC_OFFSET:
            continue
        extent = dst.shape[dim] if same_rank else 1
        if offset < 0 or offset + extent > src.shape[dim] and \
                not (overhang and offset < src.shape[dim]):
            problems.add(op, f"tile.slice window [{offset}, {offset + extent}) of dim {dim} is "
                             f"outside the source's extent {src.shape[dim]}")
    if same_rank and not overhang:
        for dim, (a, b) in enumerate(zip(dst.shape, src.shape)):
            if a > b:
                problems.add(op, f"tile.slice result extent {a} of dim {dim} exceeds the "
                                 f"source's {b}")
    elif not same_rank and dst.size > src.size:
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
    attr = op.attributes[name]
    dims = list(ir.DenseI32ArrayAttr(attr)) if isinstance(attr, ir.DenseI32ArrayAttr) else None
    if dims is None or len(dims) != 3 or any(d < 1 for d in dims):
        problems.add(op, f"{name} must be three positive extents (array<i32: x, y, z>), "
                         f"got {attr}")
        return
    for axis, (d, limit) in enumerate(zip(dims, limits)):
        if d > limit:
            problems.add(op, f"{name} {'xyz'[axis]} = {d} exceeds the hardware limit {limit}")
    if name == kernel_abi.BLOCK and dims[0] * dims[1] * dims[2] > MAX_BLOCK_THREADS:
        problems.add(op, f"{name} {dims} has {dims[0] * dims[1] * dims[2]} threads; "
                         f"a block has at most {MAX_BLOCK_THREADS}")


def _check_buffer_values(op: ir.Operation, problems: _Problems) -> None:
    """Every !tile.buf a tile op defines, or takes from elsewhere (a block argument, a non-tile
    op): each bad type is reported where it enters the tile ops."""
    for i, value in enumerate(op.operands):
        if not is_buffer_type(value.type):
            continue
        owner = value.owner
        if isinstance(owner, ir.Block) or not owner.name.startswith("tile."):
            _buffer(value, f"operand {i} of {op.name}", op, problems)
    for i, value in enumerate(op.results):
        if is_buffer_type(value.type):
            _buffer(value, f"result {i} of {op.name}", op, problems)


_INJECTIVE: dict[str, bool] = {}


def _check_destination(op: ir.Operation, problems: _Problems) -> None:
    """The buffer a primitive writes maps every element (and replica) to a place of its own."""
    if not len(op.operands):
        return
    dst = op.operands[0]
    text = _text(dst.type)
    if not is_buffer_type(dst.type) or _buffer_type_problem(text, dst.type):
        return
    if parse_buffer_type(dst.type).scope == "global":
        if op.name in MASKED_OPS:       # a global window's elements past the edge: unwritten
            return
        try:
            where = overhang(dst)
        except (ValueError, LayoutError, ir.MLIRError):
            return          # a bad type up the window chain, reported where it is defined
        if where is not None:
            problems.add(op, f"{op.name} writes a window hanging past its global buffer's edge "
                             f"({where}): store it with bounds=... or by TMA")
            return
    if text not in _INJECTIVE:
        if len(_INJECTIVE) >= _TYPE_PROBLEMS_KEPT:
            _INJECTIVE.clear()
        layout = parse_buffer_type(dst.type).layout
        _INJECTIVE[text] = layout.size() > MAX_INJECTIVITY_ELEMENTS or layout.is_injective()
    if not _INJECTIVE[text]:
        layout = parse_buffer_type(dst.type).layout
        problems.add(op, f"{op.name} writes a destination whose layout {layout} puts two "
                         f"elements in one place (a write race): a destination layout must be "
                         f"injective")


def _check_root_scope(op: ir.Operation, problems: _Problems) -> None:
    result = op.results[0]
    if not is_buffer_type(result.type) or _buffer_type_problem(_text(result.type), result.type):
        return
    scope = parse_buffer_type(result.type).scope
    if scope != ROOT_SCOPES[op.name]:
        problems.add(op, f"{op.name} makes a {ROOT_SCOPES[op.name]} buffer, but its result type "
                         f"says \"{scope}\"")


def _extents(op: ir.Operation, name: str) -> list[int] | None:
    """The three extents of a kernel attribute (array<i32: x, y, z>), None when absent or
    malformed (_check_extents reports that)."""
    if name not in op.attributes:
        return None
    attr = op.attributes[name]
    if not isinstance(attr, ir.DenseI32ArrayAttr) or len(attr) != 3:
        return None
    return list(attr)


class _Kernel:
    """What the checks of one gpu.func gather from its ops (a post-order walk meets them
    before the gpu.func itself): named barriers, tcgen05 cta_groups, commit multicast masks."""

    def __init__(self):
        self.barriers: list[ir.Operation] = []
        self.groups: list[tuple[ir.Operation, int]] = []
        self.multicasts: list[tuple[ir.Operation, int]] = []
        self.setmaxnregs: list[ir.Operation] = []

    def add(self, op: ir.Operation, problems: "_Problems") -> None:
        name = op.name
        if name in NAMED_BARRIER_OPS:
            self.barriers.append(op)
        if name in CTA_GROUP_OPS and "cta_group" in op.attributes:
            attr = op.attributes["cta_group"]
            group = ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None
            if group not in (1, 2):
                problems.add(op, f"{name} cta_group must be 1 or 2, got {attr}")
            else:
                self.groups.append((op, group))
        if name == "tile.setmaxnreg":
            self.setmaxnregs.append(op)
        if name == "tile.tcgen05_commit" and len(op.operands) > 1:
            mask = emit.int_constant(op.operands[1])
            if mask is not None:
                self.multicasts.append((op, mask & 0xFFFF))

    def check(self, func: ir.Operation, target: Target, problems: "_Problems") -> None:
        cluster = _check_cluster(func, target, problems)
        ctas = cluster[0] * cluster[1] * cluster[2] if cluster else 1
        block = _extents(func, kernel_abi.BLOCK)
        threads = block[0] * block[1] * block[2] if block and min(block) > 0 else None
        for op in self.barriers:
            _check_named_barrier(op, threads, problems)
        if self.setmaxnregs and threads is not None:
            _check_register_budgets(self.setmaxnregs, threads, problems)
        first = self.groups[0] if self.groups else None
        for op, group in self.groups:
            if group != first[1]:
                problems.add(op, f"{op.name} uses cta_group::{group}, but this kernel's "
                                 f"{first[0].name} at {_where(first[0])} uses cta_group::"
                                 f"{first[1]}: a kernel's tcgen05 alloc, MMA and commit ops "
                                 f"use one cta_group (ptxas rejects a mix)")
            elif group == 2 and (cluster is None or cluster[0] % 2):
                problems.add(op, f"{op.name} with cta_group::2 works on a CTA pair: the "
                                 f"kernel needs a cluster with an even x extent (e.g. "
                                 f"tile.cluster = array<i32: 2, 1, 1>), got "
                                 f"{cluster or 'no cluster'}")
        for op, mask in self.multicasts:
            if mask == 0:
                problems.add(op, "tile.tcgen05_commit multicast mask names no CTA")
            elif mask >> ctas:
                problems.add(op, f"tile.tcgen05_commit multicast mask {mask:#b} names CTA "
                                 f"ranks beyond the {ctas} CTA(s) of the kernel's cluster")


def _check_register_budgets(ops: list[ir.Operation], threads: int,
                            problems: "_Problems") -> None:
    """setmaxnreg.dec gives registers back to the CTA's pool and .inc waits until the pool holds
    what it asks for, so the budgets the warps end with must fit what the CTA got at launch,
    registers_per_thread(threads) x threads (the .maxnreg the lowering gives the kernel), or an
    .inc waits forever. Checked where every thread's budget is known: by the value analysis,
    each thread reaches at most one setmaxnreg (one that reaches none keeps its launch budget)."""
    from tilemlir.analysis.threads import analysis_of, reaching_mask
    from tilemlir.target import registers_per_thread
    analysis = analysis_of(ops[0])
    if analysis.threads.size != threads:
        return
    launch = registers_per_thread(threads)
    budget = np.full(threads, launch, dtype=np.int64)
    claimed = np.zeros(threads, dtype=bool)
    for op in ops:
        count = _constant_attr(op, "count")
        mask = reaching_mask(op, analysis)
        if count is None or (mask & claimed).any():
            return                                # a budget the analysis cannot tell
        budget[mask], claimed = count, claimed | mask
    warps = -(-threads // 32)                      # registers are held per warp
    per_warp = np.pad(budget, (0, warps * 32 - threads), constant_values=0)
    per_warp = per_warp.reshape(warps, 32).max(axis=1)
    total, held = int(per_warp.sum()) * 32, launch * threads
    if total <= held:
        return
    counts, sizes = np.unique(per_warp, return_counts=True)
    parts = " + ".join(f"{c} x {n * 32} threads" for c, n in zip(counts, sizes))
    culprit = next((op for op in ops if _action(op) == "increase"), ops[0])
    problems.add(culprit, f"setmaxnreg budgets add up to {total} registers ({parts}), more than "
                          f"the {held} the CTA holds from launch ({launch} per thread x "
                          f"{threads} threads): setmaxnreg.inc waits until the CTA's pool has "
                          f"what it asks for, so it would wait forever")


def _constant_attr(op: ir.Operation, name: str) -> int | None:
    attr = op.attributes[name] if name in op.attributes else None
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _action(op: ir.Operation) -> str | None:
    attr = op.attributes["action"] if "action" in op.attributes else None
    return ir.StringAttr(attr).value if isinstance(attr, ir.StringAttr) else None


def _where(op: ir.Operation) -> str:
    loc = op.location
    while loc.is_a_name() or loc.is_a_callsite():
        loc = loc.child_loc if loc.is_a_name() else loc.callee
    return f"line {loc.start_line}" if loc.is_a_file() else "another op"


def _check_cluster(func: ir.Operation, target: Target, problems: "_Problems") -> list | None:
    """The kernel's cluster shape (None without one), after checking it: three positive
    extents, at most 8 CTAs (16 with the non-portable opt-in), a grid of whole clusters, and
    a chip with clusters."""
    if kernel_abi.CLUSTER not in func.attributes:
        if kernel_abi.NON_PORTABLE_CLUSTER in func.attributes:
            problems.add(func, f"{kernel_abi.NON_PORTABLE_CLUSTER} without "
                               f"{kernel_abi.CLUSTER}: there is no cluster shape to allow")
        return None
    cluster = _extents(func, kernel_abi.CLUSTER)
    if cluster is None or min(cluster) < 1:
        problems.add(func, f"{kernel_abi.CLUSTER} must be three positive extents "
                           f"(array<i32: x, y, z>), got {func.attributes[kernel_abi.CLUSTER]}")
        return None
    ctas = cluster[0] * cluster[1] * cluster[2]
    non_portable = kernel_abi.NON_PORTABLE_CLUSTER in func.attributes
    limit = MAX_NON_PORTABLE_CLUSTER_CTAS if non_portable else MAX_CLUSTER_CTAS
    if ctas > limit:
        problems.add(func, f"a cluster of {cluster} has {ctas} CTAs, more than "
                           + (f"{limit} (the most any GPU runs)" if non_portable else
                              f"the portable {limit} (up to {MAX_NON_PORTABLE_CLUSTER_CTAS} "
                              f"with {kernel_abi.NON_PORTABLE_CLUSTER}, or "
                              f"T.cluster_shape(..., non_portable=True))"))
    if not target.has_hardware_for("clusters"):
        problems.add(func, f"the kernel runs in clusters of {cluster}: thread-block clusters "
                           f"need sm_90 or newer, the target is {target.chip}")
    # A grid extent known only at launch (tile.grid_exprs) is the kernel's to make whole
    # clusters of; tile.grid holds a placeholder there.
    exprs = [ir.StringAttr(a).value
             for a in ir.ArrayAttr(func.attributes[kernel_abi.GRID_EXPRS])] \
        if kernel_abi.GRID_EXPRS in func.attributes else []
    at_launch = [bool(e) for e in exprs] + [False] * (3 - len(exprs))
    for name in (kernel_abi.GRID, "known_grid_size"):
        grid = _extents(func, name)
        if grid is not None and any(g % c for g, c, late in zip(grid, cluster, at_launch)
                                    if not (late and name == kernel_abi.GRID)):
            problems.add(func, f"{name} {grid} is not made of whole clusters of {cluster}: "
                               f"each grid extent must be a multiple of the cluster's")
    return cluster


def _check_integer_attributes(op: ir.Operation, problems: "_Problems") -> None:
    for name in INTEGER_ATTRIBUTES:
        if name in op.attributes and isinstance(op.attributes[name], ir.BoolAttr):
            problems.add(op, f"{op.name} {name} must be an integer such as 1 : i64, got "
                             f"{op.attributes[name]} (a boolean)")


def _check_named_barrier(op: ir.Operation, block_threads: int | None,
                         problems: "_Problems") -> None:
    barrier = emit.int_constant(op.operands[0])
    if barrier is not None and not 0 <= barrier < NAMED_BARRIERS:
        problems.add(op, f"{op.name} barrier id {barrier} is outside 0..{NAMED_BARRIERS - 1} "
                         f"(the named barriers of a CTA)")
    attr = op.attributes["threads"]
    threads = ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None
    if threads is None or threads < 32 or threads % 32:
        problems.add(op, f"{op.name} threads must be a positive multiple of 32 (whole warps), "
                         f"got {attr}")
    elif block_threads is not None and threads > block_threads:
        problems.add(op, f"{op.name} waits for {threads} threads, but the block has "
                         f"{block_threads}: it would never complete")


def _inside_gpu_func(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None:
        if parent.operation.name == "gpu.func":
            return True
        parent = parent.operation.parent
    return False


def verify_tile_ir(root: ir.Operation, target: Target) -> list[tuple[ir.Location, str]]:
    """Every problem of the tile ops (and kernel extents) under `root` for `target`."""
    problems = _Problems()
    tile_ops_seen = False                 # in the gpu.func being walked (post-order: ops first)
    kernel = _Kernel()                    # likewise

    def visit(op):
        nonlocal tile_ops_seen, kernel
        name = op.name
        if name.startswith("tile."):
            tile_ops_seen = True
            if not _inside_gpu_func(op):
                problems.add(op, f"'{name}' must be inside a gpu.func (a kernel body)")
                return ir.WalkResult.ADVANCE
        if name == "tile.slice":
            _check_slice(op, problems)
        elif name == "tile.view":
            _check_view(op, problems)
        elif name == "tile.alloc_shared":
            _check_alloc_shared(op, target, problems)
        elif name in ("tile.tmem_alloc", "tile.tmem_dealloc"):
            _check_tmem_columns(op, problems)
        elif name == "gpu.func":
            if tile_ops_seen and kernel_abi.BLOCK not in op.attributes:
                problems.add(op, f"tile ops need their kernel's block size: give the gpu.func "
                                 f"{kernel_abi.BLOCK} = array<i32: x, y, z>")
            tile_ops_seen = False
            _check_extents(op, kernel_abi.BLOCK, MAX_BLOCK_DIMS, problems)
            _check_extents(op, "known_grid_size", MAX_GRID_DIMS, problems)
            _check_extents(op, kernel_abi.GRID, MAX_GRID_DIMS, problems)
            kernel.check(op, target, problems)
            kernel = _Kernel()
        elif name.startswith("tile."):
            _check_buffer_values(op, problems)
        if name.startswith("tile."):
            _check_integer_attributes(op, problems)
            kernel.add(op, problems)
        if name in WRITING_OPS:
            _check_destination(op, problems)
        if name in ROOT_SCOPES:
            _check_root_scope(op, problems)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return problems
