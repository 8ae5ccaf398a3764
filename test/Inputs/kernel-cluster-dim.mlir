// A hand-written cluster shape on sm_80 (test/Target/kernel-attributes.mlir).
gpu.module @m {
  // expected-error@+1 {{nvvm.cluster_dim: thread-block clusters need sm_90 or newer, the target is sm_80}}
  gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>, nvvm.cluster_dim = array<i32: 2, 1, 1>} {
    gpu.return
  }
}
