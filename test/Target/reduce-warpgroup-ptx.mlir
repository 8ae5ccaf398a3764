// Warpgroup-scope row reductions through tile-to-ptx: FileCheck on the PTX, then ptxas. A
// warp-specialized CTA of 3 warpgroups: warpgroup 0 syncs on its own barrier 1; warpgroups 1
// and 2 each load 2 rows of 1024 f16 (8 per lane and row, over their 4 warps), sum and max
// them into f32 through their own window of one scratch buffer, on named barrier 15 - wg with
// 128 threads (never bar.sync 0, which would wait for warpgroup 0), and store the results.
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefixes=PTX < %t.sm80.ptx
// RUN: FileCheck %s --check-prefixes=NOBAR0 < %t.sm80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.sm90a.ptx
// RUN: FileCheck %s --check-prefixes=PTX < %t.sm90a.ptx
// RUN: FileCheck %s --check-prefixes=NOBAR0 < %t.sm90a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}

// NOBAR0-NOT: bar.sync 0;
// PTX-LABEL: .visible .entry consumers(
// PTX: mov.u32 %[[TID:r[0-9]+]], %tid.x;
// PTX: ld.global.v4.b32
// PTX: ld.global.v4.b32
// PTX: add.rn.f32
// PTX: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX: {{xor.b32|sub.s32}} %[[ID:r[0-9]+]], {{.*}}15{{;|,}}
// PTX: st.shared.b32
// PTX: st.shared.b32
// PTX: bar.sync %[[ID]], 128;
// PTX: ld.shared.v4.b32
// PTX: ld.shared.v4.b32
// PTX: bar.sync %[[ID]], 128;
// PTX: max.NaN.f32
// PTX: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX: st.shared.b32
// PTX: bar.sync %[[ID]], 128;
// PTX: ld.shared.v4.b32
// PTX: bar.sync %[[ID]], 128;
// PTX: st.global
// PTX: st.global
// PTX: bar.sync 1, 128;
// PTX-NOT: bar.sync
// PTX: ret;
!G = !tile.buf<array<i64: 4, 1024>, f16, "global", #tile.layout<"S[(4, 1024):(1024, 1)]">>
!Gw = !tile.buf<array<i64: 2, 1024>, f16, "global", #tile.layout<"S[(2, 1024):(1024, 1)]">>
!O = !tile.buf<array<i64: 4, 1>, f32, "global", #tile.layout<"S[(4, 1):(1, 1)]">>
!Ow = !tile.buf<array<i64: 2, 1>, f32, "global", #tile.layout<"S[(2, 1):(1, 1)]">>
!H = !tile.buf<array<i64: 2, 1024>, f16, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!Red = !tile.buf<array<i64: 2, 8>, f32, "shared", #tile.layout<"S[(2, 8):(8, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @consumers(%p: !llvm.ptr, %q: !llvm.ptr, %r: !llvm.ptr) kernel
        attributes {known_block_size = array<i32: 384, 1, 1>} {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %wg = arith.divui %tid, %c128 : index
      %in = "tile.global"(%p) : (!llvm.ptr) -> !G
      %sums = "tile.global"(%q) : (!llvm.ptr) -> !O
      %maxes = "tile.global"(%r) : (!llvm.ptr) -> !O
      %red = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Red
      %x = "tile.alloc_local"() : () -> !H
      %s = "tile.alloc_local"() : () -> !S
      %m = "tile.alloc_local"() : () -> !S
      %producer = arith.cmpi eq, %wg, %c0 : index
      scf.if %producer {
        %b1 = arith.constant 1 : i32
        "tile.named_barrier"(%b1) {threads = 128 : i64} : (i32) -> ()
      } else {
        %c = arith.subi %wg, %c1 : index
        %row = arith.muli %c, %c2 : index
        %rows = "tile.slice"(%in, %row) {static_offsets = array<i64: -9223372036854775808, 0>} : (!G, index) -> !Gw
        "tile.copy"(%x, %rows) {scope = "warpgroup"} : (!H, !Gw) -> ()
        %w = "tile.slice"(%red, %c) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Red, index) -> !W
        "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1 : i64, scope = "warpgroup"} : (!S, !H, !W) -> ()
        "tile.reduce"(%m, %x, %w) {fn = "max", axis = 1 : i64, scope = "warpgroup"} : (!S, !H, !W) -> ()
        %tw = arith.remui %tid, %c128 : index
        %first = arith.cmpi eq, %tw, %c0 : index
        scf.if %first {
          %so = "tile.slice"(%sums, %row) {static_offsets = array<i64: -9223372036854775808, 0>} : (!O, index) -> !Ow
          %mo = "tile.slice"(%maxes, %row) {static_offsets = array<i64: -9223372036854775808, 0>} : (!O, index) -> !Ow
          "tile.copy"(%so, %s) {scope = "thread"} : (!Ow, !S) -> ()
          "tile.copy"(%mo, %m) {scope = "thread"} : (!Ow, !S) -> ()
        }
      }
      gpu.return
    }
  }
}
