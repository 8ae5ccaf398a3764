// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_100a},tile-materialize,canonicalize)' | FileCheck %s
// tile.gemm_async on sm_100a -> K/16 nvvm.tcgen05.mma issued by one thread: shared-memory
// descriptors (constant part + the tiles' run-time start field) advancing along K, the
// instruction descriptor, the TMEM address of D, and enable-input-d = accum, then true.

// Seed 000: M = N = 128, K = 64, 128B swizzle, D = columns 128..255 of the TMEM allocation,
// accum dynamic (i != 0), issued by the elected thread of warp (tid / 32) % 4 == 0.
// Descriptor 0x4000404000010000 = 4611756662049538048: 128B swizzle (2 << 61), bit 46, SBO 1024
// (64 << 32), LBO 16 (1 << 16); each K step adds 32 bytes = 2 to the start field.
// Instruction descriptor 136314896 = M/16 << 24 | N/8 << 17 | f32 accumulator (1 << 4).
// CHECK-LABEL: gpu.func @seed_k64
// CHECK-DAG: %[[C0:.*]] = arith.constant 4611756662049538048 : i64
// CHECK-DAG: %[[C1:.*]] = arith.constant 4611756662049538050 : i64
// CHECK-DAG: %[[C2:.*]] = arith.constant 4611756662049538052 : i64
// CHECK-DAG: %[[C3:.*]] = arith.constant 4611756662049538054 : i64
// CHECK-DAG: %[[TRUE:.*]] = arith.constant true
// CHECK-DAG: %[[IDESC:.*]] = arith.constant 136314896 : i32
// CHECK-DAG: %[[COL128:.*]] = arith.constant 128 : i32
// CHECK-DAG: %[[MASK:.*]] = arith.constant 262143 : i64
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @__tile_smem : !llvm.ptr<3>
// CHECK: %[[APTR:.*]] = llvm.getelementptr %[[SMEM]][1024]
// CHECK: %[[BPTR:.*]] = llvm.getelementptr %[[SMEM]][17408]
// CHECK: nvvm.elect.sync
// CHECK: %[[ACC:.*]] = arith.cmpi ne
// CHECK: %[[AADDR:.*]] = llvm.ptrtoint %[[APTR]] : !llvm.ptr<3> to i64
// CHECK: %[[AMASKED:.*]] = arith.andi %[[AADDR]], %[[MASK]]
// CHECK: %[[SA:.*]] = arith.shrui %[[AMASKED]]
// CHECK: %[[BADDR:.*]] = llvm.ptrtoint %[[BPTR]] : !llvm.ptr<3> to i64
// CHECK: %[[SB:.*]] = arith.shrui
// CHECK: %[[TADDR:.*]] = arith.addi %arg0, %[[COL128]] : i32
// CHECK: %[[DT:.*]] = llvm.inttoptr %[[TADDR]] : i32 to !llvm.ptr<6>
// CHECK: %[[A0:.*]] = arith.addi %[[SA]], %[[C0]]
// CHECK: %[[B0:.*]] = arith.addi %[[SB]], %[[C0]]
// CHECK: nvvm.tcgen05.mma %[[DT]], %[[A0]], %[[B0]], %[[IDESC]], %[[ACC]] {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>}
// CHECK: %[[A1:.*]] = arith.addi %[[SA]], %[[C1]]
// CHECK: %[[B1:.*]] = arith.addi %[[SB]], %[[C1]]
// CHECK: nvvm.tcgen05.mma %[[DT]], %[[A1]], %[[B1]], %[[IDESC]], %[[TRUE]]
// CHECK: %[[A2:.*]] = arith.addi %[[SA]], %[[C2]]
// CHECK: nvvm.tcgen05.mma %[[DT]], %[[A2]], %{{.*}}, %[[IDESC]], %[[TRUE]]
// CHECK: %[[A3:.*]] = arith.addi %[[SA]], %[[C3]]
// CHECK: nvvm.tcgen05.mma %[[DT]], %[[A3]], %{{.*}}, %[[IDESC]], %[[TRUE]]
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK-NOT: tile.
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!T512 = !tile.buf<array<i64: 128, 512>, f32, "tmem", #tile.layout<"S[(128, 512):(1@TLane, 1@TCol)]">>
!T128 = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)] + {TCol: 128}">>
gpu.module @m {
  gpu.func @seed_k64(%taddr: i32, %i: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %a = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 17408 : i64} : () -> !A
    %tmem = "tile.tmem"(%taddr) : (i32) -> !T512
    %d = "tile.slice"(%tmem) {static_offsets = array<i64: 0, 128>} : (!T512) -> !T128
    %tid = gpu.thread_id x
    %w = arith.divui %tid, %c32 : index
    %warp = arith.remui %w, %c4 : index
    %warp0 = arith.cmpi eq, %warp, %c0 : index
    scf.if %warp0 {
      %elected = "tile.elect_sync"() : () -> i1
      scf.if %elected {
        %accum = arith.cmpi ne, %i, %c0 : index
        "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!T128, !A, !A, i1) -> ()
      }
    }
    gpu.return
  }
}

// -----

// M = 64 (PTX data path layout F: rows in lanes 0-15 of each 32-lane quarter, here from lane
// 16), N = 64, K = 64 of bf16 in 64B-swizzled tiles: K spans two 32-element chunks, so the
// third K step jumps by the chunk stride 64 rows x 64 B = 4096 B (+256), not by 32 B. The 64B
// code 4 << 61 sets bit 63: the constants are negative as i64. Issued by thread 0; accum false.
// Instruction descriptor 68158608 = 4 << 24 | 8 << 17 | bf16 B (1 << 10) | bf16 A (1 << 7) | f32.
// CHECK-LABEL: gpu.func @m64_bf16_sw64
// CHECK-DAG: %[[FALSE:.*]] = arith.constant false
// CHECK-DAG: %[[TRUE:.*]] = arith.constant true
// CHECK-DAG: %[[IDESC:.*]] = arith.constant 68158608 : i32
// CHECK-DAG: %[[LANE16:.*]] = arith.constant 1048576 : i32
// CHECK: %[[TADDR:.*]] = arith.addi %arg0, %[[LANE16]] : i32
// CHECK: %[[DT:.*]] = llvm.inttoptr %[[TADDR]]
// CHECK: arith.addi %{{.*}}, %c-9223301530671579136_i64
// CHECK: nvvm.tcgen05.mma %[[DT]], %{{.*}}, %{{.*}}, %[[IDESC]], %[[FALSE]]
// CHECK: arith.addi %{{.*}}, %c-9223301530671579134_i64
// CHECK: nvvm.tcgen05.mma %[[DT]], %{{.*}}, %{{.*}}, %[[IDESC]], %[[TRUE]]
// CHECK: arith.addi %{{.*}}, %c-9223301530671578880_i64
// CHECK: nvvm.tcgen05.mma %[[DT]], %{{.*}}, %{{.*}}, %[[IDESC]], %[[TRUE]]
// CHECK: arith.addi %{{.*}}, %c-9223301530671578878_i64
// CHECK: nvvm.tcgen05.mma %[[DT]], %{{.*}}, %{{.*}}, %[[IDESC]], %[[TRUE]]
// CHECK-NOT: nvvm.tcgen05.mma
!A = !tile.buf<array<i64: 64, 64>, bf16, "shared", #tile.layout<"S[(64, 2, 32):(32, 2048, 1)] o Sw<2,3,3>">>
!T = !tile.buf<array<i64: 128, 512>, f32, "tmem", #tile.layout<"S[(128, 512):(1@TLane, 1@TCol)]">>
!D = !tile.buf<array<i64: 64, 64>, f32, "tmem", #tile.layout<"S[(4, 16, 64):(32@TLane, 1@TLane, 1@TCol)] + {TLane: 16}">>
gpu.module @m {
  gpu.func @m64_bf16_sw64(%taddr: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !A
    %tmem = "tile.tmem"(%taddr) : (i32) -> !T
    %d = "tile.view"(%tmem) : (!T) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      "tile.gemm_async"(%d, %a, %b, %false) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

// cta_group 2, M = 256: each CTA of the pair holds 128 rows of A and D (layout A of the PTX
// data path) and N / 2 = 64 rows of B; the instruction descriptor says M = 256 (16 << 24).
// No swizzle: interleaved core matrices, LBO 128 B (8 << 16), SBO 8 rows x 32 x 2 B = 512 B
// (32 << 32); a K step is two core matrices, 256 B (+16).
// CHECK-LABEL: gpu.func @cta_pair_m256_interleaved
// CHECK-DAG: %[[IDESC:.*]] = arith.constant 270532624 : i32
// CHECK-DAG: %[[K0:.*]] = arith.constant 70506183655424 : i64
// CHECK-DAG: %[[K1:.*]] = arith.constant 70506183655440 : i64
// CHECK: %[[DT:.*]] = llvm.inttoptr %arg0 : i32 to !llvm.ptr<6>
// CHECK: %[[A0:.*]] = arith.addi %{{.*}}, %[[K0]]
// CHECK: %[[B0:.*]] = arith.addi %{{.*}}, %[[K0]]
// CHECK: nvvm.tcgen05.mma %[[DT]], %[[A0]], %[[B0]], %[[IDESC]], %{{.*}} {ctaGroup = #nvvm.cta_group<cta_2>, kind = #nvvm.tcgen05_mma_kind<f16>}
// CHECK: %[[A1:.*]] = arith.addi %{{.*}}, %[[K1]]
// CHECK: nvvm.tcgen05.mma %[[DT]], %[[A1]], %{{.*}}, %[[IDESC]], %{{.*}} {ctaGroup = #nvvm.cta_group<cta_2>
// CHECK-NOT: nvvm.tcgen05.mma
!A = !tile.buf<array<i64: 128, 32>, f16, "shared", #tile.layout<"S[(16, 8, 4, 8):(256, 8, 64, 1)]">>
!B = !tile.buf<array<i64: 64, 32>, f16, "shared", #tile.layout<"S[(8, 8, 4, 8):(256, 8, 64, 1)]">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @cta_pair_m256_interleaved(%taddr: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.tmem"(%taddr) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 2 : i64, scope = "thread", transpose_b = false} : (!D, !A, !B, i1) -> ()
    }
    gpu.return
  }
}

// -----

// cta_group 2, M = 128 (layout B: per CTA 64 rows; columns N/2.. live in lanes 64..127), N = 64
// so B holds 32 rows per CTA; K = 16 is a single instruction. D is a 32-column window of the
// allocation starting at a run-time column j (a multiple of 32): its address adds j.
// CHECK-LABEL: gpu.func @cta_pair_m128_dynamic_columns
// CHECK-DAG: %[[IDESC:.*]] = arith.constant 135266320 : i32
// CHECK: %[[COLS:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[TADDR:.*]] = arith.addi %arg0, %[[COLS]] : i32
// CHECK: %[[DT:.*]] = llvm.inttoptr %[[TADDR]]
// CHECK: nvvm.tcgen05.mma %[[DT]], %{{.*}}, %{{.*}}, %[[IDESC]], %{{.*}} {ctaGroup = #nvvm.cta_group<cta_2>
// CHECK-NOT: nvvm.tcgen05.mma
!A = !tile.buf<array<i64: 64, 16>, f16, "shared", #tile.layout<"S[(64, 16):(16, 1)] o Sw<1,3,3>">>
!B = !tile.buf<array<i64: 32, 16>, f16, "shared", #tile.layout<"S[(32, 16):(16, 1)] o Sw<1,3,3>">>
!T = !tile.buf<array<i64: 64, 2, 256>, f32, "tmem", #tile.layout<"S[(64, 2, 256):(1@TLane, 64@TLane, 1@TCol)]">>
!D = !tile.buf<array<i64: 64, 2, 32>, f32, "tmem", #tile.layout<"S[(64, 2, 32):(1@TLane, 64@TLane, 1@TCol)]">>
!Dv = !tile.buf<array<i64: 64, 64>, f32, "tmem", #tile.layout<"S[(64, 2, 32):(1@TLane, 64@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @cta_pair_m128_dynamic_columns(%taddr: i32, %j: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 2048 : i64} : () -> !B
    %tmem = "tile.tmem"(%taddr) : (i32) -> !T
    %win = "tile.slice"(%tmem, %j) {static_offsets = array<i64: 0, 0, -9223372036854775808>} : (!T, index) -> !D
    %d = "tile.view"(%win) : (!D) -> !Dv
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      "tile.gemm_async"(%d, %a, %b, %false) {cta_group = 2 : i64, scope = "thread", transpose_b = false} : (!Dv, !A, !B, i1) -> ()
    }
    gpu.return
  }
}

// -----

// One issuer proven through a combined condition in a 256-thread block: warp index 5 (tid / 32
// == 5) and elect.sync, in one arith.andi.
// CHECK-LABEL: gpu.func @one_issuer_of_eight_warps
// CHECK-COUNT-2: nvvm.tcgen05.mma
// CHECK-NOT: nvvm.tcgen05.mma
!A = !tile.buf<array<i64: 128, 32>, f16, "shared", #tile.layout<"S[(128, 32):(32, 1)] o Sw<2,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @one_issuer_of_eight_warps(%taddr: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %c5 = arith.constant 5 : index
    %c32 = arith.constant 32 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%taddr) : (i32) -> !D
    %tid = gpu.thread_id x
    %w = arith.divui %tid, %c32 : index
    %warp5 = arith.cmpi eq, %w, %c5 : index
    %elected = "tile.elect_sync"() : () -> i1
    %issuer = arith.andi %warp5, %elected : i1
    scf.if %issuer {
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}
