// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch)'
// Copies no variant can lower: one diagnostic at the op naming each variant's reason. The chip
// is each gpu.module's #nvvm.target.

!Sm = !tile.buf<array<i64: 16, 16>, f16, "shared", #tile.layout<"S[(16, 16):(16, 1)]">>
!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @stmatrix_on_sm80() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %a = "tile.alloc_local"() : () -> !Af
    // expected-error@+1 {{stmatrix (priority 20): target: stmatrix is not available on sm_80}}
    "tile.copy"(%s, %a) {scope = "warp", dispatch = "stmatrix"} : (!Sm, !Af) -> ()
    gpu.return
  }
}

// -----

!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m [#nvvm.target<chip = "sm_75">] {
  gpu.func @cp_async_on_sm75(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    // expected-error@+1 {{cp_async (priority 10): target: cp.async is not available on sm_75}}
    "tile.copy_async"(%s, %g) {scope = "cta"} : (!Sm, !G) -> ()
    gpu.return
  }
}

// -----

// Lane l holds row l % 8 (not l / 4) of its 8x8 block: no ldmatrix, plain or transposed.
!Sm = !tile.buf<array<i64: 16, 8>, f16, "shared", #tile.layout<"S[(16, 8):(8, 1)]">>
!Bad = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 1@laneid, 8@laneid, 1)]">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @not_a_fragment() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %r = "tile.alloc_local"() : () -> !Bad
    // expected-error@+1 {{ldmatrix (priority 20): register slots 0, 1 do not hold an 8x8 matrix: lane 1 of warp 0 gets row 0, element 2 of the matrix in register slot 0, shared offset 2, but the layout puts DST[1, 0] there, at offset 8; .trans: lane 4 of warp 0 gets row 0, element 1 of the matrix in register slot 0, shared offset 1, but the layout puts DST[4, 0] there, at offset 32}}
    "tile.copy"(%r, %s) {scope = "warp", dispatch = "ldmatrix"} : (!Bad, !Sm) -> ()
    gpu.return
  }
}

// -----

!Sm = !tile.buf<array<i64: 16, 8>, f32, "shared", #tile.layout<"S[(16, 8):(8, 1)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @ldmatrix_f32() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %d = "tile.alloc_local"() : () -> !Df
    // expected-error@+1 {{b16_elements: 8x8 matrix copies (ldmatrix, stmatrix) move 16-bit elements; the tile holds f32}}
    "tile.copy"(%d, %s) {scope = "warp", dispatch = "ldmatrix"} : (!Df, !Sm) -> ()
    gpu.return
  }
}

// -----

!Sm = !tile.buf<array<i64: 16, 16>, i8, "shared", #tile.layout<"S[(16, 16):(16, 1)]">>
!Af = !tile.buf<array<i64: 16, 16>, i8, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @ldmatrix_i8() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %a = "tile.alloc_local"() : () -> !Af
    // expected-error@+1 {{the tile holds i8}}
    "tile.copy"(%a, %s) {scope = "warp", dispatch = "ldmatrix"} : (!Af, !Sm) -> ()
    gpu.return
  }
}

// -----

// A transposing global -> shared copy: the shared tile is column-major, so a 16-byte chunk of
// a row is not contiguous there.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!T = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(1, 64)]">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @not_contiguous(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !T
    // expected-error@+1 {{cooperative (priority 10): 16-byte chunks along dim 1 are not contiguous in DST (shared): DST[0, 0] is at offset 0 but DST[0, 1] at 64, not 1}}
    "tile.copy"(%s, %g) {scope = "cta"} : (!T, !G) -> ()
    gpu.return
  }
}

// -----

// Only half of the warp reaches the ldmatrix.
!Sm = !tile.buf<array<i64: 16, 16>, f16, "shared", #tile.layout<"S[(16, 16):(16, 1)]">>
!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @narrowed() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %a = "tile.alloc_local"() : () -> !Af
    %tid = gpu.thread_id x
    %c16 = arith.constant 16 : index
    %low = arith.cmpi ult, %tid, %c16 : index
    scf.if %low {
      // expected-error@+1 {{full_active_lanes: the op sits under a branch}}
      "tile.copy"(%a, %s) {scope = "warp", dispatch = "ldmatrix"} : (!Af, !Sm) -> ()
    }
    gpu.return
  }
}

// -----

// cp.async moves at least 4 bytes: rows of one f16 cannot.
!G = !tile.buf<array<i64: 32, 1>, f16, "global", #tile.layout<"S[(32, 1):(1, 1)]">>
!Sm = !tile.buf<array<i64: 32, 1>, f16, "shared", #tile.layout<"S[(32, 1):(8, 1)]">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @cp_async_two_bytes(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    // expected-error@+1 {{cp.async moves 4, 8 or 16 bytes; these chunks are 2 bytes (the rows are that short)}}
    "tile.copy_async"(%s, %g) {scope = "warp"} : (!Sm, !G) -> ()
    gpu.return
  }
}

// -----

// A replicated register layout can be loaded, not stored (each element would be written once
// per copy).
!Bias = !tile.buf<array<i64: 8>, f32, "local", #tile.layout<"S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]">>
!G = !tile.buf<array<i64: 8>, f32, "global", #tile.layout<"S[(8):(1)]">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @store_replicated(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %bias = "tile.alloc_local"() : () -> !Bias
    // expected-error@+1 {{vector_registers (priority 10): replicas_load_only: replicated layout on SRC (S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]) (only loads into a replicated register layout are supported)}}
    "tile.copy"(%g, %bias) {scope = "warp"} : (!G, !Bias) -> ()
    gpu.return
  }
}
