"""Scalar math for the elementwise primitives: one f32 value in, one out, built at the
insertion point from arith ops, NVVM intrinsics and (where LLVM has no intrinsic) inline PTX.

There is no libdevice in tilemlir's pipeline, so the precise functions are written here:

| fn         | precise (default)                                            | fast=True                     |
|------------|--------------------------------------------------------------|-------------------------------|
| exp        | n = floor(x log2 e) clamped to [-126, 126] (a saturating and a | ex2.approx.ftz(x log2 e)    |
|            | round-down FMA); ex2.approx.ftz(x log2 e - n) * 2^n, the      |                               |
|            | argument in two FMAs: ~2 ulp for all x, subnormals kept       |                               |
| exp2       | ex2.approx.f32 (2 ulp, subnormal results kept)                | ex2.approx.ftz.f32            |
| log        | x = m 2^e, m in [sqrt(1/2), sqrt(2)): 2 atanh((m-1)/(m+1))    | lg2.approx.ftz(x) ln 2        |
|            | as an odd series, + e ln 2 (a few ulp)                        |                               |
| rsqrt      | 1 / sqrt.rn(x) (div.rn)                                       | rsqrt.approx.ftz.f32          |
| sqrt       | sqrt.rn.f32                                                   | sqrt.approx.ftz.f32           |
| tanh       | |x| < 0.55: Taylor series to x^17; else 1 - 2 / (e^2|x| + 1)   | tanh.approx.f32 (sm_75+)      |
| sigmoid    | 1 / (1 + e^-x)                                                | rcp.approx(1 + ex2.approx(..))|
| silu       | x / (1 + e^-x)                                                | x * rcp.approx(1 + ex2.approx)|
| gelu_tanh  | x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))                 | with tanh.approx              |
| gelu_erf   | x/2 erfc(-x/sqrt 2), erfc by Numerical Recipes' erfcc         | (the same)                    |
|            | (fractional error < 1.2e-7)                                   |                               |
| neg, abs   | sign-bit flip / clear (exact, any float width)                |                               |
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from tilemlir.ir import emit

LOG2E = 1.4426950408889634
LN2_HI = 0.693145751953125           # ln 2 split so that n * LN2_HI is exact for |n| < 2^11
LN2_LO = 1.4286068203094172e-06
LN2 = math.log(2.0)
LOG2E_HI = 1.4426950216293335       # log2 e in two floats: HI + LO is log2 e to ~2^-50
LOG2E_LO = 1.925963033500011e-08
_ROUNDER = 1.5 * 2.0 ** 23           # x + _ROUNDER rounds x in [-2^22, 2^22) to an integer

UNARY = ("exp", "exp2", "log", "rsqrt", "sqrt", "tanh", "sigmoid", "silu", "gelu_tanh",
         "gelu_erf", "neg", "abs")
# The instruction each fast function needs beyond sm_75 (tilemlir's oldest chip), if any.
TANH_APPROX_MIN_SM = 75


def f32() -> ir.Type:
    return ir.F32Type.get()


def const(value: float, type_: ir.Type | None = None) -> ir.Value:
    return arith.constant(type_ or f32(), float(value))


def intrinsic(name: str, *args: ir.Value) -> ir.Value:
    return llvm.call_intrinsic(args[0].type, name, list(args), [], [])


def inline_ptx(instruction: str, x: ir.Value) -> ir.Value:
    """`instruction $0, $1;` on one 32-bit register (LLVM 22 has no intrinsic for it)."""
    return nvvm.InlinePtxOp([x.type], [x], [], f"{instruction} $0, $1;").results[0]


def fma(a, b, c) -> ir.Value:
    return llvm.intr_fma(a, b, c)


def _mul(a, b):
    return arith.mulf(a, b)


def _add(a, b):
    return arith.addf(a, b)


def _poly(x: ir.Value, coefficients) -> ir.Value:
    """c0 + x (c1 + x (c2 + ...)) by Horner with FMAs."""
    acc = const(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = fma(acc, x, const(c))
    return acc


def _select(cond, a, b):
    return arith.select(cond, a, b)


def _cmp(pred, a, b):
    return arith.cmpf(pred, a, b)


def exp(x: ir.Value, fast: bool) -> ir.Value:
    """e^x = 2^n 2^f, n an integer and f = x log2 e - n, in eight instructions.

    t = sat(x log2 e / 252 + 1/2) maps x log2 e, clamped to [-126, 126], onto [0, 1] (.sat takes
    NaN to 0). j = 252 t + (1.5 2^23 + 1) rounded down is an integer whose low mantissa bits
    are floor(252 t) + 1 = n + 127: shifted left by 23 they are the exponent field of 2^n (a
    normal float for every n), and (1.5 2^23 + 127) - j is -n. f comes from x in two FMAs (log2 e
    split in two floats), accurate to an ulp of f, in [0, 2) wherever e^x is a normal float;
    ex2.approx.ftz(f) * 2^n is then within ~2 ulp, subnormal results too (one rounding, by a
    multiply that keeps subnormals). Beyond the clamp f grows past 2 (inf) or below -23 (0);
    inf, -inf and NaN give inf, 0 and NaN."""
    if fast:
        return intrinsic("llvm.nvvm.ex2.approx.ftz.f", _mul(x, const(LOG2E)))
    t = intrinsic("llvm.nvvm.saturate.f", fma(x, const(LOG2E / 252), const(0.5)))
    j = intrinsic("llvm.nvvm.fma.rm.f", t, const(252.0), const(_ROUNDER + 1))
    minus_n = arith.subf(const(_ROUNDER + 127), j)
    two_n = arith.bitcast(f32(), arith.shli(arith.bitcast(emit.i32(), j), emit.const_i32(23)))
    f = fma(x, const(LOG2E_HI), minus_n)
    f = fma(x, const(LOG2E_LO), f)
    return _mul(intrinsic("llvm.nvvm.ex2.approx.ftz.f", f), two_n)


def exp2(x: ir.Value, fast: bool) -> ir.Value:
    return intrinsic("llvm.nvvm.ex2.approx.ftz.f" if fast else "llvm.nvvm.ex2.approx.f32", x)


def log(x: ir.Value, fast: bool) -> ir.Value:
    if fast:
        return _mul(intrinsic("llvm.nvvm.lg2.approx.ftz.f", x), const(LN2))
    i32 = emit.i32()
    # Subnormals: scale by 2^23 into the normal range, and take 23 off the exponent.
    tiny = _cmp(arith.CmpFPredicate.OLT, x, const(2.0 ** -126))
    xs = _select(tiny, _mul(x, const(2.0 ** 23)), x)
    bias = _select(tiny, emit.const_i32(-23), emit.const_i32(0))
    bits = arith.bitcast(i32, xs)
    # e such that m = x / 2^e lies in [sqrt(1/2), sqrt(2)); 0x3f3504f3 is sqrt(1/2)'s bits.
    shifted = arith.subi(bits, emit.const_i32(0x3F3504F3))
    e = arith.shrsi(shifted, emit.const_i32(23))
    m = arith.bitcast(f32(), arith.subi(bits, arith.shli(e, emit.const_i32(23))))
    f = arith.subf(m, const(1.0))
    s = arith.divf(f, _add(f, const(2.0)))
    z = _mul(s, s)
    # log(m) = 2 atanh(s) = 2s + 2s (z/3 + z^2/5 + ...), |s| < 0.172
    series = _mul(z, _poly(z, [2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11]))
    log_m = fma(s, series, _add(s, s))
    ef = arith.sitofp(f32(), arith.addi(e, bias))
    result = fma(ef, const(LN2_HI), fma(ef, const(LN2_LO), log_m))
    # log(0) = -inf, log(inf) = inf, log(x < 0) = log(NaN) = NaN
    result = _select(_cmp(arith.CmpFPredicate.OEQ, x, const(0.0)), const(-math.inf), result)
    result = _select(_cmp(arith.CmpFPredicate.OEQ, x, const(math.inf)), const(math.inf), result)
    bad = _cmp(arith.CmpFPredicate.ULT, x, const(0.0))            # x < 0 or NaN
    return _select(bad, const(math.nan), result)


def sqrt(x: ir.Value, fast: bool) -> ir.Value:
    return intrinsic("llvm.nvvm.sqrt.approx.ftz.f" if fast else "llvm.nvvm.sqrt.rn.f", x)


def rsqrt(x: ir.Value, fast: bool) -> ir.Value:
    if fast:
        return intrinsic("llvm.nvvm.rsqrt.approx.ftz.f", x)
    return arith.divf(const(1.0), sqrt(x, False))


# tanh's Taylor coefficients of x^1, x^3, ..., x^17 (|x| < 0.55: the x^19 term is < 1e-8 x)
_TANH_TAYLOR = [1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075,
                -929569 / 638512875, 6404582 / 10854718875]


def tanh(x: ir.Value, fast: bool) -> ir.Value:
    if fast:
        return inline_ptx("tanh.approx.f32", x)
    a = abs_(x)
    small = _mul(x, _poly(_mul(x, x), _TANH_TAYLOR))
    big = arith.subf(const(1.0), arith.divf(const(2.0), _add(exp(_add(a, a), False),
                                                             const(1.0))))
    big = _copysign(big, x)
    return _select(_cmp(arith.CmpFPredicate.OLT, a, const(0.55)), small, big)


def _copysign(magnitude: ir.Value, sign: ir.Value) -> ir.Value:
    i32 = emit.i32()
    bits = arith.ori(arith.bitcast(i32, magnitude),
                     arith.andi(arith.bitcast(i32, sign), emit.const_i32(-(1 << 31))))
    return arith.bitcast(f32(), bits)


def _recip(x: ir.Value, fast: bool) -> ir.Value:
    if fast:
        return intrinsic("llvm.nvvm.rcp.approx.ftz.f", x)
    return arith.divf(const(1.0), x)


def sigmoid(x: ir.Value, fast: bool) -> ir.Value:
    return _recip(_add(const(1.0), exp(arith.negf(x), fast)), fast)


def silu(x: ir.Value, fast: bool) -> ir.Value:
    if fast:
        return _mul(x, sigmoid(x, True))
    return arith.divf(x, _add(const(1.0), exp(arith.negf(x), False)))


def gelu_tanh(x: ir.Value, fast: bool) -> ir.Value:
    inner = _mul(const(math.sqrt(2 / math.pi)), fma(_mul(const(0.044715), x), _mul(x, x), x))
    return _mul(_mul(const(0.5), x), _add(const(1.0), tanh(inner, fast)))


# Numerical Recipes' erfcc: erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2), z >= 0
_ERFC = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
         -1.13520398, 1.48851587, -0.82215223, 0.17087277]


def erfc(z: ir.Value, fast: bool) -> ir.Value:
    a = abs_(z)
    t = arith.divf(const(1.0), fma(const(0.5), a, const(1.0)))
    tail = _mul(t, exp(arith.subf(_poly(t, _ERFC), _mul(a, a)), fast))
    negative = _cmp(arith.CmpFPredicate.OLT, z, const(0.0))
    return _select(negative, arith.subf(const(2.0), tail), tail)


def gelu_erf(x: ir.Value, fast: bool) -> ir.Value:
    return _mul(_mul(const(0.5), x), erfc(_mul(x, const(-1 / math.sqrt(2))), fast))


def _sign_mask(t: ir.Type) -> tuple[ir.Type, int]:
    """The integer type of t's width and its sign bit(s) (per lane of a vector<2xf16>)."""
    if isinstance(t, ir.VectorType):
        return emit.i32(), (1 << 31) | (1 << 15)
    width = ir.FloatType(t).width
    return ir.IntegerType.get_signless(width), 1 << (width - 1)


def _signed(v: int, width: int) -> int:
    return v - (1 << width) if v >= 1 << (width - 1) else v


def neg(x: ir.Value, fast: bool = False) -> ir.Value:
    itype, mask = _sign_mask(x.type)
    width = ir.IntegerType(itype).width
    bits = arith.xori(emit.bitcast(itype, x), arith.constant(itype, _signed(mask, width)))
    return emit.bitcast(x.type, bits)


def abs_(x: ir.Value, fast: bool = False) -> ir.Value:
    itype, mask = _sign_mask(x.type)
    width = ir.IntegerType(itype).width
    keep = ((1 << width) - 1) ^ mask
    bits = arith.andi(emit.bitcast(itype, x), arith.constant(itype, _signed(keep, width)))
    return emit.bitcast(x.type, bits)


F32_UNARY = {"exp": exp, "exp2": exp2, "log": log, "rsqrt": rsqrt, "sqrt": sqrt, "tanh": tanh,
             "sigmoid": sigmoid, "silu": silu, "gelu_tanh": gelu_tanh, "gelu_erf": gelu_erf,
             "neg": neg, "abs": abs_}
# Functions exact in any float width (bit operations): no trip through f32.
BITWISE_UNARY = ("neg", "abs")


def packed_fast(fn: str, elem: str, sm: int) -> str | None:
    """The f16x2 / bf16x2 instruction computing `fn` with fast=True on a register pair, or
    None (then each half goes through f32)."""
    if fn == "exp2" and (elem == "f16" and sm >= 75 or elem == "bf16" and sm >= 90):
        return f"ex2.approx.{'ftz.' if elem == 'bf16' else ''}{elem}x2"
    if fn == "tanh" and (elem == "f16" and sm >= 75 or elem == "bf16" and sm >= 90):
        return f"tanh.approx.{elem}x2"
    return None


def packed_apply(instruction: str, pair: ir.Value) -> ir.Value:
    """One packed instruction on a vector<2xf16|bf16> (through its 32-bit register)."""
    bits = emit.bitcast(emit.i32(), pair)
    return emit.bitcast(pair.type, inline_ptx(instruction, bits))


CONTRACTABLE = {"add": arith.addf, "sub": arith.subf, "mul": arith.mulf}


def _contract() -> ir.Attribute:
    return ir.Attribute.parse("#arith.fastmath<contract>")


def binary(fn: str, a: ir.Value, b: ir.Value) -> ir.Value:
    """a fn b for floats (scalars or vector<2xf16|bf16>: packed instructions) or integers."""
    t = a.type.element_type if isinstance(a.type, ir.VectorType) else a.type
    if isinstance(t, ir.FloatType):
        if fn in CONTRACTABLE:
            # `contract`: a mul feeding an add / sub becomes one fma (LLVM fuses them; with
            # no flag NVPTX writes mul.rn / add.rn, which ptxas must not fuse), as nvcc's
            # default --fmad=true and Triton do: x * c - m in a softmax is one FFMA.
            return CONTRACTABLE[fn](a, b, fastmath=_contract())
        ops = {"div": arith.divf, "max": arith.maximumf, "min": arith.minimumf}
        if fn in ops:
            return ops[fn](a, b)
        preds = {"lt": "OLT", "le": "OLE", "gt": "OGT", "ge": "OGE", "eq": "OEQ", "ne": "UNE"}
        return arith.cmpf(getattr(arith.CmpFPredicate, preds[fn]), a, b)
    ops = {"add": arith.addi, "sub": arith.subi, "mul": arith.muli, "div": arith.divsi,
           "max": arith.maxsi, "min": arith.minsi}
    if fn in ops:
        return ops[fn](a, b)
    preds = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
    return arith.cmpi(getattr(arith.CmpIPredicate, preds[fn]), a, b)
