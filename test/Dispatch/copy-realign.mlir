// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},tile-materialize,canonicalize,cse)' | FileCheck %s
// Loads into registers of 8 consecutive f16 a thread from a window at a run-time offset the
// value analysis cannot prove 16-byte aligned (copy/realign.py): each run reads the five
// aligned 4-byte words around it (the fifth only where it starts mid-word) and funnel-shifts
// them into place, instead of 8 loads of 2 bytes.

// CHECK-LABEL: gpu.func @realigned
// CHECK: llvm.ptrtoint
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: llvm.select
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK-COUNT-4: llvm.intr.fshr
// CHECK-NOT: -> f16
!W = !tile.buf<array<i64: 4096>, f16, "global", #tile.layout<"S[(4096):(1)]">>
!Win = !tile.buf<array<i64: 256>, f16, "global", #tile.layout<"S[(256):(1)]">>
!R = !tile.buf<array<i64: 256>, f16, "local", #tile.layout<"S[(32, 8):(1@laneid, 1)]">>
gpu.module @m {
  gpu.func @realigned(%p: !llvm.ptr, %o: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %w = "tile.global"(%p) : (!llvm.ptr) -> !W
    %win = "tile.slice"(%w, %o) {static_offsets = array<i64: -9223372036854775808>} : (!W, index) -> !Win
    %r = "tile.alloc_local"() : () -> !R
    "tile.copy"(%r, %win) {scope = "warp"} : (!R, !Win) -> ()
    gpu.return
  }
}

// -----

// Masked, with a lower bound: each word is read only where it holds an element in range (its
// address a select with the buffer's start), and the elements out of range get the fill.
// CHECK-LABEL: gpu.func @realigned_masked
// CHECK-DAG: arith.constant dense<-1.000000e+00> : vector<8xf16>
// CHECK: llvm.select %{{.*}} : i1, !llvm.ptr<1>
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: llvm.intr.fshr
// CHECK: arith.select %{{.*}} : vector<8xi1>, vector<8xf16>
!W = !tile.buf<array<i64: 4096>, f16, "global", #tile.layout<"S[(4096):(1)]">>
!Win = !tile.buf<array<i64: 256>, f16, "global", #tile.layout<"S[(256):(1)]">>
!R = !tile.buf<array<i64: 256>, f16, "local", #tile.layout<"S[(32, 8):(1@laneid, 1)]">>
gpu.module @m {
  gpu.func @realigned_masked(%p: !llvm.ptr, %o: index, %lo: index, %hi: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %w = "tile.global"(%p) : (!llvm.ptr) -> !W
    %win = "tile.slice"(%w, %o) {static_offsets = array<i64: -9223372036854775808>} : (!W, index) -> !Win
    %r = "tile.alloc_local"() : () -> !R
    "tile.copy_masked"(%r, %win, %hi, %lo) {scope = "warp", fill = -1.0 : f16} : (!R, !Win, index, index) -> ()
    gpu.return
  }
}

// -----

// A 16-byte register run that a run-time bound cuts stays one access where it is wholly in
// range and goes element by element where it straddles the bound (the store: an scf.if with a
// vector store, else eight tested 2-byte stores).
// CHECK-LABEL: gpu.func @split_store
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
// CHECK: } else {
// CHECK-COUNT-8: llvm.store %{{.*}} {alignment = 2 : i64} : f16, !llvm.ptr<1>
!Y = !tile.buf<array<i64: 4096>, f16, "global", #tile.layout<"S[(4096):(1)]">>
!Yw = !tile.buf<array<i64: 256>, f16, "global", #tile.layout<"S[(256):(1)]">>
!R = !tile.buf<array<i64: 256>, f16, "local", #tile.layout<"S[(32, 8):(1@laneid, 1)]">>
gpu.module @m {
  gpu.func @split_store(%p: !llvm.ptr, %hi: index) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %y = "tile.global"(%p) : (!llvm.ptr) -> !Y
    %win = "tile.slice"(%y) {static_offsets = array<i64: 1024>} : (!Y) -> !Yw
    %r = "tile.alloc_local"() : () -> !R
    "tile.copy_masked"(%win, %r, %hi) {scope = "warp", fill = 0.0 : f16} : (!Yw, !R, index) -> ()
    gpu.return
  }
}

// -----

// From shared memory, masked, one run a thread of a 2-D window: a staging row read at the
// shift of D's 16-byte units (parts.StagedStore, the GEMM epilogue for an odd N). The words
// come from shared memory (address space 3).
// CHECK-LABEL: gpu.func @realigned_shared_masked
// CHECK: llvm.select %{{.*}} : i1, !llvm.ptr<3>
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK-COUNT-4: llvm.intr.fshr
// CHECK: arith.select %{{.*}} : vector<8xi1>, vector<8xf16>
!Sm = !tile.buf<array<i64: 128, 136>, f16, "shared", #tile.layout<"S[(128, 136):(136, 1)]">>
!Sw = !tile.buf<array<i64: 1, 8>, f16, "shared", #tile.layout<"S[(1, 8):(136, 1)]">>
!R = !tile.buf<array<i64: 1, 8>, f16, "local", #tile.layout<"S[(1, 8):(8, 1)]">>
gpu.module @m {
  gpu.func @realigned_shared_masked(%r0: index, %c: index, %rows: index, %lo: index, %hi: index, %first: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %win = "tile.slice"(%s, %r0, %c) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} : (!Sm, index, index) -> !Sw
    %r = "tile.alloc_local"() : () -> !R
    "tile.copy_masked"(%r, %win, %rows, %hi, %first, %lo) {scope = "thread", fill = 0.0 : f16} : (!R, !Sw, index, index, index, index) -> ()
    gpu.return
  }
}
