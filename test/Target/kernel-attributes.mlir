// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-check-target{chip=sm_90a})'
// RUN: tilemlir-opt %S/../Inputs/kernel-cluster-dim.mlir --verify-diagnostics --pass-pipeline='builtin.module(tile-check-target{chip=sm_80})'
// NVVM's kernel attributes, written by hand, are checked before LLVM prints them as PTX
// directives: zero extents fail LLVM assertions, a second block size an MLIR one.

gpu.module @m {
  // expected-error@+1 {{nvvm.reqntid must be 1 to 3 positive extents (array<i32: ...>), got array<i32: 0, 1, 1>}}
  gpu.func @reqntid_zero() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.reqntid = array<i32: 0, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{nvvm.cluster_dim must be 1 to 3 positive extents}}
  gpu.func @cluster_dim_zero_y() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.cluster_dim = array<i32: 2, 0, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{'"nvvm.cluster_dim"' attribute must be integer array with maximum 3 index}}
  gpu.func @cluster_dim_four() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.cluster_dim = array<i32: 2, 1, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{nvvm.cluster_dim [32, 1, 1] has 32 CTAs; a cluster has at most 16}}
  gpu.func @cluster_dim_32() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.cluster_dim = array<i32: 32, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{nvvm.maxntid and known_block_size both set the block size}}
  gpu.func @maxntid_twice() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.maxntid = array<i32: 32, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{nvvm.maxnreg must be a positive integer, got 0 : i32}}
  gpu.func @maxnreg_zero() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.maxnreg = 0 : i32} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{nvvm.minctasm must be a positive integer, got -2 : i32}}
  gpu.func @minctasm_negative() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.minctasm = -2 : i32} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error@+1 {{nvvm.cluster_max_blocks must be a positive integer}}
  gpu.func @cluster_max_blocks_zero() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.cluster_max_blocks = 0 : i32} {
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @cluster_dim_ok() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.cluster_dim = array<i32: 2, 1, 1>} {
    gpu.return
  }
}
