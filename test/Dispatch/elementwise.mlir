// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize,canonicalize,cse)' | FileCheck %s
// tile.unary, tile.binary and tile.reduce on a warp's [4, 256] tile (lane l keeps columns
// 8l..8l+7 of each row: 32 register slots).

// fast exp: x * log2(e), then ex2.approx.ftz, per slot; precise exp: n = floor(x log2 e)
// clamped to [-126, 126] by a saturating FMA and a round-down FMA (2^n from its bits shifted
// into the exponent field), x log2 e - n in two FMAs, ex2.approx.ftz of that times 2^n.
// CHECK-LABEL: gpu.func @exp_fast_and_precise
// CHECK-DAG: %[[LO:.*]] = arith.constant 1.92596303E-8 : f32
// CHECK-DAG: %[[C23:.*]] = arith.constant 23 : i32
// CHECK-DAG: %[[BIAS:.*]] = arith.constant 0x4B40007F : f32
// CHECK-DAG: %[[ROUND:.*]] = arith.constant 0x4B400001 : f32
// CHECK-DAG: %[[C252:.*]] = arith.constant 2.520000e+02 : f32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[L2E252:.*]] = arith.constant 0.0057249805 : f32
// CHECK-DAG: %[[L2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[X:.*]] = llvm.load %[[REGS:.*]] : !llvm.ptr -> f32
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %[[L2E]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[T]]) : (f32) -> f32
// CHECK-COUNT-31: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: %[[Y:.*]] = llvm.load %[[REGS]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[S:.*]] = llvm.intr.fma(%[[Y]], %[[L2E252]], %[[HALF]])
// CHECK-NEXT: %[[SAT:.*]] = llvm.call_intrinsic "llvm.nvvm.saturate.f"(%[[S]])
// CHECK-NEXT: %[[J:.*]] = llvm.call_intrinsic "llvm.nvvm.fma.rm.f"(%[[SAT]], %[[C252]], %[[ROUND]])
// CHECK-NEXT: %[[MINUS_N:.*]] = arith.subf %[[BIAS]], %[[J]] : f32
// CHECK-NEXT: %[[JBITS:.*]] = arith.bitcast %[[J]] : f32 to i32
// CHECK-NEXT: %[[POW:.*]] = arith.shli %[[JBITS]], %[[C23]] : i32
// CHECK-NEXT: %[[TWO_N:.*]] = arith.bitcast %[[POW]] : i32 to f32
// CHECK-NEXT: %[[F1:.*]] = llvm.intr.fma(%[[Y]], %[[L2E]], %[[MINUS_N]])
// CHECK-NEXT: %[[F:.*]] = llvm.intr.fma(%[[Y]], %[[LO]], %[[F1]])
// CHECK-NEXT: %[[P:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[F]])
// CHECK-NEXT: arith.mulf %[[P]], %[[TWO_N]] : f32
// CHECK-COUNT-31: llvm.call_intrinsic "llvm.nvvm.fma.rm.f"
// CHECK-NOT: llvm.nvvm.fma.rm.f
!X = !tile.buf<array<i64: 4, 256>, f32, "local", #tile.layout<"S[(4, 32, 8):(8, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @exp_fast_and_precise() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    "tile.unary"(%x, %x) {fn = "exp", fast = true, scope = "warp"} : (!X, !X) -> ()
    "tile.unary"(%x, %x) {fn = "exp", fast = false, scope = "warp"} : (!X, !X) -> ()
    gpu.return
  }
}

// -----

// f16 minus a per-row value held by every lane: neighbouring slots are one vector<2xf16>
// subtraction with the row's value splatted (16 per thread, not 32 scalar ones).
// CHECK-LABEL: gpu.func @sub_row_broadcast_packed
// CHECK: %[[PAIR:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<2xf16>
// CHECK: %[[M:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f16
// CHECK: %[[LO:.*]] = llvm.insertelement %[[M]], %{{.*}} : vector<2xf16>
// CHECK: %[[SPLAT:.*]] = llvm.insertelement %[[M]], %[[LO]]
// CHECK: arith.subf %[[PAIR]], %[[SPLAT]] fastmath<contract> : vector<2xf16>
// CHECK-COUNT-15: arith.subf %{{.*}} : vector<2xf16>
// CHECK-NOT: arith.subf
!H = !tile.buf<array<i64: 4, 256>, f16, "local", #tile.layout<"S[(4, 32, 8):(8, 1@laneid, 1)]">>
!Row = !tile.buf<array<i64: 4, 1>, f16, "local", #tile.layout<"S[(4, 1):(1, 1)]">>
gpu.module @m {
  gpu.func @sub_row_broadcast_packed() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !H
    %m = "tile.alloc_local"() : () -> !Row
    "tile.binary"(%x, %x, %m) {fn = "sub", scope = "warp"} : (!H, !H, !Row) -> ()
    gpu.return
  }
}

// -----

// A row over all 32 lanes: each lane folds its 8 slots (7 adds), then 5 butterfly shuffles;
// 4 rows interleaved.
// CHECK-LABEL: gpu.func @sum_rows_over_lanes
// CHECK-COUNT-28: arith.addf
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32 -> f32
// CHECK-COUNT-4: arith.addf
// CHECK-COUNT-4: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
!X = !tile.buf<array<i64: 4, 256>, f32, "local", #tile.layout<"S[(4, 32, 8):(8, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 4, 1>, f32, "local", #tile.layout<"S[(4, 1):(1, 1)]">>
gpu.module @m {
  gpu.func @sum_rows_over_lanes() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    "tile.reduce"(%s, %x) {fn = "sum", axis = 1 : i64, scope = "warp"} : (!S, !X) -> ()
    gpu.return
  }
}

// -----

// A row over 4 warps: shuffles in each warp, lane 0 of each writes its partial, bar.sync, every
// thread reads the 4 partials, bar.sync (scratch reusable after).
// CHECK-LABEL: gpu.func @max_row_over_warps
// CHECK-COUNT-5: nvvm.shfl.sync bfly
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: arith.maximumf
// CHECK: nvvm.barrier0
!X = !tile.buf<array<i64: 1, 2048>, f32, "local", #tile.layout<"S[(1, 2, 4, 32, 8):(1, 8, 1@warpid, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 1, 1>, f32, "local", #tile.layout<"S[(1, 1):(1, 1)]">>
!W = !tile.buf<array<i64: 4>, f32, "shared", #tile.layout<"S[(4):(1)]">>
gpu.module @m {
  gpu.func @max_row_over_warps() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    %w = "tile.alloc_shared"() {offset = 0 : i64} : () -> !W
    "tile.reduce"(%s, %x, %w) {fn = "max", axis = 1 : i64, scope = "cta"} : (!S, !X, !W) -> ()
    gpu.return
  }
}

// -----

// A bias row added to a warp's m16n8 f32 accumulator: the bias vector holds each column in the
// lanes of the accumulator's column (1@laneid), replicated over the lanes of its rows
// (R[8:4@laneid]), so each thread loads its 2 columns once and adds them to its 4 slots (rows
// r and r + 8 reuse them) with no data leaving the thread. Loading a replicated vector: every
// lane loads (no guard) its 2 columns, 2 (lane % 4) and the next, as one 8-byte load.
// CHECK-LABEL: gpu.func @bias_row_broadcast
// CHECK-NOT: scf.if
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[Q:.*]] = arith.remui %[[T]], %c4
// CHECK: arith.muli %[[Q]], %c2
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
// CHECK-NOT: llvm.load %{{.*}} !llvm.ptr<1>
// CHECK: %[[X0:.*]] = llvm.load %[[ACC:.*]] : !llvm.ptr -> f32
// CHECK: %[[C0:.*]] = llvm.load %[[BIAS:.*]] : !llvm.ptr -> f32
// CHECK: arith.addf %[[X0]], %[[C0]] fastmath<contract> : f32
// CHECK: %[[X1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: %[[C1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: arith.addf %[[X1]], %[[C1]] fastmath<contract> : f32
// CHECK: arith.addf %{{.*}}, %[[C0]] fastmath<contract> : f32
// CHECK: arith.addf %{{.*}}, %[[C1]] fastmath<contract> : f32
// CHECK-NOT: arith.addf
// CHECK: gpu.return
!Acc = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Bias = !tile.buf<array<i64: 8>, f32, "local", #tile.layout<"S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]">>
!G = !tile.buf<array<i64: 8>, f32, "global", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @bias_row_broadcast(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %acc = "tile.alloc_local"() : () -> !Acc
    %bias = "tile.alloc_local"() : () -> !Bias
    "tile.copy"(%bias, %g) {scope = "warp"} : (!Bias, !G) -> ()
    "tile.binary"(%acc, %acc, %bias) {fn = "add", scope = "warp"} : (!Acc, !Acc, !Bias) -> ()
    gpu.return
  }
}

// -----

// Fill and cast of a replicated vector: each holder of a copy works on its own registers (2
// slots: two f16 zeros stored, one f16 -> f32 conversion per slot).
// CHECK-LABEL: gpu.func @replicated_fill_and_cast
// CHECK-COUNT-2: llvm.store %{{.*}} : f16, !llvm.ptr
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: arith.extf
// CHECK: gpu.return
!BiasH = !tile.buf<array<i64: 8>, f16, "local", #tile.layout<"S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]">>
!BiasF = !tile.buf<array<i64: 8>, f32, "local", #tile.layout<"S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]">>
gpu.module @m {
  gpu.func @replicated_fill_and_cast() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %h = "tile.alloc_local"() : () -> !BiasH
    %f = "tile.alloc_local"() : () -> !BiasF
    %zero = arith.constant 0.0 : f16
    "tile.fill"(%h, %zero) {scope = "warp"} : (!BiasH, f16) -> ()
    "tile.cast"(%f, %h) {scope = "warp"} : (!BiasF, !BiasH) -> ()
    gpu.return
  }
}
