"""The proof that only the even CTA of a pair reaches a block (tilemlir/analysis/cta_pair.py),
on conditions as the language writes them."""

import pytest
from mlir import ir

from tilemlir.analysis.cta_pair import leader_only_reason
from tilemlir.ir.context import make_context

ACCEPTED = {
    "rank % 2 == 0": "%m = arith.remui %r, %c2 : i32\n%cond = arith.cmpi eq, %m, %c0 : i32",
    "rank % 4 == 2": "%m = arith.remui %r, %c4 : i32\n%cond = arith.cmpi eq, %m, %c2 : i32",
    "rank & 1 == 0": "%m = arith.andi %r, %c1 : i32\n%cond = arith.cmpi eq, %m, %c0 : i32",
    "0 == rank": "%cond = arith.cmpi eq, %c0, %r : i32",
    "warp and rank == 0": "%e = arith.cmpi eq, %r, %c0 : i32\n%cond = arith.andi %w, %e : i1",
}
REJECTED = {
    "rank == 1": "%cond = arith.cmpi eq, %r, %c1 : i32",
    "rank % 2 == 1": "%m = arith.remui %r, %c2 : i32\n%cond = arith.cmpi eq, %m, %c1 : i32",
    "rank % 3 == 0": "%m = arith.remui %r, %c3 : i32\n%cond = arith.cmpi eq, %m, %c0 : i32",
    "rank < 2": "%cond = arith.cmpi ult, %r, %c2 : i32",
    "a thread condition": "%cond = arith.andi %w, %w : i1",
}


def _inner_block(condition: str, in_else: bool = False) -> tuple[ir.Module, ir.Block]:
    """The module (which owns the block) and the block of tile.cta_sync."""
    arms = "{ } else { \"tile.cta_sync\"() : () -> () }" if in_else else \
        "{ \"tile.cta_sync\"() : () -> () }"
    text = f"""
    gpu.module @m {{
      gpu.func @k(%w: i1) kernel {{
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        %c2 = arith.constant 2 : i32
        %c3 = arith.constant 3 : i32
        %c4 = arith.constant 4 : i32
        %r = "tile.cluster_ctarank"() : () -> i32
        {condition}
        scf.if %w {{
          scf.if %cond {arms}
        }}
        gpu.return
      }}
    }}"""
    module = ir.Module.parse(text)
    found = []

    def visit(op):
        if op.name == "tile.cta_sync":
            found.append(op.block)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return module, found[0]


@pytest.mark.parametrize("condition", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_even_rank_conditions_are_proofs(condition):
    with make_context():
        _, block = _inner_block(condition)
        assert leader_only_reason(block, "gemm_async") is None


@pytest.mark.parametrize("condition", REJECTED.values(), ids=REJECTED.keys())
def test_other_conditions_are_not(condition):
    with make_context():
        _, block = _inner_block(condition)
        reason = leader_only_reason(block, "gemm_async")
        assert reason.startswith("gemm_async with cta_group 2 is issued by the even CTA")


def test_the_else_branch_of_an_even_test_is_not_the_leader():
    with make_context():
        _, block = _inner_block(ACCEPTED["rank % 2 == 0"], in_else=True)
        assert leader_only_reason(block, "gemm_async") is not None
