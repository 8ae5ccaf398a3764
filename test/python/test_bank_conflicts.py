"""The static bank-conflict check (tilemlir.check_banks, the tile-check-banks pass): the
wavefront model, the two kernels of bench/bank_conflicts.py (the one validated against ncu),
and the shipped kernels, which have no avoidable conflict. CPU only."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.kernels import attention, gemm_epilogue, gemm_mma_sync, hgemm_hopper, norms
from tilemlir.lowering.banks import wavefronts
from tilemlir.tools.pass_pipeline import pass_manager as build_pass_manager

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bank_conflicts",
                                                  ROOT / "bench" / "bank_conflicts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("starts, size, expected", [
    (np.arange(32) * 4, 4, (1, 1)),                   # a word per bank
    (np.arange(32) * 128, 4, (32, 1)),                # one bank, 32 words
    (np.zeros(32, np.int64), 4, (1, 1)),              # one word: a broadcast
    (np.arange(32) * 2, 2, (1, 1)),                   # 16-bit neighbours share words
    (np.arange(32) * 8, 8, (2, 2)),                   # 8 bytes: two phases of 16 threads
    (np.arange(32) * 16, 16, (4, 4)),                 # 16 bytes: four phases of 8 threads
    (np.arange(32) * 128, 16, (32, 4)),               # 8 rows' first chunk, per phase: 8-way
    (np.arange(32) % 8 * 128 + np.arange(32) // 8 * 16, 16, (32, 4)),
])
def test_wavefronts_per_request(starts, size, expected):
    assert wavefronts(np.asarray(starts, np.int64), size) == expected


def test_the_benchmark_kernels_predictions():
    """A column-major walk of an unswizzled tile: 8 rows of one 16-byte column per phase, all
    in 4 banks; swizzled, in 8 different groups of 4."""
    bench = _bench()
    plain, swizzled = bench.prediction("rows_plain"), bench.prediction("rows_swizzled")
    assert plain["worst_ld"] == (32, 4) and swizzled["worst_ld"] == (4, 4)
    assert plain["conflicts_ld"] == bench.CTAS * 8 * 28 and plain["conflicts_st"] == 0
    assert swizzled["conflicts"] == 0
    assert plain["wavefronts_ld"] == bench.CTAS * 8 * 32
    assert swizzled["wavefronts_ld"] == swizzled["wavefronts_st"] == bench.CTAS * 8 * 4


@pytest.mark.parametrize("name, build, chip, accesses", [
    ("mma_sync", lambda: gemm_mma_sync.gemm_mma_sync(4096, 4096, 4096), "sm_90a", 5),
    ("hgemm_v6", lambda: hgemm_hopper.hgemm_v6(4096, 4096, 4096), "sm_90a", 1),
    ("hgemm_v7", lambda: hgemm_hopper.hgemm_v7(4096, 4096, 4096), "sm_90a", 1),
    ("hgemm_v8", lambda: hgemm_hopper.hgemm_v8(1000, 1000, 8192), "sm_90a", 1),
    ("hgemm_fused", lambda: gemm_epilogue.hgemm_fused(4096, 4096, 4096, residual=True),
     "sm_90a", 2),
    ("attention", lambda: attention.flash_attention(8, 16, 1024, 128, causal=True), "sm_90a", 0),
    ("softmax", lambda: norms.softmax(4096, 4096, "float16"), "sm_90a", 4),
    ("rms_norm", lambda: norms.rms_norm(4096, 4096), "sm_90a", 2),
    ("layer_norm long rows", lambda: norms.layer_norm(T.dynamic("M"), 131072, "bfloat16"),
     "sm_90a", 4),
    ("layer_norm long odd rows", lambda: norms.layer_norm(T.dynamic("M"), 50257), "sm_90a", 5),
])
def test_shipped_kernels_have_no_avoidable_conflict(name, build, chip, accesses):
    report = tilemlir.check_banks(build(), target=chip)
    assert len(report) == accesses, str(report)
    assert report.conflicts == 0, str(report)


def test_the_pass_warns_of_conflicts_only(capfd):
    bench = _bench()
    for name in ("rows_plain", "rows_swizzled"):
        module = bench.kernel(name).build()
        with module.context:
            build_pass_manager("builtin.module(tile-check-banks{chip=sm_90a})").run(
                module.operation)
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(str(ROOT / "bench" / "bank_conflicts.py") + ":")
    assert "warning: bank conflicts: tile.copy (vector_registers: ld.shared.v4 (16 B))" in err[0]
    assert "worst request 32 wavefronts, ideal 4" in err[0]


def test_the_pass_reports_every_access_when_asked(capfd):
    module = _bench().kernel("rows_swizzled").build()
    with module.context:
        build_pass_manager("builtin.module(tile-check-banks{chip=sm_90a all=true})").run(
            module.operation)
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 2 and all(": remark: banks: tile.copy (" in line for line in err), err
    assert "(0 avoidable)" in err[1]


def test_tile_to_ptx_can_check_banks_first(capfd):
    module = _bench().kernel("rows_plain").build()
    with module.context:
        build_pass_manager("builtin.module(tile-to-ptx{chip=sm_90a check-banks=true})").run(
            module.operation)
    assert "warning: bank conflicts" in capfd.readouterr().err


def test_wrong_arguments():
    with pytest.raises(TypeError, match="cannot check a int"):
        tilemlir.check_banks(3)
