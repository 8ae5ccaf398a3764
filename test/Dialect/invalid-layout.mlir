// RUN: tilemlir-opt %s --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})'
// Layouts are checked when dispatch starts, at the op that defines the buffer: the text must
// parse and the layout must hold exactly the buffer's elements.

gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{invalid tile buffer type: bad layout text at column 7: expected an integer, found ':'}}
    %a = "tile.alloc_local"() : () -> !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, :(1)]">>
    // expected-error@+1 {{invalid tile buffer type: S[(4):(1)] has 4 elements but shape (16, 8) has 128}}
    %b = "tile.alloc_local"() : () -> !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(4):(1)]">>
    "tile.copy"(%a, %b) {scope = "warp"} : (!tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, :(1)]">>, !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(4):(1)]">>) -> ()
    gpu.return
  }
}
