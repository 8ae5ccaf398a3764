// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize,cse)' | FileCheck %s
// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize,canonicalize,cse)' | FileCheck %s
// tile.iota: each thread writes the coordinates of the elements it holds, as one
// thread-dependent part (digit fields of the thread index, plus the offset) computed once and
// one add of a per-slot constant per register slot.

// The column index of a warpgroup's m64n16 wgmma accumulator in a CTA of two warpgroups: the
// thread index in the warpgroup (t % 128), column 2 (t % 4) + offset, then + 0, 1, 8, 9 for
// the slot pairs.
// CHECK-LABEL: gpu.func @wgmma_columns
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[EIGHT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-DAG: %[[NINE:.*]] = arith.constant 9.000000e+00 : f32
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %c128 : index
// CHECK: %[[Q:.*]] = arith.remui %[[T]], %c4 : index
// CHECK: %[[F:.*]] = arith.muli %[[Q]], %c2 : index
// CHECK: %[[FI:.*]] = arith.index_cast %[[F]] : index to i32
// CHECK: %[[FF:.*]] = arith.sitofp %[[FI]] : i32 to f32
// CHECK: %[[G:.*]] = arith.addf %[[FF]], %arg0 : f32
// CHECK: llvm.store %[[G]], %[[REGS:.*]] : f32, !llvm.ptr
// CHECK: %[[G1:.*]] = arith.addf %[[G]], %[[ONE]] : f32
// CHECK: llvm.store %[[G1]]
// CHECK: llvm.store %[[G]]
// CHECK: llvm.store %[[G1]]
// CHECK: %[[G8:.*]] = arith.addf %[[G]], %[[EIGHT]] : f32
// CHECK: llvm.store %[[G8]]
// CHECK: %[[G9:.*]] = arith.addf %[[G]], %[[NINE]] : f32
// CHECK: llvm.store %[[G9]]
// CHECK: llvm.store %[[G8]]
// CHECK: llvm.store %[[G9]]
// CHECK-NOT: llvm.store
// CHECK-NOT: gpu.thread_id
// CHECK: gpu.return
!Acc = !tile.buf<array<i64: 64, 16>, f32, "local", #tile.layout<"S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @wgmma_columns(%n0: f32) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %acc = "tile.alloc_local"() : () -> !Acc
    "tile.iota"(%acc, %n0) {axis = 1 : i64, scope = "warpgroup"} : (!Acc, f32) -> ()
    gpu.return
  }
}

// -----

// Its row index: t / 4 % 8 + 16 (t / 32), the warp's 16 rows (wid_in_wg), then + 8 for the
// lower half of each m16 block.
// CHECK-LABEL: gpu.func @wgmma_rows
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %c128 : index
// CHECK: %[[L:.*]] = arith.divui %[[T]], %c4 : index
// CHECK: %[[R:.*]] = arith.remui %[[L]], %c8 : index
// CHECK: %[[W:.*]] = arith.divui %[[T]], %c32 : index
// CHECK: %[[W16:.*]] = arith.muli %[[W]], %c16 : index
// CHECK: %[[F:.*]] = arith.addi %[[R]], %[[W16]] : index
// CHECK: arith.sitofp
// CHECK-COUNT-2: llvm.store %[[G:.*]], %{{.*}} : f32, !llvm.ptr
// CHECK: %[[G8:.*]] = arith.addf %[[G]], %{{.*}} : f32
// CHECK-COUNT-2: llvm.store %[[G8]]
// CHECK-COUNT-2: llvm.store %[[G]]
// CHECK-COUNT-2: llvm.store %[[G8]]
// CHECK-NOT: llvm.store
!Acc = !tile.buf<array<i64: 64, 16>, f32, "local", #tile.layout<"S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @wgmma_rows() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %acc = "tile.alloc_local"() : () -> !Acc
    "tile.iota"(%acc) {axis = 0 : i64, scope = "warpgroup"} : (!Acc) -> ()
    gpu.return
  }
}

// -----

// An i32 tile: a warp's m16n8 mma.sync accumulator rows, lane / 4 (one warp: no modulus) plus
// the i32 offset, + 8 for slots 2 and 3.
// CHECK-LABEL: gpu.func @mma_sync_rows_i32
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[R:.*]] = arith.divui %[[TID]], %c4 : index
// CHECK: %[[RI:.*]] = arith.index_cast %[[R]] : index to i32
// CHECK: %[[G:.*]] = arith.addi %[[RI]], %arg0 : i32
// CHECK-COUNT-2: llvm.store %[[G]], %{{.*}} : i32, !llvm.ptr
// CHECK: %[[G8:.*]] = arith.addi %[[G]], %c8_i32 : i32
// CHECK-COUNT-2: llvm.store %[[G8]], %{{.*}} : i32, !llvm.ptr
// CHECK-NOT: llvm.store
!Acc = !tile.buf<array<i64: 16, 8>, i32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @mma_sync_rows_i32(%m0: i32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %acc = "tile.alloc_local"() : () -> !Acc
    "tile.iota"(%acc, %m0) {axis = 0 : i64, scope = "warp"} : (!Acc, i32) -> ()
    gpu.return
  }
}

// -----

// norms.py's CTA-wide row of 2048 (8 consecutive elements per lane, lanes then 4 warps along
// the row, 2 chunks): column 8 (t % 128) - the lane and warp bits are one field - then + 0..7
// and + 1024 + 0..7 per slot.
// CHECK-LABEL: gpu.func @cta_row
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[F:.*]] = arith.muli %[[TID]], %c8 : index
// CHECK: %[[G:.*]] = arith.sitofp
// CHECK: llvm.store %[[G]]
// CHECK-COUNT-15: arith.addf %[[G]]
// CHECK-NOT: arith.addf
!X = !tile.buf<array<i64: 1, 2048>, f32, "local", #tile.layout<"S[(1, 2, 4, 32, 8):(1, 8, 1@warpid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @cta_row() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    "tile.iota"(%x) {axis = 1 : i64, scope = "cta"} : (!X) -> ()
    gpu.return
  }
}

// -----

// A tile no thread axis spreads (every thread its own copy): constants only, the same in every
// thread.
// CHECK-LABEL: gpu.func @private_tile
// CHECK-NOT: gpu.thread_id
// CHECK-DAG: %[[C0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: llvm.store %[[C0]]
// CHECK: llvm.store %[[C1]]
// CHECK: llvm.store %[[C0]]
// CHECK: llvm.store %[[C1]]
// CHECK-NOT: llvm.store
!P = !tile.buf<array<i64: 2, 2>, f32, "local", #tile.layout<"S[(2, 2):(2, 1)]">>
gpu.module @m {
  gpu.func @private_tile() kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !P
    "tile.iota"(%x) {axis = 1 : i64, scope = "thread"} : (!P) -> ()
    gpu.return
  }
}

// -----

// A replicated column vector (an m16n8 accumulator's row_vector layout: lane % 4 holds columns
// 2 (lane % 4) and the next, copied over the 8 lanes of its rows): every lane writes its two.
// CHECK-LABEL: gpu.func @replicated_columns
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[Q:.*]] = arith.remui %[[TID]], %c4 : index
// CHECK: %[[F:.*]] = arith.muli %[[Q]], %c2 : index
// CHECK: %[[G:.*]] = arith.sitofp
// CHECK: llvm.store %[[G]]
// CHECK: %[[G1:.*]] = arith.addf %[[G]]
// CHECK: llvm.store %[[G1]]
// CHECK-NOT: llvm.store
!V = !tile.buf<array<i64: 8>, f32, "local", #tile.layout<"S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]">>
gpu.module @m {
  gpu.func @replicated_columns() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %v = "tile.alloc_local"() : () -> !V
    "tile.iota"(%v) {axis = 0 : i64, scope = "warp"} : (!V) -> ()
    gpu.return
  }
}

// -----

// Two iotas of one signature (dispatched once, the second a replay): each adds its own offset
// to the one thread part (CSE shares it).
// CHECK-LABEL: gpu.func @replayed_offsets
// CHECK: %[[FF:.*]] = arith.sitofp
// CHECK: %[[A:.*]] = arith.addf %[[FF]], %arg0 : f32
// CHECK: llvm.store %[[A]]
// CHECK: %[[B:.*]] = arith.addf %[[FF]], %arg1 : f32
// CHECK: llvm.store %[[B]]
!Acc = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @replayed_offsets(%a: f32, %b: f32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !Acc
    %y = "tile.alloc_local"() : () -> !Acc
    "tile.iota"(%x, %a) {axis = 1 : i64, scope = "warp"} : (!Acc, f32) -> ()
    "tile.iota"(%y, %b) {axis = 1 : i64, scope = "warp"} : (!Acc, f32) -> ()
    gpu.return
  }
}
