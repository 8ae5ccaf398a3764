// Seed 000's hgemm_v1..v3, written in the kernel language (tilemlir/kernels/hgemm_tcgen05.py),
// produce this tile IR.
//
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_tcgen05:hgemm_v1 128 128 64 | FileCheck %s --check-prefixes=COMMON,V1
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_tcgen05:hgemm_v2 128 128 256 | FileCheck %s --check-prefixes=COMMON,V2
// RUN: tilemlir-kernel tilemlir.kernels.hgemm_tcgen05:hgemm_v3 256 256 256 | FileCheck %s --check-prefixes=COMMON,V3

// One warpgroup per CTA; a 1x1 grid for v1/v2, 2x2 for v3 at 256x256.
// V1: gpu.func @hgemm_v1(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.grid = array<i32: 1, 1, 1>, tile.params = ["A", "B", "D"]}
// V2: gpu.func @hgemm_v2({{.*}} kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.grid = array<i32: 1, 1, 1>
// V3: gpu.func @hgemm_v3({{.*}} kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.grid = array<i32: 2, 2, 1>
// COMMON: "tile.global"(%{{.*}}) : (!llvm.ptr) -> !tile.buf<array<i64: {{128|256}}, {{64|256}}>, f16, "global"

// The pool: control words first, operand tiles from byte 1024, 128B-swizzled MMA layouts.
// COMMON: %[[TADDR:.*]] = "tile.alloc_shared"() {offset = 0 : i64} : () -> !tile.buf<array<i64: 1>, i32, "shared"
// COMMON: %[[BAR:.*]] = "tile.alloc_shared"() {offset = 8 : i64} : () -> !tile.buf<array<i64: 1>, i64, "shared"
// COMMON: %[[AS:.*]] = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
// COMMON: %[[BS:.*]] = "tile.alloc_shared"() {offset = 17408 : i64} : () -> !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>

// Barrier init by one thread of warp 0, TMEM allocation by warp 0.
// COMMON: scf.if
// COMMON: scf.if
// COMMON: "tile.mbarrier_init"
// COMMON: "tile.tmem_alloc"(%{{.*}}) {cta_group = 1 : i64, ncols = 512 : i64}
// COMMON: "tile.fence"() {kind = "proxy_async_shared"}
// COMMON: "tile.fence"() {kind = "mbarrier_init"}
// COMMON: "tile.cta_sync"()
// COMMON: "tile.tmem"(%{{.*}}) : (i32) -> !tile.buf<array<i64: 128, 512>, f32, "tmem", #tile.layout<"S[(128, 512):(1@TLane, 1@TCol)]">>

// v1: one copy + one MMA (accum = false), then one wait on phase 0.
// V1: "tile.copy"(%[[AS]], %{{.*}}) {scope = "cta"}
// V1: "tile.copy"(%[[BS]], %{{.*}}) {scope = "cta"}
// V1: %[[ELECT:.*]] = "tile.elect_sync"() : () -> i1
// V1: scf.if %[[ELECT]]
// V1: %[[FALSE:.*]] = arith.constant false
// V1: "tile.gemm_async"(%{{.*}}, %[[AS]], %[[BS]], %[[FALSE]]) {cta_group = 1 : i64, dispatch = "tcgen05", scope = "thread", transpose_b = false}
// V1: "tile.tcgen05_commit"
// V1: "tile.mbarrier_wait"(%{{.*}}, %{{.*}}) {scope = "cta"} : (!llvm.ptr<3>, i32) -> ()
// V1-NOT: scf.for

// v2/v3: the K loop carries the barrier phase and flips it after each wait.
// V2: %[[PHASE0:.*]] = arith.constant 0 : i32
// V2: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[PHASE:.*]] = %[[PHASE0]]) -> (i32)
// V3: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[PHASE:.*]] = %{{.*}}) -> (i32)
// V2: "tile.slice"(%{{.*}}, %{{.*}}) {static_offsets = array<i64: 0, -9223372036854775808>}
// V3: "tile.slice"(%{{.*}}, %{{.*}}, %{{.*}}) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>}
// V2: %[[ACC:.*]] = arith.cmpi ne, %[[I]], %{{.*}} : index
// V3: %[[ACC:.*]] = arith.cmpi ne, %[[I]], %{{.*}} : index
// V2: "tile.gemm_async"(%{{.*}}, %[[AS]], %[[BS]], %[[ACC]]) {cta_group = 1 : i64, dispatch = "tcgen05", scope = "thread", transpose_b = false}
// V3: "tile.gemm_async"(%{{.*}}, %[[AS]], %[[BS]], %[[ACC]]) {cta_group = 1 : i64, dispatch = "tcgen05", scope = "thread", transpose_b = false}
// V2: "tile.mbarrier_wait"(%{{.*}}, %[[PHASE]]) {scope = "cta"} : (!llvm.ptr<3>, i32) -> ()
// V2-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// V2-NEXT: %[[FLIP:.*]] = arith.xori %[[PHASE]], %[[ONE]] : i32
// V2-NEXT: scf.yield %[[FLIP]] : i32
// V3: "tile.mbarrier_wait"(%{{.*}}, %[[PHASE]]) {scope = "cta"} : (!llvm.ptr<3>, i32) -> ()
// V3-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// V3-NEXT: %[[FLIP:.*]] = arith.xori %[[PHASE]], %[[ONE]] : i32
// V3-NEXT: scf.yield %[[FLIP]] : i32

// Writeback: TMEM -> registers (warpgroup view, thread t holds row t), cast, per-thread row store.
// COMMON: %[[DREG:.*]] = "tile.alloc_local"() : () -> !tile.buf<array<i64: 128>, f32, "local", #tile.layout<"S[(128):(1)]">>
// COMMON: %[[DF16:.*]] = "tile.alloc_local"() : () -> !tile.buf<array<i64: 128>, f16, "local"
// COMMON: %[[WG:.*]] = "tile.view"(%[[DREG]]) {{.*}} -> !tile.buf<array<i64: 128, 128>, f32, "local", #tile.layout<"S[(128, 128):(1@tid_in_wg, 1)]">>
// COMMON: "tile.copy_async"(%[[WG]], %{{.*}}) {scope = "warpgroup"}
// COMMON: "tile.tcgen05_wait"() {kind = "ld"}
// COMMON: "tile.cast"(%[[DF16]], %[[DREG]]) {scope = "thread"}
// COMMON: %[[ROW:.*]] = "tile.slice"(%{{.*}}, %{{.*}}, %{{.*}}) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} {{.*}} -> !tile.buf<array<i64: 128>, f16, "global", #tile.layout<"S[(128):(1)]">>
// COMMON: "tile.copy"(%[[ROW]], %[[DF16]]) {scope = "thread"}
// COMMON: "tile.tmem_relinquish"() {cta_group = 1 : i64}
// COMMON: "tile.tmem_dealloc"(%{{.*}}) {cta_group = 1 : i64, ncols = 512 : i64}
