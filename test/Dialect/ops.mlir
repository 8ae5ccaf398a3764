// RUN: tilemlir-opt %s | tilemlir-opt | FileCheck %s
// Every tile op parses, verifies against the IRDL definition and prints back in generic form.

!R = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!G = !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(4096, 1)]">>
!SH = !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
!T = !tile.buf<array<i64: 128, 512>, f32, "tmem", #tile.layout<"S[(128, 512):(1@TLane, 1@TCol)]">>

// CHECK-LABEL: func.func @buffers
func.func @buffers(%p: !llvm.ptr, %addr: i32, %i: index) {
  // CHECK: "tile.global"(%{{.*}}) : (!llvm.ptr) -> !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(4096, 1)]">>
  %g = "tile.global"(%p) : (!llvm.ptr) -> !G
  // CHECK: "tile.alloc_shared"() {offset = 1024 : i64}
  %s = "tile.alloc_shared"() {offset = 1024 : i64} : () -> !SH
  // CHECK: "tile.alloc_local"()
  %r = "tile.alloc_local"() : () -> !R
  // CHECK: "tile.tmem"(%{{.*}}) : (i32) -> !tile.buf<array<i64: 128, 512>, f32, "tmem"
  %t = "tile.tmem"(%addr) : (i32) -> !T
  // CHECK: "tile.slice"(%{{.*}}, %{{.*}}) {static_offsets = array<i64: 0, -9223372036854775808>}
  %w = "tile.slice"(%g, %i) {static_offsets = array<i64: 0, -9223372036854775808>} : (!G, index) -> !G
  // CHECK: "tile.copy"(%{{.*}}, %{{.*}}) {scope = "cta"}
  "tile.copy"(%s, %w) {scope = "cta"} : (!SH, !G) -> ()
  // CHECK: "tile.gemm"({{.*}}) {alpha = 1.000000e+00 : f32, beta = 0.000000e+00 : f32, dispatch = "mma.m16n8k*", scope = "warp", transpose_a = false, transpose_b = true}
  "tile.gemm"(%r, %r, %r, %r) {alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
      transpose_a = false, transpose_b = true, dispatch = "mma.m16n8k*"} : (!R, !R, !R, !R) -> ()
  %true = arith.constant true
  // CHECK: "tile.gemm_async"({{.*}}) {cta_group = 1 : i64, scope = "thread", transpose_b = false}
  "tile.gemm_async"(%t, %s, %s, %true) {cta_group = 1 : i64, scope = "thread", transpose_b = false} : (!T, !SH, !SH, i1) -> ()
  // CHECK: "tile.elect_sync"() : () -> i1
  %e = "tile.elect_sync"() : () -> i1
  // CHECK: "tile.fence"() {kind = "proxy_async_shared"}
  "tile.fence"() {kind = "proxy_async_shared"} : () -> ()
  // CHECK: "tile.async_wait"() {kind = "cp_async", pending = 1 : i64}
  "tile.async_wait"() {kind = "cp_async", pending = 1 : i64} : () -> ()
  return
}
