"""copy memory -> registers of 16-bit runs whose window starts at a run-time offset the value
analysis cannot prove 16-byte aligned: each run of 8 elements is read as the five aligned
4-byte words around it and shifted into place ("realigned").

Before (a thread's 8 consecutive weights of a row that starts `lead` elements into its tile,
lead known only at run time):

    "tile.copy"(%w_regs, %w_window) {scope = "cta"}
        : (!tile.buf<[4096], f16, "local", S[(2, 16, 32, 8):(8, 1@warpid, 1@laneid, 1)]>,
           !tile.buf<[4096], f16, "global", S[(4096):(1)]>) -> ()    (window at k * 4096 - lead)

After, per run at address p (mid = p mod 4: 0, or 2 where the run starts mid-word):

    %w_k = llvm.load (p - mid + 4 k) : i32 {alignment = 4}        (k = 0..4; w_4 where mid = 2)
    word m of the run = fshr(%w_(m+1), %w_m, 8 * mid)            (llvm.intr.fshr, m = 0..3)

where vector_registers would narrow every access to what the offset is known to divide into (2
bytes for an odd one: 8 loads a run, each in a register of its own). LayerNorm's shifted rows
(norms.py) reached 67-68% of a copy's bandwidth at N = 50257 so, against 54% (RMSNorm 86%
against 64%); two 16-byte granules a run and a word chosen at run time took twice the
aligned kernel's instructions (58 against 31 million, ncu; results/2026-12-02-session6).

A word is read only where it holds an element of the window, so nothing is read outside the
buffer's own 4-byte words (a buffer of 16-bit elements whose last element opens a word is read
up to 2 bytes past its end, never past that word: allocations are whole words, and
compute-sanitizer memcheck, run on torch's, does not flag it). Masked copies
(copy_masked/realign.py) read a word only where it holds an element in range, and put the fill
in the elements out of range. Global or shared memory, 16-bit elements, unswizzled, loads only.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, llvm

from tilemlir.analysis import alignment
from tilemlir.dispatch.registry import Reject, register
from tilemlir.ir import emit, windows
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import threads
from tilemlir.lowering.cuda.copy.registers import register_and_memory, scope_reaches
from tilemlir.lowering.cuda.copy.vector import RegisterPlan, plan_registers, replicas_load_only
from tilemlir.lowering.cuda.predicates import inside_buffers, same_shape_and_type

RUN = 8             # 16-bit elements of a run: one 16-byte granule


def plan(ctx) -> RegisterPlan:
    """The runs (of RUN elements each) of a load into registers that vector_registers would
    narrow for the window's dynamic offset alone; Reject otherwise."""
    if ctx.buffer("dst").scope != "local":
        raise Reject("realigns loads into registers only (a store's granules would be "
                     "partial)")
    mem = windows.resolve(ctx.operand("src"))
    check_realignable(mem)
    if alignment.vector_limit(mem)[0] >= RUN:
        raise Reject("the window's offset is 16-byte aligned: vector_registers moves it")
    p = plan_registers(ctx, "dst", "src", dynamic=False)
    if not p.runs or any(run.n != RUN for run in p.runs):
        raise Reject(f"the registers do not hold runs of {RUN} consecutive elements of a row "
                     f"(runs of {sorted({r.n for r in p.runs})})")
    return p


def check_realignable(mem) -> None:
    """Reject unless the window `mem` can be read in aligned 4-byte words: 16-bit elements,
    unswizzled, in storage aligned to 4 bytes at least."""
    if mem.type.elem_bits != 16:
        raise Reject(f"realigns 16-bit elements; these are {mem.type.elem_bits}-bit")
    if mem.layout.swizzle is not None:
        raise Reject("the window is swizzled")
    if alignment.root_alignment(mem) < 4:
        raise Reject(f"its storage is {alignment.root_alignment(mem)}-byte aligned (words of 4 "
                     f"bytes needed)")


def realigned_load(pointer: ir.Value, safe: ir.Value, need=None) -> ir.Value:
    """vector<4xi32>: the 16 bytes at `pointer` (2-byte aligned), from the five aligned 4-byte
    words around them, funnel-shifted by 16 bits where the run starts mid-word. need(k, o):
    i1, word k (0 to 4) holds an element wanted, o (index 0 or 1) the elements of word 0
    before the run (None: every word of the run is read, the fifth where o = 1); a word not
    wanted reads `safe` instead (its value is never used)."""
    i64, i32 = emit.i64(), emit.i32()
    address = llvm.ptrtoint(i64, pointer)
    mid = arith.trunci(i32, arith.andi(address, emit.const(2, i64)))   # 2: starts mid-word
    word0 = llvm.inttoptr(pointer.type, arith.andi(address, emit.const(~3, i64)))
    odd = arith.cmpi(arith.CmpIPredicate.ne, mid, emit.const(0, i32))
    before = arith.index_cast(emit.index(), arith.shrui(mid, emit.const(1, i32)))
    words = []
    for k in range(5):
        at = emit.gep(word0, i32, k)
        ok = need(k, before) if need is not None else None
        if k == 4:
            ok = odd if ok is None else arith.andi(ok, odd)
        if ok is not None:
            at = llvm.select(ok, at, safe)
        words.append(emit.load(i32, at, align=4))
    bits = arith.shli(mid, emit.const(3, i32))                         # 0 or 16
    return emit.build_vector([llvm.intr_fshr(words[m + 1], words[m], bits) for m in range(4)])


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
    """Memory -> registers in 16-byte runs at a run-time offset not known to be aligned: five
    aligned 4-byte loads a run and a funnel shift, not 8 loads of 2 bytes."""
    p = plan(ctx)

    def build():
        safe = addresses.storage(windows.resolve(ctx.operand("src")))
        emit_runs(ctx, p, lambda run, pointer, t: realigned_load(pointer, safe))

    return build

