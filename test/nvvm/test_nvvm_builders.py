"""The NVVM builder checks (nvvm_builders.py, docs/notes/nvvm-builders.md), one test each: a
tiny kernel built with the upstream nvvm Python builders is lowered for a chip and its PTX
checked and assembled, or the recorded failure (LLVM abort, MLIR error, ptxas rejection)
happens with the recorded message."""

import pytest

from nvvm_builders import ITEMS, outcome
from tilemlir.target.ptx import find_ptxas

CHECKS = [(it, c) for it in ITEMS.values() for c in it.checks]


@pytest.mark.nvvm_builders
@pytest.mark.parametrize("item, check", CHECKS,
                         ids=[f"{it.name}/{c.variant}/{c.chip}{c.ptx}" for it, c in CHECKS])
def test_builder(item, check):
    if check.expect in ("ok", "ptxas") and find_ptxas() is None:
        pytest.skip("needs ptxas (PATH, CUDA_HOME or the nvidia-cuda-nvcc wheel)")
    ok, message = outcome(item, check)
    assert ok, message
