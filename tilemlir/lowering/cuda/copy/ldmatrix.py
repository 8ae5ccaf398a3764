"""copy shared -> registers with ldmatrix: whole 8x8 matrices of 16-bit elements per instruction.

Before (a warp loads the m16n8k16 A fragment, columns 16..31 of the rows `%r0`.. of a 128B-
swizzled K-major tile; `%r0` depends on the warp):

    %rows = "tile.slice"(%a_smem, %r0) {static_offsets = array<i64: MIN, 0>}
        : (!tile.buf<[128, 64], f16, "shared", S[(128, 64):(64, 1)] o Sw<3,3,3>>, index)
        -> !tile.buf<[16, 64], f16, "shared", S[(16, 64):(64, 1)] o Sw<3,3,3>>
    %a_k1 = "tile.slice"(%rows) {static_offsets = array<i64: 0, 16>}
        -> !tile.buf<[16, 16], f16, "shared", S[(16, 16):(64, 1)] + {m: 16} o Sw<3,3,3>>
    "tile.copy"(%a_frag, %a_k1) {scope = "warp"}
        : (!tile.buf<[16, 16], f16, "local", S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]>,
           ...) -> ()

After: lane l supplies the address of row l % 8 of matrix l / 8 of the instruction. That address
is a thread part built once (CSE shares it between copies) and a static part per instruction,
an XOR for a step inside the swizzle atom, an immediate offset beyond it:

    %l = lane id;   %t = %r0 * 64 + swizzle((%l % 16) * 64 + (%l / 16) * 8)
    %p = llvm.getelementptr %smem[%t ^ 16] : f16
    %r = nvvm.ldmatrix %p {num = 4, layout = #nvvm.mma_layout<row>, shape = m8n8, b16}
         : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
    register q of %r -> register slots 2q, 2q + 1 of %a_frag (i32 bitcast to vector<2xf16>)

Accepted when, evaluated element by element, the register layout is made of 8x8 matrices: a
matrix is two consecutive register slots (s, s + 1) over the 32 lanes of a warp, lane l keeping
elements 2 (l % 4) and 2 (l % 4) + 1 of row l / 4 (.trans: row 2 (l % 4) and 2 (l % 4) + 1,
element l / 4), and each row is 8 contiguous, 16-byte aligned elements in shared memory (the
swizzle moves 16-byte groups only). Matrices are issued four per instruction where their row
addresses are one affine function of the lane, else two, else one. stmatrix.py is the mirror.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import nvvm

from tilemlir.analysis import alignment
from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout import LayoutError
from tilemlir.lowering import accesses, addresses, banks
from tilemlir.lowering.cuda import fragments, threads
from tilemlir.lowering.cuda.predicates import (full_active_lanes, no_replica,
                                               same_shape_and_type, target_supports)

ROW = 8                     # an 8x8 matrix: 8 rows of 8 16-bit elements (16 bytes)


@dataclass(frozen=True)
class Matrix:
    slot: int               # register slots (slot, slot + 1) hold it
    trans: bool
    rows: np.ndarray        # (warps, 8): pre-swizzle shared offset of each row, per warp


@dataclass(frozen=True)
class MatrixInstruction:
    matrices: tuple[Matrix, ...]        # x1, x2 or x4

    @property
    def count(self) -> int:
        return len(self.matrices)

    @property
    def trans(self) -> bool:
        return self.matrices[0].trans

    def thread_rows(self, nthreads: int) -> np.ndarray:
        """The row address thread t supplies: row t % 8 of matrix (t % 32) / 8 (wrapping for
        x1 / x2, whose upper lanes' addresses the hardware ignores)."""
        t = np.arange(nthreads)
        q = (t % 32 // ROW) % self.count
        rows = np.stack([m.rows for m in self.matrices])         # (count, warps, 8)
        return rows[q, t // 32, t % ROW]


@dataclass
class MatrixPlan:
    threads: int
    instructions: list[MatrixInstruction]
    access: accesses.AccessPlan


# ------------------------------------------------------------------------------ predicates
@predicate("shared_to_registers")
def shared_to_registers(ctx):
    if ctx.buffer("src").scope == "shared" and ctx.buffer("dst").scope == "local":
        return None
    return (f"ldmatrix copies shared memory to registers; src is in {ctx.buffer('src').scope}, "
            f"dst in {ctx.buffer('dst').scope}")


@predicate("b16_elements")
def b16_elements(ctx):
    dst = ctx.buffer("dst")
    if dst.elem_bits == 16:
        return None
    return f"8x8 matrix copies (ldmatrix, stmatrix) move 16-bit elements; the tile holds {dst.elem}"


# ------------------------------------------------------------------------------ analysis
def _coordinate(shape, flat: int) -> str:
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _match(pre: np.ndarray, trans: bool):
    """(rows, None) if lanes x halves `pre` (32, 2) is an 8x8 matrix, else (None, (lane, half,
    expected offset)) for the first element out of place."""
    lane = np.arange(32)[:, None]
    half = np.arange(2)[None, :]
    if trans:
        rows = pre[:4].reshape(ROW)
        expected = rows[2 * (lane % 4) + half] + lane // 4
    else:
        rows = pre[::4, 0]
        expected = rows[lane // 4] + 2 * (lane % 4) + half
    bad = np.argwhere(pre != expected)
    if len(bad):
        ln, h = (int(x) for x in bad[0])
        return None, (ln, h, int(expected[ln, h]))
    return rows, None


def _describe_mismatch(buf, name, slot, warp, pre, elems, miss, trans) -> str:
    lane, half, expected = miss
    where = (f"row {2 * (lane % 4) + half}, element {lane // 4}" if trans
             else f"row {lane // 4}, element {2 * (lane % 4) + half}")
    return (f"{'.trans: ' if trans else ''}lane {lane} of warp {warp} gets {where} of the "
            f"matrix in register slot {slot + half}, shared offset {expected}, but the layout "
            f"puts {name}{_coordinate(buf.shape, elems[lane, half])} there, at offset "
            f"{int(pre[lane, half])}")


def _matrices(reg, mem_pre, table, name) -> list[Matrix]:
    """The 8x8 matrices of the register layout, or Reject naming the first misfit."""
    held = table >= 0
    partial = np.flatnonzero(held.any(axis=0) & ~held.all(axis=0))
    if len(partial):
        s = int(partial[0])
        idle = int(np.flatnonzero(~held[:, s])[0])
        raise Reject(f"thread {idle} keeps nothing in register slot {s} while other threads "
                     f"do: ldmatrix writes the same registers in every lane")
    missing = np.setdiff1d(np.arange(reg.size), table[held])
    if len(missing):
        raise Reject(f"{name}{_coordinate(reg.shape, int(missing[0]))} is held by no thread of "
                     f"the op's scope")
    slots = [int(s) for s in np.flatnonzero(held[0])]
    pairs = []
    while slots:
        s = slots.pop(0)
        if not slots or slots[0] != s + 1:
            raise Reject(f"register slot {s} has no neighbour {s + 1}: an 8x8 matrix fills two "
                         f"consecutive register slots")
        slots.pop(0)
        pairs.append(s)
    warps = table.shape[0] // 32
    result = []
    for s in pairs:
        per_warp, trans = [], None
        for w in range(warps):
            elems = table[32 * w:32 * w + 32, s:s + 2]
            pre = mem_pre.reshape(-1)[elems]
            rows, miss = _match(pre, False)
            kind = False
            if rows is None:
                rows, miss_t = _match(pre, True)
                kind = True
                if rows is None:
                    raise Reject(f"register slots {s}, {s + 1} do not hold an 8x8 matrix: "
                                 + _describe_mismatch(reg, name, s, w, pre, elems, miss, False)
                                 + "; " + _describe_mismatch(reg, name, s, w, pre, elems,
                                                             miss_t, True))
            if trans is not None and kind != trans:
                raise Reject(f"register slots {s}, {s + 1}: warp {w} needs "
                             f"{'.trans' if kind else 'no .trans'} but warp 0 does not")
            trans = kind
            unaligned = np.flatnonzero(rows % ROW)
            if len(unaligned):
                i = int(unaligned[0])
                raise Reject(f"row {i} of the matrix in register slots {s}, {s + 1} starts at "
                             f"shared offset {int(rows[i])}, not a multiple of {ROW} elements "
                             f"(16 bytes)")
            per_warp.append(rows)
        result.append(Matrix(s, trans, np.stack(per_warp)))
    return result


def _instructions(matrices: list[Matrix], nthreads: int) -> list[MatrixInstruction]:
    """Matrices in slot order, four per instruction where one affine lane function gives all
    their row addresses (.trans and plain ones apart), else two, else one."""
    out = []
    i = 0
    while i < len(matrices):
        for count in (4, 2, 1):
            group = tuple(matrices[i:i + count])
            if len(group) < count or any(m.trans != group[0].trans for m in group):
                continue
            inst = MatrixInstruction(group)
            if accesses.fit_thread_affine(inst.thread_rows(nthreads)) is not None:
                break
        else:
            raise Reject(f"the row addresses of the matrix in register slots {matrices[i].slot}, "
                         f"{matrices[i].slot + 1} are not an affine function of the lane")
        out.append(inst)
        i += count
    return out


def plan(ctx, registers: str, memory: str) -> MatrixPlan:
    """The ldmatrix / stmatrix instructions moving `registers` from / to `memory`."""
    reg_ref = fragments.register_ref(ctx, registers)
    mem_ref = windows.resolve(ctx.operand(memory))
    limit, why = alignment.vector_limit(mem_ref)
    if limit < ROW:
        raise Reject(f"matrix rows are 16 bytes, but the {memory} buffer only allows "
                     f"{limit}-element accesses: {why}")
    nthreads = ctx.scope_threads()
    if nthreads % 32:
        raise Reject(f"the {ctx.scope} has {nthreads} threads, not whole warps")
    try:
        table = fragments.slot_table(reg_ref.type, nthreads)
    except LayoutError as err:
        raise Reject(str(err))
    matrices = _matrices(reg_ref.type, windows.static_offsets(mem_ref), table,
                         registers.upper())
    instructions = _instructions(matrices, nthreads)
    rows = [i.thread_rows(nthreads) for i in instructions]
    access = accesses.plan_accesses(mem_ref, rows)
    banks.note(mem_ref, rows, ROW, write=memory == "dst",
               matrices=[i.count for i in instructions])
    return MatrixPlan(nthreads, instructions, access)


# ------------------------------------------------------------------------------ emission
SHAPE = "#nvvm.ld_st_matrix_shape<m = 8, n = 8>"


def instruction_layout(inst: MatrixInstruction):
    return nvvm.MMALayout.col if inst.trans else nvvm.MMALayout.row


def matrix_pointers(ctx, p: MatrixPlan, memory: str) -> list[ir.Value]:
    """The shared-memory address each thread supplies, per instruction."""
    mem = windows.resolve(ctx.operand(memory))
    t = threads.scope_thread_index(p.threads, ctx.block_size)
    return p.access.pointers(t, addresses.storage(mem))


def _emit(ctx, p: MatrixPlan):
    reg = windows.resolve(ctx.operand("dst"))
    elem = reg.type.elem
    pair = emit.vector_type(2, elem)
    reg_base = addresses.storage(reg)
    shape = ir.Attribute.parse(SHAPE)
    i32 = emit.i32()
    for inst, ptr in zip(p.instructions, matrix_pointers(ctx, p, "src")):
        result = emit.struct([i32] * inst.count) if inst.count > 1 else i32
        loaded = nvvm.ldmatrix(result, ptr, inst.count, instruction_layout(inst), shape,
                               nvvm.LdStMatrixEltType.B16)
        for q, m in enumerate(inst.matrices):
            word = emit.extract_value(loaded, q, i32) if inst.count > 1 else loaded
            emit.store(emit.bitcast(pair, word), addresses.slot_pointer(reg, m.slot, reg_base),
                       align=2)


@register("copy", name="ldmatrix", priority=20,
          when=[shared_to_registers, same_shape_and_type, b16_elements, full_active_lanes,
                no_replica, target_supports("ldmatrix")])
def lower_ldmatrix(ctx):
    """ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: 8x8 matrices per instruction."""
    p = plan(ctx, "dst", "src")
    return lambda: _emit(ctx, p)
