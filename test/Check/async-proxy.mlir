// tile-check-async-proxy: an async-proxy read of shared memory (tcgen05.mma / wgmma operands,
// TMA store sources) that generic-proxy writes (tile.copy, tile.fill, cp.async) reach with no
// fence.proxy.async between them is rejected at the read, naming the write. It runs alone here
// and first in tile-to-ptx.
//
// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-check-async-proxy)'
// RUN: not tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' 2>&1 | FileCheck %s --check-prefix=PIPE
// PIPE: async-proxy.mlir:[[#@LINE+16]]:5: error: async-proxy read of shared memory by 'tile.gemm_async' (operand A) may see the generic-proxy write by 'tile.copy' (operand DST) at {{.+}}:{{[0-9]+}}:{{[0-9]+}} (bytes [1024, 9216) of the pool) with no fence.proxy.async between them: add T.ptx.fence.proxy_async() after the write, before the barrier that orders it before the read
// PIPE: (operand B) may see the generic-proxy write by 'tile.copy' (operand DST) at {{.+}}:{{[0-9]+}}:{{[0-9]+}} (bytes [12288, 16384) of the pool)

// Seed 000's held-out pattern: st.shared -> bar.sync -> tcgen05.mma, no proxy fence.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @copy_then_mma(%p: !llvm.ptr, %t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %a = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    "tile.copy"(%a, %g) {scope = "cta"} : (!A, !G) -> ()
    "tile.cta_sync"() : () -> ()
    // expected-error@+2 {{async-proxy read of shared memory by 'tile.gemm_async' (operand A) may see the generic-proxy write by 'tile.copy' (operand DST) at }}
    // expected-error@+1 {{async-proxy read of shared memory by 'tile.gemm_async' (operand B) may see the generic-proxy write by 'tile.copy' (operand DST) at }}
    "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}

// -----

// The same with the fence: accepted. A TMA load (copy_async with a barrier) writes through the
// async proxy already and needs none; nor does a write to another buffer.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @fenced(%p: !llvm.ptr, %bar: !llvm.ptr, %t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %a = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 9216 : i64} : () -> !A
    %c = "tile.alloc_shared"() {offset = 17408 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    "tile.copy"(%a, %g) {scope = "cta"} : (!A, !G) -> ()
    "tile.fence"() {kind = "proxy_async_shared"} : () -> ()
    "tile.cta_sync"() : () -> ()
    "tile.copy_async"(%b, %g, %bar) {scope = "thread"} : (!A, !G, !llvm.ptr) -> ()
    "tile.copy"(%c, %g) {scope = "cta"} : (!A, !G) -> ()
    "tile.gemm_async"(%d, %a, %b, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
    gpu.return
  }
}

// -----

// Loops: the store at the bottom of the body reaches the MMA at the top of the next iteration.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!D = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)]">>
gpu.module @m {
  gpu.func @loop_carried(%p: !llvm.ptr, %t: i32, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %a = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !A
    %d = "tile.tmem"(%t) : (i32) -> !D
    "tile.copy"(%a, %g) {scope = "cta"} : (!A, !G) -> ()
    "tile.fence"() {kind = "proxy_async_shared"} : () -> ()
    "tile.cta_sync"() : () -> ()
    scf.for %i = %c0 to %c4 step %c1 {
      // expected-error@+2 {{async-proxy read of shared memory by 'tile.gemm_async' (operand A) may see the generic-proxy write by 'tile.copy' (operand DST) at }}
      // expected-error@+1 {{async-proxy read of shared memory by 'tile.gemm_async' (operand B) may see the generic-proxy write by 'tile.copy' (operand DST) at }}
      "tile.gemm_async"(%d, %a, %a, %accum) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!D, !A, !A, i1) -> ()
      "tile.cta_sync"() : () -> ()
      "tile.copy"(%a, %g) {scope = "cta"} : (!A, !G) -> ()
      "tile.cta_sync"() : () -> ()
    }
    gpu.return
  }
}

// -----

// A fence on one side of a branch only: the other path reaches the TMA store unfenced. The
// write is a tile.fill into a window of the staging buffer; the read is a TMA store (shared ->
// global) from another window of it.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!C = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!W = !tile.buf<array<i64: 32, 64>, f16, "shared", #tile.layout<"S[(32, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m {
  gpu.func @one_branch_fenced(%p: !llvm.ptr, %flag: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %zero = arith.constant 0.0 : f16
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %c = "tile.alloc_shared"() {offset = 0 : i64} : () -> !C
    %top = "tile.slice"(%c) {static_offsets = array<i64: 0, 0>} : (!C) -> !W
    "tile.fill"(%top, %zero) {scope = "cta"} : (!W, f16) -> ()
    scf.if %flag {
      "tile.fence"() {kind = "proxy_async_shared"} : () -> ()
    }
    "tile.cta_sync"() : () -> ()
    // expected-error@+1 {{async-proxy read of shared memory by 'tile.copy_async' (operand SRC) may see the generic-proxy write by 'tile.fill' (operand DST) at }}
    "tile.copy_async"(%g, %c) {scope = "thread"} : (!G, !C) -> ()
    gpu.return
  }
}

// -----

// cp.async (copy_async global -> shared without a barrier) is the generic proxy too; so is a
// write into another root whose bytes overlap the operand's.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!A = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
!R = !tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(4, 2, 8, 8, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @cp_async_and_alias(%p: !llvm.ptr, %accum: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !A
    %b = "tile.alloc_shared"() {offset = 8192 : i64} : () -> !A
    %alias = "tile.alloc_shared"() {offset = 12288 : i64} : () -> !A
    %acc = "tile.alloc_local"() : () -> !R
    "tile.copy_async"(%a, %g) {scope = "cta"} : (!A, !G) -> ()
    "tile.copy"(%alias, %g) {scope = "cta"} : (!A, !G) -> ()
    "tile.cta_sync"() : () -> ()
    // expected-error@+2 {{async-proxy read of shared memory by 'tile.gemm_async' (operand A) may see the generic-proxy write by 'tile.copy_async' (operand DST) at }}
    // expected-error@+1 {{'tile.gemm_async' (operand B) may see the generic-proxy write by 'tile.copy' (operand DST) at }}
    "tile.gemm_async"(%acc, %a, %b, %accum) {cta_group = 1 : i64, scope = "warpgroup", transpose_b = false} : (!R, !A, !A, i1) -> ()
    gpu.return
  }
}
