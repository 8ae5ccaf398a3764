// The seed-001 demo: one warp computes D[16,8] = A[16,16] . B[16,8] with one m16n8k16 mma.sync.
// Fragments are loaded from global memory with tile.copy, multiplied with tile.gemm, stored back.
!A_g = !tile.buf<array<i64: 16, 16>, f16, "global", #tile.layout<"S[(16, 16):(16, 1)]">>
!B_g = !tile.buf<array<i64: 16, 8>, f16, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
!D_g = !tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
!A_f = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!B_f = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!D_f = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>

module attributes {gpu.container_module} {
  gpu.module @demo {
    gpu.func @gemm_16x8x16(%A: !llvm.ptr, %B: !llvm.ptr, %D: !llvm.ptr) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>} {
      %a_g = "tile.global"(%A) : (!llvm.ptr) -> !A_g
      %b_g = "tile.global"(%B) : (!llvm.ptr) -> !B_g
      %d_g = "tile.global"(%D) : (!llvm.ptr) -> !D_g
      %a = "tile.alloc_local"() : () -> !A_f
      %b = "tile.alloc_local"() : () -> !B_f
      %d = "tile.alloc_local"() : () -> !D_f
      "tile.copy"(%a, %a_g) {scope = "warp"} : (!A_f, !A_g) -> ()
      "tile.copy"(%b, %b_g) {scope = "warp"} : (!B_f, !B_g) -> ()
      "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
                                   transpose_a = false, transpose_b = false}
          : (!D_f, !A_f, !B_f, !D_f) -> ()
      "tile.copy"(%d_g, %d) {scope = "warp"} : (!D_g, !D_f) -> ()
      gpu.return
    }
  }
}
