"""The robustness suite: every module lists CASES, run once per module in child processes."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness import Batch  # noqa: E402


@pytest.fixture(scope="module")
def batch(request, tmp_path_factory):
    """The module's CASES, run once."""
    return Batch(request.module.CASES, tmp_path_factory.mktemp(request.module.__name__))
