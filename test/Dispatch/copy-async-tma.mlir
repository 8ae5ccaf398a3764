// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize,cse)' | FileCheck %s
// tile.copy_async by TMA: loads (global -> shared, completing on an mbarrier) and stores
// (shared -> global, in bulk groups). The kernel gains one tensor-map parameter per (buffer,
// box, swizzle), recorded in tile.tensor_maps; coordinates are innermost first.

// A 128x64 f16 window at (m, k) into a 128B-swizzled stage of a 2-stage ring: one box, the
// stage a dynamic offset; the map is appended as %arg3 and recorded with its box and swizzle.
// CHECK-LABEL: gpu.func @load
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: index, %{{.*}}: index, %[[MAP:.*]]: !llvm.ptr)
// CHECK-SAME: tile.tensor_maps = [{arg = 3 : i64, box = array<i64: 128, 64>, param = 0 : i64, swizzle = 128 : i64}]
// CHECK: %[[BAR:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i64
// CHECK: %[[STAGE:.*]] = arith.muli %{{.*}}, %c8192 : index
// CHECK: %[[M:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[DST:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %[[MAP]], %[[BAR]], box[%c64_i32, %[[M]]]
// CHECK-NOT: nvvm.cp.async.bulk.tensor
!A = !tile.buf<array<i64: 512, 256>, f16, "global", #tile.layout<"S[(512, 256):(256, 1)]">>
!W = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(256, 1)]">>
!Ring = !tile.buf<array<i64: 256, 64>, f16, "shared", #tile.layout<"S[(256, 64):(64, 1)] o Sw<3,3,3>">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!Bar = !tile.buf<array<i64: 2>, i64, "shared", #tile.layout<"S[2:1]">>
gpu.module @m {
  gpu.func @load(%p: !llvm.ptr, %m: index, %s: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %c0_i32 = arith.constant 0 : i32
    %tid = gpu.thread_id x
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a, %m) {static_offsets = array<i64: -9223372036854775808, 64>} : (!A, index) -> !W
    %bars = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Bar
    %ring = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !Ring
    %row = arith.muli %s, %c128 : index
    %stage = "tile.slice"(%ring, %row) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Ring, index) -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      %bar = "tile.addr"(%bars, %s) : (!Bar, index) -> !llvm.ptr
      "tile.copy_async"(%stage, %w, %bar) {scope = "thread"} : (!Sm, !W, !llvm.ptr) -> ()
    }
    gpu.return
  }
}

// -----

// A 64x128 f16 tile, 128B swizzle: two boxes of 64 columns (the MMA layout puts them side by
// side, 8 KiB apart), stored at (m, n) and (m, n + 64); then the bulk group is committed and
// waited for (.read: the shared source may be reused).
// CHECK-LABEL: gpu.func @store
// CHECK-SAME: tile.tensor_maps = [{arg = 3 : i64, box = array<i64: 64, 64>, param = 0 : i64, swizzle = 128 : i64}]
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %arg3, %{{.*}}, box[%{{.*}}, %{{.*}}]
// CHECK: %[[SECOND:.*]] = llvm.getelementptr %{{.*}}[4096] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %arg3, %[[SECOND]], box[
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
!D = !tile.buf<array<i64: 1000, 1000>, f16, "global", #tile.layout<"S[(1000, 1000):(1000, 1)]">>
!Dw = !tile.buf<array<i64: 64, 128>, f16, "global", #tile.layout<"S[(64, 128):(1000, 1)]">>
!C = !tile.buf<array<i64: 64, 128>, f16, "shared", #tile.layout<"S[(64, 2, 64):(64, 4096, 1)] o Sw<3,3,3>">>
gpu.module @m {
  gpu.func @store(%p: !llvm.ptr, %m: index, %n: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %d = "tile.global"(%p) : (!llvm.ptr) -> !D
    %w = "tile.slice"(%d, %m, %n) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} : (!D, index, index) -> !Dw
    %c = "tile.alloc_shared"() {offset = 0 : i64} : () -> !C
    "tile.copy_async"(%w, %c) {scope = "thread"} : (!Dw, !C) -> ()
    "tile.async_commit"() {kind = "bulk"} : () -> ()
    "tile.async_wait"() {kind = "bulk", pending = 0 : i64} : () -> ()
    gpu.return
  }
}

// -----

// Warp specialization: register budgets and a barrier among one warpgroup.
// CHECK-LABEL: gpu.func @roles
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
gpu.module @m {
  gpu.func @roles(%wg: i32) kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
    "tile.setmaxnreg"() {action = "decrease", count = 40 : i64} : () -> ()
    "tile.setmaxnreg"() {action = "increase", count = 232 : i64} : () -> ()
    "tile.named_barrier"(%wg) {threads = 128 : i64} : (i32) -> ()
    gpu.return
  }
}
