"""Clusters, named barriers, TMA boxes and CTA pairs (issue 24): tile IR and hand-written NVVM
kernel attributes that LLVM would assert on, ptxas would reject or a GPU would hang on get a
located diagnostic from tilemlir-opt; the kernel language's mistakes of the same kind a
KernelError or an MLIRError naming the Python line. Every case runs in a child process."""

import pytest

from harness import OptCase, PyCase


def kernel(attrs: str = "", body: str = "", params: str = "", block: str = "128, 1, 1",
           targets: str = "") -> str:
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @m {targets} {{
    gpu.func @k({params}) kernel attributes {{known_block_size = array<i32: {block}>{attrs}}} {{
{body}
      gpu.return
    }}
  }}
}}
"""


def cluster(shape: str, extra: str = "") -> str:
    return kernel(f", tile.cluster = array<i32: {shape}>{extra}")


def ops(*lines: str, params: str = "%bar: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: i32",
        attrs: str = "") -> str:
    constants = "\n".join(f"      %c{n} = arith.constant {v} : i32" for n, v in
                          (("0", 0), ("1", 1), ("15", 15), ("16", 16), ("m1", -1), ("big", 99)))
    masks = "\n".join(f"      %m{v} = arith.constant {v} : i16" for v in (0, 1, 3, 4, 255))
    return kernel(attrs, constants + "\n" + masks + "\n      %t = arith.constant true\n"
                  + "\n".join("      " + line for line in lines), params)


def warpgroups(dec: int, inc: int, consumers: int) -> str:
    """Tile IR: warpgroup 0 sets its budget to `dec`, the `consumers` others to `inc`."""
    threads = 128 * (1 + consumers)
    return kernel(block=f"{threads}, 1, 1", body=f"""      %tid = gpu.thread_id x
      %c128 = arith.constant 128 : index
      %c0 = arith.constant 0 : index
      %wg = arith.divui %tid, %c128 : index
      %p = arith.cmpi eq, %wg, %c0 : index
      scf.if %p {{
        "tile.setmaxnreg"() {{action = "decrease", count = {dec} : i64}} : () -> ()
      }} else {{
        "tile.setmaxnreg"() {{action = "increase", count = {inc} : i64}} : () -> ()
      }}""")


TO_PTX = "tile-to-ptx{chip=%s}"
VERIFY = "tile-verify{chip=%s}"
# (id, chip, pipeline, IR, words of the located diagnostic)
REJECTED = [
    # ---- cluster shapes
    ("cluster-zero-x", "sm_90a", TO_PTX, cluster("0, 1, 1"), "tile.cluster must be three positive extents"),
    ("cluster-zero-z", "sm_100a", TO_PTX, cluster("2, 1, 0"), "got array<i32: 2, 1, 0>"),
    ("cluster-negative", "sm_90a", TO_PTX, cluster("-2, 1, 1"), "tile.cluster must be three positive extents"),
    ("cluster-two-extents", "sm_90a", TO_PTX, cluster("2, 1"), "tile.cluster must be three positive extents"),
    ("cluster-four-extents", "sm_90a", TO_PTX, cluster("2, 1, 1, 1"), "tile.cluster must be three positive extents"),
    ("cluster-9", "sm_90a", TO_PTX, cluster("9, 1, 1"), "a cluster of [9, 1, 1] has 9 CTAs, more than the portable 8"),
    ("cluster-16", "sm_90a", TO_PTX, cluster("4, 4, 1"), "has 16 CTAs, more than the portable 8"),
    ("cluster-32-non-portable", "sm_100a", TO_PTX, cluster("32, 1, 1", ", tile.cluster_non_portable"),
     "has 32 CTAs, more than 16 (the most any GPU runs)"),
    ("cluster-opt-in-alone", "sm_90a", VERIFY, kernel(", tile.cluster_non_portable"),
     "tile.cluster_non_portable without tile.cluster"),
    ("cluster-sm80", "sm_80", TO_PTX, cluster("2, 1, 1"), "thread-block clusters need sm_90 or newer, the target is sm_80"),
    ("cluster-sm75", "sm_75", VERIFY, cluster("2, 1, 1"), "the target is sm_75"),
    ("cluster-sm86", "sm_86", VERIFY, cluster("1, 1, 1"), "the target is sm_86"),
    ("cluster-ragged-grid", "sm_90a", TO_PTX, kernel(", tile.cluster = array<i32: 4, 1, 1>, tile.grid = array<i32: 6, 1, 1>"),
     "tile.grid [6, 1, 1] is not made of whole clusters of [4, 1, 1]"),
    ("cluster-ragged-grid-y", "sm_90a", TO_PTX, kernel(", tile.cluster = array<i32: 1, 2, 1>, tile.grid = array<i32: 4, 3, 1>"),
     "tile.grid [4, 3, 1] is not made of whole clusters of [1, 2, 1]"),
    ("cluster-ragged-known-grid", "sm_90a", TO_PTX, kernel(", tile.cluster = array<i32: 2, 1, 1>, known_grid_size = array<i32: 3, 1, 1>"),
     "known_grid_size [3, 1, 1] is not made of whole clusters of [2, 1, 1]"),
    ("cluster-i64-array", "sm_90a", TO_PTX, kernel(", tile.cluster = array<i64: 2, 1, 1>"),
     "tile.cluster must be three positive extents"),
    # ---- setmaxnreg budgets against the registers the CTA holds from launch
    ("setmaxnreg-3-warpgroups", "sm_90a", TO_PTX, warpgroups(96, 208, 2),
     "setmaxnreg budgets add up to 65536 registers (96 x 128 threads + 208 x 256 threads), more than the 64512 the CTA holds from launch (168 per thread x 384 threads)"),
    ("setmaxnreg-5-warpgroups", "sm_90a", VERIFY, warpgroups(40, 112, 4),
     "more than the 61440 the CTA holds from launch (96 per thread x 640 threads)"),
    # ---- named barriers
    ("barrier-id-16", "sm_90a", TO_PTX, ops('"tile.named_barrier"(%c16) {threads = 128 : i64} : (i32) -> ()'),
     "tile.named_barrier barrier id 16 is outside 0..15"),
    ("barrier-id-99-arrive", "sm_90a", TO_PTX, ops('"tile.barrier_arrive"(%cbig) {threads = 64 : i64} : (i32) -> ()'),
     "tile.barrier_arrive barrier id 99 is outside 0..15"),
    ("barrier-id-negative", "sm_80", TO_PTX, ops('"tile.named_barrier"(%cm1) {threads = 128 : i64} : (i32) -> ()'),
     "barrier id -1 is outside 0..15"),
    ("barrier-or-id-16", "sm_80", TO_PTX, ops('%x = "tile.barrier_or"(%c16, %t) {threads = 32 : i64} : (i32, i1) -> i1'),
     "tile.barrier_or barrier id 16"),
    ("barrier-threads-48", "sm_90a", TO_PTX, ops('"tile.named_barrier"(%c1) {threads = 48 : i64} : (i32) -> ()'),
     "tile.named_barrier threads must be a positive multiple of 32 (whole warps), got 48"),
    ("barrier-threads-zero", "sm_90a", TO_PTX, ops('"tile.named_barrier"(%c1) {threads = 0 : i64} : (i32) -> ()'),
     "threads must be a positive multiple of 32 (whole warps), got 0"),
    ("barrier-threads-negative", "sm_90a", TO_PTX, ops('"tile.barrier_arrive"(%c1) {threads = -64 : i64} : (i32) -> ()'),
     "threads must be a positive multiple of 32 (whole warps), got -64"),
    ("barrier-threads-string", "sm_90a", TO_PTX, ops('"tile.named_barrier"(%c1) {threads = "all"} : (i32) -> ()'),
     "expected base attribute 'builtin.integer' but got 'builtin.string'"),
    ("barrier-threads-over-block", "sm_90a", TO_PTX, ops('"tile.named_barrier"(%c1) {threads = 256 : i64} : (i32) -> ()'),
     "tile.named_barrier waits for 256 threads, but the block has 128: it would never complete"),
    ("barrier-or-threads-over-block", "sm_80", TO_PTX, ops('%x = "tile.barrier_or"(%c1, %t) {threads = 1024 : i64} : (i32, i1) -> i1'),
     "waits for 1024 threads, but the block has 128"),
    ("barrier-arrive-threads-33", "sm_80", TO_PTX, ops('"tile.barrier_arrive"(%c15) {threads = 33 : i64} : (i32) -> ()'),
     "got 33"),
    # ---- tcgen05.commit multicast masks
    ("commit-mask-zero", "sm_100a", TO_PTX, ops('"tile.tcgen05_commit"(%bar, %m0) {cta_group = 1 : i64} : (!llvm.ptr<3>, i16) -> ()',
                                                attrs=", tile.cluster = array<i32: 2, 1, 1>"),
     "tile.tcgen05_commit multicast mask names no CTA"),
    ("commit-mask-beyond-pair", "sm_100a", TO_PTX, ops('"tile.tcgen05_commit"(%bar, %m4) {cta_group = 1 : i64} : (!llvm.ptr<3>, i16) -> ()',
                                                       attrs=", tile.cluster = array<i32: 2, 1, 1>"),
     "multicast mask 0b100 names CTA ranks beyond the 2 CTA(s) of the kernel's cluster"),
    ("commit-mask-255-in-4", "sm_100a", TO_PTX, ops('"tile.tcgen05_commit"(%bar, %m255) {cta_group = 1 : i64} : (!llvm.ptr<3>, i16) -> ()',
                                                    attrs=", tile.cluster = array<i32: 4, 1, 1>"),
     "multicast mask 0b11111111 names CTA ranks beyond the 4 CTA(s)"),
    ("commit-mask-without-cluster", "sm_100a", TO_PTX, ops('"tile.tcgen05_commit"(%bar, %m3) {cta_group = 1 : i64} : (!llvm.ptr<3>, i16) -> ()'),
     "multicast mask 0b11 names CTA ranks beyond the 1 CTA(s)"),
    # ---- cta_group
    ("group-mixed-alloc-commit", "sm_100a", TO_PTX, ops('"tile.tmem_alloc"(%dst) {ncols = 32 : i64, cta_group = 2 : i64} : (!llvm.ptr<3>) -> ()',
                                                        '"tile.tcgen05_commit"(%bar) {cta_group = 1 : i64} : (!llvm.ptr<3>) -> ()',
                                                        attrs=", tile.cluster = array<i32: 2, 1, 1>"),
     "tile.tcgen05_commit uses cta_group::1, but this kernel's tile.tmem_alloc at line"),
    ("group-mixed-commit-dealloc", "sm_100a", TO_PTX, ops('"tile.tcgen05_commit"(%bar) {cta_group = 1 : i64} : (!llvm.ptr<3>) -> ()',
                                                          '"tile.tmem_dealloc"(%a) {ncols = 32 : i64, cta_group = 2 : i64} : (i32) -> ()',
                                                          attrs=", tile.cluster = array<i32: 2, 1, 1>"),
     "tile.tmem_dealloc uses cta_group::2, but this kernel's tile.tcgen05_commit"),
    ("group-mixed-relinquish", "sm_100a", TO_PTX, ops('"tile.tmem_relinquish"() {cta_group = 1 : i64} : () -> ()',
                                                      '"tile.tmem_relinquish"() {cta_group = 2 : i64} : () -> ()',
                                                      attrs=", tile.cluster = array<i32: 2, 1, 1>"),
     "ptxas rejects a mix"),
    ("group-pair-without-cluster", "sm_100a", TO_PTX, ops('"tile.tmem_alloc"(%dst) {ncols = 32 : i64, cta_group = 2 : i64} : (!llvm.ptr<3>) -> ()'),
     "tile.tmem_alloc with cta_group::2 works on a CTA pair: the kernel needs a cluster with an even x extent"),
    ("group-pair-in-single-cluster", "sm_100a", TO_PTX, ops('"tile.tcgen05_commit"(%bar) {cta_group = 2 : i64} : (!llvm.ptr<3>) -> ()',
                                                            attrs=", tile.cluster = array<i32: 1, 1, 1>"),
     "got [1, 1, 1]"),
    ("group-pair-in-column-cluster", "sm_100a", TO_PTX, ops('"tile.tmem_relinquish"() {cta_group = 2 : i64} : () -> ()',
                                                            attrs=", tile.cluster = array<i32: 1, 2, 1>"),
     "got [1, 2, 1]"),
    ("group-pair-in-odd-cluster", "sm_100a", TO_PTX, ops('"tile.tmem_relinquish"() {cta_group = 2 : i64} : () -> ()',
                                                         attrs=", tile.cluster = array<i32: 3, 1, 1>"),
     "got [3, 1, 1]"),
    ("group-zero", "sm_100a", TO_PTX, ops('"tile.tmem_relinquish"() {cta_group = 0 : i64} : () -> ()'),
     "tile.tmem_relinquish cta_group must be 1 or 2, got 0"),
    ("group-three", "sm_100a", TO_PTX, ops('"tile.tcgen05_commit"(%bar) {cta_group = 3 : i64} : (!llvm.ptr<3>) -> ()'),
     "tile.tcgen05_commit cta_group must be 1 or 2, got 3"),
    ("group-negative", "sm_100a", TO_PTX, ops('"tile.tmem_alloc"(%dst) {ncols = 32 : i64, cta_group = -2 : i64} : (!llvm.ptr<3>) -> ()'),
     "cta_group must be 1 or 2, got -2"),
    # ---- hand-written NVVM kernel attributes (LLVM asserts on zero extents)
    ("nvvm-cluster-dim-zero", "sm_90a", TO_PTX, kernel(", nvvm.cluster_dim = array<i32: 0, 1, 1>"),
     "nvvm.cluster_dim must be 1 to 3 positive extents"),
    ("nvvm-cluster-dim-zero-y", "sm_90a", TO_PTX, kernel(", nvvm.cluster_dim = array<i32: 2, 0, 1>"),
     "nvvm.cluster_dim must be 1 to 3 positive extents"),
    ("nvvm-cluster-dim-32", "sm_90a", TO_PTX, kernel(", nvvm.cluster_dim = array<i32: 32, 1, 1>"),
     "nvvm.cluster_dim [32, 1, 1] has 32 CTAs; a cluster has at most 16"),
    ("nvvm-cluster-dim-sm80", "sm_80", TO_PTX, kernel(", nvvm.cluster_dim = array<i32: 2, 1, 1>"),
     "nvvm.cluster_dim: thread-block clusters need sm_90 or newer, the target is sm_80"),
    ("nvvm-reqntid-zero", "sm_80", TO_PTX, kernel(", nvvm.reqntid = array<i32: 0, 1, 1>"),
     "nvvm.reqntid must be 1 to 3 positive extents"),
    ("nvvm-maxntid-with-block-size", "sm_80", TO_PTX, kernel(", nvvm.maxntid = array<i32: 128, 1, 1>"),
     "nvvm.maxntid and known_block_size both set the block size"),
    ("nvvm-maxnreg-zero", "sm_90a", TO_PTX, kernel(", nvvm.maxnreg = 0 : i32"),
     "nvvm.maxnreg must be a positive integer, got 0 : i32"),
    ("nvvm-minctasm-negative", "sm_90a", TO_PTX, kernel(", nvvm.minctasm = -1 : i32"),
     "nvvm.minctasm must be a positive integer"),
    ("nvvm-cluster-max-blocks-zero", "sm_90a", TO_PTX, kernel(", nvvm.cluster_max_blocks = 0 : i32"),
     "nvvm.cluster_max_blocks must be a positive integer"),
    ("nvvm-cluster-dim-via-upstream", "sm_90a",
     "gpu-lower-to-nvvm-pipeline{cubin-chip=%s cubin-features=+ptx80}",
     kernel(", nvvm.cluster_dim = array<i32: 0, 1, 1>"), "nvvm.cluster_dim must be 1 to 3 positive extents"),
]


def tma(shape: str, layout: str, sm_layout: str, window: str | None = None) -> str:
    g = f'!tile.buf<array<i64: {shape}>, f16, "global", #tile.layout<"{layout}">>'
    w = g if window is None else f'!tile.buf<array<i64: {window[0]}>, f16, "global", #tile.layout<"{window[1]}">>'
    s = f'!tile.buf<array<i64: {window[0] if window else shape}>, f16, "shared", #tile.layout<"{sm_layout}">>'
    slice_op = (f'      %w = "tile.slice"(%g) {{static_offsets = array<i64: 0, 0>}} : ({g}) -> {w}\n'
                if window else "")
    src = "%w" if window else "%g"
    return kernel(body=f"""      %c0 = arith.constant 0 : index
      %tid = gpu.thread_id x
      %g = "tile.global"(%p) : (!llvm.ptr) -> {g}
{slice_op}      %s = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {s}
      %one = arith.cmpi eq, %tid, %c0 : index
      scf.if %one {{
        "tile.copy_async"(%s, {src}, %bar) {{scope = "thread"}} : ({s}, {w}, !llvm.ptr) -> ()
      }}""", params="%p: !llvm.ptr, %bar: !llvm.ptr", block="32, 1, 1")


REJECTED += [
    ("tma-box-512-wide", "sm_90a", TO_PTX, tma("8, 512", "S[(8, 512):(512, 1)]", "S[(8, 512):(512, 1)]"),
     "dst rows hold 512 elements in one unswizzled box; a TMA box dimension is at most 256"),
    ("tma-box-300-wide", "sm_100a", TO_PTX, tma("8, 304", "S[(8, 304):(304, 1)]", "S[(8, 304):(304, 1)]"),
     "dst rows hold 304 elements in one unswizzled box"),
    ("tma-box-8-bytes", "sm_90a", TO_PTX,
     tma("64, 8", "S[(64, 8):(8, 1)]", "S[(64, 4):(4, 1)]", ("64, 4", "S[(64, 4):(8, 1)]")),
     "dst rows are 8 bytes; a TMA box row is a multiple of 16"),
    ("tma-rows-300", "sm_90a", TO_PTX, tma("300, 64", "S[(300, 64):(64, 1)]", "S[(300, 64):(64, 1)] o Sw<3,3,3>"),
     "has 300 rows: more than 256 must be a multiple of 256"),
]

# Found by the fuzzer (results/2026-12-02-hardening): an i1 axis read as True by the lowering,
# and a bad layout up a written window's chain that the overhang check parsed unguarded.
X_ROW = '!tile.buf<array<i64: 1, 2048>, f32, "local", #tile.layout<"S[(1, 2, 4, 32, 8):(1, 8, 1@warpid, 1@laneid, 1)]">>'
BAD_G = '!tile.buf<array<i64: 256, 128>, f32, "global", #tile.layout<"S[(256, 128):(>128, 1)]">>'
W64 = '!tile.buf<array<i64: 64, 64>, f32, "global", #tile.layout<"S[(64, 64):(128, 1)]">>'
L64 = '!tile.buf<array<i64: 64, 64>, f32, "local", #tile.layout<"S[(64, 64):(64, 1)]">>'
REJECTED += [
    ("iota-axis-i1", "sm_90a", TO_PTX, kernel(body=f"""      %x = "tile.alloc_local"() : () -> {X_ROW}
      "tile.iota"(%x) {{axis = 1 : i1, scope = "cta"}} : ({X_ROW}) -> ()"""),
     "tile.iota axis must be an integer such as 1 : i64, got true (a boolean)"),
    ("alloc-offset-i1", "sm_90a", TO_PTX, kernel(body=f"""      %x = "tile.alloc_shared"() {{offset = 0 : i1}} : () -> !tile.buf<array<i64: 8>, f32, "shared", #tile.layout<"S[8:1]">>"""),
     "tile.alloc_shared offset must be an integer such as 1 : i64, got false (a boolean)"),
    ("written-window-of-bad-layout", "sm_90a", TO_PTX, kernel(body=f"""      %g = "tile.global"(%p) : (!llvm.ptr) -> {BAD_G}
      %w = "tile.slice"(%g) {{static_offsets = array<i64: 0, 0>}} : ({BAD_G}) -> {W64}
      %l = "tile.alloc_local"() : () -> {L64}
      "tile.copy"(%w, %l) {{scope = "thread"}} : ({W64}, {L64}) -> ()""", params="%p: !llvm.ptr"),
     "result 0 of tile.global: invalid tile buffer type: bad layout text at column 15"),
]

CASES = [OptCase(f"ir-{name}", ["in.mlir", "-o", "out.mlir",
                                f"--pass-pipeline=builtin.module({pipeline % chip})"],
                 {"in.mlir": ir, "out.mlir": b"old\n"}, errors=("in.mlir:", words))
         for name, chip, pipeline, ir, words in REJECTED]
# What the checks must let through: the largest portable cluster, 16 with the opt-in, barrier
# 15 for the whole block, a CTA pair's commit to both CTAs.
ACCEPTED = [
    ("setmaxnreg-at-launch", "sm_90a", warpgroups(40, 232, 2)),
    ("cluster-8", "sm_90a", cluster("2, 2, 2")),
    ("cluster-16-opt-in", "sm_100a", cluster("16, 1, 1", ", tile.cluster_non_portable, tile.grid = array<i32: 32, 1, 1>")),
    ("barrier-15-whole-block", "sm_90a", ops('"tile.named_barrier"(%c15) {threads = 128 : i64} : (i32) -> ()')),
    ("barrier-dynamic-id", "sm_90a", ops('"tile.named_barrier"(%a) {threads = 64 : i64} : (i32) -> ()')),
    ("commit-pair", "sm_100a", ops('"tile.tcgen05_commit"(%bar, %m3) {cta_group = 2 : i64} : (!llvm.ptr<3>, i16) -> ()',
                                   attrs=", tile.cluster = array<i32: 2, 1, 1>")),
    ("nvvm-cluster-dim-ok", "sm_90a", kernel(", nvvm.cluster_dim = array<i32: 2, 1, 1>")),
    # found by the fuzzer: a global window's row stride of 2**31 elements, past a GEP's i32
    # constant indices (the copy's addresses are now i64 values there)
    ("gep-offset-past-i32", "sm_100a", kernel(body="""      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %bid = gpu.block_id x
      %m = arith.muli %bid, %c128 : index
      %k = arith.muli %kt, %c64 : index
      %a = "tile.global"(%p) : (!llvm.ptr) -> !tile.buf<array<i64: 512, 256>, f16, "global", #tile.layout<"S[(512, 256):(256, 1)]">>
      %w = "tile.slice"(%a, %m, %k) {static_offsets = array<i64: -9223372036854775808, -9223372036854775808>} : (!tile.buf<array<i64: 512, 256>, f16, "global", #tile.layout<"S[(512, 256):(256, 1)]">>, index, index) -> !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(2147483648, 1)]">>
      %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>
      "tile.copy"(%s, %w) {scope = "cta"} : (!tile.buf<array<i64: 128, 64>, f16, "shared", #tile.layout<"S[(128, 64):(64, 1)] o Sw<3,3,3>">>, !tile.buf<array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(2147483648, 1)]">>) -> ()""",
                                                params="%p: !llvm.ptr, %kt: index")),
]
CASES += [OptCase(f"ir-accepts-{name}", ["in.mlir", "-o", "/dev/null",
                                         f"--pass-pipeline=builtin.module(tile-to-ptx{{chip={chip}}})"],
                  {"in.mlir": ir}, rc=0) for name, chip, ir in ACCEPTED]

HERE = "import bad_kernels as k\n"


def language(name, chip, exception, *words):
    return PyCase(f"language-{name.replace('_', '-')}-{chip}",
                  HERE + f"tilemlir.compile(k.{name}, target={chip!r}, cache=False)",
                  exception, ("bad_kernels.py", *words) if exception else ())


CASES += [
    language("cluster_pair", "sm_80", "MLIRError",
             "the kernel runs in clusters of [2, 1, 1]: thread-block clusters need sm_90 or newer, the target is sm_80"),
    language("cluster_pair", "sm_86", "MLIRError", "the target is sm_86"),
    language("cluster_pair", "sm_90a", None),
    language("cluster_16_allowed", "sm_100a", None),
    language("cluster_16_not_allowed", "sm_90a", "KernelError",
             "a cluster of [16, 1, 1] has more than 8 CTAs (the portable cluster size; up to 16 with T.cluster_shape(..., non_portable=True))"),
    language("cluster_32_allowed", "sm_90a", "KernelError", "a cluster of [32, 1, 1] has 32 CTAs, more than 16"),
    language("cluster_ragged", "sm_90a", "KernelError", "the grid [6, 1, 1] is not made of whole clusters of [4, 1, 1]"),
    language("cluster_bool_extent", "sm_90a", "KernelError", "T.cluster_shape takes positive static extents"),
    language("barrier_id_16", "sm_90a", "KernelError", "bar_sync barrier_id must be one of the named barriers 0..15, got 16"),
    language("barrier_id_negative", "sm_90a", "KernelError", "bar_arrive barrier_id must be one of the named barriers 0..15, got -1"),
    language("barrier_threads_48", "sm_90a", "KernelError", "bar_sync threads must be a positive multiple of 32 (whole warps), got 48"),
    language("barrier_threads_zero", "sm_80", "KernelError", "bar_or threads must be a positive multiple of 32 (whole warps), got 0"),
    language("barrier_more_threads_than_block", "sm_90a", "MLIRError",
             "tile.named_barrier waits for 128 threads, but the block has 64"),
    language("commit_mask_beyond_cluster", "sm_100a", "MLIRError",
             "tile.tcgen05_commit multicast mask 0b100 names CTA ranks beyond the 2 CTA(s)"),
    language("commit_pair_without_cluster", "sm_100a", "MLIRError",
             "tile.tcgen05_commit with cta_group::2 works on a CTA pair"),
    language("commit_pair_in_column_cluster", "sm_100a", "MLIRError", "got [1, 2, 1]"),
    language("mixed_cta_groups", "sm_100a", "MLIRError",
             "tile.tcgen05_commit uses cta_group::1, but this kernel's tile.tmem_alloc at line"),
    language("register_budgets_over_launch", "sm_90a", "MLIRError",
             "setmaxnreg budgets add up to 65536 registers", "168 per thread x 384 threads",
             "so it would wait forever"),
    language("register_budgets_five_warpgroups", "sm_90a", "MLIRError",
             "more than the 61440 the CTA holds from launch"),
    language("register_budgets_at_launch", "sm_90a", None),
    language("cluster_non_portable_not_bool", "sm_90a", "KernelError",
             "T.cluster_shape non_portable must be True or False, got 'yes'"),
]


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(batch, case_id):
    batch.check(case_id)
