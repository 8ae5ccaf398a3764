// Each gpu.module is dispatched for its own #nvvm.target chip, not the first module's: the same
// tile.cast becomes packed cvt on sm_80 and per-element truncf on sm_75.
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch)' | FileCheck %s
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' | FileCheck %s --check-prefix=PTX
// CHECK-LABEL: gpu.module @turing
// CHECK-NOT: nvvm.convert
// CHECK: arith.truncf
// CHECK-LABEL: gpu.module @ampere
// CHECK-NOT: arith.truncf
// CHECK: nvvm.convert.f32x2.to.f16x2
// PTX: gpu.binary @turing [#gpu.object<#nvvm.target<chip = "sm_75", features = "+ptx70">
// PTX-SAME: .target sm_75
// PTX: gpu.binary @ampere [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx78">
// PTX-SAME: .target sm_80
!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!D16 = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
module attributes {gpu.container_module} {
  gpu.module @turing [#nvvm.target<chip = "sm_75", features = "+ptx70">] {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %s = "tile.alloc_local"() : () -> !D32
      %d = "tile.alloc_local"() : () -> !D16
      "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()
      gpu.return
    }
  }
  gpu.module @ampere [#nvvm.target<chip = "sm_80", features = "+ptx78">] {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %s = "tile.alloc_local"() : () -> !D32
      %d = "tile.alloc_local"() : () -> !D16
      "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()
      gpu.return
    }
  }
}
