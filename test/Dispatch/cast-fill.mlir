// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize,canonicalize,cse)' | FileCheck %s
// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_75},tile-materialize,canonicalize,cse)' | FileCheck %s --check-prefix=SM75
// tile.cast in registers (packed f32x2 conversions on sm_80+) and tile.fill.

// f32 -> f16 over the mma accumulator layout: slots (0, 1) -> (0, 1) and (2, 3) -> (2, 3), two
// packed conversions (the high element first, as cvt.rn.f16x2.f32 takes them).
// CHECK-LABEL: gpu.func @f32_to_f16
// CHECK-DAG: %[[SRC:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x f32>
// CHECK-DAG: %[[DST:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x f16>
// CHECK: %[[LO:.*]] = llvm.load %[[SRC]] : !llvm.ptr -> f32
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[SRC]][1]
// CHECK: %[[HI:.*]] = llvm.load %[[P1]] : !llvm.ptr -> f32
// CHECK: %[[H:.*]] = nvvm.convert.f32x2.to.f16x2 %[[HI]], %[[LO]] {rnd = #nvvm.fp_rnd_mode<rn>} : vector<2xf16>
// CHECK: llvm.store %[[H]], %[[DST]] {alignment = 2 : i64} : vector<2xf16>, !llvm.ptr
// CHECK: nvvm.convert.f32x2.to.f16x2
// CHECK-NOT: nvvm.convert
// CHECK-NOT: arith.truncf
// SM75-LABEL: gpu.func @f32_to_f16
// SM75-NOT: nvvm.convert
// SM75-COUNT-4: arith.truncf %{{.*}} : f32 to f16
!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!D16 = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @f32_to_f16() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_local"() : () -> !D32
    %d = "tile.alloc_local"() : () -> !D16
    "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()
    gpu.return
  }
}

// -----

// f32 -> bf16: cvt.rn.bf16x2.f32.
// CHECK-LABEL: gpu.func @f32_to_bf16
// CHECK-COUNT-2: nvvm.convert.f32x2.to.bf16x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>} : vector<2xbf16>
!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Db = !tile.buf<array<i64: 16, 8>, bf16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @f32_to_bf16() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_local"() : () -> !D32
    %d = "tile.alloc_local"() : () -> !Db
    "tile.cast"(%d, %s) {scope = "warp"} : (!Db, !D32) -> ()
    gpu.return
  }
}

// -----

// f16 -> f32 widens one element at a time; here the destination keeps the two row halves in
// the other slot order (src slot 1 -> dst slot 2), which the per-slot mapping follows.
// CHECK-LABEL: gpu.func @widen_reordered
// CHECK-DAG: %[[SRC:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x f16>
// CHECK-DAG: %[[DST:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x f32>
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[SRC]][1]
// CHECK: %[[V1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> f16
// CHECK: %[[W1:.*]] = arith.extf %[[V1]] : f16 to f32
// CHECK: %[[D2:.*]] = llvm.getelementptr %[[DST]][2]
// CHECK: llvm.store %[[W1]], %[[D2]] : f32, !llvm.ptr
// CHECK-COUNT-2: arith.extf
// CHECK-NOT: arith.extf
!S16 = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(1, 4@laneid, 1@laneid, 2)]">>
gpu.module @m {
  gpu.func @widen_reordered() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_local"() : () -> !S16
    %d = "tile.alloc_local"() : () -> !D32
    "tile.cast"(%d, %s) {scope = "warp"} : (!D32, !S16) -> ()
    gpu.return
  }
}

// -----

// fill: registers slot by slot; a shared tile cooperatively in 16-byte splat stores (the
// swizzled thread part once, 1024 elements per round); a global tile by one thread alone.
// CHECK-LABEL: gpu.func @fills
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ACC:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x f32>
// CHECK: llvm.store %[[ZERO]], %[[ACC]] : f32, !llvm.ptr
// CHECK-COUNT-3: llvm.store %[[ZERO]], %{{.*}} : f32, !llvm.ptr
// CHECK-COUNT-7: llvm.insertelement
// CHECK: %[[SPLAT:.*]] = llvm.insertelement
// CHECK: %[[S:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[S]][1024]
// CHECK: llvm.store %[[SPLAT]], %[[S]] {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK: llvm.store %[[SPLAT]], %[[S1]] {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK-COUNT-6: llvm.store %[[SPLAT]], %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
!Acc = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!G = !tile.buf<array<i64: 4, 8>, f32, "global", #tile.layout<"S[(4, 8):(8, 1)]">>
gpu.module @m {
  gpu.func @fills(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %zero = arith.constant 0.0 : f32
    %zero16 = arith.constant 0.0 : f16
    %acc = "tile.alloc_local"() : () -> !Acc
    "tile.fill"(%acc, %zero) {scope = "warp"} : (!Acc, f32) -> ()
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.fill"(%s, %zero16) {scope = "cta"} : (!Sm, f16) -> ()
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    "tile.fill"(%g, %zero) {scope = "thread"} : (!G, f32) -> ()
    gpu.return
  }
}
