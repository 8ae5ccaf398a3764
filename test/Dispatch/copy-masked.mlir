// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize,cse)' | FileCheck %s
// tile.copy_masked / tile.copy_async_masked: copies of a window cut by run-time bounds (one
// index per dim). Each access (a 16-byte chunk, a run of register slots) is tested against the
// bounds; loads out of range read the buffer's first element and give the fill, stores out of
// range are skipped, cp.async copies 0 source bytes (its zero fill).

// A 64x64 f16 window at a dynamic row of a 100 x 40 buffer (40 columns: it hangs past the
// edge) into shared memory: 4 chunks of 8 per thread, each load's address a select between
// its own and the buffer's start, each value a select between the load and the fill (-1.0).
// CHECK-LABEL: gpu.func @into_shared
// CHECK-DAG: %[[FILL:.*]] = arith.constant dense<-1.000000e+00> : vector<8xf16>
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: %[[ADDR:.*]] = llvm.select %[[IN]], %{{.*}}, %{{.*}} : i1, !llvm.ptr<1>
// CHECK: %[[V:.*]] = llvm.load %[[ADDR]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK: arith.select %[[IN]], %[[V]], %[[FILL]] : vector<8xf16>
// CHECK-COUNT-3: llvm.load {{.*}} -> vector<8xf16>
// CHECK-NOT: scf.if
!A = !tile.buf<array<i64: 100, 40>, f16, "global", #tile.layout<"S[(100, 40):(40, 1)]">>
!W = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(40, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @into_shared(%p: !llvm.ptr, %m: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c40 = arith.constant 40 : index
    %c100 = arith.constant 100 : index
    %rows = arith.subi %c100, %m : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a, %m) {static_offsets = array<i64: -9223372036854775808, 0>} : (!A, index) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy_masked"(%s, %w, %rows, %c40) {scope = "cta", fill = -1.0 : f16} : (!Sm, !W, index, index) -> ()
    gpu.return
  }
}

// -----

// The way back: shared -> global, each chunk stored only in range (an scf.if per chunk).
// CHECK-LABEL: gpu.func @from_shared
// CHECK-COUNT-4: scf.if
// CHECK-NOT: llvm.select
!A = !tile.buf<array<i64: 100, 40>, f16, "global", #tile.layout<"S[(100, 40):(40, 1)]">>
!W = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(40, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @from_shared(%p: !llvm.ptr, %m: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c40 = arith.constant 40 : index
    %c100 = arith.constant 100 : index
    %rows = arith.subi %c100, %m : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a, %m) {static_offsets = array<i64: -9223372036854775808, 0>} : (!A, index) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy_masked"(%w, %s, %rows, %c40) {scope = "cta", fill = 0.0 : f16} : (!W, !Sm, index, index) -> ()
    gpu.return
  }
}

// -----

// cp.async with a source size: 16 bytes in range, 0 out of range (zero fill).
// CHECK-LABEL: gpu.func @zero_fill
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: %[[SRC:.*]] = llvm.select %[[IN]], %{{.*}}, %{{.*}} : i1, !llvm.ptr<1>
// CHECK: %[[N:.*]] = arith.select %[[IN]], %[[C16]], %[[C0]] : i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %[[SRC]], 16, cache = cg, %[[N]]
// CHECK-COUNT-3: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg, %{{.*}}
!A = !tile.buf<array<i64: 100, 40>, f16, "global", #tile.layout<"S[(100, 40):(40, 1)]">>
!W = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(40, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @zero_fill(%p: !llvm.ptr, %m: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c40 = arith.constant 40 : index
    %c100 = arith.constant 100 : index
    %rows = arith.subi %c100, %m : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a, %m) {static_offsets = array<i64: -9223372036854775808, 0>} : (!A, index) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy_async_masked"(%s, %w, %rows, %c40) {scope = "cta"} : (!Sm, !W, index, index) -> ()
    gpu.return
  }
}

// -----

// Constant bounds covering the window test nothing: the unmasked chunks, no select, no branch.
// CHECK-LABEL: gpu.func @covered
// CHECK-NOT: llvm.select
// CHECK-NOT: scf.if
// CHECK-COUNT-4: llvm.load {{.*}} -> vector<8xf16>
!A = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @covered(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c64 = arith.constant 64 : index
    %c99 = arith.constant 99 : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy_masked"(%s, %a, %c64, %c99) {scope = "cta", fill = 0.0 : f16} : (!Sm, !A, index, index) -> ()
    gpu.return
  }
}

// -----

// Rows of 13 f16 are 2-byte aligned: cp.async (4 bytes at least) gives way to a load done at
// once, each 16-byte chunk of the shared tile read from the aligned 4-byte words around its
// source (copy_async_masked/realign.py: a word only where it holds an element in range) and
// stored whole.
// CHECK-LABEL: gpu.func @odd_rows
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: llvm.load {{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: llvm.intr.fshr
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK-NOT: -> f16
!A = !tile.buf<array<i64: 100, 13>, f16, "global", #tile.layout<"S[(100, 13):(13, 1)]">>
!W = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(13, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @odd_rows(%p: !llvm.ptr, %m: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c13 = arith.constant 13 : index
    %c100 = arith.constant 100 : index
    %rows = arith.subi %c100, %m : index
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a, %m) {static_offsets = array<i64: -9223372036854775808, 0>} : (!A, index) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy_async_masked"(%s, %w, %rows, %c13) {scope = "cta"} : (!Sm, !W, index, index) -> ()
    gpu.return
  }
}

// -----

// Rejections name each variant's reason: one bound for a 2-d window.
!A = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @one_bound(%p: !llvm.ptr, %n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    // expected-error@+1 {{bounds_per_dim: the window has 2 dims but the op has 1 bounds}}
    "tile.copy_masked"(%s, %a, %n) {scope = "cta", fill = 0.0 : f16} : (!Sm, !A, index) -> ()
    gpu.return
  }
}

// -----

// An unmasked copy of a window hanging past the buffer's edge is refused: it needs bounds.
!A = !tile.buf<array<i64: 100, 40>, f16, "global", #tile.layout<"S[(100, 40):(40, 1)]">>
!W = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(40, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @unmasked_overhang(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a) {static_offsets = array<i64: 0, 0>} : (!A) -> !W
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    // expected-error@+1 {{inside_buffers: SRC hangs past its global buffer's edge ([0, 64) of dim 1, whose extent is 40): copy it with bounds=... or by TMA}}
    "tile.copy"(%s, %w) {scope = "cta"} : (!Sm, !W) -> ()
    gpu.return
  }
}
