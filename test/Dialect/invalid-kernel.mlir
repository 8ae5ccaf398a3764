// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-verify{chip=sm_100a})'
// What tile-verify checks on a whole kernel, at the gpu.func or the op: cluster shapes
// (positive, at most 8 CTAs or 16 when allowed, whole clusters in the grid, sm_90+), named
// barriers (ids 0..15, whole warps, no more threads than the block), tcgen05 commit multicast
// masks within the cluster, and one cta_group per kernel (cta_group::2 on CTA pairs).

gpu.module @m {
  // expected-error@+1 {{tile.cluster must be three positive extents (array<i32: x, y, z>), got array<i32: 0, 1, 1>}}
  gpu.func @zero() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 0, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{tile.cluster must be three positive extents (array<i32: x, y, z>), got array<i32: 2, 1>}}
  gpu.func @two_extents() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 2, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{a cluster of [16, 1, 1] has 16 CTAs, more than the portable 8 (up to 16 with tile.cluster_non_portable}}
  gpu.func @sixteen() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 16, 1, 1>, tile.grid = array<i32: 32, 1, 1>} {
    gpu.return
  }
}

// -----

// Allowed: 16 CTAs with the opt-in.
gpu.module @m {
  gpu.func @sixteen_allowed() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 4, 4, 1>, tile.cluster_non_portable, tile.grid = array<i32: 8, 8, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{a cluster of [32, 1, 1] has 32 CTAs, more than 16 (the most any GPU runs)}}
  gpu.func @thirty_two() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 32, 1, 1>, tile.cluster_non_portable} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{tile.cluster_non_portable without tile.cluster: there is no cluster shape to allow}}
  gpu.func @opt_in_alone() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster_non_portable} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{tile.grid [6, 1, 1] is not made of whole clusters of [4, 1, 1]: each grid extent must be a multiple of the cluster's}}
  gpu.func @ragged_grid() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 4, 1, 1>, tile.grid = array<i32: 6, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{known_grid_size [2, 3, 1] is not made of whole clusters of [1, 2, 1]}}
  gpu.func @ragged_known_grid() kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 2, 3, 1>, tile.cluster = array<i32: 1, 2, 1>} {
    gpu.return
  }
}

// -----

// Clusters need sm_90: the gpu.module's own chip wins over the pass option.
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  // expected-error@+1 {{the kernel runs in clusters of [2, 1, 1]: thread-block clusters need sm_90 or newer, the target is sm_80}}
  gpu.func @sm80() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @barriers() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c1 = arith.constant 1 : i32
    %c15 = arith.constant 15 : i32
    %c16 = arith.constant 16 : i32
    %neg = arith.constant -3 : i32
    %true = arith.constant true
    "tile.named_barrier"(%c15) {threads = 128 : i64} : (i32) -> ()
    // expected-error@+1 {{tile.named_barrier barrier id 16 is outside 0..15}}
    "tile.named_barrier"(%c16) {threads = 128 : i64} : (i32) -> ()
    // expected-error@+1 {{tile.barrier_arrive barrier id -3 is outside 0..15}}
    "tile.barrier_arrive"(%neg) {threads = 64 : i64} : (i32) -> ()
    // expected-error@+1 {{tile.barrier_or waits for 256 threads, but the block has 128: it would never complete}}
    %a = "tile.barrier_or"(%c1, %true) {threads = 256 : i64} : (i32, i1) -> i1
    // expected-error@+1 {{tile.named_barrier threads must be a positive multiple of 32 (whole warps), got -32 : i64}}
    "tile.named_barrier"(%c1) {threads = -32 : i64} : (i32) -> ()
    // expected-error@+1 {{tile.barrier_arrive threads must be a positive multiple of 32 (whole warps), got 33 : i64}}
    "tile.barrier_arrive"(%c1) {threads = 33 : i64} : (i32) -> ()
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @multicast(%bar: !llvm.ptr<3>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    %pair = arith.constant 3 : i16
    %none = arith.constant 0 : i16
    %four = arith.constant 4 : i16
    "tile.tcgen05_commit"(%bar, %pair) {cta_group = 1 : i64} : (!llvm.ptr<3>, i16) -> ()
    // expected-error@+1 {{tile.tcgen05_commit multicast mask names no CTA}}
    "tile.tcgen05_commit"(%bar, %none) {cta_group = 1 : i64} : (!llvm.ptr<3>, i16) -> ()
    // expected-error@+1 {{tile.tcgen05_commit multicast mask 0b100 names CTA ranks beyond the 2 CTA(s) of the kernel's cluster}}
    "tile.tcgen05_commit"(%bar, %four) {cta_group = 1 : i64} : (!llvm.ptr<3>, i16) -> ()
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @multicast_without_cluster(%bar: !llvm.ptr<3>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %pair = arith.constant 3 : i16
    // expected-error@+1 {{tile.tcgen05_commit multicast mask 0b11 names CTA ranks beyond the 1 CTA(s) of the kernel's cluster}}
    "tile.tcgen05_commit"(%bar, %pair) {cta_group = 1 : i64} : (!llvm.ptr<3>, i16) -> ()
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @mixed_groups(%dst: !llvm.ptr<3>, %bar: !llvm.ptr<3>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    "tile.tmem_alloc"(%dst) {ncols = 128 : i64, cta_group = 2 : i64} : (!llvm.ptr<3>) -> ()
    // expected-error@+1 {{tile.tcgen05_commit uses cta_group::1, but this kernel's tile.tmem_alloc at line 142 uses cta_group::2: a kernel's tcgen05 alloc, MMA and commit ops use one cta_group (ptxas rejects a mix)}}
    "tile.tcgen05_commit"(%bar) {cta_group = 1 : i64} : (!llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @pair_without_cluster(%dst: !llvm.ptr<3>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    // expected-error@+1 {{tile.tmem_alloc with cta_group::2 works on a CTA pair: the kernel needs a cluster with an even x extent (e.g. tile.cluster = array<i32: 2, 1, 1>), got no cluster}}
    "tile.tmem_alloc"(%dst) {ncols = 128 : i64, cta_group = 2 : i64} : (!llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @pair_in_odd_cluster(%a: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.cluster = array<i32: 1, 2, 1>} {
    // expected-error@+1 {{tile.tmem_dealloc with cta_group::2 works on a CTA pair: the kernel needs a cluster with an even x extent (e.g. tile.cluster = array<i32: 2, 1, 1>), got [1, 2, 1]}}
    "tile.tmem_dealloc"(%a) {ncols = 128 : i64, cta_group = 2 : i64} : (i32) -> ()
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @group_three() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    // expected-error@+1 {{tile.tmem_relinquish cta_group must be 1 or 2, got 3 : i64}}
    "tile.tmem_relinquish"() {cta_group = 3 : i64} : () -> ()
    gpu.return
  }
}
