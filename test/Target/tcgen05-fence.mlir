// tile.tcgen05_fence: tcgen05.fence::before_thread_sync / ::after_thread_sync, on tcgen05
// targets only. Dispatch (NVVM), then PTX assembled by ptxas; on sm_90a a located rejection.
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_100a})' | FileCheck %s --check-prefix=IR
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.ptx -o %t.cubin %}
// RUN: tilemlir-opt %t/sm90a.mlir --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})'

// IR-LABEL: gpu.func @fences
// IR: nvvm.tcgen05.fence <before>
// IR-NEXT: nvvm.barrier0
// IR-NEXT: nvvm.tcgen05.fence <after>
// IR-NOT: tile.

// PTX: .target sm_100a
// PTX: tcgen05.fence::before_thread_sync;
// PTX-NEXT: bar.sync 0;
// PTX-NEXT: tcgen05.fence::after_thread_sync;

//--- ok.mlir
gpu.module @m {
  gpu.func @fences() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    "tile.tcgen05_fence"() {kind = "before_thread_sync"} : () -> ()
    "tile.cta_sync"() : () -> ()
    "tile.tcgen05_fence"() {kind = "after_thread_sync"} : () -> ()
    gpu.return
  }
}

//--- sm90a.mlir
gpu.module @m {
  gpu.func @fence_on_hopper() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    // expected-error@+1 {{tcgen05 (priority 0): target: tcgen05 (tensor memory) is not available on sm_90a}}
    "tile.tcgen05_fence"() {kind = "after_thread_sync"} : () -> ()
    gpu.return
  }
}
