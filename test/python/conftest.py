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


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    """A fresh cache and dump directory, and nothing remembered in memory from other tests."""
    from tilemlir.runtime.compiler import clear_memory_cache
    monkeypatch.setenv("TILEMLIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILEMLIR_DUMP_DIR", str(tmp_path / "dump"))
    monkeypatch.delenv("TILEMLIR_DUMP", raising=False)
    clear_memory_cache()
    yield tmp_path
    clear_memory_cache()
