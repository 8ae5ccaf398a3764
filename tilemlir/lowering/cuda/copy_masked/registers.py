"""copy_masked between registers and memory: the vector register copy (copy/vector.py) with a
test per access.

Before (a consumer warpgroup stores its 64x128 f16 tile at (m, n) of D, whose last rows and
columns may lie past M and N):

    "tile.copy_masked"(%d_window, %out, %rows, %cols) {scope = "warpgroup", fill = 0.0 : f16}
        : (!tile.buf<[64, 128], f16, "global", ...>,
           !tile.buf<[64, 128], f16, "local", <wgmma accumulator layout>>, index, index) -> ()

After: the runs of register slots of the vector copy (two consecutive f16 of a row per access
here), each with the window coordinates of its first element for the calling thread (an affine
function of the thread index, from the layout) tested against the bounds:

    %in = (%row_j(%t) < %rows) && (%col_j(%t) < %cols)
    scf.if %in { llvm.store (llvm.load %out[j]), %d_j : vector<2xf16> }

Into registers every slot is written, the fill where out of range (the load of an
out-of-range run reads the buffer's first element, so it cannot fault). A run lies along the
last dim and starts on a multiple of its length. Where its length divides the last dim's bounds
as far as the value analysis knows, it is wholly in or out. Where it does not, 16-byte runs stay
whole and are split at the edge: a run tested whole (its first and last element) moves as one
access, one that straddles a bound element by element, each tested (a row that starts at a
run-time offset inside a 16-byte aligned span keeps its 16-byte accesses but for its two ends);
narrower runs narrow instead, down to one element.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import scf

from tilemlir.dispatch.registry import Reject, register
from tilemlir.ir import emit, windows
from tilemlir.lowering import addresses
from tilemlir.lowering.accesses import fit_thread_affine
from tilemlir.lowering.cuda import fragments, masks, threads
from tilemlir.lowering.cuda.copy.registers import register_and_memory, register_side, scope_reaches
from tilemlir.lowering.cuda.copy.vector import (MAX_BYTES, RegisterPlan, plan_registers,
                                                replicas_load_only, vector_type)
from tilemlir.lowering.cuda.predicates import same_shape_and_type


def run_coordinates(table: np.ndarray, shape, slot: int):
    """Per dim, (thread-affine fit, value at thread 0) of the window coordinate of the element
    each thread keeps in `slot`; None when one is not affine in the thread index."""
    coords = np.unravel_index(table[:, slot], shape)
    fits = []
    for c in coords:
        fit = fit_thread_affine(c)
        if fit is None:
            return None
        fits.append((fit, int(c[0])))
    return fits


def _runs_fit(table: np.ndarray, shape, p: RegisterPlan) -> bool:
    """Each run holds consecutive elements of one row, starting on a multiple of its length."""
    for run in p.runs:
        first = table[:, run.slot]
        if run.n > 1:
            if (first % shape[-1] % run.n).any():
                return False
            if any((table[:, run.slot + i] != first + i).any() for i in range(1, run.n)):
                return False
    return True


SPLIT_BYTES = MAX_BYTES     # runs this wide are split at a bound rather than narrowed


def plan(ctx, reg_name: str, mem_name: str) -> tuple[RegisterPlan, np.ndarray, bool]:
    """The runs, the register slot table, and whether runs straddling a bound are split there
    (else every run is wholly in or out)."""
    reg = fragments.register_ref(ctx, reg_name)
    elem_bytes = max(reg.type.elem_bits // 8, 1)
    widest = max(MAX_BYTES // elem_bytes, 1)
    n = masks.last_dim_width(ctx, widest)
    if n < widest:
        p = plan_registers(ctx, reg_name, mem_name)
        table = fragments.slot_table(reg.type, p.threads)
        if all(run.n * elem_bytes >= SPLIT_BYTES for run in p.runs) \
                and _runs_fit(table, reg.shape, p):
            _check_affine(table, reg.shape, p)
            return p, table, True
    while True:
        p = plan_registers(ctx, reg_name, mem_name, max_bytes=n * elem_bytes)
        table = fragments.slot_table(reg.type, p.threads)
        if n == 1 or _runs_fit(table, reg.shape, p):
            break
        n //= 2
    _check_affine(table, reg.shape, p)
    return p, table, False


def _check_affine(table: np.ndarray, shape, p: RegisterPlan) -> None:
    for run in p.runs:
        if run_coordinates(table, shape, run.slot) is None:
            raise Reject(f"the window coordinates of register slot {run.slot} are not an affine "
                         f"function of the thread index")


def _split_run(ctx, coords, run, vt, reg, reg_base, mem_ptr, mem_base, reg_name, width):
    """One run that may straddle a bound: a whole access where all of it is in range, else
    its elements one by one, each tested (out of range: the fill into registers, nothing into
    memory)."""
    elem = reg.type.elem
    reg_ptr = addresses.slot_pointer(reg, run.slot, reg_base)
    whole = masks.in_range(ctx, coords, last_span=run.n)
    branch = scf.IfOp(whole, [vt] if reg_name == "dst" else [], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        if reg_name == "dst":
            scf.yield_([emit.load(vt, mem_ptr, align=run.n * width)])
        else:
            emit.store(emit.load(vt, reg_ptr, align=width), mem_ptr, align=run.n * width)
            scf.yield_([])
    with ir.InsertionPoint(branch.else_block):
        fill = masks.fill_value(ctx, elem)
        parts = []
        for i in range(run.n):
            at = coords[:-1] + [emit.add(coords[-1], i)]
            valid = masks.in_range(ctx, at)
            mem_i = emit.gep(mem_ptr, elem, i)
            if reg_name == "dst":
                parts.append(masks.guarded_load(elem, mem_i, mem_base, valid, fill, width))
            else:
                value = emit.load(elem, addresses.slot_pointer(reg, run.slot + i, reg_base),
                                  align=width)
                guard = scf.IfOp(valid)
                with ir.InsertionPoint(guard.then_block):
                    emit.store(value, mem_i, align=width)
                    scf.yield_([])
        if reg_name == "dst":
            scf.yield_([emit.build_vector(parts)])
        else:
            scf.yield_([])
    if reg_name == "dst":
        emit.store(branch.results[0], reg_ptr, align=width)


def _emit(ctx, p: RegisterPlan, table: np.ndarray, reg_name: str, mem_name: str,
          split: bool = False):
    reg = windows.resolve(ctx.operand(reg_name))
    mem = windows.resolve(ctx.operand(mem_name))
    elem, width = reg.type.elem, max(reg.type.elem_bits // 8, 1)
    t = threads.scope_thread_index(p.threads, ctx.block_size)
    reg_base, mem_base = addresses.storage(reg), addresses.storage(mem)
    pointers = p.access.pointers(t, mem_base)
    for run, mem_ptr in zip(p.runs, pointers):
        coords = [emit.add(fit.emit(t), first)
                  for fit, first in run_coordinates(table, reg.shape, run.slot)]
        vt = vector_type(run.n, elem)
        if split:
            _split_run(ctx, coords, run, vt, reg, reg_base, mem_ptr, mem_base, reg_name, width)
            continue
        reg_ptr = addresses.slot_pointer(reg, run.slot, reg_base)
        valid = masks.in_range(ctx, coords)
        if reg_name == "dst":
            value = masks.guarded_load(vt, mem_ptr, mem_base, valid, masks.fill_value(ctx, vt),
                                       run.n * width)
            emit.store(value, reg_ptr, align=width)
        elif valid is None:
            emit.store(emit.load(vt, reg_ptr, align=width), mem_ptr, align=run.n * width)
        else:
            branch = scf.IfOp(valid)
            with ir.InsertionPoint(branch.then_block):
                emit.store(emit.load(vt, reg_ptr, align=width), mem_ptr, align=run.n * width)
                scf.yield_([])


@register("copy_masked", name="vector_registers", priority=10,
          when=[register_and_memory, same_shape_and_type, scope_reaches, replicas_load_only,
                masks.bounds_per_dim])
def lower_vector_registers_masked(ctx):
    """Registers <-> memory in runs of up to 16 bytes, each tested against the bounds: out of
    range, registers get the fill and memory is left alone."""
    reg_name, mem_name = register_side(ctx)
    p, table, split = plan(ctx, reg_name, mem_name)
    return lambda: _emit(ctx, p, table, reg_name, mem_name, split)
