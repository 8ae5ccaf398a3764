// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize,canonicalize,cse)' | FileCheck %s
// tile.copy shared -> registers of 16-bit fragments -> nvvm.ldmatrix, four 8x8 matrices per
// instruction where possible; each lane's row address is a thread part built once plus a static
// part per instruction.

// The m16n8k16 A fragment from a plain row-major 16x16 tile: one ldmatrix.x4, lane l supplies
// row l % 16, column 8 * (l / 16); register q of the result fills slots 2q, 2q + 1.
// CHECK-LABEL: gpu.func @a_fragment
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[SMEM:.*]] = llvm.mlir.addressof @__tile_smem : !llvm.ptr<3>
// CHECK-DAG: %[[REGS:.*]] = llvm.alloca {{.*}} x !llvm.array<8 x f16>
// CHECK: %[[LANE:.*]] = gpu.thread_id x
// CHECK: %[[ROW:.*]] = arith.remui %[[LANE]], %[[C16]] : index
// CHECK: %[[ROWOFF:.*]] = arith.muli %[[ROW]], %[[C16]] : index
// CHECK: %[[HALF:.*]] = arith.divui %[[LANE]], %[[C16]] : index
// CHECK: %[[COLOFF:.*]] = arith.muli %[[HALF]], %[[C8]] : index
// CHECK: %[[OFF:.*]] = arith.addi %[[ROWOFF]], %[[COLOFF]] : index
// CHECK: %[[OFF64:.*]] = arith.index_cast %[[OFF]] : index to i64
// CHECK: %[[PTR:.*]] = llvm.getelementptr %[[SMEM]][%[[OFF64]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK: %[[M:.*]] = nvvm.ldmatrix %[[PTR]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: %[[R0:.*]] = llvm.extractvalue %[[M]][0]
// CHECK: %[[V0:.*]] = llvm.bitcast %[[R0]] : i32 to vector<2xf16>
// CHECK: llvm.store %[[V0]], %[[REGS]] {alignment = 2 : i64} : vector<2xf16>, !llvm.ptr
// CHECK: llvm.extractvalue %[[M]][3]
// CHECK: %[[S6:.*]] = llvm.getelementptr %[[REGS]][6] : (!llvm.ptr) -> !llvm.ptr, f16
// CHECK: llvm.store %{{.*}}, %[[S6]]
// CHECK-NOT: nvvm.ldmatrix
// CHECK-NOT: tile.
!Sm = !tile.buf<array<i64: 16, 16>, f16, "shared", #tile.layout<"S[(16, 16):(16, 1)]">>
!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @a_fragment() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %a = "tile.alloc_local"() : () -> !Af
    "tile.copy"(%a, %s) {scope = "warp"} : (!Af, !Sm) -> ()
    gpu.return
  }
}

// -----

// Seed 001's operands: a warp loads a 64x16 A slab (columns 16..31) and a 64x16 slab of B
// stored N x K, both from 128B-swizzled K-major tiles at a warp-dependent row offset. The
// offset (64 rows) is a multiple of the swizzle period, so it is added outside the swizzle; the
// column step inside the atom is an XOR on the address, computed once; the 16-row steps are
// immediate offsets. Four ldmatrix.x4 per slab.
// CHECK-LABEL: gpu.func @seed_slabs
// CHECK-DAG: %[[C4096:.*]] = arith.constant 4096 : index
// CHECK-DAG: %[[C448:.*]] = arith.constant 448 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[X32:.*]] = arith.constant 32 : i64
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %{{.*}} : index
// CHECK: %[[BASE:.*]] = arith.muli %[[WARP]], %[[C4096]] : index
// A: rows (l % 16), chunk l / 16, swizzled once.
// CHECK: %[[LIN:.*]] = arith.addi
// CHECK: %[[SEL:.*]] = arith.andi %[[LIN]], %[[C448]] : index
// CHECK: %[[SH:.*]] = arith.shrui %[[SEL]], %[[C3]] : index
// CHECK: %[[SW:.*]] = arith.xori %[[LIN]], %[[SH]] : index
// CHECK: %[[T:.*]] = arith.addi %[[BASE]], %[[SW]] : index
// CHECK: %[[T64:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK: %[[P:.*]] = llvm.getelementptr %{{.*}}[%[[T64]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr<3> to i64
// CHECK: %[[FLIP:.*]] = arith.xori %[[ADDR]], %[[X32]] : i64
// CHECK: %[[PA:.*]] = llvm.inttoptr %[[FLIP]] : i64 to !llvm.ptr<3>
// CHECK: %[[PA1:.*]] = llvm.getelementptr %[[PA]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// CHECK: %[[PA2:.*]] = llvm.getelementptr %[[PA]][2048] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// CHECK: %[[PA3:.*]] = llvm.getelementptr %[[PA]][3072] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// CHECK: nvvm.ldmatrix %[[PA]] {{.*}}num = 4
// CHECK: nvvm.ldmatrix %[[PA1]] {{.*}}num = 4
// CHECK: nvvm.ldmatrix %[[PA2]] {{.*}}num = 4
// CHECK: nvvm.ldmatrix %[[PA3]] {{.*}}num = 4
// B: its own lane function (matrix 1 is 8 columns on, matrix 2 eight rows down).
// CHECK: llvm.ptrtoint
// CHECK: arith.xori %{{.*}}, %[[X32]] : i64
// CHECK-COUNT-4: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4
// CHECK-NOT: nvvm.ldmatrix
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!Rows = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!Slab = !tile.buf<array<i64: 64, 16>, f16, "shared", #tile.layout<"S[(64, 16):(64, 1)] + {m: 16} o Sw<3,3,3>">>
!Af = !tile.buf<array<i64: 64, 16>, f16, "local", #tile.layout<"S[(4, 2, 8, 2, 4, 2):(8, 2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 64, 16>, f16, "local", #tile.layout<"S[(8, 8, 2, 4, 2):(4, 4@laneid, 2, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @seed_slabs() kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %warp = arith.divui %tid, %c32 : index
    %row0 = arith.muli %warp, %c64 : index
    %as = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %bs = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !Sm
    %ar = "tile.slice"(%as, %row0) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Sm, index) -> !Rows
    %a1 = "tile.slice"(%ar) {static_offsets = array<i64: 0, 16>} : (!Rows) -> !Slab
    %br = "tile.slice"(%bs, %row0) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Sm, index) -> !Rows
    %b1 = "tile.slice"(%br) {static_offsets = array<i64: 0, 16>} : (!Rows) -> !Slab
    %af = "tile.alloc_local"() : () -> !Af
    %bf = "tile.alloc_local"() : () -> !Bf
    "tile.copy"(%af, %a1) {scope = "warp"} : (!Af, !Slab) -> ()
    "tile.copy"(%bf, %b1) {scope = "warp"} : (!Bf, !Slab) -> ()
    gpu.return
  }
}

// -----

// B stored K x N feeds the B fragment along K, across memory rows: ldmatrix.trans, and the
// two 8x8 matrices of one n8 tile make an x2 (upper lanes' addresses wrap, and are ignored).
// CHECK-LABEL: gpu.func @b_trans_x2
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 2 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
// CHECK-NOT: nvvm.ldmatrix
!Sm = !tile.buf<array<i64: 16, 8>, bf16, "shared", #tile.layout<"S[(16, 8):(8, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, bf16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
gpu.module @m {
  gpu.func @b_trans_x2() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %b = "tile.alloc_local"() : () -> !Bf
    "tile.copy"(%b, %s) {scope = "warp"} : (!Bf, !Sm) -> ()
    gpu.return
  }
}

// -----

// One 8x8 matrix (the m16n8k8 B fragment, stored N x K): ldmatrix.x1 returns a plain i32.
// CHECK-LABEL: gpu.func @x1
// CHECK: %[[R:.*]] = nvvm.ldmatrix %{{.*}} {{.*}}layout = #nvvm.mma_layout<row>, num = 1 : i32{{.*}} : (!llvm.ptr<3>) -> i32
// CHECK: llvm.bitcast %[[R]] : i32 to vector<2xf16>
!Sm = !tile.buf<array<i64: 8, 8>, f16, "shared", #tile.layout<"S[(8, 8):(8, 1)]">>
!Bf = !tile.buf<array<i64: 8, 8>, f16, "local", #tile.layout<"S[(8, 4, 2):(4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @x1() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %b = "tile.alloc_local"() : () -> !Bf
    "tile.copy"(%b, %s) {scope = "warp"} : (!Bf, !Sm) -> ()
    gpu.return
  }
}

// -----

// A warpgroup where each warp owns 16 rows of the tile (wid_in_wg in the register layout): the
// warp index is part of the thread function, every warp runs the same single instruction.
// CHECK-LABEL: gpu.func @warpgroup
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %[[C128]] : index
// CHECK: %[[W:.*]] = arith.divui %[[T]], %[[C32]] : index
// CHECK: arith.muli %[[W]], %[[C256]] : index
// CHECK: nvvm.ldmatrix {{.*}}num = 4
// CHECK-NOT: nvvm.ldmatrix
!Sm = !tile.buf<array<i64: 64, 16>, f16, "shared", #tile.layout<"S[(64, 16):(16, 1)]">>
!Af = !tile.buf<array<i64: 64, 16>, f16, "local", #tile.layout<"S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @warpgroup() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %a = "tile.alloc_local"() : () -> !Af
    "tile.copy"(%a, %s) {scope = "warpgroup"} : (!Af, !Sm) -> ()
    gpu.return
  }
}
