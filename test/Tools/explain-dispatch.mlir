// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80})' --explain-dispatch 2>&1 >/dev/null | FileCheck %s
// RUN: not tilemlir-opt %s --explain-dispatch 2>&1 | FileCheck %s --check-prefix=NOPIPE
// --explain-dispatch: per tile op, its line, the variants tried first and why each lost, the one
// chosen, what it emits (counted) and the bytes it moves per thread and per CTA.

// CHECK:      tile.copy at {{.*}}explain-dispatch.mlir:[[@LINE+24]]:5 (warp scope)
// CHECK-NEXT:   rejected ldmatrix (priority 20): shared_to_registers: ldmatrix copies shared memory to registers; src is in global, dst in shared
// CHECK-NEXT:   rejected stmatrix (priority 20): registers_to_shared: stmatrix copies registers to shared memory; src is in global, dst in shared; target: stmatrix is not available on sm_80
// CHECK-NEXT:   rejected realigned_registers (priority 11): register_and_memory: needs one operand in registers and the other in global or shared memory; dst is in shared, src in global
// CHECK-NEXT:   chosen cooperative (priority 10)
// CHECK-NEXT:   emits {{.*}}16 llvm.load, 16 llvm.store, {{.*}}
// 64x64 f16 = 8192 B read from global, written to shared, by each of the 4 warps: 256 B of
// each a thread, 32 KiB of each per CTA.
// CHECK-NEXT:   memory: writes DST 8192 B (shared), reads SRC 8192 B (global); per thread: read 256 B, written 256 B; per CTA: read 32768 B, written 32768 B

// CHECK:      tile.copy at {{.*}}explain-dispatch.mlir:[[@LINE+15]]:5 (warp scope)
// CHECK-NEXT:   same signature as the op at {{.*}}explain-dispatch.mlir:[[@LINE+13]]:5: decided once
// CHECK:        chosen cooperative (priority 10)

// CHECK:      tile.cta_sync at
// CHECK-NEXT:   chosen bar_sync (priority 0)
// CHECK-NEXT:   emits 1 nvvm.barrier0
// CHECK-NEXT:   memory: none moved
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy"(%s, %g) {scope = "warp"} : (!Sm, !G) -> ()
    "tile.copy"(%s, %g) {scope = "warp"} : (!Sm, !G) -> ()
    "tile.cta_sync"() : () -> ()
    gpu.return
  }
}

// NOPIPE: tilemlir-opt: --explain-dispatch explains the tile-dispatch passes of --pass-pipeline, and none was given
