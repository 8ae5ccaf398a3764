// The tile dialect: tile primitives over buffers that carry a memory scope and a layout.
//
// This file is the single definition of the dialect. tilemlir loads it into every Context it
// makes; `mlir-opt --irdl-file=dialects/tile.irdl.mlir` loads the same file. IRDL ops print and
// parse in generic form only, e.g.
//
//   "tile.gemm"(%d, %a, %b, %d) <{alpha = 1.0 : f32, beta = 0.0 : f32, scope = "warp",
//       transpose_a = false, transpose_b = false}> : (!tile.buf<...>, ...) -> ()
//
// Buffers. A value of type
//   !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
// is a logical 16x8 f32 tile held in registers ("local"), distributed over the lanes of a warp as
// the layout says (see tilemlir/layout for the layout text form). Scopes are the memory spaces:
// "global", "shared", "local" (registers) and "tmem" (Blackwell tensor memory). A buffer value is a
// window into storage: tile.slice and tile.view make new windows, tile.storage exposes the raw
// storage (an LLVM pointer, or the i32 TMEM address) once dispatch needs it. The element type is
// any builtin type; the variants take f16, bf16, f32, integers and the 8-bit floats f8E4M3FN and
// f8E5M2 (held as their i8 bits once lowered: LLVM has no 8-bit float; tile.cast converts them
// and wgmma multiplies them as kind f8).
//
// Primitives (copy, copy_async, gemm, gemm_async, cast, fill, iota, unary, binary, select, reduce)
// carry an execution `scope` ("thread", "warp", "warpgroup", "cta", "cluster") and may carry a discardable string attribute
// `dispatch` naming the variant to use. The tile-dispatch pass replaces each primitive with the
// IR of the best variant registered for it, or reports why none applies. Synchronisation ops
// (barriers, fences, elect, TMEM allocation) are dispatched the same way, so that an instruction
// the target lacks is a diagnostic, never an LLVM abort.

irdl.dialect @tile {
  // ---------------------------------------------------------------- attributes and types
  irdl.attribute @layout {
    %text = irdl.base "#builtin.string"
    irdl.parameters(text: %text)
  }

  irdl.type @buf {
    %shape = irdl.base "#builtin.dense_array"
    %elem = irdl.any
    %global = irdl.is "global"
    %shared = irdl.is "shared"
    %local = irdl.is "local"
    %tmem = irdl.is "tmem"
    %scope = irdl.any_of(%global, %shared, %local, %tmem)
    %layout = irdl.base @tile::@layout
    irdl.parameters(shape: %shape, elem: %elem, scope: %scope, layout: %layout)
  }

  // ---------------------------------------------------------------- buffers
  // A global-memory buffer at a pointer (a kernel parameter).
  irdl.operation @global {
    %p = irdl.base "!llvm.ptr"
    %b = irdl.base @tile::@buf
    irdl.operands(pointer: %p)
    irdl.results(buffer: %b)
  }

  // Registers: per-thread storage sized by the layout's memory span.
  irdl.operation @alloc_local {
    %b = irdl.base @tile::@buf
    irdl.results(buffer: %b)
  }

  // Shared memory at a fixed byte offset of the kernel's dynamic shared memory (the pool).
  irdl.operation @alloc_shared {
    %off = irdl.base "#builtin.integer"
    %b = irdl.base @tile::@buf
    irdl.attributes { "offset" = %off }
    irdl.results(buffer: %b)
  }

  // Tensor memory at the address tcgen05.alloc returned.
  irdl.operation @tmem {
    %addr = irdl.is i32
    %b = irdl.base @tile::@buf
    irdl.operands(address: %addr)
    irdl.results(buffer: %b)
  }

  // A rectangular window: offsets are the static `static_offsets`, where an entry equal to
  // INT64_MIN takes the next dynamic index operand (as in memref.subview).
  irdl.operation @slice {
    %src = irdl.base @tile::@buf
    %idx = irdl.is index
    %offs = irdl.base "#builtin.dense_array"
    %b = irdl.base @tile::@buf
    irdl.operands(source: %src, offsets: variadic %idx)
    irdl.attributes { "static_offsets" = %offs }
    irdl.results(result: %b)
  }

  // The same storage seen with another shape and layout (the result type says which).
  irdl.operation @view {
    %src = irdl.base @tile::@buf
    %b = irdl.base @tile::@buf
    irdl.operands(source: %src)
    irdl.results(result: %b)
  }

  // The raw storage of a root buffer: an LLVM pointer (global, shared, local) or the i32 TMEM
  // address. Built by the lowerings; tile-materialize replaces it with the real storage.
  irdl.operation @storage {
    %src = irdl.base @tile::@buf
    %m = irdl.any
    irdl.operands(source: %src)
    irdl.results(storage: %m)
  }

  // The address of one element (for mbarriers and TMEM-address slots in shared memory).
  irdl.operation @addr {
    %src = irdl.base @tile::@buf
    %idx = irdl.is index
    %p = irdl.base "!llvm.ptr"
    irdl.operands(source: %src, indices: variadic %idx)
    irdl.results(pointer: %p)
  }

  // ---------------------------------------------------------------- primitives
  irdl.operation @copy {
    %dst = irdl.base @tile::@buf
    %src = irdl.base @tile::@buf
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, src: %src)
    irdl.attributes { "scope" = %scope }
  }

  irdl.operation @copy_async {
    %dst = irdl.base @tile::@buf
    %src = irdl.base @tile::@buf
    %bar = irdl.base "!llvm.ptr"
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, src: %src, barrier: optional %bar)
    irdl.attributes { "scope" = %scope }
  }

  // copy / copy_async of a window whose valid part is smaller than the window (a ragged edge):
  // element i of the window is in range when i[d] < bounds[d] for every dim d (one index per
  // dim, values known at run time). Reads out of range give `fill` (an attribute of dst's
  // element type; 0 when absent), writes out of range are skipped; copy_async_masked reads
  // zeros out of range (cp.async's zero fill). The masked forms are their own ops so that the
  // unmasked ones, and what they lower to, stay as they are.
  irdl.operation @copy_masked {
    %dst = irdl.base @tile::@buf
    %src = irdl.base @tile::@buf
    %bound = irdl.is index
    %fill = irdl.any
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, src: %src, bounds: variadic %bound)
    irdl.attributes { "scope" = %scope, "fill" = %fill }
  }

  irdl.operation @copy_async_masked {
    %dst = irdl.base @tile::@buf
    %src = irdl.base @tile::@buf
    %bound = irdl.is index
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, src: %src, bounds: variadic %bound)
    irdl.attributes { "scope" = %scope }
  }

  // copy_async into the shared memory of several CTAs of a thread-block cluster: `src` lands
  // at `dst`'s offset in each CTA whose rank is set in the i16 mask `multicast`, and completes
  // on the barrier at `barrier`'s offset in each of them (TMA .multicast::cluster). Its own op,
  // not an operand of copy_async: an op with two optional operands needs operandSegmentSizes
  // on every instance.
  irdl.operation @copy_async_multicast {
    %dst = irdl.base @tile::@buf
    %src = irdl.base @tile::@buf
    %bar = irdl.base "!llvm.ptr"
    %mask = irdl.is i16
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, src: %src, barrier: %bar, multicast: %mask)
    irdl.attributes { "scope" = %scope }
  }

  // D = alpha * op(A) . op(B) + beta * C, op transposing when transpose_a / transpose_b.
  irdl.operation @gemm {
    %d = irdl.base @tile::@buf
    %a = irdl.base @tile::@buf
    %b = irdl.base @tile::@buf
    %c = irdl.base @tile::@buf
    %alpha = irdl.base "#builtin.float"
    %beta = irdl.base "#builtin.float"
    %true = irdl.is true
    %false = irdl.is false
    %ta = irdl.any_of(%true, %false)
    %tb = irdl.any_of(%true, %false)
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(d: %d, a: %a, b: %b, c: %c)
    irdl.attributes { "alpha" = %alpha, "beta" = %beta, "transpose_a" = %ta,
                      "transpose_b" = %tb, "scope" = %scope }
  }

  // D (+)= A . B^T issued asynchronously on the tensor cores (tcgen05 or wgmma); `accum` (i1)
  // says whether D's old value is accumulated into. B is stored N x K, as in the seeds, or
  // K x N with `transpose_b` (D (+)= A . B: an MN-major B, e.g. attention's V tile).
  irdl.operation @gemm_async {
    %d = irdl.base @tile::@buf
    %a = irdl.base @tile::@buf
    %b = irdl.base @tile::@buf
    %accum = irdl.is i1
    %group = irdl.base "#builtin.integer"
    %true = irdl.is true
    %false = irdl.is false
    %tb = irdl.any_of(%true, %false)
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(d: %d, a: %a, b: %b, accum: %accum)
    irdl.attributes { "cta_group" = %group, "scope" = %scope, "transpose_b" = %tb }
  }

  irdl.operation @cast {
    %dst = irdl.base @tile::@buf
    %src = irdl.base @tile::@buf
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, src: %src)
    irdl.attributes { "scope" = %scope }
  }

  irdl.operation @fill {
    %dst = irdl.base @tile::@buf
    %value = irdl.any
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, value: %value)
    irdl.attributes { "scope" = %scope }
  }

  // dst[i0, i1, ...] = i_axis + offset: each thread writes the coordinates of the elements its
  // registers hold (a register tile of f32 or i32), for masks built with compare and select.
  // Without `offset` the coordinates start at 0; `offset` has dst's element type.
  irdl.operation @iota {
    %dst = irdl.base @tile::@buf
    %offset = irdl.any
    %axis = irdl.base "#builtin.integer"
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, offset: optional %offset)
    irdl.attributes { "axis" = %axis, "scope" = %scope }
  }

  // ---------------------------------------------------------------- elementwise math
  // dst = fn(src), element by element (registers). `fast` picks the approximate instructions
  // (ex2.approx.ftz, tanh.approx, rsqrt.approx ...) over the precise sequences.
  irdl.operation @unary {
    %dst = irdl.base @tile::@buf
    %src = irdl.base @tile::@buf
    %fn_exp = irdl.is "exp"
    %fn_exp2 = irdl.is "exp2"
    %fn_log = irdl.is "log"
    %fn_rsqrt = irdl.is "rsqrt"
    %fn_sqrt = irdl.is "sqrt"
    %fn_tanh = irdl.is "tanh"
    %fn_sigmoid = irdl.is "sigmoid"
    %fn_silu = irdl.is "silu"
    %fn_gelu_tanh = irdl.is "gelu_tanh"
    %fn_gelu_erf = irdl.is "gelu_erf"
    %fn_neg = irdl.is "neg"
    %fn_abs = irdl.is "abs"
    %fn = irdl.any_of(%fn_exp, %fn_exp2, %fn_log, %fn_rsqrt, %fn_sqrt, %fn_tanh, %fn_sigmoid, %fn_silu, %fn_gelu_tanh, %fn_gelu_erf, %fn_neg, %fn_abs)
    %true = irdl.is true
    %false = irdl.is false
    %fast = irdl.any_of(%true, %false)
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, src: %src)
    irdl.attributes { "fn" = %fn, "fast" = %fast, "scope" = %scope }
  }

  // dst = lhs fn rhs, element by element; each of lhs and rhs is a buffer or a scalar of the
  // element type. A buffer broadcasts as in numpy: its shape, right-aligned with dst's, has
  // dst's extent or 1 in every dim. The comparisons (lt ... ne) give an i1 dst.
  irdl.operation @binary {
    %dst = irdl.base @tile::@buf
    %lhs = irdl.any
    %rhs = irdl.any
    %fn_add = irdl.is "add"
    %fn_sub = irdl.is "sub"
    %fn_mul = irdl.is "mul"
    %fn_div = irdl.is "div"
    %fn_max = irdl.is "max"
    %fn_min = irdl.is "min"
    %fn_lt = irdl.is "lt"
    %fn_le = irdl.is "le"
    %fn_gt = irdl.is "gt"
    %fn_ge = irdl.is "ge"
    %fn_eq = irdl.is "eq"
    %fn_ne = irdl.is "ne"
    %fn = irdl.any_of(%fn_add, %fn_sub, %fn_mul, %fn_div, %fn_max, %fn_min, %fn_lt, %fn_le, %fn_gt, %fn_ge, %fn_eq, %fn_ne)
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, lhs: %lhs, rhs: %rhs)
    irdl.attributes { "fn" = %fn, "scope" = %scope }
  }

  // dst = cond ? on_true : on_false, element by element; cond is an i1 buffer or scalar, the
  // others buffers or scalars of dst's element type (broadcast as in tile.binary).
  irdl.operation @select {
    %dst = irdl.base @tile::@buf
    %cond = irdl.any
    %on_true = irdl.any
    %on_false = irdl.any
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, cond: %cond, on_true: %on_true, on_false: %on_false)
    irdl.attributes { "scope" = %scope }
  }

  // dst = fn over `axis` of src: dst has src's shape with extent 1 at `axis`. Threads of the
  // scope combine their partial results with shuffles (within a warp) and through `scratch`
  // (shared memory, when the axis is spread over warps). At scope "warpgroup" each warpgroup
  // passes its own window of scratch and synchronises on named barrier 15 - (its index in the
  // CTA) with 128 threads (ids 15..8; see lowering/cuda/reduce/cross_warp.py).
  irdl.operation @reduce {
    %dst = irdl.base @tile::@buf
    %src = irdl.base @tile::@buf
    %scratch = irdl.base @tile::@buf
    %fn_sum = irdl.is "sum"
    %fn_max = irdl.is "max"
    %fn_min = irdl.is "min"
    %fn = irdl.any_of(%fn_sum, %fn_max, %fn_min)
    %axis = irdl.base "#builtin.integer"
    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %wg = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %wg, %cta, %cluster)
    irdl.operands(dst: %dst, src: %src, scratch: optional %scratch)
    irdl.attributes { "fn" = %fn, "axis" = %axis, "scope" = %scope }
  }

  // ---------------------------------------------------------------- synchronisation
  irdl.operation @cta_sync {
  }

  irdl.operation @elect_sync {
    %p = irdl.is i1
    irdl.results(elected: %p)
  }

  // kind: "proxy_async_shared" (generic-proxy writes visible to the async proxy) or
  // "mbarrier_init" (barrier initialisation visible to the cluster).
  irdl.operation @fence {
    %proxy = irdl.is "proxy_async_shared"
    %init = irdl.is "mbarrier_init"
    %kind = irdl.any_of(%proxy, %init)
    irdl.attributes { "kind" = %kind }
  }

  irdl.operation @mbarrier_init {
    %bar = irdl.base "!llvm.ptr"
    %count = irdl.is i32
    irdl.operands(barrier: %bar, count: %count)
  }

  // Arrives on the barrier (a release at `scope`: "cta", or "cluster" where threads of other
  // CTAs acquire through it); a shared::cluster pointer (!llvm.ptr<7>, from tile.mapa) is the
  // barrier of another CTA of the cluster.
  irdl.operation @mbarrier_arrive {
    %bar = irdl.base "!llvm.ptr"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%cta, %cluster)
    irdl.operands(barrier: %bar)
    irdl.attributes { "scope" = %scope }
  }

  irdl.operation @mbarrier_arrive_expect_tx {
    %bar = irdl.base "!llvm.ptr"
    %bytes = irdl.is i32
    irdl.operands(barrier: %bar, bytes: %bytes)
  }

  // Blocks until the barrier's phase with the given parity has completed; `scope` is that of
  // the acquire: "cta", or "cluster" where threads of other CTAs arrive on the barrier.
  irdl.operation @mbarrier_wait {
    %bar = irdl.base "!llvm.ptr"
    %phase = irdl.is i32
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%cta, %cluster)
    irdl.operands(barrier: %bar, phase: %phase)
    irdl.attributes { "scope" = %scope }
  }

  // ---------------------------------------------------------------- global atomics
  // old = *pointer; *pointer = old + value, as one atomic read-modify-write; returns old.
  // `sem` orders this thread's other memory accesses around it ("relaxed", "acquire",
  // "release", "acq_rel"), as seen by the threads of `mem_scope` ("cta", "cluster", "gpu",
  // "sys"): e.g. a counter that the last of several CTAs to finish a tile learns it is last
  // from (acq_rel at gpu scope: its reads then see the others' writes).
  irdl.operation @atomic_add {
    %p = irdl.base "!llvm.ptr"
    %v = irdl.is i32
    %old = irdl.is i32
    %relaxed = irdl.is "relaxed"
    %acquire = irdl.is "acquire"
    %release = irdl.is "release"
    %acq_rel = irdl.is "acq_rel"
    %sem = irdl.any_of(%relaxed, %acquire, %release, %acq_rel)
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %gpu = irdl.is "gpu"
    %sys = irdl.is "sys"
    %mem_scope = irdl.any_of(%cta, %cluster, %gpu, %sys)
    irdl.operands(pointer: %p, value: %v)
    irdl.attributes { "sem" = %sem, "mem_scope" = %mem_scope }
    irdl.results(old: %old)
  }

  // ---------------------------------------------------------------- tensor memory (tcgen05)
  // Allocates `ncols` TMEM columns and writes their address to `dst` (shared memory).
  irdl.operation @tmem_alloc {
    %dst = irdl.base "!llvm.ptr"
    %ncols = irdl.base "#builtin.integer"
    %group = irdl.base "#builtin.integer"
    irdl.operands(dst: %dst)
    irdl.attributes { "ncols" = %ncols, "cta_group" = %group }
  }

  irdl.operation @tmem_relinquish {
    %group = irdl.base "#builtin.integer"
    irdl.attributes { "cta_group" = %group }
  }

  irdl.operation @tmem_dealloc {
    %addr = irdl.is i32
    %ncols = irdl.base "#builtin.integer"
    %group = irdl.base "#builtin.integer"
    irdl.operands(address: %addr)
    irdl.attributes { "ncols" = %ncols, "cta_group" = %group }
  }

  // Makes `barrier` track the completion of the tcgen05 operations this thread issued. With
  // `multicast` (an i16 mask of cluster CTA ranks), the barrier at the same shared-memory offset
  // in each CTA of the mask is arrived at (cta_group 2: both CTAs of the pair).
  irdl.operation @tcgen05_commit {
    %bar = irdl.base "!llvm.ptr"
    %mask = irdl.is i16
    %group = irdl.base "#builtin.integer"
    irdl.operands(barrier: %bar, multicast: optional %mask)
    irdl.attributes { "cta_group" = %group }
  }

  // Waits for this thread's outstanding tcgen05.ld ("ld") or tcgen05.st ("st").
  irdl.operation @tcgen05_wait {
    %ld = irdl.is "ld"
    %st = irdl.is "st"
    %kind = irdl.any_of(%ld, %st)
    irdl.attributes { "kind" = %kind }
  }

  // tcgen05.fence::before_thread_sync / ::after_thread_sync: orders this thread's tcgen05 ops
  // (mma, ld, st, commit) before a thread sync that follows it ("before_thread_sync"), or the
  // tcgen05 ops that follow it after a thread sync (mbarrier wait, bar.sync) that precedes it
  // ("after_thread_sync"). Without them the PTX memory model leaves tcgen05 work unordered by
  // the sync, e.g. a tcgen05.ld may read TMEM the MMA has not finished writing.
  irdl.operation @tcgen05_fence {
    %before = irdl.is "before_thread_sync"
    %after = irdl.is "after_thread_sync"
    %kind = irdl.any_of(%before, %after)
    irdl.attributes { "kind" = %kind }
  }

  // ---------------------------------------------------------------- thread-block clusters
  // This CTA's rank in its cluster (%cluster_ctarank).
  irdl.operation @cluster_ctarank {
    %r = irdl.is i32
    irdl.results(rank: %r)
  }

  // The shared::cluster address (!llvm.ptr<7>) of the variable at `pointer` (shared memory of
  // this CTA) in the CTA of cluster rank `rank` (mapa): e.g. the leader's barrier, signalled by
  // the CTA pair's TMA loads.
  irdl.operation @mapa {
    %p = irdl.base "!llvm.ptr"
    %rank = irdl.is i32
    %q = irdl.base "!llvm.ptr"
    irdl.operands(pointer: %p, rank: %rank)
    irdl.results(mapped: %q)
  }

  // barrier.cluster.arrive + barrier.cluster.wait: every thread of every CTA of the cluster
  // (release / acquire at cluster scope: e.g. barriers initialised before a peer signals them,
  // and no CTA exits while a peer may still access its shared memory).
  irdl.operation @cluster_sync {
  }

  // ---------------------------------------------------------------- async groups (cp.async, wgmma, bulk)
  // Closes the group of async operations this thread issued ("cp_async", "wgmma", or "bulk":
  // TMA stores).
  irdl.operation @async_commit {
    %cp = irdl.is "cp_async"
    %wg = irdl.is "wgmma"
    %bulk = irdl.is "bulk"
    %kind = irdl.any_of(%cp, %wg, %bulk)
    irdl.attributes { "kind" = %kind }
  }

  // Waits until at most `pending` committed groups of that kind are still in flight (for
  // "bulk": until their shared-memory sources have been read, so they can be overwritten).
  irdl.operation @async_wait {
    %cp = irdl.is "cp_async"
    %wg = irdl.is "wgmma"
    %bulk = irdl.is "bulk"
    %kind = irdl.any_of(%cp, %wg, %bulk)
    %pending = irdl.base "#builtin.integer"
    irdl.attributes { "kind" = %kind, "pending" = %pending }
  }

  // ---------------------------------------------------------------- warp specialization
  // bar.sync `id`, `threads`: a barrier among `threads` threads (whole warps) that use the same
  // id, e.g. one warpgroup while the others work on (ids 1..15; 0 is tile.cta_sync's; a
  // warpgroup-scope tile.reduce over warps takes 15 - w for warpgroup w, so kernels take theirs
  // from 1 up).
  irdl.operation @named_barrier {
    %id = irdl.is i32
    %threads = irdl.base "#builtin.integer"
    irdl.operands(id: %id)
    irdl.attributes { "threads" = %threads }
  }

  // bar.arrive `id`, `threads`: this thread's warp counts towards the named barrier without
  // waiting for it: one role signals another that waits with tile.named_barrier on the same
  // id and count (e.g. two consumer warpgroups taking turns to issue their wgmma).
  irdl.operation @barrier_arrive {
    %id = irdl.is i32
    %threads = irdl.base "#builtin.integer"
    irdl.operands(id: %id)
    irdl.attributes { "threads" = %threads }
  }

  // bar.red.or.pred `id`, `threads`: the named barrier of tile.named_barrier that also gives
  // every thread taking part the OR of their `pred`s (the same value on each of them, e.g. a
  // decision one thread of a warpgroup made, for the whole warpgroup to branch on).
  irdl.operation @barrier_or {
    %id = irdl.is i32
    %pred = irdl.is i1
    %any = irdl.is i1
    %threads = irdl.base "#builtin.integer"
    irdl.operands(id: %id, pred: %pred)
    irdl.attributes { "threads" = %threads }
    irdl.results(any: %any)
  }

  // Raises ("increase") or lowers ("decrease") the register budget of every thread of the
  // warpgroup executing it to `count` (setmaxnreg): producers give registers to consumers.
  irdl.operation @setmaxnreg {
    %count = irdl.base "#builtin.integer"
    %inc = irdl.is "increase"
    %dec = irdl.is "decrease"
    %action = irdl.any_of(%inc, %dec)
    irdl.attributes { "count" = %count, "action" = %action }
  }
}
