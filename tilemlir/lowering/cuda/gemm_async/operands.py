"""What the tcgen05 and wgmma variants share: dtypes, dims and the shared-memory A / B tiles.

A and B are K-major tiles, A (M, K) and B (N, K), in shared memory with the layout the tensor
cores read (tilemlir.layout.mma_shared_layout for one of the swizzle modes); with the op's
`transpose_b` B is a (K, N) tile instead, MN-major (mn_major_operand). Each MMA
instruction reads a 16-deep K slice (and, for wgmma, a 64-row M block of A) through a 64-bit
shared-memory descriptor; this module checks the tiles and builds those descriptors as

    descriptor = constant(swizzle, LBO, SBO, start = sub-tile byte offset) + start(tile address)

with start(x) = (x & 0x3FFFF) >> 4 taken at run time from the tile's address (the start field
is the low 14 bits, so adding the sub-tile offset there is the descriptor advance rule of
tilemlir.lowering.cuda.descriptors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, llvm

from tilemlir.dispatch.registry import Reject, predicate
from tilemlir.ir import emit, windows
from tilemlir.ir.types import BufferType
from tilemlir.layout import SWIZZLE_MODES, LayoutError, mma_shared_layout, swizzle_for
from tilemlir.lowering import addresses
from tilemlir.layout.swizzle import SWIZZLE_BYTES
from tilemlir.lowering.cuda.descriptors import (MMA_K_STEP_BYTES, SWIZZLE_REPEAT_BYTES,
                                                KMajorTile, MNMajorTile, advance_descriptor)

MMA_K = 16                      # K of one f16 / bf16 MMA instruction (32 bytes)
INPUT_TYPES = ("f16", "bf16")


def mma_k(elem_bits: int) -> int:
    """K of one MMA instruction, which reads 32 bytes of K: 16 for 16-bit elements, 32 for
    8-bit ones."""
    return MMA_K_STEP_BYTES * 8 // elem_bits
_START_MASK = 0x3FFFF           # matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
_CUTLASS_LBO = 16               # swizzled K-major: the hardware ignores LBO ("assumed 1")


# ------------------------------------------------------------------------------ predicates
@predicate("dtypes")
def dtypes(ctx):
    """A and B both f16 or both bf16, D f32."""
    a, b, d = (str(ctx.buffer(n).elem) for n in "abd")
    problems = [f"{name} is {t}, needs f16 or bf16" for name, t in (("A", a), ("B", b))
                if t not in INPUT_TYPES]
    if a != b and a in INPUT_TYPES and b in INPUT_TYPES:
        problems.append(f"A is {a} but B is {b}: inputs must have one type")
    if d != "f32":
        problems.append(f"D is {d}, the accumulator must be f32")
    return "; ".join(problems) or None


@dataclass(frozen=True)
class Dims:
    m: int          # rows of A and D
    n: int          # columns of D
    b_n: int        # B's extent along N (N, or N / 2 per CTA with cta_group 2)
    k: int


def dims(ctx, k_step: int = MMA_K) -> Dims:
    """The operands' dims, or raises Reject when they are not 2-D, disagree on M or K, or K is
    not a multiple of `k_step` (one instruction's K). B is (N, K), or (K, N) when the op has
    transpose_b."""
    bufs = {n.upper(): ctx.buffer(n) for n in "dab"}
    b_shape = "K x N" if ctx.attr("transpose_b") else "N x K"
    not_2d = [f"{name} has shape {list(b.shape)}" for name, b in bufs.items() if len(b.shape) != 2]
    if not_2d:
        raise Reject(f"A (M x K), B ({b_shape}) and D (M x N) must be 2-D; " + ", ".join(not_2d))
    (dm, dn), (am, ak), (bn, bk) = bufs["D"].shape, bufs["A"].shape, bufs["B"].shape
    if ctx.attr("transpose_b"):
        bk, bn = bn, bk
    problems = []
    if am != dm:
        problems.append(f"A has M={am} rows but D has M={dm}")
    if ak != bk:
        problems.append(f"A has K={ak} but B has K={bk}")
    if ak % k_step:
        problems.append(f"K={ak} is not a multiple of {k_step} (one MMA instruction's K)")
    if problems:
        raise Reject("; ".join(problems))
    return Dims(dm, dn, bn, ak)


def static_bool(value: ir.Value) -> bool | None:
    """The i1 `value` when it is an arith.constant, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return bool(ir.IntegerAttr(owner.attributes["value"]).value)


# ------------------------------------------------------------------------------ A and B tiles
@dataclass(frozen=True)
class SmemOperand:
    """A K-major (rows, K) tile of 16-bit (or 8-bit) elements in an MMA shared-memory layout."""
    name: str
    rows: int
    k: int
    swizzle: str            # "128B", "64B", "32B" or "none"
    elem_bits: int = 16

    @property
    def tile(self) -> KMajorTile:
        lbo = None if self.swizzle == "none" else _CUTLASS_LBO
        return KMajorTile(self.elem_bits, self.swizzle, self.rows, self.k, 0, lbo=lbo)

    def row_offset_bytes(self, row: int) -> int:
        """Byte offset of row `row` (a multiple of 8) from the tile's start."""
        linear = mma_shared_layout(self.elem_bits, self.swizzle, (self.rows, self.k))
        m = linear.replace(swizzle=None).evaluate_coord((row, 0), (self.rows, self.k))["m"]
        return m * self.elem_bits // 8

    def descriptor(self, kind: str, row: int, k0: int) -> int:
        """The constant part of the descriptor of the sub-tile at (row, k0); kind wgmma|tcgen05."""
        tile = self.tile
        desc = tile.wgmma_descriptor(k0) if kind == "wgmma" else tile.tcgen05_descriptor(k0)
        return advance_descriptor(desc, self.row_offset_bytes(row)) if row else desc


def _swizzle_modes(buf: BufferType) -> list[str]:
    return [mode for mode in SWIZZLE_MODES
            if swizzle_for(mode, buf.elem_bits) == buf.layout.swizzle]


def smem_operand(ctx, name: str) -> SmemOperand:
    """Checks operand `name` ("a" or "b") is an MMA tile in shared memory; raises Reject."""
    label = name.upper()
    buf = ctx.buffer(name)
    rows, k = buf.shape
    modes = _swizzle_modes(buf)
    if not modes:
        raise Reject(f"{label}'s swizzle {buf.layout.swizzle} is not an MMA swizzle of "
                     f"{buf.elem_bits}-bit elements (128B, 64B, 32B or none)")
    mode = modes[0]
    try:
        expected = mma_shared_layout(buf.elem_bits, mode, (rows, k))
    except LayoutError as err:
        raise Reject(f"{label} ({rows}x{k}) cannot have the {mode} MMA layout: {err}") from None
    if not buf.layout.replace(offset={}).equivalent(expected):
        raise Reject(f"{label}'s layout {buf.layout} is not the K-major MMA layout of a "
                     f"{rows}x{k} {buf.elem} tile with {mode} swizzle, which is {expected} "
                     f"(see tilemlir.layout.mma_shared_layout)")
    _check_alignment(ctx, name, mode)
    return SmemOperand(label, rows, k, mode, buf.elem_bits)


@dataclass(frozen=True)
class MnMajorOperand:
    """An MN-major (K, MN) tile of 16-bit elements, MN contiguous, in shared memory."""
    name: str
    k: int
    mn: int
    swizzle: str
    k_group_stride: int     # bytes between 8-row groups along K
    mn_stride: int          # bytes between swizzle atoms (core matrices for "none") along MN

    @property
    def tile(self) -> MNMajorTile:
        return MNMajorTile(16, self.swizzle, self.k, self.mn, 0, self.k_group_stride,
                           self.mn_stride)

    def descriptor(self, k0: int) -> int:
        """The constant part of the wgmma descriptor of the K step starting at row k0."""
        return self.tile.wgmma_descriptor(k0)


def mn_major_operand(ctx, name: str) -> MnMajorOperand:
    """Checks operand `name` is an MN-major (K, MN) MMA tile in shared memory; raises Reject.

    Accepted: the layout tilemlir.layout.mma_shared_layout(bits, mode, (K, MN)) gives a (K, MN)
    tile (K as its rows: MN-chunks one swizzle row wide, each K rows tall, one after another),
    and any row window of a taller such buffer (a stage of a ring): 8-row groups and chunks may
    be any multiple of the swizzle repeat apart, the descriptor carries both strides.
    """
    label = name.upper()
    buf = ctx.buffer(name)
    k, mn = buf.shape
    if buf.elem_bits != 16:
        raise Reject(f"{label} is {buf.elem}: an MN-major (transposed) operand must be 16-bit")
    modes = _swizzle_modes(buf)
    if not modes:
        raise Reject(f"{label}'s swizzle {buf.layout.swizzle} is not an MMA swizzle of "
                     f"{buf.elem_bits}-bit elements (128B, 64B, 32B or none)")
    mode = modes[0]
    row_bytes = SWIZZLE_BYTES.get(mode, 16)
    chunk = row_bytes * 8 // buf.elem_bits
    natural = f"tilemlir.layout.mma_shared_layout({buf.elem_bits}, {mode!r}, ({k}, {mn}))"
    if mn % chunk or k % 16:
        raise Reject(f"{label} ({k}x{mn}, K x N) with {mode} swizzle needs N a multiple of "
                     f"{chunk} (one {row_bytes}-byte row) and K a multiple of 16")
    linear = buf.layout.replace(offset={}, swizzle=None)
    values = linear.evaluate_all((k, mn))
    if set(values) - {"m"}:
        raise Reject(f"{label}'s layout {buf.layout} places elements on "
                     f"{', '.join(sorted(set(values) - {'m'}))}; a shared tile has only memory")
    offset = values["m"] - values["m"][0, 0]
    ebytes = buf.elem_bits // 8
    group = int(offset[8, 0])
    stride = int(offset[0, chunk]) if mn > chunk else group * (k // 8)
    r, c = np.indices((k, mn))
    if mode == "none":      # 8 x 16-byte core matrices: 8 rows of 8 MN elements, 128 bytes
        expected = (r // 8) * group + (c // chunk) * stride + (r % 8) * chunk + c % chunk
    else:                   # rows of one swizzle atom (W bytes) per MN-chunk
        expected = (c // chunk) * stride + (r // 8) * group + (r % 8) * chunk + c % chunk
    bad = np.argwhere(offset != expected)
    if len(bad):
        i, j = (int(x) for x in bad[0])
        raise Reject(f"{label}'s layout {buf.layout} is not an MN-major MMA layout of a {k}x{mn} "
                     f"(K x N) tile with {mode} swizzle: element [{i}, {j}] is {int(offset[i, j])} "
                     f"elements from [0, 0], the layout of rows of {chunk}-element chunks "
                     f"(e.g. {natural}) puts it at {int(expected[i, j])}")
    operand = MnMajorOperand(label, k, mn, mode, group * ebytes, stride * ebytes)
    reason = operand.tile.check()
    if reason:
        raise Reject(f"{label} as an MN-major wgmma operand: {reason}")
    _check_alignment(ctx, name, mode)
    return operand


def _check_alignment(ctx, name: str, mode: str) -> None:
    """The tile starts on its swizzle repeat (16 bytes for "none"), whatever its dynamic offsets."""
    value = ctx.operand(name)
    ref = windows.resolve(value)
    bytes_per = ref.type.elem_bits // 8
    repeat = SWIZZLE_REPEAT_BYTES.get(mode, 16)
    root = ref.root.owner
    start = ir.IntegerAttr(root.attributes["offset"]).value \
        + (ref.static_base + ref.layout.offset.get("m", 0)) * bytes_per
    if start % repeat:
        raise Reject(f"{name.upper()} starts at byte {start} of shared memory, not on the "
                     f"{repeat}-byte repeat of the {mode} layout (the descriptor's base offset "
                     f"would be non-zero)")
    for values in windows.dynamic_offset_choices(value, "m"):
        off = next((v * bytes_per for v in values if v * bytes_per % repeat), None)
        if off is not None:
            raise Reject(f"a dynamic slice offset can move {name.upper()} by {off} bytes, off "
                         f"the {repeat}-byte repeat of the {mode} layout")


# ------------------------------------------------------------------------------ emission
def start_field(value: ir.Value) -> ir.Value:
    """i64 (address & 0x3FFFF) >> 4 of the tile's first element: the descriptor's start field."""
    ref = windows.resolve(value)
    address = llvm.ptrtoint(emit.i64(), addresses.element_pointer(ref, [0, 0]))
    masked = arith.andi(address, emit.const(_START_MASK, emit.i64()))
    return arith.shrui(masked, emit.const(4, emit.i64()))


def descriptor_value(constant: int, start: ir.Value) -> ir.Value:
    """constant + start as an i64 (the constant reinterpreted as signed)."""
    signed = constant - (1 << 64) if constant >= 1 << 63 else constant
    return arith.addi(emit.const(signed, emit.i64()), start)


def k_steps(k: int, step: int = MMA_K) -> range:
    """The first K element of each MMA instruction (of K `step`) along a K tile."""
    return range(0, k, step)
