// Thread-block cluster ops and tcgen05.commit's multicast: tile.cluster_ctarank
// (%cluster_ctarank), tile.cluster_sync (barrier.cluster arrive + wait) on chips with clusters,
// and tile.tcgen05_commit with a CTA mask (.multicast::cluster). Dispatch (NVVM), then PTX
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

// PTX: .target sm_100a
// PTX: barrier.cluster.arrive.aligned;
// PTX: barrier.cluster.wait.aligned;
// PTX: mov.u32 {{%r[0-9]+}}, %cluster_ctarank;
// PTX: mov.b16 [[MASK:%rs[0-9]+]], 3;
// PTX: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{{%rd[0-9]+}}], [[MASK]];

//--- ok.mlir
gpu.module @m {
  gpu.func @pair(%bar: !llvm.ptr<3>, %out: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    "tile.cluster_sync"() : () -> ()
    %rank = "tile.cluster_ctarank"() : () -> i32
    llvm.store %rank, %out : i32, !llvm.ptr<1>
    %mask = arith.constant 3 : i16
    "tile.tcgen05_commit"(%bar, %mask) {cta_group = 2 : i64} : (!llvm.ptr<3>, i16) -> ()
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
