"""binary math on register tiles: dst = lhs fn rhs, with scalars and numpy broadcasting.

Before (subtract each row's maximum, held by every thread, from a CTA-wide row of 4096):

    "tile.binary"(%x, %x, %m) {fn = "sub", scope = "cta"}
        : (!tile.buf<[1, 4096], f32, "local", S[(1, 4, 4, 32, 8):(1, 8, 1@warpid, 1@laneid, 1)]>,
           !tile.buf<[1, 4096], f32, "local", ...>, !tile.buf<[1, 1], f32, "local", S[(1, 1):(1, 1)]>)

After: one instruction per destination slot, the broadcast operand's slot repeated:

    %m0 = llvm.load %m[0] : f32
    %v = llvm.load %x[k] : f32    %d = arith.subf %v, %m0 : f32    llvm.store %d, %x[k]

add, sub, mul, max, min of f16 / bf16 pairs are one packed instruction (add.rn.f16x2,
max.NaN.bf16x2, ...); div of halves goes through f32. max / min propagate NaN (as torch's do).
Integers: add, sub, mul, div (signed), max, min. The comparisons lt, le, gt, ge, eq, ne give
an i1 tile (ordered, except ne), for tile.select.
"""

from __future__ import annotations

from mlir import ir

from tilemlir.dispatch.registry import predicate, register
from tilemlir.lowering.cuda import elementwise as ew
from tilemlir.lowering.cuda import elementwise_math as fm
from tilemlir.lowering.cuda.copy.registers import scope_reaches
from tilemlir.lowering.cuda.predicates import eight_bit_floats, replicated_alike

COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
PACKED_NATIVE = ("add", "sub", "mul", "max", "min")


def _numeric(t: ir.Type) -> bool:
    return isinstance(t, ir.FloatType) or (isinstance(t, ir.IntegerType)
                                           and ir.IntegerType(t).width > 1)


@predicate("operand_types")
def operand_types(ctx):
    fn, dst = ctx.attr("fn"), ctx.buffer("dst").elem
    lhs, rhs = ew.operand_type(ctx, "lhs"), ew.operand_type(ctx, "rhs")
    if fn in COMPARE:
        problems = [] if str(dst) == "i1" else [f"a comparison's dst holds i1, not {dst}"]
        if lhs != rhs:
            problems.append(f"lhs is {lhs} but rhs is {rhs}")
    else:
        problems = [f"{n} is {t} but dst holds {dst}" for n, t in (("lhs", lhs), ("rhs", rhs))
                    if t != dst]
    if not problems and not _numeric(lhs):
        problems.append(f"operates on floats and integers, got {lhs}")
    narrow = eight_bit_floats(ctx)
    return "; ".join(problems + ([narrow] if narrow else [])) or None


def _compute(ctx, fn: str):
    def run(args: list[ir.Value]) -> ir.Value:
        a, b = args
        name = ew.elem_name(a)
        if name in ew.HALF and fn not in PACKED_NATIVE and fn not in COMPARE:
            return ew.through_f32(ctx, lambda x, y: fm.binary(fn, x, y), [a, b])
        return fm.binary(fn, a, b)
    return run


@register("binary", name="registers", priority=0,
          when=[ew.registers, operand_types, scope_reaches, replicated_alike])
def lower_binary(ctx):
    """Each thread combines the registers it keeps (broadcast operands, f16/bf16 pairs packed)."""
    fn = ctx.attr("fn")
    p = ew.plan(ctx, ["lhs", "rhs"], packable=fn not in COMPARE)
    compute = _compute(ctx, fn)
    return lambda: ew.emit_plan(ctx, p, compute)
