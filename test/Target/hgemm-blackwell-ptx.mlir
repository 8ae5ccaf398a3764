// hgemm_blackwell.py's steps (TMA + mbarrier pipeline, warp roles, double-buffered TMEM
// accumulators) down to sm_100a PTX, FileCheck'd and assembled by ptxas. tcgen05 cannot run on
// the H200: nothing here has run on a GPU. Each role is checked by its own prefix (the blocks of
// the roles are laid out in any order). BM x BN x BK = 128 x 256 x 64: a stage is
// (128 + 256) * 64 * 2 = 49152 bytes, a k-tile is 4 MMAs of K = 16, the epilogue 4 tcgen05.ld
// of 64 columns.
//
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_blackwell:hgemm_v4 1024 1024 1000 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx > %t.v4.ptx
// RUN: FileCheck %s --check-prefixes=ALL,ONE < %t.v4.ptx
// RUN: FileCheck %s --check-prefix=LOAD < %t.v4.ptx
// RUN: FileCheck %s --check-prefix=MMA < %t.v4.ptx
// RUN: FileCheck %s --check-prefix=EPI < %t.v4.ptx
// RUN: FileCheck %s --check-prefix=END < %t.v4.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.v4.ptx -o %t.v4.cubin %}
//
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_blackwell:hgemm_v5 1024 1024 1024 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx > %t.v5.ptx
// RUN: FileCheck %s --check-prefixes=ALL,TWO < %t.v5.ptx
// RUN: FileCheck %s --check-prefix=LOAD < %t.v5.ptx
// RUN: FileCheck %s --check-prefix=MMA < %t.v5.ptx
// RUN: FileCheck %s --check-prefix=EPI < %t.v5.ptx
// RUN: FileCheck %s --check-prefix=END < %t.v5.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.v5.ptx -o %t.v5.cubin %}
//
// 512 tiles on 148 CTAs: every CTA walks several tiles, the accumulator index is dynamic.
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_blackwell:hgemm_v6 4096 4096 1024 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx > %t.v6.ptx
// RUN: FileCheck %s --check-prefixes=ALL,TWO < %t.v6.ptx
// RUN: FileCheck %s --check-prefix=LOAD < %t.v6.ptx
// RUN: FileCheck %s --check-prefix=ACC2 < %t.v6.ptx
// RUN: FileCheck %s --check-prefix=EPI < %t.v6.ptx
// RUN: FileCheck %s --check-prefixes=END,ACCEMPTY < %t.v6.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.v6.ptx -o %t.v6.cubin %}
//
// CTA pairs: a 2x1x1 cluster, M = 256 MMAs of cta_group::2 issued by the even CTA.
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_blackwell:hgemm_v7 1024 1024 1024 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx > %t.v7.ptx
// RUN: FileCheck %s --check-prefix=PAIR < %t.v7.ptx
// RUN: FileCheck %s --check-prefix=PAIRLOAD < %t.v7.ptx
// RUN: FileCheck %s --check-prefix=PAIRMMA < %t.v7.ptx
// RUN: FileCheck %s --check-prefix=EPI < %t.v7.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.v7.ptx -o %t.v7.cubin %}
//
// The producer's tail (the drain), in tile IR where the barriers and phases are plain: 18
// k-tiles in a ring of 4, so the last commits arrived on stages 2, 3 (phase parity 1), 0, 1
// (parity 0), each CTA of v7's pair on its own barriers.
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_blackwell:hgemm_v5 1024 1024 1152 | FileCheck %s --check-prefix=DRAIN
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_blackwell:hgemm_v7 1024 1024 1152 | FileCheck %s --check-prefix=DRAIN

// One warpgroup (v4) or two (v5, v6: warps 0 and 1 load and issue, warpgroup 1 reads TMEM);
// warp 0 allocates TMEM, and the allocation reaches the other threads through the barrier.
// ALL: .target sm_100a
// ALL: .extern .shared .align 1024 .b8 __tile_smem[];
// ONE: .maxntid 128, 1, 1
// TWO: .maxntid 256, 1, 1
// ALL: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [__tile_smem], {{%r[0-9]+}};
// ALL-NEXT: tcgen05.fence::before_thread_sync;
// ALL: fence.mbarrier_init.release.cluster;
// ALL-NEXT: bar.sync 0;
// ALL-NEXT: tcgen05.fence::after_thread_sync;

// The load: wait until the stage is empty, arm its `full` barrier for the stage's bytes, two TMA
// boxes (A, B) completing on it.
// LOAD: mov.b32 [[BYTES:%r[0-9]+]], 49152;
// LOAD: mbarrier.try_wait.parity.shared.b64
// LOAD: mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [{{.*}}], [[BYTES]];
// LOAD-NOT: st.shared
// LOAD: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{.*}}];
// LOAD-NOT: st.shared
// LOAD: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes

// The MMA issue: wait for the stage's bytes, 4 MMAs, commit to the stage's `empty` barrier (a dynamic
// stage: a register base), and after the k-loop one commit to `acc_full`.
// MMA: elect.sync
// MMA: mbarrier.try_wait.parity.shared.b64
// MMA-COUNT-4: tcgen05.mma.cta_group::1.kind::f16
// MMA-NOT: tcgen05.mma
// MMA: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [{{%rd[0-9]+}}+40];
// MMA-NOT: tcgen05.mma
// MMA: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [__tile_smem+72];

// v6's MMA warp: wait until the epilogue has emptied accumulator i % 2, fence, then the k-loop
// into it, and commit to its acc_full barrier (dynamic: a register base).
// ACC2: elect.sync
// ACC2: mbarrier.try_wait.parity.shared.b64
// ACC2: tcgen05.fence::after_thread_sync;
// ACC2: mbarrier.try_wait.parity.shared.b64
// ACC2-COUNT-4: tcgen05.mma.cta_group::1.kind::f16
// ACC2: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [{{%rd[0-9]+}}+40];
// ACC2-NOT: tcgen05.mma
// ACC2: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [{{%rd[0-9]+}}+72];

// The epilogue: wait for acc_full, tcgen05.fence::after_thread_sync before the first
// tcgen05.ld, then 64 columns at a time: load, wait, convert, store.
// EPI: mbarrier.try_wait.parity.shared.b64
// EPI: tcgen05.fence::after_thread_sync;
// EPI-NOT: bar.sync
// EPI-COUNT-4: tcgen05.ld.sync.aligned.32x32b.x64.b32
// EPI: tcgen05.wait::ld.sync.aligned;
// EPI: cvt.rn.f16x2.f32
// EPI: st.global.v4.b32

// Teardown: every tcgen05.ld ordered before the dealloc by the fence pair around the last
// bar.sync. v6's epilogue hands each accumulator back with before_thread_sync + an arrive on
// its acc_empty barrier (dynamic).
// END: bar.sync 0;
// END-NEXT: tcgen05.fence::after_thread_sync;
// ACCEMPTY: tcgen05.wait::ld.sync.aligned;
// ACCEMPTY: tcgen05.fence::before_thread_sync;
// ACCEMPTY-NEXT: mbarrier.arrive.shared.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}+88];
// END: tcgen05.fence::before_thread_sync;
// END-NEXT: bar.sync 0;
// END: tcgen05.fence::after_thread_sync;
// END-NEXT: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
// END: tcgen05.dealloc.cta_group::1.sync.aligned.b32

// The drain: right after the producer's k-loop (its last TMA load), before the role ends, a wait
// for the last phase of each `empty` barrier (at byte 40: after the TMEM address and `full`).
// DRAIN: %[[EMPTY:.*]] = "tile.alloc_shared"() {offset = 40 : i64}
// DRAIN: scf.for
// DRAIN: "tile.copy_async"({{.*}}"global"
// DRAIN: "tile.copy_async"({{.*}}"global"
// DRAIN-NEXT: {{^ *}}}{{$}}
// DRAIN-NEXT: %[[S2:.*]] = arith.constant 2 : index
// DRAIN-NEXT: %[[E2:.*]] = "tile.addr"(%[[EMPTY]], %[[S2]])
// DRAIN-NEXT: %[[P1:.*]] = arith.constant 1 : i32
// DRAIN-NEXT: "tile.mbarrier_wait"(%[[E2]], %[[P1]])
// DRAIN-NEXT: %[[S3:.*]] = arith.constant 3 : index
// DRAIN-NEXT: %[[E3:.*]] = "tile.addr"(%[[EMPTY]], %[[S3]])
// DRAIN-NEXT: %[[P1B:.*]] = arith.constant 1 : i32
// DRAIN-NEXT: "tile.mbarrier_wait"(%[[E3]], %[[P1B]])
// DRAIN-NEXT: %[[S0:.*]] = arith.constant 0 : index
// DRAIN-NEXT: %[[E0:.*]] = "tile.addr"(%[[EMPTY]], %[[S0]])
// DRAIN-NEXT: %[[P0:.*]] = arith.constant 0 : i32
// DRAIN-NEXT: "tile.mbarrier_wait"(%[[E0]], %[[P0]])
// DRAIN-NEXT: %[[S1:.*]] = arith.constant 1 : index
// DRAIN-NEXT: %[[E1:.*]] = "tile.addr"(%[[EMPTY]], %[[S1]])
// DRAIN-NEXT: %[[P0B:.*]] = arith.constant 0 : i32
// DRAIN-NEXT: "tile.mbarrier_wait"(%[[E1]], %[[P0B]])
// DRAIN-NEXT: {{^ *}}}{{$}}

// v7: both CTAs allocate TMEM for the pair (cta_group::2) and meet at a cluster barrier before
// any CTA signals the other's barriers, and again before the dealloc.
// PAIR: .target sm_100a
// PAIR: .maxntid 256, 1, 1
// PAIR-NEXT: .explicitcluster
// PAIR-NEXT: .reqnctapercluster 2, 1, 1
// PAIR: mov.u32 {{%r[0-9]+}}, %cluster_ctarank;
// PAIR: tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [__tile_smem], {{%r[0-9]+}};
// PAIR-NEXT: tcgen05.fence::before_thread_sync;
// PAIR: barrier.cluster.arrive.aligned;
// PAIR-NEXT: barrier.cluster.wait.aligned;
// PAIR-NEXT: tcgen05.fence::after_thread_sync;
// PAIR: tcgen05.fence::before_thread_sync;
// PAIR-NEXT: barrier.cluster.arrive.aligned;
// PAIR-NEXT: barrier.cluster.wait.aligned;
// PAIR: tcgen05.fence::after_thread_sync;
// PAIR-NEXT: tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
// PAIR: tcgen05.dealloc.cta_group::2.sync.aligned.b32

// Each CTA's TMA loads complete on the even CTA's barrier (mapa to the leader's rank: 0, which
// LLVM knows from .reqnctapercluster 2, 1, 1), as .cta_group::2 loads; the even CTA arms it for
// both CTAs' bytes, 2 * (128 + 128) * 64 * 2.
// PAIRLOAD: mov.b32 [[BYTES:%r[0-9]+]], 65536;
// PAIRLOAD: mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], [[BYTES]];
// PAIRLOAD: mapa.shared::cluster.u64 [[LEADER:%rd[0-9]+]], {{%rd[0-9]+}}, 0;
// PAIRLOAD: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], {{\[}}[[LEADER]]{{\]}};
// PAIRLOAD: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], {{\[}}[[LEADER]]{{\]}};

// The even CTA's MMAs (M = 256: 128 rows in each CTA) and their commits to the barriers of both
// CTAs (mask 0b11).
// PAIRMMA: mbarrier.try_wait.parity.shared.b64
// PAIRMMA-COUNT-4: tcgen05.mma.cta_group::2.kind::f16
// PAIRMMA: mov.b16 [[MASK:%rs[0-9]+]], 3;
// PAIRMMA: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{{%rd[0-9]+}}+40], [[MASK]];
// PAIRMMA-NOT: tcgen05.mma
// PAIRMMA: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [__tile_smem+72], [[MASK]];
// PAIRMMA-NOT: tcgen05.mma.cta_group::1
