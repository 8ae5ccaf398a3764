// tilemlir-opt's IR printing and timing options, as mlir-opt's: dumps before / after named
// passes (tilemlir's Python passes and upstream passes alike), after a change, after a
// failure, with locations when asked, and the pass timing report.
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},canonicalize,cse)' --mlir-print-ir-after=tile-dispatch,cse 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// AFTER: // -----// IR Dump After tile-dispatch (tile-dispatch) ('builtin.module' operation) //----- //
// AFTER: nvvm.mma.sync
// AFTER-NOT: IR Dump After Canonicalizer
// AFTER: // -----// IR Dump After CSE (cse)
// AFTER-NOT: IR Dump
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},canonicalize,cse)' --mlir-print-ir-before=canonicalize --mlir-print-ir-before=tile-dispatch 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE
// BEFORE: // -----// IR Dump Before tile-dispatch (tile-dispatch)
// BEFORE: tile.gemm
// BEFORE: // -----// IR Dump Before Canonicalizer (canonicalize)
// BEFORE-NOT: IR Dump
//
// The second canonicalize finds nothing to change: no dump after it.
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},canonicalize,canonicalize)' --mlir-print-ir-after-change 2>&1 >/dev/null | FileCheck %s --check-prefix=CHANGE
// CHANGE: // -----// IR Dump After tile-dispatch (tile-dispatch)
// CHANGE: // -----// IR Dump After Canonicalizer (canonicalize)
// CHANGE-NOT: IR Dump
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},canonicalize,canonicalize)' --mlir-print-ir-after=canonicalize --mlir-print-ir-after-change 2>&1 >/dev/null | FileCheck %s --check-prefix=NAMED-CHANGE
// NAMED-CHANGE-NOT: IR Dump After tile-dispatch
// NAMED-CHANGE: // -----// IR Dump After Canonicalizer (canonicalize)
// NAMED-CHANGE-NOT: IR Dump
//
// sm_75 has no tile.gemm variant: tile-dispatch fails, and only its dump is printed.
// RUN: not tilemlir-opt %s --pass-pipeline='builtin.module(canonicalize,tile-dispatch{chip=sm_75})' --mlir-print-ir-after-failure 2>&1 >/dev/null | FileCheck %s --check-prefix=FAILURE
// FAILURE-NOT: IR Dump After Canonicalizer
// FAILURE: // -----// IR Dump After tile-dispatch Failed (tile-dispatch)
// FAILURE: print-ir.mlir:[[# @LINE + 48]]:7: error: no variant of 'tile.gemm' can lower this op for sm_75
//
// After a named pass and after the failure, both.
// RUN: not tilemlir-opt %s --pass-pipeline='builtin.module(canonicalize,tile-dispatch{chip=sm_75})' --mlir-print-ir-after-failure --mlir-print-ir-after=canonicalize 2>&1 >/dev/null | FileCheck %s --check-prefix=FAILURE-AND-NAMED
// FAILURE-AND-NAMED: // -----// IR Dump After Canonicalizer (canonicalize)
// FAILURE-AND-NAMED: // -----// IR Dump After tile-dispatch Failed (tile-dispatch)
//
// Passes inside tile-to-ptx, upstream (on the gpu.module) and tilemlir's, by name.
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --mlir-print-ir-before=tile-materialize --mlir-print-ir-after=convert-gpu-to-nvvm 2>&1 >/dev/null | FileCheck %s --check-prefix=INSIDE
// INSIDE: // -----// IR Dump Before tile-materialize (tile-materialize)
// INSIDE: // -----// IR Dump After ConvertGpuOpsToNVVMOps (convert-gpu-to-nvvm) ('gpu.module' operation: @demo)
// INSIDE-NOT: IR Dump
//
// Locations in the dumps and in the output, naming this file.
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})' --mlir-print-ir-after=tile-dispatch --mlir-print-debuginfo 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP-LOC
// DUMP-LOC: // -----// IR Dump After tile-dispatch
// DUMP-LOC: nvvm.mma.sync {{.*}} loc(
// DUMP-LOC: loc("{{.*}}print-ir.mlir":[[# @LINE + 31]]:7)
// RUN: tilemlir-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=OUT-LOC
// OUT-LOC: gpu.func @gemm_16x8x16(%arg0: !llvm.ptr loc("{{.*}}print-ir.mlir":[[# @LINE + 19]]:28)
// OUT-LOC: loc("{{.*}}print-ir.mlir":[[# @LINE + 28]]:7)
// RUN: tilemlir-opt %s | FileCheck %s --check-prefix=NO-LOC
// NO-LOC-NOT: loc(
//
// RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},cse)' --mlir-timing 2>&1 >/dev/null | FileCheck %s --check-prefix=TIMING
// TIMING: ... Execution time report ...
// TIMING: Total Execution Time:
// TIMING: tile-dispatch
// TIMING: CSE
// TIMING: Total
//
// RUN: not tilemlir-opt %s --pass-pipeline='builtin.module(cse)' --mlir-print-ir-after=tile-dispath 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: tilemlir-opt: --mlir-print-ir-after: 'tile-dispath' is neither a tilemlir pass
// RUN: not tilemlir-opt %s --pass-pipeline='builtin.module(cse)' --mlir-print-ir-before=tile-to-ptx 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: tilemlir-opt: --mlir-print-ir-before: tile-to-ptx is a pipeline, not a pass

module attributes {gpu.container_module} {
  gpu.module @demo {
    gpu.func @gemm_16x8x16(%A: !llvm.ptr, %B: !llvm.ptr, %D: !llvm.ptr) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>} {
      %gA = "tile.global"(%A) : (!llvm.ptr) -> !tile.buf<array<i64: 16, 16>, f16, "global", #tile.layout<"S[(16, 16):(16, 1)]">>
      %gB = "tile.global"(%B) : (!llvm.ptr) -> !tile.buf<array<i64: 16, 8>, f16, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
      %gD = "tile.global"(%D) : (!llvm.ptr) -> !tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>
      %a = "tile.alloc_local"() : () -> !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
      %b = "tile.alloc_local"() : () -> !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
      %d = "tile.alloc_local"() : () -> !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
      "tile.copy"(%a, %gA) {scope = "warp"} : (!tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>, !tile.buf<array<i64: 16, 16>, f16, "global", #tile.layout<"S[(16, 16):(16, 1)]">>) -> ()
      "tile.copy"(%b, %gB) {scope = "warp"} : (!tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>, !tile.buf<array<i64: 16, 8>, f16, "global", #tile.layout<"S[(16, 8):(8, 1)]">>) -> ()
      "tile.gemm"(%d, %a, %b, %d) {scope = "warp", alpha = 1.0 : f32, beta = 0.0 : f32, transpose_a = false, transpose_b = false} : (!tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>, !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>, !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>, !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>) -> ()
      "tile.copy"(%gD, %d) {scope = "warp"} : (!tile.buf<array<i64: 16, 8>, f32, "global", #tile.layout<"S[(16, 8):(8, 1)]">>, !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>) -> ()
      gpu.return
    }
  }
}
