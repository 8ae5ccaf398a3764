// tilemlir-kernel passes NAME=VALUE words to the factory as keyword arguments (after the
// positional integers; a value is an integer, True / False or a word, taken as a string); a
// factory's refusal and malformed words are one-line errors.
//
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 4096 SPLIT_K=3 | FileCheck %s
// RUN: not tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 4096 SPLIT_K=0 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 SPLIT_K=3 4096 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 4096 SPLIT_K=3.5 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: not tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 4096 SPLIT_K=three 2>&1 | FileCheck %s --check-prefix=STRING
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 4095 PRODUCER=cp_async | FileCheck %s --check-prefix=CPASYNC
// RUN: not tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 4096 SPLITS=2 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// CHECK: gpu.func @hgemm_v6(
// CHECK-SAME: tile.params = ["A", "B", "D", "W", "C"]
// CHECK: "tile.atomic_add"
// CHECK: "tile.barrier_or"

// REFUSED: tilemlir-kernel: tilemlir.kernels.hgemm_hopper:hgemm_v6: hgemm_v6: SPLIT_K=0 must be an integer from 1 to the 64 k-tiles of K=4096
// ORDER: tilemlir-kernel: positional argument '4096' after keyword arguments
// WORD: tilemlir-kernel: factory arguments are integers or NAME=VALUE (an integer, True, False or a word), got 'SPLIT_K=3.5'
// STRING: tilemlir-kernel: tilemlir.kernels.hgemm_hopper:hgemm_v6: hgemm_v6: SPLIT_K='three' must be an integer
// CPASYNC: "tile.copy_async_masked"
// UNKNOWN: tilemlir-kernel: tilemlir.kernels.hgemm_hopper:hgemm_v6: hgemm_v6() got an unexpected keyword argument 'SPLITS'
