// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize,cse)' | FileCheck %s
// tile.reduce at scope "warpgroup" with rows over the 4 warps of a warpgroup (variant
// cross_warp): the warpgroups combine their partials at once, each through its own window of
// one shared buffer (red[wg, :]) and on its own named barrier, bar.sync 15 - wg, 128.

// A warp-specialized CTA of 3 warpgroups: warpgroup 0 syncs on its own barrier 1, warpgroups 1
// and 2 each sum their 2 rows of 1024 (8 consecutive elements per lane and row). Partial (row
// f, warp w) of consumer c goes to red[c, 4 f + w]: lane 0 of each warp writes at 8 c + w and
// 8 c + w + 4, every thread reads 8 c + 0..7; both barriers are bar.sync 15 - wg, 128 (no
// bar.sync 0, which would wait for warpgroup 0 too).
// CHECK-LABEL: gpu.func @consumers_sum_rows
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[WG:.*]] = arith.divui %[[T]], %c128 : index
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: %[[C:.*]] = arith.subi %[[WG]], %c1 : index
// CHECK-COUNT-10: nvvm.shfl.sync bfly
// CHECK: %[[TW:.*]] = arith.remui %[[T]], %c128 : index
// CHECK: %[[WIN:.*]] = arith.muli %[[C]], %c8 : index
// CHECK: %[[WARP:.*]] = arith.divui %[[TW]], %c32 : index
// CHECK: %[[MINE:.*]] = arith.addi %[[WIN]], %[[WARP]] : index
// CHECK: %[[MINE64:.*]] = arith.index_cast %[[MINE]] : index to i64
// CHECK: %[[P0:.*]] = llvm.getelementptr %{{.*}}[%[[MINE64]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[P0]][4] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
// CHECK: %[[LANE:.*]] = arith.andi %[[TW]], %c31 : index
// CHECK: %[[ID0:.*]] = arith.subi %c15, %[[WG]] : index
// CHECK: %[[ID:.*]] = arith.index_cast %[[ID0]] : index to i32
// CHECK: scf.if
// CHECK-NEXT: llvm.store %{{.*}}, %[[P0]] : f32, !llvm.ptr<3>
// CHECK-NEXT: llvm.store %{{.*}}, %[[P1]] : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// CHECK: %[[WIN64:.*]] = arith.index_cast %[[WIN]] : index to i64
// CHECK: llvm.getelementptr %{{.*}}[%[[WIN64]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-COUNT-3: arith.addf
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-COUNT-3: arith.addf
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!Red = !tile.buf<array<i64: 2, 8>, f32, "shared", #tile.layout<"S[(2, 8):(8, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @consumers_sum_rows() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %wg = arith.divui %tid, %c128 : index
    %red = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Red
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    %producer = arith.cmpi eq, %wg, %c0 : index
    scf.if %producer {
      %b1 = arith.constant 1 : i32
      "tile.named_barrier"(%b1) {threads = 128 : i64} : (i32) -> ()
    } else {
      %c = arith.subi %wg, %c1 : index
      %w = "tile.slice"(%red, %c) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Red, index) -> !W
      "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    }
    gpu.return
  }
}

// -----

// Both warpgroups of a 256-thread CTA take the row max of their own rows, then sync on their
// own barrier 15 - wg with 128 threads as well (the same threads on the same id: no clash).
// Rows of 2048 in two chunks per lane: slots 0-7 and 8-15 fold into row 0, 16-31 into row 1.
// CHECK-LABEL: gpu.func @both_warpgroups_max_rows
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[WG:.*]] = arith.divui %[[T]], %c128 : index
// CHECK-COUNT-10: nvvm.shfl.sync bfly
// CHECK: %[[WIN:.*]] = arith.muli %[[WG]], %c8 : index
// CHECK: %[[ID0:.*]] = arith.subi %c15, %[[WG]] : index
// CHECK: %[[ID:.*]] = arith.index_cast %[[ID0]] : index to i32
// CHECK: scf.if
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// CHECK-COUNT-6: arith.maximumf
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-NOT: nvvm.barrier0
!X = !tile.buf<array<i64: 2, 2048>, f32, "local", #tile.layout<"S[(2, 2, 4, 32, 8):(16, 8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!Red = !tile.buf<array<i64: 2, 8>, f32, "shared", #tile.layout<"S[(2, 8):(8, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @both_warpgroups_max_rows() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %tid = gpu.thread_id x
    %c128 = arith.constant 128 : index
    %c15 = arith.constant 15 : index
    %wg = arith.divui %tid, %c128 : index
    %red = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Red
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    %w = "tile.slice"(%red, %wg) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Red, index) -> !W
    "tile.reduce"(%s, %x, %w) {fn = "max", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    %own = arith.subi %c15, %wg : index
    %own32 = arith.index_cast %own : index to i32
    "tile.named_barrier"(%own32) {threads = 128 : i64} : (i32) -> ()
    gpu.return
  }
}

// -----

// A CTA of one warpgroup: its barrier is the constant 15, and scratch needs no window.
// CHECK-LABEL: gpu.func @one_warpgroup
// CHECK-NOT: arith.divui %{{.*}}, %c128
// CHECK: nvvm.barrier id = %c15_i32 number_of_threads = %c128_i32
// CHECK: nvvm.barrier id = %c15_i32 number_of_threads = %c128_i32
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @one_warpgroup() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %w = "tile.alloc_shared"() {offset = 0 : i64} : () -> !W
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    "tile.reduce"(%s, %x, %w) {fn = "min", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    gpu.return
  }
}

// -----

// Rows within one warp at warpgroup scope (warp_shuffle: each row over 8 lanes, 3 butterfly
// steps for each of a thread's 4 rows; no scratch, no barrier), and whole rows in each thread
// (thread).
// CHECK-LABEL: gpu.func @warpgroup_rows_in_a_warp_or_a_thread
// CHECK-COUNT-12: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
!X = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 4, 4, 8, 8):(1@wid_in_wg, 8@laneid, 8, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 64, 1>, f32, "local", #tile.layout<"S[(4, 4, 4, 1):(1@wid_in_wg, 8@laneid, 1, 1)] R[(8):(1@laneid)]">>
!Y = !tile.buf<array<i64: 128, 8>, f32, "local", #tile.layout<"S[(128, 8):(1@tid_in_wg, 1)]">>
!T = !tile.buf<array<i64: 128, 1>, f32, "local", #tile.layout<"S[(128, 1):(1@tid_in_wg, 1)]">>
gpu.module @m {
  gpu.func @warpgroup_rows_in_a_warp_or_a_thread() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    %y = "tile.alloc_local"() : () -> !Y
    %t = "tile.alloc_local"() : () -> !T
    "tile.reduce"(%s, %x) {fn = "sum", axis = 1 : i64, scope = "warpgroup"} : (!S, !X) -> ()
    "tile.reduce"(%t, %y) {fn = "max", axis = 1 : i64, scope = "warpgroup"} : (!T, !Y) -> ()
    gpu.return
  }
}
