// The 8-bit floats through tile-to-ptx, checked in the PTX and assembled by ptxas: a warpgroup
// stages e4m3 A and e5m2 B (64 x 128 each, rows of 128 bytes, 128B swizzle) in shared memory,
// multiplies them with wgmma kind f8 (4 x m64n64k32), quantizes the f32 result to e4m3 and
// widens it back to f32 (the casts: cvt.rn.satfinite.e4m3x2.f32, cvt.rn.f16x2.e4m3x2).
// The casts alone also run on sm_89 with PTX ISA 8.1.
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/wgmma.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t/wgmma.ptx
// RUN: FileCheck %s --check-prefix=WG < %t/wgmma.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t/wgmma.ptx -o %t/wgmma.cubin %}
// RUN: tilemlir-opt %t/cast.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_89 ptx=81})' --emit=ptx -o %t/cast.ptx
// RUN: FileCheck %s --check-prefix=CAST < %t/cast.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_89 %t/cast.ptx -o %t/cast.cubin %}

// WG: .target sm_90a
// WG: .visible .entry f8_wgmma(
// WG-COUNT-2: st.shared.v4.b32
// WG: fence.proxy.async.shared::cta;
// WG: bar.sync 0;
// WG: wgmma.fence.sync.aligned;
// WG: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 {{[{](%r[0-9]+, ){31}%r[0-9]+[}]}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1;
// WG-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2
// WG-NOT: wgmma.mma_async
// WG: wgmma.commit_group.sync.aligned;
// WG: wgmma.wait_group.sync.aligned 0;
// WG-COUNT-16: cvt.rn.satfinite.e4m3x2.f32
// WG-COUNT-16: cvt.rn.f16x2.e4m3x2
// WG: st.global.v2.b32
//--- wgmma.mlir
!Ag = !tile.buf<array<i64: 64, 128>, f8E4M3FN, "global", #tile.layout<"S[(64, 128):(128, 1)]">>
!Bg = !tile.buf<array<i64: 64, 128>, f8E5M2, "global", #tile.layout<"S[(64, 128):(128, 1)]">>
!Dg = !tile.buf<array<i64: 64, 64>, f32, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!As = !tile.buf<array<i64: 64, 128>, f8E4M3FN, "shared", #tile.layout<"S[(64, 128):(128, 1)] o Sw<3,4,3>">>
!Bs = !tile.buf<array<i64: 64, 128>, f8E5M2, "shared", #tile.layout<"S[(64, 128):(128, 1)] o Sw<3,4,3>">>
!Acc = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!Q = !tile.buf<array<i64: 64, 64>, f8E4M3FN, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>

module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @f8_wgmma(%pa: !llvm.ptr, %pb: !llvm.ptr, %pd: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %ag = "tile.global"(%pa) : (!llvm.ptr) -> !Ag
      %bg = "tile.global"(%pb) : (!llvm.ptr) -> !Bg
      %dg = "tile.global"(%pd) : (!llvm.ptr) -> !Dg
      %as = "tile.alloc_shared"() {offset = 0 : i64} : () -> !As
      %bs = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !Bs
      "tile.copy"(%as, %ag) {scope = "warpgroup"} : (!As, !Ag) -> ()
      "tile.copy"(%bs, %bg) {scope = "warpgroup"} : (!Bs, !Bg) -> ()
      "tile.fence"() {kind = "proxy_async_shared"} : () -> ()
      "tile.cta_sync"() : () -> ()
      %acc = "tile.alloc_local"() : () -> !Acc
      %false = arith.constant false
      "tile.gemm_async"(%acc, %as, %bs, %false) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!Acc, !As, !Bs, i1) -> ()
      "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
      %q = "tile.alloc_local"() : () -> !Q
      "tile.cast"(%q, %acc) {scope = "warpgroup"} : (!Q, !Acc) -> ()
      "tile.cast"(%acc, %q) {scope = "warpgroup"} : (!Acc, !Q) -> ()
      "tile.copy"(%dg, %acc) {scope = "warpgroup"} : (!Dg, !Acc) -> ()
      gpu.return
    }
  }
}

//--- cast.mlir
// CAST: .target sm_89
// CAST: .visible .entry f8_cast(
// CAST-COUNT-16: cvt.rn.satfinite.e4m3x2.f32
// CAST-COUNT-16: st.global.b16
// CAST-COUNT-16: cvt.rn.f16x2.e4m3x2
!Dg = !tile.buf<array<i64: 64, 64>, f32, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Acc = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!Q = !tile.buf<array<i64: 64, 64>, f8E4M3FN, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @f8_cast(%pd: !llvm.ptr, %pq: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %dg = "tile.global"(%pd) : (!llvm.ptr) -> !Dg
      %qg = "tile.global"(%pq) : (!llvm.ptr) -> !tile.buf<array<i64: 64, 64>, f8E4M3FN, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
      %acc = "tile.alloc_local"() : () -> !Acc
      "tile.copy"(%acc, %dg) {scope = "warpgroup"} : (!Acc, !Dg) -> ()
      %q = "tile.alloc_local"() : () -> !Q
      "tile.cast"(%q, %acc) {scope = "warpgroup"} : (!Q, !Acc) -> ()
      "tile.copy"(%qg, %q) {scope = "warpgroup"} : (!tile.buf<array<i64: 64, 64>, f8E4M3FN, "global", #tile.layout<"S[(64, 64):(64, 1)]">>, !Q) -> ()
      "tile.cast"(%acc, %q) {scope = "warpgroup"} : (!Acc, !Q) -> ()
      "tile.copy"(%dg, %acc) {scope = "warpgroup"} : (!Dg, !Acc) -> ()
      gpu.return
    }
  }
}
