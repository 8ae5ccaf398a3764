// FlashAttention's causal mask on a warpgroup's m64n64 wgmma accumulator, through tile-to-ptx:
// FileCheck on the PTX, then ptxas. Two warpgroups per CTA, each masking its own 64 rows of a
// 256 x 128 score matrix: column and row iota tiles offset by the tile's first column and row
// (from the CTA and warpgroup ids), column > row, then -inf where it holds.
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.sm90a.ptx
// RUN: FileCheck %s --check-prefixes=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefixes=PTX < %t.sm80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}

// The iota tiles stay in registers (no local memory): 32 comparisons of column > row and 32
// selects of -inf, one per element a thread holds (LLVM may turn "convert once, add per
// slot" into integer adds and a conversion per slot; the values are the same).
// PTX-LABEL: .visible .entry causal(
// PTX-NOT: .local
// PTX-COUNT-16: ld.global.v2.b32
// PTX-COUNT-32: setp.{{lt|gt}}.f32
// PTX-NOT: setp
// PTX-COUNT-32: selp.f32 {{.*}}, 0fFF800000,
// PTX-NOT: selp
// PTX-COUNT-16: st.global.v2.b32
// PTX-NOT: .local
// PTX: ret;
!G = !tile.buf<array<i64: 256, 128>, f32, "global", #tile.layout<"S[(256, 128):(128, 1)]">>
!W = !tile.buf<array<i64: 64, 64>, f32, "global", #tile.layout<"S[(64, 64):(128, 1)]">>
!Acc = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!Mask = !tile.buf<array<i64: 64, 64>, i1, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @causal(%x: !llvm.ptr, %y: !llvm.ptr) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>} {
      %X = "tile.global"(%x) : (!llvm.ptr) -> !G
      %Y = "tile.global"(%y) : (!llvm.ptr) -> !G
      %tid = gpu.thread_id x
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %wg = arith.divui %tid, %c128 : index
      %cta_row = arith.muli %bx, %c128 : index
      %wg_row = arith.muli %wg, %c64 : index
      %r0 = arith.addi %cta_row, %wg_row : index
      %c0 = arith.muli %by, %c64 : index
      %s = "tile.alloc_local"() : () -> !Acc
      %rows = "tile.alloc_local"() : () -> !Acc
      %cols = "tile.alloc_local"() : () -> !Acc
      %mask = "tile.alloc_local"() : () -> !Mask
      %in = "tile.slice"(%X, %r0, %c0) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} : (!G, index, index) -> !W
      "tile.copy"(%s, %in) {scope = "warpgroup"} : (!Acc, !W) -> ()
      %c0_i32 = arith.index_cast %c0 : index to i32
      %c0_f = arith.sitofp %c0_i32 : i32 to f32
      "tile.iota"(%cols, %c0_f) {axis = 1 : i64, scope = "warpgroup"} : (!Acc, f32) -> ()
      %r0_i32 = arith.index_cast %r0 : index to i32
      %r0_f = arith.sitofp %r0_i32 : i32 to f32
      "tile.iota"(%rows, %r0_f) {axis = 0 : i64, scope = "warpgroup"} : (!Acc, f32) -> ()
      "tile.binary"(%mask, %cols, %rows) {fn = "gt", scope = "warpgroup"} : (!Mask, !Acc, !Acc) -> ()
      %ninf = arith.constant 0xFF800000 : f32
      "tile.select"(%s, %mask, %ninf, %s) {scope = "warpgroup"} : (!Acc, !Mask, f32, !Acc) -> ()
      %out = "tile.slice"(%Y, %r0, %c0) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} : (!G, index, index) -> !W
      "tile.copy"(%out, %s) {scope = "warpgroup"} : (!W, !Acc) -> ()
      gpu.return
    }
  }
}
