// tilemlir-opt's command line: tilemlir and upstream passes mixed, IR after each pass, errors.
//
// RUN: tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a},canonicalize,cse)' --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// AFTER: // -----// IR Dump After tile-dispatch
// AFTER: nvvm.mma.sync
// AFTER: // -----// IR Dump After Canonicalizer
// AFTER: // -----// IR Dump After CSE
//
// RUN: cat %S/../Inputs/mma_demo.mlir | tilemlir-opt --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})' -o %t.mlir
// RUN: FileCheck %s --check-prefix=STDIN < %t.mlir
// STDIN: nvvm.mma.sync
//
// RUN: not tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-dispath)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: tilemlir-opt: 'tile-dispath' is neither a tilemlir pass (tile-dispatch, tile-verify, tile-materialize, tile-check-target, tile-check-async-proxy, tile-check-banks, tile-kernel-abi, tile-to-ptx) nor a registered MLIR pass or pipeline
//
// RUN: not tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_42})' 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: tilemlir-opt: unsupported chip 'sm_42'
//
// RUN: not tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80 ptx=60})' 2>&1 | FileCheck %s --check-prefix=PTXVER
// PTXVER: tilemlir-opt: sm_80 needs PTX ISA 7.8 or newer, got 6.0
//
// RUN: tilemlir-opt --help | FileCheck %s --check-prefix=HELP
// HELP: tilemlir passes
// HELP: tile-dispatch
// HELP: tile-materialize
// HELP: tile-to-ptx
//
// RUN: not tilemlir-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: tilemlir-opt: cannot read {{.*}}.missing: No such file or directory
//
// RUN: echo 'func.func @f() { %x = arith.addi %y, %y : i32 }' | not tilemlir-opt 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: <stdin>:1:34: error: use of undeclared SSA value name
//
// RUN: tilemlir-opt --list-variants | FileCheck %s --check-prefix=VARIANTS
// VARIANTS: tile.copy
// VARIANTS: ldmatrix priority 20 [shared_to_registers,
// VARIANTS: tile.gemm
// VARIANTS-NEXT: mma.m16n8k* priority 10 [full_active_lanes, no_replica, register_operands, dtypes, alpha_beta, shape, target]
// VARIANTS: tile.gemm_async
// VARIANTS-NEXT: tcgen05 priority 10
// VARIANTS: wgmma priority 10
