"""copy_async tensor memory -> registers with tcgen05.ld.sync.aligned.32x32b (sm_100a).

Before (seed 000's epilogue: the warpgroup reads a 128x128 f32 accumulator, thread t of the
warpgroup receives row t; the completion wait stays explicit):

    "tile.copy_async"(%dreg, %d) {scope = "warpgroup"}
        : (!tile.buf<[128, 128], f32, "local", S[(128, 128):(1@tid_in_wg, 1)]>,
           !tile.buf<[128, 128], f32, "tmem", S[(128, 128):(1@TLane, 1@TCol)]>) -> ()
    "tile.tcgen05_wait"() {kind = "ld"}

After (warp w of the warpgroup may only access TMEM lanes 32w .. 32w + 31, so each warp reads
its 32 rows at lane 32w; 128 columns are one .x128 load, wider rows are split into legal
power-of-two counts, e.g. 192 = .x128 + .x64):

    %w = (threadIdx.x / 32) % 4
    %t = llvm.inttoptr (%tmem_addr + (lane0 << 16 | col0) + (32 * %w) << 16) : i32 to !llvm.ptr<6>
    %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
    %f = llvm.bitcast %v : vector<128xi32> to vector<128xf32>
    llvm.store (llvm.extractelement %f[j]) -> register slot of column j      (j = 0 .. 127)
    nvvm.tcgen05.wait <load>                                                 (the kernel's)

Accepted: 32-bit elements (f32, i32); the source a (128, N) window of TMEM at scope
"warpgroup", or a (32, N) window at scope "warp", laid out row r -> lane lane0 + r, column
c -> column col0 + c (a static or dynamic column window of an allocation), lane0 = 0 for a
warpgroup and a multiple of 32 for a warp; the destination gives row r to lane r % 32 of warp
r / 32 of the scope (for a warp, a named warp must be lane0 / 32 modulo 4), each column in one
register slot on every thread. At warp scope the executing warp must be warp lane0 / 32
(mod 4) of its warpgroup, which the hardware requires and this variant cannot see when the
destination names no warp.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout import LayoutError
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.predicates import same_shape_and_type, target_supports
from tilemlir.lowering.cuda.threads import ThreadEnv

WARP_ROWS = 32
MAX_COLUMNS = 128          # tcgen05.ld .32x32b takes .x1 .. .x128
TMEM_COLUMNS = 512
SCOPE_ROWS = {"warp": 32, "warpgroup": 128}
SHAPE_32X32B = "#nvvm.tcgen05_ldst_shape<shape_32x32b>"


# ------------------------------------------------------------------------------ predicates
@predicate("tmem_to_registers")
def tmem_to_registers(ctx):
    dst, src = ctx.buffer("dst"), ctx.buffer("src")
    if src.scope == "tmem" and dst.scope == "local":
        return None
    return f"needs a TMEM source and a register destination; src is in {src.scope}, dst in " \
           f"{dst.scope}"


@predicate("no_barrier")
def no_barrier(ctx):
    if ctx.operand("barrier") is None:
        return None
    return "tcgen05.ld completes with tile.tcgen05_wait {kind = \"ld\"}, not with a barrier"


@predicate("whole_scope")
def whole_scope(ctx):
    """Scope warp or warpgroup, all of whose threads reach the op (tcgen05.ld is .sync.aligned)."""
    if ctx.scope not in SCOPE_ROWS:
        return f"scope '{ctx.scope}': tcgen05.ld runs per warp; use 'warp' or 'warpgroup'"
    return ctx.narrowing_reason()


@predicate("tmem_window")
def tmem_window(ctx):
    src = ctx.buffer("src")
    problems = []
    if src.elem_bits != 32:
        problems.append(f"{src.elem} is not a 32-bit element (tcgen05.ld .32x32b moves b32)")
    rows = SCOPE_ROWS.get(ctx.scope)
    if rows is not None and (len(src.shape) != 2 or src.shape[0] != rows):
        problems.append(f"a {ctx.scope} reads a ({rows}, N) window of TMEM, got "
                        f"{list(src.shape)}")
    return "; ".join(problems) or None


# ------------------------------------------------------------------------------ analysis
def _source_lane(ctx) -> int:
    """The TMEM lane of the source's first row; rows must be on lane0 + r, columns on col0 + c."""
    src = ctx.buffer("src")
    values = src.layout.evaluate_all(src.shape)
    other = [a for a in values if a not in ("TLane", "TCol")]
    if other:
        raise Reject(f"src's layout {src.layout} places elements on {', '.join(other)}")
    rows, cols = np.indices(src.shape)
    lane = values.get("TLane", np.zeros(src.shape, np.int64))
    col = values.get("TCol", np.zeros(src.shape, np.int64))
    bad = np.argwhere((lane - lane[0, 0] != rows) | (col - col[0, 0] != cols))
    if len(bad):
        r, c = (int(x) for x in bad[0])
        raise Reject(f"src[{r}, {c}] is at TMEM lane {int(lane[r, c])}, column "
                     f"{int(col[r, c])}: tcgen05.ld .32x32b needs rows on consecutive lanes and "
                     f"columns on consecutive columns (S[(R, N):(1@TLane, 1@TCol)])")
    if any(v for choices in windows.dynamic_offset_choices(ctx.operand("src"), "TLane")
           for v in choices):
        raise Reject("a dynamic slice offset moves src across TMEM lanes; a warp's lanes are "
                     "fixed, only columns may move")
    dropped = windows.view_offsets(windows.resolve(ctx.operand("src")))
    last_col = int(col.max()) + dropped.get("TCol", 0)
    if last_col >= TMEM_COLUMNS:
        raise Reject(f"src reaches TMEM column {last_col}; tensor memory has {TMEM_COLUMNS} "
                     f"columns")
    lane0 = int(lane[0, 0]) + dropped.get("TLane", 0)
    if ctx.scope == "warpgroup" and lane0:
        raise Reject(f"src starts at TMEM lane {lane0}; a warpgroup reads lanes 0..127")
    if lane0 % WARP_ROWS:
        raise Reject(f"src starts at TMEM lane {lane0}, not a multiple of 32 (a warp reads one "
                     f"32-lane quarter)")
    return lane0


def _column_slots(ctx, lane0: int) -> list[int]:
    """The destination's register slot of each column, checked on every row."""
    dst = ctx.buffer("dst")
    held = fragments.thread_map(dst)
    rows = np.indices(dst.shape)[0]
    if not held.lanes_named:
        raise Reject(f"dst's layout {dst.layout} names no lane: row r must be held by lane r % 32")
    at = fragments.first_mismatch(held.lane, rows % WARP_ROWS)
    if at is not None:
        raise Reject(f"dst{list(at)} is held by lane {int(held.lane[at])}, but tcgen05.ld gives "
                     f"row {at[0]} to lane {at[0] % WARP_ROWS}")
    if ctx.scope == "warpgroup" and not held.warps_named:
        raise Reject(f"dst's layout {dst.layout} names no warp: row r of a warpgroup's read goes "
                     f"to warp r / 32")
    if ctx.scope == "warpgroup":
        at = fragments.first_mismatch(held.warp, rows // WARP_ROWS)
    elif held.warps_named:
        at = fragments.first_mismatch(held.warp % 4, np.full(dst.shape, lane0 // WARP_ROWS))
    else:
        at = None                    # no warp named: which warp runs it is the caller's (see above)
    if at is not None:
        raise Reject(f"dst{list(at)} is held by warp {int(held.warp[at])}, but TMEM lane "
                     f"{lane0 + at[0]} can only be read by warp {(lane0 + at[0]) // WARP_ROWS} "
                     f"(mod 4) of a warpgroup")
    at = fragments.first_mismatch(held.slot, np.broadcast_to(held.slot[0], dst.shape))
    if at is not None:
        raise Reject(f"dst keeps column {at[1]} in slot {int(held.slot[at])} on row {at[0]} but in "
                     f"slot {int(held.slot[0, at[1]])} on row 0: each column needs one register "
                     f"slot on every thread")
    return [int(s) for s in held.slot[0]]


def column_chunks(n: int) -> list[tuple[int, int]]:
    """(first column, count) of the .32x32b loads covering n columns: powers of two <= 128."""
    chunks, start = [], 0
    while start < n:
        count = min(MAX_COLUMNS, 1 << ((n - start).bit_length() - 1))
        chunks.append((start, count))
        start += count
    return chunks


# ------------------------------------------------------------------------------ lowering
def _as(type_: ir.Type, bits: ir.Value) -> ir.Value:
    """The b32 registers tcgen05.ld returns, read as `type_` (no op when they are i32 already)."""
    return bits if bits.type == type_ else emit.bitcast(type_, bits)


def _emit(ctx, slots: list[int]):
    src = windows.resolve(ctx.operand("src"))
    dst = windows.resolve(ctx.operand("dst"))
    elem = dst.type.elem
    address = addresses.tmem_address(src, [0, 0])
    if ctx.scope == "warpgroup":
        warp = ThreadEnv().axis("wid_in_wg")
        address = arith.addi(address, emit.to_i32(emit.mul(warp, WARP_ROWS << 16)))
    shape = ir.Attribute.parse(SHAPE_32X32B)
    base = addresses.storage(dst)
    for first, count in column_chunks(len(slots)):
        chunk = arith.addi(address, emit.const_i32(first)) if first else address
        pointer = llvm.inttoptr(emit.ptr(6), chunk)
        if count == 1:
            values = [_as(elem, nvvm.tcgen05_ld(emit.i32(), shape, pointer))]
        else:
            bits = nvvm.tcgen05_ld(emit.vector_type(count, emit.i32()), shape, pointer)
            vector = _as(emit.vector_type(count, elem), bits)
            values = [emit.extract_element(vector, j) for j in range(count)]
        for j, value in enumerate(values):
            emit.store(value, addresses.slot_pointer(dst, slots[first + j], base))


@register("copy_async", name="tcgen05.ld", priority=10,
          when=[target_supports("tcgen05"), tmem_to_registers, no_barrier, whole_scope,
                same_shape_and_type, tmem_window])
def lower_tmem_load(ctx):
    """Each warp loads its 32 TMEM lanes with tcgen05.ld.32x32b into the register slots."""
    try:
        lane0 = _source_lane(ctx)
    except LayoutError as err:
        raise Reject(f"src: {err}") from None
    slots = _column_slots(ctx, lane0)
    return lambda: _emit(ctx, slots)
