// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})'
// Elementwise math and reductions no variant can lower: one diagnostic naming each reason.

!X = !tile.buf<array<i64: 4, 256>, f32, "local", #tile.layout<"S[(4, 32, 8):(8, 1@laneid, 1)]">>
!Y = !tile.buf<array<i64: 4, 256>, f32, "local", #tile.layout<"S[(4, 8, 32):(8, 1, 1@laneid)]">>
gpu.module @m {
  gpu.func @operand_in_another_lane() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    %y = "tile.alloc_local"() : () -> !Y
    // expected-error@+1 {{dst[0, 1] is held by lane 0 but rhs[0, 1] by lane 1: elementwise math keeps every element in its thread}}
    "tile.binary"(%x, %x, %y) {fn = "add", scope = "warp"} : (!X, !X, !Y) -> ()
    gpu.return
  }
}

// -----

!X = !tile.buf<array<i64: 4, 256>, f32, "local", #tile.layout<"S[(4, 32, 8):(8, 1@laneid, 1)]">>
!H = !tile.buf<array<i64: 4, 256>, f16, "local", #tile.layout<"S[(4, 32, 8):(8, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @unary_types_differ() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    %h = "tile.alloc_local"() : () -> !H
    // expected-error@+1 {{float_tiles: dst holds f16 but src holds f32 (tile.cast first)}}
    "tile.unary"(%h, %x) {fn = "tanh", fast = false, scope = "warp"} : (!H, !X) -> ()
    gpu.return
  }
}

// -----

!X = !tile.buf<array<i64: 1, 2048>, f32, "local", #tile.layout<"S[(1, 2, 4, 32, 8):(1, 8, 1@warpid, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 1, 1>, f32, "local", #tile.layout<"S[(1, 1):(1, 1)]">>
gpu.module @m {
  gpu.func @over_warps_without_scratch() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    // (test_elementwise.py checks the other variants' reasons in the same diagnostic)
    // expected-error@+1 {{thread (priority 30): whole_rows: a thread holds 16 of the 2048 elements of each of its rows: the axis is spread over threads}}
    "tile.reduce"(%s, %x) {fn = "sum", axis = 1 : i64, scope = "cta"} : (!S, !X) -> ()
    gpu.return
  }
}

// -----

!X = !tile.buf<array<i64: 4, 256>, f32, "local", #tile.layout<"S[(4, 32, 8):(8, 1@laneid, 1)]">>
!S = !tile.buf<array<i64: 4, 2>, f32, "local", #tile.layout<"S[(4, 2):(2, 1)]">>
gpu.module @m {
  gpu.func @reduce_wrong_dst_shape() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %x = "tile.alloc_local"() : () -> !X
    %s = "tile.alloc_local"() : () -> !S
    // expected-error@+1 {{rows: dst is [4, 2]; reducing src [4, 256] over axis 1 gives [4, 1]}}
    "tile.reduce"(%s, %x) {fn = "max", axis = 1 : i64, scope = "warp"} : (!S, !X) -> ()
    gpu.return
  }
}

// -----

// A bias vector held by lane % 4 only (no replicas over the lanes of the other rows): the
// accumulator's row 1 is in lane 4, which does not hold the bias.
!Acc = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!Bias = !tile.buf<array<i64: 8>, f32, "local", #tile.layout<"S[(4, 2):(1@laneid, 1)]">>
gpu.module @m {
  gpu.func @bias_not_replicated() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %acc = "tile.alloc_local"() : () -> !Acc
    %bias = "tile.alloc_local"() : () -> !Bias
    // expected-error@+1 {{dst[1, 0] is held by lane 4 but rhs[0] by lane 0: elementwise math keeps every element in its thread}}
    "tile.binary"(%acc, %acc, %bias) {fn = "add", scope = "warp"} : (!Acc, !Acc, !Bias) -> ()
    gpu.return
  }
}

// -----

// A replicated dst from an operand that is not replicated alike: the replicas would stay
// unwritten.
!Bias = !tile.buf<array<i64: 8>, f32, "local", #tile.layout<"S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]">>
!One = !tile.buf<array<i64: 8>, f32, "local", #tile.layout<"S[(4, 2):(1@laneid, 1)]">>
gpu.module @m {
  gpu.func @replicated_dst() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %bias = "tile.alloc_local"() : () -> !Bias
    %one = "tile.alloc_local"() : () -> !One
    // expected-error@+1 {{replicated_alike: dst (S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]) is replicated but LHS (S[(4, 2):(1@laneid, 1)]) is not replicated the same way}}
    "tile.binary"(%bias, %one, %bias) {fn = "add", scope = "warp"} : (!Bias, !One, !Bias) -> ()
    gpu.return
  }
}
