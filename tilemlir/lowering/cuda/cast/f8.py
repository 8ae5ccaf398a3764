"""cast in registers to or from 8-bit floats (f8E4M3FN, f8E5M2), two elements per instruction.

Before (a warpgroup quantizes a 64x16 f32 accumulator tile to e4m3 in the same layout):

    "tile.cast"(%q, %acc) {scope = "warpgroup"}
        : (!tile.buf<[64, 16], f8E4M3FN, "local", wgmma_accumulator_layout(64, 16)>,
           !tile.buf<[64, 16], f32, "local", wgmma_accumulator_layout(64, 16)>) -> ()

After: LLVM has no 8-bit float type, so f8 registers hold their bits as i8; each pair of
source slots (s, s + 1) that lands in destination slots (d, d + 1) is one conversion of two
elements (the high one first, as cvt takes them):

    %lo = llvm.load %acc[0] : f32        %hi = llvm.load %acc[1] : f32
    %q2 = nvvm.convert.f32x2.to.f8x2 %hi, %lo {rnd = rn, sat = satfinite}
          : vector<2xi8> (f8E4M3FN)                       (cvt.rn.satfinite.e4m3x2.f32)
    llvm.store (extractelement %q2[0]), %q[0] : i8        ... %q[1]

The instructions (PTX ISA "cvt"; sm_90, or sm_89 with PTX ISA 8.1):

    f32 x2  -> f8 x2     cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32
    f16x2   -> f8 x2     cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2
    f8 x2   -> f16x2     cvt.rn.f16x2.{e4m3x2,e5m2x2}          (exact)

and the others through them: bf16 -> f8 widens to f32 first (exact; sm_90 has no bf16x2
source form), f8 -> f32 and f8 -> bf16 go through f16x2 (exact: every e4m3 and e5m2 value is
an f16, and their 2-3 mantissa bits fit bf16's 7), f8 -> the other f8 through f16x2. Narrowing
rounds to nearest even and saturates: a value beyond the largest finite one (448 for e4m3, 57344
for e5m2), infinities included, becomes that value with its sign; NaN stays NaN. A slot
without a partner converts alone, paired with itself.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, nvvm

from tilemlir.dispatch.registry import predicate, register
from tilemlir.ir import emit, windows
from tilemlir.ir.types import is_f8
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.cast.elementwise import registers, same_shape, slot_mapping
from tilemlir.lowering.cuda.copy.registers import scope_reaches
from tilemlir.lowering.cuda.predicates import replicated_alike, target_supports

WIDE = ("f16", "bf16", "f32")


@predicate("f8_operand")
def f8_operand(ctx):
    """One side is an 8-bit float, the other one too or f16, bf16 or f32."""
    dst, src = ctx.buffer("dst").elem, ctx.buffer("src").elem
    if not (is_f8(dst) or is_f8(src)):
        return f"neither dst ({dst}) nor src ({src}) is an 8-bit float"
    other = [f"{n} holds {t}" for n, t in (("dst", dst), ("src", src))
             if not is_f8(t) and str(t) not in WIDE]
    if other:
        return "8-bit floats convert to and from f16, bf16 and f32; " + ", ".join(other)
    return None


def _pairs(mapping) -> list[tuple[int, int | None]]:
    """(s, s + 1) for source slots that land in consecutive destination slots, (s, None) for
    the rest: the conversions, in source order."""
    pairs, taken = [], set()
    for s in sorted(mapping):
        if s in taken:
            continue
        if s + 1 in mapping and s + 1 not in taken and mapping[s + 1] == mapping[s] + 1:
            pairs.append((s, s + 1))
            taken.update((s, s + 1))
        else:
            pairs.append((s, None))
            taken.add(s)
    return pairs


# ------------------------------------------------------------------------------ conversions
def _f8x2(lo: ir.Value, hi: ir.Value) -> ir.Value:
    """Two f8 bit patterns (i8) as the vector<2xi8> the conversions read."""
    return emit.build_vector([lo, hi])


def _f32_pair_to_f8(lo, hi, to: ir.Type) -> ir.Value:
    rn = ir.Attribute.parse("#nvvm.fp_rnd_mode<rn>")
    sat = ir.Attribute.parse("#nvvm.sat_mode<satfinite>")
    return nvvm.convert_f32x2_to_f8x2(emit.vector_type(2, to), hi, lo, to, rnd=rn, sat=sat)


def _f16_pair_to_f8(pair: ir.Value, to: ir.Type) -> ir.Value:
    """vector<2xf16> -> vector<2xi8> (satfinite is implied by the f16x2 form)."""
    return nvvm.convert_f16x2_to_f8x2(emit.vector_type(2, to), pair, to)


def _f8_pair_to_f16(pair: ir.Value, src: ir.Type) -> ir.Value:
    return nvvm.convert_f8x2_to_f16x2(emit.vector_type(2, ir.F16Type.get()), pair, src)


def _to_f32(value: ir.Value) -> ir.Value:
    return value if isinstance(value.type, ir.F32Type) else arith.extf(ir.F32Type.get(), value)


def _convert_pair(lo: ir.Value, hi: ir.Value, src: ir.Type, to: ir.Type) -> list[ir.Value]:
    """[lo, hi] of `src` (f8 as i8 bits) converted to `to`, as two values (f8 as i8 bits)."""
    if is_f8(to):
        if is_f8(src):
            if src == to:
                return [lo, hi]
            pair = _f8_pair_to_f16(_f8x2(lo, hi), src)
            q = _f16_pair_to_f8(pair, to)
        elif isinstance(src, ir.F16Type):
            q = _f16_pair_to_f8(emit.build_vector([lo, hi]), to)
        else:                                            # f32, or bf16 widened exactly
            q = _f32_pair_to_f8(_to_f32(lo), _to_f32(hi), to)
        return [emit.extract_element(q, 0), emit.extract_element(q, 1)]
    halves = _f8_pair_to_f16(_f8x2(lo, hi), src)
    values = [emit.extract_element(halves, 0), emit.extract_element(halves, 1)]
    if isinstance(to, ir.F16Type):
        return values
    wide = [arith.extf(ir.F32Type.get(), v) for v in values]
    if isinstance(to, ir.F32Type):
        return wide
    return [arith.truncf(to, v) for v in wide]           # bf16: exact


def _emit(ctx, mapping, pairs):
    dst, src = windows.resolve(ctx.operand("dst")), windows.resolve(ctx.operand("src"))
    d_base, s_base = addresses.storage(dst), addresses.storage(src)
    to, elem = dst.type.elem, src.type.elem
    for s, partner in pairs:
        lo = emit.load(elem, addresses.slot_pointer(src, s, s_base))
        hi = lo if partner is None else emit.load(elem, addresses.slot_pointer(src, partner,
                                                                               s_base))
        values = _convert_pair(lo, hi, elem, to)
        emit.store(values[0], addresses.slot_pointer(dst, mapping[s], d_base))
        if partner is not None:
            emit.store(values[1], addresses.slot_pointer(dst, mapping[partner], d_base))


@register("cast", name="f8", priority=10,
          when=[registers, same_shape, f8_operand, target_supports("fp8_convert"),
                scope_reaches, replicated_alike])
def lower_cast_f8(ctx):
    """Each thread converts the registers it keeps, two elements per cvt (sm_90; sm_89 with
    PTX ISA 8.1)."""
    for name in ("dst", "src"):
        fragments.register_ref(ctx, name)
    mapping = slot_mapping(ctx)
    return lambda: _emit(ctx, mapping, _pairs(mapping))
