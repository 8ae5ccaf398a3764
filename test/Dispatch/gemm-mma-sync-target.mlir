// RUN: not tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch)' 2>&1 | FileCheck %s
// The target comes from the gpu.module's #nvvm.target when the pass names no chip; sm_75 has no
// f16 mma.sync m16n8k16, so the variant rejects instead of letting LLVM abort. The message
// lists every variant with its priority and all its reasons.

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Dh = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>

// CHECK: gemm-mma-sync-target.mlir:[[@LINE+5]]:7: error: no variant of 'tile.gemm' can lower this op for sm_75:
// CHECK-NEXT: - mma.m16n8k* (priority 10): dtypes: C is f16, the accumulator must be f32; D is f16, the accumulator must be f32; alpha_beta: alpha must be 1.0 (mma.sync has no scaling), got 2; target: mma.sync m16n8k16/m16n8k8 with f16/bf16 inputs is not available on sm_75
module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<chip = "sm_75">] {
    gpu.func @old_chip(%a: !Af, %b: !Bf, %d: !Dh) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      "tile.gemm"(%d, %a, %b, %d) {alpha = 2.0 : f32, beta = 0.0 : f32, scope = "warp",
          transpose_a = false, transpose_b = false} : (!Dh, !Af, !Bf, !Dh) -> ()
      gpu.return
    }
  }
}
