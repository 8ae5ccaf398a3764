// RUN: tilemlir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80})'
// A gemm no variant can lower gets one diagnostic at the op listing every variant's reasons.

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @alpha2(%a: !Af, %b: !Bf, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{alpha_beta: alpha must be 1.0 (mma.sync has no scaling), got 2}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 2.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @beta_half(%a: !Af, %b: !Bf, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{beta must be 0.0 or 1.0, got 0.5}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.5 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Dh = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @f16_accumulator(%a: !Af, %b: !Bf, %d: !Dh) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{dtypes: C is f16, the accumulator must be f32; D is f16, the accumulator must be f32}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Dh, !Af, !Bf, !Dh) -> ()
    gpu.return
  }
}

// -----

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bb = !tile.buf<array<i64: 16, 8>, bf16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @mixed_inputs(%a: !Af, %b: !Bb, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{A is f16 but B is bf16: inputs must have one type}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bb, !Df) -> ()
    gpu.return
  }
}

// -----

!At = !tile.buf<array<i64: 16, 16>, f32, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bt = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @tf32(%a: !At, %b: !Bt, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{dtypes: A is f32, needs f16 or bf16; B is f32, needs f16 or bf16}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !At, !Bt, !Df) -> ()
    gpu.return
  }
}

// -----

!Ai = !tile.buf<array<i64: 16, 16>, i8, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bi = !tile.buf<array<i64: 16, 8>, i8, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Di = !tile.buf<array<i64: 16, 8>, i32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @int8(%a: !Ai, %b: !Bi, %d: !Di) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{A is i8, needs f16 or bf16; B is i8, needs f16 or bf16; C is i32, the accumulator must be f32}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Di, !Ai, !Bi, !Di) -> ()
    gpu.return
  }
}

// -----

!As = !tile.buf<array<i64: 16, 16>, f16, "shared", #tile.layout<"S[(16, 16):(16, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @shared_operand(%b: !Bf, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %a = "tile.alloc_shared"() {offset = 0 : i64} : () -> !As
    // expected-error@+1 {{register_operands: mma.sync needs A, B, C, D in registers (load shared-memory operands with ldmatrix first); A is in shared memory}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !As, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @narrowed_lanes(%a: !Af, %b: !Bf, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %tid = gpu.thread_id x
    %c16 = arith.constant 16 : index
    %low = arith.cmpi ult, %tid, %c16 : index
    scf.if %low {
      // expected-error@+1 {{full_active_lanes: the op sits under a branch at}}
      "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
          transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    }
    gpu.return
  }
}

// -----

// A branch on the warp index keeps whole warps: a warp-scope gemm under it is fine, and the
// only complaint left here is the replicated A.
!Ar = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)] R[(2):(1@wid_in_wg)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @replicated(%a: !Ar, %b: !Bf, %d: !Df) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %c0 = arith.constant 0 : index
    %warp = arith.divui %tid, %c32 : index
    %first = arith.cmpi eq, %warp, %c0 : index
    scf.if %first {
      // expected-error@+1 {{mma.m16n8k* (priority 10): no_replica: replicated layout on A}}
      "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
          transpose_a = false, transpose_b = false} : (!Df, !Ar, !Bf, !Df) -> ()
    }
    gpu.return
  }
}

// -----

!Af = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @unknown_hint(%a: !Af, %b: !Bf, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{unknown dispatch hint 'wgmma' for 'tile.gemm'; its variants are: mma.m16n8k*}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false, dispatch = "wgmma"} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

// M = 20 cannot be tiled by m16 atoms.
!Af = !tile.buf<array<i64: 20, 16>, f16, "local", #tile.layout<"S[(20, 16):(16, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 20, 8>, f32, "local", #tile.layout<"S[(20, 8):(8, 1)]">>
gpu.module @m {
  gpu.func @bad_shape(%a: !Af, %b: !Bf, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{shape: M=20 is not a multiple of 16}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Af, !Bf, !Df) -> ()
    gpu.return
  }
}

// -----

// A register layout that is not an mma fragment: every element on lane 0.
!Ap = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(16, 16):(16, 1)]">>
!Bf = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!Df = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @not_a_fragment(%a: !Ap, %b: !Bf, %d: !Df) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    // expected-error@+1 {{m16n8k16: A's layout names no lane axis, so it is not a warp fragment; m16n8k8: A's layout names no lane axis}}
    "tile.gemm"(%d, %a, %b, %d) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!Df, !Ap, !Bf, !Df) -> ()
    gpu.return
  }
}
