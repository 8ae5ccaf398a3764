// Clusters on Hopper: tile.copy_async_multicast (Tx.copy_async(..., multicast=mask)) becomes a
// TMA load with .multicast::cluster, tile.mbarrier_arrive on a peer's barrier (a tile.mapa
// pointer) mbarrier.arrive{.release.cluster}.shared::cluster (scope "cluster" / "cta"; the
// default .release.cta prints bare), tile.mbarrier_wait {scope = "cluster"} a try_wait loop
// with .acquire.cluster, and the kernel's tile.cluster its PTX cluster shape. Dispatch (NVVM), then PTX assembled by ptxas; rejections with their reasons.
//
// RUN: split-file %s %t
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})' | FileCheck %s --check-prefix=IR
// RUN: tilemlir-opt %t/ok.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// RUN: tilemlir-opt %t/invalid.mlir --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch)'

// IR-LABEL: gpu.func @pair
// IR: %[[MASK:.*]] = arith.constant 3 : i16
// IR: %[[DST:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// IR: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %[[MASK]]
// IR: %[[PEER:.*]] = nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// IR: nvvm.mbarrier.arrive %[[PEER]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// IR-NEXT: nvvm.mbarrier.arrive %[[PEER]] : !llvm.ptr<7>
// IR-NEXT: nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr -> i64
// IR: scf.while
// IR: nvvm.mbarrier.try_wait %{{.*}}, %{{.*}}, %{{.*}} {scope = #nvvm.mem_scope<cluster>}
// IR: nvvm.mbarrier.try_wait.parity
// IR-NOT: tile.

// PTX-LABEL: .entry pair(
// PTX: .explicitcluster
// PTX-NEXT: .reqnctapercluster 2, 1, 1
// PTX: mov.b16 [[MASK:%rs[0-9]+]], 3;
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{{%rd[0-9]+}}], [{{%rd[0-9]+}}, {{{%r[0-9]+}}, {{%r[0-9]+}}}], [__tile_smem], [[MASK]];
// PTX: mapa.shared::cluster.u64 [[PEER:%rd[0-9]+]], {{%rd[0-9]+}}, {{%r[0-9]+}};
// PTX: mbarrier.arrive.release.cluster.shared::cluster.b64 _, {{\[}}[[PEER]]{{\]}}
// PTX-NEXT: mbarrier.arrive.shared::cluster.b64 _, {{\[}}[[PEER]]{{\]}}
// PTX-NEXT: mbarrier.arrive.release.cluster.shared.b64 {{%rd[0-9]+}}, [__tile_smem+8]
// PTX: mbarrier.try_wait.parity.acquire.cluster.shared.b64
// PTX: mbarrier.try_wait.parity.b64

//--- ok.mlir
!A = !tile.buf<array<i64: 512, 256>, f16, "global", #tile.layout<"S[(512, 256):(256, 1)]">>
!W = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(256, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!Bar = !tile.buf<array<i64: 2>, i64, "shared", #tile.layout<"S[2:1]">>
gpu.module @m {
  // One thread of each CTA of a pair loads a 128x64 box into both CTAs (mask 0b11), arrives
  // on the peer's barrier (release at cluster, then at CTA scope) and on its own (cluster
  // scope), and waits at cluster scope on its own; then a CTA-scope wait.
  gpu.func @pair(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>,
                                                     tile.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    %one_i32 = arith.constant 1 : i32
    %mask = arith.constant 3 : i16
    %tid = gpu.thread_id x
    %a = "tile.global"(%p) : (!llvm.ptr) -> !A
    %w = "tile.slice"(%a) {static_offsets = array<i64: 0, 64>} : (!A) -> !W
    %bars = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Bar
    %stage = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !Sm
    %rank = "tile.cluster_ctarank"() : () -> i32
    %peer = arith.xori %rank, %one_i32 : i32
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      %full = "tile.addr"(%bars, %c0) : (!Bar, index) -> !llvm.ptr
      %empty = "tile.addr"(%bars, %c1) : (!Bar, index) -> !llvm.ptr
      "tile.copy_async_multicast"(%stage, %w, %full, %mask) {scope = "thread"} : (!Sm, !W, !llvm.ptr, i16) -> ()
      %peer_empty = "tile.mapa"(%empty, %peer) : (!llvm.ptr, i32) -> !llvm.ptr<7>
      "tile.mbarrier_arrive"(%peer_empty) {scope = "cluster"} : (!llvm.ptr<7>) -> ()
      "tile.mbarrier_arrive"(%peer_empty) {scope = "cta"} : (!llvm.ptr<7>) -> ()
      "tile.mbarrier_arrive"(%empty) {scope = "cluster"} : (!llvm.ptr) -> ()
      "tile.mbarrier_wait"(%empty, %c0_i32) {scope = "cluster"} : (!llvm.ptr, i32) -> ()
      "tile.mbarrier_wait"(%full, %c0_i32) {scope = "cta"} : (!llvm.ptr, i32) -> ()
    }
    gpu.return
  }
}

//--- invalid.mlir
// A kernel without clusters has no CTA to multicast to.
!G = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @no_cluster(%p: !llvm.ptr, %bar: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %mask = arith.constant 3 : i16
    %tid = gpu.thread_id x
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      // expected-error@+1 {{tma_multicast (priority 20): cluster_launch: a multicast copy writes the shared memory of other CTAs of a cluster: the kernel needs a cluster of more than one CTA (T.cluster_shape)}}
      "tile.copy_async_multicast"(%s, %g, %bar, %mask) {scope = "thread"} : (!Sm, !G, !llvm.ptr, i16) -> ()
    }
    gpu.return
  }
}

// -----

// Rank 2 is not in a cluster of 2 CTAs.
!G = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @wide_mask(%p: !llvm.ptr, %bar: !llvm.ptr) kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %mask = arith.constant 5 : i16
    %tid = gpu.thread_id x
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      // expected-error@+1 {{tma_multicast (priority 20): mask_fits_cluster: the multicast mask 0b101 names CTA ranks beyond the 2 CTAs of the kernel's cluster}}
      "tile.copy_async_multicast"(%s, %g, %bar, %mask) {scope = "thread"} : (!Sm, !G, !llvm.ptr, i16) -> ()
    }
    gpu.return
  }
}

// -----

// A mask computed at run time, and a peer's barrier instead of this CTA's.
!G = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @dynamic_mask(%p: !llvm.ptr, %bar: !llvm.ptr, %mask: i16) kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %tid = gpu.thread_id x
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      // expected-error@+1 {{tma_multicast (priority 20): mask_fits_cluster: the multicast mask must be a constant (a static set of CTA ranks)}}
      "tile.copy_async_multicast"(%s, %g, %bar, %mask) {scope = "thread"} : (!Sm, !G, !llvm.ptr, i16) -> ()
      %remote = "tile.mapa"(%bar, %c0_i32) : (!llvm.ptr, i32) -> !llvm.ptr<7>
      %three = arith.constant 3 : i16
      // expected-error@+1 {{tma_multicast (priority 20): own_barrier: a multicast copy signals the barrier at the same offset in each CTA of the mask: pass this CTA's barrier, not a tile.mapa pointer}}
      "tile.copy_async_multicast"(%s, %g, %remote, %three) {scope = "thread"} : (!Sm, !G, !llvm.ptr<7>, i16) -> ()
    }
    gpu.return
  }
}

// -----

// sm_80 has no clusters: a kernel launched in clusters is refused before dispatch.
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  // expected-error@+1 {{the kernel runs in clusters of [2, 1, 1]: thread-block clusters need sm_90 or newer, the target is sm_80}}
  gpu.func @sm80_cluster() kernel attributes {known_block_size = array<i32: 32, 1, 1>, tile.cluster = array<i32: 2, 1, 1>} {
    gpu.return
  }
}

// -----

// sm_80 has neither TMA nor clusters: every reason, and the cluster-scope barrier ops too
// (in a kernel without a cluster shape, which the verifier would refuse first).
!G = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
gpu.module @m [#nvvm.target<chip = "sm_80">] {
  gpu.func @sm80(%p: !llvm.ptr, %bar: !llvm.ptr, %remote: !llvm.ptr<7>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %mask = arith.constant 3 : i16
    %tid = gpu.thread_id x
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    %one = arith.cmpi eq, %tid, %c0 : index
    scf.if %one {
      // expected-error@+1 {{tma_multicast (priority 20): target: cp.async.bulk.tensor (TMA) is not available on sm_80; target: thread-block clusters is not available on sm_80}}
      "tile.copy_async_multicast"(%s, %g, %bar, %mask) {scope = "thread"} : (!Sm, !G, !llvm.ptr, i16) -> ()
      // expected-error@+1 {{mbarrier (priority 0): cluster_target: thread-block clusters is not available on sm_80}}
      "tile.mbarrier_arrive"(%remote) {scope = "cta"} : (!llvm.ptr<7>) -> ()
      // expected-error@+1 {{mbarrier (priority 0): cluster_target: thread-block clusters is not available on sm_80}}
      "tile.mbarrier_arrive"(%bar) {scope = "cluster"} : (!llvm.ptr) -> ()
      // expected-error@+1 {{try_wait_parity (priority 0): target: mbarrier.try_wait is not available on sm_80; scope_target: thread-block clusters is not available on sm_80}}
      "tile.mbarrier_wait"(%bar, %c0_i32) {scope = "cluster"} : (!llvm.ptr, i32) -> ()
    }
    gpu.return
  }
}
