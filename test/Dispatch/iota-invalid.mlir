// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})'
// tile.iota no variant can lower: one diagnostic naming each reason.

!Sh = !tile.buf<array<i64: 16, 8>, f32, "shared", #tile.layout<"S[(16, 8):(8, 1)]">>
gpu.module @m {
  gpu.func @shared_dst() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sh
    // expected-error@+1 {{registers (priority 0): registers: fills register tiles; dst is in shared (iota into registers, then copy)}}
    "tile.iota"(%x) {axis = 0 : i64, scope = "warp"} : (!Sh) -> ()
    gpu.return
  }
}

// -----

!Acc = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @axis_out_of_range() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !Acc
    // expected-error@+1 {{axis: axis 2 is out of dst's 2 dims}}
    "tile.iota"(%x) {axis = 2 : i64, scope = "warp"} : (!Acc) -> ()
    gpu.return
  }
}

// -----

!H = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @f16_dst(%o: f32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !H
    // expected-error@+1 {{element_type: dst holds f16; iota writes f32 (exact up to 2**24) or i32 tiles (iota into f32, then tile.cast); offset_type: offset is f32 but dst holds f16}}
    "tile.iota"(%x, %o) {axis = 0 : i64, scope = "warp"} : (!H, f32) -> ()
    gpu.return
  }
}

// -----

!Acc = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @offset_type(%o: i32) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !Acc
    // expected-error@+1 {{offset_type: offset is i32 but dst holds f32}}
    "tile.iota"(%x, %o) {axis = 0 : i64, scope = "warp"} : (!Acc, i32) -> ()
    gpu.return
  }
}

// -----

// Lane l holds row l % 3: no sum of lane bits gives that.
!X = !tile.buf<array<i64: 3, 8>, f32, "local", #tile.layout<"S[(3, 8):(1@laneid, 3@laneid)]">>
gpu.module @m {
  gpu.func @not_decomposable() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    // expected-error@+1 {{the coordinate along axis 0 of dst's layout S[(3, 8):(1@laneid, 3@laneid)] is not a per-slot constant plus a sum of fields of the thread index: thread 3 (of the 32 it repeats over) holds coordinate 0 in slot 0, where the fit from the other threads gives 3}}
    "tile.iota"(%x) {axis = 0 : i64, scope = "warp"} : (!X) -> ()
    gpu.return
  }
}

// -----

!Acc = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @some_lanes_only() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !Acc
    %t = gpu.thread_id x
    %c = arith.constant 16 : index
    %b = arith.cmpi ult, %t, %c : index
    scf.if %b {
      // expected-error@+1 {{scope_reaches: the op sits under a branch}}
      "tile.iota"(%x) {axis = 0 : i64, scope = "warp"} : (!Acc) -> ()
    }
    gpu.return
  }
}
