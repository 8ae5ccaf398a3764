"""unary math on register tiles: dst = fn(src), each thread on the registers it keeps.

Before (exp of a warp's m16n8 f32 accumulator, fast):

    "tile.unary"(%p, %s) {fn = "exp", fast = true, scope = "warp"}
        : (!tile.buf<[16, 8], f32, "local", S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]>, ...) -> ()

After: per register slot, the function's instruction sequence (elementwise_math.py lists each
function's precise and fast forms):

    %v = llvm.load %s[0] : f32
    %t = arith.mulf %v, 1.44269502 : f32
    %e = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%t)          (ex2.approx.ftz.f32)
    llvm.store %e, %p[0] : f32

f16 / bf16 tiles compute in f32 and round back, two slots per cvt.rn.{f16,bf16}x2.f32; neg and
abs flip / clear sign bits (packed: one 32-bit op per pair); with fast=True, exp2 and tanh of a
pair are one ex2.approx.f16x2 / tanh.approx.f16x2 (bf16x2 from sm_90).
"""

from __future__ import annotations

from mlir import ir

from tilemlir.dispatch.registry import predicate, register
from tilemlir.lowering.cuda import elementwise as ew
from tilemlir.lowering.cuda import elementwise_math as fm
from tilemlir.lowering.cuda.copy.registers import scope_reaches
from tilemlir.lowering.cuda.predicates import replicated_alike


@predicate("float_tiles")
def float_tiles(ctx):
    dst, src = str(ctx.buffer("dst").elem), str(ctx.buffer("src").elem)
    if dst != src:
        return f"dst holds {dst} but src holds {src} (tile.cast first)"
    if dst not in ew.FLOATS:
        return f"computes on f16, bf16 and f32 tiles; the tiles hold {dst}"
    return None


def _compute(ctx, fn: str, fast: bool):
    sm = ctx.target.sm

    def run(args: list[ir.Value]) -> ir.Value:
        (x,) = args
        if fn in fm.BITWISE_UNARY:
            return fm.F32_UNARY[fn](x)
        if isinstance(x.type, ir.VectorType) and fast:
            instruction = fm.packed_fast(fn, ew.elem_name(x), sm)
            if instruction:
                return fm.packed_apply(instruction, x)
        return ew.through_f32(ctx, lambda v: fm.F32_UNARY[fn](v, fast), [x])
    return run


@register("unary", name="registers", priority=0,
          when=[ew.registers, float_tiles, scope_reaches, replicated_alike])
def lower_unary(ctx):
    """Each thread applies fn to the registers it keeps (f16/bf16 through f32, pairs packed)."""
    p = ew.plan(ctx, ["src"], packable=True)
    compute = _compute(ctx, ctx.attr("fn"), bool(ctx.attr("fast", False)))
    return lambda: ew.emit_plan(ctx, p, compute)
