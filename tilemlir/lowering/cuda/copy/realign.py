"""copy memory -> registers of 16-bit runs whose window starts at a run-time offset the value
analysis cannot prove 16-byte aligned: each run of 8 elements is read as the two aligned
16-byte granules around it and shifted into place ("realigned").

Before (a thread's 8 consecutive weights of a row that starts `lead` elements into its tile,
lead known only at run time):

    "tile.copy"(%w_regs, %w_window) {scope = "cta"}
        : (!tile.buf<[4096], f16, "local", S[(2, 16, 32, 8):(8, 1@warpid, 1@laneid, 1)]>,
           !tile.buf<[4096], f16, "global", S[(4096):(1)]>) -> ()    (window at k * 4096 - lead)

After, per run at address p (e = (p mod 16) / 2 elements past the granule below it):

    %g0 = llvm.load (p - 2e) : vector<4xi32> {alignment = 16}
    %g1 = llvm.load (p - 2e + 16) : vector<4xi32>                 (only read when e > 0)
    word m = fshr(w[e/2 + m + 1], w[e/2 + m], 16 * (e mod 2))     (w: the 8 words of g0, g1)

where vector_registers would narrow every access to what the offset is known to divide into (2
bytes for an odd one: 8 loads a run, each in a register of its own). A granule is read only
where it holds an element of the window (both do when e > 0), so nothing is read outside the
16-byte granules of the buffer's own elements; masked copies (copy_masked/realign.py) read a
granule only where it holds an element in range, and put the fill in the elements out of
range. Global or shared memory, 16-bit elements, unswizzled, loads only.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, llvm

from tilemlir.analysis import alignment
from tilemlir.dispatch.registry import Reject, register
from tilemlir.ir import emit, windows
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import masks, threads
from tilemlir.lowering.cuda.copy.registers import register_and_memory, scope_reaches
from tilemlir.lowering.cuda.copy.vector import (MAX_BYTES, RegisterPlan, plan_registers,
                                                replicas_load_only)
from tilemlir.lowering.cuda.predicates import inside_buffers, same_shape_and_type

RUN = 8             # 16-bit elements of a run: one 16-byte granule


def plan(ctx) -> RegisterPlan:
    """The runs (of RUN elements each) of a load into registers that vector_registers would
    narrow for the window's dynamic offset alone; Reject otherwise."""
    if ctx.buffer("dst").scope != "local":
        raise Reject("realigns loads into registers only (a store's granules would be "
                     "partial)")
    mem = windows.resolve(ctx.operand("src"))
    if mem.type.elem_bits != 16:
        raise Reject(f"realigns 16-bit elements; these are {mem.type.elem_bits}-bit")
    if mem.layout.swizzle is not None:
        raise Reject("the window is swizzled")
    if alignment.root_alignment(mem) < MAX_BYTES:
        raise Reject(f"its storage is {alignment.root_alignment(mem)}-byte aligned")
    if alignment.vector_limit(mem)[0] >= RUN:
        raise Reject("the window's offset is 16-byte aligned: vector_registers moves it")
    p = plan_registers(ctx, "dst", "src", dynamic=False)
    if not p.runs or any(run.n != RUN for run in p.runs):
        raise Reject(f"the registers do not hold runs of {RUN} consecutive elements of a row "
                     f"(runs of {sorted({r.n for r in p.runs})})")
    return p


def realigned_load(pointer: ir.Value, safe: ir.Value, need=None) -> ir.Value:
    """vector<4xi32>: the 16 bytes at `pointer` (2-byte aligned), from the aligned granules
    around them. need(k, e): i1, granule k (0, 1) holds an element wanted (None: both are
    read where they hold an element of the run at all); a granule not read gives zeros."""
    i64, i32 = emit.i64(), emit.i32()
    address = llvm.ptrtoint(i64, pointer)
    skew = arith.andi(address, emit.const(15, i64))
    e = arith.trunci(i32, arith.shrui(skew, emit.const(1, i64)))    # elements past the granule
    base = llvm.inttoptr(pointer.type, arith.subi(address, skew))
    shifted = arith.cmpi(arith.CmpIPredicate.ne, e, emit.const(0, i32))
    vt = ir.VectorType.get([4], i32)
    zero = arith.constant(vt, ir.DenseElementsAttr.get_splat(vt, ir.IntegerAttr.get(i32, 0)))
    granules = []
    for k in range(2):
        ok = need(k, e) if need is not None else None
        if k == 1:
            ok = shifted if ok is None else arith.andi(ok, shifted)
        at = emit.gep(base, i32, 4 * k)
        granules.append(masks.guarded_load(vt, at, safe, ok, zero, MAX_BYTES))
    words = [llvm.extractelement(g, emit.const_i32(i)) for g in granules for i in range(4)]
    half = arith.shrui(e, emit.const(1, i32))                       # whole words to skip
    picks = [arith.cmpi(arith.CmpIPredicate.eq, half, emit.const(j, i32)) for j in range(3)]

    def word(i: int) -> ir.Value:
        """words[half + i] (half: 0 to 3)."""
        value = words[i + 3]
        for j in (2, 1, 0):
            value = arith.select(picks[j], words[i + j], value)
        return value

    moved = [word(i) for i in range(5)]
    bits = arith.muli(arith.andi(e, emit.const(1, i32)), emit.const(16, i32))
    out = [llvm.intr_fshr(moved[m + 1], moved[m], bits) for m in range(4)]
    return emit.build_vector(out)


def emit_runs(ctx, p: RegisterPlan, value_of) -> None:
    """For each run: value_of(run, pointer, t) (a vector<4xi32>) into its register slots."""
    reg = windows.resolve(ctx.operand("dst"))
    mem = windows.resolve(ctx.operand("src"))
    t = threads.scope_thread_index(p.threads, ctx.block_size)
    reg_base = addresses.storage(reg)
    pointers = p.access.pointers(t, addresses.storage(mem))
    run_type = emit.vector_type(RUN, reg.type.elem)
    for run, pointer in zip(p.runs, pointers):
        value = llvm.bitcast(run_type, value_of(run, pointer, t))
        emit.store(value, addresses.slot_pointer(reg, run.slot, reg_base),
                   align=max(reg.type.elem_bits // 8, 1))


@register("copy", name="realigned_registers", priority=11,
          when=[register_and_memory, same_shape_and_type, scope_reaches, replicas_load_only,
                inside_buffers])
def lower_realigned_registers(ctx):
    """Memory -> registers in 16-byte runs at a run-time offset not known to be aligned: two
    aligned 16-byte loads a run and a funnel shift, not 8 loads of 2 bytes."""
    p = plan(ctx)

    def build():
        safe = addresses.storage(windows.resolve(ctx.operand("src")))
        emit_runs(ctx, p, lambda run, pointer, t: realigned_load(pointer, safe))

    return build

