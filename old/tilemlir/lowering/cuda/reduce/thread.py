"""reduce within each thread: the layouts give every thread whole rows.

Before (each thread sums the 8 slots of its row of an [128, 8] tile, one row per thread):

    "tile.reduce"(%s, %x) {fn = "sum", axis = 1, scope = "thread"}
        : (!tile.buf<[128, 1], f32, "local", S[(128, 1):(1@tx, 1)]>,
           !tile.buf<[128, 8], f32, "local", S[(128, 8):(1@tx, 1)]>) -> ()

After: the 8 slots folded pairwise (3 dependent adds), stored into the dst slot:

    %a = arith.addf %x0, %x1    %b = arith.addf %x2, %x3    ...    llvm.store %r, %s[0]

src elements narrower than dst (f16 summed into f32) are widened first.
"""

from __future__ import annotations

from tilemlir.dispatch.registry import predicate, register
from tilemlir.lowering.cuda.copy.registers import scope_reaches
from tilemlir.lowering.cuda.predicates import no_replica
from tilemlir.lowering.cuda.reduce import rows


@predicate("whole_rows")
def whole_rows(ctx):
    r = rows._cached(ctx)
    if r is None:
        return None
    if r.whole_rows:
        return None
    held = len(r.src_slots[0]) if r.src_slots else 0
    return (f"a thread holds {held} of the {ctx.buffer('src').shape[ctx.attr('axis')]} elements "
            f"of each of its rows: the axis is spread over threads")


@register("reduce", name="thread", priority=30,
          when=[rows.register_tiles, rows.rows_known, rows.types, whole_rows, scope_reaches, no_replica])
def lower_thread(ctx):
    """Each thread folds the rows it holds whole."""
    r = rows._cached(ctx)
    return lambda: rows.store_dst(ctx, r, rows.fold_own(ctx, r))
