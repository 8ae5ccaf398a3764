"""tilemlir.explain: per tile op of a kernel, its Python line, the variant chosen, the variants
that lost and why, the ops the variant emits (counted) and the bytes the op moves."""

import inspect

import tilemlir
from tilemlir.dispatch.explain import Decision, Explanation


def _line_of(fn, text: str) -> int:
    """The source line of `fn` (a module-level function's file) that holds `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_the_mma_demo_names_its_python_line_and_counts_the_mma():
    from tilemlir.kernels import mma_demo
    explained = tilemlir.explain(mma_demo.gemm_16x8x16, target="sm_80")
    assert isinstance(explained, Explanation) and not explained.errors
    line = _line_of(mma_demo.gemm_16x8x16.fn, "Tx.warp.gemm(")
    (gemm,) = explained.at(line)
    assert gemm.op == "tile.gemm" and gemm.location.startswith(mma_demo.__file__)
    assert gemm.variant.startswith("mma") and dict(gemm.instructions)["nvvm.mma.sync"] == 1
    assert gemm.traffic == () and gemm.scope == "warp" and gemm.scope_threads == 32
    assert f"tile.gemm at {mma_demo.__file__}:{line}:" in str(explained)


def test_a_tma_copy_moves_its_box_and_wgmma_beats_tcgen05_on_hopper():
    from tilemlir.kernels.hgemm_hopper import hgemm_v6
    explained = tilemlir.explain(hgemm_v6(256, 512, 256), target="sm_90a")
    copies = [d for d in explained if d.op == "tile.copy_async" and d.variant == "tma"]
    a_box = 128 * 64 * 2                              # BM x BK f16
    assert {(t.access, t.space, t.bytes) for t in copies[0].traffic} == {
        ("read", "global", a_box), ("write", "shared", a_box)}
    assert copies[0].branch is not None and copies[0].per_cta("read") is None
    assert dict(copies[0].instructions)["nvvm.cp.async.bulk.tensor.shared.cluster.global"] == 1
    gemm = next(d for d in explained if d.op == "tile.gemm_async")
    assert gemm.variant == "wgmma"
    (tcgen05,) = [r for r in gemm.rejected if r.variant == "tcgen05"]
    assert any("not available on sm_90a" in reason for reason in tcgen05.reasons)
    assert dict(gemm.instructions)["nvvm.wgmma.mma_async"] >= 1


COPY = """
!G = !tile.buf<array<i64: 64, 64>, f16, "global", #tile.layout<"S[(64, 64):(64, 1)]">>
!Sm = !tile.buf<array<i64: 64, 64>, f16, "shared", #tile.layout<"S[(64, 64):(64, 1)]">>
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %g = "tile.global"(%p) : (!llvm.ptr) -> !G
    %s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Sm
    "tile.copy"(%s, %g) {scope = "SCOPE"HINT} : (!Sm, !G) -> ()
    "tile.copy"(%s, %g) {scope = "SCOPE"HINT} : (!Sm, !G) -> ()
    gpu.return
  }
}
"""


def test_bytes_per_thread_and_per_cta_follow_the_scope():
    for scope, per_thread, per_cta in (("warp", 256, 4 * 8192), ("cta", 64, 8192)):
        first, second = tilemlir.explain(COPY.replace("SCOPE", scope).replace("HINT", ""),
                                         target="sm_80")
        assert first.variant == "cooperative"
        assert (first.per_thread("read"), first.per_thread("write")) == (per_thread, per_thread)
        assert (first.per_cta("read"), first.per_cta("write")) == (per_cta, per_cta)
        # the second op has the first's signature: decided once, explained at its own line
        assert second.replayed_from == first.location != second.location
        assert second == Decision(**{**second.__dict__, "location": second.location})


def test_a_failing_dispatch_is_explained_not_raised():
    text = COPY.replace("SCOPE", "warp").replace("HINT", ', dispatch = "stmatrix"')
    explained = tilemlir.explain(text, target="sm_80")
    assert explained[0].variant is None and explained[0].hint == "stmatrix"
    assert "target: stmatrix is not available on sm_80" in explained[0].rejected[0].reasons
    assert explained.errors and "no variant of 'tile.copy'" in explained.errors[0]
    assert "chosen: none (dispatch fails here)" in str(explained)


def test_the_callers_module_is_left_as_it_was():
    from mlir import ir

    from tilemlir.ir.context import make_context
    with make_context():
        module = ir.Module.parse(COPY.replace("SCOPE", "warp").replace("HINT", ""))
        before = str(module)
        assert len(tilemlir.explain(module, target="sm_80")) == 2
        assert str(module) == before
