// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize)' | FileCheck %s
// tile.gemm_async on sm_90a -> wgmma.fence, (M / 64) x (K / 16) wgmma.mma_async m64nNk16 from
// shared-memory descriptors into the accumulator registers, wgmma.commit_group. The wait is the
// kernel's (tile.async_wait, kind "wgmma").

// M = 64, N = 128, K = 64, 128B swizzle, dynamic accum: the 64 accumulator registers are
// selected between D's registers and 0.0 before the fence (scale-d stays 1), then 4 wgmma
// whose descriptors advance 32 bytes (+2 in the start field) per K step.
// Descriptor 0x4000004000010000 = 4611686293305360384: 128B swizzle (1 << 62), SBO 1024 B
// (64 << 32), LBO 16 B (1 << 16).
// CHECK-LABEL: gpu.func @m64n128k64
// CHECK-DAG: %[[C0:.*]] = arith.constant 4611686293305360384 : i64
// CHECK-DAG: %[[C1:.*]] = arith.constant 4611686293305360386 : i64
// CHECK-DAG: %[[C2:.*]] = arith.constant 4611686293305360388 : i64
// CHECK-DAG: %[[C3:.*]] = arith.constant 4611686293305360390 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[D:.*]] = llvm.alloca {{.*}} x !llvm.array<64 x f32>
// CHECK: %[[X0:.*]] = llvm.load %[[D]] : !llvm.ptr -> f32
// CHECK-COUNT-64: arith.select %arg0, %{{.*}}, %[[ZERO]] : f32
// CHECK-NOT: arith.select
// CHECK: %[[ACC:.*]] = llvm.insertvalue %{{.*}}, %{{.*}}[63] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK: %[[SA:.*]] = arith.shrui
// CHECK: %[[SB:.*]] = arith.shrui
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[A0:.*]] = arith.addi %[[SA]], %[[C0]]
// CHECK: %[[B0:.*]] = arith.addi %[[SB]], %[[C0]]
// CHECK: %[[R0:.*]] = nvvm.wgmma.mma_async %[[A0]], %[[B0]], %[[ACC]], <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: %[[A1:.*]] = arith.addi %[[SA]], %[[C1]]
// CHECK: %[[R1:.*]] = nvvm.wgmma.mma_async %[[A1]], %{{.*}}, %[[R0]]
// CHECK: %[[A2:.*]] = arith.addi %[[SA]], %[[C2]]
// CHECK: %[[R2:.*]] = nvvm.wgmma.mma_async %[[A2]], %{{.*}}, %[[R1]]
// CHECK: %[[A3:.*]] = arith.addi %[[SA]], %[[C3]]
// CHECK: %[[R3:.*]] = nvvm.wgmma.mma_async %[[A3]], %{{.*}}, %[[R2]]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[Y0:.*]] = llvm.extractvalue %[[R3]][0]
// CHECK: llvm.store %[[Y0]], %[[D]] : f32, !llvm.ptr
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 128>, f32, "local", #tile.layout<"S[(4, 2, 8, 16, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @m64n128k64(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
    gpu.return
  }
}

// -----

// N = 320 (above wgmma's 256): two m64n160 instructions along N in one group, each with its
// own 80 accumulator registers (D's registers 0-79 and 80-159), all under one fence and one
// commit. The second reads B from row 160: 160 rows x 128 B = 20480 B, +1280 in the start field.
// CHECK-LABEL: gpu.func @m64n320k64
// CHECK-DAG: %[[B1:.*]] = arith.constant 4611686293305361664 : i64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[R0:.*]] = nvvm.wgmma.mma_async {{.*}} <m = 64, n = 160, k = 16>
// CHECK: %[[R1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[R0]], <m = 64, n = 160, k = 16>
// CHECK: %[[R2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[R1]], <m = 64, n = 160, k = 16>
// CHECK: %[[R3:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[R2]], <m = 64, n = 160, k = 16>
// CHECK: arith.addi %{{.*}}, %[[B1]] : i64
// CHECK-NOT: %[[R3]], <m
// CHECK: %[[S0:.*]] = nvvm.wgmma.mma_async {{.*}} <m = 64, n = 160, k = 16>
// CHECK: %[[S1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[S0]], <m = 64, n = 160, k = 16>
// CHECK: %[[S2:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[S1]], <m = 64, n = 160, k = 16>
// CHECK: %[[S3:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[S2]], <m = 64, n = 160, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.fence.aligned
// CHECK: llvm.extractvalue %[[R3]][79]
// CHECK: llvm.extractvalue %[[S3]][79]
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 320, 64>, f16, "shared", #tile.layout<"S[(320, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 320>, f32, "local", #tile.layout<"S[(4, 2, 8, 40, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @m64n320k64(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    "tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()
    gpu.return
  }
}

// -----

// M = 128: two 64-row blocks with 32 registers each (slots 0-31 and 32-63), 2 K steps each.
// 64B swizzle (2 << 62: negative as i64); block 1 of A starts 64 rows x 64 B = 4096 B later
// (+256 in the start field). accum = true: D's registers are read as they are, no select.
// CHECK-LABEL: gpu.func @m128n64k32_accumulate
// CHECK-NOT: arith.select
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.addi %{{.*}}, %c-9223371899415756800_i64
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK: arith.addi %{{.*}}, %c-9223371899415756798_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c-9223371899415756544_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c-9223371899415756542_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.getelementptr %{{.*}}[63] : (!llvm.ptr) -> !llvm.ptr, f32
!A = !tile.buf<array<i64: 128, 32>, f16, "shared", #tile.layout<"S[(128, 32):(32, 1)] o Sw<2,3,3>">>
!B = !tile.buf<array<i64: 64, 32>, f16, "shared", #tile.layout<"S[(64, 32):(32, 1)] o Sw<2,3,3>">>
!D = !tile.buf<array<i64: 128, 64>, f32, "local", #tile.layout<"S[(2, 4, 2, 8, 8, 4, 2):(32, 1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @m128n64k32_accumulate() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %true = arith.constant true
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %true) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// accum = false: the chain starts from zeros, D's registers are not read (only written).
// N = 8 (the smallest wgmma: 4 registers), K = 16 (one instruction), no swizzle.
// CHECK-LABEL: gpu.func @m64n8k16_overwrite
// CHECK-NOT: llvm.load
// CHECK: %[[ACC:.*]] = llvm.insertvalue %cst, %{{.*}}[3] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[ACC]], <m = 64, n = 8, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-4: llvm.store
!A = !tile.buf<array<i64: 64, 16>, f16, "shared", #tile.layout<"S[(8, 8, 2, 8):(128, 8, 64, 1)]">>
!B = !tile.buf<array<i64: 8, 16>, f16, "shared", #tile.layout<"S[(8, 2, 8):(8, 64, 1)]">>
!D = !tile.buf<array<i64: 64, 8>, f32, "local", #tile.layout<"S[(4, 2, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @m64n8k16_overwrite() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %false = arith.constant false
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 2048 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %false) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// bf16, N = 256 (the widest: 128 registers), 32B swizzle: every K step of 32 B crosses into
// the next 32-byte chunk, 256 rows x 32 B = 8192 B further (+512 in B's start field).
// CHECK-LABEL: gpu.func @bf16_m64n256k64_sw32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.addi %{{.*}}, %c-4611685949707845632_i64
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: arith.addi %{{.*}}, %c-4611685949707845120_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c-4611685949707844608_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addi %{{.*}}, %c-4611685949707844096_i64
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.mma_async
!A = !tile.buf<array<i64: 64, 64>, bf16, "shared", #tile.layout<"S[(64, 4, 16):(16, 1024, 1)] o Sw<1,3,3>">>
!B = !tile.buf<array<i64: 256, 64>, bf16, "shared", #tile.layout<"S[(256, 4, 16):(16, 4096, 1)] o Sw<1,3,3>">>
!D = !tile.buf<array<i64: 64, 256>, f32, "local", #tile.layout<"S[(4, 2, 8, 32, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @bf16_m64n256k64_sw32() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %false = arith.constant false
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %false) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// Any register order is accepted when the lanes and warps are the ISA's: here the two columns
// of a pair are 2 slots apart and the rows +8 1 slot apart, so accumulator register 1
// (row +0, column +1) lives in slot 2 and register 2 (row +8, column +0) in slot 1.
// CHECK-LABEL: gpu.func @permuted_slots
// CHECK: %[[D:.*]] = llvm.alloca {{.*}} x !llvm.array<8 x f32>
// CHECK: %[[R:.*]] = nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[R0:.*]] = llvm.extractvalue %[[R]][0]
// CHECK: llvm.store %[[R0]], %[[D]]
// CHECK: %[[R1:.*]] = llvm.extractvalue %[[R]][1]
// CHECK: %[[P2:.*]] = llvm.getelementptr %[[D]][2]
// CHECK: llvm.store %[[R1]], %[[P2]]
// CHECK: %[[R2:.*]] = llvm.extractvalue %[[R]][2]
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[D]][1]
// CHECK: llvm.store %[[R2]], %[[P1]]
!A = !tile.buf<array<i64: 64, 16>, f16, "shared", #tile.layout<"S[(64, 16):(16, 1)] o Sw<1,3,3>">>
!B = !tile.buf<array<i64: 16, 16>, f16, "shared", #tile.layout<"S[(16, 16):(16, 1)] o Sw<1,3,3>">>
!D = !tile.buf<array<i64: 64, 16>, f32, "local", #tile.layout<"S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 1, 4@laneid, 4, 1@laneid, 2)]">>
gpu.module @m {
  gpu.func @permuted_slots() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %false = arith.constant false
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 2048 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm_async"(%d, %a, %b, %false) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}
