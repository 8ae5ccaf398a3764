"""pytest setup: GPU tests are marked `gpu` and skipped, with the reason, without a CUDA driver."""

from pathlib import Path

import pytest

from tilemlir.runtime.cuda import _driver_problem

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(config, items):
    problem = _driver_problem()
    if problem is None:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {problem}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def demo_text() -> str:
    return (ROOT / "examples" / "mma_demo.mlir").read_text()
