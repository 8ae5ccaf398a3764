"""copy_async by TMA (cp.async.bulk.tensor, sm_90+): global -> shared completing on an mbarrier
(variant "tma"), the same into several CTAs of a cluster (copy_async_multicast, variant
"tma_multicast"), and shared -> global in bulk groups (variant "tma_store").

Before (one elected thread loads a 128x64 tile of A, at dynamic (m, k), into a 128B-swizzled
stage; the barrier was armed with arrive_expect_tx for the bytes of every copy tracked by it):

    "tile.copy_async"(%a_stage, %a_window, %full) {scope = "thread"}
        : (!tile.buf<[128, 64], f16, "shared", S[(128, 64):(64, 1)] o Sw<3,3,3>>,
           !tile.buf<[128, 64], f16, "global", S[(128, 64):(K, 1)]>, !llvm.ptr) -> ()

After (the kernel gains a tensor-map parameter, see lowering/kernel_abi.py, whose box is the
shared tile and whose swizzle is the tile's; coordinates are innermost first):

    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %mapA, %full, box[%k, %m]

The box follows from the destination layout: it must be the row-major (rows, cols) layout TMA
writes, with the swizzle of a TMA mode (128B, 64B, 32B or none) and rows of exactly the swizzle
width (unswizzled: the tile's row, at most 256 elements and a multiple of 16 bytes). Wider tiles are cut into boxes one swizzle-width wide (an MMA layout puts those side by
side), taller than 256 rows into boxes of 256 rows; each box is one TMA copy. Every box starts
on its swizzle repeat (1024 bytes for 128B), whatever the dynamic slice offsets. The global
side is a window of a kernel parameter buffer (row-major); out-of-bounds parts of a box read as
zeros, so ragged edges need no padding. TMA needs global strides that are multiples of 16
bytes, so the rows of the global buffer must be.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import llvm, nvvm

from tilemlir.analysis.alignment import root_alignment
from tilemlir.analysis.threads import single_issuer_reason
from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit
from tilemlir.ir.dialect import DYNAMIC_OFFSET
from tilemlir.ir.kernel_abi import cluster_shape
from tilemlir.ir.types import parse_buffer_type
from tilemlir.ir.windows import dynamic_offset_choices, resolve, static_offsets, window_ops
from tilemlir.layout import SWIZZLE_MODES, swizzle_for
from tilemlir.layout.swizzle import SWIZZLE_BYTES
from tilemlir.lowering import kernel_abi
from tilemlir.lowering.addresses import dynamic_offset, storage
from tilemlir.lowering.cuda.descriptors import SWIZZLE_REPEAT_BYTES
from tilemlir.lowering.cuda.predicates import copies, same_shape_and_type, target_supports

MAX_BOX = 256


@predicate("barrier")
def has_barrier(ctx):
    if ctx.operand("barrier") is not None:
        return None
    return "a TMA load completes on an mbarrier: pass the barrier operand"


@predicate("single_thread")
def single_thread(ctx):
    """One thread issues the whole copy (scope "thread", under branches that keep one)."""
    if ctx.scope != "thread":
        return (f"scope '{ctx.scope}': a TMA copy is issued by one thread (scope 'thread', "
                f"e.g. under T.ptx.elect_sync())")
    return single_issuer_reason(ctx.op, "a TMA copy")


def _swizzle_mode(ctx, name: str) -> str:
    buf = ctx.buffer(name)
    for mode in SWIZZLE_MODES:
        if swizzle_for(mode, buf.elem_bits) == buf.layout.swizzle:
            return mode
    raise Reject(f"{name}'s swizzle {buf.layout.swizzle} is not a TMA swizzle of {buf.elem_bits}-bit "
                 f"elements (128B, 64B, 32B or none)")


def _boxes(ctx, name: str, mode: str):
    """[(row0, col0, shared offset)] of each box and the box shape, checked against the layout
    of shared operand `name`."""
    ref = resolve(ctx.operand(name))
    if len(ref.shape) != 2:
        raise Reject(f"{name} has rank {len(ref.shape)}; TMA copies here are 2-D tiles")
    rows, cols = ref.shape
    ebytes = ref.type.elem_bits // 8
    width = SWIZZLE_BYTES.get(mode, cols * ebytes) // ebytes
    if cols % width:
        raise Reject(f"{name} rows hold {cols} elements, not a multiple of the {mode} swizzle width "
                     f"({width} elements): TMA writes whole swizzle rows")
    if width > MAX_BOX:
        raise Reject(f"{name} rows hold {width} elements in one unswizzled box; a TMA box "
                     f"dimension is at most {MAX_BOX} (use a swizzled layout, whose boxes are "
                     f"one swizzle row wide, or narrower tiles)")
    box = (min(rows, MAX_BOX), width)
    if rows % box[0]:
        raise Reject(f"{name} has {rows} rows: more than {MAX_BOX} must be a multiple of {MAX_BOX}")
    if width * ebytes % 16:
        raise Reject(f"{name} rows are {width * ebytes} bytes; a TMA box row is a multiple of 16")
    offsets = static_offsets(ref)
    repeat = SWIZZLE_REPEAT_BYTES.get(mode, 128) // ebytes
    r, c = np.indices(box)
    starts = []
    for r0 in range(0, rows, box[0]):
        for c0 in range(0, cols, box[1]):
            chunk = offsets[r0:r0 + box[0], c0:c0 + box[1]]
            if not np.array_equal(chunk, chunk[0, 0] + r * box[1] + c):
                raise Reject(f"{name}'s layout {ref.layout} does not store the {box[0]}x{box[1]} box "
                             f"at ({r0}, {c0}) row-major, as TMA writes it (use "
                             f"tilemlir.lang.mma_shared_layout)")
            if chunk[0, 0] % repeat:
                raise Reject(f"the box at ({r0}, {c0}) starts at element {int(chunk[0, 0])} of "
                             f"shared memory, off the {repeat * ebytes}-byte {mode} repeat")
            starts.append((r0, c0, int(chunk[0, 0])))
    root_offset = root_alignment(ref)
    if root_offset % (repeat * ebytes):
        raise Reject(f"{name}'s shared buffer is aligned to {root_offset} bytes, not to the "
                     f"{repeat * ebytes}-byte {mode} repeat")
    for values in dynamic_offset_choices(ctx.operand(name), "m"):
        off = next((v for v in values if v % repeat), None)
        if off is not None:
            raise Reject(f"a dynamic slice offset can move {name} by {off * ebytes} bytes, off the "
                         f"{repeat * ebytes}-byte {mode} repeat")
    return starts, box


def _global_window(ctx, name: str):
    """(kernel parameter index, [start terms per dim]) of the global window `name`."""
    value = ctx.operand(name)
    windows = list(window_ops(value))
    if any(op.name == "tile.view" for op in windows):
        raise Reject("src is a tile.view of a global buffer; TMA reads windows of the buffer "
                     "itself (tile.slice)")
    ref = resolve(value)
    root = ref.root.owner
    pointer = root.operands[0]
    if not isinstance(pointer.owner, ir.Block) or \
            pointer.owner.owner.operation.name != "gpu.func":
        raise Reject("src's global buffer is not a kernel parameter, so it has no tensor map")
    root_type = parse_buffer_type(ref.root.type)
    if len(root_type.shape) != len(ref.shape):
        raise Reject("src drops dimensions of its global buffer; TMA boxes keep the rank")
    row_bytes = root_type.shape[-1] * root_type.elem_bits // 8
    if len(root_type.shape) > 1 and row_bytes % 16:
        raise Reject(f"src's buffer has rows of {root_type.shape[-1]} elements ({row_bytes} "
                     f"bytes): TMA needs global strides that are multiples of 16 bytes (for "
                     f"16-bit elements, a multiple of 8 columns)")
    starts: list[list] = [[] for _ in ref.shape]      # per dim: ints and index values
    for op in windows:
        offs = ir.DenseI64ArrayAttr(op.attributes["static_offsets"])
        dyn = iter(list(op.operands)[1:])
        for d in range(len(offs)):
            starts[d].append(next(dyn) if offs[d] == DYNAMIC_OFFSET else offs[d])
    return ir.BlockArgument(pointer).arg_number, starts


def _start_values(starts) -> list:
    """The start of the window along each dim, an int or an index value (nested slices add)."""
    out = []
    for terms in starts:
        total = 0
        for t in terms:
            total = emit.add(total, t)
        out.append(total)
    return out


@register("copy_async", name="tma", priority=20,
          when=[copies("shared", "global", "a TMA load"), has_barrier, single_thread,
                same_shape_and_type, target_supports("tma")])
def lower_tma(ctx):
    """cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes per box."""
    mode = _swizzle_mode(ctx, "dst")
    boxes, box = _boxes(ctx, "dst", mode)
    param, starts = _global_window(ctx, "src")
    return lambda: _emit_boxes(ctx, "dst", param, _start_values(starts), boxes, box, mode)


def _emit_boxes(ctx, shared: str, param: int, starts: list, boxes, box, mode: str,
                multicast: ir.Value | None = None):
    """One TMA copy per box, loads (shared == "dst", to the CTAs of the `multicast` mask when
    given) or stores (shared == "src")."""
    swizzle = SWIZZLE_BYTES.get(mode, 0)
    tmap = kernel_abi.tensor_map_argument(ctx.op, param, box, swizzle)
    ref = resolve(ctx.operand(shared))
    base = storage(ref)
    dyn = dynamic_offset(ref)
    barrier = ctx.operand("barrier")
    group = None
    if barrier is not None and barrier.type == emit.ptr():   # generic: TMA wants shared
        barrier = llvm.addrspacecast(emit.ptr(3), barrier)
    elif barrier is not None and barrier.type == emit.ptr(7):
        # Another CTA's barrier (tile.mapa): a CTA pair's load (.cta_group::2), which may
        # signal the barrier of either CTA of the pair; the op takes its shared::cluster
        # address in a shared pointer.
        barrier = llvm.inttoptr(emit.ptr(3), llvm.ptrtoint(emit.i64(), barrier))
        group = ir.Attribute.parse("#nvvm.cta_group<cta_2>")
    for r0, c0, offset in boxes:
        smem = emit.gep(base, ref.type.elem, emit.add(dyn, offset))
        coords = [emit.to_i32(emit.add(starts[1], c0)), emit.to_i32(emit.add(starts[0], r0))]
        if shared == "dst":
            nvvm.cp_async_bulk_tensor_shared_cluster_global(
                llvm.addrspacecast(emit.ptr(7), smem), tmap, coords, barrier, [], group=group,
                multicast_mask=multicast)
        else:
            nvvm.cp_async_bulk_tensor_global_shared_cta(tmap, smem, coords)


@predicate("no_barrier")
def no_barrier(ctx):
    if ctx.operand("barrier") is None:
        return None
    return ("a TMA store completes through bulk groups (T.ptx.bulk.commit_group / wait_group), "
            "not a barrier")


@predicate("thread_scope")
def thread_scope(ctx):
    """Scope "thread": each thread that reaches the op issues the whole store. Stores are not
    counted on a barrier, so several issuers (one per warpgroup, say, each with its own window)
    are allowed."""
    if ctx.scope == "thread":
        return None
    return (f"scope '{ctx.scope}': a TMA store is issued by one thread (scope 'thread', e.g. "
            f"under lane == 0 of one warp)")


@register("copy_async", name="tma_store", priority=20,
          when=[copies("global", "shared", "a TMA store"), no_barrier, thread_scope,
                same_shape_and_type, target_supports("tma")])
def lower_tma_store(ctx):
    """cp.async.bulk.tensor.2d.global.shared::cta.bulk_group per box; commit and wait with
    tile.async_commit / tile.async_wait of kind "bulk". Parts of a box past the global edges
    are not written, so ragged edges need no masking."""
    mode = _swizzle_mode(ctx, "src")
    boxes, box = _boxes(ctx, "src", mode)
    param, starts = _global_window(ctx, "dst")
    return lambda: _emit_boxes(ctx, "src", param, _start_values(starts), boxes, box, mode)



# ---------------------------------------------------------------------------- multicast
def _cluster_ctas(ctx) -> int:
    """CTAs per cluster of the kernel (its tile.cluster shape; 1 without one)."""
    shape = cluster_shape(ctx.func) or (1, 1, 1)
    return shape[0] * shape[1] * shape[2]


@predicate("cluster_launch")
def cluster_launch(ctx):
    if _cluster_ctas(ctx) > 1:
        return None
    return ("a multicast copy writes the shared memory of other CTAs of a cluster: the kernel "
            "needs a cluster of more than one CTA (T.cluster_shape)")


@predicate("mask_fits_cluster")
def mask_fits_cluster(ctx):
    """The mask is a constant naming only ranks of the cluster."""
    owner = ctx.operand("multicast").owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return "the multicast mask must be a constant (a static set of CTA ranks)"
    mask = ir.IntegerAttr(owner.attributes["value"]).value & 0xFFFF
    ctas = _cluster_ctas(ctx)
    if mask == 0:
        return "the multicast mask names no CTA"
    if mask >> ctas:
        return (f"the multicast mask {mask:#b} names CTA ranks beyond the {ctas} CTAs of the "
                f"kernel's cluster")
    return None


@predicate("own_barrier")
def own_barrier(ctx):
    if ctx.operand("barrier").type != emit.ptr(7):
        return None
    return ("a multicast copy signals the barrier at the same offset in each CTA of the mask: "
            "pass this CTA's barrier, not a tile.mapa pointer")


@register("copy_async_multicast", name="tma_multicast", priority=20,
          when=[copies("shared", "global", "a TMA load"), single_thread, same_shape_and_type,
                target_supports("tma"), target_supports("clusters"), cluster_launch,
                mask_fits_cluster, own_barrier])
def lower_tma_multicast(ctx):
    """cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
    .multicast::cluster per box: the box lands at the same offset in every CTA of the mask and
    completes on each one's barrier at the same offset (so each of those barriers must expect
    the bytes)."""
    mode = _swizzle_mode(ctx, "dst")
    boxes, box = _boxes(ctx, "dst", mode)
    param, starts = _global_window(ctx, "src")
    return lambda: _emit_boxes(ctx, "dst", param, _start_values(starts), boxes, box, mode,
                               multicast=ctx.operand("multicast"))
