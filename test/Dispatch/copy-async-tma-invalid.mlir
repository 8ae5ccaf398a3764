// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch)'
// TMA copies no variant can lower: the TMA variants' reasons, at the op.

// Every thread of the warp reaches the load: TMA is issued by one thread.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @every_lane(%p: !llvm.ptr, %bar: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    // expected-error@+1 {{tma (priority 20): single_thread: up to 32 threads of the 32-thread block reach the op, but a TMA copy is issued by one thread}}
    "tile.copy_async"(%s, %g, %bar) {scope = "thread"} : (!Sm, !G, !llvm.ptr) -> ()
    gpu.return
  }
}

// -----

// Rows of 100 f16 (200 bytes) in global memory: TMA needs 16-byte strides.
!G = !tile.buf<array<i64: 64, 100>, f16, "global", #tile.layout<"S[(64, 100):(100, 1)]">>
!W = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(100, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @stride(%p: !llvm.ptr, %bar: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %tid = gpu.thread_id x
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %w = "tile.slice"(%g) {static_offsets = array<i64: 0, 0>} : (!G) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      // expected-error@+1 {{tma (priority 20): src's buffer has rows of 100 elements (200 bytes): TMA needs global strides that are multiples of 16 bytes (for 16-bit elements, a multiple of 8 columns)}}
      "tile.copy_async"(%s, %w, %bar) {scope = "thread"} : (!Sm, !W, !llvm.ptr) -> ()
    }
    gpu.return
  }
}

// -----

// A column-major shared tile: not the row-major box TMA writes.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(1, 64)]">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @column_major(%p: !llvm.ptr, %bar: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %tid = gpu.thread_id x
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      // expected-error@+1 {{tma (priority 20): dst's layout S[(64, 64):(1, 64)] does not store the 64x64 box at (0, 0) row-major, as TMA writes it}}
      "tile.copy_async"(%s, %g, %bar) {scope = "thread"} : (!Sm, !G, !llvm.ptr) -> ()
    }
    gpu.return
  }
}

// -----

// TMA on sm_80, and a store scoped to a warp.
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @sm80_store(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    // expected-error@+1 {{tma_store (priority 20): thread_scope: scope 'warp': a TMA store is issued by one thread (scope 'thread', e.g. under lane == 0 of one warp); target: cp.async.bulk.tensor (TMA) is not available on sm_80}}
    "tile.copy_async"(%g, %s) {scope = "warp"} : (!G, !Sm) -> ()
    gpu.return
  }
}

// -----

// An unswizzled tile 512 f16 wide: one box row of 512 elements, past TMA's 256.
!G = !tile.buf<array<i64: 8, 512>, f16, "global", #tile.layout<"S[(8, 512):(512, 1)]">>
!Sm = !tile.buf<array<i64: 8, 512>, f16, "shared", #tile.layout<"S[(8, 512):(512, 1)]">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @wide_box(%p: !llvm.ptr, %bar: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %tid = gpu.thread_id x
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      // expected-error@+1 {{tma (priority 20): dst rows hold 512 elements in one unswizzled box; a TMA box dimension is at most 256}}
      "tile.copy_async"(%s, %g, %bar) {scope = "thread"} : (!Sm, !G, !llvm.ptr) -> ()
    }
    gpu.return
  }
}

// -----

// An unswizzled tile 4 f16 wide: box rows of 8 bytes, TMA's are a multiple of 16.
!G = !tile.buf<array<i64: 64, 8>, f16, "global", #tile.layout<"S[(64, 8):(8, 1)]">>
!W = !tile.buf<array<i64: 64, 4>, f16, "global", #tile.layout<"S[(64, 4):(8, 1)]">>
!Sm = !tile.buf<array<i64: 64, 4>, f16, "shared", #tile.layout<"S[(64, 4):(4, 1)]">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @narrow_box(%p: !llvm.ptr, %bar: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %tid = gpu.thread_id x
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %w = "tile.slice"(%g) {static_offsets = array<i64: 0, 0>} : (!G) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      // expected-error@+1 {{tma (priority 20): dst rows are 8 bytes; a TMA box row is a multiple of 16}}
      "tile.copy_async"(%s, %w, %bar) {scope = "thread"} : (!Sm, !W, !llvm.ptr) -> ()
    }
    gpu.return
  }
}
