// Attention's two GEMMs in one warpgroup through tile-to-ptx, checked in the PTX and assembled
// by ptxas: S = Q . K^T (A and B K-major in shared memory), P = f16(S) by tile.cast in place,
// O = P . V with P in registers (wgmma_a_layout) and V (K = kv rows, N = head dim) MN-major
// (transpose_b). Operands are staged global -> registers -> shared with tile.copy.
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o %t.cubin %}

// S: 4 wgmma from two descriptors, imm-trans-a = imm-trans-b = 0.
// CHECK: .target sm_90a
// CHECK: fence.proxy.async.shared::cta;
// CHECK: bar.sync 0;
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{[{](%r[0-9]+, ){31}%r[0-9]+[}]}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// P: the 32 accumulator registers of a thread become 16 packed f16x2 registers, in place.
// CHECK: cvt.rn.f16x2.f32 [[P0:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-COUNT-3: cvt.rn.f16x2.f32
// CHECK: cvt.rn.f16x2.f32 [[P4:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-COUNT-11: cvt.rn.f16x2.f32
// CHECK-NOT: cvt
// O: fenced after P is written; each K step reads four of P's registers and transposes B.
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{[{](%r[0-9]+, ){31}%r[0-9]+[}]}}, {[[P0]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{[{](%r[0-9]+, ){31}%r[0-9]+[}]}}, {[[P4]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// CHECK-COUNT-2: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK: st.global

!Qg = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!KVg = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Og = !tile.buf<array<i64: 64, 64>, f32, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Qr = !tile.buf<array<i64: 64, 64>, f16, "local", #tile.layout<"S[(64, 2, 32):(2@tid_in_wg, 1@tid_in_wg, 1)]">>
!KVr = !tile.buf<array<i64: 64, 64>, f16, "local", #tile.layout<"S[(64, 2, 32):(2@tid_in_wg, 1@tid_in_wg, 1)]">>
!Qs = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!Ks = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!Vs = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!S = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!P = !tile.buf<array<i64: 64, 64>, f16, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!O = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
module attributes {gpu.container_module} {
  gpu.module @gemm_async {
    gpu.func @attention_kv64_d64_f16(%Q: !llvm.ptr, %K: !llvm.ptr, %V: !llvm.ptr, %O: !llvm.ptr) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>,
                    tile.params = ["Q", "K", "V", "O"]} {
      %q_g = "tile.global"(%Q) : (!llvm.ptr) -> !Qg
      %k_g = "tile.global"(%K) : (!llvm.ptr) -> !KVg
      %v_g = "tile.global"(%V) : (!llvm.ptr) -> !KVg
      %o_g = "tile.global"(%O) : (!llvm.ptr) -> !Og
      %q_s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Qs
      %k_s = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !Ks
      %v_s = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !Vs
      %q_r = "tile.alloc_local"() : () -> !Qr
      %kv_r = "tile.alloc_local"() : () -> !KVr
      %s = "tile.alloc_local"() : () -> !S
      %p = "tile.alloc_local"() : () -> !P
      %o = "tile.alloc_local"() : () -> !O
      %false = arith.constant false
      "tile.copy"(%q_r, %q_g) {dispatch = "elementwise", scope = "warpgroup"} : (!Qr, !Qg) -> ()
      "tile.copy"(%q_s, %q_r) {dispatch = "elementwise", scope = "warpgroup"} : (!Qs, !Qr) -> ()
      "tile.copy"(%kv_r, %k_g) {dispatch = "elementwise", scope = "warpgroup"} : (!KVr, !KVg) -> ()
      "tile.copy"(%k_s, %kv_r) {dispatch = "elementwise", scope = "warpgroup"} : (!Ks, !KVr) -> ()
      "tile.copy"(%kv_r, %v_g) {dispatch = "elementwise", scope = "warpgroup"} : (!KVr, !KVg) -> ()
      "tile.copy"(%v_s, %kv_r) {dispatch = "elementwise", scope = "warpgroup"} : (!Vs, !KVr) -> ()
      "tile.fence"() {kind = "proxy_async_shared"} : () -> ()
      "tile.cta_sync"() : () -> ()
      "tile.gemm_async"(%s, %q_s, %k_s, %false) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!S, !Qs, !Ks, i1) -> ()
      "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
      "tile.cast"(%p, %s) {scope = "warpgroup"} : (!P, !S) -> ()
      "tile.gemm_async"(%o, %p, %v_s, %false) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!O, !P, !Vs, i1) -> ()
      "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
      "tile.copy"(%o_g, %o) {dispatch = "elementwise", scope = "warpgroup"} : (!Og, !O) -> ()
      gpu.return
    }
  }
}

