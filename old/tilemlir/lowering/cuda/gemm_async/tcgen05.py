"""gemm_async -> a chain of tcgen05.mma.cta_group::G.kind::f16 issued by one thread (sm_100a).

Before (seed 000: one elected thread of warp 0 multiplies 128x64 A and B tiles held in
128B-swizzled shared memory into a 128x128 f32 accumulator in tensor memory, a slice of the
128x512 TMEM allocation):

    %d = "tile.slice"(%tmem) {static_offsets = array<i64: 0, 0>} : (!T512) -> !T128
    scf.if %warp0_elected {
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread",
                                            transpose_b = false}
          : (!tile.buf<[128, 128], f32, "tmem", S[(128, 128):(1@TLane, 1@TCol)]>,
             !tile.buf<[128, 64], f16, "shared", S[(128, 64):(64, 1)] o Sw<3,3,3>>,
             !tile.buf<[128, 64], f16, "shared", S[(128, 64):(64, 1)] o Sw<3,3,3>>, i1) -> ()
    }

After (K / 16 = 4 instructions; each K step adds 32 bytes, 2 in the start field, to both
descriptors; only the first instruction reads D's old value, and only if %accum):

    %sa = ((ptrtoint %a_smem) & 0x3FFFF) >> 4                    (and %sb for B)
    %d_t = llvm.inttoptr (%tmem_addr + (lane << 16 | column)) : i32 to !llvm.ptr<6>
    %idesc = arith.constant 136314896 : i32        (f32 += f16 x f16, K-major, M=128, N=128)
    nvvm.tcgen05.mma %d_t, (C_A + %sa), (C_B + %sb), %idesc, %accum   {cta_group<cta_1>, kind<f16>}
    nvvm.tcgen05.mma %d_t, (C_A + 2 + %sa), (C_B + 2 + %sb), %idesc, %true
    nvvm.tcgen05.mma %d_t, (C_A + 4 + %sa), (C_B + 4 + %sb), %idesc, %true
    nvvm.tcgen05.mma %d_t, (C_A + 6 + %sa), (C_B + 6 + %sb), %idesc, %true

C_A / C_B are the constant descriptors of tilemlir.lowering.cuda.descriptors (swizzle, LBO,
SBO, fixed bits) for the tile at address 0; the run-time start field is added to them.
Completion is tracked by the kernel: tile.tcgen05_commit to an mbarrier, then a wait on it.

Operands. D lives in tensor memory with the layout the instruction writes
(layout/instructions.Tcgen05Mma: the PTX data path layout of M and
cta_group), possibly a static or dynamic column window of a larger allocation; A (M x K) and
B (N x K) are K-major tiles in shared memory with an MMA layout (any swizzle mode), each
starting on its swizzle repeat (`transpose_b`, an MN-major B, is only the wgmma variant's).
With cta_group 2 the operands are this CTA's share of the CTA pair's MMA (the PTX convention:
the same descriptors and TMEM address are used in both CTAs): D and A hold M / 2 rows, B holds
N / 2 rows; only the even CTA of the pair may issue, which the kernel must ensure (it is not
checked here).

N: the PTX ISA allows multiples of 8 (cta_group 1) or 16 (cta_group 2) up to 256; for M = 128
with cta_group 1 this variant asks for multiples of 16, as CUTLASS's SM100 MMA atoms do.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import llvm, nvvm

from tilemlir.analysis.threads import single_issuer_reason
from tilemlir.dispatch.registry import Predicate, Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout import LayoutError
from tilemlir.layout.instructions import Tcgen05Mma
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda.descriptors import Tcgen05InstrDescriptor
from tilemlir.lowering.cuda.gemm_async import operands
from tilemlir.lowering.cuda.predicates import operands_in, target_supports

TMEM_COLUMNS = 512


# ------------------------------------------------------------------------------ predicates
@predicate("single_thread")
def single_thread(ctx):
    """Scope "thread", and the enclosing branches let one thread of the CTA through."""
    if ctx.scope != "thread":
        return (f"scope '{ctx.scope}': tcgen05.mma is issued by a single thread, the op needs "
                f"scope 'thread' under a branch that elects one thread")
    return single_issuer_reason(ctx.op)


cta_group = Predicate("cta_group", lambda ctx: None if ctx.attr("cta_group") in (1, 2) else
                      f"cta_group must be 1 or 2, got {ctx.attr('cta_group')}")


def shape_error(m: int, n: int, group: int) -> str | None:
    """Why tcgen05.mma kind::f16 cannot be M x N with this cta_group, or None."""
    reason = Tcgen05Mma.shape_error(m, n, cta_group=group, kind="f16")
    if reason is None and group == 1 and m == 128 and n % 16:
        reason = f"cta_group::1 with M=128 takes N a multiple of 16 (CUTLASS's rule), got N={n}"
    return reason


# ------------------------------------------------------------------------------ the accumulator
def check_accumulator(ctx, m: int, n: int, group: int) -> None:
    """D's TMEM lanes and columns are those tcgen05.mma writes; raises Reject otherwise."""
    d = ctx.buffer("d")
    ref = windows.resolve(ctx.operand("d"))
    mma = Tcgen05Mma(m, n, group)
    expected = mma.accumulator_layout()
    other = [a for a in d.layout.axes() if a not in ("TLane", "TCol")]
    if other:
        raise Reject(f"D's layout {d.layout} places elements on {', '.join(other)}; a TMEM "
                     f"accumulator has only TLane and TCol")
    actual = d.layout.evaluate_all(d.shape)
    want = expected.evaluate_all(d.shape)
    lane = actual.get("TLane", np.zeros(d.shape, np.int64))
    col = actual.get("TCol", np.zeros(d.shape, np.int64))
    lane0, col0 = int(lane[0, 0]), int(col[0, 0])
    bad = np.argwhere((lane - lane0 != want["TLane"]) | (col - col0 != want["TCol"]))
    if len(bad):
        r, c = (int(x) for x in bad[0])
        raise Reject(f"D[{r}, {c}] is at TMEM lane {int(lane[r, c])}, column {int(col[r, c])}, "
                     f"but tcgen05.mma M={m} cta_group::{group} writes it at lane "
                     f"{lane0 + int(want['TLane'][r, c])}, column {col0 + int(want['TCol'][r, c])} "
                     f"(D's layout must be {expected} from its first element)")
    dropped = windows.view_offsets(ref)
    last_col = int(col.max()) + dropped.get("TCol", 0)
    if last_col >= TMEM_COLUMNS:
        raise Reject(f"D reaches TMEM column {last_col}; tensor memory has {TMEM_COLUMNS} columns")
    base_lane = lane0 + dropped.get("TLane", 0)
    allowed = mma.lane_alignments
    if base_lane not in allowed:
        raise Reject(f"D starts at TMEM lane {base_lane}; tcgen05.mma M={m} "
                     f"cta_group::{group} needs lane {' or '.join(map(str, allowed))}")
    if any(v for choices in windows.dynamic_offset_choices(ctx.operand("d"), "TLane")
           for v in choices):
        raise Reject("a dynamic slice offset moves D across TMEM lanes; only columns may move")


# ------------------------------------------------------------------------------ lowering
def _emit(ctx, a: operands.SmemOperand, b: operands.SmemOperand, idesc: int, group: int):
    a_start = operands.start_field(ctx.operand("a"))
    b_start = operands.start_field(ctx.operand("b"))
    d_ref = windows.resolve(ctx.operand("d"))
    d_tmem = llvm.inttoptr(emit.ptr(6), addresses.tmem_address(d_ref, [0, 0]))
    idesc_value = emit.const_i32(idesc)
    kind = ir.Attribute.parse("#nvvm.tcgen05_mma_kind<f16>")
    cta = ir.Attribute.parse(f"#nvvm.cta_group<cta_{group}>")
    accumulate = ctx.operand("accum")
    always = emit.const(1, emit.i1())
    for i, k0 in enumerate(operands.k_steps(a.k)):
        desc_a = operands.descriptor_value(a.descriptor("tcgen05", 0, k0), a_start)
        desc_b = operands.descriptor_value(b.descriptor("tcgen05", 0, k0), b_start)
        nvvm.tcgen05_mma(kind, cta, d_tmem, desc_a, desc_b, idesc_value,
                         accumulate if i == 0 else always)


@predicate("k_major_b")
def k_major_b(ctx):
    """B stored N x K: this variant builds K-major descriptors only."""
    if ctx.attr("transpose_b"):
        return ("transpose_b: B stored K x N (MN-major) is not implemented for tcgen05.mma "
                "(its instruction descriptor's transpose-B bit is not set here)")
    return None


@register("gemm_async", name="tcgen05", priority=10,
          when=[target_supports("tcgen05"), single_thread, cta_group, k_major_b,
                operands_in("shared", "a", "b"), operands_in("tmem", "d"), operands.dtypes])
def lower_tcgen05(ctx):
    """K / 16 tcgen05.mma kind::f16 from shared-memory descriptors into a TMEM accumulator."""
    dims = operands.dims(ctx)
    group = ctx.attr("cta_group")
    m, n = dims.m * group, dims.n
    reason = shape_error(m, n, group)
    if reason:
        raise Reject(reason)
    if dims.b_n * group != n:
        share = "" if group == 1 else f" (its share of the CTA pair's N={n})"
        raise Reject(f"B has {dims.b_n} rows but needs {n // group}{share}")
    a = operands.smem_operand(ctx, "a")
    b = operands.smem_operand(ctx, "b")
    try:
        check_accumulator(ctx, m, n, group)
    except LayoutError as err:
        raise Reject(f"D: {err}") from None
    elem = str(ctx.buffer("a").elem)
    idesc = Tcgen05InstrDescriptor(m=m, n=n, kind="f16", d_type="f32", a_type=elem,
                                   b_type=elem).encode()
    return lambda: _emit(ctx, a, b, idesc, group)
