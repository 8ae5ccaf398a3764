// The copies that feed mma.sync, through tile-to-ptx: FileCheck on the PTX, then ptxas.
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefixes=PTX,SM80 < %t.sm80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.sm90a.ptx
// RUN: FileCheck %s --check-prefixes=PTX,SM90A < %t.sm90a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}

// A CTA stage of A (128 x 64 at m, k) into a 128B-swizzled tile, once with tile.copy (16-byte
// loads, then 16-byte shared stores) and once with tile.copy_async (cp.async.cg 16 bytes); the
// global address is one register plus immediates, so is the shared one.
// PTX-LABEL: .visible .entry stage(
// PTX: ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd[[G:[0-9]+]]];
// PTX-NEXT: ld.global.v4.b32 {{.*}}, [%rd[[G]]+16384];
// PTX-COUNT-6: ld.global.v4.b32
// PTX-NEXT: st.shared.v4.b32 [%rd[[S:[0-9]+]]], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// PTX-NEXT: st.shared.v4.b32 [%rd[[S]]+2048],
// PTX-COUNT-6: st.shared.v4.b32
// PTX: cp.async.cg.shared.global [%rd[[S]]+16384], [%rd[[G]]], 16;
// PTX-NEXT: cp.async.cg.shared.global [%rd[[S]]+18432], [%rd[[G]]+16384], 16;
// PTX-COUNT-6: cp.async.cg.shared.global
// PTX-NEXT: cp.async.commit_group;
// PTX-NEXT: cp.async.wait_group 0;
// PTX: ret;

// One warp's seed-001 operands: a 64x16 A slab (ldmatrix.x4) and a 64x16 slab of B stored
// N x K (ldmatrix.x4), at a warp-dependent row offset, plus the same slabs of B stored K x N
// (ldmatrix.x4.trans) and a single n8 tile of it (.x2.trans). Each slab's address: one XOR
// for the K step, immediates for the 16-row steps.
// PTX-LABEL: .visible .entry slabs(
// PTX: xor.b64 %rd[[A:[0-9]+]], %rd{{[0-9]+}}, 32;
// PTX-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd[[A]]];
// PTX-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [%rd[[A]]+2048];
// PTX-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [%rd[[A]]+4096];
// PTX-NEXT: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{.*}}, [%rd[[A]]+6144];
// PTX-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}+16384];
// PTX-NOT: ldmatrix
// PTX: ret;

// An accumulator (loaded 8 bytes per register pair) cast to f16 / bf16 in pairs and stored 4
// bytes per pair; a stmatrix of the f16 result into shared memory where the chip has it
// (sm_90+), else 4-byte shared stores.
// PTX-LABEL: .visible .entry epilogue(
// PTX: ld.global.v2.b32 {%r[[LO:[0-9]+]], %r[[HI:[0-9]+]]}
// PTX-NEXT: cvt.rn.f16x2.f32 %r{{[0-9]+}}, %r[[HI]], %r[[LO]];
// PTX-NEXT: ld.global.v2.b32
// PTX-NEXT: cvt.rn.f16x2.f32
// PTX-NEXT: cvt.rn.bf16x2.f32 %r{{[0-9]+}}, %r[[HI]], %r[[LO]];
// PTX-NEXT: cvt.rn.bf16x2.f32
// PTX: st.global.b32
// SM90A: stmatrix.sync.aligned.m8n8.x2.shared.b16 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}};
// SM80-NOT: stmatrix
// SM80: st.shared.b32
// PTX: ret;

!A = !tile.buf<array<i64: 512, 512>, f16, "global", #tile.layout<"S[(512, 512):(512, 1)]">>
!W = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(512, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!Rows = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!Slab = !tile.buf<array<i64: 64, 16>, f16, "shared", #tile.layout<"S[(64, 16):(64, 1)] + {m: 16} o Sw<3,3,3>">>
!KxN = !tile.buf<array<i64: 16, 64>, f16, "shared", #tile.layout<"S[(16, 64):(64, 1)] o Sw<3,3,3>">>
!KxN8 = !tile.buf<array<i64: 16, 8>, f16, "shared", #tile.layout<"S[(16, 8):(64, 1)] o Sw<3,3,3>">>
!Af = !tile.buf<array<i64: 64, 16>, f16, "local", #tile.layout<"S[(4, 2, 8, 2, 4, 2):(8, 2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 64, 16>, f16, "local", #tile.layout<"S[(8, 8, 2, 4, 2):(4, 4@laneid, 2, 1@laneid, 1)]">>
!Bkn = !tile.buf<array<i64: 16, 64>, f16, "local", #tile.layout<"S[(2, 4, 2, 8, 8):(2, 1@laneid, 1, 4, 4@laneid)]">>
!Bkn8 = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Acc = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!H = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Hb = !tile.buf<array<i64: 16, 8>, bf16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Dg = !tile.buf<array<i64: 16, 8>, f16, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
!Dgb = !tile.buf<array<i64: 16, 8>, bf16, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
!Ds = !tile.buf<array<i64: 16, 8>, f16, "shared", #tile.layout<"S[(16, 8):(8, 1)]">>

module attributes {gpu.container_module} {
  gpu.module @copies {
    gpu.func @stage(%p: !llvm.ptr, %mt: index, %kt: index) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %m = arith.muli %mt, %c128 : index
      %k = arith.muli %kt, %c64 : index
      %a = "tile.global"(%p) : (!llvm.ptr) -> !A
      %w = "tile.slice"(%a, %m, %k) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} : (!A, index, index) -> !W
      %s0 = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
      %s1 = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !Sm
      "tile.copy"(%s0, %w) {scope = "cta"} : (!Sm, !W) -> ()
      "tile.copy_async"(%s1, %w) {scope = "cta"} : (!Sm, !W) -> ()
      "tile.async_commit"() {kind = "cp_async"} : () -> ()
      "tile.async_wait"() {kind = "cp_async", pending = 0 : i64} : () -> ()
      gpu.return
    }

    gpu.func @slabs(%out: !llvm.ptr) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %tid = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %warp = arith.divui %tid, %c32 : index
      %row0 = arith.muli %warp, %c64 : index
      %as = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
      %bs = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !Sm
      %ar = "tile.slice"(%as, %row0) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Sm, index) -> !Rows
      %a1 = "tile.slice"(%ar) {static_offsets = array<i64: 0, 16>} : (!Rows) -> !Slab
      %br = "tile.slice"(%bs, %row0) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Sm, index) -> !Rows
      %b1 = "tile.slice"(%br) {static_offsets = array<i64: 0, 16>} : (!Rows) -> !Slab
      %bk = "tile.slice"(%bs) {static_offsets = array<i64: 16, 0>} : (!Sm) -> !KxN
      %bk8 = "tile.slice"(%bs) {static_offsets = array<i64: 32, 0>} : (!Sm) -> !KxN8
      %af = "tile.alloc_local"() : () -> !Af
      %bf = "tile.alloc_local"() : () -> !Bf
      %bkn = "tile.alloc_local"() : () -> !Bkn
      %bkn8 = "tile.alloc_local"() : () -> !Bkn8
      "tile.copy"(%af, %a1) {scope = "warp"} : (!Af, !Slab) -> ()
      "tile.copy"(%bf, %b1) {scope = "warp"} : (!Bf, !Slab) -> ()
      "tile.copy"(%bkn, %bk) {scope = "warp"} : (!Bkn, !KxN) -> ()
      "tile.copy"(%bkn8, %bk8) {scope = "warp"} : (!Bkn8, !KxN8) -> ()
      // Keep the fragments alive: one mma per operand pair.
      %acc = "tile.alloc_local"() : () -> !Acc
      %af0 = "tile.view"(%af) : (!Af) -> !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
      %bf0 = "tile.view"(%bf) : (!Bf) -> !tile.buf<array<i64: 8, 16>, f16, "local", #tile.layout<"S[(8, 2, 4, 2):(4@laneid, 2, 1@laneid, 1)]">>
      "tile.gemm"(%acc, %af0, %bf0, %acc) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp", transpose_a = false, transpose_b = true}
          : (!Acc, !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>, !tile.buf<array<i64: 8, 16>, f16, "local", #tile.layout<"S[(8, 2, 4, 2):(4@laneid, 2, 1@laneid, 1)]">>, !Acc) -> ()
      "tile.gemm"(%acc, %af0, %bkn8, %acc) {alpha = 1.0 : f32, beta = 1.0 : f32, scope = "warp", transpose_a = false, transpose_b = false}
          : (!Acc, !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>, !Bkn8, !Acc) -> ()
      %o = "tile.global"(%out) : (!llvm.ptr) -> !tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
      "tile.copy"(%o, %acc) {scope = "warp"} : (!tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>, !Acc) -> ()
      gpu.return
    }

    gpu.func @epilogue(%in: !llvm.ptr, %p: !llvm.ptr, %q: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %acc = "tile.alloc_local"() : () -> !Acc
      %i = "tile.global"(%in) : (!llvm.ptr) -> !tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
      "tile.copy"(%acc, %i) {scope = "warp"} : (!Acc, !tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>) -> ()
      %h = "tile.alloc_local"() : () -> !H
      %hb = "tile.alloc_local"() : () -> !Hb
      "tile.cast"(%h, %acc) {scope = "warp"} : (!H, !Acc) -> ()
      "tile.cast"(%hb, %acc) {scope = "warp"} : (!Hb, !Acc) -> ()
      %g = "tile.global"(%p) : (!llvm.ptr) -> !Dg
      %gb = "tile.global"(%q) : (!llvm.ptr) -> !Dgb
      "tile.copy"(%g, %h) {scope = "warp"} : (!Dg, !H) -> ()
      "tile.copy"(%gb, %hb) {scope = "warp"} : (!Dgb, !Hb) -> ()
      %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Ds
      "tile.copy"(%s, %h) {scope = "warp"} : (!Ds, !H) -> ()
      gpu.return
    }
  }
}
