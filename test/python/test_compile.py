"""tilemlir.compile: cache hits, dumps, signatures from the language, argument checks."""

import numpy as np
import pytest

import tilemlir
from tilemlir.kernels.mma_demo import gemm_16x8x16
from tilemlir.runtime import ArgumentError
from tilemlir.runtime.compiler import clear_memory_cache


def test_second_compile_is_a_cache_hit(isolated_cache):
    cold = tilemlir.compile(gemm_16x8x16, target="sm_90a")
    assert not cold.compile_info.cache_hit
    clear_memory_cache()                    # so that the disk cache answers
    warm = tilemlir.compile(gemm_16x8x16, target="sm_90a")
    assert warm.compile_info.cache_hit and not warm.compile_info.memory_hit
    assert warm.ptx == cold.ptx and warm.signature == cold.signature
    other = tilemlir.compile(gemm_16x8x16, target="sm_80")
    assert not other.compile_info.cache_hit and ".target sm_80" in other.ptx


def test_dumps_are_written_on_a_miss_and_on_a_hit(isolated_cache, monkeypatch):
    monkeypatch.setenv("TILEMLIR_DUMP", "ir,ptx")
    for _ in range(2):
        k = tilemlir.compile(gemm_16x8x16, target="sm_90a")
        out = k.compile_info.dump_dir
        assert (out / "input.mlir").read_text().count("tile.gemm") == 1
        assert (out / "gemm_16x8x16.ptx").read_text().count("mma.sync") == 1
        passes = sorted(p.name for p in (out / "passes").rglob("*.mlir"))
        assert any("tile-dispatch" in p for p in passes) and any("tile-materialize" in p for p in passes)
    assert k.compile_info.cache_hit


def test_unknown_dump_items_are_rejected(isolated_cache, monkeypatch):
    monkeypatch.setenv("TILEMLIR_DUMP", "ir,sass")
    with pytest.raises(ValueError, match="unknown item"):
        tilemlir.compile(gemm_16x8x16, target="sm_90a")


def test_signature_names_come_from_the_python_parameters(isolated_cache):
    k = tilemlir.compile(gemm_16x8x16, target="sm_90a")
    assert [p.name for p in k.signature.params] == ["A_g", "B_g", "D_g"]
    with pytest.raises(ArgumentError, match=r"argument 'B_g' must have shape \[16, 8\]"):
        k(np.zeros((16, 16), np.float16), np.zeros((8, 16), np.float16),
          np.zeros((16, 8), np.float32))
