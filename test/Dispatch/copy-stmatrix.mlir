// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize,cse)' | FileCheck %s
// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize,canonicalize,cse)' | FileCheck %s --check-prefix=SM80
// tile.copy registers -> shared of 16-bit fragments -> nvvm.stmatrix on sm_90+ (the mirror of
// ldmatrix); on sm_80, which lacks it, the vector copy takes the op.

// A 16x16 fragment (the mma A layout) into a row-major tile: one stmatrix.x4; register q is
// slots 2q, 2q + 1 read as one i32.
// CHECK-LABEL: gpu.func @x4
// CHECK-DAG: %[[REGS:.*]] = llvm.alloca {{.*}} x !llvm.array<8 x f16>
// CHECK: %[[LANE:.*]] = gpu.thread_id x
// CHECK: %[[PTR:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK: %[[V0:.*]] = llvm.load %[[REGS]] {alignment = 2 : i64} : !llvm.ptr -> vector<2xf16>
// CHECK: %[[W0:.*]] = llvm.bitcast %[[V0]] : vector<2xf16> to i32
// CHECK: %[[S2:.*]] = llvm.getelementptr %[[REGS]][2] : (!llvm.ptr) -> !llvm.ptr, f16
// CHECK: %[[V1:.*]] = llvm.load %[[S2]]
// CHECK: %[[W1:.*]] = llvm.bitcast %[[V1]]
// CHECK: %[[W2:.*]] = llvm.bitcast
// CHECK: %[[W3:.*]] = llvm.bitcast
// CHECK: nvvm.stmatrix %[[PTR]], %[[W0]], %[[W1]], %[[W2]], %[[W3]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// CHECK-NOT: nvvm.stmatrix
// SM80-LABEL: gpu.func @x4
// SM80-NOT: nvvm.stmatrix
// SM80: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
!Sm = !tile.buf<array<i64: 16, 16>, f16, "shared", #tile.layout<"S[(16, 16):(16, 1)]">>
!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @x4() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %a = "tile.alloc_local"() : () -> !Af
    "tile.copy"(%s, %a) {scope = "warp"} : (!Sm, !Af) -> ()
    gpu.return
  }
}

// -----

// Into a 128B-swizzled tile at a warp-dependent row offset: the column step is an XOR on the
// address, the 16-row steps immediate offsets, as for ldmatrix.
// CHECK-LABEL: gpu.func @swizzled
// CHECK: llvm.ptrtoint
// CHECK: %[[P:.*]] = llvm.inttoptr
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[P]][1024]
// CHECK: nvvm.stmatrix %[[P]], {{.*}}layout = #nvvm.mma_layout<row>
// CHECK: nvvm.stmatrix %[[P1]],
// CHECK-NOT: nvvm.stmatrix
!Sm = !tile.buf<array<i64: 128, 64>, bf16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!Rows = !tile.buf<array<i64: 32, 64>, bf16, "shared", #tile.layout<"S[(32, 64):(64, 1)] o Sw<3,3,3>">>
!Slab = !tile.buf<array<i64: 32, 16>, bf16, "shared", #tile.layout<"S[(32, 16):(64, 1)] + {m: 32} o Sw<3,3,3>">>
!Af = !tile.buf<array<i64: 32, 16>, bf16, "local", #tile.layout<"S[(2, 2, 8, 2, 4, 2):(8, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @swizzled() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %warp = arith.divui %tid, %c32 : index
    %row0 = arith.muli %warp, %c32 : index
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %r = "tile.slice"(%s, %row0) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Sm, index) -> !Rows
    %k = "tile.slice"(%r) {static_offsets = array<i64: 0, 32>} : (!Rows) -> !Slab
    %a = "tile.alloc_local"() : () -> !Af
    "tile.copy"(%k, %a) {scope = "warp"} : (!Slab, !Af) -> ()
    gpu.return
  }
}

// -----

// A 16x8 B fragment into a K x N tile: the fragment runs along memory columns, so .trans, and
// its two matrices make an x2.
// CHECK-LABEL: gpu.func @trans_x2
// CHECK: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32
!Sm = !tile.buf<array<i64: 16, 8>, f16, "shared", #tile.layout<"S[(16, 8):(8, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
gpu.module @m {
  gpu.func @trans_x2() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %b = "tile.alloc_local"() : () -> !Bf
    "tile.copy"(%s, %b) {scope = "warp"} : (!Sm, !Bf) -> ()
    gpu.return
  }
}
