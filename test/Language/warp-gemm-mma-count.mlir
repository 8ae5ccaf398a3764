// One mma.sync per (m, n, k) atom: Mt * Nt * Kt. k16 when K allows it, k8 otherwise.
//
// RUN: tilemlir-kernel tilemlir.kernels.warp_gemm:warp_gemm 32 16 32 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx > %t.a.ptx
// RUN: FileCheck %s --check-prefix=K16 < %t.a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.a.ptx -o %t.a.cubin %}
// K16-COUNT-8: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// K16-NOT: mma.sync
//
// RUN: tilemlir-kernel tilemlir.kernels.warp_gemm:warp_gemm 16 8 24 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.b.ptx
// RUN: FileCheck %s --check-prefix=K8 < %t.b.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.b.ptx -o %t.b.cubin %}
// K8-COUNT-3: mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32
// K8-NOT: mma.sync
//
// 64 x 32 x 64 = 4 * 4 * 4 atoms.
// RUN: tilemlir-kernel tilemlir.kernels.warp_gemm:warp_gemm 64 32 64 --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})' | FileCheck %s --check-prefix=IR
// IR-COUNT-64: nvvm.mma.sync
// IR-NOT: nvvm.mma.sync
