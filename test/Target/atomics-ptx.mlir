// tile.atomic_add (a global atomic add with its ordering expressed as scoped fences, since
// LLVM's NVPTX backend drops atomicrmw's ordering and scope) and tile.barrier_or
// (bar.red.or.pred on a named barrier: one thread's decision for a whole warpgroup), as the
// split-K fix-up of hgemm_v6 uses them. Dispatch (LLVM/NVVM), then PTX assembled by ptxas;
// located rejections for what cannot be expressed.
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})' | FileCheck %s --check-prefix=IR
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx -o %t.80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin %}
// RUN: tilemlir-opt %t/bad.mlir --verify-diagnostics --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80})'

// IR-LABEL: gpu.func @counter
// IR: llvm.fence syncscope("device") release
// IR-NEXT: %[[OLD:.*]] = llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i32
// IR-NEXT: llvm.fence syncscope("device") acquire
// IR: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("block") monotonic
// IR-NOT: llvm.fence
// IR: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic
// IR-NEXT: llvm.fence syncscope("device") acquire
// IR: llvm.fence syncscope("block") release
// IR-NEXT: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("block") monotonic
// IR: llvm.call_intrinsic "llvm.nvvm.barrier.cta.red.or.aligned.count"(%{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i1) -> i1
// IR-NOT: tile.

// PTX-LABEL: .entry counter(
// PTX: fence.acq_rel.gpu;
// PTX-NEXT: atom.global.add.u32 [[OLD:%r[0-9]+]], [{{%rd[0-9]+}}+12], 1;
// PTX-NEXT: fence.acq_rel.gpu;
// PTX: atom.global.add.u32
// PTX: atom.global.add.u32
// PTX-NEXT: fence.acq_rel.gpu;
// PTX: fence.acq_rel.cta;
// PTX-NEXT: atom.global.add.u32
// PTX: bar.red.or.pred {{%p[0-9]+}}, {{%r[0-9]+}}, 128, {{%p[0-9]+}};

//--- ok.mlir
!C = !tile.buf<array<i64: 8>, i32, "global", #tile.layout<"S[8:1]">>
gpu.module @m {
  gpu.func @counter(%p: !llvm.ptr, %out: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %c3 = arith.constant 3 : index
    %c128 = arith.constant 128 : index
    %one = arith.constant 1 : i32
    %last = arith.constant 7 : i32
    %tid = gpu.thread_id x
    %counters = "tile.global"(%p) : (!llvm.ptr) -> !C
    %ptr = "tile.addr"(%counters, %c3) : (!C, index) -> !llvm.ptr<1>
    %old = "tile.atomic_add"(%ptr, %one) {sem = "acq_rel", mem_scope = "gpu"} : (!llvm.ptr<1>, i32) -> i32
    %r = "tile.atomic_add"(%ptr, %one) {sem = "relaxed", mem_scope = "cta"} : (!llvm.ptr<1>, i32) -> i32
    %a = "tile.atomic_add"(%ptr, %one) {sem = "acquire", mem_scope = "gpu"} : (!llvm.ptr<1>, i32) -> i32
    %w = "tile.atomic_add"(%ptr, %one) {sem = "release", mem_scope = "cta"} : (!llvm.ptr<1>, i32) -> i32
    // One thread per warpgroup decides; bar.red gives every thread of the warpgroup the answer.
    %wg = arith.divui %tid, %c128 : index
    %id = arith.index_cast %wg : index to i32
    %is_last = arith.cmpi eq, %old, %last : i32
    %any = "tile.barrier_or"(%id, %is_last) {threads = 128 : i64} : (i32, i1) -> i1
    %s0 = arith.addi %old, %r : i32
    %s1 = arith.addi %s0, %a : i32
    %s2 = arith.addi %s1, %w : i32
    %e = arith.extui %any : i1 to i32
    %s3 = arith.addi %s2, %e : i32
    llvm.store %s3, %out : i32, !llvm.ptr<1>
    gpu.return
  }
}

//--- bad.mlir
gpu.module @m {
  gpu.func @sys(%p: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %one = arith.constant 1 : i32
    // expected-error@+1 {{atom_add (priority 0): mem_scope: system scope is not supported: LLVM's NVPTX backend emits atom without a scope qualifier (.gpu)}}
    %old = "tile.atomic_add"(%p, %one) {sem = "acq_rel", mem_scope = "sys"} : (!llvm.ptr<1>, i32) -> i32
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @cluster_on_sm80(%p: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %one = arith.constant 1 : i32
    // expected-error@+1 {{atom_add (priority 0): mem_scope: thread-block clusters is not available on sm_80}}
    %old = "tile.atomic_add"(%p, %one) {sem = "release", mem_scope = "cluster"} : (!llvm.ptr<1>, i32) -> i32
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @tmem_pointer(%p: !llvm.ptr<6>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %one = arith.constant 1 : i32
    // expected-error@+1 {{atom_add (priority 0): pointer_space: atomics address global or shared memory (address space 0, 1 or 3); the pointer is in address space 6}}
    %old = "tile.atomic_add"(%p, %one) {sem = "relaxed", mem_scope = "gpu"} : (!llvm.ptr<6>, i32) -> i32
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @partial_warp(%id: i32, %pred: i1) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    // expected-error@+1 {{tile.barrier_or threads must be a positive multiple of 32 (whole warps), got 48 : i64}}
    %any = "tile.barrier_or"(%id, %pred) {threads = 48 : i64} : (i32, i1) -> i1
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @bad_sem(%p: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %one = arith.constant 1 : i32
    // expected-error@+1 {{"seq_cst"' does not satisfy the constraint}}
    %old = "tile.atomic_add"(%p, %one) {sem = "seq_cst", mem_scope = "gpu"} : (!llvm.ptr<1>, i32) -> i32
    gpu.return
  }
}
