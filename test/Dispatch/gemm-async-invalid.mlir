// tile.gemm_async and tile.copy_async (TMEM -> registers) that no variant can lower: one
// diagnostic at the op, listing each variant's reasons (never an LLVM abort).
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/sm100a.mlir --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_100a})'
// RUN: tilemlir-opt %t/sm90a.mlir --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})'
// RUN: tilemlir-opt %t/sm80.mlir --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80})'

//--- sm100a.mlir
// wgmma does not exist on Blackwell; here tcgen05 rejects the register accumulator as well.
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @wgmma_on_sm100a(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): target: wgmma.mma_async is not available on sm_100a}}
    "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}

// -----

// tf32 inputs (f32 in shared memory) are kind::tf32, not this variant's kind::f16.
!A = !tile.buf<array<i64: 128, 32>, f32, "shared", #tile.layout<"S[(128, 32):(32, 1)] o Sw<3,2,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @tf32(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): dtypes: A is f32, needs f16 or bf16; B is f32, needs f16 or bf16}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 128, 128>, i8, "shared", #tile.layout<"S[(128, 128):(128, 1)] o Sw<3,4,3>">>
!D = !tile.buf<array<i64: 128, 128>, i32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @int8(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{dtypes: A is i8, needs f16 or bf16; B is i8, needs f16 or bf16; D is i32, the accumulator must be f32}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 128, 64>, bf16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @mixed_inputs(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !B
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): dtypes: A is f16 but B is bf16: inputs must have one type}}
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !B, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f16, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @f16_accumulator(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): dtypes: D is f16, the accumulator must be f32}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

!G = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @a_in_global(%p: !llvm.ptr, %t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !G
    %b = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): shared_operands: needs A, B in shared; A is in global}}
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !G, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "local", #tile.layout<"S[(128, 128):(1@tid_in_wg, 1)]">>
gpu.module @m {
  gpu.func @d_in_registers(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.alloc_local"() : () -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): tmem_operands: needs D in tmem; D is in local}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 96, 64>, f16, "shared", #tile.layout<"S[(96, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 96, 128>, f32, "tmem", #tile.layout<"S[(96, 128):(1@TLane, 1@TCol)]">>
!B = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m {
  gpu.func @m96(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !B
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): cta_group::1 kind::f16 takes M in (64, 128), got M=96}}
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !B, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 24, 64>, f16, "shared", #tile.layout<"S[(24, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 24>, f32, "tmem", #tile.layout<"S[(128, 24):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @m128_n24(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !B
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{cta_group::1 with M=128 takes N a multiple of 16 (CUTLASS's rule), got N=24}}
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !B, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 128, 24>, f16, "shared", #tile.layout<"S[(128, 24):(24, 1)]">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
!B = !tile.buf<array<i64: 128, 24>, f16, "shared", #tile.layout<"S[(128, 24):(24, 1)]">>
gpu.module @m {
  gpu.func @k24(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): K=24 is not a multiple of 16 (one MMA instruction's K)}}
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !B, i1) -> ()
    }
    gpu.return
  }
}

// -----

// A plain row-major tile is not what the tensor cores read (no core-matrix interleave).
!R = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)]">>
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @row_major_a(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !R
    %b = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{A's layout S[(128, 64):(64, 1)] is not the K-major MMA layout of a 128x64 f16 tile with none swizzle, which is S[(16, 8, 8, 8):(512, 8, 64, 1)]}}
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !R, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

// A 128B-swizzled tile must start on a 1024-byte boundary (the swizzle pattern's repeat).
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @misaligned_b(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 16896 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{B starts at byte 16896 of shared memory, not on the 1024-byte repeat of the 128B layout}}
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

// M = 64 writes rows 16..31 to lanes 32..47 (data path layout F), not to lanes 16..31.
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "tmem", #tile.layout<"S[(64, 64):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @m64_identity_lanes(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{D[16, 0] is at TMEM lane 16, column 0, but tcgen05.mma M=64 cta_group::1 writes it at lane 32, column 0 (D's layout must be S[(4, 16, 64):(32@TLane, 1@TLane, 1@TCol)] from its first element)}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

// Not under any branch: every thread of the block would issue the MMA chain.
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @every_thread(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    // expected-error@+1 {{tcgen05 (priority 10): single_thread: up to 128 threads of the 128-thread block reach the op, but tcgen05.mma is issued by one thread}}
    "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}

// -----

// elect.sync alone keeps one thread per warp: four issuers in a 128-thread block.
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @elect_in_every_warp(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %elected = "tile.elect_sync"() : () -> i1
    scf.if %elected {
      // expected-error@+1 {{single_thread: up to 4 threads of the 128-thread block reach the op}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

// A condition of granularity 1 is not a single thread: tid < 64 keeps 64.
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @half_the_block(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c64 = arith.constant 64 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %low = arith.cmpi ult, %tid, %c64 : index
    scf.if %low {
      // expected-error@+1 {{single_thread: up to 64 threads of the 128-thread block reach the op}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @warpgroup_scope(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    // expected-error@+1 {{single_thread: scope 'warpgroup': tcgen05.mma is issued by a single thread}}
    "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}

// -----

// With cta_group 2 each CTA holds N / 2 rows of B.
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @pair_with_whole_b(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{B has 128 rows but needs 64 (its share of the CTA pair's N=128)}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 2 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

// The accumulator must fit in the 512 columns of tensor memory.
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)] + {TCol: 448}">>
gpu.module @m {
  gpu.func @past_512_columns(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): D reaches TMEM column 575; tensor memory has 512 columns}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

// tcgen05.ld gives row r to lane r % 32: a transposed register view cannot be loaded.
!T = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
!R = !tile.buf<array<i64: 128, 128>, f32, "local", #tile.layout<"S[(128, 128):(1, 1@tid_in_wg)]">>
gpu.module @m {
  gpu.func @tmem_load_transposed(%t: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %src = "tile.tmem"(%t) : (i32) -> !T
    %dst = "tile.alloc_local"() : () -> !R
    // expected-error@+1 {{tcgen05.ld (priority 10): dst[0, 1] is held by lane 1, but tcgen05.ld gives row 0 to lane 0}}
    "tile.copy_async"(%dst, %src) {scope = "warpgroup"} : (!R, !T) -> ()
    gpu.return
  }
}

// -----

!T = !tile.buf<array<i64: 128, 64>, f16, "tmem", #tile.layout<"S[(128, 64):(1@TLane, 1@TCol)]">>
!R = !tile.buf<array<i64: 128, 64>, f16, "local", #tile.layout<"S[(128, 64):(1@tid_in_wg, 1)]">>
gpu.module @m {
  gpu.func @tmem_load_f16(%t: i32, %bar: !llvm.ptr<3>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %src = "tile.tmem"(%t) : (i32) -> !T
    %dst = "tile.alloc_local"() : () -> !R
    // expected-error@+1 {{tcgen05.ld (priority 10): no_barrier: tcgen05.ld completes with tile.tcgen05_wait {kind = "ld"}, not with a barrier; tmem_window: f16 is not a 32-bit element (tcgen05.ld .32x32b moves b32)}}
    "tile.copy_async"(%dst, %src, %bar) {scope = "warpgroup"} : (!R, !T, !llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

// A warpgroup's read starts at lane 0; a warp's at a multiple of 32.
!T = !tile.buf<array<i64: 128, 64>, f32, "tmem", #tile.layout<"S[(128, 64):(1@TLane, 1@TCol)]">>
!W = !tile.buf<array<i64: 32, 64>, f32, "tmem", #tile.layout<"S[(32, 64):(1@TLane, 1@TCol)] + {TLane: 16}">>
!R = !tile.buf<array<i64: 32, 64>, f32, "local", #tile.layout<"S[(32, 64):(1@laneid, 1)]">>
gpu.module @m {
  gpu.func @tmem_load_misaligned_warp(%t: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tmem = "tile.tmem"(%t) : (i32) -> !T
    %src = "tile.slice"(%tmem) {static_offsets = array<i64: 16, 0>} : (!T) -> !W
    %dst = "tile.alloc_local"() : () -> !R
    // expected-error@+1 {{src starts at TMEM lane 16, not a multiple of 32 (a warp reads one 32-lane quarter)}}
    "tile.copy_async"(%dst, %src) {scope = "warp"} : (!R, !W) -> ()
    gpu.return
  }
}

// -----

// An MN-major B (transpose_b) is the wgmma variant's only.
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 64, 128>, f16, "shared", #tile.layout<"S[(64, 2, 64):(64, 4096, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @tcgen05_transposed_b(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !B
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): k_major_b: transpose_b: B stored K x N (MN-major) is not implemented for tcgen05.mma}}
      "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = true} : (!D, !A, !B, i1) -> ()
    }
    gpu.return
  }
}

//--- sm90a.mlir
// tcgen05 does not exist on Hopper; wgmma rejects the TMEM accumulator and the scope.
!A = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @tcgen05_on_sm90a(%t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    %tid = gpu.thread_id x
    %first = arith.cmpi eq, %tid, %c0 : index
    scf.if %first {
      // expected-error@+1 {{tcgen05 (priority 10): target: tcgen05 (tensor memory) is not available on sm_90a}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

// A per-thread row layout is not the wgmma accumulator fragment.
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 128>, f32, "local", #tile.layout<"S[(64, 2, 64):(2@tid_in_wg, 1@tid_in_wg, 1)]">>
gpu.module @m {
  gpu.func @not_the_fragment(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): D[0, 2] is held by lane 0 of the warpgroup but wgmma m64n128k16 puts it in lane 1; the wgmma accumulator layout is S[(4, 2, 8, 16, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @warp_scope(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): whole_warpgroup: scope 'warp': wgmma is issued by a whole warpgroup (scope 'warpgroup')}}
    "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "warp", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @narrowed_warpgroup(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c64 = arith.constant 64 : index
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.alloc_local"() : () -> !D
    %tid = gpu.thread_id x
    %low = arith.cmpi ult, %tid, %c64 : index
    scf.if %low {
      // expected-error@+1 {{wgmma (priority 10): whole_warpgroup: the op sits under a branch at}}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !A, i1) -> ()
    }
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 96, 64>, f16, "shared", #tile.layout<"S[(96, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 96, 64>, f32, "local", #tile.layout<"S[(96, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @m96(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 16384 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): M=96 is not a multiple of 64 (wgmma is m64nNk16)}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 260, 64>, f16, "shared", #tile.layout<"S[(260, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 260>, f32, "local", #tile.layout<"S[(64, 260):(260, 1)]">>
gpu.module @m {
  gpu.func @n260(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): N=260 is above 256, so it runs as several instructions along N, but it does not split into widths wgmma takes (wgmma takes N a multiple of 8 in [8, 256], got N=4)}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @b_in_global(%p: !llvm.ptr, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.global"(%p) : (!llvm.ptr) -> !G
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): shared_operands: needs B in shared; B is in global}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !G, i1) -> ()
    gpu.return
  }
}

// -----

// A plain row-major (K, N) tile is not a layout the tensor cores read MN-major.
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @transposed_b_row_major(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): B's layout S[(64, 64):(64, 1)] is not an MN-major MMA layout of a 64x64 (K x N) tile with none swizzle: element [1, 0] is 64 elements from [0, 0], the layout of rows of 8-element chunks (e.g. tilemlir.layout.mma_shared_layout(16, 'none', (64, 64))) puts it at 8}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// N = 32 is half a 128B swizzle row: such a B needs the 64B mode.
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 64, 32>, f16, "shared", #tile.layout<"S[(64, 32):(32, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 32>, f32, "local", #tile.layout<"S[(4, 2, 8, 4, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @transposed_b_narrow(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): B (64x32, K x N) with 128B swizzle needs N a multiple of 64 (one 128-byte row) and K a multiple of 16}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// With transpose_b, B's columns are N.
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 64, 128>, f16, "shared", #tile.layout<"S[(64, 2, 64):(64, 4096, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @transposed_b_wrong_n(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): B has 128 columns (B is K x N with transpose_b) but D has N=64 columns}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!B = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @transposed_b_misaligned(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8704 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): B starts at byte 8704 of shared memory, not on the 1024-byte repeat of the 128B layout (the descriptor's base offset would be non-zero)}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// A in registers must be the wgmma A fragment (a row per thread pair is not).
!A = !tile.buf<array<i64: 64, 64>, f16, "local", #tile.layout<"S[(64, 2, 32):(2@tid_in_wg, 1@tid_in_wg, 1)]">>
!B = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @register_a_not_the_fragment(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): A[0, 2] is held by lane 0 of the warpgroup but wgmma with A in registers reads it from lane 1; the wgmma A layout is S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)] (tilemlir.lang.wgmma_a_layout)}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

// An f32 accumulator is A only after a cast to f16 / bf16.
!A = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
!B = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @register_a_f32(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): dtypes: A is f32, needs f16 or bf16}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = true} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

// -----

!A = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!B = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @a_in_global(%p: !llvm.ptr, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): a_operand: A is in global; wgmma reads A from shared memory or from registers (local)}}
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !B, i1) -> ()
    gpu.return
  }
}

//--- sm80.mlir
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @wgmma_on_sm80(%accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %d = "tile.alloc_local"() : () -> !D
    // expected-error@+1 {{wgmma (priority 10): target: wgmma.mma_async is not available on sm_80}}
    "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}
