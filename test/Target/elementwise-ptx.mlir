// Elementwise math and a CTA-wide reduction through tile-to-ptx: FileCheck on the PTX, then
// ptxas. A row of 2048 f16 over 4 warps (8 consecutive elements per lane and access): its max
// (shuffles, partials through shared memory), x - max with fast exp2 on f16 pairs, and the sum.
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefixes=PTX < %t.sm80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.sm90a.ptx
// RUN: FileCheck %s --check-prefixes=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}

// PTX-LABEL: .visible .entry row(
// PTX-COUNT-2: ld.global.v4.b32
// PTX: max.NaN.f16
// PTX: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX: st.shared.b32
// PTX: bar.sync 0;
// PTX: ld.shared.v4.b32
// PTX: bar.sync 0;
// PTX: sub.f16x2
// PTX-COUNT-8: ex2.approx.f16x2
// PTX: shfl.sync.bfly.b32
// PTX-COUNT-2: bar.sync 0;
// PTX-COUNT-2: st.global.v4.b32
// PTX: ret;
!G = !tile.buf<array<i64: 1, 2048>, f16, "global", #tile.layout<"S[(1, 2048):(2048, 1)]">>
!H = !tile.buf<array<i64: 1, 2048>, f16, "local", #tile.layout<"S[(1, 2, 4, 32, 8):(1, 8, 1@warpid, 1@laneid, 1)]">>
!F = !tile.buf<array<i64: 1, 2048>, f32, "local", #tile.layout<"S[(1, 2, 4, 32, 8):(1, 8, 1@warpid, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 1, 1>, f32, "local", #tile.layout<"S[(1, 1):(1, 1)]">>
!Sh = !tile.buf<array<i64: 1, 1>, f16, "local", #tile.layout<"S[(1, 1):(1, 1)]">>
!W = !tile.buf<array<i64: 4>, f32, "shared", #tile.layout<"S[(4):(1)]">>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @row(%p: !llvm.ptr, %q: !llvm.ptr) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %in = "tile.global"(%p) : (!llvm.ptr) -> !G
      %out = "tile.global"(%q) : (!llvm.ptr) -> !G
      %w = "tile.alloc_shared"() {offset = 0 : i64} : () -> !W
      %x = "tile.alloc_local"() : () -> !H
      %xf = "tile.alloc_local"() : () -> !F
      %m = "tile.alloc_local"() : () -> !S
      %mh = "tile.alloc_local"() : () -> !Sh
      %s = "tile.alloc_local"() : () -> !S
      "tile.copy"(%x, %in) {scope = "cta"} : (!H, !G) -> ()
      "tile.cast"(%xf, %x) {scope = "cta"} : (!F, !H) -> ()
      "tile.reduce"(%m, %xf, %w) {fn = "max", axis = 1 : i64, scope = "cta"} : (!S, !F, !W) -> ()
      "tile.cast"(%mh, %m) {scope = "cta"} : (!Sh, !S) -> ()
      "tile.binary"(%x, %x, %mh) {fn = "sub", scope = "cta"} : (!H, !H, !Sh) -> ()
      "tile.unary"(%x, %x) {fn = "exp2", fast = true, scope = "cta"} : (!H, !H) -> ()
      "tile.cast"(%xf, %x) {scope = "cta"} : (!F, !H) -> ()
      "tile.reduce"(%s, %xf, %w) {fn = "sum", axis = 1 : i64, scope = "cta"} : (!S, !F, !W) -> ()
      "tile.copy"(%out, %x) {scope = "cta"} : (!G, !H) -> ()
      gpu.return
    }
  }
}
