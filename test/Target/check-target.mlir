// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})'
// Hand-written nvvm ops the chip lacks are diagnosed before LLVM (which would abort on them).

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      // expected-error@+1 {{'nvvm.elect.sync' needs a chip with elect.sync; the target is sm_80}}
      %e = nvvm.elect.sync -> i1
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      // expected-error@+1 {{'nvvm.wgmma.fence.aligned' needs a chip with wgmma.mma_async; the target is sm_80}}
      nvvm.wgmma.fence.aligned
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      // Tile-level sync ops reject in dispatch instead.
      // expected-error@+1 {{no variant of 'tile.elect_sync' can lower this op for sm_80:}}
      %e = "tile.elect_sync"() : () -> i1
      gpu.return
    }
  }
}
