"""The variant registry and the dispatcher's contract (ordering, hints, aggregated reasons)."""

import subprocess
import sys

import pytest
from mlir import ir

from tilemlir.dispatch.registry import Registry, Reject, Variant, predicate, variants_for
from tilemlir.ir.context import make_context
from tilemlir.lowering.cuda import load_variants
from tilemlir.pipeline import build_pass_manager, dispatch_pass
from tilemlir.target import Target

load_variants()


def _variant(name, priority, predicates=(), lower=None):
    return Variant("toy", "cuda", name, priority, tuple(predicates), lower or (lambda ctx: None))


def test_mma_variant_is_registered_for_gemm_on_cuda():
    names = [v.name for v in variants_for("gemm", "cuda")]
    assert "mma.m16n8k*" in names
    mma = next(v for v in variants_for("gemm") if v.name == "mma.m16n8k*")
    assert mma.priority == 10
    assert {p.name for p in mma.predicates} >= {"full_active_lanes", "no_replica"}


def test_a_lookup_before_the_variants_are_loaded_says_so():
    """The registry never imports the variants (they sit above it): asking before anyone loaded
    them is a clear error, not an empty list that reads as "no variant applies"."""
    code = "from tilemlir.dispatch.registry import variants_for\nvariants_for('gemm')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 1
    assert "the cuda variants are not loaded: call tilemlir.lowering.cuda.load_variants()" \
        in run.stderr


def test_variants_are_tried_by_priority_then_name():
    reg = Registry()
    for v in (_variant("b", 1), _variant("a", 1), _variant("z", 5)):
        reg.add(v)
    assert [v.name for v in reg.lookup("toy")] == ["z", "a", "b"]


def test_a_variant_name_is_registered_once():
    reg = Registry()
    reg.add(_variant("a", 1))
    with pytest.raises(ValueError, match="registered twice"):
        reg.add(_variant("a", 2))


def test_predicate_decorator_keeps_name_and_reason():
    @predicate("even")
    def even(ctx):
        return None if ctx % 2 == 0 else f"{ctx} is odd"
    assert even.name == "even" and even(2) is None and even(3) == "3 is odd"


def test_reject_carries_its_reason():
    assert Reject("K=24 is not a multiple of 16").reason == "K=24 is not a multiple of 16"


_GEMM = '''
!A = !tile.buf<array<i64: 16, 16>, f16, "local", #tile.layout<"S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]">>
!B = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">>
!D = !tile.buf<array<i64: 16, 8>, DTYPE, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !A
    %b = "tile.alloc_local"() : () -> !B
    %d = "tile.alloc_local"() : () -> !D
    "tile.gemm"(%d, %a, %b, %d) {alpha = ALPHA : f32, beta = 0.0 : f32, scope = "warp",
        transpose_a = false, transpose_b = false} : (!D, !A, !B, !D) -> ()
    gpu.return
  }
}'''

ALLOCS = '''    %a = "tile.alloc_local"() : () -> !A
    %b = "tile.alloc_local"() : () -> !B
    %d = "tile.alloc_local"() : () -> !D
'''


def _dispatch(text, chip="sm_80"):
    with make_context():
        module = ir.Module.parse(text)
        try:
            build_pass_manager(dispatch_pass(Target(chip))).run(module.operation)
        except ir.MLIRError as err:
            return None, [d.message for d in err.error_diagnostics]
        return str(module), []


def test_every_predicate_reason_is_reported_in_one_diagnostic():
    _, errors = _dispatch(_GEMM.replace("DTYPE", "f16").replace("ALPHA", "2.0"), chip="sm_75")
    assert len(errors) == 1
    message = errors[0]
    assert message.startswith("no variant of 'tile.gemm' can lower this op for sm_75:")
    for reason in ("dtypes: C is f16", "alpha_beta: alpha must be 1.0", "target: mma.sync"):
        assert reason in message


def test_accepted_gemm_leaves_no_tile_primitive():
    out, errors = _dispatch(_GEMM.replace("DTYPE", "f32").replace("ALPHA", "1.0"))
    assert not errors
    assert out.count("nvvm.mma.sync") == 1 and "tile.gemm" not in out


def test_buffers_without_storage_are_reported_not_crashed():
    text = _GEMM.replace("DTYPE", "f32").replace("ALPHA", "1.0").replace(ALLOCS, "")
    text = text.replace("@k()", "@k(%a: !A, %b: !B, %d: !D)")
    _, errors = _dispatch(text)
    assert len(errors) == 1 and "operand D of 'tile.gemm'" in errors[0]
