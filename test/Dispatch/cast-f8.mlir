// tile.cast to and from the 8-bit floats: two elements per cvt, f8 registers held as i8 bits.
//
// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize,cse)' | FileCheck %s
// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_89 ptx=81},tile-materialize,canonicalize,cse)' | FileCheck %s
// RUN: not tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_89},tile-materialize)' 2>&1 | FileCheck %s --check-prefix=SM89
// RUN: not tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize)' 2>&1 | FileCheck %s --check-prefix=SM80

// f32 -> e4m3 over the mma accumulator layout: slot pairs (0, 1) and (2, 3), the high element
// first (cvt.rn.satfinite.e4m3x2.f32 d, hi, lo); the bytes land in an i8 register array.
// CHECK-LABEL: gpu.func @f32_to_e4m3
// CHECK-DAG: %[[SRC:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x f32>
// CHECK-DAG: %[[DST:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x i8>
// CHECK: %[[LO:.*]] = llvm.load %[[SRC]] : !llvm.ptr -> f32
// CHECK: %[[HI:.*]] = llvm.load {{.*}} : !llvm.ptr -> f32
// CHECK: %[[Q:.*]] = nvvm.convert.f32x2.to.f8x2 %[[HI]], %[[LO]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>{{ ?}}(f8E4M3FN)
// CHECK: %[[Q0:.*]] = llvm.extractelement %[[Q]]
// CHECK: llvm.store %[[Q0]], %[[DST]] : i8, !llvm.ptr
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}}(f8E4M3FN)
// CHECK-NOT: nvvm.convert
// SM89: error: {{.*}}no variant of 'tile.cast' can lower this op for sm_89:
// SM89-NEXT: f8 (priority 10): target: f8 (e4m3/e5m2) conversions (sm_90+, or sm_89 with PTX ISA 8.1) is not available on sm_89
// SM89-NEXT: elementwise (priority 0): convertible: 8-bit floats convert with the f8 variant; dst holds f8E4M3FN
// SM80: error: {{.*}}no variant of 'tile.cast' can lower this op for sm_80:
// SM80-NEXT: f8 (priority 10): target: f8 (e4m3/e5m2) conversions (sm_90+, or sm_89 with PTX ISA 8.1) is not available on sm_80
!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Q = !tile.buf<array<i64: 16, 8>, f8E4M3FN, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @f32_to_e4m3() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_local"() : () -> !D32
    %d = "tile.alloc_local"() : () -> !Q
    "tile.cast"(%d, %s) {scope = "warp"} : (!Q, !D32) -> ()
    gpu.return
  }
}

// -----

// f16 -> e5m2: the pair as one f16x2 (cvt.rn.satfinite.e5m2x2.f16x2).
// CHECK-LABEL: gpu.func @f16_to_e5m2
// CHECK: %[[LO:.*]] = llvm.load {{.*}} : !llvm.ptr -> f16
// CHECK: %[[HI:.*]] = llvm.load {{.*}} : !llvm.ptr -> f16
// CHECK: %[[V0:.*]] = llvm.insertelement %[[LO]]
// CHECK: %[[V:.*]] = llvm.insertelement %[[HI]], %[[V0]]
// CHECK: nvvm.convert.f16x2.to.f8x2 %[[V]] : vector<2xf16> -> vector<2xi8>{{ ?}}(f8E5M2)
// CHECK-COUNT-1: nvvm.convert.f16x2.to.f8x2
// CHECK-NOT: nvvm.convert
!H = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Q = !tile.buf<array<i64: 16, 8>, f8E5M2, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @f16_to_e5m2() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_local"() : () -> !H
    %d = "tile.alloc_local"() : () -> !Q
    "tile.cast"(%d, %s) {scope = "warp"} : (!Q, !H) -> ()
    gpu.return
  }
}

// -----

// e4m3 -> f32: the pair to f16x2 (exact), each half widened.
// CHECK-LABEL: gpu.func @e4m3_to_f32
// CHECK-DAG: %[[SRC:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x i8>
// CHECK: %[[LO:.*]] = llvm.load %[[SRC]] : !llvm.ptr -> i8
// CHECK: %[[HI:.*]] = llvm.load {{.*}} : !llvm.ptr -> i8
// CHECK: %[[H:.*]] = nvvm.convert.f8x2.to.f16x2 {{.*}} : vector<2xi8>{{ ?}}(f8E4M3FN) -> vector<2xf16>
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK-NOT: nvvm.convert
!Q = !tile.buf<array<i64: 16, 8>, f8E4M3FN, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @e4m3_to_f32() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_local"() : () -> !Q
    %d = "tile.alloc_local"() : () -> !D32
    "tile.cast"(%d, %s) {scope = "warp"} : (!D32, !Q) -> ()
    gpu.return
  }
}

// -----

// bf16 -> e4m3 widens to f32 first (sm_90 has no bf16x2 source form); e4m3 -> e5m2 goes through
// f16x2.
// CHECK-LABEL: gpu.func @bf16_and_f8
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}}(f8E4M3FN)
// CHECK: nvvm.convert.f8x2.to.f16x2 {{.*}}(f8E4M3FN) -> vector<2xf16>
// CHECK: nvvm.convert.f16x2.to.f8x2 {{.*}} -> vector<2xi8>{{ ?}}(f8E5M2)
!B = !tile.buf<array<i64: 16, 8>, bf16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Q = !tile.buf<array<i64: 16, 8>, f8E4M3FN, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!R = !tile.buf<array<i64: 16, 8>, f8E5M2, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @bf16_and_f8() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_local"() : () -> !B
    %q = "tile.alloc_local"() : () -> !Q
    %r = "tile.alloc_local"() : () -> !R
    "tile.cast"(%q, %s) {scope = "warp"} : (!Q, !B) -> ()
    "tile.cast"(%r, %q) {scope = "warp"} : (!R, !Q) -> ()
    gpu.return
  }
}

// -----

// A slot whose neighbour goes elsewhere converts alone, paired with itself: one element per
// thread (a 32-element row over the lanes) is one cvt whose low byte is kept.
// CHECK-LABEL: gpu.func @single
// CHECK: %[[X:.*]] = llvm.load {{.*}} : !llvm.ptr -> f32
// CHECK: %[[Q:.*]] = nvvm.convert.f32x2.to.f8x2 %[[X]], %[[X]]
// CHECK: llvm.extractelement %[[Q]]
// CHECK-NOT: nvvm.convert
!S = !tile.buf<array<i64: 32>, f32, "local", #tile.layout<"S[32:1@laneid]">>
!Q = !tile.buf<array<i64: 32>, f8E4M3FN, "local", #tile.layout<"S[32:1@laneid]">>
gpu.module @m {
  gpu.func @single() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_local"() : () -> !S
    %d = "tile.alloc_local"() : () -> !Q
    "tile.cast"(%d, %s) {scope = "warp"} : (!Q, !S) -> ()
    gpu.return
  }
}
