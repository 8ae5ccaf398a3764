// The Hopper GEMMs on rows that are not a whole number of 16-byte units, down to sm_90a PTX and
// assembled by ptxas: hgemm_v6 with PRODUCER=cp_async (K = 556: 1112-byte rows of A and B, no
// tensor map) and EPILOGUE=direct (N = 444: D's rows), hgemm_v7 with EPILOGUE=direct (N = 4444).
// The same kernels run on the H200 in test_gemm_splitk_gpu.py (the front door chooses them).
//
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 333 444 556 PRODUCER=cp_async EPILOGUE=direct --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v6.ptx
// RUN: FileCheck %s --check-prefix=CPASYNC < %t.v6.ptx
// RUN: FileCheck %s --check-prefix=DIRECT < %t.v6.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v6.ptx -o %t.v6.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v7 3333 4444 5552 EPILOGUE=direct --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v7.ptx
// RUN: FileCheck %s --check-prefix=V7 < %t.v7.ptx
// RUN: FileCheck %s --check-prefix=DIRECT < %t.v7.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v7.ptx -o %t.v7.cubin %}

// No tensor maps: the producer warpgroup's cp.async copies 8 bytes (A's and B's rows are
// 8-byte aligned) with a source size, 0 past M, N or K (zero fill); each thread waits for its
// copies one k-tile later, fences them for the consumers' wgmma and arrives on the stage's
// full barrier, which counts the 128 producer threads.
// CPASYNC-NOT: .param .align 64 .b8
// CPASYNC-NOT: cp.async.bulk.tensor
// CPASYNC: mov.b32 [[PRODUCERS:%r[0-9]+]], 128;
// CPASYNC: mbarrier.init.shared.b64 [__tile_smem], [[PRODUCERS]];
// CPASYNC: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 8, %r{{[0-9]+}};
// CPASYNC: cp.async.commit_group;
// CPASYNC: cp.async.wait_group 1;
// CPASYNC-NEXT: fence.proxy.async.shared::cta;
// CPASYNC-NEXT: mbarrier.arrive.shared.b64

// v7 keeps its TMA loads, multicast into both CTAs of the pair.
// V7-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
// V7-DAG: wgmma.mma_async

// The epilogue stores from registers under a branch per run, never through a tensor map or
// stmatrix: 4-byte runs (two f16) where D's rows and the bound allow (444 and 4444 are
// multiples of 4 columns, also when v7 carries the tile's origin to the next tile's loop).
// DIRECT-NOT: stmatrix
// DIRECT-NOT: cp.async.bulk.tensor.2d.global.shared
// DIRECT: @%p{{[0-9]+}} bra
// DIRECT: st.global.b32
