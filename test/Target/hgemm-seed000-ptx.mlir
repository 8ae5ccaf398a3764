// Seed 000's kernels (tilemlir/kernels/hgemm_tcgen05.py) down to PTX for sm_100a, assembled by
// ptxas; their Hopper twins (hgemm_wgmma.py) for sm_90a. tcgen05 cannot run on the H200: these
// are checked by FileCheck and ptxas only.
//
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_tcgen05:hgemm_v1 128 128 64 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx > %t.v1.ptx
// RUN: FileCheck %s --check-prefixes=TC,V1 < %t.v1.ptx
// RUN: FileCheck %s --check-prefix=FENCE < %t.v1.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.v1.ptx -o %t.v1.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_tcgen05:hgemm_v2 128 128 256 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx > %t.v2.ptx
// RUN: FileCheck %s --check-prefixes=TC,LOOP < %t.v2.ptx
// RUN: FileCheck %s --check-prefix=FENCE < %t.v2.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.v2.ptx -o %t.v2.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_tcgen05:hgemm_v3 256 256 256 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx > %t.v3.ptx
// RUN: FileCheck %s --check-prefixes=TC,LOOP < %t.v3.ptx
// RUN: FileCheck %s --check-prefix=FENCE < %t.v3.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.v3.ptx -o %t.v3.cubin %}

// TC: .target sm_100a
// TC: .extern .shared .align 1024 .b8 __tile_smem[];
// TC: mbarrier.init.shared.b64 [__tile_smem+8], {{%r[0-9]+}};
// TC: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [__tile_smem], {{%r[0-9]+}};
// TC-NEXT: tcgen05.fence::before_thread_sync;
// TC: fence.proxy.async.shared::cta;
// TC: fence.mbarrier_init.release.cluster;
// TC: bar.sync 0;
// TC-NEXT: tcgen05.fence::after_thread_sync;

// The memory model's fences (the seed omits them): the copies' st.shared (generic proxy) are
// made visible to tcgen05.mma (async proxy) before the barrier; tcgen05.ld follows the wait for
// the MMA's commit only after tcgen05.fence::after_thread_sync; the last tcgen05.ld is ordered
// before the dealloc by the fence pair around the final bar.sync.
// FENCE: st.shared.v4.b32
// FENCE: fence.proxy.async.shared::cta;
// FENCE-NEXT: bar.sync 0;
// FENCE: tcgen05.mma.cta_group::1
// FENCE: tcgen05.commit
// FENCE: tcgen05.fence::after_thread_sync;
// FENCE-NOT: bar.sync
// FENCE: tcgen05.ld.sync.aligned
// FENCE: tcgen05.wait::ld.sync.aligned;
// FENCE: tcgen05.fence::before_thread_sync;
// FENCE-NEXT: bar.sync 0;
// FENCE: tcgen05.fence::after_thread_sync;
// FENCE-NEXT: tcgen05.relinquish_alloc_permit

// v1: the 64-deep K tile is 4 MMAs of K = 16, the first one not accumulating, then one wait.
// V1: elect.sync
// V1-COUNT-4: tcgen05.mma.cta_group::1.kind::f16
// V1-NOT: tcgen05.mma
// V1: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [__tile_smem+8];
// V1: mbarrier.try_wait.parity.shared.b64 P1, [{{%r[0-9]+}}], {{%r[0-9]+}}

// v2 / v3: the loop waits on the barrier with the carried phase register and flips it right
// after the wait, before the back edge; the MMAs of one K tile are 4.
// LOOP: mbarrier.try_wait.parity.shared.b64 P1, [{{%r[0-9]+}}], [[PHASE:%r[0-9]+]], {{%r[0-9]+}};
// LOOP: xor.b32 [[PHASE]], [[PHASE]], 1;
// LOOP: @{{%p[0-9]+}} bra $L__BB0_[[HEAD:[0-9]+]];
// LOOP: $L__BB0_[[HEAD]]:
// LOOP-COUNT-4: tcgen05.mma.cta_group::1.kind::f16
// LOOP-NOT: tcgen05.mma

// TC: tcgen05.ld.sync.aligned.32x32b.x128.b32
// TC: tcgen05.wait::ld.sync.aligned;
// TC: cvt.rn.f16x2.f32
// TC: st.global.v4.b32
// TC: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
// TC: tcgen05.dealloc.cta_group::1.sync.aligned.b32 {{%r[0-9]+}}, {{%r[0-9]+}};

// The Hopper twins: fence.proxy.async before the barrier, 2 (M) x 4 (K) wgmma of m64n128k16
// per K tile, committed and waited.
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_wgmma:hgemm_wgmma_v3 256 256 256 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.w3.ptx
// RUN: FileCheck %s --check-prefix=WG < %t.w3.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.w3.ptx -o %t.w3.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_wgmma:hgemm_wgmma_v1 128 128 64 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.w1.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.w1.ptx -o %t.w1.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_wgmma:hgemm_wgmma_v2 128 128 1024 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.w2.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.w2.ptx -o %t.w2.cubin %}
// WG: .target sm_90a
// WG: st.shared.v4.b32
// WG: fence.proxy.async.shared::cta;
// WG-NEXT: bar.sync 0;
// WG: wgmma.fence.sync.aligned;
// WG-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// WG-NOT: wgmma.mma_async
// WG: wgmma.commit_group.sync.aligned;
// WG-NEXT: wgmma.wait_group.sync.aligned 0;
