// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})'
// Warpgroup-scope reductions over several warps (cross_warp) that must be refused: each
// warpgroup needs a window of scratch of its own, big enough for its rows, and named barriers
// 15 - wg that the kernel uses for nothing else.

// A window of 4 elements for 2 rows x 4 warps.
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!Red = !tile.buf<array<i64: 2, 4>, f32, "shared", #tile.layout<"S[(2, 4):(4, 1)]">>
!W = !tile.buf<array<i64: 4>, f32, "shared", #tile.layout<"S[(4):(1)]">>
gpu.module @m {
  gpu.func @scratch_too_small() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %tid = gpu.thread_id x
    %c128 = arith.constant 128 : index
    %wg = arith.divui %tid, %c128 : index
    %red = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Red
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    %w = "tile.slice"(%red, %wg) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Red, index) -> !W
    // expected-error@+1 {{cross_warp (priority 10): scratch: scratch has 4 elements; 2 rows x 4 warps need 8 per warpgroup (each passes its own window)}}
    "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    gpu.return
  }
}

// -----

// One scratch buffer for both warpgroups of the CTA, reducing at once.
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @shared_scratch() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %w = "tile.alloc_shared"() {offset = 0 : i64} : () -> !W
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    // expected-error@+1 {{cross_warp (priority 10): scratch: warpgroups 0 and 1 may both reach the op and their scratch windows overlap (element 0 of the shared buffer): give each warpgroup its own window, e.g. scratch=red[wg, :]}}
    "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    gpu.return
  }
}

// -----

// Windows chosen by warp (tid / 32 % 2) differ inside each warpgroup.
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!Red = !tile.buf<array<i64: 2, 8>, f32, "shared", #tile.layout<"S[(2, 8):(8, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @window_per_warp() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %c2 = arith.constant 2 : index
    %warp = arith.divui %tid, %c32 : index
    %half = arith.remui %warp, %c2 : index
    %red = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Red
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    %w = "tile.slice"(%red, %half) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Red, index) -> !W
    // expected-error@+1 {{scratch: scratch's window differs between the threads of warpgroup 0 (offsets [0, 8]): all of them must use one window}}
    "tile.reduce"(%s, %x, %w) {fn = "max", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    gpu.return
  }
}

// -----

// The kernel syncs both warpgroups on barrier 14 (256 threads), which warpgroup 1 takes.
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!Red = !tile.buf<array<i64: 2, 8>, f32, "shared", #tile.layout<"S[(2, 8):(8, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @barrier_id_clash() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %tid = gpu.thread_id x
    %c128 = arith.constant 128 : index
    %wg = arith.divui %tid, %c128 : index
    %red = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Red
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    %w = "tile.slice"(%red, %wg) {static_offsets = array<i64: -9223372036854775808, 0>} : (!Red, index) -> !W
    // expected-error@+1 {{cross_warp (priority 10): warpgroup_barrier: warpgroup w synchronises on named barrier 15 - w with 128 threads, but tile.named_barrier at}}
    "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    %b = arith.constant 14 : i32
    "tile.named_barrier"(%b) {threads = 256 : i64} : (i32) -> ()
    gpu.return
  }
}

// -----

// Warpgroup 0 alone reduces, but uses barrier 15 (its own) with 256 threads elsewhere.
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @barrier_count_clash() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %tid = gpu.thread_id x
    %c128 = arith.constant 128 : index
    %c0 = arith.constant 0 : index
    %wg = arith.divui %tid, %c128 : index
    %first = arith.cmpi eq, %wg, %c0 : index
    %w = "tile.alloc_shared"() {offset = 0 : i64} : () -> !W
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    scf.if %first {
      // expected-error@+1 {{uses barrier 15 on thread 128, outside the 128 threads 0..127 that take it}}
      "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    }
    %b = arith.constant 15 : i32
    "tile.barrier_arrive"(%b) {threads = 256 : i64} : (i32) -> ()
    gpu.return
  }
}

// -----

// A named barrier whose id is a kernel argument: it may be any of 15 - wg.
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @barrier_id_unknown(%id: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %w = "tile.alloc_shared"() {offset = 0 : i64} : () -> !W
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    "tile.named_barrier"(%id) {threads = 128 : i64} : (i32) -> ()
    // expected-error@+1 {{uses a barrier id that cannot be computed per thread, so it may be one of [15]}}
    "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1 : i64, scope = "warpgroup"} : (!S, !X, !W) -> ()
    gpu.return
  }
}

// -----

// Rows over warps at warp scope: a warp cannot combine other warps' partials.
!X = !tile.buf<array<i64: 2, 1024>, f32, "local", #tile.layout<"S[(2, 4, 32, 8):(8, 1@wid_in_wg, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 2, 1>, f32, "local", #tile.layout<"S[(2, 1):(1, 1)]">>
!W = !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[(8):(1)]">>
gpu.module @m {
  gpu.func @rows_over_warps_at_warp_scope() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %w = "tile.alloc_shared"() {offset = 0 : i64} : () -> !W
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    // expected-error@+1 {{rows: src[0, 256] is held by no thread of the scope}}
    "tile.reduce"(%s, %x, %w) {fn = "sum", axis = 1 : i64, scope = "warp"} : (!S, !X, !W) -> ()
    gpu.return
  }
}
