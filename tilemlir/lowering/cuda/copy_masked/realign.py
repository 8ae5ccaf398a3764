"""copy_masked memory -> registers in realigned 16-byte runs (copy/realign.py): a word is
read only where it holds an element in range, and the elements out of range get the fill.

After, per run whose first element is at window coordinates c (last dim c[-1] = j), o = 1
where it starts mid-word (else 0):

    word k (0 to 4) holds elements j - o + 2k, + 1: read where the run's other dims are in
    range and lower <= j - o + 2k + 1, j - o + 2k < bound (lower: 0 without lower bounds)
    element i of the run: in range where lower <= j + i < bound, else the fill
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from tilemlir.dispatch.registry import register
from tilemlir.ir import emit, windows
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments, masks
from tilemlir.lowering.cuda.copy.realign import RUN, emit_runs, plan, realigned_load
from tilemlir.lowering.cuda.copy.registers import register_and_memory, scope_reaches
from tilemlir.lowering.cuda.copy.vector import replicas_load_only
from tilemlir.lowering.cuda.copy_masked.registers import run_coordinates
from tilemlir.lowering.cuda.predicates import same_shape_and_type


def masked_run(ctx, coords, pointer, safe, elem) -> ir.Value:
    """vector<4xi32>: the RUN elements from window coordinates `coords` on (along the last
    dim), read realigned from `pointer`: a word only where it holds an element in range, the
    fill (the op's; 0 without one) in the elements out of range."""
    last = len(coords) - 1
    lower = masks.lower_values(ctx)
    others = masks.in_range(ctx, coords, skip_last=True)       # the other dims
    j = emit.as_index(coords[last])

    def need(k, before):
        first = arith.subi(emit.add(j, 2 * k), before)      # word k's first element
        ok = arith.cmpi(arith.CmpIPredicate.slt, first, masks.bound_values(ctx)[last])
        if lower is not None:
            past = arith.cmpi(arith.CmpIPredicate.sge, emit.add(first, 1), lower[last])
            ok = arith.andi(ok, past)
        return ok if others is None else arith.andi(ok, others)

    words = realigned_load(pointer, safe, need)
    inside = [masks.in_range(ctx, coords[:last] + [emit.add(coords[last], i)])
              for i in range(RUN)]
    if all(v is None for v in inside):
        return words
    values = emit.bitcast(emit.vector_type(RUN, elem), words)
    valid = emit.build_vector([v if v is not None else emit.const(1, emit.i1())
                               for v in inside])
    fill = masks.fill_value(ctx, emit.vector_type(RUN, elem))
    return emit.bitcast(words.type, arith.select(valid, values, fill))


def _emit(ctx, p):
    reg = fragments.register_ref(ctx, "dst")
    table = fragments.slot_table(reg.type, p.threads)
    safe = addresses.storage(windows.resolve(ctx.operand("src")))
    elem = windows.resolve(ctx.operand("dst")).type.elem

    def value_of(run, pointer, t):
        coords = [emit.add(fit.emit(t), first)
                  for fit, first in run_coordinates(table, reg.shape, run.slot)]
        return masked_run(ctx, coords, pointer, safe, elem)

    emit_runs(ctx, p, value_of)


@register("copy_masked", name="realigned_registers", priority=11,
          when=[register_and_memory, same_shape_and_type, scope_reaches, replicas_load_only,
                masks.bounds_per_dim])
def lower_realigned_registers_masked(ctx):
    """Memory -> registers in realigned 16-byte runs (copy/realign.py), each word read only
    where it holds an element in range, the fill where out of range."""
    p = plan(ctx)
    return lambda: _emit(ctx, p)
