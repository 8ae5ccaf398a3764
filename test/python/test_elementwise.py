"""The elementwise and reduction primitives on the CPU: kernels compile to PTX that ptxas
assembles, the instructions the layouts and options call for are there, and what no variant
can lower is refused with every variant's reason."""

import re

import pytest

import tilemlir
import tilemlir.lang as T
from elementwise_kernels import (REDUCE_CASES, RHS, ROW_STAT, UNARY, WARP_TILE, WG_ROWS, C, R,
                                 binary_kernel, reduce_kernel, relu_kernel, unary_kernel,
                                 warpgroup_reduce_kernel, warpgroup_rows_layout)
from tilemlir.kernels.norms import rms_norm, row_plan, softmax, softmax_per_thread
from tilemlir.target.ptx import assemble, find_ptxas

Tx = T.tile
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found")


def ptx(kernel, chip="sm_90a") -> str:
    text = tilemlir.compile(kernel, target=chip, cache=False).ptx
    if find_ptxas() is not None:
        assemble(text, chip)
    return text


# The precise functions built on exp. Its ex2.approx.ftz takes f = x log2 e - n with n >= -126:
# f is below -126 (a flushed result) only where e^x = 2^f 2^n < 2^-252 is 0 in f32 anyway, and a
# subnormal f (flushed to 0) gives 1, as 2^f rounds to.
EXP_USERS = ("exp", "tanh", "sigmoid", "silu", "gelu_tanh", "gelu_erf")


@pytest.mark.parametrize("fn", UNARY)
def test_unary_precise_f32_assembles(fn):
    text = ptx(unary_kernel(fn, "float32", False))
    if fn in EXP_USERS:
        text = text.replace("ex2.approx.ftz.f32", "ex2.approx.f32")
    assert ".ftz" not in text


@pytest.mark.parametrize("fn, instruction", [
    ("exp", "ex2.approx.ftz.f32"), ("exp2", "ex2.approx.ftz.f32"), ("log", "lg2.approx.ftz.f32"),
    ("rsqrt", "rsqrt.approx.ftz.f32"), ("sqrt", "sqrt.approx.ftz.f32"),
    ("tanh", "tanh.approx.f32"), ("silu", "rcp.approx.ftz.f32"),
    ("gelu_tanh", "tanh.approx.f32")])
def test_fast_uses_the_approximate_instruction(fn, instruction):
    assert instruction in ptx(unary_kernel(fn, "float32", True))


def test_precise_exp_is_eight_instructions():
    """Per element: the saturating FMA, the round-down FMA, -n, the shift giving 2^n, two FMAs
    for x log2 e - n, ex2, the multiply by 2^n (test_norms_sass.py counts them in softmax's
    SASS)."""
    text = ptx(unary_kernel("exp", "float32", False))
    per_thread = R * C // 32
    assert text.count("cvt.sat.f32.f32") == per_thread
    assert text.count("fma.rm.f32") == per_thread
    assert text.count("ex2.approx.ftz.f32") == per_thread
    assert "cvt.rni" not in text and "ex2.approx.f32" not in text


@pytest.mark.parametrize("dtype, chip, packed", [
    ("float16", "sm_80", "ex2.approx.f16x2"), ("bfloat16", "sm_90a", "ex2.approx.ftz.bf16x2"),
    ("bfloat16", "sm_80", None)])
def test_fast_exp2_of_pairs_is_one_packed_instruction(dtype, chip, packed):
    text = ptx(unary_kernel("exp2", dtype, True), chip)
    if packed:
        assert text.count(packed) == R * C // 32 // 2
    else:                                             # bf16x2 ex2 needs sm_90: through f32
        assert "bf16x2" not in text.replace("cvt.rn.bf16x2.f32", "")


def test_half_math_rounds_back_in_pairs():
    text = ptx(unary_kernel("exp", "float16", False), "sm_80")
    assert text.count("cvt.rn.f16x2.f32") == R * C // 32 // 2


@pytest.mark.parametrize("rhs_kind", sorted(RHS))
def test_binary_half_pairs_are_packed(rhs_kind):
    text = ptx(binary_kernel("add", "float16", rhs_kind), "sm_80")
    # no .rn: the add may contract with a multiply (none here), see elementwise_math.binary
    assert text.count("add.f16x2") == R * C // 32 // 2
    assert "add.f16 " not in text and "add.rn.f16 " not in text


def test_bf16_max_is_packed_and_propagates_nan():
    text = ptx(binary_kernel("maximum", "bfloat16", "rows"), "sm_90a")
    assert text.count("max.NaN.bf16x2") == R * C // 32 // 2


def test_compare_and_select():
    text = ptx(relu_kernel())                  # LLVM folds x > 0 ? x : 0 into max(x, 0)
    assert text.count("selp.f32") + text.count("max.f32") == R * C // 32


@pytest.mark.parametrize("case", sorted(REDUCE_CASES))
def test_reduce_variant_follows_the_layout(case):
    text = ptx(reduce_kernel("sum", case))
    variant = REDUCE_CASES[case][-1]
    shuffles = text.count("shfl.sync.bfly.b32")
    if variant == "thread":
        assert shuffles == 0 and "bar.sync" not in text
    elif variant == "warp_shuffle":
        assert shuffles == 5 * R and "bar.sync" not in text
    else:                       # 2 rows: 5 shuffles each, partials through shared memory
        assert shuffles == 10 and text.count("bar.sync") == 2 and "st.shared" in text


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("src_dtype", ["float32", "float16"])
@pytest.mark.parametrize("producer", [False, True], ids=["two_warpgroups", "with_producer"])
def test_warpgroup_reduce_syncs_each_warpgroup_on_its_own_barrier(producer, src_dtype, chip):
    """Two warpgroups sum and max their rows (over their 4 warps) at once: 2 reductions x 2
    rows x 5 shuffles, each reduction between two bar.sync 15 - wg, 128 and never bar.sync 0
    (a producer warpgroup, when there is one, only syncs on its barrier 1)."""
    text = ptx(warpgroup_reduce_kernel(1024, src_dtype, producer), chip)
    assert text.count("shfl.sync.bfly.b32") == 2 * WG_ROWS * 5
    syncs = re.findall(r"bar\.sync\s+([^;]+);", text)
    named = [s for s in syncs if re.fullmatch(r"%r\d+, 128", s)]
    assert len(named) == 4 and len(set(named)) == 1, syncs
    assert sorted(set(syncs) - set(named)) == (["1, 128"] if producer else [])
    assert text.count("st.shared") == 2 * WG_ROWS


def test_warpgroup_reduce_needs_a_window_per_warpgroup():
    """Both warpgroups handing the whole scratch buffer to the reduction is refused: their
    partials would land on each other's."""
    layout = warpgroup_rows_layout(WG_ROWS, 1024)

    @T.prim_func
    def k(X: T.Buffer((2 * WG_ROWS, 1024), "float32")):
        T.cta_id([1])
        T.warpgroup_id([2])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        pool = T.SMEMPool()
        red = pool.alloc((WG_ROWS * 4,), "float32")
        pool.commit()
        x = T.alloc_local((WG_ROWS, 1024), "float32", layout=layout)
        y = T.alloc_local((WG_ROWS, 1), "float32", layout=T.TileLayout(T.S[(WG_ROWS, 1):(1, 1)]))
        Tx.wg.copy(x, X[0:WG_ROWS, :])
        Tx.wg.sum(y, x, axis=1, scratch=red)

    message = _compile_error(k)
    assert "cross_warp (priority 10): scratch: warpgroups 0 and 1 may both reach the op and " \
           "their scratch windows overlap" in message


@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("factory", [softmax, rms_norm])
def test_norm_kernels_load_and_store_16_bytes(factory, chip):
    M, N = 37, 4096
    text = ptx(factory(M, N, "bfloat16"), chip)
    plan = row_plan(N, "bfloat16", op=factory.__name__)
    assert (plan.warps, plan.chunks, plan.rows) == (4, 4, 1)
    chunks = plan.chunks
    loads = chunks * (2 if factory is rms_norm else 1)          # the row, and the weight
    assert text.count("ld.global.v4.b32") == loads
    assert text.count("st.global.v4.b32") == chunks
    assert text.count("bar.sync") == 2 * (2 if factory is softmax else 1)


def test_norm_row_plans():
    """Rows of 256 x k elements keep their tiling (k accesses of 16 bytes over warps of 32
    lanes, one row per CTA); short rows share a CTA, ragged ones take narrower accesses, long
    ones go through shared memory in tiles (held shifted where ragged)."""
    plan = row_plan(16384, op="rms_norm")
    assert (plan.vector, plan.warps, plan.chunks, plan.rows, plan.tiles) == (8, 16, 4, 1, 1)
    plan = row_plan(768, op="rms_norm")              # a warp per row, 4 rows per CTA
    assert (plan.warps, plan.chunks, plan.rows, plan.width) == (1, 3, 4, 768)
    plan = row_plan(3)                                # 4 lanes per row, 8 rows per warp
    assert (plan.vector, plan.lanes, plan.rows, plan.width) == (1, 4, 32, 4)
    plan = row_plan(1000)                             # 1000 = 8 x 125: 16-byte accesses
    assert (plan.vector, plan.chunks, plan.width) == (8, 4, 1024)
    plan = row_plan(4100)                             # 4 x 1025: 8-byte accesses
    assert (plan.vector, plan.warps, plan.width, plan.shifted) == (4, 5, 4480, False)
    plan = row_plan(50257, "bfloat16")                # through shared memory, all staged,
    assert (plan.vector, plan.tiles, plan.staged, plan.width, plan.shifted) == \
        (8, 7, 7, 8192, True)                         # shifted: 16-byte accesses
    assert not row_plan(65540, "float32").shifted     # 4 x 4 bytes: 16-byte accesses already
    plan = row_plan(128256, "bfloat16")               # keeps an SM: tiles of 16384 elements,
    assert (plan.vector, plan.tiles, plan.staged, plan.width) == (8, 8, 6, 16384)  # 2 twice


def test_norm_factories_refuse_bad_arguments():
    with pytest.raises(ValueError, match="dtype must be 'float16', 'bfloat16' or 'float32'"):
        rms_norm(4, 4096, "int8")
    with pytest.raises(ValueError, match="softmax: N must be a positive integer, got 0"):
        softmax(4, 0)


def test_softmax_rows_take_at_most_8_warps_by_default():
    assert [softmax_per_thread(n) for n in (768, 4096, 8192, 16384, 32768, 65536)] == \
        [32, 32, 32, 64, 128, 128]
    plan = row_plan(16384, per_thread=softmax_per_thread(16384))
    assert (plan.warps, plan.chunks) == (8, 8)
    with pytest.raises(ValueError, match="per_thread=48"):
        softmax(4, 4096, per_thread=48)


# ---------------------------------------------------------------------------- refusals
def _compile_error(kernel) -> str:
    with pytest.raises(Exception) as info:
        tilemlir.compile(kernel, target="sm_90a", cache=False)
    return str(info.value)


def test_cross_warp_reduce_without_scratch_lists_every_variant():
    shape, src_layout, dst_shape, dst_layout = REDUCE_CASES["cross_warp"][:4]

    @T.prim_func
    def k(X: T.Buffer(shape, "float32")):
        T.cta_id([1])
        T.warp_id([4])
        T.lane_id([32])
        x = T.alloc_local(shape, "float32", layout=src_layout)
        y = T.alloc_local(dst_shape, "float32", layout=dst_layout)
        Tx.cta.copy(x, X)
        Tx.cta.sum(y, x, axis=1)

    message = _compile_error(k)
    assert "no variant of 'tile.reduce'" in message
    assert "thread (priority 30): whole_rows: a thread holds 8 of the 1024 elements" in message
    assert "warp_shuffle (priority 20): one_warp_per_row: each row is spread over 4 warps" \
        in message
    assert "cross_warp (priority 10): scratch: combining partials of several warps needs a " \
           "shared-memory scratch buffer" in message


def test_reduce_into_f16_is_refused_for_shuffles():
    @T.prim_func
    def k(X: T.Buffer((R, C), "float16")):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((R, C), "float16", layout=WARP_TILE)
        y = T.alloc_local((R, 1), "float16", layout=ROW_STAT)
        Tx.warp.copy(x, X)
        Tx.warp.max(y, x, axis=1)

    assert "word_sized: shuffles move 32-bit words; dst holds f16" in _compile_error(k)


def test_reduce_dst_held_by_other_threads_is_refused():
    partial = T.TileLayout(T.S[(R, 1):(1 @ T.laneid, 1)])     # row r's sum only in lane r

    @T.prim_func
    def k(X: T.Buffer((R, C), "float32")):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((R, C), "float32", layout=WARP_TILE)
        y = T.alloc_local((R, 1), "float32", layout=partial)
        Tx.warp.copy(x, X)
        Tx.warp.sum(y, x, axis=1)

    assert "rows: the threads keep different dst register slots" in _compile_error(k)


def test_elementwise_operand_in_another_thread_is_refused():
    moved = T.TileLayout(T.S[(R, 8, 32):(8, 1, 1 @ T.laneid)])     # columns over lanes

    @T.prim_func
    def k(X: T.Buffer((R, C), "float32")):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((R, C), "float32", layout=WARP_TILE)
        y = T.alloc_local((R, C), "float32", layout=moved)
        Tx.warp.copy(x, X)
        Tx.warp.add(x, x, y)

    message = _compile_error(k)
    assert "registers (priority 0)" in message
    assert "dst[0, 1] is held by lane 0 but rhs[0, 1] by lane 1: elementwise math keeps every " \
           "element in its thread" in message


def test_elementwise_shapes_must_broadcast_and_types_match():
    @T.prim_func
    def k(X: T.Buffer((R, C), "float32")):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((R, C), "float32", layout=WARP_TILE)
        h = T.alloc_local((R, C), "float16", layout=WARP_TILE)
        b = T.alloc_local((2, 1), "float32", layout=T.TileLayout(T.S[(2, 1):(1, 1)]))
        Tx.warp.copy(x, X)
        Tx.warp.mul(x, x, b)
        Tx.warp.exp(h, x)

    message = _compile_error(k)
    assert "rhs is [2, 1], which does not broadcast to dst's [4, 256]" in message
    assert "float_tiles: dst holds f16 but src holds f32 (tile.cast first)" in message


def test_elementwise_on_shared_memory_is_refused_with_the_reason():
    @T.prim_func
    def k(X: T.Buffer((R, C), "float32")):
        T.cta_id([1])
        T.lane_id([32])
        pool = T.SMEMPool()
        s = pool.alloc((R, C), "float32")
        pool.commit()
        Tx.warp.exp(s, s)

    assert "registers: computes on registers (copy memory operands into register tiles " \
           "first); dst is in shared, src is in shared" in _compile_error(k)


@pytest.mark.parametrize("call, message", [
    (lambda x: Tx.exp(x, x, fast=1), "Tx.exp: fast must be True or False, got 1"),
    (lambda x: Tx.gelu(x, x, approximate="erf"), "approximate must be 'none' or 'tanh'"),
    (lambda x: Tx.sum(x, x, axis=2), r"Tx.sum: axis must be an integer in \[-2, 2\)"),
    (lambda x: Tx.compare(x, x, "<>", 0.0), "Tx.compare: op must be one of"),
    (lambda x: Tx.add(x, x, "one"), "rhs must be a buffer or a number, got str"),
    (lambda x: Tx.add(x, 2, x.local), "rhs must be a buffer or a number"),
])
def test_wrong_arguments_name_the_parameter(call, message):
    @T.prim_func
    def k(X: T.Buffer((R, C), "float32")):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((R, C), "float32", layout=WARP_TILE)
        call(x)

    with pytest.raises(T.KernelError, match=message):
        tilemlir.compile(k, target="sm_90a", cache=False)


def test_row_statistics_of_the_wgmma_accumulator_stay_in_registers():
    # rows of the accumulator lie in 4 lanes: a fold, then butterflies over lane bits 0 and 1,
    # leaving the statistic in all 4 (the column_vector layout's replicas); no shared memory
    from elementwise_kernels import accumulator_softmax_kernel
    text = ptx(accumulator_softmax_kernel())
    shuffles = [int(x) for x in re.findall(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, (\d+),", text)]
    assert sorted(set(shuffles)) == [1, 2] and len(shuffles) == 8   # 2 rows x 2 bits x 2 ops
    assert "st.shared" not in text and "bar.sync" not in text


def test_replicated_source_is_refused_for_shuffles():
    layout = T.wgmma_accumulator_layout(64, 64)
    stat = layout.column_vector((64, 64))

    @T.prim_func
    def bad(Y: T.Buffer((64, 1), "float32")):
        T.cta_id([1])
        T.warpgroup_id([1])
        T.warp_id_in_wg([4])
        T.lane_id([32])
        s = T.alloc_local((64, 1), "float32", layout=stat)
        t = T.alloc_local((1, 1), "float32", layout=T.TileLayout(T.S[(1, 1):(1, 1)]))
        Tx.wg.fill(s, 1.0)
        Tx.wg.sum(t, s, axis=0)          # each row's value is held by 4 lanes: counted 4 times

    with pytest.raises(Exception, match="replicated layout on SRC"):
        tilemlir.compile(bad, target="sm_90a", cache=False)
