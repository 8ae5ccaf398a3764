// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80},tile-materialize,canonicalize)' | FileCheck %s
// tile.gemm on register fragments -> one nvvm.mma.sync per (m, n, k) atom.

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>

// beta = 0: D starts from zero; one m16n8k16 with 4 A, 2 B registers.
// CHECK-LABEL: gpu.func @beta0
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: nvvm.mma.sync A[{{.*}}, {{.*}}, {{.*}}, {{.*}}] B[{{.*}}, {{.*}}] C[%[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]]]
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME: (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: tile.
gpu.module @m {
  gpu.func @beta0() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !Af
    %b = "tile.alloc_local"() : () -> !Bf
    %d = "tile.alloc_local"() : () -> !Df
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>

// beta = 1: the accumulator starts from C's four registers (here C is another buffer).
// CHECK-LABEL: gpu.func @beta1
// CHECK-NOT: arith.constant 0.000000e+00 : f32
// CHECK: %[[C:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x f32>
// CHECK: %[[D:.*]] = llvm.alloca {{.*}} x !llvm.array<4 x f32>
// CHECK: %[[C0:.*]] = llvm.load %[[C]] : !llvm.ptr -> f32
// CHECK: %[[C3P:.*]] = llvm.getelementptr %[[C]][3]
// CHECK: %[[C3:.*]] = llvm.load %[[C3P]] : !llvm.ptr -> f32
// CHECK: %[[R:.*]] = nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[%[[C0]], %{{.*}}, %{{.*}}, %[[C3]]]
// CHECK: %[[R0:.*]] = llvm.extractvalue %[[R]][0]
// CHECK: llvm.store %[[R0]], %[[D]] : f32, !llvm.ptr
gpu.module @m {
  gpu.func @beta1() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !Af
    %b = "tile.alloc_local"() : () -> !Bf
    %c = "tile.alloc_local"() : () -> !Df
    %d = "tile.alloc_local"() : () -> !Df
    "tile.gemm"(%d, %a, %b, %c) {alpha = 1.0 : f32, beta = 1.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

!Af = !tile.buf<array<i64: 16, 16>, bf16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, bf16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>

// bf16 inputs travel as i32 registers (two bf16 each).
// CHECK-LABEL: gpu.func @bf16
// CHECK: nvvm.mma.sync
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
gpu.module @m {
  gpu.func @bf16() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !Af
    %b = "tile.alloc_local"() : () -> !Bf
    %d = "tile.alloc_local"() : () -> !Df
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

// K = 24 is not a multiple of 16: m16n8k8 is chosen, three times along K.
!Af = !tile.buf<array<i64: 16, 24>, f16, "local", #tile.layout<"S[(2, 8, 3, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 24, 8>, f16, "local", #tile.layout<"S[(3, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>

// CHECK-LABEL: gpu.func @k24
// CHECK-COUNT-3: nvvm.mma.sync A[{{[^,]*}}, {{[^,]*}}] B[{{[^,]*}}] C[{{.*}}] {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-NOT: nvvm.mma.sync
gpu.module @m {
  gpu.func @k24() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !Af
    %b = "tile.alloc_local"() : () -> !Bf
    %d = "tile.alloc_local"() : () -> !Df
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

// A warpgroup: the four warps split M (D and A name wid_in_wg), each warp keeps its own copy
// of B; 64x16x32 is 1 (per warp) x 2 (N) x 2 (K) mma per warp = 4 in the instruction stream.
!Af = !tile.buf<array<i64: 64, 32>, f16, "local", #tile.layout<"S[(4, 2, 8, 4, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 32, 16>, f16, "local", #tile.layout<"S[(4, 4, 2, 2, 8):(4, 1@laneid, 1, 2, 4@laneid)]">>
!Df = !tile.buf<array<i64: 64, 16>, f32, "local", #tile.layout<"S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>

// CHECK-LABEL: gpu.func @warpgroup
// CHECK-COUNT-4: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
gpu.module @m {
  gpu.func @warpgroup() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !Af
    %b = "tile.alloc_local"() : () -> !Bf
    %d = "tile.alloc_local"() : () -> !Df
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warpgroup",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}
