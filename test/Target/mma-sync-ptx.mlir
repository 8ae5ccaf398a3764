// The seed-001 demo kernel (Inputs/mma_demo.mlir: fragments loaded from global memory, one
// tile.gemm, D stored back) through tile-to-ptx for each chip, checked with FileCheck and
// assembled by ptxas for that chip.
//
// RUN: tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefixes=PTX,SM80 < %t.sm80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}
//
// RUN: tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.sm90a.ptx
// RUN: FileCheck %s --check-prefixes=PTX,SM90A < %t.sm90a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}
//
// RUN: tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx -o %t.sm100a.ptx
// RUN: FileCheck %s --check-prefixes=PTX,SM100A < %t.sm100a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.sm100a.ptx -o %t.sm100a.cubin %}

// SM80: .version 7.8
// SM80: .target sm_80
// SM90A: .version 8.0
// SM90A: .target sm_90a
// SM100A: .version 8.6
// SM100A: .target sm_100a
// PTX: .visible .entry gemm_16x8x16(
// PTX: .maxntid 32, 1, 1
// A's register pairs are consecutive in memory (4-byte loads), B's run down a column (2-byte
// loads); D's pairs are stored 8 bytes at a time (the vector_registers copy).
// PTX-COUNT-4: ld.global.b32
// PTX-COUNT-4: ld.global.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-NEXT: {%r[[D0:[0-9]+]], %r[[D1:[0-9]+]], %r[[D2:[0-9]+]], %r[[D3:[0-9]+]]},
// PTX-NOT: mma.sync
// PTX: st.global.v2.b32 [{{.*}}], {%r[[D0]], %r[[D1]]};
// PTX: st.global.v2.b32 [{{.*}}], {%r[[D2]], %r[[D3]]};
