"""Vectorized copies: registers <-> memory ("vector_registers") and memory <-> memory
("cooperative"), each access moving up to 16 bytes.

vector_registers. Before (a warp stores its m16n8 f32 accumulator to global memory):

    "tile.copy"(%d_global, %d_frag) {scope = "warp"}
        : (!tile.buf<[16, 8], f32, "global", S[(16, 8):(8, 1)]>,
           !tile.buf<[16, 8], f32, "local", S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]>) -> ()

After: register slots (0, 1) and (2, 3) each hold two consecutive, 8-byte aligned elements of
a row, so each pair is one 8-byte access; the thread part of the address is built once:

    %t = (%l / 4) * 8 + (%l % 4) * 2
    %v0 = llvm.load %d_regs[0] : vector<2xf32>       llvm.store %v0, %g[%t]      {alignment = 8}
    %v1 = llvm.load %d_regs[2] : vector<2xf32>       llvm.store %v1, %g[%t + 64] {alignment = 8}

Accepted when every thread keeps the same register slots and each access's address is an
affine function of the thread index; a run of slots becomes one vector when the slots are
consecutive, their elements consecutive in memory, and the run aligned (both in the layout and
as far as the buffer's base, dynamic offset and swizzle allow); otherwise narrower runs, down
to single elements.

cooperative. Before (the CTA copies a 128x64 tile of A into a 128B-swizzled shared tile):

    "tile.copy"(%a_smem, %a_window) {scope = "cta"}
        : (!tile.buf<[128, 64], f16, "shared", S[(128, 64):(64, 1)] o Sw<3,3,3>>,
           !tile.buf<[128, 64], f16, "global", S[(128, 64):(K, 1)]>) -> ()   (dynamic m, k)

After: the tile is cut into 16-byte chunks along its last dim, numbered row by row; thread t of
the 128 takes chunks t, t + 128, ... (consecutive threads read consecutive chunks of a row:
coalesced). The global address is (m * K + k) + thread part + a static offset per chunk; the
shared one swizzles the 16-byte chunk index (the chunk's contents stay contiguous):

    %g = (m * K + k) + (%t / 8) * K + (%t % 8) * 8       %s = swizzle(%t * 8)
    %v_j = llvm.load %A[%g + 16 j K] {alignment = 16} : vector<8xf16>        (j = 0..7)
    llvm.store %v_j, %smem[%s + 1024 j] {alignment = 16}

A chunk must be contiguous in both buffers (else the op is rejected, naming the buffer); where
an alignment (a dynamic offset only known to be a multiple of 4 elements, say) forbids 16 bytes,
narrower vectors are used. cp_async.py moves the same chunks with cp.async.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf

from tilemlir.analysis import alignment
from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout import LayoutError
from tilemlir.lowering import accesses, addresses, banks
from tilemlir.lowering.cuda import fragments, threads
from tilemlir.lowering.cuda.copy.registers import (register_and_memory, register_side,
                                                   scope_reaches)
from tilemlir.lowering.cuda.predicates import (full_active_lanes, inside_buffers, no_replica,
                                               same_shape_and_type)

MAX_BYTES = 16
BATCH = 8           # chunks in flight per thread before their stores (registers: 8 x 16 bytes)


def _bytes(ref: windows.BufferRef) -> int:
    return max(ref.type.elem_bits // 8, 1)


def _coordinate(shape, flat: int) -> str:
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def vector_type(n: int, elem: ir.Type) -> ir.Type:
    return elem if n == 1 else emit.vector_type(n, elem)


def _plan(ref, rows) -> accesses.AccessPlan:
    try:
        return accesses.plan_accesses(ref, rows)
    except LayoutError as err:
        raise Reject(str(err))


# ------------------------------------------------------------------------------ registers
@dataclass(frozen=True)
class RegisterRun:
    slot: int               # first register slot
    n: int                  # slots (and consecutive elements) moved by one access


@dataclass
class RegisterPlan:
    threads: int
    runs: list[RegisterRun]
    access: accesses.AccessPlan


def _register_threads(ctx, reg: windows.BufferRef) -> int:
    """The threads the copy is spread over: the scope's, or, at thread scope, those the
    register layout names (each thread moves what it keeps)."""
    if ctx.scope != "thread":
        return ctx.scope_threads()
    tm = fragments.thread_map(reg.type)
    lanes = 32 if tm.lanes_named else 1
    return lanes * (int(tm.warp.max()) + 1 if tm.warps_named else 1)


def plan_registers(ctx, reg_name: str, mem_name: str, max_bytes: int = MAX_BYTES,
                   dynamic: bool = True) -> RegisterPlan:
    """The runs of register slots each access moves; dynamic=False: as if the memory window's
    dynamic offset were aligned (copy/realign.py realigns each run itself)."""
    reg = fragments.register_ref(ctx, reg_name)
    mem = windows.resolve(ctx.operand(mem_name))
    nthreads = _register_threads(ctx, reg)
    try:
        table = fragments.slot_table(reg.type, nthreads)
    except LayoutError as err:
        raise Reject(str(err))
    held = table >= 0
    if (held.any(axis=0) & ~held.all(axis=0)).any():
        raise Reject("the threads keep different register slots (a partial layout)")
    if len(np.setdiff1d(np.arange(reg.type.size), table[held])):
        raise Reject("some elements are held by no thread of the op's scope")
    pre = windows.static_offsets(mem).reshape(-1)[np.where(held, table, 0)]
    limit, _ = alignment.vector_limit(mem, max_bytes, dynamic=dynamic)
    slots = [int(s) for s in np.flatnonzero(held[0])]
    runs, i = [], 0
    while i < len(slots):
        n = limit
        while n > 1 and not _contiguous_run(slots, i, n, pre):
            n //= 2
        runs.append(RegisterRun(slots[i], n))
        i += n
    access = _plan(mem, [pre[:, r.slot] for r in runs])
    banks.note(mem, [pre[:, r.slot] for r in runs], [r.n for r in runs], write=reg_name == "src")
    return RegisterPlan(nthreads, runs, access)


def _contiguous_run(slots, i, n, pre) -> bool:
    """Slots slots[i:i+n] are consecutive and hold n consecutive, n-aligned elements."""
    if i + n > len(slots) or slots[i + n - 1] != slots[i] + n - 1:
        return False
    first = pre[:, slots[i]]
    run = pre[:, slots[i]:slots[i] + n]
    return bool((run == first[:, None] + np.arange(n)).all() and (first % n == 0).all())


def _emit_registers(ctx, p: RegisterPlan, reg_name: str, mem_name: str):
    reg = windows.resolve(ctx.operand(reg_name))
    mem = windows.resolve(ctx.operand(mem_name))
    elem, width = reg.type.elem, _bytes(reg)
    t = threads.scope_thread_index(p.threads, ctx.block_size)
    reg_base = addresses.storage(reg)
    pointers = p.access.pointers(t, addresses.storage(mem))
    for run, mem_ptr in zip(p.runs, pointers):
        vt = vector_type(run.n, elem)
        reg_ptr = addresses.slot_pointer(reg, run.slot, reg_base)
        if reg_name == "dst":
            emit.store(emit.load(vt, mem_ptr, align=run.n * width), reg_ptr, align=width)
        else:
            emit.store(emit.load(vt, reg_ptr, align=width), mem_ptr, align=run.n * width)


@predicate("replicas_load_only")
def replicas_load_only(ctx):
    """A replicated register layout can be loaded (each holder of a copy loads its own); a
    store from one would write each element once per copy."""
    side = register_side(ctx)
    replicated = [n for n in ("dst", "src") if ctx.buffer(n).layout.is_replicated()]
    if replicated and (side is None or replicated != [side[0]] or side[0] != "dst"):
        return "replicated layout on " + ", ".join(
            f"{n.upper()} ({ctx.buffer(n).layout})" for n in replicated) + " (only loads into " \
            "a replicated register layout are supported)"
    return None


@register("copy", name="vector_registers", priority=10,
          when=[register_and_memory, same_shape_and_type, scope_reaches, replicas_load_only, inside_buffers])
def lower_vector_registers(ctx):
    """Registers <-> memory, up to 16 bytes per access, addresses hoisted per thread."""
    reg_name, mem_name = register_side(ctx)
    p = plan_registers(ctx, reg_name, mem_name)
    return lambda: _emit_registers(ctx, p, reg_name, mem_name)


# ------------------------------------------------------------------------------ cooperative
@dataclass
class ChunkPlan:
    """Chunks of n elements along the last dim, numbered row by row; in round j thread t takes
    chunk j * threads + t (rounds[j] threads take part in round j)."""
    n: int
    threads: int
    rounds: list[int]
    access: list[accesses.AccessPlan]      # one per buffer, one access per round
    narrowed: str | None                  # why chunks are narrower than the row allows


def _chunk_width(refs, names, max_bytes) -> int:
    """Elements per chunk: the largest power of two dividing the last dim, up to max_bytes.
    Raises Reject naming the buffer whose chunks are not contiguous."""
    shape = refs[0].shape
    last = shape[-1]
    n = max(max_bytes // _bytes(refs[0]), 1)
    while last % n:
        n //= 2
    for ref, name in zip(refs, names):
        chunks = windows.static_offsets(ref).reshape(-1, n)
        bad = np.argwhere(chunks != chunks[:, :1] + np.arange(n))
        if len(bad):
            c, i = (int(x) for x in bad[0])
            first, other = c * n, c * n + i
            raise Reject(f"{n * _bytes(ref)}-byte chunks along dim {len(shape) - 1} are not "
                         f"contiguous in {name} ({ref.scope}): {name}{_coordinate(shape, first)} "
                         f"is at offset {int(chunks[c, 0])} but "
                         f"{name}{_coordinate(shape, other)} at {int(chunks[c, i])}, not "
                         f"{int(chunks[c, 0]) + i}")
    return n


def plan_chunks(ctx, names, nthreads: int, max_bytes: int = MAX_BYTES,
                unaligned: str | None = None) -> ChunkPlan:
    """How `nthreads` threads move the buffers `names` (same shape) chunk by chunk;
    `unaligned`: a buffer whose chunks need not be aligned (its reads are realigned:
    copy_async_masked/realign.py)."""
    refs = [windows.resolve(ctx.operand(name)) for name in names]
    n = _chunk_width(refs, [name.upper() for name in names], max_bytes)
    narrowed = None
    for ref, name in zip(refs, names):
        if name == unaligned:
            continue
        limit, why = alignment.vector_limit(ref, max_bytes)
        if limit < n:
            n, narrowed = limit, f"{name} allows {limit}-element accesses: {why}"
        starts = windows.static_offsets(ref).reshape(-1)[::n]
        while (starts % n).any():
            n //= 2
            narrowed = f"{name}'s chunks start {n}-element aligned only"
            starts = windows.static_offsets(ref).reshape(-1)[::n]
    starts = [windows.static_offsets(ref).reshape(-1)[::n] for ref in refs]
    count = len(starts[0])
    rounds = [min(nthreads, count - j) for j in range(0, count, nthreads)]
    rows = [[s[j * nthreads:j * nthreads + r] for j, r in enumerate(rounds)] for s in starts]
    access = [_plan(ref, ref_rows) for ref, ref_rows in zip(refs, rows)]
    for ref, ref_rows, name in zip(refs, rows, names):
        banks.note(ref, ref_rows, n, write=name == "dst")
    return ChunkPlan(n, nthreads, rounds, access, narrowed)


def chunk_rounds(ctx, p: ChunkPlan, names, body, with_rounds: bool = False):
    """Builds `body([pointers of each round of the batch] per buffer)` for batches of rounds;
    a round in which only some threads take part is built alone, under scf.if. With
    `with_rounds`, body also gets the batch's round numbers and the thread index (a masked
    copy computes each chunk's coordinates from them)."""
    t = threads.scope_thread_index(p.threads, ctx.block_size)
    pointers = [a.pointers(t, addresses.storage(windows.resolve(ctx.operand(name))))
                for a, name in zip(p.access, names)]

    def run(rounds):
        batch = [[ptrs[j] for j in rounds] for ptrs in pointers]
        if with_rounds:
            body(batch, rounds, t)
        else:
            body(batch)

    full = [j for j, r in enumerate(p.rounds) if r == p.threads]
    for start in range(0, len(full), BATCH):
        run(full[start:start + BATCH])
    for j, r in enumerate(p.rounds):
        if r == p.threads:
            continue
        branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, emit.as_index(t),
                                     emit.const_index(r)))
        with ir.InsertionPoint(branch.then_block):
            run([j])
            scf.yield_([])


@predicate("memory_to_memory")
def memory_to_memory(ctx):
    dst, src = ctx.buffer("dst").scope, ctx.buffer("src").scope
    if dst in ("global", "shared") and src in ("global", "shared"):
        return None
    return f"needs both operands in global or shared memory; dst is in {dst}, src in {src}"


def _emit_cooperative(ctx, p: ChunkPlan):
    elem = ctx.buffer("dst").elem
    vt = vector_type(p.n, elem)
    align = p.n * max(ctx.buffer("dst").elem_bits // 8, 1)

    def body(pointers):
        dst_ptrs, src_ptrs = pointers
        values = [emit.load(vt, ptr, align=align) for ptr in src_ptrs]
        for value, ptr in zip(values, dst_ptrs):
            emit.store(value, ptr, align=align)

    chunk_rounds(ctx, p, ("dst", "src"), body)


@register("copy", name="cooperative", priority=10,
          when=[memory_to_memory, same_shape_and_type, full_active_lanes, no_replica, inside_buffers])
def lower_cooperative(ctx):
    """Global/shared <-> global/shared: the scope's threads take consecutive 16-byte chunks."""
    p = plan_chunks(ctx, ("dst", "src"), ctx.scope_threads())
    return lambda: _emit_cooperative(ctx, p)
