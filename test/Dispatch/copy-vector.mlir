// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize,canonicalize,cse)' | FileCheck %s
// Vectorized copies: registers <-> memory (vector_registers) and memory <-> memory (cooperative),
// up to 16 bytes per access, the thread part of every address built once.

// The m16n8 f32 accumulator to global memory: slots (0, 1) and (2, 3) are two consecutive,
// 8-byte aligned elements of a row, so two 8-byte stores, the second 8 rows (64 elements) on.
// Lane l starts at row l / 4, column 2 (l % 4): 8 (l / 4) + 2 (l % 4) = 2 l, one multiply.
// CHECK-LABEL: gpu.func @accumulator
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[LANE:.*]] = gpu.thread_id x
// CHECK: %[[OFF:.*]] = arith.muli %[[LANE]], %[[C2]] : index
// CHECK: %[[OFF64:.*]] = arith.index_cast %[[OFF]] : index to i64
// CHECK: %[[P:.*]] = llvm.getelementptr %{{.*}}[%[[OFF64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[P8:.*]] = llvm.getelementptr %[[P]][64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
// CHECK: %[[V0:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<2xf32>
// CHECK: llvm.store %[[V0]], %[[P]] {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK: %[[V1:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<2xf32>
// CHECK: llvm.store %[[V1]], %[[P8]] {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
!Dg = !tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @accumulator(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !Dg
    %d = "tile.alloc_local"() : () -> !Df
    "tile.copy"(%g, %d) {scope = "warp"} : (!Dg, !Df) -> ()
    gpu.return
  }
}

// -----

// Thread t of a warpgroup holds row t of a 128x64 f16 tile (the TMEM read-out layout of seed
// 000): eight 16-byte loads per thread, 8 elements apart.
// CHECK-LABEL: gpu.func @row_per_thread
// CHECK: %[[P:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK: %[[P7:.*]] = llvm.getelementptr %[[P]][56] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f16
// CHECK: %[[V0:.*]] = llvm.load %[[P]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK: llvm.store %[[V0]], %{{.*}} {alignment = 2 : i64} : vector<8xf16>, !llvm.ptr
// CHECK-COUNT-6: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK: llvm.load %[[P7]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK-NOT: llvm.load
!G = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!R = !tile.buf<array<i64: 128, 64>, f16, "local", #tile.layout<"S[(128, 64):(1@tid_in_wg, 1)]">>
gpu.module @m {
  gpu.func @row_per_thread(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %r = "tile.alloc_local"() : () -> !R
    "tile.copy"(%r, %g) {scope = "warpgroup"} : (!R, !G) -> ()
    gpu.return
  }
}

// -----

// The B fragment from a K x N row-major tile: its register pairs run down a column, so the
// copy falls back to single elements (still with the hoisted thread part).
// CHECK-LABEL: gpu.func @scalar_fallback
// CHECK-COUNT-4: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr<1> -> f16
// CHECK-NOT: vector<
!G = !tile.buf<array<i64: 16, 8>, f16, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
gpu.module @m {
  gpu.func @scalar_fallback(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %b = "tile.alloc_local"() : () -> !Bf
    "tile.copy"(%b, %g) {scope = "warp"} : (!Bf, !G) -> ()
    gpu.return
  }
}

// -----

// Seed 000's Tx.cta.copy(Asmem[:, :], A[m:m+128, k:k+64]): 128 threads, 16-byte chunks, thread
// t takes chunks t, t + 128, ... (8 rounds, rows 16 apart). Global: dynamic base m * 256 + k
// plus the thread part, 16 rows = 4096 elements per round; shared: the swizzled thread part
// once, 1024 elements per round. All loads are issued before the stores.
// CHECK-LABEL: gpu.func @cooperative
// CHECK-DAG: %[[C32768:.*]] = arith.constant 32768 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[K:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[T8:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK: arith.xori %[[T8]]
// CHECK: %[[S:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[S]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// CHECK: %[[S7:.*]] = llvm.getelementptr %[[S]][7168] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// CHECK: %[[M:.*]] = arith.muli %{{.*}}, %[[C32768]] : index
// CHECK: %[[MK:.*]] = arith.addi %[[M]], %[[K]] : index
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %[[C256]] : index
// CHECK: %[[TP:.*]] = arith.addi %{{.*}}, %[[ROW]] : index
// CHECK: %[[OFF:.*]] = arith.addi %[[MK]], %[[TP]] : index
// CHECK: %[[OFF64:.*]] = arith.index_cast %[[OFF]] : index to i64
// CHECK: %[[G:.*]] = llvm.getelementptr %{{.*}}[%[[OFF64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK: %[[G1:.*]] = llvm.getelementptr %[[G]][4096] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f16
// CHECK: %[[G7:.*]] = llvm.getelementptr %[[G]][28672] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f16
// CHECK: %[[V0:.*]] = llvm.load %[[G]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK: %[[V1:.*]] = llvm.load %[[G1]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK: %[[V7:.*]] = llvm.load %[[G7]] {alignment = 16 : i64}
// CHECK: llvm.store %[[V0]], %[[S]] {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK: llvm.store %[[V1]], %[[S1]] {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK: llvm.store %[[V7]], %[[S7]] {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
!A = !tile.buf<array<i64: 512, 256>, f16, "global", #tile.layout<"S[(512, 256):(256, 1)]">>
!W = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(256, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m {
  gpu.func @cooperative(%p: !llvm.ptr, %kt: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %bid = gpu.block_id x
    %m = arith.muli %bid, %c128 : index
    %k = arith.muli %kt, %c64 : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a, %m, %k) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} : (!A, index, index) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy"(%s, %w) {scope = "cta"} : (!Sm, !W) -> ()
    gpu.return
  }
}

// -----

// A column offset only known to be a multiple of 4 elements caps the accesses at 8 bytes.
// CHECK-LABEL: gpu.func @narrower
// CHECK-COUNT-4: llvm.load {{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<4xf16>
// CHECK-COUNT-4: llvm.store {{.*}} {alignment = 8 : i64} : vector<4xf16>, !llvm.ptr<3>
!A = !tile.buf<array<i64: 32, 64>, f16, "global", #tile.layout<"S[(32, 64):(64, 1)]">>
!W = !tile.buf<array<i64: 32, 16>, f16, "global", #tile.layout<"S[(32, 16):(64, 1)]">>
!Sm = !tile.buf<array<i64: 32, 16>, f16, "shared", #tile.layout<"S[(32, 16):(16, 1)]">>
gpu.module @m {
  gpu.func @narrower(%p: !llvm.ptr, %j: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c4 = arith.constant 4 : index
    %k = arith.muli %j, %c4 : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a, %k) {static_offsets = array<i64: 0, -9223372036854775808>} : (!A, index) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy"(%s, %w) {scope = "warp"} : (!Sm, !W) -> ()
    gpu.return
  }
}

// -----

// 128 chunks for 256 threads: only the first 128 take part, under a guard.
// CHECK-LABEL: gpu.func @partial
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[T]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> vector<8xf16>
// CHECK: llvm.store {{.*}} : vector<8xf16>, !llvm.ptr<1>
!G = !tile.buf<array<i64: 16, 64>, f16, "global", #tile.layout<"S[(16, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 16, 64>, f16, "shared", #tile.layout<"S[(16, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m {
  gpu.func @partial(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy"(%g, %s) {scope = "cta"} : (!G, !Sm) -> ()
    gpu.return
  }
}
