// Named barriers between roles: tile.named_barrier (bar.sync: arrive and wait) and
// tile.barrier_arrive (bar.arrive: arrive only), as two consumer warpgroups take turns with
// them (each waits on its own id, and its arrival lets the other one go).
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})' | FileCheck %s --check-prefix=IR
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx -o %t.80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin %}
// RUN: tilemlir-opt %t/bad.mlir --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})'

// IR-LABEL: gpu.func @turns
// IR: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// IR: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %{{.*}}
// IR-NOT: tile.

// PTX-LABEL: .entry turns(
// PTX: bar.sync {{%r[0-9]+}}, 256;
// PTX: mov.b32 [[N:%r[0-9]+]], 256;
// PTX: bar.arrive {{%r[0-9]+}}, [[N]];

//--- ok.mlir
gpu.module @m {
  gpu.func @turns() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %c128 = arith.constant 128 : index
    %c3 = arith.constant 3 : i32
    %tid = gpu.thread_id x
    %wg = arith.divui %tid, %c128 : index
    %w = arith.index_cast %wg : index to i32
    %mine = arith.addi %w, %c3 : i32
    %c7 = arith.constant 7 : i32
    %other = arith.subi %c7, %w : i32
    "tile.named_barrier"(%mine) {threads = 256 : i64} : (i32) -> ()
    "tile.barrier_arrive"(%other) {threads = 256 : i64} : (i32) -> ()
    gpu.return
  }
}

//--- bad.mlir
gpu.module @m {
  gpu.func @odd() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %c3 = arith.constant 3 : i32
    // expected-error@+1 {{tile.barrier_arrive threads must be a positive multiple of 32 (whole warps), got 200 : i64}}
    "tile.barrier_arrive"(%c3) {threads = 200 : i64} : (i32) -> ()
    %c16 = arith.constant 16 : i32
    // expected-error@+1 {{tile.named_barrier barrier id 16 is outside 0..15 (the named barriers of a CTA)}}
    "tile.named_barrier"(%c16) {threads = 128 : i64} : (i32) -> ()
    %m1 = arith.constant -1 : i32
    // expected-error@+1 {{tile.named_barrier barrier id -1 is outside 0..15}}
    "tile.named_barrier"(%m1) {threads = 128 : i64} : (i32) -> ()
    // expected-error@+1 {{tile.named_barrier waits for 512 threads, but the block has 256: it would never complete}}
    "tile.named_barrier"(%c3) {threads = 512 : i64} : (i32) -> ()
    // expected-error@+1 {{tile.named_barrier threads must be a positive multiple of 32 (whole warps), got 0 : i64}}
    "tile.named_barrier"(%c3) {threads = 0 : i64} : (i32) -> ()
    gpu.return
  }
}
