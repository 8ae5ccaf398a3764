"""Tile IR and nvvm IR that used to be accepted wrongly or to abort LLVM: the verifier, the
target check (every nvvm op against each gpu.module's own chips) and per-module targets. Each
case runs tilemlir-opt in a child process and must fail with a located diagnostic."""

import pytest

from harness import OptCase

L = "#tile.layout"
SHARED_16x16 = f'!tile.buf<array<i64: 16, 16>, f16, "shared", {L}<"S[(16, 16):(16, 1)]">>'


def kernel(body: str, block: str = "32, 1, 1", targets: str = "", params: str = "",
           extra: str = "") -> str:
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @m {targets} {{
    gpu.func @k({params}) kernel attributes {{known_block_size = array<i32: {block}>{extra}}} {{
{body}
      gpu.return
    }}
  }}
}}
"""


def shared(shape: str, layout: str, elem: str = "f16") -> str:
    return f'!tile.buf<array<i64: {shape}>, {elem}, "shared", {L}<"{layout}">>'


def slice_case(offsets: str, result: str, operands: str = "", operand_types: str = "") -> str:
    body = f"""      %s = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {SHARED_16x16}
      %w = "tile.slice"(%s{operands}) {{static_offsets = array<i64: {offsets}>}} : ({SHARED_16x16}{operand_types}) -> {result}"""
    return kernel(body, params="%i: index" if operands else "")


W8 = shared("8, 8", "S[(8, 8):(16, 1)]")
ROW = shared("16", "S[16:1]")
DYN = "-9223372036854775808"


def alloc(shape: str, layout: str, offset: int, elem: str = "f16") -> str:
    t = shared(shape, layout, elem)
    return kernel(f'      %s = "tile.alloc_shared"() {{offset = {offset} : i64}} : () -> {t}')


def local(shape: str, layout: str, elem: str) -> str:
    t = f'!tile.buf<array<i64: {shape}>, {elem}, "local", {L}<"{layout}">>'
    return kernel(f'      %a = "tile.alloc_local"() : () -> {t}')


def nvvm(op: str, params: str = "") -> str:
    return kernel(f"      {op}", params=params)


# (id, chip, IR, words of the expected diagnostic); the diagnostic is located (file:line:col)
REJECTED = [
    # tile.slice bounds
    ("slice-out-of-range", "sm_80", slice_case("12, 0", W8), "window [12, 20) of dim 0 is outside"),
    ("slice-negative", "sm_80", slice_case("-4, 0", W8), "window [-4, 4) of dim 0"),
    ("slice-last-column", "sm_80", slice_case("0, 9", W8), "window [9, 17) of dim 1"),
    ("slice-i8-offsets", "sm_80", slice_case("0, 0", W8).replace("array<i64: 0, 0>", "array<i8: 0, 0>"),
     "tile.slice static_offsets must be an array<i64: ...>, got array<i8: 0, 0>"),
    ("slice-wrong-rank-short", "sm_80", slice_case("0", W8), "1 static_offsets for a source of rank 2"),
    ("slice-wrong-rank-long", "sm_80", slice_case("0, 0, 0", W8), "3 static_offsets"),
    ("slice-higher-rank", "sm_80", slice_case("0, 0", shared("2, 8, 8", "S[(2, 8, 8):(128, 16, 1)]")),
     "higher rank than its source"),
    ("slice-larger-extent", "sm_80", slice_case("0, 0", shared("32, 8", "S[(32, 8):(16, 1)]")),
     "window [0, 32) of dim 0"),
    ("slice-dynamic-without-operand", "sm_80", slice_case(f"{DYN}, 0", W8),
     "1 dynamic entries in static_offsets but 0 index operands"),
    ("slice-operand-without-marker", "sm_80", slice_case("0, 0", W8, ", %i", ", index"),
     "0 dynamic entries in static_offsets but 1 index operands"),
    ("slice-dropped-dim-out-of-range", "sm_80", slice_case("16, 0", ROW), "window [16, 17) of dim 0"),
    ("slice-other-element-type", "sm_80", slice_case("0, 0", shared("8, 8", "S[(8, 8):(16, 1)]", "f32")),
     "must keep the element type and scope"),
    # tile.view
    ("view-larger-than-source", "sm_80", kernel(f"""      %s = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {W8}
      %v = "tile.view"(%s) : ({W8}) -> {SHARED_16x16}"""), "tile.view result 16x16xf16 in shared (512 bytes) is larger than its source 8x8xf16 in shared (240 bytes)"),
    ("view-changes-scope", "sm_80", kernel(f"""      %s = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {SHARED_16x16}
      %v = "tile.view"(%s) : ({SHARED_16x16}) -> !tile.buf<array<i64: 16, 16>, f16, "local", {L}<"S[(16, 16):(16, 1)]">>"""),
     "cannot move a buffer from shared to local"),
    # shared memory: offsets and the per-chip budget
    ("shared-negative-offset", "sm_80", alloc("16, 16", "S[(16, 16):(16, 1)]", -16), "offset -16 is negative"),
    ("shared-512KiB", "sm_80", alloc("512, 512", "S[(512, 512):(512, 1)]", 0),
     "beyond the 163 KiB of shared memory a block can use on sm_80"),
    ("shared-170KiB-sm80", "sm_80", alloc("170, 1024", "S[(170, 1024):(1024, 1)]", 0, "i8"), "163 KiB"),
    ("shared-offset-past-budget-sm90a", "sm_90a", alloc("16, 16", "S[(16, 16):(16, 1)]", 232448),
     "227 KiB of shared memory a block can use on sm_90a"),
    ("shared-230KiB-sm100a", "sm_100a", alloc("230, 1024", "S[(230, 1024):(1024, 1)]", 0, "i8"),
     "227 KiB of shared memory a block can use on sm_100a"),
    # block and grid extents
    ("block-zero", "sm_80", kernel("", block="0, 1, 1"), "known_block_size must be three positive extents"),
    ("block-4096", "sm_80", kernel("", block="4096, 1, 1"), "known_block_size x = 4096 exceeds the hardware limit 1024"),
    ("block-2048-threads", "sm_80", kernel("", block="64, 32, 1"), "has 2048 threads; a block has at most 1024"),
    ("block-z-65", "sm_80", kernel("", block="1, 1, 65"), "known_block_size z = 65 exceeds the hardware limit 64"),
    ("block-negative", "sm_80", kernel("", block="-32, 1, 1"), "three positive extents"),
    ("block-two-dims", "sm_80", kernel("", block="32, 1"), "known_block_size"),
    ("language-grid-y-too-large", "sm_80", kernel("", extra=", tile.grid = array<i32: 1, 70000, 1>"),
     "tile.grid y = 70000 exceeds the hardware limit 65535"),
    ("grid-y-too-large", "sm_80", kernel("", extra=", known_grid_size = array<i32: 1, 70000, 1>"),
     "known_grid_size y = 70000 exceeds the hardware limit 65535"),
    # tensor memory columns
    *[(f"tmem-ncols-{n}", "sm_100a", kernel(
        f'      "tile.tmem_alloc"(%p) {{ncols = {n} : i32, cta_group = 1 : i32}} : (!llvm.ptr<3>) -> ()',
        params="%p: !llvm.ptr<3>"), f"tile.tmem_alloc ncols must be a power of two from 32 to 512, got {n}")
      for n in (7, 0, -32, 16, 48, 1024, 100)],
    ("tmem-dealloc-ncols", "sm_100a", kernel(
        '      "tile.tmem_dealloc"(%a) {ncols = 33 : i32, cta_group = 1 : i32} : (i32) -> ()',
        params="%a: i32"), "tile.tmem_dealloc ncols must be a power of two"),
    # element types and shapes
    *[(f"element-{t.strip('!').replace('<', '-').replace('>', '').replace('.', '-').replace(' ', '')}", "sm_80",
       local("4", "S[4:1]", t), f"element type {t} has no bit width")
      for t in ("none", "complex<f32>", "vector<4xf32>", "!llvm.ptr", "tuple<i32>", "memref<4xf32>")],
    ("shape-zero", "sm_80", local("0, 4", "S[4:1]", "f32"), "a tile shape holds positive extents"),
    ("shape-negative", "sm_80", local("-4", "S[4:1]", "f32"), "a tile shape holds positive extents"),
    ("shape-huge", "sm_80", local("65536, 65536", "S[(65536, 65536):(65536, 1)]", "f32"),
     "more than a tile can hold"),
    ("shape-layout-mismatch", "sm_80", local("16, 8", "S[4:1]", "f32"), "has 4 elements but shape (16, 8) has 128"),
    ("swizzle-beyond-address", "sm_90a", alloc("128, 64", "S[(128, 64):(64, 1)] o Sw<3,3,215>", 0),
     "swizzle Sw<3,3,215> reaches beyond bit 24"),
    ("stride-overflows-i32", "sm_80", local("16, 8", "S[(2, 8, 4, 2):(2147483647, 4@laneid, 1@laneid, 1)]", "f32"),
     "reaches beyond 2147483647"),
    ("offset-overflows-i32", "sm_80", local("4", "S[4:1] + {m: 4294967296}", "f32"), "reaches beyond"),
    ("local-beyond-512KiB", "sm_80", local("2, 2", "S[(2, 2):(200000, 1)]", "f32"),
     "needs 800008 bytes per thread; local memory holds 524288"),
    ("buffer-argument-bad-shape-type", "sm_80", kernel(
        '      "tile.fill"(%a, %v) {scope = "warp"} : (!tile.buf<array<i32: 4>, f32, "local", #tile.layout<"S[4:1]">>, f32) -> ()',
        params='%a: !tile.buf<array<i32: 4>, f32, "local", #tile.layout<"S[4:1]">>, %v: f32'),
     "operand 0 of tile.fill: invalid tile buffer type"),
    ("tile-ops-without-block-size", "sm_80", kernel(
        '      %a = "tile.alloc_local"() : () -> !tile.buf<array<i64: 4>, f32, "local", #tile.layout<"S[4:1]">>',
        block="32, 1, 1").replace("known_block_size = array<i32: 32, 1, 1>", "other = 1"),
     "tile ops need their kernel's block size"),
    ("block-size-i8-array", "sm_80", kernel(
        '      %a = "tile.alloc_local"() : () -> !tile.buf<array<i64: 4>, f32, "local", #tile.layout<"S[4:1]">>',
        block="32, 1, 1").replace("array<i32: 32, 1, 1>", "array<i8: 32, 1, 1>"),
     "tile ops need their kernel's block size"),
    ("tile-op-in-gpu-module", "sm_90a", kernel("").replace(
        "    gpu.func", '    %e = "tile.elect_sync"() : () -> i1\n    gpu.func', 1),
     "'tile.elect_sync' must be inside a gpu.func"),
    ("tile-op-at-top-level", "sm_80", '%a = "tile.alloc_local"() : () -> !tile.buf<array<i64: 4>, f32, "local", #tile.layout<"S[4:1]">>\n',
     "'tile.alloc_local' must be inside a gpu.func"),
    ("alloc-local-of-shared-type", "sm_80", kernel(
        f'      %s = "tile.alloc_local"() : () -> {SHARED_16x16}'),
     'tile.alloc_local makes a local buffer, but its result type says "shared"'),
    ("alloc-shared-of-local-type", "sm_80", kernel(
        '      %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !tile.buf<array<i64: 4>, f32, "local", #tile.layout<"S[4:1]">>'),
     'tile.alloc_shared makes a shared buffer, but its result type says "local"'),
    ("global-of-tmem-type", "sm_100a", kernel(
        '      %g = "tile.global"(%p) : (!llvm.ptr) -> !tile.buf<array<i64: 4>, f32, "tmem", #tile.layout<"S[4:1]">>',
        params="%p: !llvm.ptr"), 'tile.global makes a global buffer, but its result type says "tmem"'),
    ("fill-non-injective-shared", "sm_80", kernel(
        f'      %s = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {shared("16, 16", "S[(16, 16):(1, 1)]", "f32")}\n'
        f'      "tile.fill"(%s, %v) {{scope = "warp"}} : ({shared("16, 16", "S[(16, 16):(1, 1)]", "f32")}, f32) -> ()',
        params="%v: f32"),
     "tile.fill writes a destination whose layout S[(16, 16):(1, 1)] puts two elements in one place"),
    ("copy-non-injective-global", "sm_80", kernel(
        '      %g = "tile.global"(%p) : (!llvm.ptr) -> !tile.buf<array<i64: 32, 4>, f16, "global", #tile.layout<"S[(32, 4):(2, 1)]">>\n'
        '      %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !tile.buf<array<i64: 32, 4>, f16, "shared", #tile.layout<"S[(32, 4):(4, 1)]">>\n'
        '      "tile.copy"(%g, %s) {scope = "warp"} : (!tile.buf<array<i64: 32, 4>, f16, "global", #tile.layout<"S[(32, 4):(2, 1)]">>, !tile.buf<array<i64: 32, 4>, f16, "shared", #tile.layout<"S[(32, 4):(4, 1)]">>) -> ()',
        params="%p: !llvm.ptr"),
     "tile.copy writes a destination whose layout S[(32, 4):(2, 1)] puts two elements in one place"),
    # nvvm ops the chip lacks: rejected instead of an LLVM abort
    ("nvvm-st-bulk-sm80", "sm_80", nvvm("nvvm.st.bulk %p, size = %n : !llvm.ptr", "%p: !llvm.ptr, %n: i64"),
     "'nvvm.st.bulk' needs a chip with st.bulk; the target is sm_80"),
    ("nvvm-st-bulk-sm90a", "sm_90a", nvvm("nvvm.st.bulk %p, size = %n : !llvm.ptr", "%p: !llvm.ptr, %n: i64"),
     "needs a chip with st.bulk; the target is sm_90a"),
    ("nvvm-fence-sc-cluster-sm80", "sm_80", nvvm("nvvm.fence.sc.cluster"), "'nvvm.fence.sc.cluster' needs a chip with cluster-scope fences"),
    ("nvvm-expect-tx-sm80", "sm_80", nvvm("nvvm.mbarrier.expect_tx %p, %n : !llvm.ptr<3>, i32", "%p: !llvm.ptr<3>, %n: i32"),
     "'nvvm.mbarrier.expect_tx' needs a chip with mbarrier transaction counts"),
    ("nvvm-elect-sync-sm80", "sm_80", nvvm("%e = nvvm.elect.sync -> i1"), "needs a chip with elect.sync"),
    ("nvvm-wgmma-sm100a", "sm_100a", nvvm("nvvm.wgmma.fence.aligned"), "needs a chip with wgmma.mma_async; the target is sm_100a"),
    ("nvvm-wgmma-sm80", "sm_80", nvvm("nvvm.wgmma.commit.group.sync.aligned"), "wgmma.mma_async"),
    ("nvvm-tcgen05-sm90a", "sm_90a", nvvm('nvvm.tcgen05.relinquish_alloc_permit'), "needs a chip with tcgen05"),
    ("nvvm-setmaxnreg-sm80", "sm_80", nvvm("nvvm.setmaxregister increase 232"), "needs a chip with setmaxnreg"),
    ("nvvm-cluster-arrive-sm80", "sm_80", nvvm("nvvm.cluster.arrive"), "needs a chip with thread-block clusters"),
    ("nvvm-cluster-sreg-sm80", "sm_80", nvvm("%r = nvvm.read.ptx.sreg.cluster.nctarank : i32\n      llvm.store %r, %p : i32, !llvm.ptr", "%p: !llvm.ptr"), "thread-block clusters"),
    ("nvvm-griddepcontrol-sm80", "sm_80", nvvm("nvvm.griddepcontrol wait"), "needs a chip with griddepcontrol"),
    ("nvvm-fence-proxy-sm80", "sm_80", nvvm("nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}"),
     "needs a chip with fence.proxy.async"),
    ("nvvm-stmatrix-sm80", "sm_80", nvvm("nvvm.stmatrix %p, %v {layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : !llvm.ptr<3>, i32",
                                         "%p: !llvm.ptr<3>, %v: i32"), "needs a chip with stmatrix"),
    ("nvvm-mbarrier-try-wait-sm80", "sm_80", nvvm("nvvm.mbarrier.try_wait.parity %p, %n, %n : !llvm.ptr<3>, i32, i32", "%p: !llvm.ptr<3>, %n: i32"),
     "mbarrier.try_wait"),
    ("nvvm-redux-sm90a", "sm_90a", nvvm("%r = nvvm.redux.sync add %v, %m : i32 -> i32", "%v: i32, %m: i32"), "needs a chip with redux.sync"),
    ("nvgpu-async-copy-sm75", "sm_75", nvvm(
        "%t = nvgpu.device_async_copy %s[%i], %d[%i], 4 : memref<16xf32> to memref<16xf32, #gpu.address_space<workgroup>>",
        "%s: memref<16xf32>, %d: memref<16xf32, #gpu.address_space<workgroup>>, %i: index"),
     "'nvgpu.device_async_copy' needs a chip with cp.async; the target is sm_75"),
    ("nvgpu-tma-fence-sm80", "sm_80", nvvm(
        "nvgpu.tma.fence.descriptor %t : !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>",
        "%t: !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>"),
     "'nvgpu.tma.fence.descriptor' needs a chip with cp.async.bulk.tensor (TMA)"),
    # #nvvm.target attributes that would make LLVM abort while serialising
    ("target-without-features", "sm_80", kernel("", targets='[#nvvm.target<chip = "sm_80">]'),
     'names no PTX version, and LLVM\'s default (6.0) is too old for sm_80: add features = "+ptx78"'),
    ("target-ptx-too-old", "sm_80", kernel("", targets='[#nvvm.target<chip = "sm_90a", features = "+ptx70">]'),
     "sm_90a needs PTX ISA 8.0 or newer, got 7.0"),
    ("target-ptx-999", "sm_80", kernel("", targets='[#nvvm.target<chip = "sm_80", features = "+ptx999">]'),
     "unknown PTX ISA version 999"),
    ("target-no-chip", "sm_80", kernel("", targets='[#nvvm.target<features = "+ptx80">]'), "names no chip"),
    ("target-unknown-chip", "sm_80", kernel("", targets='[#nvvm.target<chip = "sm_52", features = "+ptx80">]'),
     "unsupported chip 'sm_52'"),
    ("target-rocdl", "sm_80", kernel("", targets='[#rocdl.target<chip = "gfx90a">]'),
     "tilemlir compiles for #nvvm.target only"),
    ("target-own-chip-lacks-op", "sm_90a", kernel("      %e = nvvm.elect.sync -> i1",
                                                 targets='[#nvvm.target<chip = "sm_80", features = "+ptx78">]'),
     "needs a chip with elect.sync; the target is sm_80"),
]

TO_PTX = "--pass-pipeline=builtin.module(tile-to-ptx{{chip={chip}}})"
CASES = [OptCase(f"rejected-{name}", ["in.mlir", "-o", "out.mlir", TO_PTX.format(chip=chip)],
                 {"in.mlir": ir, "out.mlir": b"kept\n"}, errors=("in.mlir:", words))
         for name, chip, ir, words in REJECTED]

# The verifier's rejections come from tile-verify alone as well (what a pipeline puts before
# any pass that reads tile IR).
CASES += [OptCase(f"verify-{name}", ["in.mlir", "-o", "out.mlir",
                                     f"--pass-pipeline=builtin.module(tile-verify{{chip={chip}}})"],
                  {"in.mlir": ir, "out.mlir": b"kept\n"}, errors=("in.mlir:", words))
          for name, chip, ir, words in REJECTED
          if not name.startswith(("nvvm", "nvgpu", "target", "block-two-dims"))]

# Valid neighbours of the rejected cases: still accepted (the checks are not too strict).
ACCEPTED = [
    ("slice-last-window", "sm_80", slice_case("8, 8", W8)),
    ("slice-dynamic", "sm_80", slice_case(f"{DYN}, 0", ROW, ", %i", ", index")),
    ("slice-dropped-dim", "sm_80", slice_case("15, 0", ROW)),
    ("shared-160KiB-sm80", "sm_80", alloc("160, 1024", "S[(160, 1024):(1024, 1)]", 0, "i8")),
    ("shared-220KiB-sm90a", "sm_90a", alloc("220, 1024", "S[(220, 1024):(1024, 1)]", 0, "i8")),
    *[(f"global-{n}-squared", "sm_90a", kernel(
        f'      %g = "tile.global"(%p) : (!llvm.ptr) -> !tile.buf<array<i64: {n}, {n}>, f16, "global", '
        f'#tile.layout<"S[({n}, {n}):({n}, 1)]">>', params="%p: !llvm.ptr"))
      for n in (8192, 65536)],
    ("block-1024", "sm_80", kernel("", block="1024, 1, 1")),
    ("block-32x32", "sm_80", kernel("", block="32, 32, 1")),
    ("nvvm-st-bulk-sm100a", "sm_100a", nvvm("nvvm.st.bulk %p, size = %n : !llvm.ptr", "%p: !llvm.ptr, %n: i64")),
    ("nvvm-fence-sc-cluster-sm90a", "sm_90a", nvvm("nvvm.fence.sc.cluster")),
    ("nvvm-barrier-sm80", "sm_80", nvvm("nvvm.barrier0")),
    ("nvvm-tid-sm75", "sm_75", nvvm("%t = nvvm.read.ptx.sreg.tid.x : i32")),
    ("target-own-features", "sm_80", kernel("", targets='[#nvvm.target<chip = "sm_80", features = "+ptx78">]')),
]
CASES += [OptCase(f"accepted-{name}", ["in.mlir", "-o", "out.mlir", TO_PTX.format(chip=chip)],
                  {"in.mlir": ir}, rc=0, after=None) for name, chip, ir in ACCEPTED]


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(batch, case_id):
    case = batch.cases[case_id]
    if case.rc == 0:
        # A success writes out.mlir: check its PTX instead of an unchanged directory.
        case.after = {"in.mlir": case.files["in.mlir"]}
        result = batch.results[case_id]
        assert result["outcome"] == "ok" and result["rc"] == 0, result.get("stderr")
        out = batch.dirs[case_id][0] / "out.mlir"
        assert "gpu.binary" in out.read_text()
    else:
        batch.check(case_id)
