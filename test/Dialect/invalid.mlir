// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics
// Malformed tile IR is rejected by the IRDL verifier with a located diagnostic.

func.func @bad_scope(%p: !llvm.ptr) {
  // expected-error@+1 {{'"bogus"' does not satisfy the constraint}}
  %g = "tile.global"(%p) : (!llvm.ptr) -> !tile.buf<array<i64: 4>, f32, "bogus", #tile.layout<"S[4:1]">>
  return
}

// -----

!R = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(128):(1)]">>
func.func @missing_attr(%r: !R) {
  // expected-error@+1 {{attribute "scope" is expected but not provided}}
  "tile.copy"(%r, %r) : (!R, !R) -> ()
  return
}

// -----

func.func @wrong_operand(%i: i32) {
  // expected-error@+1 {{expected base type 'llvm.ptr' but got 'builtin.integer'}}
  %g = "tile.global"(%i) : (i32) -> !tile.buf<array<i64: 4>, f32, "global", #tile.layout<"S[4:1]">>
  return
}

// -----

func.func @syntax(%p: !llvm.ptr) {
  // expected-error@+1 {{expected ')'}}
  "tile.cta_sync"( : () -> ()
  return
}
