"""gemm_async -> wgmma.fence, a chain of wgmma.mma_async m64nNk16 (m64nNk32 for 8-bit floats),
wgmma.commit_group (sm_90a).

Before (a warpgroup multiplies a 64x64 A and a 128x64 B, both 128B-swizzled in shared memory,
into a 64x128 f32 accumulator held in registers as the wgmma fragment):

    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup",
                                          transpose_b = false}
        : (!tile.buf<[64, 128], f32, "local", wgmma_accumulator_layout(64, 128)
                        = S[(4, 2, 8, 16, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]>,
           !tile.buf<[64, 64], f16, "shared", S[(64, 64):(64, 1)] o Sw<3,3,3>>,
           !tile.buf<[128, 64], f16, "shared", S[(128, 64):(64, 1)] o Sw<3,3,3>>, i1) -> ()
    ...
    "tile.async_wait"() {kind = "wgmma", pending = 0 : i64}

After (M / 64 = 1 accumulator of N / 2 = 64 registers, K / 16 = 4 instructions along K; the
descriptors' start field advances 2 (32 bytes) per K step; with M = 128 a second chain reads
A from 64 rows further, into its own 64 registers):

    %acc0 = 64 x (llvm.load slot i; arith.select %accum, %x, 0.0) -> llvm.insertvalue
    nvvm.wgmma.fence.aligned
    %r1 = nvvm.wgmma.mma_async (C_A + %sa), (C_B + %sb), %acc0
          #nvvm.shape<m = 64, n = 128, k = 16>, D [f32, one], A [f16, one, row], B [f16, one, col]
    %r2 = nvvm.wgmma.mma_async (C_A + 2 + %sa), (C_B + 2 + %sb), %r1 ...
    %r3 ... %r4 ...
    nvvm.wgmma.commit_group.sync.aligned
    64 x (llvm.extractvalue %r4[i] -> llvm.store to slot i)

The asynchronous chain completes at the kernel's wgmma wait (tile.async_wait, kind "wgmma"),
which must come before D's registers are read.

Accumulate flag. nvvm.wgmma.mma_async takes scale-d only as an attribute, so the first
instruction always runs with scale-d = 1 and the accumulator it reads is D's registers when
%accum holds and zeros when it does not: one `arith.select` per register, applied before the
wgmma.fence (so no register is touched between the fence and the chain). A constant %accum
folds: true loads D, false starts from zeros without reading D. This costs N / 2 selects per
call, against the alternative of wgmma in inline PTX with a predicate operand.

Operands. D in registers with the wgmma accumulator fragment: every element must be held by the
lane and warp of the warpgroup the PTX ISA assigns (tilemlir.layout.instructions
.Wgmma); each (M block, accumulator register) must sit in one register slot
on all threads, in any slot order. A (M x K) and B (N x K) are K-major tiles in shared memory
with an MMA layout (any swizzle mode) starting on their swizzle repeat. M is a multiple of 64
(one instruction per 64-row block, each with its own registers), N a multiple of 8: up to 256
one instruction, above it several along N in the same group (n_chunks: 320 is two n160, each
reading B from its first row and holding its own registers, those of D's columns c0 .. in the
accumulator layout), as a 128 x 320 tile needs; transpose_b keeps N to one instruction.

B MN-major (`transpose_b`, Tx.warpgroup.gemm_async(D, A, B, transpose_B=True)): B is a (K x N)
tile, N contiguous, D (+)= A . B (attention's V: rows = key positions = K, columns = head dim
= N). Its layout is the MMA layout of a tile whose rows are K:
tilemlir.lang.mma_shared_layout(dtype, mode, (K, N)), i.e. N cut into chunks one swizzle row
wide (64 f16 for 128B), each chunk K rows of W bytes, the chunks one after another -- what TMA
writes when Tx.copy_async loads a (K, N) box into it (one [K, 64] box per chunk). A row window
of a taller buffer of that layout (a stage of a (STAGES * K, N) ring, as the hgemm kernels
allocate their tiles) is accepted as well: the chunks are then further apart, and the
descriptor says so. The instruction has imm-trans-b = 1 (nvvm layout B "row") and the MN-major
descriptor: for the swizzled modes LBO = bytes between chunks along N, SBO = bytes between
8-row groups along K (1024 for 128B); for "none" the roles swap (LBO along K, SBO along N). A K
step of 16 rows advances the start address by two 8-row groups (2048 bytes for 128B).

8-bit floats (kind f8): A and B of f8E4M3FN or f8E5M2, each its own (e4m3 x e5m2 is one
instruction), accumulated in f32. One instruction reads 32 elements of K (32 bytes, as the
16-bit kinds' 16), so a K tile of 128 (one 128-byte swizzle row, what a TMA box of 128 f8 per
row writes) is four m64nNk32 instructions, the descriptors' start field advancing 2 (32 bytes)
per step exactly as for 16-bit tiles. Both operands are K-major tiles in shared memory: the PTX
ISA has no transposed (MN-major) 8-bit operand, so transpose_b is refused, and this variant
reads an 8-bit A from shared memory only:

    %r1 = nvvm.wgmma.mma_async (C_A + %sa), (C_B + %sb), %acc0
          #nvvm.shape<m = 64, n = 256, k = 32>, D [f32, one], A [e4m3, one, row], B [e4m3, one, col]

A in registers ("RS"): A is a "local" (M x K) f16 / bf16 tile in the layout
tilemlir.lang.wgmma_a_layout(M, K) (any slot order, as for D). Each K step of each M block
reads four b32 registers per thread, packed from A's slots before the fence, and the
instruction is written as inline PTX (nvvm.wgmma.mma_async takes A only as a descriptor; MLIR
22's nvvm.inline_ptx aborts on read-write operands in gpu-lower-to-nvvm-pipeline and mis-ties
them next to read-only ones, hence llvm.inline_asm with the constraints spelled out):

    %a0 = bitcast (vector<2xf16> [slot p0, slot p1]) : i32   ... %a3
    nvvm.wgmma.fence.aligned
    %r1 = llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, 1, 0;
          wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0, ..., $63}, {$64, ..., $67},
          $68, p, 1, 1, 0; }", "=f,...,=f,r,r,r,r,l,0,1,...,63" %a0, ..., %a3, (C_B + %sb), %acc0...

The accumulators are tied read-write operands, as the nvvm op's are; scale-d stays 1 with the
same select before the fence. wgmma_a_layout(64, K) is wgmma_accumulator_layout(64, K), so a
cast of an f32 accumulator S (64 x K) into P in that layout is a per-thread conversion
(cvt.rn.f16x2.f32 pairs) and P . V is this variant with A = P, transpose_b = True. The PTX rule
that A's registers must not change between wgmma.fence and the wgmma reading them holds by
construction: the registers are written before the fence, and nothing in the chain writes them.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.ir.types import is_f8
from tilemlir.layout.instructions import (WGMMA_AB_TYPES, Wgmma, accumulator_fragment,
                                          wgmma_a_layout, wgmma_accumulator_layout)
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments as register_fragments
from tilemlir.lowering.cuda.gemm_async import operands
from tilemlir.lowering.cuda.predicates import no_replica, operands_in, target_supports


@predicate("a_operand")
def a_operand(ctx):
    """A in shared memory (read through a descriptor) or in registers (the wgmma A fragment)."""
    scope = ctx.buffer("a").scope
    if scope in ("shared", "local"):
        return None
    return f"A is in {scope}; wgmma reads A from shared memory or from registers (local)"


@predicate("dtypes")
def input_types(ctx):
    """A and B both f16 or both bf16, or both 8-bit floats (e4m3 / e5m2, mixed as wished; K-major,
    A in shared memory); D f32."""
    a, b = ctx.buffer("a").elem, ctx.buffer("b").elem
    if not (is_f8(a) or is_f8(b)):
        return operands.dtypes(ctx)             # the 16-bit kinds' rule
    problems = []
    if is_f8(a) and is_f8(b):
        reason = Wgmma.input_error(WGMMA_AB_TYPES[str(a)], WGMMA_AB_TYPES[str(b)],
                                   bool(ctx.attr("transpose_b")))
        if reason:
            problems.append(reason)
    else:
        problems.append(f"A is {a} but B is {b}: kind f8 takes 8-bit floats (f8E4M3FN, "
                        f"f8E5M2) for both")
    if is_f8(a) and ctx.buffer("a").scope == "local":
        problems.append("A holds 8-bit floats in registers: this variant reads an 8-bit A from "
                        "shared memory only")
    d = str(ctx.buffer("d").elem)
    if d != "f32":
        problems.append(f"D is {d}, the accumulator must be f32")
    return "; ".join(problems) or None


@predicate("whole_warpgroup")
def whole_warpgroup(ctx):
    """Scope "warpgroup", and all 128 threads of it reach the op (wgmma is .sync.aligned)."""
    if ctx.scope != "warpgroup":
        return f"scope '{ctx.scope}': wgmma is issued by a whole warpgroup (scope 'warpgroup')"
    return ctx.narrowing_reason()


# ------------------------------------------------------------------------------ the fragment
def _fragment_slots(name: str, buf, lane, warp, key, wanted: str, reads: str, unit) -> dict:
    """{fragment register key: register slot} of operand `name` held in registers, checked on
    every element: each is held by the lane and warp the instruction `reads` it from (the
    expected `lane` / `warp` arrays), and each key sits in one slot on all threads.
    `unit(k)` names key k in a message."""
    held = register_fragments.thread_map(buf)
    if not held.lanes_named or not held.warps_named:
        missing = "lane" if not held.lanes_named else "warp"
        raise Reject(f"{name}'s layout {buf.layout} names no {missing} axis, so it is not the "
                     f"wgmma {name} fragment; {wanted}")
    for what, actual, expected in (("lane", held.lane, lane), ("warp", held.warp, warp)):
        at = register_fragments.first_mismatch(actual, expected)
        if at is not None:
            raise Reject(f"{name}{list(at)} is held by {what} {int(actual[at])} of the warpgroup "
                         f"but {reads} {what} {int(expected[at])}; {wanted}")
    pairs = np.unique(np.stack([key.ravel(), held.slot.ravel()], axis=1), axis=0)
    keys, counts = np.unique(pairs[:, 0], return_counts=True)
    if (counts > 1).any():
        raise Reject(f"{name} keeps {unit(int(keys[counts > 1][0]))} in different slots on "
                     f"different threads; {wanted}")
    return dict(pairs.tolist())


def n_chunks(n: int, k_step: int, elem: str) -> list[tuple[int, int]]:
    """(first column, width) of each instruction along an accumulator N columns wide: one up
    to 256, else the fewest of equal width that wgmma takes (320: two of 160), else 256-wide
    ones and the rest. Raises Reject when a width is not one wgmma takes."""
    if n <= 256:
        reason = Wgmma.shape_error(Wgmma.m, n, k_step, elem)
        if reason:
            raise Reject(reason)
        return [(0, n)]
    count = -(-n // 256)
    width = n // count
    if n % count or Wgmma.shape_error(Wgmma.m, width, k_step, elem):
        width = 256
    chunks = [(c0, min(width, n - c0)) for c0 in range(0, n, width)]
    for _, w in chunks:
        reason = Wgmma.shape_error(Wgmma.m, w, k_step, elem)
        if reason:
            raise Reject(f"N={n} is above 256, so it runs as several instructions along N, "
                         f"but it does not split into widths wgmma takes ({reason})")
    return chunks


def accumulator_slots(ctx, n: int, k: int, m: int) -> list[list[int]]:
    """The register slot of each (M block, accumulator register), checked on every element:
    registers c0 / 2 .. are those of the instruction at column c0 (N above 256)."""
    lane, warp, block, register = accumulator_fragment(m, n)
    slots = _fragment_slots(
        "D", ctx.buffer("d"), lane, warp, block * (n // 2) + register,
        f"the wgmma accumulator layout is {wgmma_accumulator_layout(m, n)}",
        f"wgmma m64n{n}k{k} puts it in" if n <= 256 else f"wgmma along N={n} puts it in",
        lambda k: f"accumulator register {k % (n // 2)} of M block {k // (n // 2)}")
    return [[slots[b * (n // 2) + i] for i in range(n // 2)] for b in range(m // Wgmma.m)]


def a_register_slots(ctx, m: int, k: int) -> list[list[list[int]]]:
    """slots[M block][K step][position] of A in registers, checked on every element."""
    lane, warp, block, step, position = Wgmma.a_fragment(m, k)
    steps = k // operands.MMA_K
    slots = _fragment_slots(
        "A", ctx.buffer("a"), lane, warp, (block * steps + step) * 8 + position,
        f"the wgmma A layout is {wgmma_a_layout(m, k)} (tilemlir.lang.wgmma_a_layout)",
        "wgmma with A in registers reads it from",
        lambda kk: f"element {kk % 8} of K step {kk // 8 % steps} of M block {kk // 8 // steps}")
    return [[[slots[(b * steps + j) * 8 + p] for p in range(8)] for j in range(steps)]
            for b in range(m // Wgmma.m)]


# ------------------------------------------------------------------------------ lowering
def _initial_accumulators(ctx, d_ref, slots, acc_types):
    f32 = ir.F32Type.get()
    zero = emit.const(0.0, f32)
    accum = ctx.operand("accum")
    known = operands.static_bool(accum)
    base = addresses.storage(d_ref)
    accumulators = []
    for block_slots, acc_type in zip(slots, acc_types):
        if known is False:
            values = [zero] * len(block_slots)
        else:
            values = [emit.load(f32, addresses.slot_pointer(d_ref, s, base)) for s in block_slots]
            if known is None:
                values = [arith.select(accum, v, zero) for v in values]
        acc = llvm.mlir_undef(acc_type)
        for i, v in enumerate(values):
            acc = llvm.insertvalue(acc, v, [i])
        accumulators.append(acc)
    return accumulators


def _a_registers(ctx, a_slots) -> list[list[list[ir.Value]]]:
    """Per M block and K step, A's four b32 registers: slot pairs packed as 2 x 16-bit."""
    ref = windows.resolve(ctx.operand("a"))
    elem = ref.type.elem
    base = addresses.storage(ref)
    registers = []
    for block in a_slots:
        per_step = []
        for positions in block:
            values = [emit.load(elem, addresses.slot_pointer(ref, s, base)) for s in positions]
            per_step.append([emit.bitcast(emit.i32(), emit.build_vector(values[i:i + 2]))
                             for i in range(0, 8, 2)])
        registers.append(per_step)
    return registers


def _wgmma_register_a(acc_type, acc, a_regs, desc_b, n: int, elem: str, transpose_b: bool):
    """wgmma.mma_async m64nNk16 with A from registers, as inline PTX: the accumulators are
    outputs tied to the inputs (read-write), scale-d is 1 (see "Accumulate flag")."""
    count = n // 2
    f32 = ir.F32Type.get()
    outs = ", ".join(f"${i}" for i in range(count))
    a = ", ".join(f"${count + i}" for i in range(4))
    text = ("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
            f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{elem}.{elem} "
            f"{{{outs}}}, {{{a}}}, ${count + 4}, p, 1, 1, {int(transpose_b)};\n}}")
    constraints = ",".join(["=f"] * count + ["r"] * 4 + ["l"] + [str(i) for i in range(count)])
    inputs = [*a_regs, desc_b, *(emit.extract_value(acc, i, f32) for i in range(count))]
    return llvm.inline_asm(acc_type, inputs, text, constraints, has_side_effects=True)


def _b_descriptor(b, row: int, k0: int) -> int:
    if isinstance(b, operands.MnMajorOperand):
        return b.descriptor(k0)
    return b.descriptor("wgmma", row, k0)


def _emit(ctx, a, b, slots, chunks, k: int, a_slots, k_step: int):
    """a: the shared A (SmemOperand) or None with a_slots, A's register slots; chunks: each
    instruction's (first column, width) along N (n_chunks); k_step: one instruction's K. All
    of them are one wgmma group: one fence before, one commit after."""
    f32 = ir.F32Type.get()
    d_ref = windows.resolve(ctx.operand("d"))
    pieces = [(block, c0, w, block_slots[c0 // 2:(c0 + w) // 2])
              for block, block_slots in enumerate(slots) for c0, w in chunks]
    acc_types = [emit.struct([f32] * (w // 2)) for _, _, w, _ in pieces]
    accumulators = _initial_accumulators(ctx, d_ref, [piece[3] for piece in pieces], acc_types)
    transpose_b = bool(ctx.attr("transpose_b"))
    if a is not None:
        a_start = operands.start_field(ctx.operand("a"))
    else:
        a_regs = _a_registers(ctx, a_slots)
    b_start = operands.start_field(ctx.operand("b"))
    elem_name = str(ctx.buffer("a").elem)
    elem = getattr(nvvm.WGMMATypes, WGMMA_AB_TYPES[elem_name])
    elem_b = getattr(nvvm.WGMMATypes, WGMMA_AB_TYPES[str(ctx.buffer("b").elem)])
    one = nvvm.WGMMAScaleIn.one
    layout_b = nvvm.MMALayout.row if transpose_b else nvvm.MMALayout.col
    nvvm.wgmma_fence_aligned()
    results = []
    for (block, c0, w, _), acc, acc_type in zip(pieces, accumulators, acc_types):
        shape = ir.Attribute.parse(f"#nvvm.shape<m = {Wgmma.m}, n = {w}, k = {k_step}>")
        for step, k0 in enumerate(operands.k_steps(k, k_step)):
            if a is None:
                desc_b = operands.descriptor_value(_b_descriptor(b, c0, k0), b_start)
                acc = _wgmma_register_a(acc_type, acc, a_regs[block][step], desc_b, w,
                                        elem_name, transpose_b)
                continue
            desc_a = operands.descriptor_value(a.descriptor("wgmma", Wgmma.m * block, k0), a_start)
            desc_b = operands.descriptor_value(_b_descriptor(b, c0, k0), b_start)
            acc = nvvm.wgmma_mma_async(acc_type, acc, desc_a, desc_b, shape, elem, elem_b,
                                       nvvm.WGMMATypes.f32, nvvm.WGMMAScaleOut.one, one, one,
                                       nvvm.MMALayout.row, layout_b)
        results.append(acc)
    nvvm.wgmma_commit_group_sync_aligned()
    base = addresses.storage(d_ref)
    for acc, (_, _, _, piece_slots) in zip(results, pieces):
        for i, s in enumerate(piece_slots):
            emit.store(emit.extract_value(acc, i, f32), addresses.slot_pointer(d_ref, s, base))


@register("gemm_async", name="wgmma", priority=10,
          when=[target_supports("wgmma"), whole_warpgroup, a_operand, operands_in("shared", "b"),
                operands_in("local", "d"), input_types, no_replica])
def lower_wgmma(ctx):
    """wgmma.mma_async m64nNk16 chains from shared-memory descriptors (or A in registers) into
    register fragments; B K-major or, with transpose_b, MN-major; m64nNk32 for 8-bit floats."""
    elem = WGMMA_AB_TYPES[str(ctx.buffer("a").elem)]
    k_step = operands.mma_k(ctx.buffer("a").elem_bits)
    dims = operands.dims(ctx, k_step)
    if ctx.attr("cta_group") != 1:
        raise Reject(f"cta_group {ctx.attr('cta_group')}: wgmma runs within one CTA "
                     f"(cta_group 1)")
    if dims.m % Wgmma.m:
        raise Reject(f"M={dims.m} is not a multiple of {Wgmma.m} (wgmma is m64nNk{k_step})")
    chunks = n_chunks(dims.n, k_step, elem)
    transpose_b = bool(ctx.attr("transpose_b"))
    if transpose_b and len(chunks) > 1:
        raise Reject(f"N={dims.n} with transpose_b: an MN-major B is one instruction along N "
                     f"(N up to 256)")
    if dims.b_n != dims.n:
        held = "columns (B is K x N with transpose_b)" if transpose_b else "rows"
        raise Reject(f"B has {dims.b_n} {held} but D has N={dims.n} columns")
    if ctx.buffer("a").scope == "shared":
        a, a_slots = operands.smem_operand(ctx, "a"), None
    else:
        register_fragments.register_ref(ctx, "a")
        a, a_slots = None, a_register_slots(ctx, dims.m, dims.k)
    b = operands.mn_major_operand(ctx, "b") if transpose_b else operands.smem_operand(ctx, "b")
    slots = accumulator_slots(ctx, dims.n, k_step, dims.m)
    return lambda: _emit(ctx, a, b, slots, chunks, dims.k, a_slots, k_step)
