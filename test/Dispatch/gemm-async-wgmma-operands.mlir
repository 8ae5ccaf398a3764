// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize)' | FileCheck %s
// tile.gemm_async on sm_90a with the operand forms of attention: B MN-major (transpose_b, B is
// K x N) and A in registers (wgmma_a_layout). Rejections are in gemm-async-invalid.mlir.

// B (K = 64, N = 128) MN-major, 128B swizzle: mma_shared_layout(16, "128B", (64, 128)), two
// 64-column chunks of 64 rows x 128 B one after another. The instruction transposes B (layout
// B "row"); B's descriptor 4611686293338849280 = 1 << 62 (128B) | 64 << 32 (SBO 1024 B: 8-row
// groups along K) | 512 << 16 (LBO 8192 B: the second chunk along N); a K step of 16 rows is
// 2048 B, +128 in the start field. A is K-major as before (+2 per K step).
// CHECK-LABEL: gpu.func @ss_transposed_b
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[A0:.*]] = arith.addi %{{.*}}, %c4611686293305360384_i64
// CHECK: %[[B0:.*]] = arith.addi %{{.*}}, %c4611686293338849280_i64
// CHECK: %[[R0:.*]] = nvvm.wgmma.mma_async %[[A0]], %[[B0]], %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: arith.addi %{{.*}}, %c4611686293305360386_i64
// CHECK: arith.addi %{{.*}}, %c4611686293338849408_i64
// CHECK: %[[R1:.*]] = nvvm.wgmma.mma_async {{.*}}, %[[R0]]
// CHECK: arith.addi %{{.*}}, %c4611686293338849536_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c4611686293338849664_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 64, 128>, f16, "shared", #tile.layout<"S[(64, 2, 64):(64, 4096, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 128>, f32, "local", #tile.layout<"S[(4, 2, 8, 16, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @ss_transposed_b(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !A, !B, i1) -> ()
    "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
    gpu.return
  }
}

// -----

// A stage of a ring: a 32-row (K) window, at a dynamic row, of a (128, 64) B with 64B swizzle.
// The window's chunks are 128 rows x 64 B = 8192 B apart (LBO 512 << 16), its 8-row groups
// 512 B (SBO 32 << 32); where the window starts is the run-time start field's business. 2 << 62
// (64B swizzle) makes the constants negative as i64; a K step is 16 rows x 64 B (+64).
// CHECK-LABEL: gpu.func @ss_transposed_b_window
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.addi %{{.*}}, %c-9223371899382267904_i64
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: arith.addi %{{.*}}, %c-9223371899382267840_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.mma_async
!A = !tile.buf<array<i64: 64, 32>, f16, "shared", #tile.layout<"S[(64, 32):(32, 1)] o Sw<2,3,3>">>
!Bring = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 2, 32):(32, 4096, 1)] o Sw<2,3,3>">>
!B = !tile.buf<array<i64: 32, 64>, f16, "shared", #tile.layout<"S[(32, 2, 32):(32, 4096, 1)] o Sw<2,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @ss_transposed_b_window(%stage: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %true = arith.constant true
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %ring = "tile.alloc_shared"() {offset = 4096 : i64} : () -> !Bring
    %b = "tile.slice"(%ring, %stage) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Bring, index) -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %true) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// A (64 x 32) in registers in wgmma_a_layout(64, 32): 16 f16 slots per thread; K step j reads
// slots 8j .. 8j + 7 as four b32 registers (pairs packed low half first), built before the
// fence; the instruction is inline PTX with the 8 accumulators tied (outputs 0-7 are inputs
// 13-20), A's registers "r", B's descriptor "l". B (N = 16, K = 32) K-major, 64B swizzle.
// CHECK-LABEL: gpu.func @rs_k_major_b
// CHECK: %[[P:.*]] = llvm.alloca {{.*}} x !llvm.array<16 x f16>
// CHECK: %[[X0:.*]] = llvm.load %[[P]] : !llvm.ptr -> f16
// CHECK: %[[X1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f16
// CHECK: %[[V0:.*]] = llvm.insertelement %[[X0]]
// CHECK: %[[V1:.*]] = llvm.insertelement %[[X1]], %[[V0]]
// CHECK: %[[R0:.*]] = llvm.bitcast %[[V1]] : vector<2xf16> to i32
// CHECK-COUNT-7: llvm.bitcast %{{.*}} : vector<2xf16> to i32
// CHECK-NOT: llvm.load
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[DB:.*]] = arith.addi %{{.*}}, %c-9223371899415756800_i64
// CHECK: %[[W0:.*]] = llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, {$8, $9, $10, $11}, $12, p, 1, 1, 0;\0A}", "=f,=f,=f,=f,=f,=f,=f,=f,r,r,r,r,l,0,1,2,3,4,5,6,7" %[[R0]], %{{.*}}, %{{.*}}, %{{.*}}, %[[DB]], %{{.*}} : (i32, i32, i32, i32, i64, f32, f32, f32, f32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK: arith.addi %{{.*}}, %c-9223371899415756798_i64
// CHECK: llvm.extractvalue %[[W0]][0]
// CHECK: llvm.inline_asm has_side_effects {{.*}}m64n16k16.f32.f16.f16
// CHECK-NOT: llvm.inline_asm
// CHECK: nvvm.wgmma.commit.group.sync.aligned
!P = !tile.buf<array<i64: 64, 32>, f16, "local", #tile.layout<"S[(4, 2, 8, 4, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!B = !tile.buf<array<i64: 16, 32>, f16, "shared", #tile.layout<"S[(16, 32):(32, 1)] o Sw<2,3,3>">>
!D = !tile.buf<array<i64: 64, 16>, f32, "local", #tile.layout<"S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @rs_k_major_b(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !P
    %b = "tile.alloc_shared"() {offset = 0 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !P, !B, i1) -> ()
    gpu.return
  }
}

// -----

// Attention's P . V: P (128 x 64) bf16 in registers (two M blocks: slots 0-31 and 32-63, each
// its own 32 accumulators of D), V (K = 64, N = 64) MN-major 128B; imm-trans-b = 1. Each M
// block runs the 4 K steps of B (start field +0, +128, +256, +384).
// CHECK-LABEL: gpu.func @rs_transposed_b
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.addi %{{.*}}, %c4611686293338849280_i64
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;
// CHECK: arith.addi %{{.*}}, %c4611686293338849408_i64
// CHECK: llvm.inline_asm
// CHECK: arith.addi %{{.*}}, %c4611686293338849536_i64
// CHECK: llvm.inline_asm
// CHECK: arith.addi %{{.*}}, %c4611686293338849664_i64
// CHECK: llvm.inline_asm
// CHECK: arith.addi %{{.*}}, %c4611686293338849280_i64
// CHECK: llvm.inline_asm
// CHECK-COUNT-3: llvm.inline_asm
// CHECK-NOT: llvm.inline_asm
// CHECK: nvvm.wgmma.commit.group.sync.aligned
!P = !tile.buf<array<i64: 128, 64>, bf16, "local", #tile.layout<"S[(2, 4, 2, 8, 8, 4, 2):(32, 1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!V = !tile.buf<array<i64: 64, 64>, bf16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 64>, f32, "local", #tile.layout<"S[(2, 4, 2, 8, 8, 4, 2):(32, 1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @rs_transposed_b() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %false = arith.constant false
    %p = "tile.alloc_local"() : () -> !P
    %v = "tile.alloc_shared"() {offset = 0 : i64} : () -> !V
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %p, %v, %false) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !P, !V, i1) -> ()
    gpu.return
  }
}
