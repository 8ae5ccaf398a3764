"""copy registers -> shared with stmatrix (sm_90+): the mirror of ldmatrix.py.

Before (a warp stores its 16x16 f16 tile, the m16n8k16 A-fragment shape, into a row-major
shared tile):

    "tile.copy"(%c_smem, %c_frag) {scope = "warp"}
        : (!tile.buf<[16, 16], f16, "shared", S[(16, 16):(16, 1)]>,
           !tile.buf<[16, 16], f16, "local", S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]>)
        -> ()

After: lane l supplies the address of row l % 8 of matrix l / 8 (a thread part built once plus
a static part per instruction), and register q carries register slots 2q, 2q + 1:

    %t = (%l % 16) * 16 + (%l / 16) * 8
    %v0 = llvm.load %c_regs[0] : vector<2xf16> ... bitcast to i32   (x4: %v0 .. %v3)
    nvvm.stmatrix %smem[%t], %v0, %v1, %v2, %v3
        {layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>,
         eltType = #nvvm.ld_st_matrix_elt_type<b16>} : !llvm.ptr<3>, i32, i32, i32, i32

The register layout must be made of 8x8 matrices exactly as for ldmatrix (see ldmatrix.py),
each row 8 contiguous, 16-byte aligned elements in shared memory; .trans, and x4 / x2 / x1
grouping, as there. stmatrix exists from sm_90 on: on older chips the target predicate rejects
the op (LLVM would abort on the instruction), and the vector or elementwise copy takes over.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import nvvm

from tilemlir.dispatch.registry import predicate, register
from tilemlir.ir import emit, windows
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda.copy.ldmatrix import (SHAPE, MatrixPlan, b16_elements,
                                                  instruction_layout, matrix_pointers, plan)
from tilemlir.lowering.cuda.predicates import (full_active_lanes, no_replica,
                                               same_shape_and_type, target_supports)


@predicate("registers_to_shared")
def registers_to_shared(ctx):
    if ctx.buffer("src").scope == "local" and ctx.buffer("dst").scope == "shared":
        return None
    return (f"stmatrix copies registers to shared memory; src is in "
            f"{ctx.buffer('src').scope}, dst in {ctx.buffer('dst').scope}")


def _emit(ctx, p: MatrixPlan):
    reg = windows.resolve(ctx.operand("src"))
    pair = emit.vector_type(2, reg.type.elem)
    reg_base = addresses.storage(reg)
    shape = ir.Attribute.parse(SHAPE)
    for inst, ptr in zip(p.instructions, matrix_pointers(ctx, p, "dst")):
        words = [emit.bitcast(emit.i32(), emit.load(pair, addresses.slot_pointer(reg, m.slot,
                                                                                reg_base),
                                                    align=2))
                 for m in inst.matrices]
        nvvm.stmatrix(ptr, words, instruction_layout(inst), shape, nvvm.LdStMatrixEltType.B16)


@register("copy", name="stmatrix", priority=20,
          when=[registers_to_shared, same_shape_and_type, b16_elements, full_active_lanes,
                no_replica, target_supports("stmatrix")])
def lower_stmatrix(ctx):
    """stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: 8x8 matrices per instruction."""
    p = plan(ctx, "src", "dst")
    return lambda: _emit(ctx, p)
