// tile.gemm_async and tile.copy_async (TMEM -> registers) through tile-to-ptx, checked in the
// PTX and assembled by ptxas: seed 000's kernel on sm_100a (tcgen05) and its Hopper twin on
// sm_90a (wgmma). Operand tiles are staged global -> registers -> shared with tile.copy.
// tcgen05.dealloc is written as an nvvm op: tile.tmem_dealloc passes the address as an i32.
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/tcgen05.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx -o %t/tcgen05.ptx
// RUN: FileCheck %s --check-prefix=TC < %t/tcgen05.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t/tcgen05.ptx -o %t/tcgen05.cubin %}
// RUN: tilemlir-opt %t/wgmma.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t/wgmma.ptx
// RUN: FileCheck %s --check-prefix=WG < %t/wgmma.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t/wgmma.ptx -o %t/wgmma.cubin %}

// 128x128x64: 4 MMAs of K = 16 with the instruction descriptor M=128, N=128, f16 -> f32; the
// descriptors' start fields step by 2 (32 bytes); accumulate off for the first, on after.
// TC: .target sm_100a
// TC: .visible .entry hgemm_128x128x64(
// TC: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// TC: fence.proxy.async.shared::cta;
// TC: elect.sync
// TC: or.b64 [[A0:%rd[0-9]+]], {{%rd[0-9]+}}, 4611756662049538048;
// TC: mov.pred [[OFF:%p[0-9]+]], 0;
// TC: mov.b32 [[IDESC:%r[0-9]+]], 136314896;
// TC: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [[[TMEM:%r[0-9]+]]], [[A0]], {{%rd[0-9]+}}, [[IDESC]], [[OFF]];
// TC: or.b64 [[A1:%rd[0-9]+]], {{%rd[0-9]+}}, 4611756662049538050;
// TC: mov.pred [[ON:%p[0-9]+]], -1;
// TC: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [[[TMEM]]], [[A1]], {{%rd[0-9]+}}, [[IDESC]], [[ON]];
// TC: or.b64 [[A2:%rd[0-9]+]], {{%rd[0-9]+}}, 4611756662049538052;
// TC: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [[[TMEM]]], [[A2]], {{%rd[0-9]+}}, [[IDESC]], [[ON]];
// TC: or.b64 [[A3:%rd[0-9]+]], {{%rd[0-9]+}}, 4611756662049538054;
// TC: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [[[TMEM]]], [[A3]], {{%rd[0-9]+}}, [[IDESC]], [[ON]];
// TC-NOT: tcgen05.mma
// TC: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// TC: mbarrier.try_wait.parity.shared.b64
// Each warp reads its 32 lanes (warp index << 21 = 32 lanes << 16), 128 columns at once.
// TC: shl.b32 [[WOFF:%r[0-9]+]], {{%r[0-9]+}}, 21;
// TC: add.s32 [[LD:%r[0-9]+]], [[TMEM]], [[WOFF]];
// TC: tcgen05.ld.sync.aligned.32x32b.x128.b32 {{[{](%r[0-9]+, ){127}%r[0-9]+[}]}}, [[[LD]]];
// TC-NOT: tcgen05.ld
// TC: tcgen05.wait::ld.sync.aligned;
// TC: st.global
// TC: tcgen05.dealloc.cta_group::1.sync.aligned.b32

// 64x128x64 on one warpgroup: fence, 4 wgmma m64n128k16 chained on the same 64 registers,
// commit, then the kernel's wait.
// WG: .target sm_90a
// WG: .visible .entry wgmma_64x128x64(
// WG: fence.proxy.async.shared::cta;
// WG: bar.sync 0;
// WG: wgmma.fence.sync.aligned;
// WG: or.b64 [[A0:%rd[0-9]+]], {{%rd[0-9]+}}, 4611686293305360384;
// WG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {[[ACC:(%r[0-9]+, ){63}%r[0-9]+]]}, [[A0]], {{%rd[0-9]+}}, p, 1, 1, 0, 0;
// WG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {[[ACC]]}
// WG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {[[ACC]]}
// WG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {[[ACC]]}
// WG-NOT: wgmma.mma_async
// WG: wgmma.commit_group.sync.aligned;
// WG-NEXT: wgmma.wait_group.sync.aligned 0;
// WG: st.global

//--- tcgen05.mlir
!Ag = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!Ar = !tile.buf<array<i64: 128, 64>, f16, "local", #tile.layout<"S[(128, 64):(1@tid_in_wg, 1)]">>
!As = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!Slot = !tile.buf<array<i64: 1>, i32, "shared", #tile.layout<"S[(1):(1)]">>
!Bar = !tile.buf<array<i64: 1>, i64, "shared", #tile.layout<"S[(1):(1)]">>
!T512 = !tile.buf<array<i64: 128, 512>, f32, "tmem", #tile.layout<"S[(128, 512):(1@TLane, 1@TCol)]">>
!T128 = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
!Dr = !tile.buf<array<i64: 128, 128>, f32, "local", #tile.layout<"S[(128, 128):(1@tid_in_wg, 1)]">>
!Dg = !tile.buf<array<i64: 128, 128>, f32, "global", #tile.layout<"S[(128, 128):(128, 1)]">>

module attributes {gpu.container_module} {
  gpu.module @seed {
    gpu.func @hgemm_128x128x64(%A: !llvm.ptr, %B: !llvm.ptr, %D: !llvm.ptr) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %false = arith.constant false
      %a_g = "tile.global"(%A) : (!llvm.ptr) -> !Ag
      %b_g = "tile.global"(%B) : (!llvm.ptr) -> !Ag
      %d_g = "tile.global"(%D) : (!llvm.ptr) -> !Dg
      %slot = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Slot
      %bar = "tile.alloc_shared"() {offset = 8 : i64} : () -> !Bar
      %a_s = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !As
      %b_s = "tile.alloc_shared"() {offset = 17408 : i64} : () -> !As
      %slot_p = "tile.addr"(%slot, %c0) : (!Slot, index) -> !llvm.ptr<3>
      %bar_p = "tile.addr"(%bar, %c0) : (!Bar, index) -> !llvm.ptr<3>
      %tid = gpu.thread_id x
      %warp = arith.divui %tid, %c32 : index
      %warp0 = arith.cmpi eq, %warp, %c0 : index
      %thread0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %thread0 {
        "tile.mbarrier_init"(%bar_p, %c1_i32) : (!llvm.ptr<3>, i32) -> ()
      }
      scf.if %warp0 {
        "tile.tmem_alloc"(%slot_p) {ncols = 512 : i64, cta_group = 1 : i64} : (!llvm.ptr<3>) -> ()
      }
      "tile.fence"() {kind = "mbarrier_init"} : () -> ()
      "tile.cta_sync"() : () -> ()
      %taddr = llvm.load %slot_p : !llvm.ptr<3> -> i32
      %tmem = "tile.tmem"(%taddr) : (i32) -> !T512
      %a_r = "tile.alloc_local"() : () -> !Ar
      %b_r = "tile.alloc_local"() : () -> !Ar
      "tile.copy"(%a_r, %a_g) {scope = "warpgroup"} : (!Ar, !Ag) -> ()
      "tile.copy"(%a_s, %a_r) {scope = "warpgroup"} : (!As, !Ar) -> ()
      "tile.copy"(%b_r, %b_g) {scope = "warpgroup"} : (!Ar, !Ag) -> ()
      "tile.copy"(%b_s, %b_r) {scope = "warpgroup"} : (!As, !Ar) -> ()
      "tile.fence"() {kind = "proxy_async_shared"} : () -> ()
      "tile.cta_sync"() : () -> ()
      %d_t = "tile.slice"(%tmem) {static_offsets = array<i64: 0, 0>} : (!T512) -> !T128
      scf.if %warp0 {
        %elected = "tile.elect_sync"() : () -> i1
        scf.if %elected {
          "tile.gemm_async"(%d_t, %a_s, %b_s, %false) {cta_group = 1 : i64, scope = "thread", transpose_b = false}
              : (!T128, !As, !As, i1) -> ()
          "tile.tcgen05_commit"(%bar_p) {cta_group = 1 : i64} : (!llvm.ptr<3>) -> ()
        }
      }
      "tile.mbarrier_wait"(%bar_p, %c0_i32) {scope = "cta"} : (!llvm.ptr<3>, i32) -> ()
      %d_r = "tile.alloc_local"() : () -> !Dr
      "tile.copy_async"(%d_r, %d_t) {scope = "warpgroup"} : (!Dr, !T128) -> ()
      "tile.tcgen05_wait"() {kind = "ld"} : () -> ()
      "tile.copy"(%d_g, %d_r) {scope = "warpgroup"} : (!Dg, !Dr) -> ()
      "tile.cta_sync"() : () -> ()
      scf.if %warp0 {
        "tile.tmem_relinquish"() {cta_group = 1 : i64} : () -> ()
        %tp = llvm.inttoptr %taddr : i32 to !llvm.ptr<6>
        %c512_i32 = arith.constant 512 : i32
        nvvm.tcgen05.dealloc %tp, %c512_i32 : !llvm.ptr<6>, i32
      }
      gpu.return
    }
  }
}

//--- wgmma.mlir
!Ag = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Bg = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!Ar = !tile.buf<array<i64: 64, 64>, f16, "local", #tile.layout<"S[(64, 2, 32):(2@tid_in_wg, 1@tid_in_wg, 1)]">>
!Br = !tile.buf<array<i64: 128, 64>, f16, "local", #tile.layout<"S[(128, 64):(1@tid_in_wg, 1)]">>
!As = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!Bs = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!Dr = !tile.buf<array<i64: 64, 128>, f32, "local", #tile.layout<"S[(4, 2, 8, 16, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!Dg = !tile.buf<array<i64: 64, 128>, f32, "global", #tile.layout<"S[(64, 128):(128, 1)]">>

module attributes {gpu.container_module} {
  gpu.module @hopper {
    gpu.func @wgmma_64x128x64(%A: !llvm.ptr, %B: !llvm.ptr, %D: !llvm.ptr, %acc: i1) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %a_g = "tile.global"(%A) : (!llvm.ptr) -> !Ag
      %b_g = "tile.global"(%B) : (!llvm.ptr) -> !Bg
      %d_g = "tile.global"(%D) : (!llvm.ptr) -> !Dg
      %a_s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !As
      %b_s = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !Bs
      %a_r = "tile.alloc_local"() : () -> !Ar
      %b_r = "tile.alloc_local"() : () -> !Br
      %d = "tile.alloc_local"() : () -> !Dr
      "tile.copy"(%a_r, %a_g) {scope = "warpgroup"} : (!Ar, !Ag) -> ()
      "tile.copy"(%a_s, %a_r) {scope = "warpgroup"} : (!As, !Ar) -> ()
      "tile.copy"(%b_r, %b_g) {scope = "warpgroup"} : (!Br, !Bg) -> ()
      "tile.copy"(%b_s, %b_r) {scope = "warpgroup"} : (!Bs, !Br) -> ()
      "tile.fence"() {kind = "proxy_async_shared"} : () -> ()
      "tile.cta_sync"() : () -> ()
      "tile.gemm_async"(%d, %a_s, %b_s, %acc) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false}
          : (!Dr, !As, !Bs, i1) -> ()
      "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
      "tile.copy"(%d_g, %d) {scope = "warpgroup"} : (!Dg, !Dr) -> ()
      gpu.return
    }
  }
}
