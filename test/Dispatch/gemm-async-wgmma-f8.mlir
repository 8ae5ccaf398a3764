// tile.gemm_async on 8-bit floats (wgmma kind f8): K = 32 per instruction, both operands K-major
// tiles in shared memory, one 128-byte swizzle row = 128 elements of K; and what the variant
// refuses, with its reasons.
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/lower.mlir --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize)' | FileCheck %s
// RUN: tilemlir-opt %t/invalid.mlir --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})'
// RUN: tilemlir-opt %t/sm80.mlir --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80})'

//--- lower.mlir
// M = 64, N = 64, K = 128 of e4m3 x e5m2, 128B swizzle (rows of 128 bytes): 4 wgmma m64n64k32,
// the descriptors advancing 32 bytes (+2 in the start field) per K step, as for 16-bit tiles
// (0x4000004000010000: 128B swizzle, SBO 1024 B, LBO 16 B). accum = false: no load of D.
// CHECK-LABEL: gpu.func @e4m3_e5m2_m64n64k128
// CHECK-DAG: %[[C0:.*]] = arith.constant 4611686293305360384 : i64
// CHECK-DAG: %[[C1:.*]] = arith.constant 4611686293305360386 : i64
// CHECK-DAG: %[[C2:.*]] = arith.constant 4611686293305360388 : i64
// CHECK-DAG: %[[C3:.*]] = arith.constant 4611686293305360390 : i64
// CHECK-NOT: llvm.load
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[R0:.*]] = nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e5m2>, <one>, <col>]
// CHECK: %[[A1:.*]] = arith.addi %{{.*}}, %[[C1]]
// CHECK: %[[R1:.*]] = nvvm.wgmma.mma_async %[[A1]], %{{.*}}, %[[R0]], <m = 64, n = 64, k = 32>
// CHECK: %[[A2:.*]] = arith.addi %{{.*}}, %[[C2]]
// CHECK: %[[R2:.*]] = nvvm.wgmma.mma_async %[[A2]], %{{.*}}, %[[R1]]
// CHECK: %[[A3:.*]] = arith.addi %{{.*}}, %[[C3]]
// CHECK: nvvm.wgmma.mma_async %[[A3]], %{{.*}}, %[[R2]]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
!A = !tile.buf<array<i64: 64, 128>, f8E4M3FN, "shared", #tile.layout<"S[(64, 128):(128, 1)] o Sw<3,4,3>">>
!B = !tile.buf<array<i64: 64, 128>, f8E5M2, "shared", #tile.layout<"S[(64, 128):(128, 1)] o Sw<3,4,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @e4m3_e5m2_m64n64k128() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %false = arith.constant false
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %false) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
    gpu.return
  }
}

// -----

// M = 128, K = 256 (two 128-byte chunks of K, 128 rows each: chunk 1 starts 128 x 128 B =
// 16384 B later, +1024 in the start field); the second M block starts 64 rows x 128 B = 8192 B
// later (+512): 2 x 8 instructions.
// CHECK-LABEL: gpu.func @e4m3_m128n64k256
// CHECK-DAG: arith.constant 4611686293305361408 : i64
// CHECK-DAG: arith.constant 4611686293305360896 : i64
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
!A = !tile.buf<array<i64: 128, 256>, f8E4M3FN, "shared", #tile.layout<"S[(128, 2, 128):(128, 16384, 1)] o Sw<3,4,3>">>
!B = !tile.buf<array<i64: 64, 256>, f8E4M3FN, "shared", #tile.layout<"S[(64, 2, 128):(128, 8192, 1)] o Sw<3,4,3>">>
!D = !tile.buf<array<i64: 128, 64>, f32, "local", #tile.layout<"S[(2, 4, 2, 8, 8, 4, 2):(32, 1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @e4m3_m128n64k256(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 32768 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
    gpu.return
  }
}

//--- invalid.mlir
// B MN-major (transpose_b): the PTX ISA has no transposed 8-bit operand.
!A = !tile.buf<array<i64: 64, 128>, f8E4M3FN, "shared", #tile.layout<"S[(64, 128):(128, 1)] o Sw<3,4,3>">>
!B = !tile.buf<array<i64: 128, 128>, f8E4M3FN, "shared", #tile.layout<"S[(128, 128):(128, 1)] o Sw<3,4,3>">>
!D = !tile.buf<array<i64: 64, 128>, f32, "local", #tile.layout<"S[(4, 2, 8, 16, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @mn_major_b(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): dtypes: wgmma reads 8-bit operands K-major only: B (e4m3) cannot be MN-major (transpose_b); store it N x K}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// K = 48 is not a whole number of m64nNk32 instructions.
!A = !tile.buf<array<i64: 64, 48>, f8E4M3FN, "shared", #tile.layout<"S[(64, 48):(48, 1)]">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @k48(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{K=48 is not a multiple of 32 (one MMA instruction's K)}}
    "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}

// -----

// An f16 A with an 8-bit B: kind f8 takes 8-bit floats for both.
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 64, 128>, f8E4M3FN, "shared", #tile.layout<"S[(64, 128):(128, 1)] o Sw<3,4,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @mixed(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{dtypes: A is f16 but B is f8E4M3FN: kind f8 takes 8-bit floats (f8E4M3FN, f8E5M2) for both}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// An 8-bit A in registers, and an f16 accumulator.
!A = !tile.buf<array<i64: 64, 32>, f8E4M3FN, "local", #tile.layout<"S[(4, 2, 8, 4, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!B = !tile.buf<array<i64: 64, 32>, f8E4M3FN, "shared", #tile.layout<"S[(64, 32):(32, 1)]">>
!D = !tile.buf<array<i64: 64, 64>, f16, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @registers(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !A
    %b = "tile.alloc_shared"() {offset = 0 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{dtypes: A holds 8-bit floats in registers: this variant reads an 8-bit A from shared memory only; D is f16, the accumulator must be f32}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

//--- sm80.mlir
// wgmma (and with it kind f8) is sm_90a's.
!A = !tile.buf<array<i64: 64, 128>, f8E4M3FN, "shared", #tile.layout<"S[(64, 128):(128, 1)] o Sw<3,4,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @on_sm80(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): target: wgmma.mma_async is not available on sm_80}}
    "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}
