"""gemm_async -> wgmma.fence, a chain of wgmma.mma_async m64nNk16, wgmma.commit_group (sm_90a).

Before (a warpgroup multiplies a 64x64 A and a 128x64 B, both 128B-swizzled in shared memory,
into a 64x128 f32 accumulator held in registers as the wgmma fragment):

    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup"}
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
(one instruction per 64-row block, each with its own registers), N a multiple of 8 up to 256.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, llvm, nvvm

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout.instructions import Wgmma
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments as register_fragments
from tilemlir.lowering.cuda.gemm_async import operands
from tilemlir.lowering.cuda.predicates import no_replica, operands_in, target_supports


@predicate("whole_warpgroup")
def whole_warpgroup(ctx):
    """Scope "warpgroup", and all 128 threads of it reach the op (wgmma is .sync.aligned)."""
    if ctx.scope != "warpgroup":
        return f"scope '{ctx.scope}': wgmma is issued by a whole warpgroup (scope 'warpgroup')"
    return ctx.narrowing_reason()


# ------------------------------------------------------------------------------ the fragment
def accumulator_slots(ctx, wgmma: Wgmma, m: int) -> list[list[int]]:
    """The register slot of each (M block, accumulator register), checked on every element."""
    d = ctx.buffer("d")
    n = wgmma.n
    held = register_fragments.thread_map(d)
    lane, warp, block, register = wgmma.accumulator_fragment(m)
    wanted = f"the wgmma accumulator layout is {wgmma.accumulator_layout(m)}"
    if not held.lanes_named or not held.warps_named:
        missing = "lane" if not held.lanes_named else "warp"
        raise Reject(f"D's layout {d.layout} names no {missing} axis, so it is not the wgmma "
                     f"accumulator fragment; {wanted}")
    for what, actual, expected in (("lane", held.lane, lane), ("warp", held.warp, warp)):
        at = register_fragments.first_mismatch(actual, expected)
        if at is not None:
            raise Reject(f"D{list(at)} is held by {what} {int(actual[at])} of the warpgroup but "
                         f"wgmma m64n{n}k16 puts it in {what} {int(expected[at])}; {wanted}")
    key = block * (n // 2) + register
    pairs = np.unique(np.stack([key.ravel(), held.slot.ravel()], axis=1), axis=0)
    keys, counts = np.unique(pairs[:, 0], return_counts=True)
    if (counts > 1).any():
        k = int(keys[counts > 1][0])
        raise Reject(f"D keeps accumulator register {k % (n // 2)} of M block {k // (n // 2)} in "
                     f"different slots on different threads; {wanted}")
    slots = dict(pairs.tolist())
    return [[slots[b * (n // 2) + i] for i in range(n // 2)] for b in range(m // wgmma.m)]


# ------------------------------------------------------------------------------ lowering
def _initial_accumulators(ctx, d_ref, slots, acc_type):
    f32 = ir.F32Type.get()
    zero = emit.const(0.0, f32)
    accum = ctx.operand("accum")
    known = operands.static_bool(accum)
    base = addresses.storage(d_ref)
    accumulators = []
    for block_slots in slots:
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


def _emit(ctx, a: operands.SmemOperand, b: operands.SmemOperand, slots, n: int):
    f32 = ir.F32Type.get()
    d_ref = windows.resolve(ctx.operand("d"))
    acc_type = emit.struct([f32] * (n // 2))
    accumulators = _initial_accumulators(ctx, d_ref, slots, acc_type)
    a_start = operands.start_field(ctx.operand("a"))
    b_start = operands.start_field(ctx.operand("b"))
    shape = ir.Attribute.parse(f"#nvvm.shape<m = {Wgmma.m}, n = {n}, k = {operands.MMA_K}>")
    elem = getattr(nvvm.WGMMATypes, str(ctx.buffer("a").elem))
    one = nvvm.WGMMAScaleIn.one
    nvvm.wgmma_fence_aligned()
    results = []
    for block, acc in enumerate(accumulators):
        for k0 in operands.k_steps(a.k):
            desc_a = operands.descriptor_value(a.descriptor("wgmma", Wgmma.m * block, k0), a_start)
            desc_b = operands.descriptor_value(b.descriptor("wgmma", 0, k0), b_start)
            acc = nvvm.wgmma_mma_async(acc_type, acc, desc_a, desc_b, shape, elem, elem,
                                       nvvm.WGMMATypes.f32, nvvm.WGMMAScaleOut.one, one, one,
                                       nvvm.MMALayout.row, nvvm.MMALayout.col)
        results.append(acc)
    nvvm.wgmma_commit_group_sync_aligned()
    base = addresses.storage(d_ref)
    for acc, block_slots in zip(results, slots):
        for i, s in enumerate(block_slots):
            emit.store(emit.extract_value(acc, i, f32), addresses.slot_pointer(d_ref, s, base))


@register("gemm_async", name="wgmma", priority=10,
          when=[target_supports("wgmma"), whole_warpgroup, operands_in("shared", "a", "b"),
                operands_in("local", "d"), operands.dtypes, no_replica])
def lower_wgmma(ctx):
    """wgmma.mma_async m64nNk16 chains from shared-memory descriptors into register fragments."""
    dims = operands.dims(ctx)
    if ctx.attr("cta_group") != 1:
        raise Reject(f"cta_group {ctx.attr('cta_group')}: wgmma runs within one CTA "
                     f"(cta_group 1)")
    if dims.m % Wgmma.m:
        raise Reject(f"M={dims.m} is not a multiple of {Wgmma.m} (wgmma is m64nNk16)")
    elem = str(ctx.buffer("a").elem)
    reason = Wgmma.shape_error(Wgmma.m, dims.n, operands.MMA_K, elem)
    if reason:
        raise Reject(reason)
    if dims.b_rows != dims.n:
        raise Reject(f"B has {dims.b_rows} rows but D has N={dims.n} columns")
    a = operands.smem_operand(ctx, "a")
    b = operands.smem_operand(ctx, "b")
    slots = accumulator_slots(ctx, Wgmma(dims.n, elem), dims.m)
    return lambda: _emit(ctx, a, b, slots, dims.n)
