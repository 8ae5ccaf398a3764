// Thread-block cluster ops and tcgen05.commit's multicast: tile.cluster_ctarank
// (%cluster_ctarank), tile.cluster_sync (barrier.cluster arrive + wait) on chips with clusters,
// tile.mapa (mapa.shared::cluster), tile.tcgen05_commit with a CTA mask (.multicast::cluster)
// and a TMA load completing on the CTA pair's leader barrier (.cta_group::2). Dispatch (NVVM), then PTX
// assembled by ptxas; on sm_80 a located rejection.
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_100a})' | FileCheck %s --check-prefix=IR
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.ptx -o %t.cubin %}
// RUN: tilemlir-opt %t/sm80.mlir --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80})'

// IR-LABEL: gpu.func @pair
// IR: nvvm.cluster.arrive {aligned}
// IR-NEXT: nvvm.cluster.wait {aligned}
// IR: nvvm.read.ptx.sreg.cluster.ctarank : i32
// IR: nvvm.tcgen05.commit %{{.*}}, multicast_mask = %{{.*}} {group = #nvvm.cta_group<cta_2>}
// IR-NOT: tile.

// IR-LABEL: gpu.func @pair_load
// IR: %[[MAPPED:.*]] = nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// IR: %[[BITS:.*]] = llvm.ptrtoint %[[MAPPED]] : !llvm.ptr<7> to i64
// IR: %[[LEADER:.*]] = llvm.inttoptr %[[BITS]] : i64 to !llvm.ptr<3>
// IR: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[LEADER]], box[%{{.*}}, %{{.*}}] {group = #nvvm.cta_group<cta_2>}

// PTX: .target sm_100a
// PTX: barrier.cluster.arrive.aligned;
// PTX: barrier.cluster.wait.aligned;
// PTX: mov.u32 {{%r[0-9]+}}, %cluster_ctarank;
// PTX: mov.b16 [[MASK:%rs[0-9]+]], 3;
// PTX: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{{%rd[0-9]+}}], [[MASK]];
// PTX-LABEL: .entry pair_load(
// PTX: mapa.shared::cluster.u64 [[LEADER:%rd[0-9]+]], {{%rd[0-9]+}}, {{%r[0-9]+}};
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2 [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], {{\[}}[[LEADER]]{{\]}};

//--- ok.mlir
!A = !tile.buf<array<i64: 512, 256>, f16, "global", #tile.layout<"S[(512, 256):(256, 1)]">>
!W = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(256, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!Bar = !tile.buf<array<i64: 1>, i64, "shared", #tile.layout<"S[1:1]">>
gpu.module @m {
  gpu.func @pair(%bar: !llvm.ptr<3>, %out: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    "tile.cluster_sync"() : () -> ()
    %rank = "tile.cluster_ctarank"() : () -> i32
    llvm.store %rank, %out : i32, !llvm.ptr<1>
    %mask = arith.constant 3 : i16
    "tile.tcgen05_commit"(%bar, %mask) {cta_group = 2 : i64} : (!llvm.ptr<3>, i16) -> ()
    gpu.return
  }

  // A CTA pair's TMA load: the barrier is the even CTA's (tile.mapa to rank & ~1, a
  // shared::cluster pointer), so the load is .cta_group::2 and signals that barrier.
  gpu.func @pair_load(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %not_one = arith.constant -2 : i32
    %tid = gpu.thread_id x
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a) {static_offsets = array<i64: 0, 64>} : (!A) -> !W
    %bars = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Bar
    %stage = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !Sm
    %rank = "tile.cluster_ctarank"() : () -> i32
    %leader = arith.andi %rank, %not_one : i32
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      %bar = "tile.addr"(%bars, %c0) : (!Bar, index) -> !llvm.ptr
      %leader_bar = "tile.mapa"(%bar, %leader) : (!llvm.ptr, i32) -> !llvm.ptr<7>
      "tile.copy_async"(%stage, %w, %leader_bar) {scope = "thread"} : (!Sm, !W, !llvm.ptr<7>) -> ()
    }
    gpu.return
  }
}

//--- sm80.mlir
gpu.module @m {
  gpu.func @no_clusters() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    // expected-error@+1 {{barrier_cluster (priority 0): target: thread-block clusters is not available on sm_80}}
    "tile.cluster_sync"() : () -> ()
    gpu.return
  }
}
