// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize,canonicalize,cse)' | FileCheck %s
// tile.copy_async global -> shared -> one cp.async per 16-byte chunk, spread over the scope's
// threads (the chunks of the cooperative copy); commit and wait stay where the kernel put them.

// A 128x64 f16 window at (m, k) into a 128B-swizzled stage: 8 cp.async.cg of 16 bytes per
// thread, the addresses a thread part plus immediate offsets (4096 global / 1024 shared
// elements per round of 16 rows).
// CHECK-LABEL: gpu.func @stage
// CHECK: %[[S:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[S]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// CHECK: %[[G:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK: %[[G1:.*]] = llvm.getelementptr %[[G]][4096] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f16
// CHECK: nvvm.cp.async.shared.global %[[S]], %[[G]], 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.shared.global %[[S1]], %[[G1]], 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-COUNT-6: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
!A = !tile.buf<array<i64: 512, 256>, f16, "global", #tile.layout<"S[(512, 256):(256, 1)]">>
!W = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(256, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m {
  gpu.func @stage(%p: !llvm.ptr, %mt: index, %kt: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %m = arith.muli %mt, %c128 : index
    %k = arith.muli %kt, %c64 : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a, %m, %k) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} : (!A, index, index) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy_async"(%s, %w) {scope = "cta"} : (!Sm, !W) -> ()
    "tile.async_commit"() {kind = "cp_async"} : () -> ()
    "tile.async_wait"() {kind = "cp_async", pending = 0 : i64} : () -> ()
    gpu.return
  }
}

// -----

// Rows of 4 f16 (8 bytes): .ca, the only cache mode for 8-byte cp.async; a warp, one round.
// CHECK-LABEL: gpu.func @eight_bytes
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 8, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NOT: nvvm.cp.async.shared.global
!G = !tile.buf<array<i64: 32, 4>, f16, "global", #tile.layout<"S[(32, 4):(4, 1)]">>
!Sm = !tile.buf<array<i64: 32, 4>, f16, "shared", #tile.layout<"S[(32, 4):(8, 1)]">>
gpu.module @m {
  gpu.func @eight_bytes(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy_async"(%s, %g) {scope = "warp"} : (!Sm, !G) -> ()
    gpu.return
  }
}

// -----

// A multi-stage buffer: the stage is a dynamic row offset (a multiple of the 128-row stage, so
// of the swizzle period): one add per stage on the hoisted thread part.
// CHECK-LABEL: gpu.func @stages
// CHECK-DAG: %[[C8192:.*]] = arith.constant 8192 : index
// CHECK: %[[BASE:.*]] = arith.muli %{{.*}}, %[[C8192]] : index
// CHECK: %[[T:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK: %[[T64:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK: %[[S:.*]] = llvm.getelementptr %{{.*}}[%[[T64]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK: llvm.getelementptr %[[S]][1024]
// CHECK-COUNT-8: nvvm.cp.async.shared.global
!A = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 384, 64>, f16, "shared", #tile.layout<"S[(384, 64):(64, 1)] o Sw<3,3,3>">>
!St = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m {
  gpu.func @stages(%p: !llvm.ptr, %i: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c3 = arith.constant 3 : index
    %c128 = arith.constant 128 : index
    %stage = arith.remui %i, %c3 : index
    %row = arith.muli %stage, %c128 : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %st = "tile.slice"(%s, %row) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Sm, index) -> !St
    "tile.copy_async"(%st, %a) {scope = "cta"} : (!St, !A) -> ()
    gpu.return
  }
}
