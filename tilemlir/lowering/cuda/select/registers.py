"""select on register tiles: dst = cond ? on_true : on_false, element by element.

Before (zero the elements of a row past its valid length, given an i1 mask tile):

    "tile.select"(%x, %mask, %x, %zero) {scope = "warp"} : (!X, !M, !X, f32) -> ()

After, per destination slot: `arith.select %c, %a, %b` (selp); operands broadcast as in
tile.binary.
"""

from __future__ import annotations

from mlir.dialects import arith

from tilemlir.dispatch.registry import predicate, register
from tilemlir.lowering.cuda import elementwise as ew
from tilemlir.lowering.cuda.copy.registers import scope_reaches
from tilemlir.lowering.cuda.predicates import eight_bit_floats, replicated_alike


@predicate("operand_types")
def operand_types(ctx):
    dst = ctx.buffer("dst").elem
    problems = []
    cond = ew.operand_type(ctx, "cond")
    if str(cond) != "i1":
        problems.append(f"cond is {cond}, not i1")
    problems += [f"{n} is {t} but dst holds {dst}"
                 for n in ("on_true", "on_false") if (t := ew.operand_type(ctx, n)) != dst]
    narrow = eight_bit_floats(ctx)
    return "; ".join(problems + ([narrow] if narrow else [])) or None


@register("select", name="registers", priority=0,
          when=[ew.registers, operand_types, scope_reaches, replicated_alike])
def lower_select(ctx):
    """Each thread picks between the registers it keeps (selp per slot)."""
    p = ew.plan(ctx, ["cond", "on_true", "on_false"], packable=False)
    return lambda: ew.emit_plan(ctx, p, lambda args: arith.select(*args))
