// RUN: tilemlir-opt %s --split-input-file --pass-pipeline='builtin.module(tile-dispatch{chip=sm_100a},tile-materialize,canonicalize)' | FileCheck %s
// tile.copy_async TMEM -> registers on sm_100a -> tcgen05.ld.sync.aligned.32x32b: each warp
// reads its 32 TMEM lanes (warp w of a warpgroup: lanes 32w..32w+31), the columns in legal
// power-of-two counts (.x1 .. .x128), one register per column.

// Seed 000's epilogue: the warpgroup reads columns 128..255 of the allocation, thread t of
// the warpgroup gets row t: one .x128 load at lane 32 * w, column 128.
// CHECK-LABEL: gpu.func @warpgroup_128x128
// CHECK-DAG: %[[COL:.*]] = arith.constant 128 : i32
// CHECK-DAG: %[[LANES:.*]] = arith.constant 2097152 : index
// CHECK: %[[D:.*]] = llvm.alloca {{.*}} x !llvm.array<128 x f32>
// CHECK: %[[BASE:.*]] = arith.addi %arg0, %[[COL]] : i32
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[W:.*]] = arith.remui {{.*}}
// CHECK: %[[WOFF:.*]] = arith.muli %[[W]], %[[LANES]] : index
// CHECK: %[[WOFF32:.*]] = arith.index_cast %[[WOFF]] : index to i32
// CHECK: %[[ADDR:.*]] = arith.addi %[[BASE]], %[[WOFF32]] : i32
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[ADDR]] : i32 to !llvm.ptr<6>
// CHECK: %[[BITS:.*]] = nvvm.tcgen05.ld %[[PTR]] {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
// CHECK: %[[F:.*]] = llvm.bitcast %[[BITS]] : vector<128xi32> to vector<128xf32>
// CHECK: %[[F0:.*]] = llvm.extractelement %[[F]]
// CHECK: llvm.store %[[F0]], %[[D]] : f32, !llvm.ptr
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: nvvm.tcgen05.wait <load>
!T512 = !tile.buf<array<i64: 128, 512>, f32, "tmem", #tile.layout<"S[(128, 512):(1@TLane, 1@TCol)]">>
!T = !tile.buf<array<i64: 128, 128>, f32, "tmem", #tile.layout<"S[(128, 128):(1@TLane, 1@TCol)] + {TCol: 128}">>
!R = !tile.buf<array<i64: 128>, f32, "local", #tile.layout<"S[(128):(1)]">>
!Rwg = !tile.buf<array<i64: 128, 128>, f32, "local", #tile.layout<"S[(128, 128):(1@tid_in_wg, 1)]">>
gpu.module @m {
  gpu.func @warpgroup_128x128(%taddr: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tmem = "tile.tmem"(%taddr) : (i32) -> !T512
    %src = "tile.slice"(%tmem) {static_offsets = array<i64: 0, 128>} : (!T512) -> !T
    %regs = "tile.alloc_local"() : () -> !R
    %dst = "tile.view"(%regs) : (!R) -> !Rwg
    "tile.copy_async"(%dst, %src) {scope = "warpgroup"} : (!Rwg, !T) -> ()
    "tile.tcgen05_wait"() {kind = "ld"} : () -> ()
    gpu.return
  }
}

// -----

// 192 columns: .x128 then .x64 at column +128.
// CHECK-LABEL: gpu.func @warpgroup_128x192
// CHECK: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %c128_i32 : i32
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[NEXT]] : i32 to !llvm.ptr<6>
// CHECK: nvvm.tcgen05.ld %[[PTR]] {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<64xi32>
// CHECK-NOT: nvvm.tcgen05.ld
!T = !tile.buf<array<i64: 128, 192>, f32, "tmem", #tile.layout<"S[(128, 192):(1@TLane, 1@TCol)]">>
!R = !tile.buf<array<i64: 128, 192>, f32, "local", #tile.layout<"S[(128, 192):(1@tid_in_wg, 1)]">>
gpu.module @m {
  gpu.func @warpgroup_128x192(%taddr: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %src = "tile.tmem"(%taddr) : (i32) -> !T
    %dst = "tile.alloc_local"() : () -> !R
    "tile.copy_async"(%dst, %src) {scope = "warpgroup"} : (!R, !T) -> ()
    gpu.return
  }
}

// -----

// One warp reads lanes 64..95 (it must be warp 2 of its warpgroup), 3 columns of i32 at
// column 8: .x2, then .x1 (a plain i32) at column 10; every lane holds its row's 3 values.
// CHECK-LABEL: gpu.func @warp_32x3_i32
// CHECK-DAG: %[[AT:.*]] = arith.constant 4194312 : i32
// CHECK-DAG: %[[AT2:.*]] = arith.constant 4194314 : i32
// CHECK: %[[A0:.*]] = arith.addi %arg0, %[[AT]] : i32
// CHECK: %[[P0:.*]] = llvm.inttoptr %[[A0]]
// CHECK: nvvm.tcgen05.ld %[[P0]] {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<2xi32>
// CHECK: %[[A1:.*]] = arith.addi %arg0, %[[AT2]] : i32
// CHECK: %[[P1:.*]] = llvm.inttoptr %[[A1]]
// CHECK: nvvm.tcgen05.ld %[[P1]] {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
// CHECK-NOT: nvvm.tcgen05.ld
!T = !tile.buf<array<i64: 128, 16>, i32, "tmem", #tile.layout<"S[(128, 16):(1@TLane, 1@TCol)]">>
!Tw = !tile.buf<array<i64: 32, 3>, i32, "tmem", #tile.layout<"S[(32, 3):(1@TLane, 1@TCol)] + {TLane: 64, TCol: 8}">>
!R = !tile.buf<array<i64: 32, 3>, i32, "local", #tile.layout<"S[(32, 3):(1@laneid, 1)]">>
gpu.module @m {
  gpu.func @warp_32x3_i32(%taddr: i32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tmem = "tile.tmem"(%taddr) : (i32) -> !T
    %src = "tile.slice"(%tmem) {static_offsets = array<i64: 64, 8>} : (!T) -> !Tw
    %dst = "tile.alloc_local"() : () -> !R
    "tile.copy_async"(%dst, %src) {scope = "warp"} : (!R, !Tw) -> ()
    gpu.return
  }
}
