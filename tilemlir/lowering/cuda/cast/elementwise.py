"""cast in registers, element by element (packed f32x2 -> f16x2 / bf16x2 conversions on sm_80+).

Before (a warp turns its m16n8 f32 accumulator into f16, both in the mma D layout):

    "tile.cast"(%d16, %d32) {scope = "warp"}
        : (!tile.buf<[16, 8], f16, "local", S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]>,
           !tile.buf<[16, 8], f32, "local", S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]>) -> ()

After: every element stays with its thread; register slots (0, 1) and (2, 3) of the source
land in slots (0, 1) and (2, 3) of the result, so each pair is one packed conversion:

    %lo = llvm.load %d32[0] : f32        %hi = llvm.load %d32[1] : f32
    %h = nvvm.convert.f32x2.to.f16x2 %hi, %lo {rnd = #nvvm.fp_rnd_mode<rn>} : vector<2xf16>
    llvm.store %h, %d16[0] : vector<2xf16>                        (cvt.rn.f16x2.f32)

Accepted when both layouts give every element to the same thread, and source slot s goes to
one destination slot for every element held in s (the same code for every thread). Float
widths convert with extf / truncf (round to nearest even; f16 <-> bf16 through f32), integers
with sitofp / fptosi / extsi / trunci. Two source slots s, s + 1 going to d, d + 1 convert as
one cvt.rn.{f16,bf16}x2.f32 where the chip has it (sm_80+), else one element at a time.
"""

from __future__ import annotations

import functools

import numpy as np
from mlir import ir
from mlir.dialects import arith, nvvm

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.ir.types import BufferType, is_f8
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.copy.registers import scope_reaches
from tilemlir.lowering.cuda.predicates import replicated_alike

PACKED = {"f16": nvvm.convert_f32x2_to_f16x2, "bf16": nvvm.convert_f32x2_to_bf16x2}
PACKED_MIN_SM = 80           # cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32


def _kind(t: ir.Type) -> str | None:
    if isinstance(t, ir.FloatType):
        return "float"
    if isinstance(t, ir.IntegerType) and ir.IntegerType(t).width > 1:
        return "int"
    return None


@predicate("registers")
def registers(ctx):
    wrong = [f"{n} is in {ctx.buffer(n).scope}" for n in ("dst", "src")
             if ctx.buffer(n).scope != "local"]
    if wrong:
        return "casts registers to registers (copy memory operands first); " + ", ".join(wrong)
    return None


@predicate("same_shape")
def same_shape(ctx):
    dst, src = ctx.buffer("dst"), ctx.buffer("src")
    if tuple(dst.shape) == tuple(src.shape):
        return None
    return f"dst is {list(dst.shape)} but src is {list(src.shape)}"


@predicate("convertible")
def convertible(ctx):
    dst, src = ctx.buffer("dst").elem, ctx.buffer("src").elem
    bad = [f"{n} holds {t}" for n, t in (("dst", dst), ("src", src)) if _kind(t) is None]
    if bad:
        return "converts integers and floats; " + ", ".join(bad)
    narrow = [f"{n} holds {t}" for n, t in (("dst", dst), ("src", src)) if is_f8(t)]
    if narrow:
        return "8-bit floats convert with the f8 variant; " + ", ".join(narrow)
    return None


def slot_mapping(ctx) -> dict[int, int]:
    """{source slot: destination slot}, the same for every thread, or raises Reject."""
    return dict(_slot_mapping(ctx.buffer("dst"), ctx.buffer("src")))


@functools.lru_cache(maxsize=1024)
def _slot_mapping(dst: BufferType, src: BufferType) -> tuple[tuple[int, int], ...]:
    """slot_mapping's pairs, per (dst, src) buffer types: a kernel casts few distinct tiles."""
    dmap, smap = fragments.thread_map(dst), fragments.thread_map(src)
    for what, d, s in (("lane", dmap.lane, smap.lane), ("warp", dmap.warp, smap.warp)):
        miss = fragments.first_mismatch(d, s)
        if miss is not None:
            raise Reject(f"dst{list(miss)} is held by {what} {int(d[miss])} but src{list(miss)} "
                         f"by {what} {int(s[miss])}: a cast keeps every element in its thread")
    mapping: dict[int, int] = {}
    for index, (s, d) in enumerate(zip(smap.slot.reshape(-1), dmap.slot.reshape(-1))):
        s, d = int(s), int(d)
        if mapping.setdefault(s, d) != d:
            coord = [int(i) for i in np.unravel_index(index, dst.shape)]
            raise Reject(f"src slot {s} goes to dst slot {mapping[s]} for one element but to "
                         f"slot {d} for element {coord}")
    return tuple(mapping.items())


def _convert(value: ir.Value, to: ir.Type) -> ir.Value:
    src = value.type
    if src == to:
        return value
    if _kind(src) == "float" and _kind(to) == "float":
        width, target = ir.FloatType(src).width, ir.FloatType(to).width
        if width == target:                          # f16 <-> bf16
            return arith.truncf(to, arith.extf(ir.F32Type.get(), value))
        return arith.extf(to, value) if width < target else arith.truncf(to, value)
    if _kind(src) == "int" and _kind(to) == "float":
        return arith.sitofp(to, value)
    if _kind(src) == "float":
        return arith.fptosi(to, value)
    width, target = ir.IntegerType(src).width, ir.IntegerType(to).width
    return arith.extsi(to, value) if width < target else arith.trunci(to, value)


def _packed_pairs(ctx, mapping) -> list[int]:
    """Source slots s that convert with s + 1 as one packed instruction."""
    to, src = str(ctx.buffer("dst").elem), str(ctx.buffer("src").elem)
    if src != "f32" or to not in PACKED or ctx.target.sm < PACKED_MIN_SM:
        return []
    pairs, taken = [], set()
    for s in sorted(mapping):
        if s in taken or s + 1 not in mapping or mapping[s + 1] != mapping[s] + 1:
            continue
        pairs.append(s)
        taken.update((s, s + 1))
    return pairs


def _emit(ctx, mapping, pairs):
    dst, src = windows.resolve(ctx.operand("dst")), windows.resolve(ctx.operand("src"))
    d_base, s_base = addresses.storage(dst), addresses.storage(src)
    to, elem = dst.type.elem, src.type.elem
    rn = ir.Attribute.parse("#nvvm.fp_rnd_mode<rn>")
    packed = set(pairs) | {s + 1 for s in pairs}
    for s in pairs:
        lo = emit.load(elem, addresses.slot_pointer(src, s, s_base))
        hi = emit.load(elem, addresses.slot_pointer(src, s + 1, s_base))
        pair = PACKED[str(to)](emit.vector_type(2, to), hi, lo, rnd=rn)
        emit.store(pair, addresses.slot_pointer(dst, mapping[s], d_base), align=2)
    for s, d in sorted(mapping.items()):
        if s not in packed:
            value = emit.load(elem, addresses.slot_pointer(src, s, s_base))
            emit.store(_convert(value, to), addresses.slot_pointer(dst, d, d_base))


@register("cast", name="elementwise", priority=0,
          when=[registers, same_shape, convertible, scope_reaches, replicated_alike])
def lower_cast(ctx):
    """Each thread converts the registers it keeps; f32 pairs as packed cvt (sm_80+)."""
    for name in ("dst", "src"):
        fragments.register_ref(ctx, name)
    mapping = slot_mapping(ctx)
    pairs = _packed_pairs(ctx, mapping)
    return lambda: _emit(ctx, mapping, pairs)
