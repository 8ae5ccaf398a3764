// Seed 000's roadmap on Hopper (tilemlir/kernels/hgemm_hopper.py) down to sm_90a PTX, assembled
// by ptxas: v4 (TMA + mbarrier ring), v5 (warp-specialized), v6 (persistent, TMA-store
// epilogue, ragged shape), v7 (2x1 clusters, B multicast; 3 tile rows: a pair's second tile
// lies past M; and on one cluster, the epilogue under the next tile's MMAs), v6 with split-K,
// v8 (split-K reduced in 2-CTA clusters, two clusters per tile).
// The same kernels run on the H200 in test_hgemm_hopper_gpu.py and test_gemm_splitk_gpu.py.
//
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v4 256 512 1024 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v4.ptx
// RUN: FileCheck %s --check-prefixes=ALL,V4 < %t.v4.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v4.ptx -o %t.v4.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v5 256 512 1024 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v5.ptx
// RUN: FileCheck %s --check-prefixes=ALL,WS < %t.v5.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v5.ptx -o %t.v5.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 1000 1000 1000 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v6.ptx
// RUN: FileCheck %s --check-prefixes=ALL,WS,V6 < %t.v6.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v6.ptx -o %t.v6.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v7 384 768 320 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v7.ptx
// RUN: FileCheck %s --check-prefix=V7 < %t.v7.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v7.ptx -o %t.v7.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v7 384 768 320 SMS=2 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v7o.ptx
// RUN: FileCheck %s --check-prefix=V7O < %t.v7o.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v7o.ptx -o %t.v7o.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v7 1280 4096 4096 BN=320 STAGES=3 EPI_N=64 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v7w.ptx
// RUN: FileCheck %s --check-prefix=V7W --implicit-check-not=m64n320 < %t.v7w.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v7w.ptx -o %t.v7w.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 4096 SPLIT_K=3 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.split.ptx
// RUN: FileCheck %s --check-prefix=SPLIT < %t.split.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.split.ptx -o %t.split.cubin %}
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v8 1000 1000 8192 SPLIT_K=4 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.v8.ptx
// RUN: FileCheck %s --check-prefix=V8 < %t.v8.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.v8.ptx -o %t.v8.cubin %}

// The tensor maps dispatch added: 128-byte grid constants after the user's pointers, read
// through their generic param-space address.
// ALL: .param .u64 .ptr .align 1 [[K:hgemm_v[0-9]]]_param_2,
// ALL-NEXT: .param .align 64 .b8 [[K]]_param_3[128],
// ALL-NEXT: .param .align 64 .b8 [[K]]_param_4[128]
// V6-NEXT: .param .align 64 .b8 [[K]]_param_5[128]
// ALL: cvta.param.u64
// ALL: mbarrier.init.shared.b64 [__tile_smem], {{%r[0-9]+}};
// ALL: fence.mbarrier_init.release.cluster;
// ALL: bar.sync 0;

// Consumers: wait for a full stage, four m64n256k16 wgmma over the 64-deep k-tile, keep one
// group in flight.
// V4: mbarrier.try_wait.parity.shared.b64
// WS: setmaxnreg.inc.sync.aligned.u32 232;
// WS: mbarrier.try_wait.parity.shared.b64
// ALL: wgmma.fence.sync.aligned;
// ALL-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// ALL: wgmma.commit_group.sync.aligned;
// ALL-NEXT: wgmma.wait_group.sync.aligned 1;
// V4: bar.sync 0;
// WS: mbarrier.arrive.shared.b64

// The producer (v5, v6: its own warpgroup with fewer registers; v4: one thread of the
// consumers): wait for a free stage, arm the full barrier with the stage's bytes, two TMA loads.
// WS: setmaxnreg.dec.sync.aligned.u32 40;
// WS: elect.sync
// WS: mbarrier.try_wait.parity.shared.b64
// ALL: mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [{{%rd[0-9]+}}], {{%r[0-9]+}};
// ALL: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}];
// ALL: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes

// v6's epilogue: the previous store has read the staging buffer, the warpgroup's barrier,
// stmatrix, the proxy fence, TMA stores of two 64x64 boxes per 128-column chunk, committed.
// V6: wgmma.wait_group.sync.aligned 0;
// V6: cp.async.bulk.wait_group.read 0;
// V6: bar.sync {{%r[0-9]+}}, 128;
// V6-COUNT-8: stmatrix.sync.aligned.m8n8.x4.shared.b16
// V6: fence.proxy.async.shared::cta;
// V6-NEXT: bar.sync {{%r[0-9]+}}, 128;
// V6: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [{{%rd[0-9]+}}];
// V6: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// V6: cp.async.bulk.commit_group;
// V6: cp.async.bulk.wait_group.read 0;
// ALL: ret;

// v7: launched in clusters of 2 (and with .maxnreg, the register count at entry, without which
// ptxas ignores setmaxnreg: C7508); each CTA's barriers are initialised, then the cluster syncs
// before any CTA signals its peer. Consumers free a stage in both CTAs: their own barrier and
// the peer's (mapa; CTA scope, as CUTLASS's cluster barriers). The producer waits, arms its
// full barrier with the whole stage, (128 + 256) * 64 * 2 bytes, loads its A tile and
// multicasts its half of B to both CTAs (mask 0b11). The cluster syncs again before exit.
// V7: .param .align 64 .b8 hgemm_v7_param_5[128]
// V7-NEXT: )
// V7-NEXT: .maxntid 384, 1, 1
// V7-NEXT: .maxnreg 168
// V7-NEXT: .explicitcluster
// V7-NEXT: .reqnctapercluster 2, 1, 1
// V7: mov.b32 [[TWO_CONSUMERS:%r[0-9]+]], 4;
// V7: mbarrier.init.shared.b64 [__tile_smem+32], [[TWO_CONSUMERS]];
// V7: fence.mbarrier_init.release.cluster;
// V7-NEXT: barrier.cluster.arrive.aligned;
// V7-NEXT: barrier.cluster.wait.aligned;
// V7: setmaxnreg.inc.sync.aligned.u32 232;
// V7: mbarrier.try_wait.parity.shared.b64
// V7-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// V7: wgmma.wait_group.sync.aligned 1;
// V7: mapa.shared::cluster.u64 [[PEER:%rd[0-9]+]], {{%rd[0-9]+}}, {{%r[0-9]+}};
// V7: mbarrier.arrive.shared.b64
// V7: mbarrier.arrive.shared::cluster.b64 _, {{\[}}[[PEER]]{{\]}}
// V7: wgmma.wait_group.sync.aligned 0;
// V7-COUNT-8: stmatrix.sync.aligned.m8n8.x4.shared.b16
// V7: fence.proxy.async.shared::cta;
// V7: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// V7: setmaxnreg.dec.sync.aligned.u32 40;
// V7: elect.sync
// V7: mbarrier.try_wait.parity.shared.b64 P1, [{{%r[0-9]+}}]
// V7: mov.b32 [[BYTES:%r[0-9]+]], 49152;
// V7-NEXT: mbarrier.arrive.expect_tx.shared.b64 {{%rd[0-9]+}}, [__tile_smem], [[BYTES]];
// V7: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [__tile_smem];
// V7: mov.b16 [[MASK:%rs[0-9]+]], 3;
// V7-NEXT: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [__tile_smem], [[MASK]];
// V7: barrier.cluster.arrive.aligned;
// V7-NEXT: barrier.cluster.wait.aligned;
// V7-NEXT: ret;

// v7 on one cluster (SMS=2), each CTA walking several tiles: the previous tile's two
// 128-column chunks are stored (stmatrix, TMA store) each under one of the next tile's first
// two k-tiles, with that k-tile's MMAs still in flight (no wait_group 0 before the store).
// V7O: setmaxnreg.inc.sync.aligned.u32 232;
// V7O: mbarrier.try_wait.parity.shared.b64
// V7O-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// V7O: wgmma.wait_group.sync.aligned 1;
// V7O-NOT: wgmma.wait_group.sync.aligned 0;
// V7O: cp.async.bulk.wait_group.read 0;
// V7O-COUNT-8: stmatrix.sync.aligned.m8n8.x4.shared.b16
// V7O: fence.proxy.async.shared::cta;
// V7O: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// V7O: mbarrier.try_wait.parity.shared.b64
// V7O-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// V7O: wgmma.wait_group.sync.aligned 1;
// V7O-NOT: wgmma.wait_group.sync.aligned 0;
// V7O: cp.async.bulk.wait_group.read 0;
// V7O-COUNT-8: stmatrix.sync.aligned.m8n8.x4.shared.b16
// V7O: fence.proxy.async.shared::cta;
// V7O: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// V7O: mbarrier.try_wait.parity.shared.b64
// V7O: wgmma.wait_group.sync.aligned 0;
// V7O: setmaxnreg.dec.sync.aligned.u32 40;

// v7 with 128 x 320 tiles: each consumer's k-tile is two m64n160k16 chains (80 accumulator
// registers each, B rows 0-159 then 160-319) under one fence and one commit.
// V7W: wgmma.fence.sync.aligned;
// V7W-NOT: wgmma.commit_group
// V7W-COUNT-4: wgmma.mma_async.sync.aligned.m64n160k16.f32.f16.f16 {%r[[#ACC:]],
// V7W-NOT: wgmma.commit_group
// V7W-COUNT-4: wgmma.mma_async.sync.aligned.m64n160k16.f32.f16.f16 {%r[[#ACC+80]],
// V7W: wgmma.commit_group.sync.aligned;

// v6 with SPLIT_K=3 (200x296x4096: 4 tiles x 3 splits), after a unit's last wgmma: the
// warpgroup's fp32 partial, each thread's 128 accumulators as they are (32 16-byte stores),
// the warpgroup's barrier, one thread's count on the tile's counter between gpu-scope fences
// (release, acquire), its answer to the warpgroup (bar.red.or), then the last unit's sum: 32
// 16-byte loads of each of the 3 splits' partials (LLVM unrolls the loop over splits 1..2),
// the counter reset, and the usual epilogue.
// SPLIT: wgmma.wait_group.sync.aligned 0;
// SPLIT-COUNT-32: st.global.v4.b32 [{{%rd[0-9]+}}{{(\+[0-9]+)?}}], {{{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}};
// SPLIT-NEXT: bar.sync {{%r[0-9]+}}, 128;
// SPLIT: fence.acq_rel.gpu;
// SPLIT-NEXT: atom.global.add.u32 [[OLD:%r[0-9]+]], [{{%rd[0-9]+}}{{(\+-?[0-9]+)?}}], 1;
// SPLIT-NEXT: fence.acq_rel.gpu;
// SPLIT-NEXT: setp.eq.b32 [[LAST:%p[0-9]+]], [[OLD]], 2;
// SPLIT: bar.red.or.pred {{%p[0-9]+}}, {{%r[0-9]+}}, 128, [[LAST]];
// SPLIT-COUNT-96: ld.global.v4.b32
// SPLIT-NOT: ld.global.v2
// SPLIT: add.f32
// SPLIT: st.global.b32 [{{%rd[0-9]+}}{{(\+-?[0-9]+)?}}], 0;
// SPLIT: stmatrix.sync.aligned.m8n8.x4.shared.b16
// SPLIT: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// SPLIT: ret;

// v8 with SPLIT_K=4 (1000x1000x8192: 32 tiles x 4 splits, clusters of 2). After the last
// wgmma each consumer publishes the half its peer owns (64 x 128 fp32: 32 8-byte stores per
// thread), the warpgroup's barrier, one thread's arrival on the peer's barrier (mapa,
// release at cluster scope), everyone's acquire at cluster scope, the peer's half (32 loads)
// added in registers. Then the pair of clusters: the cluster's sum published, counted between
// gpu-scope fences, the second of two (old value 1) told to the warpgroup, which adds the other
// sum, resets the counter and stores its half through stmatrix and TMA.
// V8: .maxntid 384, 1, 1
// V8-NEXT: .maxnreg 168
// V8-NEXT: .explicitcluster
// V8-NEXT: .reqnctapercluster 2, 1, 1
// V8: fence.mbarrier_init.release.cluster;
// V8-NEXT: barrier.cluster.arrive.aligned;
// V8-NEXT: barrier.cluster.wait.aligned;
// V8: wgmma.wait_group.sync.aligned 0;
// V8-COUNT-32: st.global.v2.b32
// V8: bar.sync {{%r[0-9]+}}, 128;
// V8: mapa.shared::cluster.u64 [[PEER:%rd[0-9]+]], {{%rd[0-9]+}}, {{[01]}};
// V8: mbarrier.arrive.release.cluster.shared::cluster.b64 _, {{\[}}[[PEER]]{{\]}}
// V8: mbarrier.try_wait.parity.acquire.cluster.shared.b64
// V8-COUNT-32: ld.global.v2.b32
// V8: add.f32
// V8-COUNT-32: st.global.v2.b32
// V8-NEXT: bar.sync {{%r[0-9]+}}, 128;
// V8: fence.acq_rel.gpu;
// V8-NEXT: atom.global.add.u32 [[OLD:%r[0-9]+]], [{{%rd[0-9]+}}], 1;
// V8-NEXT: fence.acq_rel.gpu;
// V8-NEXT: setp.eq.b32 [[SECOND:%p[0-9]+]], [[OLD]], 1;
// V8: bar.red.or.pred {{%p[0-9]+}}, {{%r[0-9]+}}, 128, [[SECOND]];
// V8-COUNT-32: ld.global.v2.b32
// V8: add.f32
// V8: st.global.b32 [{{%rd[0-9]+}}{{(\+-?[0-9]+)?}}], 0;
// V8: stmatrix.sync.aligned.m8n8.x4.shared.b16
// V8: fence.proxy.async.shared::cta;
// V8: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// V8: ret;
